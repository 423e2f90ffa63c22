//! An rfc2544 campaign's settings as the command line gives them
//! ([`SearchFlags`]), checked and made into [`MlrSettings`].

use pktlab_wire::units::{self, Rate};

use super::latency;
use super::settings::{
    MaxLoad, MlrSettings, DEFAULT_B2B_TRIALS, DEFAULT_B2B_TRIAL_S, MIN_FRACTION,
};
use crate::goal::{self, Goal};
use crate::SearchError;

/// Every test `--tests` may name.
pub const TESTS: [&str; 4] = ["throughput", "latency", "frame-loss", "back-to-back"];

/// The search's flags, as typed (None: not given).
#[derive(Clone, Debug, Default)]
pub struct SearchFlags {
    /// A list of tests, or `all`.
    pub tests: String,
    pub latency_loads: Option<String>,
    pub latency_trials: Option<usize>,
    pub b2b_trials: Option<usize>,
    pub b2b_trial: Option<String>,
    pub trial_warmup: Option<String>,
    pub goals: Vec<String>,
    pub width: Option<String>,
    pub initial_trial: Option<String>,
    pub final_trial: Option<String>,
    pub duration_sum: Option<String>,
    pub preceding_targets: Option<u32>,
    pub strict: bool,
    pub max_rate: Option<String>,
    pub repeat: Option<usize>,
}

fn usage(msg: String) -> SearchError {
    SearchError(msg)
}

fn seconds(flag: &str, text: &Option<String>, default: f64) -> Result<f64, SearchError> {
    match text {
        None => Ok(default),
        Some(t) => {
            let d = units::parse_duration(t).map_err(|_| {
                usage(format!(
                    "invalid {flag} '{t}': use a duration such as 1s, 500ms or 1m"
                ))
            })?;
            if d.as_secs_f64() < 0.001 {
                return Err(usage(format!("invalid {flag} '{t}': use at least 1ms")));
            }
            Ok(d.as_secs_f64())
        }
    }
}

/// `--latency-loads 0,10,50,90`: fractions of the PDR.
fn latency_loads(text: &str) -> Result<Vec<f64>, SearchError> {
    let bad = || {
        usage(format!(
            "invalid --latency-loads '{text}': use percentages of the PDR from 0 to 100, such as 0,10,50,90"
        ))
    };
    let mut loads = Vec::new();
    for part in text.split(',') {
        let v: f64 = part
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&v) {
            return Err(bad());
        }
        loads.push(v / 100.0);
    }
    Ok(loads)
}

impl SearchFlags {
    /// The tests `--tests` names, `all` expanded.
    pub fn tests(&self) -> Vec<&str> {
        let tests: Vec<&str> = self.tests.split(',').map(str::trim).collect();
        if tests.contains(&"all") {
            return TESTS.to_vec();
        }
        tests
    }

    /// Searches per configuration and traffic (`--repeat`, 1 by default):
    /// the campaign's iterations.
    pub fn searches(&self) -> usize {
        self.repeat.unwrap_or(1)
    }

    /// Checks the flags on their own; `resume`: none that would reshape
    /// the saved searches may be given.
    pub fn check(&self, resume: bool) -> Result<(), SearchError> {
        for test in self.tests.split(',').map(str::trim) {
            if test != "all" && !TESTS.contains(&test) {
                return Err(usage(format!(
                    "unknown test '{test}': use throughput, latency, frame-loss, back-to-back or all"
                )));
            }
        }
        if self.repeat == Some(0) {
            return Err(usage("invalid --repeat 0: use at least 1".into()));
        }
        for (flag, n) in [
            ("--latency-trials", self.latency_trials),
            ("--b2b-trials", self.b2b_trials),
        ] {
            if n == Some(0) {
                return Err(usage(format!("invalid {flag} 0: use at least 1")));
            }
        }
        self.check_tests_named()?;
        if resume {
            self.check_resume()?;
        }
        Ok(())
    }

    /// A test's own flags need the test.
    fn check_tests_named(&self) -> Result<(), SearchError> {
        let tests = self.tests();
        for (flag, set, test) in [
            ("--latency-loads", self.latency_loads.is_some(), "latency"),
            ("--latency-trials", self.latency_trials.is_some(), "latency"),
            ("--b2b-trials", self.b2b_trials.is_some(), "back-to-back"),
            ("--b2b-trial", self.b2b_trial.is_some(), "back-to-back"),
        ] {
            if set && !tests.contains(&test) {
                return Err(usage(format!(
                    "{flag} applies to the {test} test: add --tests {test} (or all)"
                )));
            }
        }
        Ok(())
    }

    fn check_resume(&self) -> Result<(), SearchError> {
        let shaping = [
            ("--goal", !self.goals.is_empty()),
            ("--width", self.width.is_some()),
            ("--initial-trial", self.initial_trial.is_some()),
            ("--final-trial", self.final_trial.is_some()),
            ("--duration-sum", self.duration_sum.is_some()),
            ("--preceding-targets", self.preceding_targets.is_some()),
            ("--rfc2544-strict", self.strict),
            ("--max-rate", self.max_rate.is_some()),
            ("--repeat", self.repeat.is_some()),
            ("--latency-loads", self.latency_loads.is_some()),
            ("--latency-trials", self.latency_trials.is_some()),
            ("--b2b-trials", self.b2b_trials.is_some()),
            ("--b2b-trial", self.b2b_trial.is_some()),
            ("--trial-warmup", self.trial_warmup.is_some()),
        ];
        if let Some((flag, _)) = shaping.iter().find(|(_, s)| *s) {
            return Err(usage(format!(
                "{flag} cannot be used with --resume: the search settings are the ones saved in the folder"
            )));
        }
        Ok(())
    }

    /// The settings the flags describe; `link_bps` is the campaign's link
    /// speed (the line rate is then the maximum load).
    pub fn settings(&self, link_bps: Option<f64>) -> Result<MlrSettings, SearchError> {
        let tests = self.tests();
        let latency = tests.contains(&"latency");
        let back_to_back = tests.contains(&"back-to-back");
        Ok(MlrSettings {
            // Latency and back-to-back need the throughput.
            throughput: tests.contains(&"throughput") || latency || back_to_back,
            frame_loss: tests.contains(&"frame-loss"),
            latency,
            back_to_back,
            goals: self.goals()?,
            max: self.max_load(link_bps)?,
            min_fraction: MIN_FRACTION,
            latency_loads: match &self.latency_loads {
                Some(t) => latency_loads(t)?,
                None => latency::DEFAULT_LOADS.to_vec(),
            },
            latency_trials: self.latency_trials.unwrap_or(latency::DEFAULT_TRIALS),
            b2b_trials: self.b2b_trials.unwrap_or(DEFAULT_B2B_TRIALS),
            b2b_trial_s: seconds("--b2b-trial", &self.b2b_trial, DEFAULT_B2B_TRIAL_S)?,
            warmup_s: self.warmup()?,
        })
    }

    /// The goals, each with the width and trial durations asked for.
    fn goals(&self) -> Result<Vec<Goal>, SearchError> {
        let mut goals: Vec<Goal> = if self.goals.is_empty() {
            goal::DEFAULT_GOALS
                .iter()
                .map(|&(l, e)| Goal::new(l, e))
                .collect()
        } else {
            self.goals
                .iter()
                .map(|g| Goal::parse(g))
                .collect::<Result<_, _>>()?
        };
        let width = self.width()?;
        let strict_final = if self.strict {
            60.0
        } else {
            goal::DEFAULT_FINAL_TRIAL
        };
        let initial = seconds(
            "--initial-trial",
            &self.initial_trial,
            goal::DEFAULT_INITIAL_TRIAL,
        )?;
        let final_trial = seconds("--final-trial", &self.final_trial, strict_final)?;
        let default_sum = if self.strict {
            final_trial
        } else {
            goal::DEFAULT_DURATION_SUM
        };
        let sum = seconds(
            "--duration-sum",
            &self.duration_sum,
            default_sum.max(final_trial),
        )?;
        for g in goals.iter_mut() {
            g.width = width;
            g.initial_trial_duration = initial;
            g.final_trial_duration = final_trial;
            g.duration_sum = sum;
            if let Some(p) = self.preceding_targets {
                g.preceding_targets = p;
            }
            if self.strict {
                g.exceed_ratio = 0.0;
            }
            g.check().map_err(|e| usage(e.to_string()))?;
        }
        Ok(goals)
    }

    fn width(&self) -> Result<f64, SearchError> {
        let Some(t) = &self.width else {
            return Ok(goal::DEFAULT_WIDTH);
        };
        let v: f64 = t
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0 && *v < 100.0)
            .ok_or_else(|| {
                usage(format!(
                    "invalid width '{t}': use a percentage above 0 and below 100, such as 0.5"
                ))
            })?;
        Ok(v / 100.0)
    }

    fn max_load(&self, link_bps: Option<f64>) -> Result<MaxLoad, SearchError> {
        Ok(match &self.max_rate {
            Some(t) => match units::parse_rate(t).map_err(|e| usage(e.to_string()))? {
                Rate::Pps(p) => MaxLoad::Pps(p),
                _ => {
                    return Err(usage(format!(
                        "invalid --max-rate '{t}': give frames per second, such as 1.5M (or use --link-speed)"
                    )))
                }
            },
            None => match link_bps {
                Some(bps) => MaxLoad::LinkBps(bps),
                None => MaxLoad::Calibrate,
            },
        })
    }

    fn warmup(&self) -> Result<f64, SearchError> {
        Ok(match &self.trial_warmup {
            None => 0.0,
            Some(t) => units::parse_duration(t)
                .map_err(|_| {
                    usage(format!(
                        "invalid --trial-warmup '{t}': use a duration such as 0s, 500ms or 1s"
                    ))
                })?
                .as_secs_f64(),
        })
    }
}
