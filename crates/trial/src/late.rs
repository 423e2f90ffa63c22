//! Late frames: a trial's receiver keeps counting for a while after the
//! drain time, so that frames arriving after it are seen. They count as
//! lost (the drain is what a trial waits), and are reported apart as late.
//!
//! The receiver reports test frames per interval, each stamped with the
//! seconds since it started. The drain ends with the first interval that
//! reaches `drain_end_s`: frames up to it were on time, the rest late.

/// Test frames received by the end of the drain, from the receiver's
/// intervals `(elapsed_s, test_frames)` in order; None when no interval
/// reached the end of the drain (the receiver stopped before it).
pub fn on_time(intervals: &[(f64, u64)], drain_end_s: f64) -> Option<u64> {
    let mut sum = 0u64;
    for &(elapsed, frames) in intervals {
        sum += frames;
        if elapsed >= drain_end_s {
            return Some(sum);
        }
    }
    None
}

/// Late frames out of `received` test frames, or None when they cannot be
/// told apart.
pub fn late(intervals: &[(f64, u64)], drain_end_s: f64, received: u64) -> Option<u64> {
    on_time(intervals, drain_end_s).map(|t| received.saturating_sub(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_after_the_drains_interval_are_late() {
        // Intervals of 100 ms; the generator stopped at 1.02 s, the drain
        // (0.5 s) ends at 1.52 s, within the interval ending at 1.6 s.
        let iv = [
            (0.1, 100),
            (0.2, 100),
            (1.5, 1000),
            (1.6, 7),
            (1.7, 3),
            (1.8, 2),
        ];
        assert_eq!(on_time(&iv, 1.52), Some(1207));
        assert_eq!(late(&iv, 1.52, 1212), Some(5));
        // An interval ending exactly at the drain's end closes it.
        assert_eq!(on_time(&iv, 1.5), Some(1200));
        // The receiver stopped before the drain ended: cannot tell.
        assert_eq!(late(&iv, 2.0, 1212), None);
        assert_eq!(late(&[], 0.5, 0), None);
    }
}
