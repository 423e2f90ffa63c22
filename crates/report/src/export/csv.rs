//! `runs.csv`: one row per finished run, for spreadsheets and plotting
//! scripts.

use pktlab_campaign::export::{Exporter, Finished};
use pktlab_campaign::results::{RunOutcome, RUNS_CSV_FILE};
use serde::Serialize;

pub struct Csv;

/// A row; the header is the field names.
#[derive(Serialize)]
struct Row<'a> {
    config: &'a str,
    traffic: &'a str,
    iteration: usize,
    started_at: u64,
    forwarded_pps: f64,
    offered_pps: f64,
    loss_ratio: f64,
}

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        RUNS_CSV_FILE
    }

    fn render(&self, f: &Finished<'_>) -> Option<String> {
        Some(text(f.runs))
    }
}

/// The runs as CSV with a header line.
pub fn text(runs: &[RunOutcome]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    if runs.is_empty() {
        // serde writes the header with the first row only.
        w.write_record([
            "config",
            "traffic",
            "iteration",
            "started_at",
            "forwarded_pps",
            "offered_pps",
            "loss_ratio",
        ])
        .expect("writing to memory");
    }
    for r in runs {
        w.serialize(Row {
            config: &r.config,
            traffic: &r.traffic,
            iteration: r.iteration,
            started_at: r.started_at,
            forwarded_pps: r.forwarded_pps,
            offered_pps: r.offered_pps,
            loss_ratio: r.loss_ratio,
        })
        .expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_even_without_runs() {
        assert_eq!(
            text(&[]),
            "config,traffic,iteration,started_at,forwarded_pps,offered_pps,loss_ratio\n"
        );
        let r = RunOutcome {
            config: "rps".into(),
            traffic: "inet6".into(),
            iteration: 2,
            started_at: 1_700_000_000,
            forwarded_pps: 1488095.25,
            offered_pps: 1500000.0,
            loss_ratio: 0.25,
            drops: None,
        };
        assert_eq!(
            text(&[r]).lines().nth(1).unwrap(),
            "rps,inet6,2,1700000000,1488095.25,1500000.0,0.25"
        );
    }
}
