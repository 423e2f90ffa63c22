//! netmap pkt-gen logs: the per-second rate lines and the value of a run.
//!
//! pkt-gen's main thread prints one line per second, for a receiver or a
//! sender alike:
//!
//! ```text
//! 881.961254 main_thread [2786] 482071 pps (482533 pkts 231394164 bps in 1000958 usec) 1.49 avg_batch 1018 min_space
//! 881.961254 main_thread [2786] 482.071 Kpps (482.533 Kpkts 231.394 Mbps in 1000958 usec) 1.49 avg_batch 1018 min_space
//! ```
//!
//! The first form is printed with `-N`, the second (K, M, G, T prefixes,
//! three decimals) without.
//!
//! BSDRP's `bench-lab-ministat.sh` turns a run's log into one value with a
//! shell pipeline, which [`bsdrp_values`] reproduces step by step:
//! 1. drop the first 15 and the last 10 *lines of the file* (`head`/`tail`
//!    on `wc -l`), header lines included;
//! 2. keep the lines matching `main_thread[[:space:]]\[[0-9]+\][[:space:]][1-9].*pps`
//!    (`grep -E`): a rate that starts with a non-zero digit;
//! 3. take the 4th field, fields split on single spaces (`cut -d ' ' -f 4`);
//! 4. take ministat's median (at least 3 values, the mean of the two middle
//!    ones for an even count), printed with 8 significant digits.
//!
//! The per-sample trim ([`kept_samples`]) drops samples instead of lines;
//! it is pktlab's own method, offered as an option.

use crate::cformat::format_g;
use crate::descriptive::median;

/// How many lines (BSDRP's method) or per-second samples to drop at each
/// end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
    pub head: usize,
    pub tail: usize,
}

impl Default for Trim {
    /// BSDRP's 15 at the start (warm-up) and 10 at the end.
    fn default() -> Self {
        Trim { head: 15, tail: 10 }
    }
}

/// Every per-second packet rate in `log`, in order, in packets per second
/// (zeros included). Other lines (headers, trailers, warnings) are ignored.
pub fn pps_samples(log: &str) -> Vec<f64> {
    log.lines().filter_map(pps_of_line).collect()
}

/// The samples that count for a run: `trim` applied, then zeros dropped.
pub fn kept_samples(samples: &[f64], trim: Trim) -> Vec<f64> {
    let end = samples.len().saturating_sub(trim.tail);
    samples
        .get(trim.head..end)
        .unwrap_or_default()
        .iter()
        .copied()
        .filter(|&pps| pps != 0.0)
        .collect()
}

/// The value of a run: the median of its kept samples, or `None` when no
/// non-zero sample is left (BSDRP then warns and records nothing).
pub fn run_value(samples: &[f64], trim: Trim) -> Option<f64> {
    median(&kept_samples(samples, trim))
}

/// A run value as BSDRP writes it into its `.pps` files: ministat's `%.8g`.
pub fn format_run_value(value: f64) -> String {
    format_g(value, 8)
}

/// Fewer values than this and ministat refuses the data set, so BSDRP's
/// script records nothing for the run.
pub const MINISTAT_MIN_VALUES: usize = 3;

/// Why a log yields no value under BSDRP's method.
#[derive(Debug, Clone, PartialEq)]
pub enum NoValue {
    /// Fewer than [`MINISTAT_MIN_VALUES`] rate lines are left after the trim.
    TooFew { lines: usize, kept: usize },
    /// The 4th field of a kept line (1-based `line` of the file) is not a
    /// number: ministat rejects the whole data set.
    NotANumber { line: usize, field: String },
}

impl std::fmt::Display for NoValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoValue::TooFew { lines, kept } => write!(
                f,
                "{kept} non-zero rate line(s) left of {lines} lines (ministat needs {MINISTAT_MIN_VALUES})"
            ),
            NoValue::NotANumber { line, field } => {
                write!(f, "line {line}: 4th field {field:?} is not a number")
            }
        }
    }
}

/// The values BSDRP's pipeline hands to ministat for `log`, `trim` counted
/// in lines of the file, in file order. Rates printed with a unit prefix
/// (pkt-gen without `-N`) are scaled to pps, where the shell pipeline would
/// take the bare number.
pub fn bsdrp_values(log: &str, trim: Trim) -> Result<Vec<f64>, NoValue> {
    // `wc -l` counts newlines: an unterminated last line is not counted, yet
    // `head` and `tail` still see it.
    let counted = log.bytes().filter(|&b| b == b'\n').count();
    let end = counted.saturating_sub(trim.tail);
    let mut values = Vec::new();
    for (index, line) in log.split('\n').enumerate().take(end).skip(trim.head) {
        if !matches_bsdrp_grep(line) {
            continue;
        }
        let mut fields = line.split(' ');
        let field = fields.nth(3).unwrap_or("");
        let thousands = fields.next().and_then(unit_thousands).unwrap_or(0);
        match scale_decimal(field, 3 * thousands) {
            Some(value) => values.push(value),
            None => {
                return Err(NoValue::NotANumber {
                    line: index + 1,
                    field: field.to_string(),
                })
            }
        }
    }
    if values.len() < MINISTAT_MIN_VALUES {
        return Err(NoValue::TooFew {
            lines: counted,
            kept: values.len(),
        });
    }
    Ok(values)
}

/// The value of a run by BSDRP's method: ministat's median of
/// [`bsdrp_values`].
pub fn bsdrp_run_value(log: &str, trim: Trim) -> Result<f64, NoValue> {
    let values = bsdrp_values(log, trim)?;
    Ok(median(&values).expect("at least MINISTAT_MIN_VALUES values"))
}

/// `grep -E 'main_thread[[:space:]]\[[[:digit:]]+\][[:space:]][1-9].*pps'`:
/// the pattern may start at any `main_thread` of the line.
fn matches_bsdrp_grep(line: &str) -> bool {
    line.match_indices("main_thread").any(|(at, word)| {
        let rest = &line[at + word.len()..];
        let Some(rest) = strip_one_space(rest).and_then(|r| r.strip_prefix('[')) else {
            return false;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let Some(rest) = rest[digits..].strip_prefix(']').and_then(strip_one_space) else {
            return false;
        };
        rest.starts_with(|c: char| ('1'..='9').contains(&c)) && rest[1..].contains("pps")
    })
}

/// `rest` without its first character when that is a POSIX `[[:space:]]`.
fn strip_one_space(rest: &str) -> Option<&str> {
    rest.strip_prefix([' ', '\t', '\n', '\x0b', '\x0c', '\r'])
}

/// The power of 1000 of a rate unit (`pps`, `Kpps`, ...).
fn unit_thousands(unit: &str) -> Option<usize> {
    match unit {
        "pps" => Some(0),
        "Kpps" => Some(1),
        "Mpps" => Some(2),
        "Gpps" => Some(3),
        "Tpps" => Some(4),
        _ => None,
    }
}

/// The pps value of one `main_thread` report line, if it is one.
fn pps_of_line(line: &str) -> Option<f64> {
    let mut words = line.split_whitespace().skip_while(|&w| w != "main_thread");
    words.next()?; // "main_thread"
    let line_number = words.next()?;
    let is_bracketed_number = line_number
        .strip_prefix('[')
        .and_then(|w| w.strip_suffix(']'))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    if !is_bracketed_number {
        return None;
    }
    let number = words.next()?;
    let unit = words.next()?;
    let thousands = unit_thousands(unit)?;
    scale_decimal(number, 3 * thousands)
}

/// `number` times 10^`shift`, computed on the digits so that "482.071" Kpps
/// is exactly 482071 (multiplying the parsed float by 1000 is not exact).
fn scale_decimal(number: &str, shift: usize) -> Option<f64> {
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
        return None;
    }
    let moved = frac_part.len().min(shift);
    let zeros = shift - moved;
    let shifted = format!(
        "{int_part}{}{}.{}",
        &frac_part[..moved],
        "0".repeat(zeros),
        &frac_part[moved..]
    );
    shifted.trim_end_matches('.').parse().ok()
}

/// The value of a run from its log, trimmed by lines of the file (BSDRP's
/// scripts) or, `by_samples`, by per-second samples; why there is none.
pub fn log_value(log: &str, trim: Trim, by_samples: bool) -> Result<f64, String> {
    if !by_samples {
        return bsdrp_run_value(log, trim).map_err(|why| {
            format!(
                "{why}, first {} and last {} lines dropped",
                trim.head, trim.tail
            )
        });
    }
    let samples = pps_samples(log);
    run_value(&samples, trim).ok_or_else(|| {
        format!(
            "no non-zero pps sample left ({} per-second samples, \
             first {} and last {} dropped)",
            samples.len(),
            trim.head,
            trim.tail
        )
    })
}

/// What `pktlab pktgen-log` prints of `logs` (each a name and its text):
/// each log's run value ([`log_value`]), or with `all` every per-second
/// pps of it, a line each, the name first when there are several logs;
/// and a warning for each log that gives no value.
pub fn logs_text(
    logs: &[(String, String)],
    trim: Trim,
    by_samples: bool,
    all: bool,
) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut warnings = Vec::new();
    for (name, log) in logs {
        let prefix = match logs.len() > 1 {
            true => format!("{name} "),
            false => String::new(),
        };
        if all {
            for pps in pps_samples(log) {
                out.push_str(&format!("{prefix}{pps}\n"));
            }
            continue;
        }
        match log_value(log, trim, by_samples) {
            Ok(value) => out.push_str(&format!("{prefix}{}\n", format_run_value(value))),
            Err(why) => warnings.push(format!("{name}: {why}")),
        }
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `header` header lines, then one `-N` rate line per value.
    fn log_of(header: usize, rates: &[&str]) -> String {
        let mut log = String::new();
        for n in 0..header {
            log.push_str(&format!("351.47{n:04} main [3011] header line {n}\n"));
        }
        for (n, rate) in rates.iter().enumerate() {
            log.push_str(&format!(
                "{}.000001 main_thread [2786] {rate} pps (1 pkts 1 bps in 1000000 usec) 1.00 avg_batch 0 min_space\n",
                400 + n
            ));
        }
        log
    }

    #[test]
    fn several_logs_are_named_and_one_without_a_value_is_a_warning() {
        // As above: 5 header lines, rates 1..=25, the median of 11..=15.
        let rates: Vec<String> = (1..=25).map(|n| n.to_string()).collect();
        let rates: Vec<&str> = rates.iter().map(String::as_str).collect();
        let good = log_of(5, &rates);
        let logs = vec![
            ("a.log".to_string(), good.clone()),
            ("b.log".into(), "nothing\n".into()),
        ];
        let (text, warnings) = logs_text(&logs, Trim::default(), false, false);
        assert_eq!(text, "a.log 13\n");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("b.log: "), "{warnings:?}");
        // One log: no name; every sample with `all`.
        let (text, warnings) = logs_text(&logs[..1], Trim::default(), false, true);
        assert_eq!(text.lines().count(), 25);
        assert_eq!(text.lines().nth(2), Some("3"));
        assert!(warnings.is_empty());
    }

    #[test]
    fn bsdrp_drops_lines_of_the_file_not_samples() {
        // 5 header lines then 25 rates 1..=25: lines 16..=20 of the file are
        // kept, the rates 11 12 13 14 15; the median is 13.
        let rates: Vec<String> = (1..=25).map(|n| n.to_string()).collect();
        let rates: Vec<&str> = rates.iter().map(String::as_str).collect();
        let log = log_of(5, &rates);
        assert_eq!(
            bsdrp_values(&log, Trim::default()),
            Ok(vec![11.0, 12.0, 13.0, 14.0, 15.0])
        );
        assert_eq!(bsdrp_run_value(&log, Trim::default()), Ok(13.0));
        // The per-sample trim keeps samples 16..=15: nothing.
        assert_eq!(run_value(&pps_samples(&log), Trim::default()), None);
    }

    #[test]
    fn bsdrp_keeps_only_rates_starting_with_a_non_zero_digit() {
        // Kept lines 16..=22: 0, 07, 0.5, 3, 9, 4, 600. Only 3 9 4 600
        // start with 1-9; sorted 3 4 9 600, median (4 + 9) / 2.
        let mut rates = vec!["1"; 15];
        rates.extend(["0", "07", "0.5", "3", "9", "4", "600"]);
        rates.extend(["1"; 10]);
        let log = log_of(0, &rates);
        assert_eq!(
            bsdrp_values(&log, Trim::default()),
            Ok(vec![3.0, 9.0, 4.0, 600.0])
        );
        assert_eq!(bsdrp_run_value(&log, Trim::default()), Ok(6.5));
    }

    #[test]
    fn bsdrp_needs_three_values_like_ministat() {
        let mut rates = vec!["1"; 15];
        rates.extend(["5", "0", "6"]);
        rates.extend(["1"; 10]);
        let log = log_of(0, &rates);
        assert_eq!(
            bsdrp_run_value(&log, Trim::default()),
            Err(NoValue::TooFew { lines: 28, kept: 2 })
        );
        // 24 lines: fewer than 15 + 10, nothing is left.
        let log = log_of(0, &["7"; 24]);
        assert_eq!(
            bsdrp_run_value(&log, Trim::default()),
            Err(NoValue::TooFew { lines: 24, kept: 0 })
        );
        assert_eq!(bsdrp_run_value(&log, Trim { head: 0, tail: 0 }), Ok(7.0));
    }

    #[test]
    fn bsdrp_counts_lines_like_wc() {
        // 27 newlines and an unterminated 28th line: wc -l says 27, so
        // head keeps 17 lines and tail the last 2 of them (16 and 17).
        let rates: Vec<String> = (1..=28).map(|n| (n * 10).to_string()).collect();
        let rates: Vec<&str> = rates.iter().map(String::as_str).collect();
        let log = log_of(0, &rates);
        let log = log.strip_suffix('\n').unwrap();
        assert_eq!(
            bsdrp_values(log, Trim { head: 15, tail: 10 }),
            Err(NoValue::TooFew { lines: 27, kept: 2 })
        );
        assert_eq!(
            bsdrp_values(log, Trim { head: 14, tail: 10 }),
            Ok(vec![150.0, 160.0, 170.0])
        );
    }

    #[test]
    fn bsdrp_field_four_and_units() {
        let log = "\
1.0 main_thread [1] 1.488 Mpps (1.489 Mpkts 714.883 Mbps in 1000921 usec)
2.0 main_thread [1] 998.421 Kpps (999.320 Kpkts 479.673 Mbps in 1001001 usec)
3.0 main_thread\t[1]\t1200 pps (1 pkts 1 bps in 1 usec)
";
        // The third line matches the grep, but its fields split on single
        // spaces: "3.0", "main_thread\t[1]\t1200", "pps", "(1": ministat
        // would reject "(1".
        assert_eq!(
            bsdrp_values(log, Trim { head: 0, tail: 0 }),
            Err(NoValue::NotANumber {
                line: 3,
                field: "(1".to_string()
            })
        );
        let two = log.lines().take(2).collect::<Vec<_>>().join("\n") + "\n";
        let three = format!("{two}4.0 main_thread [9] 5 pps\n");
        assert_eq!(
            bsdrp_values(&three, Trim { head: 0, tail: 0 }),
            Ok(vec![1488000.0, 998421.0, 5.0])
        );
        assert!(!matches_bsdrp_grep("1.0 main_thread [] 5 pps"));
        assert!(!matches_bsdrp_grep("1.0 main_thread [3]  5 pps"));
        assert!(!matches_bsdrp_grep("1.0 main_thread [3] 5 pkts"));
        assert!(matches_bsdrp_grep(
            "x main_thread [a] 1 main_thread [3] 5 Kpps"
        ));
    }

    #[test]
    fn plain_and_prefixed_report_lines() {
        let log = "\
881.961254 main_thread [2786] 482071 pps (482533 pkts 231394164 bps in 1000958 usec) 1.49 avg_batch 1018 min_space
882.962210 main_thread [2786] 482.071 Kpps (482.533 Kpkts 231.394 Mbps in 1000958 usec) 1.49 avg_batch 1018 min_space
883.963011 main_thread [2786] 14.881 Mpps (14.895 Mpkts 7.150 Gbps in 1000962 usec) 512.00 avg_batch 0 min_space
884.963999 main_thread [2786] 0.000 pps (0.000 pkts 0.000 bps in 1000966 usec) 0.00 avg_batch 99999 min_space
885.964123 main_thread [2786] 1.5 Gpps (1.5 Gpkts 720 Gbps in 1000000 usec) 1.00 avg_batch 0 min_space
886.964123 main_thread [2786] 0.002 Tpps (0.002 Tpkts 960 Gbps in 1000000 usec) 1.00 avg_batch 0 min_space
";
        assert_eq!(
            pps_samples(log),
            vec![
                482071.0,
                482071.0,
                14881000.0,
                0.0,
                1500000000.0,
                2000000000.0
            ]
        );
    }

    #[test]
    fn other_lines_are_ignored() {
        let log = "\
369.838024 main [2552] interface is igb2
Receiving from netmap:igb2: 1 queues, 1 threads and 1 cpus.
372.949470 receiver_body [1640] waiting for initial packets, poll returns 0 0
373.000000 main_thread [2325] waiting for 3 pps
374.000000 main_thread [x] 100 pps (100 pkts 48000 bps in 1000000 usec)
Speed: 1.234 Mpps Bandwidth: 592.592 Mbps (raw 829.629 Mbps). Average batch: 1.00 pkts
";
        assert_eq!(pps_samples(log), Vec::<f64>::new());
    }

    #[test]
    fn decimal_scaling_is_exact() {
        assert_eq!(scale_decimal("482.071", 3), Some(482071.0));
        assert_eq!(scale_decimal("1.5", 6), Some(1500000.0));
        assert_eq!(scale_decimal("1.23456", 3), Some(1234.56));
        assert_eq!(scale_decimal("7", 0), Some(7.0));
        assert_eq!(scale_decimal("7.", 0), Some(7.0));
        assert_eq!(scale_decimal("-7", 0), None);
        assert_eq!(scale_decimal(".5", 3), None);
        assert_eq!(scale_decimal("1e3", 0), None);
    }

    #[test]
    fn trimming_then_zeros_then_median() {
        // 30 samples: 15 of warm-up, then 0 100 300 200 0, then 10 of tail.
        let mut samples = vec![999.0; 15];
        samples.extend([0.0, 100.0, 300.0, 200.0, 0.0]);
        samples.extend([999.0; 10]);
        assert_eq!(
            kept_samples(&samples, Trim::default()),
            vec![100.0, 300.0, 200.0]
        );
        assert_eq!(run_value(&samples, Trim::default()), Some(200.0));
        // No trimming: 25 × 999 and 100, 200, 300: the median is 999.
        assert_eq!(run_value(&samples, Trim { head: 0, tail: 0 }), Some(999.0));
    }

    #[test]
    fn short_or_all_zero_runs_have_no_value() {
        assert_eq!(run_value(&[5.0; 25], Trim::default()), None);
        assert_eq!(run_value(&[0.0; 40], Trim::default()), None);
        assert_eq!(run_value(&[], Trim::default()), None);
        assert_eq!(run_value(&[1.0, 2.0], Trim { head: 2, tail: 1 }), None);
    }

    #[test]
    fn run_values_print_like_bsdrp() {
        assert_eq!(format_run_value(1488141.0), "1488141");
        assert_eq!(format_run_value(7586270.5), "7586270.5");
        assert_eq!(format_run_value(24494912.5), "24494912");
        assert_eq!(format_run_value(123456789.0), "1.2345679e+08");
    }
}
