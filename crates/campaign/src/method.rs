//! How a run gets its value from trials: one trial at the profile's rate
//! (BSDRP's bench-lab, [`crate::runs::FixedRate`]), or a search (RFC 2544
//! throughput, FD.io CSIT's MLRsearch, in `pktlab_search`) that asks for
//! trials at the rates it chooses.
//!
//! The campaign ([`crate::campaign::Campaign`]) drives a [`Method`] over
//! its order and never runs a trial itself. A method keeps its own files
//! in the results folder (written as its trials and runs finish, so that
//! Ctrl-C keeps them and `--resume` finds them) and its results in memory,
//! which the campaign hands to its sinks ([`crate::sink`]).

use pktlab_lab::dut::DutConfig;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{TrialEvent, Trials};

use crate::folder::ResultsDir;
use crate::order::RunKey;
use crate::plan::Plan;
use crate::records::RunHeader;
use crate::CampaignError;

/// One run of a campaign, as a method sees it.
pub struct RunId<'a> {
    pub key: RunKey,
    pub config: &'a DutConfig,
    pub traffic: &'a Traffic,
}

impl RunId<'_> {
    /// `<config>.<traffic>.<iteration>`.
    pub fn label(&self) -> String {
        format!(
            "{}.{}.{}",
            self.config.name, self.traffic.name, self.key.iteration
        )
    }

    /// Same configuration, traffic and iteration as the names given.
    pub fn is(&self, config: &str, traffic: &str, iteration: usize) -> bool {
        self.config.name == config
            && self.traffic.name == traffic
            && self.key.iteration == iteration
    }
}

/// What a run may use: the campaign, its folder, the run's header as the
/// campaign records it, and the trials of the campaign's lab.
pub struct RunContext<'a> {
    pub plan: &'a Plan,
    pub folder: &'a ResultsDir,
    /// The run's header (`started_at` is now).
    pub header: RunHeader,
    pub trials: Trials<'a>,
    /// Fails when the lab broke: a method calls it before it keeps a
    /// run's result (a run on a broken lab measured the breakage).
    pub lab_whole: &'a dyn Fn() -> Result<(), CampaignError>,
}

/// How the runs of a campaign are measured.
pub trait Method {
    /// What one finished run gives (the campaign's `RunDone` event carries
    /// it).
    type Run;
    /// Every finished run, in memory: what the sinks are given.
    type Results;

    /// `fixed-rate`, `mlrsearch`.
    fn name(&self) -> &'static str;

    /// Readies the method's part of `folder`: on a new campaign
    /// (`created`) writes what a resume needs (its settings); on a resumed
    /// one reads back what it recorded.
    fn open(
        &mut self,
        plan: &Plan,
        folder: &ResultsDir,
        created: bool,
    ) -> Result<(), CampaignError>;

    /// The folder holds this run whole: a resumed campaign skips it.
    fn is_finished(&self, run: &RunId<'_>) -> bool;

    /// Runs one run, recording each trial as it finishes, and returns
    /// what it gives; None when Ctrl-C (`cx.trials.stop`) cut it short.
    fn run(
        &mut self,
        run: &RunId<'_>,
        cx: RunContext<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<&Self::Run>, CampaignError>;

    /// Every finished run so far.
    fn results(&self) -> &Self::Results;
}
