//! `pktlab bench` end to end on a built-in lab of its own.

mod common;

use std::sync::{Mutex, MutexGuard};

use common::{pktlab, Lab};

/// One bench at a time in this file. Each lab's DUT forwards on the CPU
/// plan's DUT CPUs, whose backlogs every namespace shares: a full-speed
/// run in one lab would drop the frames of a lossless run in another.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static BENCH: Mutex<()> = Mutex::new(());
    BENCH.lock().unwrap_or_else(|e| e.into_inner())
}

fn results_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pktlab-bench-{tag}-"))
        .tempdir()
        .unwrap()
}

#[test]
fn two_short_runs_print_a_ministat_summary() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("text");
    let out_dir = dir.path().join("out");
    let r = pktlab(&[
        "bench",
        "--iterations",
        "2",
        "--duration",
        "2",
        "--prefix",
        &lab.prefix,
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains("[1/2] forwarding inet4 #1: forwarded "),
        "{out}"
    );
    assert!(
        out.contains("[2/2] forwarding inet4 #2: forwarded "),
        "{out}"
    );
    assert!(out.contains("x forwarding.inet4.pps"), "{out}");
    assert!(
        out.contains("    N           Min           Max        Median           Avg        Stddev"),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("x   2 "))
        .expect("the table row");
    // N Min Max Median Avg Stddev: Min ≤ Median ≤ Max, all positive.
    let v: Vec<f64> = row[1..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(v[0], 2.0);
    assert!(v[1] > 0.0 && v[1] <= v[3] && v[3] <= v[2], "{row}");
    // The virtual lab is called what it is.
    assert!(
        out.contains("share this host") || r.stderr.contains("share this host"),
        "{out}{}",
        r.stderr
    );
    // The BSDRP-style file holds one value per run.
    let pps = std::fs::read_to_string(out_dir.join("forwarding.inet4.pps")).unwrap();
    assert_eq!(pps.lines().count(), 2, "{pps}");
}

#[test]
fn json_runs_and_summary() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("json");
    let out_dir = dir.path().join("out");
    let r = pktlab(&[
        "bench",
        "--iterations",
        "2",
        "--duration",
        "2",
        "--prefix",
        &lab.prefix,
        "--json",
        "-R",
        "20kpps",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    for (i, run) in lines[..2].iter().enumerate() {
        assert_eq!(run["type"], "run");
        assert_eq!(run["iteration"], i as u64 + 1);
        // At 20 kpps the veth lab forwards everything it is offered.
        assert_eq!(run["lost"], 0, "{run}");
        assert_eq!(run["rx"]["flows"], 2000);
        assert_eq!(run["rx"]["packets"], run["tx"]["packets"]);
        // The pacer never exceeds the requested rate (by more than the
        // rounding of one-second samples); how far below it a loaded
        // machine falls is not this test's business.
        let fwd = run["forwarded_pps"].as_f64().unwrap();
        assert!(fwd > 0.0 && fwd < 20_000.0 * 1.02, "{fwd}");
    }
    let s = &lines[2];
    assert_eq!(s["type"], "summary");
    assert_eq!(s["runs_finished"], 2);
    assert_eq!(s["complete"], true);
    assert_eq!(s["cells"][0]["forwarded"]["n"], 2);
}

#[test]
fn the_io_backend_comes_from_the_command_line_and_is_recorded() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("io");
    let out_dir = dir.path().join("out");
    let r = pktlab(&[
        "bench",
        "--iterations",
        "1",
        "--duration",
        "3",
        "--prefix",
        &lab.prefix,
        "--io",
        "afxdp",
        "-R",
        "20kpps",
        "--json",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run: serde_json::Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    // Both ends used AF_XDP, and every frame arrived.
    // ("afxdp (copy)": the mode follows the name.)
    for end in ["tx", "rx"] {
        let backend = run[end]["backend"].as_str().unwrap();
        assert!(backend.starts_with("afxdp"), "{end}: {run}");
    }
    assert_eq!(run["lost"], 0, "{run}");
    assert_eq!(run["rx"]["packets"], run["tx"]["packets"]);
    // The run file's header says so, and so does the saved campaign.
    let text = std::fs::read_to_string(out_dir.join("runs/forwarding.inet4.1.jsonl")).unwrap();
    let head: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(head["type"], "run");
    assert_eq!(head["io"], "afxdp");
    let saved = std::fs::read_to_string(out_dir.join("campaign.toml")).unwrap();
    assert!(saved.contains("io = \"afxdp\""), "{saved}");
}
