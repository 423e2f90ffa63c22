//! From per-second samples to the value of a run.

/// The part of a run's per-interval samples that counts: from the first
/// non-zero sample to the last one (the receiver starts before the
/// generator and stops after it), minus `head` samples of warm-up and
/// `tail` samples at the end. Zero samples in the middle stay: a DUT that
/// stalled forwarded nothing that second.
pub fn steady(samples: &[f64], head: usize, tail: usize) -> &[f64] {
    let Some(first) = samples.iter().position(|&s| s > 0.0) else {
        return &[];
    };
    let last = samples.iter().rposition(|&s| s > 0.0).unwrap_or(first);
    let active = &samples[first..=last];
    if active.len() <= head + tail {
        return &[];
    }
    &active[head..active.len() - tail]
}

/// The value of a run: the median of its steady samples (None when no
/// sample is left after trimming).
pub fn run_value(samples: &[f64], head: usize, tail: usize) -> Option<f64> {
    pktlab_stats::median(steady(samples, head, tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_idle_edges_then_warm_up_and_tail() {
        let s = [0.0, 0.0, 50.0, 100.0, 102.0, 98.0, 101.0, 20.0, 0.0];
        assert_eq!(steady(&s, 1, 1), &[100.0, 102.0, 98.0, 101.0]);
        assert_eq!(run_value(&s, 1, 1), Some(100.5));
        assert_eq!(steady(&s, 2, 2), &[102.0, 98.0]);
        assert_eq!(run_value(&s, 0, 0), Some(99.0));
    }

    #[test]
    fn zero_in_the_middle_counts() {
        let s = [5.0, 100.0, 0.0, 100.0, 100.0, 5.0];
        assert_eq!(steady(&s, 1, 1), &[100.0, 0.0, 100.0, 100.0]);
        assert_eq!(run_value(&s, 1, 1), Some(100.0));
    }

    #[test]
    fn too_short() {
        assert_eq!(run_value(&[10.0, 20.0], 1, 1), None);
        assert_eq!(run_value(&[0.0, 0.0], 0, 0), None);
        assert_eq!(run_value(&[], 0, 0), None);
        assert_eq!(run_value(&[7.0, 9.0, 8.0], 1, 1), Some(9.0));
    }

    #[test]
    fn fewer_samples_than_trimmed() {
        // One active sample, two to leave out at the end: nothing left.
        assert_eq!(steady(&[5.0], 0, 2), &[] as &[f64]);
        // Two active samples, three to leave out.
        assert_eq!(steady(&[0.0, 5.0, 6.0, 0.0], 2, 1), &[] as &[f64]);
        assert_eq!(run_value(&[5.0, 6.0], 1, 2), None);
        // Exactly one left.
        assert_eq!(steady(&[4.0, 5.0, 6.0], 0, 2), &[4.0]);
    }
}
