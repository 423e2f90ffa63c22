//! The `Mlr` method: one run of a campaign is one search of one
//! configuration and traffic profile ([`super::steps`]): the throughput
//! search ([`crate::Search`]) and the RFC 2544 tests after it. Every trial
//! goes to `trials.jsonl` ([`super::record`]) as it finishes, a latency
//! trial's histogram to `latency-histograms.jsonl`; every finished search
//! rewrites `rfc2544.json` ([`super::summary`]).

use std::time::{Duration, Instant};

use pktlab_campaign::folder::{unix_now, ResultsDir};
use pktlab_campaign::method::{Method, RunContext, RunId};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::CampaignError;
use pktlab_trial::trial::{
    Shape, TrialEvent, TrialResult, TrialSettings, Trials, GENERATOR_TOLERANCE,
};

use super::back_to_back;
use super::latency::{self, HistogramLine};
use super::record::{self, DirectionLine, TrialLine};
use super::results::Searches;
use super::settings::MlrSettings;
use super::steps::{Request, SearchRun, Step};
use super::summary::Report;

/// How long a trial's receiver goes on counting after the drain, to see
/// late frames.
pub const LATE_WINDOW: Duration = Duration::from_millis(250);

/// Search trials are valued by their whole-trial counts; their receiver
/// reports often enough that even a 1 s trial has samples.
const INTERVAL: Duration = Duration::from_millis(100);

/// The throughput search and RFC 2544's tests as a campaign method.
pub struct Mlr {
    results: Searches,
    /// The results of the search finished last.
    done: Report,
}

impl Mlr {
    pub fn new(settings: MlrSettings) -> Mlr {
        Mlr {
            results: Searches::new(settings),
            done: Report::default(),
        }
    }

    fn settings(&self) -> &MlrSettings {
        &self.results.settings
    }

    /// `run`'s search, fed the trials it recorded.
    fn replay(&self, run: &RunId<'_>) -> Result<SearchRun<'_>, CampaignError> {
        let lines = self
            .results
            .trials_of(&run.config.name, &run.traffic.name, run.key.iteration);
        Ok(SearchRun::replay(
            self.settings(),
            &run.traffic.sizes,
            lines,
        )?)
    }

    /// Runs the trial `req` asks for.
    fn trial(
        &self,
        req: &Request,
        trials: &Trials<'_>,
        run: &RunId<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<TrialResult, CampaignError> {
        let settings = TrialSettings {
            duration: Duration::from_secs_f64(req.secs),
            trim_head: 0,
            trim_tail: 0,
            interval: INTERVAL,
        };
        let t = Trials {
            settings: &settings,
            ..*trials
        };
        let shape = match req.step {
            // A burst must meet an idle DUT: no warm-up before it.
            Step::Burst { frames, .. } => Shape {
                count: Some(frames),
                warmup: Duration::ZERO,
                late_window: Some(LATE_WINDOW),
            },
            _ => Shape {
                count: None,
                warmup: Duration::from_secs_f64(self.settings().warmup_s),
                late_window: Some(LATE_WINDOW),
            },
        };
        Ok(t.run_shaped(run.traffic, req.load, shape, on_event)?)
    }

    /// The line of a finished trial (a throughput trial's classes are
    /// added when the search takes it).
    fn line(
        &self,
        req: &Request,
        run: &RunId<'_>,
        max_pps: f64,
        r: &TrialResult,
        started_at: u64,
    ) -> TrialLine {
        let base = |duration_s| line_of(run, req.step.test(), duration_s, max_pps, r, started_at);
        match req.step {
            Step::Latency {
                fraction,
                repetition,
            } => TrialLine {
                load_fraction: Some(fraction),
                repetition: Some(repetition),
                latency_ns: r.rx.latency_ns,
                ..base(req.secs)
            },
            Step::Burst { frames, repetition } => {
                let ways = r.directions.len().max(1) as u64;
                back_to_back::line(base(1.0), frames, repetition, &r.tx, ways)
            }
            _ => base(req.secs),
        }
    }

    /// Records a latency trial's histogram (first: a trial line always
    /// has one).
    fn histogram(
        &mut self,
        folder: &ResultsDir,
        line: &TrialLine,
        r: &TrialResult,
    ) -> Result<(), CampaignError> {
        let (Some(fraction), Some(repetition), Some(load)) =
            (line.load_fraction, line.repetition, line.intended_pps)
        else {
            return Ok(());
        };
        let h = HistogramLine {
            config: line.config.clone(),
            traffic: line.traffic.clone(),
            size: line.size.clone(),
            iteration: line.iteration,
            load_fraction: fraction,
            intended_pps: load,
            repetition,
            significant_digits: latency::SIGNIFICANT_DIGITS,
            buckets: r.rx.latency_buckets.clone(),
        };
        latency::append(folder, &h)?;
        self.results.histograms.push(h);
        Ok(())
    }
}

/// What a finished trial says, as a line.
fn line_of(
    run: &RunId<'_>,
    test: &str,
    duration_s: f64,
    max_pps: f64,
    t: &TrialResult,
    started_at: u64,
) -> TrialLine {
    let tx = t.tx.packets;
    // On time: late frames count as lost.
    let rx = (t.rx.packets - t.rx.foreign).saturating_sub(t.late.unwrap_or(0));
    // The load of each direction, as the search asks for it (both ways,
    // each generator was asked for the trial's load).
    let ways = t.directions.len().max(1) as f64;
    let offered = tx as f64 / duration_s / ways;
    TrialLine {
        config: run.config.name.clone(),
        traffic: run.traffic.name.clone(),
        size: run.traffic.sizes.clone(),
        test: test.into(),
        iteration: run.key.iteration,
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
            .is_some_and(|i| offered < i * (1.0 - GENERATOR_TOLERANCE)),
        max_pps,
        classes: Vec::new(),
        started_at,
        burst: None,
        repetition: None,
        load_fraction: None,
        latency_ns: None,
        drops: Some(t.drops.clone()),
        latency_note: t.latency_note.clone(),
        directions: t.directions.iter().map(direction_line).collect(),
    }
}

/// One direction of a trial both ways, as its line keeps it.
fn direction_line(d: &pktlab_trial::direction::Direction) -> DirectionLine {
    let tx = d.tx.packets;
    let rx = (d.rx.packets - d.rx.foreign).saturating_sub(d.late.unwrap_or(0));
    DirectionLine {
        name: d.name.clone(),
        tx,
        rx,
        lost: tx.saturating_sub(rx),
        late: d.late,
        loss_ratio: if tx > 0 {
            tx.saturating_sub(rx) as f64 / tx as f64
        } else {
            0.0
        },
        drops: d.drops.clone(),
    }
}

/// Waits until `b2b_secs` have gone since `began`: the DUT's buffers empty
/// (and a policer's bucket fills) before the next burst. False when
/// Ctrl-C came first.
fn rest_after_burst(began: Instant, b2b_secs: f64, trials: &Trials<'_>) -> bool {
    let rest = Duration::from_secs_f64(b2b_secs).saturating_sub(began.elapsed());
    let until = Instant::now() + rest;
    while Instant::now() < until && !trials.stop.is_set() {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
    !trials.stop.is_set()
}

impl Method for Mlr {
    type Run = Report;
    type Results = Searches;

    fn name(&self) -> &'static str {
        "mlrsearch"
    }

    fn open(
        &mut self,
        plan: &Plan,
        folder: &ResultsDir,
        created: bool,
    ) -> Result<(), CampaignError> {
        self.results.knob_sweeps = plan.knob_sweeps.clone();
        if created {
            self.settings().write(folder)?;
        } else {
            self.results.read_trials(folder)?;
        }
        self.results.refresh()
    }

    fn is_finished(&self, run: &RunId<'_>) -> bool {
        self.replay(run).is_ok_and(|s| s.next().is_none())
    }

    fn run(
        &mut self,
        run: &RunId<'_>,
        cx: RunContext<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<&Report>, CampaignError> {
        let settings = self.settings().clone();
        let mut search = SearchRun::replay(&settings, &run.traffic.sizes, {
            self.results
                .trials_of(&run.config.name, &run.traffic.name, run.key.iteration)
        })?;
        while let Some(req) = search.next() {
            let began = Instant::now();
            let started = unix_now();
            let r = self.trial(&req, &cx.trials, run, on_event);
            if cx.trials.stop.is_set() {
                return Ok(None); // Cut short: not a trial.
            }
            let r = r?;
            let line = self.line(&req, run, search.max_pps().unwrap_or(0.0), &r, started);
            self.histogram(cx.folder, &line, &r)?;
            let line = search.add(line)?.clone();
            record::append(cx.folder, &line)?;
            self.results.trials.push(line);
            if matches!(req.step, Step::Burst { .. })
                && !rest_after_burst(began, settings.b2b_trial_s, &cx.trials)
            {
                return Ok(None);
            }
        }
        (cx.lab_whole)()?;
        self.results.refresh()?;
        self.results.report.write(cx.folder)?;
        self.done =
            self.results
                .report
                .of_search(&run.config.name, &run.traffic.name, run.key.iteration);
        Ok(Some(&self.done))
    }

    fn results(&self) -> &Searches {
        &self.results
    }
}
