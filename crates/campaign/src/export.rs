//! The hook through which the campaign runner has its presentation files
//! written (`ministat.txt`, `sweep.txt`, `summary.json`, `runs.csv`): the
//! report layer implements [`Exporter`] and the command line hands the
//! exporters to the runner, so that this layer produces data only.

use crate::plan::Campaign;
use crate::results::RunOutcome;
use crate::summary::CampaignSummary;

/// What an exporter is given: the campaign and its finished runs so far.
#[derive(Clone, Copy, Debug)]
pub struct Finished<'a> {
    pub campaign: &'a Campaign,
    /// The results folder, for exporters that read the run files in full.
    pub dir: &'a std::path::Path,
    /// Sorted by configuration, traffic and iteration.
    pub runs: &'a [RunOutcome],
    pub summary: &'a CampaignSummary,
}

/// One file of the results folder made from the finished runs. Written
/// after each finished run and at the end.
pub trait Exporter {
    /// Its name in the results folder.
    fn file_name(&self) -> &'static str;

    /// Its text, or None when it has nothing to say (no size sweep).
    fn render(&self, finished: &Finished<'_>) -> Option<String>;
}
