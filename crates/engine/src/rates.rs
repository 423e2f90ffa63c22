//! Rates from counts over a period: what every summary and interval of
//! both sides computes the same way.

use crate::frame::L1_OVERHEAD;

/// `x / seconds`, 0 for an empty period.
pub(crate) fn per_second(x: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        x / seconds
    } else {
        0.0
    }
}

/// L1 bits per second of `packets` frames of `bytes` in total.
pub(crate) fn l1_bps(packets: u64, bytes: u64, seconds: f64) -> f64 {
    per_second((bytes + packets * L1_OVERHEAD) as f64 * 8.0, seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_count_the_line_overhead_and_survive_empty_periods() {
        assert_eq!(per_second(10.0, 0.0), 0.0);
        assert_eq!(per_second(10.0, 2.0), 5.0);
        // 2 frames of 64 bytes in 1 s: (128 + 2 * 20) * 8 bits.
        assert_eq!(l1_bps(2, 128, 1.0), 1344.0);
    }
}
