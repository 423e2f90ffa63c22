//! A series of trials of one traffic on one lab, and its summary.

use pktlab_engine::StopSignal;
use pktlab_lab::BuiltinLab;
use pktlab_stats::Summary;

use crate::traffic::Traffic;
use crate::trial::{run_trial, TrialEvent, TrialResult, TrialSettings};
use crate::BenchError;

/// What a series did: every finished trial, and the summary of their values.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SeriesResult {
    pub traffic: Traffic,
    pub settings: TrialSettings,
    pub trials: Vec<TrialResult>,
    /// Descriptive statistics of the forwarded pps of the trials.
    pub forwarded: Option<Summary>,
    /// The same for the offered load.
    pub offered: Option<Summary>,
    /// The series was cut short by Ctrl-C.
    pub interrupted: bool,
}

/// Progress of a series.
#[derive(Debug)]
pub enum SeriesEvent<'a> {
    TrialStarting {
        iteration: usize,
        of: usize,
    },
    Trial(TrialEvent),
    TrialDone {
        iteration: usize,
        result: &'a TrialResult,
    },
}

/// Runs `iterations` trials. Ctrl-C ends the series after keeping every
/// trial already finished; a trial in progress when it came is dropped.
pub fn run_series(
    lab: &BuiltinLab,
    traffic: &Traffic,
    settings: &TrialSettings,
    iterations: usize,
    stop: &StopSignal,
    mut on_event: impl FnMut(SeriesEvent<'_>),
) -> Result<SeriesResult, BenchError> {
    if iterations == 0 {
        return Err(BenchError::Usage(
            "invalid iteration count 0: use at least 1".into(),
        ));
    }
    let mut trials = Vec::with_capacity(iterations);
    for i in 1..=iterations {
        if stop.is_set() {
            break;
        }
        on_event(SeriesEvent::TrialStarting {
            iteration: i,
            of: iterations,
        });
        let result = run_trial(lab, traffic, settings, stop, |e| {
            on_event(SeriesEvent::Trial(e))
        });
        if stop.is_set() {
            break; // Interrupted mid-trial: its figures are partial.
        }
        let result = result?;
        on_event(SeriesEvent::TrialDone {
            iteration: i,
            result: &result,
        });
        trials.push(result);
    }
    let forwarded: Vec<f64> = trials.iter().map(|t| t.forwarded_pps).collect();
    let offered: Vec<f64> = trials.iter().map(|t| t.offered_pps).collect();
    Ok(SeriesResult {
        traffic: traffic.clone(),
        settings: settings.clone(),
        forwarded: pktlab_stats::summarize(&forwarded),
        offered: pktlab_stats::summarize(&offered),
        interrupted: stop.is_set(),
        trials,
    })
}
