//! A group's size, average and standard deviation, merged from runs the
//! way FD.io CSIT's `jumpavg` merges them (its `AvgStdevStats.for_runs`):
//! Welford's running update over runs that are themselves averages, in the
//! same order of operations, so that the figures agree with `jumpavg`'s to
//! the last bit.

/// Size, population average and population standard deviation of a set
/// of samples. A single sample is `{size: 1, avg: x, stdev: 0}`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct AvgStdev {
    pub size: u64,
    pub avg: f64,
    pub stdev: f64,
}

impl AvgStdev {
    /// One sample.
    pub fn sample(value: f64) -> AvgStdev {
        AvgStdev {
            size: 1,
            avg: value,
            stdev: 0.0,
        }
    }

    /// The samples `values` as one run.
    pub fn of_values(values: &[f64]) -> AvgStdev {
        AvgStdev::merge(values.iter().map(|&v| AvgStdev::sample(v)))
    }

    /// The runs merged into one: empty runs are skipped, and no run at all
    /// gives size 0. The moments are summed as `jumpavg` sums them (the
    /// second moment rebuilt from each run's standard deviation), which is
    /// why merging a single run can move its figures by a rounding step.
    pub fn merge(runs: impl IntoIterator<Item = AvgStdev>) -> AvgStdev {
        let mut total_size: u64 = 0;
        let mut total_avg = 0.0_f64;
        let mut moment_2 = 0.0_f64;
        for run in runs {
            if run.size < 1 {
                continue;
            }
            let old_total_size = total_size;
            let delta = run.avg - total_avg;
            total_size += run.size;
            let (size, total, old) = (run.size as f64, total_size as f64, old_total_size as f64);
            total_avg += delta * size / total;
            moment_2 += run.stdev * run.stdev * size;
            moment_2 += delta * delta * old * size / total;
        }
        if total_size < 1 {
            return AvgStdev {
                size: 0,
                avg: 0.0,
                stdev: 0.0,
            };
        }
        AvgStdev {
            size: total_size,
            avg: total_avg,
            stdev: (moment_2 / total_size as f64).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn population_figures_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population variance 4.
        let s = AvgStdev::of_values(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.size, 8);
        assert!((s.avg - 5.0).abs() < 1e-12);
        assert!((s.stdev - 2.0).abs() < 1e-12);
    }

    #[test]
    fn runs_of_runs_equal_the_samples_pooled() {
        let a = AvgStdev::of_values(&[1.0, 3.0]);
        let b = AvgStdev::of_values(&[10.0, 12.0, 14.0]);
        let both = AvgStdev::merge([a, b]);
        // 1, 3, 10, 12, 14: mean 8, squares of deviations 49+25+4+16+36 = 130.
        assert_eq!(both.size, 5);
        assert!((both.avg - 8.0).abs() < 1e-12);
        assert!((both.stdev - (130.0_f64 / 5.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn nothing_and_empty_runs() {
        assert_eq!(AvgStdev::merge([]).size, 0);
        let empty = AvgStdev {
            size: 0,
            avg: 99.0,
            stdev: 9.0,
        };
        assert_eq!(
            AvgStdev::merge([empty, AvgStdev::sample(2.5)]),
            AvgStdev::sample(2.5)
        );
    }
}
