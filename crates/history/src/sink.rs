//! A campaign records itself in the history when it ends: [`Recorder`] is
//! one of its sinks (`pktlab_campaign::sink`). A failure to record never
//! fails the campaign, whose results folder is whole either way: the
//! recorder keeps the outcome for its caller to say.

use std::cell::RefCell;

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Finished, Sink, Stage};
use pktlab_campaign::CampaignError;
use pktlab_search::mlr::results::Searches;

use crate::commands::record_folder;
use crate::record::Recorded;
use crate::{DbTarget, HistoryError};

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
    /// Records the campaign's folder once the campaign has ended; a
    /// failure is kept for the caller.
    fn at_end<R: ?Sized>(&self, f: &Finished<'_, R>) {
        if f.stage == Stage::End {
            let done = record_folder(&self.target, &f.folder.path, self.label.as_deref());
            *self.outcome.borrow_mut() = Some(done);
        }
    }
}

/// A `bench` campaign's runs.
impl Sink<Runs> for Recorder {
    fn take(&self, f: &Finished<'_, Runs>) -> Result<(), CampaignError> {
        self.at_end(f);
        Ok(())
    }
}

/// An `rfc2544` campaign's searches.
impl Sink<Searches> for Recorder {
    fn take(&self, f: &Finished<'_, Searches>) -> Result<(), CampaignError> {
        self.at_end(f);
        Ok(())
    }
}
