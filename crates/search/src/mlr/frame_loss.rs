//! RFC 2544's frame loss rate test (section 26.3): trials from the maximum
//! load down in steps of 10 % of it, until two successive trials lose
//! nothing (or the step at 10 % of the maximum is done).

/// Steps of the maximum load, as fractions of it.
pub const STEP: f64 = 0.1;

/// The next load, given the lost frames of the trials so far (in order),
/// or None when the test is over.
pub fn next_load(max_pps: f64, lost: &[u64]) -> Option<f64> {
    let n = lost.len();
    if n >= 2 && lost[n - 2] == 0 && lost[n - 1] == 0 {
        return None;
    }
    // Ten steps: 100 %, 90 %, ..., 10 %.
    if n >= 10 {
        return None;
    }
    Some(max_pps * (1.0 - STEP * n as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_down_until_two_clean_trials() {
        assert_eq!(next_load(10_000.0, &[]), Some(10_000.0));
        assert_eq!(next_load(10_000.0, &[500]), Some(9_000.0));
        assert_eq!(next_load(10_000.0, &[500, 0]), Some(8_000.0));
        // One clean trial after a lossy one is not enough.
        assert_eq!(next_load(10_000.0, &[500, 0, 3]), Some(7_000.0));
        assert_eq!(next_load(10_000.0, &[500, 0, 3, 0, 0]), None);
        assert_eq!(next_load(10_000.0, &[0, 0]), None);
        // At most ten steps, the last at 10 %.
        let lossy = [1u64; 9];
        assert!((next_load(10_000.0, &lossy).unwrap() - 1_000.0).abs() < 1e-9);
        assert_eq!(next_load(10_000.0, &[1u64; 10]), None);
    }
}
