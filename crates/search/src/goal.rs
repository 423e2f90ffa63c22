//! Search goals and their targets.
//!
//! A goal is met by a load whose trials lose at most `loss_ratio` of their
//! frames, except for at most `exceed_ratio` of the goal's trial-seconds
//! (`duration_sum`). The search reaches it through coarser targets first:
//! each preceding target has twice the width of the next, a smaller
//! duration sum and shorter trials (interpolated geometrically from the
//! initial trial duration), so that cheap trials find the region before
//! expensive ones confirm it.

use crate::SearchError;

/// One search goal, as MLRsearch defines them (ratios are fractions).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Goal {
    /// Trials losing more than this fraction of their frames are high-loss.
    pub loss_ratio: f64,
    /// The fraction of trial-seconds allowed to be high-loss.
    pub exceed_ratio: f64,
    /// The relative width (upper − lower) / upper the bounds must reach.
    pub width: f64,
    /// Seconds of the first, coarsest trials.
    pub initial_trial_duration: f64,
    /// Seconds of the trials that confirm the final target.
    pub final_trial_duration: f64,
    /// Seconds of full-length trials that decide a load for the final target.
    pub duration_sum: f64,
    /// How many coarser targets precede the final one.
    pub preceding_targets: u32,
}

/// MLRsearch's defaults: NDR (0 % loss) and PDR (0.5 % loss), exceed ratio
/// 50 %, width 0.5 %, trials of 1 s, 21 s per load, two preceding targets.
pub const DEFAULT_GOALS: [(f64, f64); 2] = [(0.0, 0.5), (0.005, 0.5)];
pub const DEFAULT_WIDTH: f64 = 0.005;
pub const DEFAULT_INITIAL_TRIAL: f64 = 1.0;
pub const DEFAULT_FINAL_TRIAL: f64 = 1.0;
pub const DEFAULT_DURATION_SUM: f64 = 21.0;
pub const DEFAULT_PRECEDING_TARGETS: u32 = 2;

/// One step towards a goal: classify loads with these numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub loss_ratio: f64,
    pub exceed_ratio: f64,
    pub width: f64,
    /// Trials at least this long are full-length for this target.
    pub trial_duration: f64,
    pub duration_sum: f64,
}

impl Goal {
    /// A goal with the default width and durations.
    pub fn new(loss_ratio: f64, exceed_ratio: f64) -> Goal {
        Goal {
            loss_ratio,
            exceed_ratio,
            width: DEFAULT_WIDTH,
            initial_trial_duration: DEFAULT_INITIAL_TRIAL,
            final_trial_duration: DEFAULT_FINAL_TRIAL,
            duration_sum: DEFAULT_DURATION_SUM,
            preceding_targets: DEFAULT_PRECEDING_TARGETS,
        }
    }

    /// Parses `LOSS[:EXCEED]`, both in percent: `0`, `0.5`, `0.5:50`. The
    /// exceed ratio defaults to 50 %.
    pub fn parse(text: &str) -> Result<Goal, SearchError> {
        let bad = |why: &str| {
            SearchError(format!(
                "invalid goal '{text}': {why} (use LOSS[:EXCEED] in percent, such as 0, 0.5 or 0.5:50)"
            ))
        };
        let (loss, exceed) = match text.split_once(':') {
            Some((l, e)) => (l, Some(e)),
            None => (text, None),
        };
        let loss = percent(loss).ok_or_else(|| bad("the loss is not a number"))?;
        if loss >= 100.0 {
            return Err(bad("the loss must be below 100 %"));
        }
        let exceed = match exceed {
            Some(e) => percent(e).ok_or_else(|| bad("the exceed ratio is not a number"))?,
            None => 50.0,
        };
        if exceed >= 100.0 {
            return Err(bad("the exceed ratio must be below 100 %"));
        }
        Ok(Goal::new(loss / 100.0, exceed / 100.0))
    }

    /// Checks the width and durations; `what` names the options in errors.
    pub fn check(&self) -> Result<(), SearchError> {
        if !(self.width > 0.0 && self.width < 1.0) {
            return Err(SearchError(format!(
                "invalid width {} %: use more than 0 and less than 100 %",
                self.width * 100.0
            )));
        }
        for (name, d) in [
            ("initial trial duration", self.initial_trial_duration),
            ("final trial duration", self.final_trial_duration),
            ("duration sum", self.duration_sum),
        ] {
            if !(d.is_finite() && d >= 0.001) {
                return Err(SearchError(format!(
                    "invalid {name} {d} s: use at least 1 ms"
                )));
            }
        }
        if self.duration_sum < self.final_trial_duration {
            return Err(SearchError(format!(
                "invalid duration sum {} s: it must be at least the final trial duration ({} s)",
                self.duration_sum, self.final_trial_duration
            )));
        }
        Ok(())
    }

    /// The targets in search order: the coarsest first, the goal itself last.
    pub fn targets(&self) -> Vec<Target> {
        let p = self.preceding_targets;
        (0..=p)
            .map(|k| {
                let coarser = p - k;
                // Share of the way from the initial trial to the goal's own.
                let t = if p == 0 {
                    1.0
                } else {
                    f64::from(k) / f64::from(p)
                };
                let geometric = |from: f64, to: f64| from * (to / from).powf(t);
                let duration_sum = geometric(self.initial_trial_duration, self.duration_sum);
                let trial = geometric(self.initial_trial_duration, self.final_trial_duration);
                Target {
                    loss_ratio: self.loss_ratio,
                    exceed_ratio: self.exceed_ratio,
                    width: (self.width * 2f64.powi(coarser as i32)).min(0.5),
                    trial_duration: trial.min(duration_sum),
                    duration_sum,
                }
            })
            .collect()
    }
}

/// A non-negative decimal number of percent.
fn percent(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1
        && text != ".";
    if ok {
        text.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_parse_in_percent() {
        assert_eq!(Goal::parse("0").unwrap(), Goal::new(0.0, 0.5));
        assert_eq!(Goal::parse("0.5").unwrap(), Goal::new(0.005, 0.5));
        assert_eq!(Goal::parse("0.5:0").unwrap(), Goal::new(0.005, 0.0));
        assert_eq!(Goal::parse("1:25").unwrap(), Goal::new(0.01, 0.25));
        let usage = "(use LOSS[:EXCEED] in percent, such as 0, 0.5 or 0.5:50)";
        for (bad, why) in [
            ("", "the loss is not a number"),
            ("-1", "the loss is not a number"),
            ("x", "the loss is not a number"),
            ("1e3", "the loss is not a number"),
            ("100", "the loss must be below 100 %"),
            ("0:", "the exceed ratio is not a number"),
            ("0:100", "the exceed ratio must be below 100 %"),
            ("0:5:5", "the exceed ratio is not a number"),
        ] {
            assert_eq!(
                Goal::parse(bad).unwrap_err().to_string(),
                format!("invalid goal '{bad}': {why} {usage}")
            );
        }
    }

    #[test]
    fn targets_get_finer_towards_the_goal() {
        let g = Goal {
            initial_trial_duration: 1.0,
            final_trial_duration: 4.0,
            duration_sum: 16.0,
            ..Goal::new(0.0, 0.5)
        };
        let t = g.targets();
        assert_eq!(t.len(), 3);
        // Widths 2 %, 1 %, 0.5 %; sums 1, 4, 16 s; trials 1, 2, 4 s.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        for (target, (w, sum, trial)) in
            t.iter()
                .zip([(0.02, 1.0, 1.0), (0.01, 4.0, 2.0), (0.005, 16.0, 4.0)])
        {
            assert!(close(target.width, w), "{target:?}");
            assert!(close(target.duration_sum, sum), "{target:?}");
            assert!(close(target.trial_duration, trial), "{target:?}");
        }
        let only = Goal {
            preceding_targets: 0,
            ..g
        };
        assert_eq!(only.targets().len(), 1);
        assert_eq!(only.targets()[0].duration_sum, 16.0);
        assert_eq!(only.targets()[0].width, 0.005);
    }

    #[test]
    fn targets_from_a_first_trial_longer_than_a_second() {
        // Trials 2, 4, 8 s and sums 2, 8, 32 s: each step doubles the
        // trial and quadruples the sum.
        let g = Goal {
            initial_trial_duration: 2.0,
            final_trial_duration: 8.0,
            duration_sum: 32.0,
            ..Goal::new(0.0, 0.5)
        };
        let got: Vec<(f64, f64)> = g
            .targets()
            .iter()
            .map(|t| (t.trial_duration, t.duration_sum))
            .collect();
        let want = [(2.0, 2.0), (4.0, 8.0), (8.0, 32.0)];
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.0 - w.0).abs() < 1e-12 && (g.1 - w.1).abs() < 1e-12,
                "{got:?}"
            );
        }
    }

    #[test]
    fn check_bounds_the_width_and_the_durations() {
        let ok = Goal::new(0.0, 0.5);
        assert!(ok.check().is_ok());
        let err = |g: Goal| g.check().unwrap_err().to_string();
        for width in [0.0, -0.1, 1.0] {
            assert_eq!(
                err(Goal {
                    width,
                    ..ok.clone()
                }),
                format!(
                    "invalid width {} %: use more than 0 and less than 100 %",
                    width * 100.0
                )
            );
        }
        assert!(Goal {
            width: 0.99,
            ..ok.clone()
        }
        .check()
        .is_ok());
        // Durations: at least 1 ms, finite.
        assert_eq!(
            err(Goal {
                initial_trial_duration: 0.0009,
                ..ok.clone()
            }),
            "invalid initial trial duration 0.0009 s: use at least 1 ms"
        );
        assert_eq!(
            err(Goal {
                final_trial_duration: f64::INFINITY,
                duration_sum: f64::INFINITY,
                ..ok.clone()
            }),
            "invalid final trial duration inf s: use at least 1 ms"
        );
        let ms = Goal {
            initial_trial_duration: 0.001,
            final_trial_duration: 0.001,
            duration_sum: 0.001,
            ..ok.clone()
        };
        assert!(ms.check().is_ok());
        // The sum holds at least one final trial.
        assert_eq!(
            err(Goal {
                final_trial_duration: 2.0,
                duration_sum: 1.5,
                ..ok.clone()
            }),
            "invalid duration sum 1.5 s: it must be at least the final trial duration (2 s)"
        );
        assert!(Goal {
            final_trial_duration: 2.0,
            duration_sum: 2.0,
            ..ok
        }
        .check()
        .is_ok());
    }
}
