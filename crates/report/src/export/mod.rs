//! The files of a campaign's results folder made for people and other
//! programs, from the campaign's results in memory: one module per
//! format, each an [`Exporter`] (the campaign layer's sink, called after
//! every finished run and at the end).
//!
//! - [`ministat`]: `ministat.txt`, the configurations compared per traffic;
//! - [`sweep`]: `sweep.txt`, the size and knob sweep tables, and
//!   `sweep.csv`, the knob sweeps' rows;
//! - [`csv`]: `runs.csv`, one row per finished run;
//! - [`crate::html::HtmlReport`]: `report.html`, the page people look at;
//! - [`tidy`]: the tidy CSV files of `pktlab report --csv` (not an exporter).

pub mod csv;
pub mod ministat;
pub mod sweep;
pub mod tidy;

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::Sink;
use pktlab_search::mlr::Searches;

/// A fixed-rate campaign's exporters, in the order their files are
/// written, and `report.html` last unless `report` is false
/// (`--no-report`).
pub fn runs_exporters(report: bool) -> Vec<&'static dyn Sink<Runs>> {
    let mut out: Vec<&'static dyn Sink<Runs>> = vec![
        &ministat::Ministat,
        &sweep::Sweep,
        &sweep::SweepCsv,
        &csv::Csv,
    ];
    if report {
        out.push(&crate::html::HtmlReport);
    }
    out
}

/// An rfc2544 campaign's exporters: a knob sweep's `sweep.txt` and
/// `sweep.csv`, and `report.html` unless `report` is false.
pub fn search_exporters(report: bool) -> Vec<&'static dyn Sink<Searches>> {
    let mut out: Vec<&'static dyn Sink<Searches>> = vec![&sweep::Sweep, &sweep::SweepCsv];
    if report {
        out.push(&crate::html::HtmlReport);
    }
    out
}
