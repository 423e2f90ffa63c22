//! `pktlab report DIR --csv`: tidy CSV files, one per kind of data and one
//! row per observation, for pandas, R or a spreadsheet (columns in the
//! README): `runs.csv`, `seconds.csv`, `trials.csv`, `latency.csv`.

use std::path::{Path, PathBuf};

use pktlab_campaign::CampaignError;
use serde::Serialize;

use crate::html::data::Folder;

/// Writes the CSV files of `folder` into its `csv/` subfolder, telling
/// `written` each file as it is written.
pub fn write_files(folder: &Folder, mut written: impl FnMut(&Path)) -> Result<(), CampaignError> {
    let dir = folder.path.join("csv");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CampaignError::Failed(format!("cannot create {}: {e}", dir.display())))?;
    for (name, text) in files(folder) {
        let path: PathBuf = dir.join(name);
        pktlab_campaign::atomic::write_atomic(&path, text.as_bytes())?;
        written(&path);
    }
    Ok(())
}

/// The CSV files of `folder`: (file name, text): a fixed-rate campaign's
/// runs and seconds, a search's trials and latencies.
pub fn files(folder: &Folder) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if folder.runs.is_some() {
        out.push((super::csv::FILE, runs(folder)));
        out.push(("seconds.csv", seconds(folder)));
    }
    if !folder.trials().is_empty() {
        out.push(("trials.csv", trials(folder)));
    }
    if folder.report().is_some_and(|r| !r.latency.is_empty()) {
        out.push(("latency.csv", latency(folder)));
    }
    out
}

fn write<T: Serialize>(header: &[&str], rows: impl Iterator<Item = T>) -> String {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(header).expect("writing to memory");
    for r in rows {
        w.serialize(r).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 fields")
}

pub const RUNS_COLUMNS: [&str; 14] = [
    "config",
    "traffic",
    "iteration",
    "started_at",
    "finished_at",
    "duration_s",
    "io",
    "requested_pps",
    "offered_pps",
    "forwarded_pps",
    "lost",
    "loss_ratio",
    "generator_limited",
    "virtual_lab",
];

pub fn runs(f: &Folder) -> String {
    write(
        &RUNS_COLUMNS,
        f.records().iter().map(|r| {
            (
                &r.header.config,
                &r.header.traffic,
                r.header.iteration,
                r.header.started_at,
                r.result.finished_at,
                r.header.settings.duration.as_secs_f64(),
                r.header.io.to_string(),
                r.result.requested_pps,
                r.result.offered_pps,
                r.result.forwarded_pps,
                r.result.lost,
                r.result.loss_ratio,
                r.result.generator_limited(),
                r.header.virtual_lab,
            )
        }),
    )
}

pub const SECONDS_COLUMNS: [&str; 7] = [
    "config",
    "traffic",
    "iteration",
    "second",
    "kept",
    "offered_pps",
    "forwarded_pps",
];

pub fn seconds(f: &Folder) -> String {
    let rows = f.records().iter().flat_map(|r| {
        let n = r.result.rx_samples.len().max(r.result.tx_samples.len());
        let s = &r.header.settings;
        (0..n).map(move |i| {
            let t = i + 1;
            (
                &r.header.config,
                &r.header.traffic,
                r.header.iteration,
                t,
                t > s.trim_head && t + s.trim_tail <= n,
                r.result.tx_samples.get(i).copied(),
                r.result.rx_samples.get(i).copied(),
            )
        })
    });
    write(&SECONDS_COLUMNS, rows)
}

pub const TRIALS_COLUMNS: [&str; 15] = [
    "config",
    "traffic",
    "size",
    "test",
    "started_at",
    "intended_pps",
    "offered_pps",
    "duration_s",
    "tx",
    "rx",
    "lost",
    "late",
    "loss_ratio",
    "generator_limited",
    "class",
];

pub fn trials(f: &Folder) -> String {
    write(
        &TRIALS_COLUMNS,
        f.trials().iter().map(|t| {
            (
                &t.config,
                &t.traffic,
                t.size.clone(),
                &t.test,
                t.started_at,
                t.intended_pps,
                t.offered_pps,
                t.duration_s,
                t.tx,
                t.rx,
                t.lost,
                t.late,
                t.loss_ratio,
                t.generator_limited,
                t.first_class(),
            )
        }),
    )
}

pub const LATENCY_COLUMNS: [&str; 6] = [
    "config",
    "traffic",
    "size",
    "load_pps",
    "percentile",
    "latency_ns",
];

pub fn latency(f: &Folder) -> String {
    let rows = f
        .report()
        .into_iter()
        .flat_map(|r| r.latency.iter())
        .flat_map(|l| {
            [
                (0.0, l.min_ns),
                (50.0, l.p50_ns),
                (90.0, l.p90_ns),
                (99.0, l.p99_ns),
                (99.9, l.p999_ns),
                (100.0, l.max_ns),
            ]
            .into_iter()
            .map(move |(p, ns)| (&l.config, &l.traffic, &l.size, l.load_pps, p, ns))
        });
    write(&LATENCY_COLUMNS, rows)
}
