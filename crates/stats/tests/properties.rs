//! Properties of the descriptive statistics: the order of the values does
//! not matter, and scaling the values scales the statistics.

use pktlab_stats::{median, percentile, summarize, Summary};
use proptest::prelude::*;

/// Integer-valued samples small enough that every sum is exact, so even the
/// input-order sum ministat uses gives bit-identical results in any order.
fn exact_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        (-1_000_000_000i64..1_000_000_000).prop_map(|v| v as f64),
        1..60,
    )
}

/// A sample and the same values in another order.
fn with_permutation(
    sample: impl Strategy<Value = Vec<f64>>,
) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    sample.prop_flat_map(|values| (Just(values.clone()), Just(values).prop_shuffle()))
}

/// General finite samples, for properties that hold up to rounding.
fn float_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e9f64..1e9, 1..60)
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * scale.max(1e-300)
}

fn same_summary(a: &Summary, b: &Summary) -> bool {
    a.n == b.n
        && a.min == b.min
        && a.max == b.max
        && a.median == b.median
        && a.avg == b.avg
        && (a.stddev == b.stddev || (a.stddev.is_nan() && b.stddev.is_nan()))
}

proptest! {
    #[test]
    fn any_order_gives_the_same_summary((values, shuffled) in with_permutation(exact_sample())) {
        let a = summarize(&values).unwrap();
        let b = summarize(&shuffled).unwrap();
        prop_assert!(same_summary(&a, &b), "{a:?} vs {b:?}");
        prop_assert_eq!(median(&values), median(&shuffled));
        prop_assert_eq!(percentile(&values, 90.0), percentile(&shuffled, 90.0));
    }

    #[test]
    fn any_order_gives_the_same_summary_up_to_rounding((values, shuffled) in with_permutation(float_sample())) {
        let a = summarize(&values).unwrap();
        let b = summarize(&shuffled).unwrap();
        // Order-free figures are exact; the input-order sum may differ in the last bits.
        prop_assert_eq!((a.n, a.min, a.max, a.median), (b.n, b.min, b.max, b.median));
        let magnitude = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        prop_assert!(close(a.avg, b.avg, magnitude), "{} vs {}", a.avg, b.avg);
        prop_assert!(close(a.stddev, b.stddev, magnitude), "{} vs {}", a.stddev, b.stddev);
    }

    #[test]
    fn scaling_by_a_power_of_two_scales_exactly(values in float_sample(), k in -20i32..20) {
        // Multiplying by 2^k is exact, so every figure scales exactly.
        let c = 2f64.powi(k);
        let scaled: Vec<f64> = values.iter().map(|v| v * c).collect();
        let a = summarize(&values).unwrap();
        let b = summarize(&scaled).unwrap();
        prop_assert_eq!(b.avg, a.avg * c);
        prop_assert!(b.stddev == a.stddev * c || (a.stddev.is_nan() && b.stddev.is_nan()));
        prop_assert_eq!((b.min, b.max, b.median), (a.min * c, a.max * c, a.median * c));
    }

    #[test]
    fn scaling_scales_avg_and_stddev(values in float_sample(), c in prop_oneof![-1e3f64..-1e-3, 1e-3f64..1e3]) {
        let scaled: Vec<f64> = values.iter().map(|v| v * c).collect();
        let a = summarize(&values).unwrap();
        let b = summarize(&scaled).unwrap();
        let magnitude = values.iter().fold(0.0f64, |m, v| m.max(v.abs())) * c.abs();
        prop_assert!(close(b.avg, a.avg * c, magnitude), "avg {} vs {}", b.avg, a.avg * c);
        // The standard deviation scales with |c|: a negative factor mirrors the data.
        prop_assert!(close(b.stddev, a.stddev * c.abs(), magnitude), "stddev {} vs {}", b.stddev, a.stddev * c.abs());
        if c < 0.0 {
            prop_assert!(close(b.min, a.max * c, magnitude) && close(b.max, a.min * c, magnitude));
        }
    }

    #[test]
    fn percentiles_are_ordered_and_bounded(values in float_sample(), p in 0.0f64..100.0, q in 0.0f64..100.0) {
        let s = summarize(&values).unwrap();
        let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
        let (a, b) = (percentile(&values, lo).unwrap(), percentile(&values, hi).unwrap());
        prop_assert!(s.min <= a && a <= b && b <= s.max, "{a} {b} in {} {}", s.min, s.max);
    }
}
