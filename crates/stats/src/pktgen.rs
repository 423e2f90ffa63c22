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
//! three decimals) without. BSDRP's bench scripts turn a run's log into one
//! value: drop the first 15 and the last 10 samples (warm-up and tail), drop
//! the samples that are zero, and take the median (ministat's, printed with
//! 8 significant digits).

use crate::cformat::format_g;
use crate::descriptive::median;

/// How many per-second samples to drop at each end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
    pub head: usize,
    pub tail: usize,
}

impl Default for Trim {
    /// BSDRP's 15 s of warm-up and 10 s of tail.
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
    let thousands = match unit {
        "pps" => 0,
        "Kpps" => 1,
        "Mpps" => 2,
        "Gpps" => 3,
        "Tpps" => 4,
        _ => return None,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

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
