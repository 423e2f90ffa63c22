//! The order of labels in a series: naturally (runs of digits compared as
//! numbers, so that r9 comes before r10 and 293069 before 1000000), or as
//! an order file lists them (one label per line, `#` comments).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

use crate::HistoryError;

/// Compares labels naturally: digit runs by value (then by length, so
/// that `07` follows `7`), other text by character.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.chars().next(), y.chars().next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = split_digits(x);
                let (m, rest_y) = split_digits(y);
                let (tn, tm) = (n.trim_start_matches('0'), m.trim_start_matches('0'));
                let by_value = tn.len().cmp(&tm.len()).then_with(|| tn.cmp(tm));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                if n.len() != m.len() {
                    return n.len().cmp(&m.len());
                }
                x = rest_x;
                y = rest_y;
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x = &x[c.len_utf8()..];
                y = &y[d.len_utf8()..];
            }
        }
    }
}

fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// An order file: one label per line; blank lines and `#` comments are
/// skipped. A label listed twice is a mistake.
pub fn read_order_file(path: &Path) -> Result<Vec<String>, HistoryError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        HistoryError::Usage(format!(
            "cannot read order file {}: {}",
            path.display(),
            crate::error::os_text(&e)
        ))
    })?;
    let mut out: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let label = line.split('#').next().unwrap_or("").trim();
        if label.is_empty() {
            continue;
        }
        if out.iter().any(|l| l == label) {
            return Err(HistoryError::Usage(format!(
                "{} line {}: label '{label}' is listed twice",
                path.display(),
                i + 1
            )));
        }
        out.push(label.to_string());
    }
    if out.is_empty() {
        return Err(HistoryError::Usage(format!(
            "order file {} lists no label",
            path.display()
        )));
    }
    Ok(out)
}

/// Sorts `labels`: those with a position (from an order file) first, by
/// position, then the others naturally.
pub fn sort_labels(labels: &mut [String], positions: &HashMap<String, i64>) {
    labels.sort_by(|a, b| match (positions.get(a), positions.get(b)) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => natural(a, b),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut v: Vec<&str>) -> Vec<&str> {
        v.sort_by(|a, b| natural(a, b));
        v
    }

    #[test]
    fn revisions_sort_as_numbers() {
        assert_eq!(
            sorted(vec!["r10", "r9", "r100", "r1"]),
            ["r1", "r9", "r10", "r100"]
        );
        assert_eq!(
            sorted(vec!["310988", "293069", "1000000", "99"]),
            ["99", "293069", "310988", "1000000"]
        );
        assert_eq!(
            sorted(vec![
                "6.10.0",
                "6.9.2",
                "6.1.0-18-amd64",
                "6.1.0-9-amd64",
                "6.1.0"
            ]),
            [
                "6.1.0",
                "6.1.0-9-amd64",
                "6.1.0-18-amd64",
                "6.9.2",
                "6.10.0"
            ]
        );
        // Leading zeros: same value, the shorter first; then text.
        assert_eq!(sorted(vec!["v007", "v7", "v07"]), ["v7", "v07", "v007"]);
        assert_eq!(sorted(vec!["b", "a2", "a10", "a"]), ["a", "a2", "a10", "b"]);
    }

    #[test]
    fn an_order_file_wins_over_natural_order() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("order");
        std::fs::write(&p, "# oldest first\nbeta\n\nalpha  # the fix\n").unwrap();
        let order = read_order_file(&p).unwrap();
        assert_eq!(order, ["beta", "alpha"]);
        let positions: HashMap<String, i64> = order
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), i as i64))
            .collect();
        let mut labels: Vec<String> = ["z10", "alpha", "z9", "beta"].map(String::from).to_vec();
        sort_labels(&mut labels, &positions);
        assert_eq!(labels, ["beta", "alpha", "z9", "z10"]);
        std::fs::write(&p, "a\nb\na\n").unwrap();
        let e = read_order_file(&p).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("line 3: label 'a' is listed twice"),
            "{e}"
        );
        std::fs::write(&p, "# nothing\n").unwrap();
        assert!(read_order_file(&p).unwrap_err().is_usage());
        assert!(read_order_file(&tmp.path().join("none"))
            .unwrap_err()
            .is_usage());
    }
}
