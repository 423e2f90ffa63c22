//! A campaign records itself from the results it holds in memory, and
//! the record is the one importing its written folder makes: the same
//! campaign (so importing it after adds nothing), the same runs, goals
//! and latencies. The folders are written by pktlab's own writers from
//! those in-memory results.

mod common;

use std::path::Path;

use common::{env, header, run_record, search_settings, search_trials};
use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::{ResultsDir, CAMPAIGN_FILE};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Finished, Sink, Stage};
use pktlab_history::commands::import_folders;
use pktlab_history::import::folder::{read_folder, Results};
use pktlab_history::record::{Recorded, Source, StatefulRecord};
use pktlab_history::sink::record_from_memory;
use pktlab_history::{Database, DbTarget, Recorder};
use pktlab_search::mlr::record as trials;
use pktlab_search::mlr::results::Searches;
use pktlab_search::stateful::searches::Bounds;
use pktlab_search::stateful::teardown::Teardown;
use pktlab_search::stateful::{StatefulReport, StatefulRun, StatefulSettings};

/// A new results folder `dir` holding `campaign.toml` (`text`) and the
/// `env.json` of a campaign created at `created_at`.
fn folder(dir: &Path, text: &str, created_at: u64) -> (ResultsDir, Plan) {
    let folder = ResultsDir::create(dir).unwrap();
    folder.write(CAMPAIGN_FILE, text.as_bytes()).unwrap();
    folder.write_env(&env(created_at, None)).unwrap();
    let plan = Plan::from_file(&CampaignFile::parse(text).unwrap(), 2).unwrap();
    (folder, plan)
}

/// Hands `results` to `recorder` after a run and at the end, as a
/// campaign does; what recording did.
fn hand<R>(recorder: &Recorder, plan: &Plan, folder: &ResultsDir, results: &R) -> Recorded
where
    Recorder: Sink<R>,
{
    let (env, env_text) = folder.env_and_text().unwrap();
    for stage in [Stage::AfterRun, Stage::End] {
        let f = Finished {
            plan,
            env: &env,
            env_text: &env_text,
            folder,
            results,
            stage,
        };
        recorder.take(&f).unwrap();
        if stage == Stage::AfterRun {
            // Only the campaign's end is recorded.
            assert!(recorder.outcome().is_none());
        }
    }
    recorder.outcome().expect("recorded at the end").unwrap()
}

fn sqlite(dir: &Path) -> DbTarget {
    DbTarget::Sqlite(dir.join("history.sqlite"))
}

#[test]
fn a_bench_campaign_s_record_from_memory_is_its_folder_s() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, plan) = folder(&tmp.path().join("b"), "name = \"nightly\"\n", 1_700_001_000);
    let records: Vec<_> = [
        ("nft", 1, 700.0),
        ("forwarding", 2, 1010.0),
        ("forwarding", 1, 1000.0),
    ]
    .iter()
    .map(|&(config, i, fwd)| {
        let h = header(config, "inet4", i, 1_700_000_000 + i as u64, "64");
        run_record(h, fwd, fwd * 1.25)
    })
    .collect();
    for r in &records {
        dir.write_run(r).unwrap();
    }
    let runs = Runs::of(&plan, records);
    let target = sqlite(tmp.path());
    let recorder = Recorder::new(target.clone(), Some("fix-7".into()));
    let done = hand(&recorder, &plan, &dir, &runs);
    assert_eq!(
        (done.new_campaign, done.runs_added, done.label.as_str()),
        (true, 3, "fix-7")
    );

    let (env, env_text) = dir.env_and_text().unwrap();
    let f = Finished {
        plan: &plan,
        env: &env,
        env_text: &env_text,
        folder: &dir,
        results: &runs,
        stage: Stage::End,
    };
    let memory = record_from_memory(&f, Results::Runs(&runs.records), Some("fix-7")).unwrap();
    assert_eq!(memory, read_folder(&dir.path, Some("fix-7")).unwrap());
    assert_eq!(
        (memory.source, memory.name.as_str(), memory.started_at),
        (Source::Bench, "nightly", Some(1_700_001_000))
    );
    let values: Vec<(&str, i64, Option<f64>, Option<f64>)> = memory
        .runs
        .iter()
        .map(|r| {
            (
                r.config.as_str(),
                r.iteration,
                r.forwarded_pps,
                r.offered_pps,
            )
        })
        .collect();
    assert_eq!(
        values,
        [
            ("forwarding", 1, Some(1000.0), Some(1250.0)),
            ("forwarding", 2, Some(1010.0), Some(1262.5)),
            ("nft", 1, Some(700.0), Some(875.0)),
        ]
    );

    // Importing the folder finds the campaign recorded, whole.
    let said = import_folders(&target, std::slice::from_ref(&dir.path), None).unwrap();
    assert!(
        said.contains(": already in the history, nothing added (bench 'nightly', label 'fix-7')"),
        "{said}"
    );
    let mut db = Database::open(&target, false).unwrap();
    assert_eq!(db.campaigns().unwrap().len(), 1);
    let stored: Vec<_> = db.runs().unwrap().into_iter().map(|s| s.run).collect();
    assert_eq!(stored, memory.runs);
}

#[test]
fn an_rfc2544_campaign_s_record_from_memory_is_its_folder_s() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "name = \"searches\"\n";
    let (dir, plan) = folder(&tmp.path().join("s"), text, 1_700_002_000);
    let settings = search_settings();
    settings.write(&dir).unwrap();
    let mut s = Searches::new(settings.clone());
    // Two whole searches, and a third cut short after its first trials.
    for (k, (config, ndr)) in [("forwarding", 500_000.0), ("nft", 300_000.0)]
        .into_iter()
        .enumerate()
    {
        s.trials.extend(search_trials(
            &settings,
            config,
            ndr,
            1_700_000_500 + 100 * k as u64,
        ));
    }
    s.trials.extend(
        search_trials(&settings, "cut", 200_000.0, 1_700_000_800)
            .into_iter()
            .take(2),
    );
    s.refresh().unwrap();
    for line in &s.trials {
        trials::append(&dir, line).unwrap();
    }
    s.report.write(&dir).unwrap();
    assert_eq!(s.report.throughput.len(), 3);

    let target = sqlite(tmp.path());
    let recorder = Recorder::new(target.clone(), None);
    let done = hand(&recorder, &plan, &dir, &s);
    // The cut search is left out until --resume finishes it.
    assert_eq!((done.new_campaign, done.runs_added), (true, 2));
    // No --label: this host's kernel in env.json.
    assert_eq!(done.label, "6.1.0-18-amd64");

    let (env, env_text) = dir.env_and_text().unwrap();
    let f = Finished {
        plan: &plan,
        env: &env,
        env_text: &env_text,
        folder: &dir,
        results: &s,
        stage: Stage::End,
    };
    let memory = record_from_memory(&f, Results::Searches(&s, &plan.name), None).unwrap();
    assert_eq!(memory, read_folder(&dir.path, None).unwrap());
    assert_eq!(
        (memory.source, memory.name.as_str()),
        (Source::Rfc2544, "searches")
    );
    let configs: Vec<&str> = memory.runs.iter().map(|r| r.config.as_str()).collect();
    assert_eq!(configs, ["forwarding", "nft"]);
    for (run, ndr) in memory.runs.iter().zip([500_000.0, 300_000.0]) {
        // The DUT forwards `ndr` and drops the rest: the no-loss goal's
        // bounds hold it.
        let g = &run.goals[0];
        assert_eq!(g.loss_ratio, 0.0);
        let (lower, upper) = (g.lower_pps.unwrap(), g.upper_pps.unwrap());
        assert!(lower <= ndr && ndr < upper, "{lower} {ndr} {upper}");
        assert_eq!(run.forwarded_pps, None);
    }

    let said = import_folders(&target, std::slice::from_ref(&dir.path), None).unwrap();
    assert!(
        said.contains(
            ": already in the history, nothing added (rfc2544 'searches', label '6.1.0-18-amd64')"
        ),
        "{said}"
    );
}

/// A search's bounds as `rfc9693.json` holds them.
fn bounds(lower: f64, upper: Option<f64>, generator_limited: bool) -> Bounds {
    Bounds {
        lower: Some(lower),
        upper,
        min: 1.0,
        max: 3750.0,
        hit_max: upper.is_none(),
        generator_limited,
        complete: !generator_limited,
        lower_intended: Some(lower),
        upper_intended: upper,
    }
}

#[test]
fn an_rfc9693_campaign_s_record_from_memory_is_its_folder_s() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "name = \"conntrack\"\n";
    let (dir, plan) = folder(&tmp.path().join("c"), text, 1_700_003_000);
    let mut report = StatefulReport::new(StatefulSettings::default());
    report.runs.push(StatefulRun {
        config: "nft-stateful".into(),
        traffic: "inet4".into(),
        iteration: 1,
        conntrack_max: Some(3000),
        udp_timeout_s: Some(30),
        capacity: Some(bounds(2996.0, Some(3002.0), false)),
        count_at_capacity: Some(2996),
        rate: Some(bounds(185_718.25, Some(290_839.5), true)),
        rate_connections: Some(2996),
        teardown: Some(Teardown::Measured {
            connections: 2996,
            full_s: 0.0739,
            empty_s: 0.0049,
            rate_per_s: 145_065.125,
        }),
        throughput: Some(bounds(95_000.5, Some(96_000.0), false)),
        throughput_connections: Some(2996),
        ..StatefulRun::default()
    });
    // A run whose tear-down rate could not be measured keeps its rate.
    report.runs.push(StatefulRun {
        config: "nat44".into(),
        traffic: "inet4".into(),
        iteration: 1,
        conntrack_max: Some(262_144),
        rate: Some(bounds(200_137.0, None, false)),
        rate_connections: Some(10_000),
        teardown: Some(Teardown::NotMeasured {
            why: "within the spread".into(),
        }),
        ..StatefulRun::default()
    });
    report.write(&dir).unwrap();

    let target = sqlite(tmp.path());
    let recorder = Recorder::new(target.clone(), Some("fw-v42".into()));
    let done = hand(&recorder, &plan, &dir, &report);
    assert_eq!(
        (done.new_campaign, done.runs_added, done.label.as_str()),
        (true, 2, "fw-v42")
    );
    let (env, env_text) = dir.env_and_text().unwrap();
    let f = Finished {
        plan: &plan,
        env: &env,
        env_text: &env_text,
        folder: &dir,
        results: &report,
        stage: Stage::End,
    };
    let results = Results::Stateful(&report, Some(&plan), &plan.name);
    let memory = record_from_memory(&f, results, Some("fw-v42")).unwrap();
    assert_eq!(memory, read_folder(&dir.path, Some("fw-v42")).unwrap());
    assert_eq!(
        (memory.source, memory.name.as_str(), memory.started_at),
        (Source::Rfc9693, "conntrack", Some(1_700_003_000))
    );
    let row = |test: &str, unit: &str, value: f64, upper: Option<f64>| StatefulRecord {
        test: test.into(),
        unit: unit.into(),
        value: Some(value),
        upper,
        connections: None,
        dut_limit: Some(3000),
        hit_max: upper.is_none(),
        generator_limited: false,
        complete: true,
    };
    let nft = &memory.runs[0];
    assert_eq!(
        (nft.config.as_str(), nft.traffic.as_str(), nft.size.as_str()),
        ("nft-stateful", "inet4", "64")
    );
    assert_eq!((nft.forwarded_pps, nft.goals.len()), (None, 0));
    assert_eq!(
        nft.stateful,
        [
            row("capacity", "connections", 2996.0, Some(3002.0)),
            StatefulRecord {
                connections: Some(2996),
                generator_limited: true,
                complete: false,
                ..row("rate", "connections/s", 185_718.25, Some(290_839.5))
            },
            StatefulRecord {
                connections: Some(2996),
                hit_max: false,
                ..row("teardown", "connections/s", 145_065.125, None)
            },
            StatefulRecord {
                connections: Some(2996),
                ..row("throughput", "pps each way", 95_000.5, Some(96_000.0))
            },
        ]
    );
    assert_eq!(
        memory.runs[1].stateful,
        [StatefulRecord {
            connections: Some(10_000),
            dut_limit: Some(262_144),
            ..row("rate", "connections/s", 200_137.0, None)
        }]
    );

    // The database gives back the same figures; importing adds nothing.
    let mut db = Database::open(&target, false).unwrap();
    let stored: Vec<_> = db.runs().unwrap().into_iter().map(|s| s.run).collect();
    assert_eq!(stored, memory.runs);
    let said = import_folders(&target, std::slice::from_ref(&dir.path), None).unwrap();
    assert!(
        said.contains(
            ": already in the history, nothing added (rfc9693 'conntrack', label 'fw-v42')"
        ),
        "{said}"
    );
}
