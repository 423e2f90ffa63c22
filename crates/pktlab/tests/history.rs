//! `pktlab history` end to end: a netbenches-style `.pps` folder made by
//! hand (its trend, its page in a real headless browser, two labels
//! compared), bad input, and real `bench` and `rfc2544` campaigns on a
//! built-in lab of their own recording themselves.
//!
//! Every command gets a database of its own in a temporary folder
//! (`PKTLAB_HISTORY_DB` or `--db`): nothing goes into the user's history.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{finish, one_at_a_time, Lab, Run, PKTLAB};
use serde_json::Value;

/// `pktlab args...` with `PKTLAB_HISTORY_DB` set to `db`.
fn with_db(db: &Path, args: &[&str]) -> Run {
    finish(
        Command::new(PKTLAB)
            .args(args)
            .env("PKTLAB_HISTORY_DB", db)
            .output()
            .unwrap(),
    )
}

fn ok(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}: {}{}", r.stdout, r.stderr);
}

/// Two configurations over six labels named so that only a natural order
/// sorts them (r9 < r10 < r11 < r100): `ff` is jumpavg's "labels" series
/// (a progression at r11, a regression at r101), `pf` is flat.
fn pps_folder(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let ff: [(&str, &[f64]); 6] = [
        ("r9", &[788e3, 790e3, 785e3]),
        ("r10", &[791e3, 786e3, 789e3]),
        ("r11", &[820e3, 824e3, 819e3, 822e3]),
        ("r100", &[818e3, 823e3]),
        ("r101", &[720e3, 716e3, 722e3]),
        ("r102", &[719e3, 721e3, 717e3]),
    ];
    for (label, values) in ff {
        let text: String = values.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(dir.join(format!("{label}.ff.pps")), text).unwrap();
        std::fs::write(
            dir.join(format!("{label}.pf.pps")),
            "400000\n400100\n399900\n",
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("bench.{label}.ff.1.sender")),
            "a pkt-gen log",
        )
        .unwrap();
    }
    std::fs::write(dir.join("README"), "not a pps file").unwrap();
    dir.to_path_buf()
}

#[test]
fn a_pps_folder_trend_page_and_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let dir = pps_folder(&tmp.path().join("RAW"));
    let d = dir.to_str().unwrap();
    let r = with_db(&db, &["history", "import-pps", d]);
    ok(&r, "import-pps");
    assert_eq!(
        r.stdout,
        format!("{d}: 6 labels from 12 .pps files: 6 added (36 runs), 0 already in the history; 7 other files ignored\n")
    );
    let r = with_db(&db, &["history", "import-pps", d]);
    ok(&r, "import-pps again");
    assert!(
        r.stdout
            .contains(": 0 added (0 runs), 6 already in the history;"),
        "{}",
        r.stdout
    );

    let r = with_db(&db, &["history", "trend", "--config", "ff"]);
    ok(&r, "trend");
    let want = "ff: forwarded_pps, 6 labels (r9 .. r102), 18 runs\n";
    assert!(r.stdout.starts_with(want), "{}", r.stdout);
    assert!(r.stdout.contains("    r9 .. r10        2 labels     6 runs      788166.7 ± 2114.8         55.11 bits  normal\n"), "{}", r.stdout);
    assert!(r.stdout.ends_with(
        "  changes:\n    progression at r11: 788166.7 -> 821000.0 pps (+4.17 %)\n    regression  at r101: 821000.0 -> 719166.7 pps (-12.40 %)\n"
    ), "{}", r.stdout);
    let r = with_db(&db, &["history", "trend", "--json"]);
    ok(&r, "trend --json");
    let series: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(series.len(), 2);
    assert_eq!(series[0]["config"], "ff");
    assert_eq!(series[0]["bits"], 171.02730835887456);
    assert_eq!(series[0]["changes"][1]["label"], "r101");
    assert_eq!(series[0]["changes"][1]["kind"], "regression");
    assert_eq!(series[1]["config"], "pf");
    assert_eq!(series[1]["groups"].as_array().unwrap().len(), 1);
    assert_eq!(series[1]["changes"], serde_json::json!([]));

    // An order file reverses the labels: the changes move with them.
    let order = tmp.path().join("order");
    std::fs::write(&order, "r102\nr101\nr100\nr11\nr10\nr9\n").unwrap();
    let db2 = tmp.path().join("h2.sqlite");
    ok(
        &with_db(
            &db2,
            &[
                "history",
                "import-pps",
                d,
                "--order",
                order.to_str().unwrap(),
            ],
        ),
        "ordered",
    );
    let r = with_db(&db2, &["history", "trend", "--config", "ff"]);
    assert!(
        r.stdout
            .contains("progression at r100: 719166.7 -> 821000.0 pps"),
        "{}",
        r.stdout
    );

    let r = with_db(&db, &["history", "compare", "r9", "r101", "--config", "ff"]);
    ok(&r, "compare");
    assert!(
        r.stdout.starts_with("ff: forwarded_pps\nx r9\n+ r101\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Difference at 95.0% confidence"),
        "{}",
        r.stdout
    );
    // (716+720+722)/3 − (785+788+790)/3 = −68.333k: −8.67 %.
    assert!(r.stdout.contains("\t-68333.3 +/- "), "{}", r.stdout);

    let page = tmp.path().join("history.html");
    let r = with_db(&db, &["history", "report", "-o", page.to_str().unwrap()]);
    ok(&r, "report");
    assert_eq!(
        r.stdout,
        format!("Wrote {}: 2 series, 2 changes.\n", page.display())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 2);
    assert!(!html.contains("http:") && !html.contains("https:"));
    assert!(html.contains("<td class=\"regression\">regression</td><td class=\"num\">821000.0</td><td class=\"num\">719166.7</td><td class=\"num\">-12.40 %</td>"));
    browser_renders(&page, 2);
}

/// The page opened in a headless Chromium with every host mapped to
/// nowhere: its DOM has the charts, and a screenshot has pixels.
fn browser_renders(page: &Path, charts: usize) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let browser = ["chromium-headless-shell", "chromium"]
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
        .expect(
            "no headless browser: install Debian's chromium-headless-shell (scripts/deps does)",
        );
    let url = format!("file://{}", page.display());
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--no-first-run",
        "--window-size=1280,2000",
    ];
    let shot = page.with_extension("png");
    let r = Command::new(&browser)
        .args(base)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 20_000,
        "an empty screenshot"
    );
    let r = Command::new(&browser)
        .args(base)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(r.status.success());
    let dom = String::from_utf8_lossy(&r.stdout);
    // The browser parsed the SVG into the page, text and all.
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), charts, "{dom}");
    assert!(dom.contains(">r101<"), "the changes table");
}

fn one_line(r: &Run, code: i32, wanted: &str) {
    assert_eq!(r.code, code, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(wanted), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn bad_input_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let t = tmp.path().to_str().unwrap();
    one_line(
        &with_db(&db, &["history", "import-pps", &format!("{t}/nowhere")]),
        2,
        "nowhere: No such file or directory",
    );
    let bad = tmp.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("r1.ff.pps"), "1000\n10OO\n").unwrap();
    one_line(
        &with_db(&db, &["history", "import-pps", bad.to_str().unwrap()]),
        2,
        "r1.ff.pps line 2: '10OO' is not a packet rate (one value per line, in pps)",
    );
    std::fs::write(bad.join("r1.ff.pps"), "1000\n").unwrap();
    let order = tmp.path().join("order");
    std::fs::write(&order, "r2\n").unwrap();
    one_line(
        &with_db(
            &db,
            &[
                "history",
                "import-pps",
                bad.to_str().unwrap(),
                "--order",
                order.to_str().unwrap(),
            ],
        ),
        2,
        "label 'r1' (of ",
    );
    one_line(
        &with_db(&db, &["history", "import", t]),
        2,
        "not a pktlab results folder: it has no env.json",
    );
    one_line(
        &with_db(&db, &["history", "--db", "mysql://h/x", "list"]),
        2,
        "'mysql://' is not a database pktlab knows",
    );
    one_line(
        &with_db(&db, &["history", "--db", "postgresql://u@h:port/x", "list"]),
        2,
        "invalid history database 'postgresql://u@h:port/x'",
    );
    one_line(
        &with_db(&db, &["history", "trend"]),
        1,
        "h.sqlite: does not exist: nothing has been recorded in it",
    );
    one_line(
        &with_db(&db, &["history", "--db", "postgresql://pktlab@127.0.0.1:9/h?connect_timeout=5", "trend"]),
        1,
        "history database postgresql://pktlab@127.0.0.1:9/h?connect_timeout=5: error connecting to server",
    );
    let garbage = tmp.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![7u8; 4096]).unwrap();
    one_line(
        &with_db(&garbage, &["history", "list"]),
        1,
        "garbage.sqlite: file is not a database",
    );
    // A history that holds something, then questions it cannot answer.
    ok(
        &with_db(&db, &["history", "import-pps", bad.to_str().unwrap()]),
        "import",
    );
    one_line(
        &with_db(&db, &["history", "compare", "r1", "r7"]),
        2,
        "label 'r7' is not in the history (labels: r1)",
    );
    one_line(
        &with_db(&db, &["history", "trend", "--config", "nft"]),
        2,
        "no series in the history matches (configurations: ff)",
    );
    one_line(
        &with_db(&db, &["history", "trend", "--metric", "speed"]),
        2,
        "unknown metric 'speed'",
    );
    one_line(
        &with_db(&db, &["history", "compare", "r1", "r1", "-c", "42"]),
        2,
        "invalid confidence level '42'",
    );
    one_line(
        &with_db(&db, &["bench", "--label", "", "--prefix", "nolab"]),
        2,
        "invalid label ''",
    );
    one_line(
        &with_db(
            &db,
            &["bench", "--no-history", "--label", "x", "--prefix", "nolab"],
        ),
        2,
        "--label cannot be used with --no-history",
    );
    one_line(
        &with_db(&db, &["rfc2544", "--db", "mysql://x", "--prefix", "nolab"]),
        2,
        "'mysql://' is not a database pktlab knows",
    );
    let r = with_db(&db, &["history", "report"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `uname -r`: the label of a campaign on the built-in lab.
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string()
}

fn campaigns(db: &Path) -> Vec<Value> {
    let r = with_db(db, &["history", "list", "--json"]);
    ok(&r, "list");
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_campaign_records_itself() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let out = tmp.path().join("a");
    let bench = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--duration",
            "2",
            "--prefix",
            &lab.prefix,
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        with_db(&db, &args)
    };
    // No flag: recorded, labelled with the DUT's (this host's) kernel.
    let r = bench(&out, &["-N", "2"]);
    ok(&r, "bench");
    let release = kernel_release();
    assert!(
        r.stdout.ends_with(&format!(
            "History: 2 runs recorded as '{release}' in {} (pktlab history trend shows it).\n",
            db.display()
        )),
        "{}",
        r.stdout
    );
    let c = campaigns(&db);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (
            c[0]["source"].as_str(),
            c[0]["label"].as_str(),
            c[0]["runs"].as_i64()
        ),
        (Some("bench"), Some(release.as_str()), Some(2))
    );
    assert_eq!(
        c[0]["results_dir"],
        std::fs::canonicalize(&out).unwrap().display().to_string()
    );
    // The history's values are the run files' values.
    let r = with_db(&db, &["history", "trend", "--json"]);
    ok(&r, "trend");
    let t: Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    let values: Vec<f64> = t["points"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let pps: Vec<f64> = std::fs::read_to_string(out.join("forwarding.inet4.pps"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), 2);
    for (v, p) in values.iter().zip(&pps) {
        // The .pps file holds ministat's %.8g of the same value.
        assert!((v - p).abs() <= p * 1e-7, "{v} {p}");
    }
    // Importing the folder again adds nothing.
    let r = with_db(&db, &["history", "import", out.to_str().unwrap()]);
    ok(&r, "import");
    assert!(
        r.stdout
            .contains(": already in the history, nothing added (bench 'bench', label '"),
        "{}",
        r.stdout
    );

    // --label, --db: elsewhere and so labelled; --no-history: nowhere.
    let other = tmp.path().join("other.sqlite");
    ok(
        &bench(
            &tmp.path().join("b"),
            &[
                "-N",
                "1",
                "--label",
                "fix-1",
                "--db",
                other.to_str().unwrap(),
                "--quiet",
            ],
        ),
        "bench --label",
    );
    let c = campaigns(&other);
    assert_eq!((c.len(), c[0]["label"].as_str()), (1, Some("fix-1")));
    assert_eq!(campaigns(&db).len(), 1);
    let none = tmp.path().join("none.sqlite");
    let r = finish(
        Command::new(PKTLAB)
            .args([
                "bench",
                "-N",
                "1",
                "--duration",
                "2",
                "--prefix",
                &lab.prefix,
                "-o",
                tmp.path().join("d").to_str().unwrap(),
                "--no-history",
            ])
            .env("PKTLAB_HISTORY_DB", &none)
            .output()
            .unwrap(),
    );
    ok(&r, "bench --no-history");
    assert!(!none.exists());
    assert!(!r.stdout.contains("History:"), "{}", r.stdout);

    // A damaged database: one warning, and the campaign and its folder
    // are whole.
    let garbage = tmp.path().join("garbage.sqlite");
    std::fs::write(&garbage, vec![7u8; 4096]).unwrap();
    let e = tmp.path().join("e");
    let r = bench(&e, &["-N", "1", "--db", garbage.to_str().unwrap()]);
    ok(&r, "bench with a damaged history");
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("history")).collect();
    assert_eq!(
        warnings,
        [format!(
            "pktlab: warning: not recorded in the history: history database {}: file is not a database (the results folder is whole: pktlab history import {} adds it later)",
            garbage.display(),
            e.display()
        )]
    );
    assert!(e.join("runs/forwarding.inet4.1.jsonl").is_file());
    assert!(e.join("summary.json").is_file());
}

#[test]
fn an_rfc2544_search_records_its_goals() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let out = tmp.path().join("s");
    let r = with_db(
        &db,
        &[
            "rfc2544",
            "--prefix",
            &lab.prefix,
            "-o",
            out.to_str().unwrap(),
            "--max-rate",
            "5k",
            "--duration-sum",
            "1s",
            "--width",
            "5",
            "--label",
            "search-1",
        ],
    );
    ok(&r, "rfc2544");
    assert!(
        r.stdout
            .contains("History: 1 run recorded as 'search-1' in "),
        "{}",
        r.stdout
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rfc2544.json")).unwrap()).unwrap();
    let r = with_db(&db, &["history", "trend", "--metric", "ndr", "--json"]);
    ok(&r, "trend ndr");
    let t: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(t["metric"], "lower_pps@0%");
    assert_eq!(t["points"][0]["label"], "search-1");
    assert_eq!(
        t["points"][0]["values"][0],
        report["throughput"][0]["goals"][0]["lower_pps"]
    );
    let r = with_db(&db, &["history", "trend", "--metric", "pdr", "--json"]);
    ok(&r, "trend pdr");
    let t: Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        t["points"][0]["values"][0],
        report["throughput"][0]["goals"][1]["lower_pps"]
    );
    let c = campaigns(&db);
    assert_eq!(
        (c[0]["source"].as_str(), c[0]["name"].as_str()),
        (Some("rfc2544"), Some("rfc2544"))
    );
}

/// An rfc9693 results folder of `nft-stateful` whose runs (iterations 1,
/// 2, ...) found the table capacities `capacities`.
fn rfc9693_folder(dir: &Path, created_at: u64, capacities: &[f64]) -> PathBuf {
    use pktlab_campaign::folder::{ResultsDir, CAMPAIGN_FILE, ENV_FILE};
    use pktlab_search::stateful::searches::Bounds;
    use pktlab_search::stateful::{StatefulReport, StatefulRun, StatefulSettings};

    let folder = ResultsDir::create(dir).unwrap();
    folder.write(CAMPAIGN_FILE, b"name = \"fw\"\n").unwrap();
    let env = serde_json::json!({"clocks": null, "configs": [], "cpu_plan": null,
        "created_at": created_at, "dut_uname": null,
        "host": {"hostname": "h", "kernel": "6.18.0", "kernel_build": "#1",
            "os": null, "cpu_model": null, "cpus": 2},
        "interrupts": null, "lab": "built-in lab hh1", "nics": [],
        "pktlab_version": env!("CARGO_PKG_VERSION"), "virtual_lab": true});
    folder.write(ENV_FILE, env.to_string().as_bytes()).unwrap();
    let mut report = StatefulReport::new(StatefulSettings::default());
    for (i, &c) in capacities.iter().enumerate() {
        report.runs.push(StatefulRun {
            config: "nft-stateful".into(),
            traffic: "inet4".into(),
            iteration: i + 1,
            conntrack_max: Some(1_000_000),
            capacity: Some(Bounds {
                lower: Some(c),
                upper: Some(c + 1000.0),
                min: 1.0,
                max: 1_250_000.0,
                hit_max: false,
                generator_limited: false,
                complete: true,
                lower_intended: Some(c),
                upper_intended: Some(c + 1000.0),
            }),
            ..StatefulRun::default()
        });
    }
    report.write(&folder).unwrap();
    dir.to_path_buf()
}

/// rfc9693 folders imported under six labels: their capacity is trended
/// and a lower one is a regression, with the figures jumpavg gives for
/// these values (its "labels" series, as `a_pps_folder_trend_page_and_comparison`).
#[test]
fn rfc9693_capacities_trend_and_regress() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let labels: [(&str, &[f64]); 6] = [
        ("r9", &[788e3, 790e3, 785e3]),
        ("r10", &[791e3, 786e3, 789e3]),
        ("r11", &[820e3, 824e3, 819e3, 822e3]),
        ("r100", &[818e3, 823e3]),
        ("r101", &[720e3, 716e3, 722e3]),
        ("r102", &[719e3, 721e3, 717e3]),
    ];
    for (i, (label, values)) in labels.into_iter().enumerate() {
        let dir = rfc9693_folder(&tmp.path().join(label), 1_800_000_000 + i as u64, values);
        let r = with_db(
            &db,
            &["history", "import", dir.to_str().unwrap(), "--label", label],
        );
        ok(&r, "import");
        assert!(r.stdout.contains(": added, "), "{}", r.stdout);
    }
    let r = with_db(&db, &["history", "list", "--json"]);
    ok(&r, "list");
    assert_eq!(r.stdout.lines().count(), 6);
    assert!(r.stdout.contains("\"source\":\"rfc9693\""), "{}", r.stdout);
    // Without --metric, an rfc9693 run's series is its capacity.
    let r = with_db(&db, &["history", "trend"]);
    ok(&r, "trend");
    assert!(
        r.stdout
            .starts_with("nft-stateful inet4 64: capacity, 6 labels (r9 .. r102), 18 runs\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(
        "  changes:\n    progression at r11: 788166.7 -> 821000.0 connections (+4.17 %)\n    regression  at r101: 821000.0 -> 719166.7 connections (-12.40 %)\n"
    ), "{}", r.stdout);
    let r = with_db(&db, &["history", "trend", "--metric", "capacity_upper"]);
    ok(&r, "trend upper");
    assert!(
        r.stdout
            .contains("regression  at r101: 822000.0 -> 720166.7 connections"),
        "{}",
        r.stdout
    );
}
