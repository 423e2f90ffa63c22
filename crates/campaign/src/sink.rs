//! Where a campaign's results go once they change: the campaign hands its
//! method's in-memory results to every [`Sink`] after each finished run
//! and at the end. The files made for people (`ministat.txt`, `runs.csv`,
//! `report.html`, ...) are [`Exporter`]s, which the report layer
//! implements: this layer produces data only. A recorder of results
//! elsewhere (a database of campaigns) is one more sink.

use crate::folder::ResultsDir;
use crate::plan::Plan;
use crate::records::EnvRecord;
use crate::CampaignError;

/// When a sink is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// A run has finished; more may follow.
    AfterRun,
    /// The campaign is over (finished, failed or interrupted).
    End,
}

/// What a sink is given: the campaign and its results so far.
pub struct Finished<'a, R: ?Sized> {
    pub plan: &'a Plan,
    pub env: &'a EnvRecord,
    /// `env.json`'s exact text, as the campaign read it when it opened.
    pub env_text: &'a str,
    pub folder: &'a ResultsDir,
    pub results: &'a R,
    pub stage: Stage,
}

/// A consumer of a campaign's in-memory results.
pub trait Sink<R: ?Sized> {
    fn take(&self, finished: &Finished<'_, R>) -> Result<(), CampaignError>;
}

/// One file of the results folder made from the results: written after
/// each finished run and at the end.
pub trait Exporter<R: ?Sized> {
    /// Its name in the results folder.
    fn file_name(&self) -> &'static str;

    /// Its text, or None when it has nothing to say (no size sweep).
    fn render(&self, finished: &Finished<'_, R>) -> Option<String>;
}

impl<R: ?Sized, E: Exporter<R>> Sink<R> for E {
    fn take(&self, f: &Finished<'_, R>) -> Result<(), CampaignError> {
        match self.render(f) {
            Some(text) => f.folder.write(self.file_name(), text.as_bytes()),
            None => Ok(()),
        }
    }
}
