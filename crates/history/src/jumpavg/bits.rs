//! The information content, in bits, of a group of samples coded as one
//! normal distribution: FD.io CSIT's `jumpavg` model (its
//! `BitCountingStats`), computed in the same order of operations.
//!
//! The code of a group is: its size (probability 1/k − 1/(k+1)); its
//! average (uniform from 0 to the maximum for the first group, otherwise
//! more likely the farther it is from the previous group's average: a
//! group close to the previous one had better been part of it); its
//! standard deviation (coded
//! like the size, cut off at the maximum); then the samples on the sphere
//! their deviation puts them on. Values are measured in `unit`s, their
//! resolution.

use super::lgamma::lgamma;
use super::stats::AvgStdev;

/// `log2(x)` as `jumpavg` takes it: `ln(x) / ln(2)` (Python's
/// `math.log(x, 2)`), not a base-2 logarithm of its own.
fn log2(x: f64) -> f64 {
    x.ln() / 2f64.ln()
}

/// The bits of a group with figures `stats`, in a series whose largest
/// sample is `max_value`, after a group of average `prev_avg` (None for
/// the first group). `max_value` and `unit` are positive.
pub fn group_bits(stats: &AvgStdev, max_value: f64, unit: f64, prev_avg: Option<f64>) -> f64 {
    // jumpavg codes the figures of a group after merging them once more.
    let s = AvgStdev::merge([*stats]);
    if s.size < 1 {
        return 0.0;
    }
    let size = s.size as f64;
    let max = max_value / unit;
    let avg = s.avg / unit;
    let mut bits = log2(size * (size + 1.0));
    match prev_avg {
        None => bits += log2(max + 1.0),
        Some(prev) => {
            let prev = prev / unit;
            let mut norm = prev * prev;
            norm -= (prev - 1.0) * max;
            norm += max * max / 2.0;
            bits -= log2(((avg - prev).abs() + 1.0) / norm);
        }
    }
    if s.size < 2 {
        return bits;
    }
    let stdev = s.stdev / unit;
    bits += log2((stdev + 1.0) * (stdev + 2.0));
    bits += log2(1.0 - 1.0 / (max + 2.0));
    // The samples lie on a (size−2)-sphere of radius² = stdev² × size.
    let mut sphere_ln = 2f64.ln();
    sphere_ln += std::f64::consts::PI.ln() * ((size - 1.0) / 2.0);
    sphere_ln -= lgamma((size - 1.0) / 2.0);
    sphere_ln += (stdev + 1.0).ln() * (size - 2.0);
    sphere_ln += size.ln() * ((size - 2.0) / 2.0);
    bits + sphere_ln / 2f64.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_first_sample_costs_its_size_and_its_average() {
        // size 1: log2(1·2) = 1 bit; average uniform over 0..=32 units:
        // log2(33) bits.
        let b = group_bits(&AvgStdev::sample(7.0), 32.0, 1.0, None);
        assert!((b - (1.0 + 33f64.log2())).abs() < 1e-12, "{b}");
    }

    #[test]
    fn a_jump_from_the_previous_average_is_cheaper_than_none() {
        // norm = 10² − 9·100 + 100²/2 = 4200; the average costs
        // log2(norm / (|avg − prev| + 1)) bits, plus 1 bit of size.
        let near = group_bits(&AvgStdev::sample(10.0), 100.0, 1.0, Some(10.0));
        let far = group_bits(&AvgStdev::sample(90.0), 100.0, 1.0, Some(10.0));
        assert!((near - (1.0 + 4200f64.log2())).abs() < 1e-9, "{near}");
        assert!(
            (far - (1.0 + (4200.0f64 / 81.0).log2())).abs() < 1e-9,
            "{far}"
        );
    }
}
