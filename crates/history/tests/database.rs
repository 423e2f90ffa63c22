//! The history database against real databases: SQLite files and a
//! PostgreSQL server the tests start themselves (`common::pg`). Every case
//! runs against both (`both!`), so the two backends are held to the same
//! figures.
//!
//! Two cases run this test binary again as child processes (the ignored
//! `child` test below): writers racing each other, and a writer killed
//! with SIGKILL in the middle of its transaction.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bench_folder, campaign, fresh, rfc2544_folder, run, search, Backend};
use pktlab_history::db::schema;
use pktlab_history::import::folder::read_folder;
use pktlab_history::jumpavg::Kind;
use pktlab_history::record::{Recorded, RunRecord, Source, StatefulRecord};
use pktlab_history::series::{self, Filter, Metric, OrderBy};
use pktlab_history::{trend, Database, DbTarget, HistoryError};

fn open(t: &DbTarget) -> Database {
    Database::open(t, true).unwrap_or_else(|e| panic!("open {}: {e}", t.display()))
}

fn records_and_reads_back(b: Backend) {
    let t = fresh(b);
    let mut db = open(&t.target);
    let c1 = campaign(
        "c1",
        "6.1.0",
        vec![
            run("fw", 1, 1000.5),
            run("fw", 2, 990.25),
            run("nft", 1, 500.0),
        ],
    );
    let r = db.record(&c1).unwrap();
    assert_eq!(
        r,
        Recorded {
            campaign_id: r.campaign_id,
            new_campaign: true,
            runs_added: 3,
            label: "6.1.0".into()
        }
    );
    let mut c2 = campaign("c2", "6.12.0", vec![search("fw", 1, 800_000.0)]);
    c2.source = Source::Rfc2544;
    c2.started_at = None;
    c2.host = None;
    let r2 = db.record(&c2).unwrap();
    assert_ne!(r2.campaign_id, r.campaign_id);
    // Read back by another connection: exactly what went in.
    let mut db = open(&t.target);
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 4);
    let got: Vec<_> = runs.iter().map(|s| s.run.clone()).collect();
    assert_eq!(got, [c1.runs.clone(), c2.runs.clone()].concat());
    assert_eq!(runs[3].label, "6.12.0");
    assert_eq!(runs[3].source, Source::Rfc2544);
    assert_eq!(
        (runs[0].campaign_started_at, runs[3].campaign_started_at),
        (Some(1_700_000_000), None)
    );
    let campaigns = db.campaigns().unwrap();
    let summary: Vec<(i64, &str, i64, Option<&str>)> = campaigns
        .iter()
        .map(|c| (c.id, c.label.as_str(), c.runs, c.host.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (r.campaign_id, "6.1.0", 3, Some("h1")),
            (r2.campaign_id, "6.12.0", 1, None)
        ]
    );
    let now = pktlab_history::unix_now();
    assert!((now - campaigns[0].recorded_at).abs() < 60);
}

fn recording_twice_adds_nothing(b: Backend) {
    let t = fresh(b);
    let mut db = open(&t.target);
    let c = campaign("same", "a", vec![run("fw", 1, 10.0), run("fw", 2, 11.0)]);
    let first = db.record(&c).unwrap();
    let again = db.record(&c).unwrap();
    assert_eq!((again.new_campaign, again.runs_added), (false, 0));
    assert_eq!(again.campaign_id, first.campaign_id);
    // The campaign resumed: one run more; the label it had stays.
    let mut more = campaign(
        "same",
        "b",
        vec![run("fw", 1, 10.0), run("fw", 2, 11.0), run("fw", 3, 12.0)],
    );
    more.name = "renamed".into();
    let r = db.record(&more).unwrap();
    assert_eq!(
        (r.new_campaign, r.runs_added, r.label.as_str()),
        (false, 1, "a")
    );
    let runs = db.runs().unwrap();
    assert_eq!(
        runs.iter()
            .map(|r| r.run.forwarded_pps.unwrap())
            .collect::<Vec<_>>(),
        [10.0, 11.0, 12.0]
    );
    assert_eq!(db.campaigns().unwrap().len(), 1);
}

fn import_folders_idempotently(b: Backend) {
    let t = fresh(b);
    let tmp = tempfile::tempdir().unwrap();
    let bench = bench_folder(
        &tmp.path().join("bench"),
        1_700_001_000,
        &[
            ("forwarding", 1, 1000.0),
            ("forwarding", 2, 1010.0),
            ("nft", 1, 700.0),
        ],
    );
    let rfc = rfc2544_folder(
        &tmp.path().join("rfc"),
        1_700_002_000,
        Some("Linux dut1 6.12.9-amd64 #1 SMP PREEMPT_DYNAMIC Debian x86_64 GNU/Linux"),
        &[("forwarding", 500_000.0), ("nft", 300_000.0)],
    );
    // A third search, cut short: bounds in rfc2544.json, but its trials
    // (none here) ask for more.
    let report_path = rfc.join("rfc2544.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let mut cut = report["throughput"][0].clone();
    cut["config"] = "cut".into();
    report["throughput"].as_array_mut().unwrap().push(cut);
    std::fs::write(&report_path, report.to_string()).unwrap();
    let mut db = open(&t.target);
    let rb = read_folder(&bench, None).unwrap();
    assert_eq!(
        (rb.source, rb.label.as_str(), rb.name.as_str()),
        (Source::Bench, "6.1.0-18-amd64", "nightly")
    );
    assert_eq!(
        rb.results_dir,
        std::fs::canonicalize(&bench).unwrap().display().to_string()
    );
    let rr = read_folder(&rfc, Some("fix-42")).unwrap();
    assert_eq!((rr.source, rr.label.as_str()), (Source::Rfc2544, "fix-42"));
    // Without --label: the DUT's release, from its uname -a.
    assert_eq!(read_folder(&rfc, None).unwrap().label, "6.12.9-amd64");
    assert_eq!(db.record(&rb).unwrap().runs_added, 3);
    assert_eq!(db.record(&rr).unwrap().runs_added, 2);
    // Importing again adds nothing.
    for rec in [
        read_folder(&bench, None).unwrap(),
        read_folder(&rfc, Some("other")).unwrap(),
    ] {
        let r = db.record(&rec).unwrap();
        assert_eq!((r.new_campaign, r.runs_added), (false, 0));
    }
    let runs = db.runs().unwrap();
    assert_eq!(runs.len(), 5);
    let fwd: Vec<(String, i64, Option<f64>, Option<f64>)> = runs
        .iter()
        .map(|r| {
            (
                r.run.config.clone(),
                r.run.iteration,
                r.run.forwarded_pps,
                r.run.offered_pps,
            )
        })
        .collect();
    assert_eq!(
        fwd[..3],
        [
            ("forwarding".to_string(), 1, Some(1000.0), Some(1250.0)),
            ("forwarding".to_string(), 2, Some(1010.0), Some(1262.5)),
            ("nft".to_string(), 1, Some(700.0), Some(875.0)),
        ]
    );
    let s = &runs[3].run;
    assert_eq!(
        (s.config.as_str(), s.forwarded_pps, s.size.as_str()),
        ("forwarding", None, "64")
    );
    assert_eq!(Metric::parse("ndr").unwrap().value(s), Some(500_000.0));
    assert_eq!(Metric::parse("pdr").unwrap().value(s), Some(550_000.0));
    assert_eq!(Metric::parse("p99_ns@90%").unwrap().value(s), Some(7500.0));
    assert_eq!(runs[4].run.latencies.len(), 0);
    // The campaign resumed later: its new run is added, and only it.
    bench_folder(&bench, 1_700_001_000, &[("nft", 2, 710.0)]);
    let r = db.record(&read_folder(&bench, None).unwrap()).unwrap();
    assert_eq!((r.new_campaign, r.runs_added), (false, 1));
    assert_eq!(db.runs().unwrap().len(), 6);
}

/// Runs the `child` test of this binary with `mode`.
fn spawn_writer(
    t: &common::TestDb,
    mode: &str,
    tag: &str,
    go: &std::path::Path,
) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HISTORY_CHILD", mode)
        .env("HISTORY_DB", &t.text)
        .env("HISTORY_TAG", tag)
        .env("HISTORY_GO", go)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const RACE: usize = 12;

fn concurrent_writers_both_land(b: Backend) {
    let t = fresh(b);
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("go");
    // Two writers of different campaigns, and two of the same one.
    let kids: Vec<_> = [("many", "a"), ("many", "b"), ("one", "x"), ("one", "y")]
        .iter()
        .map(|(mode, tag)| spawn_writer(&t, mode, tag, &go))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&go, "").unwrap();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut db = open(&t.target);
    let campaigns = db.campaigns().unwrap();
    assert_eq!(campaigns.len(), 2 * RACE + 1, "{campaigns:?}");
    assert!(campaigns.iter().all(|c| c.runs == 3));
    assert_eq!(db.runs().unwrap().len(), (2 * RACE + 1) * 3);
}

fn killed_mid_write_leaves_nothing(b: Backend) {
    let t = fresh(b);
    // The schema exists before the child starts, so that what is left
    // out is the campaign alone.
    drop(open(&t.target));
    let tmp = tempfile::tempdir().unwrap();
    let mut k = spawn_writer(&t, "hang", "k", &tmp.path().join("unused"));
    let mut lines = BufReader::new(k.stdout.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let line = lines
            .next()
            .expect("the child ended before its transaction")
            .unwrap();
        // libtest writes "test child ... " before the test's own output.
        if line.ends_with("IN TRANSACTION") {
            break;
        }
        assert!(Instant::now() < deadline, "no transaction in 120 s");
    }
    // It has written 10 of its 40 runs, uncommitted.
    unsafe {
        libc::kill(k.id() as i32, libc::SIGKILL);
    }
    let status = k.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    let mut db = open(&t.target);
    assert_eq!(db.campaigns().unwrap().len(), 0);
    assert_eq!(db.runs().unwrap().len(), 0);
    // The database is whole: the same record lands in full.
    let r = db.record(&hanging_record()).unwrap();
    assert_eq!((r.new_campaign, r.runs_added), (true, 40));
}

fn hanging_record() -> pktlab_history::record::CampaignRecord {
    campaign(
        "killed",
        "k",
        (1..=40).map(|i| run("fw", i, 100.0 + i as f64)).collect(),
    )
}

/// Raw access to a test database, under the history's own code.
fn raw(t: &common::TestDb, sql: &str) {
    let r = match &t.target {
        DbTarget::Sqlite(p) => {
            let mut c = pktlab_history::db::sqlite::open(p, true).unwrap();
            pktlab_history::db::sqlite::transaction(&mut c, true, &mut |c| c.batch(sql))
        }
        DbTarget::Postgres(u) => {
            let mut c = pktlab_history::db::postgres::connect(u).unwrap();
            pktlab_history::db::postgres::transaction(&mut c, &mut |c| c.batch(sql))
        }
    };
    r.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn newer_schema_is_refused(b: Backend) {
    let t = fresh(b);
    open(&t.target)
        .record(&campaign("c", "a", vec![run("fw", 1, 1.0)]))
        .unwrap();
    raw(&t, "UPDATE pktlab_history_schema SET version = 99");
    let e = Database::open(&t.target, true)
        .err()
        .expect("a newer schema opened");
    assert!(
        matches!(
            e,
            HistoryError::Newer {
                theirs: 99,
                ours: 3,
                ..
            }
        ),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.contains("has schema version 99, newer than this pktlab's 3"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);
    // Refused before anything is written: the row is still there.
    raw(&t, "UPDATE pktlab_history_schema SET version = 3");
    assert_eq!(open(&t.target).runs().unwrap().len(), 1);
}

fn older_schema_is_migrated(b: Backend) {
    let t = fresh(b);
    // A database at version 1, with a campaign in it.
    let step1 = |c: &mut dyn pktlab_history::db::sql::Conn| schema::migrate(c, None, 1);
    match &t.target {
        DbTarget::Sqlite(p) => {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let mut c = pktlab_history::db::sqlite::open(p, true).unwrap();
            pktlab_history::db::sqlite::transaction(&mut c, true, &mut |c| step1(c)).unwrap();
        }
        DbTarget::Postgres(u) => {
            let mut c = pktlab_history::db::postgres::connect(u).unwrap();
            pktlab_history::db::postgres::transaction(&mut c, &mut |c| step1(c)).unwrap();
        }
    }
    raw(
        &t,
        "INSERT INTO campaigns (identity, source, name, label, recorded_at, results_dir) VALUES ('old', 'pps', 'RAW', 'r1', 5, '/x')",
    );
    let mut db = open(&t.target);
    db.set_label_order(&["r2".into(), "r1".into()]).unwrap();
    assert_eq!(
        db.label_positions().unwrap(),
        HashMap::from([("r2".to_string(), 0), ("r1".to_string(), 1)])
    );
    let c = db.campaigns().unwrap();
    assert_eq!((c.len(), c[0].label.as_str(), c[0].runs), (1, "r1", 0));
    // Ordering again moves a label; others keep theirs.
    db.set_label_order(&["r1".into()]).unwrap();
    assert_eq!(db.label_positions().unwrap()["r1"], 0);
    assert_eq!(db.label_positions().unwrap()["r2"], 0);
    // Version 3's table is there: a stateful run lands and reads back.
    let mut c = campaign("new", "r3", vec![stateful_run(1, 2996.0)]);
    c.source = Source::Rfc9693;
    db.record(&c).unwrap();
    let runs = db.runs().unwrap();
    assert_eq!(runs[0].run, c.runs[0]);
}

/// An rfc9693 run of `nft-stateful` whose capacity is `capacity`.
fn stateful_run(iteration: i64, capacity: f64) -> RunRecord {
    let rate = StatefulRecord {
        test: "rate".into(),
        unit: "connections/s".into(),
        value: Some(185_718.333_333_333_3),
        upper: Some(290_839.1),
        connections: Some(10_000),
        dut_limit: Some(3000),
        hit_max: false,
        generator_limited: true,
        complete: false,
    };
    RunRecord {
        forwarded_pps: None,
        offered_pps: None,
        loss_ratio: None,
        stateful: vec![
            StatefulRecord {
                test: "capacity".into(),
                unit: "connections".into(),
                value: Some(capacity),
                upper: Some(capacity + 6.0),
                connections: None,
                complete: true,
                ..rate.clone()
            },
            rate.clone(),
            StatefulRecord {
                test: "teardown".into(),
                value: Some(145_065.0),
                upper: None,
                generator_limited: false,
                complete: true,
                ..rate
            },
        ],
        ..run("nft-stateful", iteration, 0.0)
    }
}

fn stateful_results_read_back_exact(b: Backend) {
    let t = fresh(b);
    let mut db = open(&t.target);
    let mut first = stateful_run(1, 2996.0);
    // A search that found no lower bound, and a test this pktlab does not
    // run: a row like the others, no new column.
    first.stateful[1].value = None;
    first.stateful.push(StatefulRecord {
        test: "throughput".into(),
        unit: "pps".into(),
        value: Some(1.5e6),
        upper: Some(1.51e6),
        connections: Some(10_000),
        dut_limit: None,
        hit_max: true,
        generator_limited: false,
        complete: true,
    });
    let mut c = campaign("s1", "fw-1", vec![first, stateful_run(2, 3000.0)]);
    c.source = Source::Rfc9693;
    c.name = "rfc9693".into();
    assert_eq!(db.record(&c).unwrap().runs_added, 2);
    let mut db = open(&t.target);
    let runs = db.runs().unwrap();
    let got: Vec<_> = runs.iter().map(|s| s.run.clone()).collect();
    assert_eq!(got, c.runs);
    assert_eq!(runs[0].source, Source::Rfc9693);
    assert_eq!(got[0].stateful[3].test, "throughput");
    assert_eq!(got[1].stateful[1].value, Some(185_718.333_333_333_3));
    let listed = db.campaigns().unwrap();
    assert_eq!(
        (listed[0].source, listed[0].name.as_str(), listed[0].runs),
        (Source::Rfc9693, "rfc9693", 2)
    );
    // Each result is a metric of its own, its upper bound another.
    let s = &runs[1].run;
    assert_eq!(Metric::parse("capacity").unwrap().value(s), Some(3000.0));
    assert_eq!(
        Metric::parse("capacity_upper").unwrap().value(s),
        Some(3006.0)
    );
    assert_eq!(Metric::parse("teardown").unwrap().value(s), Some(145_065.0));
    assert_eq!(Metric::parse("teardown_upper").unwrap().value(s), None);
    assert_eq!(Metric::parse("rate").unwrap().unit(), "connections/s");
    assert_eq!(Metric::parse("capacity").unwrap().unit(), "connections");
    let names: Vec<String> = Metric::headline(s).iter().map(|m| m.name()).collect();
    assert_eq!(names, ["capacity", "rate", "teardown"]);
}

/// A lower capacity is a regression, a higher one a progression, found
/// as for a forwarding rate: the "labels" series of jumpavg's tests as
/// table capacities.
fn stateful_trend_flags_a_lower_capacity(b: Backend) {
    let t = fresh(b);
    let mut db = open(&t.target);
    let labels: [(&str, &[f64]); 6] = [
        ("r5", &[720e3, 716e3, 722e3]),
        ("r1", &[788e3, 790e3, 785e3]),
        ("r2", &[791e3, 786e3, 789e3]),
        ("r3", &[820e3, 824e3, 819e3, 822e3]),
        ("r4", &[818e3, 823e3]),
        ("r6", &[719e3, 721e3, 717e3]),
    ];
    for (label, values) in labels {
        let runs = values
            .iter()
            .enumerate()
            .map(|(i, &v)| stateful_run(i as i64 + 1, v))
            .collect();
        let mut c = campaign(label, label, runs);
        c.source = Source::Rfc9693;
        db.record(&c).unwrap();
    }
    let runs = db.runs().unwrap();
    let only = Filter {
        metric: Some(Metric::parse("capacity").unwrap()),
        ..Filter::default()
    };
    let all = series::build(&runs, &only, OrderBy::Label, &HashMap::new());
    assert_eq!(all.len(), 1);
    assert_eq!(
        (all[0].key.title(), all[0].key.metric.as_str()),
        ("nft-stateful inet4 64".to_string(), "capacity")
    );
    let tr = trend::trend(&all[0]).unwrap();
    let groups: Vec<(&str, Kind, f64)> = tr
        .groups
        .iter()
        .map(|g| (g.first_label.as_str(), g.kind, g.average))
        .collect();
    // As jumpavg 0.4.2 groups them (src/jumpavg/tests.rs, "labels").
    assert_eq!(
        groups,
        [
            ("r1", Kind::Normal, 788166.6666666666),
            ("r3", Kind::Progression, 821000.0),
            ("r5", Kind::Regression, 719166.6666666667),
        ]
    );
    assert_eq!(tr.bits, 171.02730835887456);
    // Without --metric every result is a series of its own.
    let every = series::build(&runs, &Filter::default(), OrderBy::Label, &HashMap::new());
    let metrics: Vec<&str> = every.iter().map(|s| s.key.metric.as_str()).collect();
    assert_eq!(metrics, ["capacity", "rate", "teardown"]);
}

fn other_tables_are_not_ours(b: Backend) {
    let t = fresh(b);
    if let DbTarget::Sqlite(p) = &t.target {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    raw(&t, "CREATE TABLE invoices (n BIGINT)");
    let e = Database::open(&t.target, true)
        .err()
        .expect("a foreign database opened");
    assert!(!e.is_usage());
    assert!(
        e.to_string()
            .ends_with("not a pktlab history database: it holds other tables"),
        "{e}"
    );
}

fn trends_and_comparisons_from_the_database(b: Backend) {
    let t = fresh(b);
    let mut db = open(&t.target);
    // The "labels" series of the jumpavg tests, one label per campaign,
    // recorded out of order.
    let labels: [(&str, &[f64]); 6] = [
        ("r5", &[720e3, 716e3, 722e3]),
        ("r1", &[788e3, 790e3, 785e3]),
        ("r2", &[791e3, 786e3, 789e3]),
        ("r3", &[820e3, 824e3, 819e3, 822e3]),
        ("r4", &[818e3, 823e3]),
        ("r6", &[719e3, 721e3, 717e3]),
    ];
    for (label, values) in labels {
        let runs = values
            .iter()
            .enumerate()
            .map(|(i, &v)| run("fw", i as i64 + 1, v))
            .collect();
        db.record(&campaign(label, label, runs)).unwrap();
    }
    let runs = db.runs().unwrap();
    let all = series::build(
        &runs,
        &Filter::default(),
        OrderBy::Label,
        &db.label_positions().unwrap(),
    );
    assert_eq!(all.len(), 1);
    let tr = trend::trend(&all[0]).unwrap();
    let groups: Vec<(&str, &str, Kind, f64, f64)> = tr
        .groups
        .iter()
        .map(|g| {
            (
                g.first_label.as_str(),
                g.last_label.as_str(),
                g.kind,
                g.average,
                g.bits,
            )
        })
        .collect();
    // As jumpavg 0.4.2 prints them (src/jumpavg/tests.rs, "labels").
    assert_eq!(
        groups,
        [
            (
                "r1",
                "r2",
                Kind::Normal,
                788166.6666666666,
                55.10935563746439
            ),
            ("r3", "r4", Kind::Progression, 821000.0, 58.803913413672205),
            (
                "r5",
                "r6",
                Kind::Regression,
                719166.6666666667,
                57.114039307737954
            ),
        ]
    );
    assert_eq!(tr.bits, 171.02730835887456);
    let cmp = pktlab_history::compare::compare(&runs, "r1", "r5", &Filter::default()).unwrap();
    assert_eq!(cmp.len(), 1);
    assert_eq!(cmp[0].datasets[0].values, [788e3, 790e3, 785e3]);
    assert_eq!(cmp[0].datasets[1].values, [720e3, 716e3, 722e3]);
    let e = pktlab_history::compare::compare(&runs, "r1", "r7", &Filter::default()).unwrap_err();
    assert!(e.is_usage());
    assert_eq!(
        e.to_string(),
        "label 'r7' is not in the history (labels: r1, r2, r3, r4, r5, r6)"
    );
}

fn a_missing_database_is_not_made_for_reading(b: Backend) {
    let t = fresh(b);
    let target = match &t.target {
        DbTarget::Sqlite(p) => DbTarget::Sqlite(p.with_file_name("none.sqlite")),
        DbTarget::Postgres(_) => DbTarget::parse(&common::pg::url("no_such_db")).unwrap(),
    };
    let e = Database::open(&target, false)
        .err()
        .expect("opened a missing database");
    let text = e.to_string();
    assert_eq!(text.lines().count(), 1);
    match b {
        Backend::Sqlite => {
            assert!(text.ends_with("none.sqlite: does not exist: nothing has been recorded in it (pktlab bench, rfc2544 and rfc9693 record every campaign; pktlab history import adds results folders)"), "{text}");
            assert!(!t.target.display().is_empty());
        }
        Backend::Postgres => assert!(
            text.contains("database \"no_such_db\" does not exist"),
            "{text}"
        ),
    }
}

both!(
    records_and_reads_back,
    recording_twice_adds_nothing,
    import_folders_idempotently,
    concurrent_writers_both_land,
    killed_mid_write_leaves_nothing,
    newer_schema_is_refused,
    older_schema_is_migrated,
    other_tables_are_not_ours,
    trends_and_comparisons_from_the_database,
    a_missing_database_is_not_made_for_reading,
    stateful_results_read_back_exact,
    stateful_trend_flags_a_lower_capacity,
);

#[test]
fn a_damaged_sqlite_file_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("h.sqlite");
    std::fs::write(&p, vec![0x5a; 8192]).unwrap();
    let e = Database::open(&DbTarget::Sqlite(p.clone()), true)
        .err()
        .expect("opened garbage");
    assert_eq!(
        e.to_string(),
        format!("history database {}: file is not a database", p.display())
    );
    // The file is left as it was.
    assert_eq!(std::fs::read(&p).unwrap(), vec![0x5a; 8192]);
}

#[test]
fn an_unreachable_server_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    // A socket folder with no server in it, and a loopback port nobody
    // listens on.
    for url in [
        format!(
            "postgresql://pktlab@/h?host={}&port=5999",
            tmp.path().display()
        ),
        "postgresql://pktlab:secret@127.0.0.1:9/h?connect_timeout=5".to_string(),
    ] {
        let started = Instant::now();
        let e = Database::open(&DbTarget::parse(&url).unwrap(), true)
            .err()
            .expect("connected to nothing");
        let text = e.to_string();
        assert!(
            text.starts_with("history database postgresql://pktlab"),
            "{text}"
        );
        assert!(text.contains("error connecting to server"), "{text}");
        assert!(
            !text.contains("secret") && text.lines().count() == 1,
            "{text}"
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

/// Not a test: the writer process of `concurrent_writers_both_land` and
/// `killed_mid_write_leaves_nothing`, run by them.
#[test]
#[ignore = "a child process of the concurrency and kill tests, which run it"]
fn child() {
    let mode = std::env::var("HISTORY_CHILD").expect("run by the database tests only");
    let target = DbTarget::parse(&std::env::var("HISTORY_DB").unwrap()).unwrap();
    let tag = std::env::var("HISTORY_TAG").unwrap();
    let go = std::path::PathBuf::from(std::env::var("HISTORY_GO").unwrap());
    let mut db = Database::open(&target, true).unwrap();
    match mode.as_str() {
        "hang" => {
            let rec = hanging_record();
            let mut progress = |n: usize| {
                if n == 10 {
                    println!("IN TRANSACTION");
                    std::thread::sleep(Duration::from_secs(600));
                }
            };
            db.record_observed(&rec, &mut progress).unwrap();
            panic!("not killed");
        }
        "many" | "one" => {
            while !go.exists() {
                std::thread::sleep(Duration::from_millis(5));
            }
            let n = if mode == "many" { RACE } else { 1 };
            for i in 0..n {
                let id = if mode == "many" {
                    format!("{tag}{i}")
                } else {
                    "shared".into()
                };
                let runs = (1..=3)
                    .map(|k| run("fw", k, (i * 10) as f64 + k as f64))
                    .collect();
                db.record(&campaign(&id, &tag, runs)).unwrap();
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
