//! The `Mlr` method: one run of a campaign is one throughput search
//! ([`crate::search`]) of one configuration and traffic profile. Every
//! trial goes to `trials.jsonl` ([`record`]) and to the campaign's
//! `trials/` folder as it finishes; a resumed search is first fed the
//! trials recorded for it, so none runs twice.

pub mod frame_loss;
pub mod record;
pub mod summary;

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use pktlab_wire::rate::line_rate_pps_mean;
use pktlab_wire::size::SizeMix;

use crate::campaign::results::unix_now;
use crate::method::{Method, Recorder, TrialDone};
use crate::search::{Goal, Search, SearchConfig};
use crate::traffic::Traffic;
use crate::trial::{TrialEvent, TrialResult, TrialSettings, Trials};
use crate::BenchError;
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
    pub goals: Vec<Goal>,
    pub max: MaxLoad,
    /// The lowest load as a fraction of the maximum.
    pub min_fraction: f64,
}

fn yes() -> bool {
    true
}

/// The lowest load tried: a thousandth of the maximum.
pub const MIN_FRACTION: f64 = 0.001;

impl MlrSettings {
    /// The search's loads for `traffic`, given the calibrated rate (if any).
    pub fn config(&self, max_pps: f64) -> SearchConfig {
        SearchConfig::new(self.goals.clone(), max_pps * self.min_fraction, max_pps)
    }

    /// The maximum load for frames of `sizes`, unless it must be calibrated.
    pub fn fixed_max(&self, sizes: &str) -> Result<Option<f64>, BenchError> {
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
    let rx = t.rx.packets - t.rx.foreign;
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
        late: None,
        loss_ratio: if tx > 0 {
            tx.saturating_sub(rx) as f64 / tx as f64
        } else {
            0.0
        },
        generator_limited: t
            .intended_pps
            .is_some_and(|i| offered < i * (1.0 - crate::search::state::GENERATOR_TOLERANCE)),
        max_pps,
        classes: Vec::new(),
        started_at,
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
    ) -> Result<Option<TrialResult>, BenchError> {
        let run = self
            .run
            .borrow()
            .clone()
            .ok_or_else(|| BenchError::Trial("a search started without its run".into()))?;
        let recorded: Vec<TrialLine> = record::read(&self.dir)?
            .into_iter()
            .filter(|l| l.of_run(&run.0, &run.1, run.2))
            .collect();
        let mut index = recorded.len();
        let initial = self.settings.goals[0].initial_trial_duration;
        let one = |rate: Option<f64>, secs: f64, on_event: &mut dyn FnMut(TrialEvent)| {
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
            let r = t.run(traffic, rate, on_event);
            (r, started)
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
            return Err(BenchError::Trial(
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
