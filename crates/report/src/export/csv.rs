//! `runs.csv`: one row per finished run, for spreadsheets and plotting
//! scripts.

use pktlab_campaign::records::RunRecord;
use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Exporter, Finished};
use serde::Serialize;

/// Its name in the results folder (and, tidier, in `csv/`: [`super::tidy`]).
pub const FILE: &str = "runs.csv";

pub struct Csv;

/// A row; the header is the field names.
#[derive(Serialize)]
pub struct Row<'a> {
    config: &'a str,
    traffic: &'a str,
    iteration: usize,
    started_at: u64,
    forwarded_pps: f64,
    offered_pps: f64,
    loss_ratio: f64,
}

impl Exporter<Runs> for Csv {
    fn file_name(&self) -> &'static str {
        FILE
    }

    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        Some(text(f.results.records.iter().map(row)))
    }
}

fn row(r: &RunRecord) -> Row<'_> {
    Row {
        config: &r.header.config,
        traffic: &r.header.traffic,
        iteration: r.header.iteration,
        started_at: r.header.started_at,
        forwarded_pps: r.result.forwarded_pps,
        offered_pps: r.result.offered_pps,
        loss_ratio: r.result.loss_ratio,
    }
}

/// The runs as CSV with a header line.
pub fn text<'a>(rows: impl IntoIterator<Item = Row<'a>>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
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
    for r in rows {
        w.serialize(r).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_even_without_runs() {
        assert_eq!(
            text([]),
            "config,traffic,iteration,started_at,forwarded_pps,offered_pps,loss_ratio\n"
        );
        let r = Row {
            config: "rps",
            traffic: "inet6",
            iteration: 2,
            started_at: 1_700_000_000,
            forwarded_pps: 1488095.25,
            offered_pps: 1500000.0,
            loss_ratio: 0.25,
        };
        assert_eq!(
            text([r]).lines().nth(1).unwrap(),
            "rps,inet6,2,1700000000,1488095.25,1500000.0,0.25"
        );
    }
}
