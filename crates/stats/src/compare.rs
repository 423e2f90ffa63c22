//! ministat's comparison of two samples: Student's t test on the means.

use serde::{Deserialize, Serialize};

use crate::descriptive::{Sample, Summary};
use crate::student::Confidence;

/// How a sample differs from a baseline, at a confidence level.
///
/// `difference` is `avg(other) - avg(baseline)` and `error` the half-width of
/// its confidence interval, `t * pooled_s * sqrt(1/n1 + 1/n2)`. `percent` is
/// the difference in percent of the baseline's mean. `percent_error` is the
/// interval of that ratio: the other sample's variance enters as is and the
/// baseline's is scaled by `(avg(other) / avg(baseline))^2`, because the ratio
/// moves with both means (ministat since FreeBSD 13; older versions printed
/// `error` in percent of the baseline instead). `significant` is ministat's
/// test `|difference| > error`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub difference: f64,
    pub error: f64,
    /// NaN or infinite (JSON `null`) when the baseline's mean is 0.
    #[serde(deserialize_with = "crate::json::f64_or_nan")]
    pub percent: f64,
    #[serde(deserialize_with = "crate::json::f64_or_nan")]
    pub percent_error: f64,
    pub pooled_s: f64,
    pub t: f64,
    pub degrees_of_freedom: usize,
    pub confidence: Confidence,
    pub significant: bool,
}

/// Compares `other` with `baseline` (ministat's first data set).
///
/// The variances are taken as `stddev^2`; `ministat::render` works from the
/// data and uses the unrounded variances.
pub fn compare(baseline: &Summary, other: &Summary, confidence: Confidence) -> Comparison {
    compare_moments(
        Moments::from_summary(baseline),
        Moments::from_summary(other),
        confidence,
    )
}

/// The three figures the t test needs from a sample.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moments {
    pub n: usize,
    pub avg: f64,
    pub variance: f64,
}

impl Moments {
    fn from_summary(summary: &Summary) -> Moments {
        Moments {
            n: summary.n,
            avg: summary.avg,
            variance: summary.stddev * summary.stddev,
        }
    }

    pub(crate) fn of(sample: &Sample) -> Moments {
        Moments {
            n: sample.n(),
            avg: sample.avg(),
            variance: sample.variance(),
        }
    }
}

/// The arithmetic follows ministat's order of operations exactly, so that the
/// printed `%g` figures come out the same to the last digit.
pub(crate) fn compare_moments(base: Moments, other: Moments, confidence: Confidence) -> Comparison {
    let (n1, n2) = (base.n as f64, other.n as f64);
    let degrees_of_freedom = (base.n + other.n).saturating_sub(2);
    let t = confidence.critical_t(degrees_of_freedom);

    let pooled_variance =
        ((n2 - 1.0) * other.variance + (n1 - 1.0) * base.variance) / degrees_of_freedom as f64;
    let pooled_s = pooled_variance.sqrt();
    let standard_error = pooled_s * (1.0 / n2 + 1.0 / n1).sqrt();
    let difference = other.avg - base.avg;
    let error = t * standard_error;

    // The ratio avg(other)/avg(baseline) moves with both means: the
    // baseline's spread counts scaled by the squared ratio of the means.
    let ratio_variance = (n2 - 1.0) * other.variance
        + (n1 - 1.0) * base.variance * (other.avg * other.avg) / (base.avg * base.avg);
    let weight = (base.n + other.n) as f64 / ((base.n * other.n) as f64 * (n2 + n1 - 2.0));
    let ratio_error = t * (ratio_variance * weight).sqrt();

    Comparison {
        difference,
        error,
        percent: difference * 100.0 / base.avg,
        percent_error: ratio_error * 100.0 / base.avg,
        pooled_s,
        t,
        degrees_of_freedom,
        confidence,
        significant: difference.abs() > error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptive::summarize;

    #[test]
    fn hand_computed_comparison() {
        // baseline 1 2 3: mean 2, variance 1; other 4 5 6: mean 5, variance 1.
        // df 4, t(95%) 2.776; pooled s = sqrt((2*1 + 2*1) / 4) = 1;
        // error = 2.776 * sqrt(1/3 + 1/3) = 2.2665945...
        // percent = 3 * 100 / 2 = 150;
        // ratio variance = 2*1 + 2*1 * 25/4 = 14.5, weight 6 / (9 * 4) = 1/6,
        // percent error = 2.776 * sqrt(14.5/6) * 100 / 2 = 215.7733...
        let base = summarize(&[1.0, 2.0, 3.0]).unwrap();
        let other = summarize(&[4.0, 5.0, 6.0]).unwrap();
        let c = compare(&base, &other, Confidence::P95);
        assert_eq!(c.degrees_of_freedom, 4);
        assert_eq!(c.t, 2.776);
        assert_eq!(c.difference, 3.0);
        assert_eq!(c.pooled_s, 1.0);
        assert!((c.error - 2.776 * (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(c.percent, 150.0);
        assert!((c.percent_error - 2.776 * (14.5f64 / 6.0).sqrt() * 50.0).abs() < 1e-9);
        assert!((c.percent_error - 215.7733).abs() < 1e-4);
        assert!(c.significant);
    }

    #[test]
    fn hand_computed_comparison_with_a_stddev_of_two() {
        // baseline 0 2 4: mean 2, variance 4 (stddev 2); other 6 8 10:
        // mean 8, variance 4. df 4, t(95%) 2.776; pooled s =
        // sqrt((2*4 + 2*4) / 4) = 2; error = 2.776 * 2 * sqrt(2/3);
        // percent = 6 * 100 / 2 = 300; ratio variance = 2*4 + 2*4 * 64/4
        // = 136, weight 1/6, percent error = 2.776 * sqrt(136/6) * 50.
        let base = summarize(&[0.0, 2.0, 4.0]).unwrap();
        let other = summarize(&[6.0, 8.0, 10.0]).unwrap();
        let c = compare(&base, &other, Confidence::P95);
        assert_eq!(c.pooled_s, 2.0);
        assert!((c.error - 2.776 * 2.0 * (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(c.percent, 300.0);
        assert!((c.percent_error - 2.776 * (136.0f64 / 6.0).sqrt() * 50.0).abs() < 1e-9);
        assert!(c.significant);
    }

    #[test]
    fn overlapping_samples_are_not_significant() {
        // Same means: difference 0 can never exceed the error.
        let base = summarize(&[1.0, 5.0, 9.0]).unwrap();
        let other = summarize(&[4.0, 5.0, 6.0]).unwrap();
        let c = compare(&base, &other, Confidence::P80);
        assert_eq!(c.difference, 0.0);
        assert!(!c.significant);
        assert_eq!(c.t, 1.533);
    }

    #[test]
    fn lower_confidence_narrows_the_interval() {
        let base = summarize(&[10.0, 12.0, 11.0, 13.0]).unwrap();
        let other = summarize(&[12.0, 14.0, 13.0, 15.0]).unwrap();
        let errors: Vec<f64> = Confidence::ALL
            .iter()
            .map(|&level| compare(&base, &other, level).error)
            .collect();
        assert!(errors.windows(2).all(|w| w[0] < w[1]), "{errors:?}");
    }

    #[test]
    fn degrees_of_freedom_beyond_the_table_use_the_normal_value() {
        let base: Vec<f64> = (0..60).map(f64::from).collect();
        let other: Vec<f64> = (10..70).map(f64::from).collect();
        let c = compare(
            &summarize(&base).unwrap(),
            &summarize(&other).unwrap(),
            Confidence::P95,
        );
        assert_eq!(c.degrees_of_freedom, 118);
        assert_eq!(c.t, 1.960);
    }
}
