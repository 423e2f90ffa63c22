//! A campaign records itself in the history when it ends: [`Recorder`] is
//! one of its sinks (`pktlab_campaign::sink`), and makes its record from
//! the results the campaign holds in memory, as importing the folder
//! would make it (`crate::import::folder`). A failure to record never
//! fails the campaign, whose results folder is whole either way: the
//! recorder keeps the outcome for its caller to say.

use std::cell::RefCell;

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Finished, Sink, Stage};
use pktlab_campaign::CampaignError;
use pktlab_search::mlr::results::Searches;
use pktlab_search::stateful::StatefulReport;

use crate::import::folder::{record_of, Results};
use crate::record::{CampaignRecord, Recorded};
use crate::{Database, DbTarget, HistoryError};

/// Records the campaign's folder in a history database at the campaign's
/// end (finished, failed or interrupted).
pub struct Recorder {
    target: DbTarget,
    label: Option<String>,
    outcome: RefCell<Option<Result<Recorded, HistoryError>>>,
}

impl Recorder {
    /// A recorder into `target`, the campaign labelled `label` (None: the
    /// DUT's kernel release).
    pub fn new(target: DbTarget, label: Option<String>) -> Recorder {
        Recorder {
            target,
            label,
            outcome: RefCell::new(None),
        }
    }

    /// Where it records.
    pub fn target(&self) -> &DbTarget {
        &self.target
    }

    /// What recording did, once the campaign has ended (None before).
    pub fn outcome(&self) -> Option<Result<Recorded, HistoryError>> {
        self.outcome.borrow_mut().take()
    }
}

impl Recorder {
    /// Records the campaign once it has ended; a failure is kept for the
    /// caller.
    fn at_end<R: ?Sized>(&self, f: &Finished<'_, R>, results: Results<'_>) {
        if f.stage == Stage::End {
            let done = self.record(f, results);
            *self.outcome.borrow_mut() = Some(done);
        }
    }

    fn record<R: ?Sized>(
        &self,
        f: &Finished<'_, R>,
        results: Results<'_>,
    ) -> Result<Recorded, HistoryError> {
        let rec = record_from_memory(f, results, self.label.as_deref())?;
        Database::open(&self.target, true)?.record(&rec)
    }
}

/// The record of the campaign `f` hands its sinks, its results being
/// `results`.
pub fn record_from_memory<R: ?Sized>(
    f: &Finished<'_, R>,
    results: Results<'_>,
    label: Option<&str>,
) -> Result<CampaignRecord, HistoryError> {
    let env_bytes = f.env_text.as_bytes();
    record_of(&f.folder.path, f.env, env_bytes, results, label)
}

/// A `bench` campaign's runs.
impl Sink<Runs> for Recorder {
    fn take(&self, f: &Finished<'_, Runs>) -> Result<(), CampaignError> {
        self.at_end(f, Results::Runs(&f.results.records));
        Ok(())
    }
}

/// An `rfc2544` campaign's searches.
impl Sink<Searches> for Recorder {
    fn take(&self, f: &Finished<'_, Searches>) -> Result<(), CampaignError> {
        self.at_end(f, Results::Searches(f.results, &f.plan.name));
        Ok(())
    }
}

/// An `rfc9693` campaign's stateful results.
impl Sink<StatefulReport> for Recorder {
    fn take(&self, f: &Finished<'_, StatefulReport>) -> Result<(), CampaignError> {
        self.at_end(f, Results::Stateful(f.results, Some(f.plan), &f.plan.name));
        Ok(())
    }
}
