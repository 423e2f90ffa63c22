//! `ministat.txt`: for each traffic profile, every configuration compared
//! with the first, as ministat prints it.

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Exporter, Finished};

use crate::tables::ministat::text;

/// Its name in the results folder.
pub const FILE: &str = "ministat.txt";

pub struct Ministat;

impl Exporter<Runs> for Ministat {
    fn file_name(&self) -> &'static str {
        FILE
    }

    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        Some(text(f.plan, &f.results.summary.cells))
    }
}
