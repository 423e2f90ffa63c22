//! A pktlab results folder as a history record, read with the types its
//! writer defines (`pktlab_bench`'s run files, `env.json` and
//! `rfc2544.json`): a `bench` folder gives every finished run's
//! forwarded pps, an `rfc2544` folder every search's goals and latencies.
//!
//! All reading of pktlab's results files is in this module.

use std::path::Path;

use pktlab_bench::campaign::records::{EnvRecord, RunHeader, Typed, HEADER_TYPE};
use pktlab_bench::campaign::results::{self, RunOutcome, ENV_FILE, RUNS_DIR};
use pktlab_bench::mlr::summary::{Report, Throughput};
use pktlab_bench::mlr::SETTINGS_FILE;
use pktlab_bench::BenchError;

use crate::record::{CampaignRecord, GoalRecord, LatencyRecord, RunRecord, Source};
use crate::HistoryError;

/// The results file of `pktlab rfc2544` (its `REPORT_FILE`, in
/// `crates/pktlab/src/cmd/rfc2544.rs`).
pub const RFC2544_FILE: &str = "rfc2544.json";

fn usage(path: &Path, why: impl std::fmt::Display) -> HistoryError {
    HistoryError::Usage(format!("{}: {why}", path.display()))
}

/// A results file that is missing or malformed is the user's to fix
/// (exit code 2); one the system cannot read is not.
fn from_bench(e: BenchError) -> HistoryError {
    if e.is_usage() {
        HistoryError::Usage(e.to_string())
    } else {
        HistoryError::Runtime(e.to_string())
    }
}

fn unreadable(path: &Path, e: &std::io::Error) -> HistoryError {
    HistoryError::File {
        path: path.to_path_buf(),
        why: crate::error::os_text(e),
    }
}

/// The record of results folder `dir`, labelled `label` (None: the DUT's
/// kernel release, [`default_label`]).
pub fn read_folder(dir: &Path, label: Option<&str>) -> Result<CampaignRecord, HistoryError> {
    if !dir.is_dir() {
        return Err(usage(dir, "not a folder"));
    }
    let env_path = dir.join(ENV_FILE);
    let env_bytes = match std::fs::read(&env_path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(usage(
                dir,
                format!("not a pktlab results folder: it has no {ENV_FILE}"),
            ))
        }
        Err(e) => return Err(unreadable(&env_path, &e)),
    };
    let env: EnvRecord = serde_json::from_slice(&env_bytes).map_err(|e| usage(&env_path, e))?;
    results::check_version(&env.pktlab_version).map_err(|e| usage(&env_path, e))?;
    let finished = finished_runs(dir)?;
    let Some((_, first)) = finished.first() else {
        return Err(HistoryError::Nothing {
            path: dir.to_path_buf(),
            why: "no finished run: nothing to record".into(),
        });
    };
    let name = first.campaign.clone();
    let (source, runs) = if dir.join(SETTINGS_FILE).is_file() {
        (Source::Rfc2544, searches(dir, &finished)?)
    } else {
        (Source::Bench, bench_runs(&finished))
    };
    let results_dir = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string();
    Ok(CampaignRecord {
        identity: format!("pktlab-{}", crate::import::sha256_hex(&[&env_bytes])),
        source,
        name,
        label: match label {
            Some(l) => l.to_string(),
            None => default_label(&env),
        },
        started_at: Some(env.created_at as i64),
        host: Some(env.host.hostname.clone()),
        kernel: Some(env.host.kernel.clone()),
        kernel_build: Some(env.host.kernel_build.clone()),
        os: env.host.os.clone(),
        cpu_model: env.host.cpu_model.clone(),
        cpus: Some(env.host.cpus as i64),
        dut: Some(env.lab.clone()),
        dut_uname: env.dut_uname.clone(),
        virtual_lab: Some(env.virtual_lab),
        pktlab_version: Some(env.pktlab_version.clone()),
        results_dir,
        runs,
    })
}

/// The label of a campaign that was given none: the DUT's kernel release.
/// A DUT reached over ssh has its `uname -a` in `env.json` (the release is
/// its third word); any other DUT (the built-in lab's namespace, a local
/// one) runs on this host's kernel.
pub fn default_label(env: &EnvRecord) -> String {
    env.dut_uname
        .as_deref()
        .and_then(|u| u.split_whitespace().nth(2))
        .map(str::to_string)
        .unwrap_or_else(|| env.host.kernel.clone())
}

/// Every finished run's figures and header, in file-name order.
fn finished_runs(dir: &Path) -> Result<Vec<(RunOutcome, RunHeader)>, HistoryError> {
    let runs_dir = dir.join(RUNS_DIR);
    let entries = match std::fs::read_dir(&runs_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(unreadable(&runs_dir, &e)),
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.ends_with(".jsonl") && !name.starts_with('.')
        })
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let outcome = results::read_run(&path).map_err(from_bench)?;
        let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&path, &e))?;
        let first = text.lines().next().unwrap_or_default();
        let header: Typed<RunHeader> = serde_json::from_str(first).map_err(|e| usage(&path, e))?;
        if header.kind != HEADER_TYPE {
            return Err(usage(&path, "its first line is not a \"run\" line"));
        }
        out.push((outcome, header.record));
    }
    Ok(out)
}

fn bench_runs(finished: &[(RunOutcome, RunHeader)]) -> Vec<RunRecord> {
    finished
        .iter()
        .map(|(o, h)| RunRecord {
            config: o.config.clone(),
            traffic: o.traffic.clone(),
            size: h.traffic_profile.sizes.clone(),
            iteration: o.iteration as i64,
            started_at: Some(o.started_at as i64),
            forwarded_pps: Some(o.forwarded_pps),
            offered_pps: Some(o.offered_pps),
            loss_ratio: Some(o.loss_ratio),
            goals: Vec::new(),
            latencies: Vec::new(),
        })
        .collect()
}

/// The searches of `rfc2544.json`, each with its goals and latencies.
fn searches(
    dir: &Path,
    finished: &[(RunOutcome, RunHeader)],
) -> Result<Vec<RunRecord>, HistoryError> {
    let path = dir.join(RFC2544_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(HistoryError::Nothing {
                path: dir.to_path_buf(),
                why: format!(
                    "an rfc2544 folder without {RFC2544_FILE}: its searches did not finish"
                ),
            })
        }
        Err(e) => return Err(unreadable(&path, &e)),
    };
    let report: Report = serde_json::from_str(&text).map_err(|e| usage(&path, e))?;
    // A search cut short by Ctrl-C has bounds in rfc2544.json but no run
    // file: it is left out, and recorded whole once --resume finishes it.
    Ok(report
        .throughput
        .iter()
        .filter_map(|t| {
            let (o, _) = finished.iter().find(|(o, _)| {
                o.config == t.config && o.traffic == t.traffic && o.iteration == t.iteration
            })?;
            Some(search_run(t, &report, o.started_at as i64))
        })
        .collect())
}

fn search_run(t: &Throughput, report: &Report, started_at: i64) -> RunRecord {
    RunRecord {
        config: t.config.clone(),
        traffic: t.traffic.clone(),
        size: t.size.clone(),
        iteration: t.iteration as i64,
        started_at: Some(started_at),
        forwarded_pps: None,
        offered_pps: None,
        loss_ratio: None,
        goals: t
            .goals
            .iter()
            .map(|g| GoalRecord {
                loss_ratio: g.loss_ratio,
                exceed_ratio: g.exceed_ratio,
                lower_pps: g.lower_pps,
                upper_pps: g.upper_pps,
                conditional_pps: g.conditional_throughput_pps,
                hit_max: g.hit_max,
                generator_limited: g.generator_limited,
                complete: g.complete,
            })
            .collect(),
        latencies: report
            .latency
            .iter()
            .filter(|l| {
                l.config == t.config && l.traffic == t.traffic && l.iteration == t.iteration
            })
            .map(|l| LatencyRecord {
                load_fraction: l.load_fraction,
                load_pps: l.load_pps,
                offered_pps: l.offered_pps,
                frames: l.frames as i64,
                lost: l.lost as i64,
                min_ns: l.min_ns as i64,
                p50_ns: l.p50_ns as i64,
                p90_ns: l.p90_ns as i64,
                p99_ns: l.p99_ns as i64,
                p999_ns: l.p999_ns as i64,
                max_ns: l.max_ns as i64,
            })
            .collect(),
    }
}
