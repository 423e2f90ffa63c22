//! What the database tests share: a fresh database of either backend, and
//! results folders written with pktlab's own record types.

#![allow(dead_code)]

pub mod pg;

use std::path::{Path, PathBuf};
use std::time::Duration;

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::records::{EnvConfig, EnvRecord, RunHeader, RunRecord as Run, RunResult};
use pktlab_history::record::{CampaignRecord, GoalRecord, LatencyRecord, RunRecord, Source};
use pktlab_history::DbTarget;
use pktlab_lab::envinfo::HostFacts;
use pktlab_remote::endpoint::BenchIo;
use pktlab_search::goal::Goal;
use pktlab_search::mlr::latency::LatencyResult;
use pktlab_search::mlr::record::{self as trials, TrialLine, THROUGHPUT};
use pktlab_search::mlr::steps::SearchRun;
use pktlab_search::mlr::summary::{GoalBounds, Report, Throughput};
use pktlab_search::mlr::{MaxLoad, MlrSettings};
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::TrialSettings;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database for one test; an SQLite file lives as long as this does.
pub struct TestDb {
    pub target: DbTarget,
    pub text: String,
    _dir: Option<tempfile::TempDir>,
}

pub fn fresh(backend: Backend) -> TestDb {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("sub").join("history.sqlite");
            TestDb {
                text: path.display().to_string(),
                target: DbTarget::Sqlite(path),
                _dir: Some(dir),
            }
        }
        Backend::Postgres => {
            let url = pg::new_database();
            TestDb {
                target: DbTarget::parse(&url).unwrap(),
                text: url,
                _dir: None,
            }
        }
    }
}

/// The same test case against both backends: `both!(case)` makes
/// `case::sqlite` and `case::postgres`, each calling `case(backend)`.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::common::Backend::Sqlite)
            }
            #[test]
            fn postgres() {
                super::$name(super::common::Backend::Postgres)
            }
        }
    )*};
}

/// A run of forwarded pps `v`.
pub fn run(config: &str, iteration: i64, v: f64) -> RunRecord {
    RunRecord {
        config: config.into(),
        traffic: "inet4".into(),
        size: "64".into(),
        iteration,
        started_at: Some(1_700_000_000 + iteration),
        forwarded_pps: Some(v),
        offered_pps: Some(v * 1.01),
        loss_ratio: Some(0.0099),
        goals: Vec::new(),
        latencies: Vec::new(),
        stateful: Vec::new(),
    }
}

/// A campaign record by hand: `identity` names it, `runs` its runs.
pub fn campaign(identity: &str, label: &str, runs: Vec<RunRecord>) -> CampaignRecord {
    CampaignRecord {
        identity: identity.into(),
        source: Source::Bench,
        name: "bench".into(),
        label: label.into(),
        started_at: Some(1_700_000_000),
        host: Some("h1".into()),
        kernel: Some("6.1.0".into()),
        kernel_build: Some("#1 SMP".into()),
        os: None,
        cpu_model: Some("Test CPU".into()),
        cpus: Some(4),
        dut: Some("built-in lab t".into()),
        dut_uname: None,
        virtual_lab: Some(true),
        pktlab_version: Some("0.1.0".into()),
        results_dir: "/r/x".into(),
        runs,
    }
}

/// A search run with two goals and a latency, with a missing upper bound.
pub fn search(config: &str, iteration: i64, ndr: f64) -> RunRecord {
    RunRecord {
        forwarded_pps: None,
        offered_pps: None,
        loss_ratio: None,
        goals: vec![
            GoalRecord {
                loss_ratio: 0.0,
                exceed_ratio: 0.5,
                lower_pps: Some(ndr),
                upper_pps: None,
                conditional_pps: Some(ndr + 1.5),
                hit_max: true,
                generator_limited: false,
                complete: false,
            },
            GoalRecord {
                loss_ratio: 0.005,
                exceed_ratio: 0.5,
                lower_pps: Some(ndr * 1.1),
                upper_pps: Some(ndr * 1.12),
                conditional_pps: None,
                hit_max: false,
                generator_limited: true,
                complete: true,
            },
        ],
        latencies: vec![LatencyRecord {
            load_fraction: 0.9,
            load_pps: ndr * 0.99,
            offered_pps: ndr * 0.98,
            frames: 123_456_789_012,
            lost: 3,
            min_ns: 1_000,
            p50_ns: 2_000,
            p90_ns: 3_000,
            p99_ns: 4_000,
            p999_ns: 5_000,
            max_ns: 9_000_000_000,
        }],
        ..run(config, iteration, 0.0)
    }
}

pub fn env(created_at: u64, dut_uname: Option<&str>) -> EnvRecord {
    EnvRecord {
        clocks: None,
        configs: Vec::<EnvConfig>::new(),
        cpu_plan: None,
        created_at,
        dut_uname: dut_uname.map(str::to_string),
        host: HostFacts {
            hostname: "testhost".into(),
            kernel: "6.1.0-18-amd64".into(),
            kernel_build: "#1 SMP".into(),
            os: Some("Debian GNU/Linux 12".into()),
            cpu_model: Some("Test CPU".into()),
            cpus: 2,
        },
        interrupts: None,
        lab: "built-in lab t".into(),
        nics: Vec::new(),
        pktlab_version: "0.1.0".into(),
        reverse_path: None,
        virtual_lab: true,
    }
}

pub fn header(
    config: &str,
    traffic: &str,
    iteration: usize,
    started_at: u64,
    sizes: &str,
) -> RunHeader {
    RunHeader {
        campaign: "nightly".into(),
        config: config.into(),
        traffic: traffic.into(),
        iteration,
        started_at,
        pktlab_version: "0.1.0".into(),
        kernel: "6.1.0-18-amd64".into(),
        cpu_model: None,
        cpus: 2,
        lab: "built-in lab t".into(),
        virtual_lab: true,
        io: BenchIo::Afpacket,
        traffic_profile: Traffic {
            sizes: sizes.into(),
            ..Traffic::inet4()
        },
        settings: TrialSettings {
            duration: Duration::from_secs(3),
            trim_head: 1,
            trim_tail: 1,
            interval: Duration::from_secs(1),
        },
        config_text: String::new(),
        interrupts: None,
        cpu_plan: None,
        generator: None,
    }
}

/// A run file as pktlab writes it: its "run" line, then its "result"
/// (3 s offered `off` and forwarded `fwd` pps).
fn run_file(h: RunHeader, fwd: f64, off: f64) -> String {
    run_record(h, fwd, off).to_jsonl()
}

/// A finished run: 3 s offered `off` and forwarded `fwd` pps.
pub fn run_record(h: RunHeader, fwd: f64, off: f64) -> Run {
    let (sent, got) = ((off * 3.0) as u64, (fwd * 3.0) as u64);
    let tx = serde_json::json!({"backend": "afpacket", "packets": sent, "bytes": 0,
        "seconds": 3.0, "pps": off, "l2_bps": 0.0, "l1_bps": 0.0, "tx_errors": 0,
        "interrupted": false, "threads": [], "iface": null});
    let rx = serde_json::json!({"backend": "afpacket", "packets": got, "bytes": 0,
        "seconds": 3.0, "pps": fwd, "l2_bps": 0.0, "l1_bps": 0.0, "flows": 2000,
        "streams": 2000, "lost": sent - got, "out_of_order": 0, "duplicates": 0,
        "foreign": 0, "untracked": 0, "ring_drops": 0, "bad_stamps": 0,
        "latency_ns": null, "interrupted": false, "threads": [], "iface": null});
    let result = RunResult {
        forwarded_pps: fwd,
        offered_pps: off,
        lost: sent - got,
        late: None,
        loss_ratio: 1.0 - fwd / off,
        rx_samples: vec![fwd],
        tx_samples: vec![off],
        tx: serde_json::from_value(tx).unwrap(),
        rx: serde_json::from_value(rx).unwrap(),
        lab_counters: Vec::new(),
        qdiscs: Vec::new(),
        ethtool_drops: Vec::new(),
        softnet: Vec::new(),
        dut_backlog_drops: None,
        drops: None,
        latency_note: None,
        requested_pps: None,
        finished_at: Some(1_700_000_100),
        directions: Vec::new(),
    };
    Run {
        header: h,
        seconds: Vec::new(),
        result,
    }
}

/// A `pktlab bench` results folder `dir`: env.json (created at
/// `created_at`) and runs `(config, iteration, forwarded)` of inet4 64.
pub fn bench_folder(dir: &Path, created_at: u64, runs: &[(&str, usize, f64)]) -> PathBuf {
    std::fs::create_dir_all(dir.join("runs")).unwrap();
    std::fs::write(
        dir.join("env.json"),
        serde_json::to_string_pretty(&env(created_at, None)).unwrap(),
    )
    .unwrap();
    for &(config, i, fwd) in runs {
        let h = header(config, "inet4", i, 1_700_000_000 + i as u64, "64");
        std::fs::write(
            dir.join("runs").join(format!("{config}.inet4.{i}.jsonl")),
            run_file(h, fwd, fwd * 1.25),
        )
        .unwrap();
    }
    dir.to_path_buf()
}

/// The settings of the searches of [`rfc2544_folder`]: throughput only,
/// two goals, 1 s trials that decide a load alone, a 5 % width.
pub fn search_settings() -> MlrSettings {
    let goal = |loss: f64| Goal {
        width: 0.05,
        duration_sum: 1.0,
        ..Goal::new(loss, 0.5)
    };
    MlrSettings {
        throughput: true,
        frame_loss: false,
        latency: false,
        back_to_back: false,
        goals: vec![goal(0.0), goal(0.005)],
        max: MaxLoad::Pps(1e6),
        min_fraction: 0.001,
        latency_loads: vec![0.9],
        latency_trials: 1,
        b2b_trials: 1,
        b2b_trial_s: 1.0,
        warmup_s: 0.0,
    }
}

/// The trials of a whole search of `config` on a DUT that forwards
/// `ndr` pps and drops the rest: what the search asks for, as a trial
/// line of each.
pub fn search_trials(settings: &MlrSettings, config: &str, ndr: f64, t0: u64) -> Vec<TrialLine> {
    let mut run = SearchRun::replay(settings, "64", Vec::new()).unwrap();
    let mut lines = Vec::new();
    while let Some(req) = run.next() {
        let load = req.load.unwrap();
        let tx = (load * req.secs) as u64;
        let rx = tx.min((ndr * req.secs) as u64);
        let line = TrialLine {
            config: config.into(),
            traffic: "inet4".into(),
            size: "64".into(),
            test: THROUGHPUT.into(),
            iteration: 1,
            intended_pps: Some(load),
            offered_pps: load,
            duration_s: req.secs,
            tx,
            rx,
            lost: tx - rx,
            late: Some(0),
            loss_ratio: (tx - rx) as f64 / tx as f64,
            generator_limited: false,
            max_pps: 1e6,
            classes: Vec::new(),
            started_at: t0 + lines.len() as u64,
            burst: None,
            repetition: None,
            load_fraction: None,
            latency_ns: None,
            drops: None,
            latency_note: None,
            directions: Vec::new(),
        };
        lines.push(run.add(line).unwrap().clone());
    }
    lines
}

/// A `pktlab rfc2544` results folder: one search per `(config, ndr)`,
/// its trials those of a search of a DUT that forwards `ndr` pps, two
/// goals each, a latency at 90 % of the PDR for the first (`rfc2544.json`
/// as the search writes it: the bounds are given here as they are).
pub fn rfc2544_folder(
    dir: &Path,
    created_at: u64,
    dut_uname: Option<&str>,
    searches: &[(&str, f64)],
) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("env.json"),
        serde_json::to_string_pretty(&env(created_at, dut_uname)).unwrap(),
    )
    .unwrap();
    let folder = ResultsDir {
        path: dir.to_path_buf(),
    };
    let settings = search_settings();
    settings.write(&folder).unwrap();
    for (k, &(config, ndr)) in searches.iter().enumerate() {
        for line in search_trials(&settings, config, ndr, 1_700_000_500 + 100 * k as u64) {
            trials::append(&folder, &line).unwrap();
        }
    }
    let goal = |loss: f64, lower: f64| GoalBounds {
        loss_ratio: loss,
        exceed_ratio: 0.5,
        lower_pps: Some(lower),
        upper_pps: Some(lower * 1.005),
        conditional_throughput_pps: Some(lower),
        lower_intended_pps: Some(lower),
        upper_intended_pps: Some(lower * 1.005),
        hit_max: false,
        generator_limited: false,
        tester_limited: false,
        loss_inversion: false,
        complete: true,
        directions: Vec::new(),
    };
    let mut report = Report::default();
    for &(config, ndr) in searches {
        report.throughput.push(Throughput {
            config: config.into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            max_pps: 1e6,
            goals: vec![goal(0.0, ndr), goal(0.005, ndr * 1.1)],
            generator_limited: false,
            tester_limited: false,
            trials: 12,
            trial_seconds: 12.0,
        });
    }
    if let Some(&(config, ndr)) = searches.first() {
        report.latency.push(LatencyResult {
            config: config.into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            load_fraction: 0.9,
            load_pps: ndr * 0.99,
            offered_pps: ndr * 0.99,
            trials: 3,
            frames: 3000,
            lost: 0,
            min_ns: 1500,
            p50_ns: 2500,
            p90_ns: 3500,
            p99_ns: 7500,
            p999_ns: 9500,
            max_ns: 12000,
            clock: "CLOCK_MONOTONIC".into(),
            latency_note: None,
        });
    }
    std::fs::write(
        dir.join("rfc2544.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    dir.to_path_buf()
}
