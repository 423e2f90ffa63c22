//! `pktlab bench` end to end on a built-in lab of its own.

mod common;

use common::{pktlab, Lab};

#[test]
fn two_short_runs_print_a_ministat_summary() {
    let lab = Lab::up();
    let r = pktlab(&[
        "bench",
        "--iterations",
        "2",
        "--duration",
        "2",
        "--prefix",
        &lab.prefix,
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert!(out.contains("run 1/2: forwarded "), "{out}");
    assert!(out.contains("run 2/2: forwarded "), "{out}");
    assert!(out.contains("x inet4.pps"), "{out}");
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
    assert!(r.stderr.contains("share this host"), "{}", r.stderr);
}

#[test]
fn json_runs_and_summary() {
    let lab = Lab::up();
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
    assert_eq!(s["runs"], 2);
    assert_eq!(s["forwarded_pps"]["n"], 2);
}
