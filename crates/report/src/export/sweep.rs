//! `sweep.txt`: the size and knob sweeps' tables (`crate::tables::sweep`);
//! `sweep.csv`: the knob sweep tables for programs.

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Exporter, Finished};
use pktlab_search::mlr::Searches;

use crate::tables::sweep::{knob_csv, knob_text, search_csv, search_table, text};

/// Its name in the results folder.
pub const FILE: &str = "sweep.txt";
/// The knob sweeps' rows as CSV.
pub const CSV_FILE: &str = "sweep.csv";

pub struct Sweep;
pub struct SweepCsv;

impl Exporter<Runs> for Sweep {
    fn file_name(&self) -> &'static str {
        FILE
    }

    /// Nothing for a campaign without a sweep.
    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        if f.plan.sweeps.is_empty() && f.plan.knob_sweeps.is_empty() {
            return None;
        }
        let summary = &f.results.summary;
        let tables = [text(&summary.sweeps), knob_text(&summary.knob_sweeps)];
        Some(
            tables
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

impl Exporter<Runs> for SweepCsv {
    fn file_name(&self) -> &'static str {
        CSV_FILE
    }

    /// Nothing for a campaign without a knob sweep.
    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        (!f.plan.knob_sweeps.is_empty()).then(|| knob_csv(&f.results.summary.knob_sweeps))
    }
}

impl Exporter<Searches> for Sweep {
    fn file_name(&self) -> &'static str {
        FILE
    }

    /// Nothing for a campaign without a knob sweep.
    fn render(&self, f: &Finished<'_, Searches>) -> Option<String> {
        let tables = &f.results.report.knob_sweeps;
        (!tables.is_empty()).then(|| {
            tables
                .iter()
                .map(search_table)
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}

impl Exporter<Searches> for SweepCsv {
    fn file_name(&self) -> &'static str {
        CSV_FILE
    }

    fn render(&self, f: &Finished<'_, Searches>) -> Option<String> {
        let tables = &f.results.report.knob_sweeps;
        (!tables.is_empty()).then(|| search_csv(tables))
    }
}
