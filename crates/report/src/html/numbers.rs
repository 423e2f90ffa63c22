//! How the page writes numbers: grouped digits for rates and counts, a
//! fixed number of decimals, a real minus sign, and dates in UTC.

/// `v` with `decimals` decimals and its integer digits grouped by three
/// with commas: `1,488,095.2`.
pub fn grouped(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i.to_string(), format!(".{f}")),
        None => (text.clone(), String::new()),
    };
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    let negative = v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0');
    format!("{}{out}{frac}", if negative { "−" } else { "" })
}

/// A packet rate: one decimal.
pub fn pps(v: f64) -> String {
    grouped(v, 1)
}

/// A ratio in percent with three decimals: `0.165` → `16.500 %`.
pub fn percent(ratio: f64) -> String {
    format!("{} %", grouped(ratio * 100.0, 3))
}

/// `YYYY-mm-dd HH:MM:SS UTC`.
pub fn utc(unix: u64) -> String {
    let s = pktlab_campaign::folder::utc_stamp(unix);
    format!(
        "{}-{}-{} {}:{}:{} UTC",
        &s[0..4],
        &s[4..6],
        &s[6..8],
        &s[9..11],
        &s[11..13],
        &s[13..15]
    )
}

/// `1 h 02 min 05 s`, `3 min 07 s`, `42 s`.
pub fn duration(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h} h {m:02} min {s:02} s")
    } else if m > 0 {
        format!("{m} min {s:02} s")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_read_them() {
        assert_eq!(grouped(1_488_095.238, 1), "1,488,095.2");
        assert_eq!(grouped(999.95, 1), "1,000.0");
        assert_eq!(grouped(-64_707.4, 1), "−64,707.4");
        assert_eq!(grouped(-0.01, 1), "0.0");
        assert_eq!(grouped(12.0, 0), "12");
        assert_eq!(percent(0.165), "16.500 %");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(duration(3725), "1 h 02 min 05 s");
        assert_eq!(duration(187), "3 min 07 s");
        assert_eq!(duration(42), "42 s");
    }
}
