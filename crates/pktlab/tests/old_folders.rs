//! Results folders written by an earlier pktlab (`tests/fixtures/`, see its
//! README) are still read: `report` and `compare` give the figures their
//! files hold, and `--resume` carries them on without running again what
//! they finished.

mod common;

use std::path::{Path, PathBuf};

use common::{pktlab, Lab};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// A copy of fixture `name` in a new temporary folder, its built-in lab
/// renamed to `prefix` (the campaign names the lab it ran on).
fn copy_of(name: &str, prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let to = tmp.path().join(name);
    let out = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture(name))
        .arg(&to)
        .output()
        .unwrap();
    assert!(out.status.success(), "cp: {out:?}");
    let toml = to.join("campaign.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("prefix = \"hsfx\""), "{text}");
    std::fs::write(&toml, text.replace("\"hsfx\"", &format!("\"{prefix}\""))).unwrap();
    (tmp, to)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn report_reads_a_bench_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("b.html");
    let dir = fixture("bench-folder");
    let r = pktlab(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    // The medians of the .pps files: (394744.51 + 416917.85) / 2 and
    // (374629.87 + 405215.47) / 2.
    assert!(html.contains("405,831.2"), "no forwarding median");
    assert!(html.contains("389,922.7"), "no nft-stateless median");
}

#[test]
fn compare_reads_a_bench_folder() {
    let dir = fixture("bench-folder");
    let r = pktlab(&["compare", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for line in [
        "x   2     394744.51     416917.85     405831.18     405831.18",
        "+   2     374629.87     405215.47     389922.67     389922.67",
        // The runs' lost frames added up: 928467 + 1580189 and
        // 1326722 + 5564338, all in the DUT's backlog.
        "  forwarding: 2 runs, lost 2508656: DUT 2508656 (100%)",
        "  nft-stateless: 2 runs, lost 6891060: DUT 6891060 (100%)",
    ] {
        assert!(r.stdout.contains(line), "no {line:?} in\n{}", r.stdout);
    }
    let d = dir.to_str().unwrap();
    let r = pktlab(&["compare", d, d]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r
        .stdout
        .contains("configuration nft-stateless, traffic inet4:"));
}

#[test]
fn report_reads_an_rfc2544_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("r.html");
    let dir = fixture("rfc2544-folder");
    let r = pktlab(&[
        "report",
        dir.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    // rfc2544.json's NDR and PDR (the generator's 143,184 pps) and the
    // back-to-back average of its two searches.
    assert!(html.contains("143,184"), "no NDR");
    assert!(html.contains("173,651"), "no back-to-back frames");
    // The page leads with them, and has no section of the search's run
    // file (its last trial, which a release wrote as a run).
    let first = html.find("<section id=\"").map(|i| &html[i..]);
    assert!(first.is_some_and(|s| s.starts_with("<section id=\"rfc2544\"><h2>RFC 2544</h2>")));
    assert!(!html.contains("<section id=\"runs\""));
}

#[test]
fn bench_resume_runs_only_what_an_old_folder_lacks() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let (_tmp, dir) = copy_of("bench-folder", &lab.prefix);
    let gone = dir.join("runs/nft-stateless.inet4.2.jsonl");
    std::fs::remove_file(&gone).unwrap();
    let r = pktlab(&["bench", "--resume", dir.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let summary: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["runs_finished"], 4, "{summary}");
    assert_eq!(summary["complete"], true);
    // One run line: the missing run, and no other.
    let runs: Vec<Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "run")
        .collect();
    assert_eq!(runs.len(), 1, "{}", r.stdout);
    assert_eq!(
        (&runs[0]["config"], &runs[0]["iteration"]),
        (&"nft-stateless".into(), &2.into())
    );
    assert!(gone.is_file());
    // The finished runs' values are the release's, unchanged.
    assert_eq!(
        lines(&dir.join("forwarding.inet4.pps")),
        ["394744.51", "416917.85"]
    );
    assert_eq!(lines(&dir.join("nft-stateless.inet4.pps"))[0], "374629.87");
}

/// `pktlab rfc2544 --resume DIR --json`: its closing summary line.
fn rfc2544_resume(dir: &Path) -> Value {
    let r = pktlab(&["rfc2544", "--resume", dir.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let summary: Value = serde_json::from_str(r.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary", "{}", r.stdout);
    summary
}

#[test]
fn rfc2544_resume_of_a_finished_old_folder_runs_no_trial() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let (_tmp, dir) = copy_of("rfc2544-folder", &lab.prefix);
    let before = lines(&dir.join("trials.jsonl"));
    let summary = rfc2544_resume(&dir);
    assert_eq!(summary["trials"], 23, "{summary}");
    assert_eq!(lines(&dir.join("trials.jsonl")), before);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rfc2544.json")).unwrap()).unwrap();
    let goals = &report["throughput"][0]["goals"];
    assert_eq!(goals[0]["lower_pps"], 143184.0, "{report}");
    assert_eq!(goals[1]["lower_pps"], 143184.0, "{report}");
    assert_eq!(report["back_to_back"][0]["frames"], 173651.0);
}

#[test]
fn rfc2544_resume_of_an_interrupted_old_folder_runs_only_the_rest() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let (_tmp, dir) = copy_of("rfc2544-folder", &lab.prefix);
    // Cut short in the first of the two back-to-back searches: its last
    // burst, the second search and the search's run file were not written.
    let all = lines(&dir.join("trials.jsonl"));
    let kept = &all[..21];
    std::fs::write(dir.join("trials.jsonl"), kept.join("\n") + "\n").unwrap();
    std::fs::remove_file(dir.join("runs/forwarding.inet4.1.jsonl")).unwrap();
    let summary = rfc2544_resume(&dir);
    let after = lines(&dir.join("trials.jsonl"));
    assert_eq!(&after[..21], kept, "a recorded trial was rewritten");
    assert!(after.len() > 21, "no burst ran");
    assert_eq!(summary["trials"], after.len());
    let repetitions: Vec<Value> = after[21..]
        .iter()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["test"], "back-to-back", "{line}");
            v["repetition"].clone()
        })
        .collect();
    assert_eq!(repetitions.first(), Some(&1.into()), "{repetitions:?}");
    assert_eq!(repetitions.last(), Some(&2.into()), "{repetitions:?}");
    // A search's folder holds searches: no run file for it.
    assert!(!dir.join("runs/forwarding.inet4.1.jsonl").exists());
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rfc2544.json")).unwrap()).unwrap();
    assert_eq!(report["back_to_back"][0]["trials"], 2, "{report}");
    // The throughput search was finished: its answer is the release's.
    assert_eq!(report["throughput"][0]["goals"][0]["lower_pps"], 143184.0);
}
