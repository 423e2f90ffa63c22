//! The `Mlr` method: one run of a campaign is one throughput search
//! ([`crate::search`]) of one configuration and traffic profile. Every
//! trial goes to `trials.jsonl` ([`record`]) and to the campaign's
//! `trials/` folder as it finishes; a resumed search is first fed the
//! trials recorded for it, so none runs twice.

pub mod back_to_back;
pub mod frame_loss;
pub mod latency;
pub mod record;
pub mod summary;

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pktlab_wire::rate::line_rate_pps_mean;
use pktlab_wire::size::SizeMix;

use crate::{Goal, Search, SearchConfig};
use pktlab_campaign::method::{Method, Recorder, TrialDone};
use pktlab_campaign::results::unix_now;
use pktlab_campaign::CampaignError;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{Shape, TrialEvent, TrialResult, TrialSettings, Trials};
use record::{GoalClass, TrialLine};

/// The settings file of an rfc2544 results folder.
pub const SETTINGS_FILE: &str = "rfc2544-settings.json";

/// Where the search's maximum load comes from.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxLoad {
    /// `--max-rate`, in frames per second.
    Pps(f64),
    /// `--link-speed`: the line rate of each size, in bits per second.
    LinkBps(f64),
    /// Neither: a first trial as fast as the generator can goes measures it.
    Calibrate,
}

/// What every search of an rfc2544 run uses (saved in the folder, so
/// that `--resume` goes on with the same).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MlrSettings {
    /// Run the throughput search.
    #[serde(default = "yes")]
    pub throughput: bool,
    /// Run RFC 2544's frame loss rate test after it.
    #[serde(default)]
    pub frame_loss: bool,
    /// Measure latency at fractions of the PDR after the search.
    #[serde(default)]
    pub latency: bool,
    /// Run the back-to-back frames test after the search.
    #[serde(default)]
    pub back_to_back: bool,
    pub goals: Vec<Goal>,
    pub max: MaxLoad,
    /// The lowest load as a fraction of the maximum.
    pub min_fraction: f64,
    /// The latency test's loads, as fractions of the PDR.
    #[serde(default = "latency_loads")]
    pub latency_loads: Vec<f64>,
    /// Latency trials per load.
    #[serde(default = "latency_trials")]
    pub latency_trials: usize,
    /// Back-to-back searches (the RFCs' trials), averaged.
    #[serde(default = "b2b_trials")]
    pub b2b_trials: usize,
    /// How long each back-to-back burst's trial lasts, idle time included.
    #[serde(default = "b2b_trial_s")]
    pub b2b_trial_s: f64,
    /// Seconds of traffic before each trial whose frames are not counted
    /// (not before a back-to-back burst, which must meet an idle DUT).
    #[serde(default)]
    pub warmup_s: f64,
}

fn yes() -> bool {
    true
}

fn latency_loads() -> Vec<f64> {
    latency::DEFAULT_LOADS.to_vec()
}

fn latency_trials() -> usize {
    latency::DEFAULT_TRIALS
}

/// RFC 2544 section 26.4: at least 50 trials of at least 2 seconds.
pub const DEFAULT_B2B_TRIALS: usize = 50;
pub const DEFAULT_B2B_TRIAL_S: f64 = 2.0;

fn b2b_trials() -> usize {
    DEFAULT_B2B_TRIALS
}

fn b2b_trial_s() -> f64 {
    DEFAULT_B2B_TRIAL_S
}

/// How long a trial's receiver goes on counting after the drain, to see
/// late frames.
pub const LATE_WINDOW: Duration = Duration::from_millis(250);

/// The lowest load tried: a thousandth of the maximum.
pub const MIN_FRACTION: f64 = 0.001;

impl MlrSettings {
    /// The search's loads for `traffic`, given the calibrated rate (if any).
    pub fn config(&self, max_pps: f64) -> SearchConfig {
        SearchConfig::new(self.goals.clone(), max_pps * self.min_fraction, max_pps)
    }

    /// The maximum load for frames of `sizes`, unless it must be calibrated.
    pub fn fixed_max(&self, sizes: &str) -> Result<Option<f64>, CampaignError> {
        Ok(match self.max {
            MaxLoad::Pps(p) => Some(p),
            MaxLoad::LinkBps(bps) => {
                let mix: SizeMix = sizes.parse()?;
                Some(line_rate_pps_mean(bps, mix.mean()))
            }
            MaxLoad::Calibrate => None,
        })
    }
}

/// The throughput search as a campaign method.
pub struct Mlr {
    pub settings: MlrSettings,
    /// The results folder, where `trials.jsonl` lives.
    pub dir: PathBuf,
    run: RefCell<Option<(String, String, usize)>>,
}

/// Search trials are valued by their whole-trial counts; their receiver
/// reports often enough that even a 1 s trial has samples.
const INTERVAL: Duration = Duration::from_millis(100);

impl Mlr {
    pub fn new(settings: MlrSettings, dir: PathBuf) -> Mlr {
        Mlr {
            settings,
            dir,
            run: RefCell::new(None),
        }
    }
}

/// What a finished trial says, as a line (classes are added after).
fn line_of(
    run: &(String, String, usize),
    traffic: &Traffic,
    test: &str,
    duration_s: f64,
    max_pps: f64,
    t: &TrialResult,
    started_at: u64,
) -> TrialLine {
    let tx = t.tx.packets;
    // On time: late frames count as lost.
    let rx = (t.rx.packets - t.rx.foreign).saturating_sub(t.late.unwrap_or(0));
    let offered = tx as f64 / duration_s;
    TrialLine {
        config: run.0.clone(),
        traffic: run.1.clone(),
        size: traffic.sizes.clone(),
        test: test.into(),
        iteration: run.2,
        intended_pps: t.intended_pps,
        offered_pps: offered,
        duration_s,
        tx,
        rx,
        lost: tx.saturating_sub(rx),
        late: t.late,
        loss_ratio: if tx > 0 {
            tx.saturating_sub(rx) as f64 / tx as f64
        } else {
            0.0
        },
        generator_limited: t
            .intended_pps
            .is_some_and(|i| offered < i * (1.0 - crate::state::GENERATOR_TOLERANCE)),
        max_pps,
        classes: Vec::new(),
        started_at,
        burst: None,
        repetition: None,
        load_fraction: None,
        latency_ns: None,
        drops: Some(t.drops.clone()),
        latency_note: t.latency_note.clone(),
    }
}

impl Method for Mlr {
    fn name(&self) -> &'static str {
        "mlrsearch"
    }

    fn begin_run(&self, config: &str, traffic: &str, iteration: usize) {
        *self.run.borrow_mut() = Some((config.into(), traffic.into(), iteration));
    }

    fn run(
        &self,
        trials: &Trials<'_>,
        traffic: &Traffic,
        record: &mut Recorder<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<TrialResult>, CampaignError> {
        let run = self
            .run
            .borrow()
            .clone()
            .ok_or_else(|| CampaignError::Failed("a search started without its run".into()))?;
        let recorded: Vec<TrialLine> = record::read(&self.dir)?
            .into_iter()
            .filter(|l| l.of_run(&run.0, &run.1, run.2))
            .collect();
        let mut index = recorded.len();
        let initial = self.settings.goals[0].initial_trial_duration;
        let shaped =
            |rate: Option<f64>, secs: f64, shape: Shape, on_event: &mut dyn FnMut(TrialEvent)| {
                let settings = TrialSettings {
                    duration: Duration::from_secs_f64(secs),
                    trim_head: 0,
                    trim_tail: 0,
                    interval: INTERVAL,
                };
                let t = Trials {
                    settings: &settings,
                    ..*trials
                };
                let started = unix_now();
                let r = t.run_shaped(traffic, rate, shape, on_event);
                (r, started)
            };
        let plain = Shape {
            count: None,
            warmup: Duration::from_secs_f64(self.settings.warmup_s),
            late_window: Some(LATE_WINDOW),
        };
        let one = |rate: Option<f64>, secs: f64, on_event: &mut dyn FnMut(TrialEvent)| {
            shaped(rate, secs, plain, on_event)
        };

        // The maximum load: given, or what the generator reaches alone.
        let max_pps = match self.settings.fixed_max(&traffic.sizes)? {
            Some(m) => m,
            None => match recorded.iter().find(|l| l.test == record::CALIBRATION) {
                Some(l) => l.offered_pps,
                None => {
                    let (r, started) = one(None, initial, on_event);
                    if trials.stop.is_set() {
                        return Ok(None);
                    }
                    let r = r?;
                    let line = line_of(
                        &run,
                        traffic,
                        record::CALIBRATION,
                        initial,
                        0.0,
                        &r,
                        started,
                    );
                    let max = line.offered_pps;
                    record::append(
                        &self.dir,
                        &TrialLine {
                            max_pps: max,
                            ..line
                        },
                    )?;
                    index += 1;
                    record(TrialDone { index, result: &r })?;
                    max
                }
            },
        };
        if max_pps.is_nan() || max_pps <= 0.0 {
            return Err(CampaignError::Failed(
                "the calibration sent nothing: the generator cannot reach the lab".into(),
            ));
        }
        let mut search = Search::new(self.settings.config(max_pps))?;
        let searching = self.settings.throughput;
        for m in recorded
            .iter()
            .filter(|l| l.test == record::THROUGHPUT)
            .filter_map(TrialLine::measurement)
        {
            search.add(m);
        }
        let mut last: Option<TrialResult> = None;
        while let Some(req) = search.next_trial().filter(|_| searching) {
            let (r, started) = one(Some(req.load), req.duration_s, on_event);
            if trials.stop.is_set() {
                return Ok(None); // Cut short: not a trial.
            }
            let r = r?;
            let mut line = line_of(
                &run,
                traffic,
                record::THROUGHPUT,
                req.duration_s,
                max_pps,
                &r,
                started,
            );
            let m = line.measurement().expect("a search trial has a load");
            search.add(m);
            line.classes = goal_classes(&search, &self.settings.goals, req.load);
            record::append(&self.dir, &line)?;
            index += 1;
            record(TrialDone { index, result: &r })?;
            last = Some(r);
        }
        if self.settings.frame_loss {
            let secs = self.settings.goals[0].final_trial_duration;
            let mut lost: Vec<u64> = recorded
                .iter()
                .filter(|l| l.test == record::FRAME_LOSS)
                .map(|l| l.lost)
                .collect();
            while let Some(load) = frame_loss::next_load(max_pps, &lost) {
                let (r, started) = one(Some(load), secs, on_event);
                if trials.stop.is_set() {
                    return Ok(None);
                }
                let r = r?;
                let line = line_of(
                    &run,
                    traffic,
                    record::FRAME_LOSS,
                    secs,
                    max_pps,
                    &r,
                    started,
                );
                record::append(&self.dir, &line)?;
                lost.push(line.lost);
                index += 1;
                record(TrialDone { index, result: &r })?;
                last = Some(r);
            }
        }
        if self.settings.latency {
            // At fractions of the PDR: the goal that allows the most loss.
            let results = search.results();
            let pdr = results
                .iter()
                .max_by(|a, b| a.goal.loss_ratio.total_cmp(&b.goal.loss_ratio))
                .and_then(|r| r.lower.map(|b| b.pps));
            let secs = self.settings.goals[0].final_trial_duration;
            let min_pps = max_pps * self.settings.min_fraction;
            for &fraction in pdr.map_or(&[][..], |_| &self.settings.latency_loads[..]) {
                let load = latency::load(fraction, pdr.unwrap_or(0.0), min_pps);
                for rep in 1..=self.settings.latency_trials {
                    let done = recorded.iter().any(|l| {
                        l.test == record::LATENCY
                            && l.load_fraction == Some(fraction)
                            && l.repetition == Some(rep)
                    });
                    if done {
                        continue;
                    }
                    let (r, started) = one(Some(load), secs, on_event);
                    if trials.stop.is_set() {
                        return Ok(None);
                    }
                    let r = r?;
                    let line = TrialLine {
                        load_fraction: Some(fraction),
                        repetition: Some(rep),
                        latency_ns: r.rx.latency_ns,
                        ..line_of(&run, traffic, record::LATENCY, secs, max_pps, &r, started)
                    };
                    // The histogram first: a trial line always has one.
                    latency::append(
                        &self.dir,
                        &latency::HistogramLine {
                            config: run.0.clone(),
                            traffic: run.1.clone(),
                            size: traffic.sizes.clone(),
                            iteration: run.2,
                            load_fraction: fraction,
                            intended_pps: load,
                            repetition: rep,
                            significant_digits: latency::SIGNIFICANT_DIGITS,
                            buckets: r.rx.latency_buckets.clone(),
                        },
                    )?;
                    record::append(&self.dir, &line)?;
                    index += 1;
                    record(TrialDone { index, result: &r })?;
                }
            }
        }
        if self.settings.back_to_back {
            let b2b_secs = self.settings.b2b_trial_s;
            let max_frames = back_to_back::max_frames(max_pps, b2b_secs);
            let width = self.settings.goals[0].width;
            for rep in 1..=self.settings.b2b_trials {
                let mut burst = back_to_back::BurstSearch::new(max_frames, width);
                for l in recorded
                    .iter()
                    .filter(|l| l.test == record::BACK_TO_BACK && l.repetition == Some(rep))
                {
                    burst.add(l.burst.unwrap_or(l.tx), l.lost);
                }
                while let Some(frames) = burst.next() {
                    let began = Instant::now();
                    let shape = Shape {
                        count: Some(frames),
                        warmup: Duration::ZERO,
                        late_window: Some(LATE_WINDOW),
                    };
                    let (r, started) = shaped(Some(max_pps), b2b_secs, shape, on_event);
                    if trials.stop.is_set() {
                        return Ok(None);
                    }
                    let r = r?;
                    let line = back_to_back::line(
                        line_of(
                            &run,
                            traffic,
                            record::BACK_TO_BACK,
                            1.0,
                            max_pps,
                            &r,
                            started,
                        ),
                        frames,
                        rep,
                        &r.tx,
                    );
                    burst.add(frames, line.lost);
                    record::append(&self.dir, &line)?;
                    index += 1;
                    record(TrialDone { index, result: &r })?;
                    // The rest of the trial idle: the DUT's buffers empty
                    // (and a policer's bucket fills) before the next burst.
                    let rest = Duration::from_secs_f64(b2b_secs).saturating_sub(began.elapsed());
                    let until = Instant::now() + rest;
                    while Instant::now() < until && !trials.stop.is_set() {
                        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
                    }
                    if trials.stop.is_set() {
                        return Ok(None);
                    }
                }
            }
        }
        // The run's value for the campaign's files: a trial at the first
        // goal's lower bound.
        let ndr = search.results()[0].lower.map(|b| b.intended_pps);
        if let Some(t) = last {
            return Ok(Some(t));
        }
        // Every trial was recorded before an interruption: one more at the
        // lower bound (or the minimum load), kept apart from the search.
        let load = ndr.unwrap_or(max_pps * self.settings.min_fraction);
        let secs = self.settings.goals[0].final_trial_duration;
        let (r, started) = one(Some(load), secs, on_event);
        if trials.stop.is_set() {
            return Ok(None);
        }
        let r = r?;
        let line = line_of(
            &run,
            traffic,
            record::CONFIRMATION,
            secs,
            max_pps,
            &r,
            started,
        );
        record::append(&self.dir, &line)?;
        index += 1;
        record(TrialDone { index, result: &r })?;
        Ok(Some(r))
    }
}

fn goal_classes(search: &Search, goals: &[Goal], load: f64) -> Vec<GoalClass> {
    goals
        .iter()
        .enumerate()
        .map(|(i, g)| GoalClass {
            loss_ratio: g.loss_ratio,
            exceed_ratio: g.exceed_ratio,
            class: search.classify(load, i),
        })
        .collect()
}
