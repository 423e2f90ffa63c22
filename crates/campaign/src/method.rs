//! How a run gets its value from trials: one trial at the profile's rate
//! (BSDRP's bench-lab, [`FixedRate`]), or a search (RFC 2544 throughput,
//! FD.io CSIT's MLRsearch) that asks for trials at the rates it chooses.
//!
//! The campaign runner drives a [`Method`] and never runs a trial itself.
//! Every trial a method runs goes to `record` as soon as it finishes, so
//! that Ctrl-C keeps it and a resumed campaign can find it.

use crate::CampaignError;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{TrialEvent, TrialResult, Trials};

/// A finished trial of a run, handed to the recorder.
#[derive(Clone, Copy, Debug)]
pub struct TrialDone<'a> {
    /// 1 for the run's first trial.
    pub index: usize,
    pub result: &'a TrialResult,
}

/// Where a method's finished trials go.
pub type Recorder<'r> = dyn FnMut(TrialDone<'_>) -> Result<(), CampaignError> + 'r;

/// How one run of a traffic profile is measured.
pub trait Method {
    /// `fixed-rate`, ...
    fn name(&self) -> &'static str;

    /// True when each trial gets a file of its own under `trials/`; false
    /// when a run has one trial, which its run file already holds.
    fn keeps_trial_files(&self) -> bool {
        true
    }

    /// Told which run comes next, before its [`Method::run`]: a method that
    /// keeps its own records (a search's trials) names them by it.
    fn begin_run(&self, _config: &str, _traffic: &str, _iteration: usize) {}

    /// Runs the trials of one run of `traffic`, handing each to `record` as
    /// it finishes. Returns the trial that gives the run its value, or None
    /// when Ctrl-C (`trials.stop`) cut the run short (a trial cut short is
    /// neither recorded nor returned).
    fn run(
        &self,
        trials: &Trials<'_>,
        traffic: &Traffic,
        record: &mut Recorder<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<TrialResult>, CampaignError>;
}

/// One trial at the traffic profile's own rate; its value is the run's.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedRate;

impl Method for FixedRate {
    fn name(&self) -> &'static str {
        "fixed-rate"
    }

    fn keeps_trial_files(&self) -> bool {
        false
    }

    fn run(
        &self,
        trials: &Trials<'_>,
        traffic: &Traffic,
        record: &mut Recorder<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<TrialResult>, CampaignError> {
        let trial = trials.run(traffic, traffic.rate_pps, on_event);
        if trials.stop.is_set() {
            return Ok(None); // Cut short: its figures are partial.
        }
        let trial = trial?;
        record(TrialDone {
            index: 1,
            result: &trial,
        })?;
        Ok(Some(trial))
    }
}
