//! Descriptive statistics of one sample: the N, Min, Max, Median, Avg and
//! Stddev columns of ministat, plus percentiles.

use serde::{Deserialize, Serialize};

/// The figures of one row of ministat's table.
///
/// `avg` is the sum of the values taken in the order given, divided by `n`;
/// `stddev` is the square root of the two-pass sum of squared deviations from
/// `avg` (over the sorted values) divided by `n - 1`, so it is NaN when
/// `n == 1`. `median` is the middle value, or the mean of the two middle
/// values when `n` is even.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub avg: f64,
    /// NaN (JSON `null`) for one value.
    #[serde(deserialize_with = "crate::json::f64_or_nan")]
    pub stddev: f64,
}

/// The summary of `values`, or `None` when there are none.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    Sample::new(values).map(|sample| sample.summary())
}

/// The median of `values` (mean of the two middle values for an even count),
/// or `None` when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median_of_sorted(&sorted(values)))
}

/// The `p`-th percentile of `values`, `p` in 0..=100, or `None` when there
/// are no values or `p` is outside that range.
///
/// Definition: linear interpolation between closest ranks (Hyndman & Fan type
/// 7, the default of R, NumPy and spreadsheets' PERCENTILE.INC). With the
/// values sorted as `x[0] <= ... <= x[n-1]`, the rank is `h = (n - 1) * p / 100`
/// and the result is `x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)])`.
/// So p = 0 is the minimum, p = 100 the maximum and p = 50 the median.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let sorted = sorted(values);
    let rank = (sorted.len() - 1) as f64 * p / 100.0;
    let below = rank.floor() as usize;
    let fraction = rank - below as f64;
    let lower = sorted[below];
    match sorted.get(below + 1) {
        Some(&upper) if fraction > 0.0 => Some(lower + fraction * (upper - lower)),
        _ => Some(lower),
    }
}

/// A sample prepared the way ministat reads a data set: the values sorted,
/// the mean from the sum in input order, the variance from deviations.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    sorted: Vec<f64>,
    avg: f64,
    variance: f64,
}

impl Sample {
    pub(crate) fn new(values: &[f64]) -> Option<Sample> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        // Input order, as ministat adds each point while it reads it. An
        // explicit fold from +0.0: `Sum` starts from -0.0, which would turn an
        // all-(-0.0) sample's mean into "-0" where ministat prints "0".
        let avg = values.iter().fold(0.0, |sum, v| sum + v) / n;
        let sorted = sorted(values);
        // Two passes: deviations from the finished mean, summed over the
        // sorted points. 0/0 = NaN for a single point, as in ministat.
        let squares = sorted
            .iter()
            .fold(0.0, |sum, v| sum + (v - avg) * (v - avg));
        let variance = squares / (n - 1.0);
        Some(Sample {
            sorted,
            avg,
            variance,
        })
    }

    pub(crate) fn sorted(&self) -> &[f64] {
        &self.sorted
    }

    pub(crate) fn n(&self) -> usize {
        self.sorted.len()
    }

    pub(crate) fn avg(&self) -> f64 {
        self.avg
    }

    pub(crate) fn variance(&self) -> f64 {
        self.variance
    }

    pub(crate) fn stddev(&self) -> f64 {
        self.variance.sqrt()
    }

    pub(crate) fn median(&self) -> f64 {
        median_of_sorted(&self.sorted)
    }

    pub(crate) fn summary(&self) -> Summary {
        Summary {
            n: self.n(),
            min: self.sorted[0],
            max: self.sorted[self.sorted.len() - 1],
            median: self.median(),
            avg: self.avg,
            stddev: self.stddev(),
        }
    }
}

/// Sorted copy; `total_cmp` so NaNs cannot make the sort inconsistent.
fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_an_even_sample() {
        // 1 2 3 4: mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5;
        // variance 5/3; median (2 + 3) / 2.
        let s = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.n, 4);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.avg, 2.5);
        assert_eq!(s.stddev, (5.0f64 / 3.0).sqrt());
    }

    #[test]
    fn summary_of_an_odd_sample() {
        // ministat's man page example "iguana": 50 200 150 400 750 400 150.
        // Sum 2100, mean 300; deviations -250 -100 -150 100 450 100 -150,
        // squares sum 62500+10000+22500+10000+202500+10000+22500 = 340000;
        // variance 340000/6, stddev 238.0476...
        let s = summarize(&[50.0, 200.0, 150.0, 400.0, 750.0, 400.0, 150.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.median, s.avg),
            (7, 50.0, 750.0, 200.0, 300.0)
        );
        assert_eq!(s.stddev, (340000.0f64 / 6.0).sqrt());
        assert!((s.stddev - 238.04761).abs() < 1e-5);
    }

    #[test]
    fn single_value_has_undefined_stddev() {
        let s = summarize(&[7.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.median, s.avg),
            (1, 7.0, 7.0, 7.0, 7.0)
        );
        assert!(s.stddev.is_nan());
    }

    #[test]
    fn empty_input_has_no_statistics() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[10.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[5.0]), Some(5.0));
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let v = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&v, 0.0), Some(15.0));
        assert_eq!(percentile(&v, 100.0), Some(50.0));
        assert_eq!(percentile(&v, 50.0), Some(35.0));
        // rank 4 * 0.4 = 1.6: 20 + 0.6 * (35 - 20) = 29
        assert_eq!(percentile(&v, 40.0), Some(29.0));
        // rank 4 * 0.75 = 3: exactly x[3]
        assert_eq!(percentile(&v, 75.0), Some(40.0));
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), Some(2.5));
        assert_eq!(percentile(&v, -1.0), None);
        assert_eq!(percentile(&v, 100.5), None);
        assert_eq!(percentile(&v, f64::NAN), None);
        // A rank that lands on a value takes it as it is, even beside an
        // infinite neighbour (interpolating would give 1 + 0 * inf = NaN),
        // as R's quantile(c(1, Inf), 0) gives 1.
        assert_eq!(percentile(&[1.0, f64::INFINITY], 0.0), Some(1.0));
        assert_eq!(percentile(&[f64::NEG_INFINITY, 1.0, 2.0], 50.0), Some(1.0));
    }
}
