//! The files of a campaign's results folder that people and other programs
//! read, made from the bench layer's data: one module per format, each an
//! [`Exporter`] (the bench layer's hook, which the campaign runner calls
//! after every finished run and at the end).
//!
//! - [`json`]: `summary.json`, the whole summary;
//! - [`ministat`]: `ministat.txt`, the configurations compared per traffic;
//! - [`sweep`]: `sweep.txt`, the size sweep tables;
//! - [`csv`]: `runs.csv`, one row per finished run;
//! - [`crate::html::HtmlReport`]: `report.html`, the page people look at;
//! - [`tidy`]: the tidy CSV files of `pktlab report --csv` (not an exporter).

pub mod csv;
pub mod json;
pub mod ministat;
pub mod sweep;
pub mod tidy;

use pktlab_campaign::export::Exporter;

/// Every exporter of a campaign, in the order their files are written.
pub fn campaign_exporters() -> [&'static dyn Exporter; 4] {
    [&json::Json, &ministat::Ministat, &sweep::Sweep, &csv::Csv]
}

/// The campaign's exporters, and `report.html` last unless `report` is
/// false (`--no-report`).
pub fn exporters_with_report(report: bool) -> Vec<&'static dyn Exporter> {
    let mut out: Vec<&'static dyn Exporter> = campaign_exporters().to_vec();
    if report {
        out.push(&crate::html::HtmlReport);
    }
    out
}
