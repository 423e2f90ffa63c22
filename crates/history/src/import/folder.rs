//! A pktlab campaign's results as a history record: from the results in
//! memory as the campaign ends ([`record_of`]), or read from its folder
//! with the types its writers define (`pktlab_campaign`'s run files and
//! `env.json`, `pktlab_search`'s searches; [`read_folder`]), both made by
//! the same code. A `bench` campaign gives every finished run's forwarded
//! pps, an `rfc2544` campaign every finished search's goals and latencies,
//! an `rfc9693` campaign every finished run's stateful results
//! ([`super::stateful`]).
//!
//! All reading of pktlab's results files is in this module.

use std::path::Path;

use pktlab_campaign::folder::{check_version, ResultsDir, ENV_FILE};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::{EnvRecord, RunRecord as Run};
use pktlab_campaign::CampaignError;
use pktlab_search::mlr::results::Searches;
use pktlab_search::mlr::summary::{Report, Throughput};
use pktlab_search::stateful::StatefulReport;

use crate::record::{CampaignRecord, GoalRecord, LatencyRecord, RunRecord, Source};
use crate::HistoryError;

fn usage(path: &Path, why: impl std::fmt::Display) -> HistoryError {
    HistoryError::Usage(format!("{}: {why}", path.display()))
}

/// A results file that is missing or malformed is the user's to fix
/// (exit code 2); one the system cannot read is not.
fn from_campaign(e: CampaignError) -> HistoryError {
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

/// A campaign's results, as its method holds them or as its folder gives
/// them back.
#[derive(Clone, Copy, Debug)]
pub enum Results<'a> {
    /// A `bench` campaign's finished runs, sorted as the folder lists them.
    Runs(&'a [Run]),
    /// An `rfc2544` campaign's searches, and the campaign's name.
    Searches(&'a Searches, &'a str),
    /// An `rfc9693` campaign's results, its plan (when known: the frame
    /// sizes) and its name.
    Stateful(&'a StatefulReport, Option<&'a Plan>, &'a str),
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
    check_version(&env.pktlab_version).map_err(|e| usage(&env_path, e))?;
    let folder = ResultsDir {
        path: dir.to_path_buf(),
    };
    match Searches::read(&folder).map_err(from_campaign)? {
        Some(s) => {
            let name = campaign_name(dir);
            record_of(dir, &env, &env_bytes, Results::Searches(&s, &name), label)
        }
        None => {
            if let Some(r) = StatefulReport::read(&folder).map_err(from_campaign)? {
                let name = campaign_name(dir);
                let plan = plan_of(dir);
                let results = Results::Stateful(&r, plan.as_ref(), &name);
                return record_of(dir, &env, &env_bytes, results, label);
            }
            let runs = folder.runs().map_err(from_campaign)?;
            record_of(dir, &env, &env_bytes, Results::Runs(&runs), label)
        }
    }
}

/// The record of the campaign of folder `dir` whose `env.json` is
/// `env` (its exact bytes `env_bytes`) and whose results are `results`:
/// what a campaign records of itself as it ends, and what importing its
/// folder records.
pub fn record_of(
    dir: &Path,
    env: &EnvRecord,
    env_bytes: &[u8],
    results: Results<'_>,
    label: Option<&str>,
) -> Result<CampaignRecord, HistoryError> {
    let (source, name, runs) = match results {
        Results::Searches(s, name) => (Source::Rfc2544, name.to_string(), searches(s)),
        Results::Stateful(r, plan, name) => (
            Source::Rfc9693,
            name.to_string(),
            super::stateful::stateful_runs(r, plan),
        ),
        Results::Runs(runs) => {
            let name = runs.first().map(|r| r.header.campaign.clone());
            (Source::Bench, name.unwrap_or_default(), bench_runs(runs))
        }
    };
    if runs.is_empty() {
        return Err(HistoryError::Nothing {
            path: dir.to_path_buf(),
            why: "no finished run: nothing to record".into(),
        });
    }
    let results_dir = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string();
    Ok(CampaignRecord {
        identity: format!("pktlab-{}", super::identity::sha256_hex(&[env_bytes])),
        source,
        name,
        label: match label {
            Some(l) => l.to_string(),
            None => default_label(env),
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

/// The campaign's name from its `campaign.toml` (`bench` when it names
/// none, as pktlab does).
fn campaign_name(dir: &Path) -> String {
    campaign_file(dir)
        .and_then(|f| f.name)
        .unwrap_or_else(|| "bench".into())
}

fn campaign_file(dir: &Path) -> Option<pktlab_campaign::file::CampaignFile> {
    let text = std::fs::read_to_string(dir.join(pktlab_campaign::folder::CAMPAIGN_FILE));
    text.ok()
        .and_then(|t| pktlab_campaign::file::CampaignFile::parse(&t).ok())
}

/// The campaign's plan from its `campaign.toml`, if it reads (the CPU
/// count only sizes an RPS mask, which the history does not keep).
fn plan_of(dir: &Path) -> Option<Plan> {
    Plan::from_file(&campaign_file(dir)?, 1).ok()
}

fn bench_runs(finished: &[Run]) -> Vec<RunRecord> {
    finished
        .iter()
        .map(|r| RunRecord {
            config: r.header.config.clone(),
            traffic: r.header.traffic.clone(),
            size: r.header.traffic_profile.sizes.clone(),
            iteration: r.header.iteration as i64,
            started_at: Some(r.header.started_at as i64),
            forwarded_pps: Some(r.result.forwarded_pps),
            offered_pps: Some(r.result.offered_pps),
            loss_ratio: Some(r.result.loss_ratio),
            goals: Vec::new(),
            latencies: Vec::new(),
            stateful: Vec::new(),
        })
        .collect()
}

/// Every finished search, with its goals and latencies. A search cut short
/// by Ctrl-C (its trials ask for more) is left out, and recorded whole
/// once --resume finishes it.
fn searches(s: &Searches) -> Vec<RunRecord> {
    s.report
        .throughput
        .iter()
        .filter(|t| s.is_finished(&t.config, &t.traffic, t.iteration))
        .map(|t| {
            let started = s
                .trials_of(&t.config, &t.traffic, t.iteration)
                .iter()
                .map(|l| l.started_at as i64)
                .min();
            search_run(t, &s.report, started)
        })
        .collect()
}

fn search_run(t: &Throughput, report: &Report, started_at: Option<i64>) -> RunRecord {
    RunRecord {
        config: t.config.clone(),
        traffic: t.traffic.clone(),
        size: t.size.clone(),
        iteration: t.iteration as i64,
        started_at,
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
        stateful: Vec::new(),
    }
}
