//! Which trial one search asks for next, given the trials recorded for it:
//! the calibration (when the maximum load is measured), the throughput
//! search's trials, the frame loss rate test's, the latency test's and the
//! back-to-back bursts, in that order. A search is finished when it asks
//! for none; a resumed one is fed what it recorded and asks for the rest,
//! so no trial runs twice.

use super::back_to_back::{self, BurstSearch};
use super::frame_loss;
use super::latency;
use super::record::{
    GoalClass, TrialLine, BACK_TO_BACK, CALIBRATION, FRAME_LOSS, LATENCY, THROUGHPUT,
};
use super::settings::MlrSettings;
use crate::{Search, SearchError};

/// What a trial is for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// As fast as the generator can: the maximum load.
    Calibration,
    Throughput,
    FrameLoss,
    /// The `repetition`th trial at `fraction` of the PDR.
    Latency {
        fraction: f64,
        repetition: usize,
    },
    /// A burst of `frames` at the maximum load, in the `repetition`th
    /// search for the longest burst without loss.
    Burst {
        frames: u64,
        repetition: usize,
    },
}

impl Step {
    /// The `test` of its line in `trials.jsonl`.
    pub fn test(&self) -> &'static str {
        match self {
            Step::Calibration => CALIBRATION,
            Step::Throughput => THROUGHPUT,
            Step::FrameLoss => FRAME_LOSS,
            Step::Latency { .. } => LATENCY,
            Step::Burst { .. } => BACK_TO_BACK,
        }
    }
}

/// One trial a search asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Request {
    pub step: Step,
    /// The load asked for (None: as fast as the generator can).
    pub load: Option<f64>,
    /// How long the trial lasts.
    pub secs: f64,
}

/// One search's trials so far, and what they decided.
pub struct SearchRun<'s> {
    settings: &'s MlrSettings,
    /// None until the calibration ran, when it must.
    max_pps: Option<f64>,
    /// The throughput search, once the maximum load is known.
    search: Option<Search>,
    /// Its trials, in the order run.
    lines: Vec<TrialLine>,
}

impl<'s> SearchRun<'s> {
    /// The search of frames of `sizes` that recorded `lines` (its own, in
    /// the order run).
    pub fn replay(
        settings: &'s MlrSettings,
        sizes: &str,
        lines: Vec<TrialLine>,
    ) -> Result<SearchRun<'s>, SearchError> {
        let fixed = settings
            .fixed_max(sizes)
            .map_err(|e| SearchError(e.to_string()))?;
        let mut run = SearchRun {
            settings,
            max_pps: None,
            search: None,
            lines: Vec::new(),
        };
        if let Some(max) = fixed {
            run.set_max(max)?;
        }
        for line in lines {
            run.add(line)?;
        }
        Ok(run)
    }

    /// The maximum load, once known.
    pub fn max_pps(&self) -> Option<f64> {
        self.max_pps
    }

    fn set_max(&mut self, max: f64) -> Result<(), SearchError> {
        if max.is_nan() || max <= 0.0 {
            return Err(SearchError(
                "the calibration sent nothing: the generator cannot reach the lab".into(),
            ));
        }
        self.max_pps = Some(max);
        self.search = Some(Search::new(self.settings.config(max))?);
        Ok(())
    }

    /// Takes a finished trial's line (a throughput trial's gets its goals'
    /// classes here) and returns it as recorded.
    pub fn add(&mut self, mut line: TrialLine) -> Result<&TrialLine, SearchError> {
        if line.test == CALIBRATION && self.max_pps.is_none() {
            self.set_max(line.offered_pps)?;
            line.max_pps = line.offered_pps;
        }
        if let (true, Some(search)) = (line.test == THROUGHPUT, self.search.as_mut()) {
            if let Some(m) = line.measurement() {
                search.add(m);
                if line.classes.is_empty() {
                    line.classes = goal_classes(search, self.settings, m.intended_pps);
                }
            }
        }
        self.lines.push(line);
        Ok(self.lines.last().expect("just pushed"))
    }

    /// The next trial, or None when the search is over.
    pub fn next(&self) -> Option<Request> {
        let s = self.settings;
        let Some(max) = self.max_pps else {
            return Some(Request {
                step: Step::Calibration,
                load: None,
                secs: s.goals[0].initial_trial_duration,
            });
        };
        let search = self.search.as_ref().expect("made with the maximum");
        let searched = s.throughput.then(|| search.next_trial()).flatten();
        if let Some(req) = searched {
            return Some(Request {
                step: Step::Throughput,
                load: Some(req.load),
                secs: req.duration_s,
            });
        }
        self.next_frame_loss(max)
            .or_else(|| self.next_latency(search, max))
            .or_else(|| self.next_burst(max))
    }

    fn final_trial(&self, step: Step, load: f64) -> Request {
        Request {
            step,
            load: Some(load),
            secs: self.settings.goals[0].final_trial_duration,
        }
    }

    fn next_frame_loss(&self, max: f64) -> Option<Request> {
        if !self.settings.frame_loss {
            return None;
        }
        let lost: Vec<u64> = self
            .of_test(FRAME_LOSS)
            .map(|l| l.lost)
            .collect::<Vec<u64>>();
        let load = frame_loss::next_load(max, &lost)?;
        Some(self.final_trial(Step::FrameLoss, load))
    }

    /// At fractions of the PDR: the goal that allows the most loss.
    fn next_latency(&self, search: &Search, max: f64) -> Option<Request> {
        let s = self.settings;
        if !s.latency {
            return None;
        }
        let results = search.results();
        let pdr = results
            .iter()
            .max_by(|a, b| a.goal.loss_ratio.total_cmp(&b.goal.loss_ratio))
            .and_then(|r| r.lower.map(|b| b.pps))?;
        let min_pps = max * s.min_fraction;
        for &fraction in &s.latency_loads {
            for repetition in 1..=s.latency_trials {
                let done = self
                    .of_test(LATENCY)
                    .any(|l| l.load_fraction == Some(fraction) && l.repetition == Some(repetition));
                if !done {
                    let load = latency::load(fraction, pdr, min_pps);
                    let step = Step::Latency {
                        fraction,
                        repetition,
                    };
                    return Some(self.final_trial(step, load));
                }
            }
        }
        None
    }

    fn next_burst(&self, max: f64) -> Option<Request> {
        let s = self.settings;
        if !s.back_to_back {
            return None;
        }
        let max_frames = back_to_back::max_frames(max, s.b2b_trial_s);
        for repetition in 1..=s.b2b_trials {
            let mut burst = BurstSearch::new(max_frames, s.goals[0].width);
            for l in self
                .of_test(BACK_TO_BACK)
                .filter(|l| l.repetition == Some(repetition))
            {
                burst.add(l.burst.unwrap_or(l.tx), l.lost);
            }
            if let Some(frames) = burst.next() {
                return Some(Request {
                    step: Step::Burst { frames, repetition },
                    load: Some(max),
                    secs: s.b2b_trial_s,
                });
            }
        }
        None
    }

    fn of_test<'a>(&'a self, test: &'a str) -> impl Iterator<Item = &'a TrialLine> {
        self.lines.iter().filter(move |l| l.test == test)
    }
}

/// Each goal's class of `load` after the trials so far.
fn goal_classes(search: &Search, settings: &MlrSettings, load: f64) -> Vec<GoalClass> {
    settings
        .goals
        .iter()
        .enumerate()
        .map(|(i, g)| GoalClass {
            loss_ratio: g.loss_ratio,
            exceed_ratio: g.exceed_ratio,
            class: search.classify(load, i),
        })
        .collect()
}
