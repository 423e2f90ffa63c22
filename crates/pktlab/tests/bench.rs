//! `pktlab bench` end to end on a built-in lab of its own.

mod common;

use common::{one_at_a_time, pktlab, Lab};

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
    text_states_the_results(out, &out_dir);
}

/// A pkt-gen-style rate (`176.66 Kpps`) in frames per second.
/// A rate as the run line prints it ("176.66 Kpps", "1.29 Mpps"), and
/// half of its last printed digit.
fn rate(text: &str) -> (f64, f64) {
    let (n, scale) = if let Some(n) = text.strip_suffix(" Mpps") {
        (n, 1e6)
    } else if let Some(n) = text.strip_suffix(" Kpps") {
        (n, 1e3)
    } else {
        (
            text.strip_suffix(" pps")
                .unwrap_or_else(|| panic!("{text:?}: no pps unit")),
            1.0,
        )
    };
    let decimals = n.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (
        n.parse::<f64>().unwrap() * scale,
        0.5 * scale * 10f64.powi(-decimals),
    )
}

/// The run lines and the ministat row printed by `bench` state the numbers
/// of the results folder the same run wrote (runs.csv, summary.json).
fn text_states_the_results(out: &str, dir: &std::path::Path) {
    let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for (i, row) in rows.iter().enumerate() {
        let f = |k: usize| row[k].parse::<f64>().unwrap();
        let (forwarded, offered, loss) = (f(4), f(5), f(6));
        let tag = format!("[{}/2] forwarding inet4 #{}: forwarded ", i + 1, i + 1);
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(&tag))
            .unwrap_or_else(|| panic!("{tag} in {out}"));
        // "176.66 Kpps, offered 177.54 Kpps, loss 0.000% (0 of 283264)"
        let (fwd, rest) = line.split_once(", offered ").unwrap();
        let (off, rest) = rest.split_once(", loss ").unwrap();
        let (pct, counts) = rest.split_once("% (").unwrap();
        // The line may go on after the counts (", DUT backlog drops N").
        let counts = counts.split_once(')').unwrap().0;
        let (lost, sent) = counts.split_once(" of ").unwrap();
        let (lost, sent): (u64, u64) = (lost.parse().unwrap(), sent.parse().unwrap());
        // Within half of the last printed digit.
        let ((fwd, fwd_tol), (off, off_tol)) = (rate(fwd), rate(off));
        assert!(
            (fwd - forwarded).abs() <= fwd_tol + 1e-6,
            "{line} vs {row:?}"
        );
        assert!((off - offered).abs() <= off_tol + 1e-6, "{line} vs {row:?}");
        assert!(sent > 0, "{line}");
        assert!(
            (pct.parse::<f64>().unwrap() - loss * 100.0).abs() <= 5e-4,
            "{line} vs {row:?}"
        );
        assert!(
            (lost as f64 / sent as f64 - loss).abs() < 1e-12,
            "{line} vs {row:?}"
        );
    }
    // The table row: by hand from the two runs, and as in summary.json.
    let (a, b) = (
        rows[0][4].parse::<f64>().unwrap(),
        rows[1][4].parse::<f64>().unwrap(),
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let stats = &summary["cells"][0]["forwarded"];
    let want = [
        a.min(b),
        a.max(b),
        (a + b) / 2.0,
        (a + b) / 2.0,
        (a - b).abs() / 2f64.sqrt(),
    ];
    for (k, w) in ["min", "max", "median", "avg", "stddev"].iter().zip(want) {
        let j = stats[*k].as_f64().unwrap();
        assert!((j - w).abs() <= w.abs() * 1e-12, "{k}: {j} vs {w}");
    }
    let row: Vec<f64> = out.lines().find(|l| l.starts_with("x   2 ")).unwrap()[1..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    for (t, w) in row[1..].iter().zip(want) {
        // ministat's 8 significant digits.
        assert!((t - w).abs() <= w.abs() * 1e-7, "{row:?} vs {want:?}");
    }
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

/// The last line of a run file: the run's result.
fn result_of(out_dir: &std::path::Path) -> (serde_json::Value, serde_json::Value) {
    let runs = out_dir.join("runs");
    let file = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines[0].clone(), lines.last().unwrap().clone())
}

fn counter(result: &serde_json::Value, iface: &str, key: &str) -> u64 {
    result["lab_counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["iface"] == iface)
        .unwrap()[key]
        .as_u64()
        .unwrap()
}

/// At full speed on the isolated lab the tester outruns the DUT, as a
/// separate generator outruns a router: the DUT drops the excess at its
/// CPU's backlog, and every frame lost is such a drop. Nothing here
/// depends on how fast the machine is: on a machine whose DUT CPU keeps up
/// with the generator's CPU, nothing is lost and nothing dropped.
#[test]
fn full_speed_on_the_isolated_lab_loses_frames_at_the_dut_backlog() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("flood");
    let out_dir = dir.path().join("out");
    let r = common::pktlab_on(
        "0,1",
        &[
            "bench",
            "-t",
            "3",
            "-N",
            "1",
            "--warmup",
            "0s",
            "--tail",
            "0s",
            "--prefix",
            &lab.prefix,
            "-o",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("CPU plan isolated: DUT CPUs 1, tester CPUs 0; generator xdp\n"),
        "{}",
        r.stdout
    );
    let (head, res) = result_of(&out_dir);
    assert_eq!(head["generator"], "xdp (live frames)");
    assert_eq!(head["cpu_plan"]["dut_cpus"], serde_json::json!([1]));
    let sent = res["tx"]["packets"].as_u64().unwrap();
    let received = res["rx"]["packets"].as_u64().unwrap();
    let lost = res["lost"].as_u64().unwrap();
    assert!(sent > 0);
    assert_eq!(lost, sent - received);
    let drops = res["dut_backlog_drops"].as_u64().unwrap();
    let cpu1 = res["softnet"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cpu"] == 1)
        .unwrap()["dropped"]
        .as_u64()
        .unwrap();
    assert_eq!(drops, cpu1, "the DUT CPUs' drops are CPU 1's");
    // This lab's own drop counts: veth counts a frame its receiver's
    // backlog refused in that receiver's rx_dropped (d0: the DUT's way in;
    // r0: the receiver's), and a frame d1 could not hand to r0 at all in
    // d1's tx_dropped: those refused by r0's backlog (counted by r0 too)
    // and, with the in-kernel receiver, those that found r0's ring full
    // (its NAPI thread on the tester's CPU behind). The receiver's side
    // usually keeps up with what one DUT CPU forwards, but on a busy
    // machine it drops some too (116 in one full-suite run, 1946 at r0's
    // ring in another), so it is counted apart, never as the DUT's.
    let d0_dropped = counter(&res, "d0", "rx_dropped");
    let r0_dropped = counter(&res, "r0", "rx_dropped");
    let d1_not_taken = counter(&res, "d1", "tx_dropped");
    let r0_full = d1_not_taken - r0_dropped.min(d1_not_taken);
    let ring_drops = res["rx"]["ring_drops"].as_u64().unwrap();
    // Every lost frame was dropped at one of those places, and nothing
    // that arrived was dropped anywhere else.
    assert_eq!(
        lost,
        d0_dropped + r0_dropped + r0_full + ring_drops,
        "lost frames are d0's, r0's (at its backlog or its ring) and the ring's drops"
    );
    // And the record puts r0's on the tester's side, d0's on the DUT's.
    assert_eq!(
        res["drops"]["tester"].as_u64().unwrap(),
        r0_dropped + r0_full + ring_drops,
        "{res}"
    );
    // The host-wide softnet counter saw d0's drops on the DUT's CPU (and
    // r0's when the same CPU queued them). It also counts any other
    // namespace's drops on that CPU (none while this test runs alone), so
    // it is at least d0's count, and at most the lost count plus 1% for
    // whatever else this host did meanwhile.
    assert!(
        drops >= d0_dropped,
        "DUT backlog drops {drops} < d0's {d0_dropped}"
    );
    assert!(
        drops <= lost + lost / 100,
        "DUT backlog drops {drops} far above lost {lost}"
    );
    if d0_dropped > 0 {
        // Overloaded: the generator offered more than the DUT forwarded.
        let offered = res["offered_pps"].as_f64().unwrap();
        let forwarded = res["forwarded_pps"].as_f64().unwrap();
        assert!(
            offered > forwarded,
            "offered {offered} forwarded {forwarded}"
        );
    }
    // The run line says where the loss happened.
    if drops > 0 {
        assert!(
            r.stdout.contains(&format!(", DUT backlog drops {drops}\n")),
            "{}",
            r.stdout
        );
    } else {
        assert!(!r.stdout.contains("DUT backlog drops"), "{}", r.stdout);
    }
}

/// With one allowed CPU there is nothing to isolate: shared mode, one line
/// saying so, and the run completes with no masks and no pinning.
#[test]
fn one_cpu_runs_in_shared_mode() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("onecpu");
    let out_dir = dir.path().join("out");
    let r = common::pktlab_on(
        "0",
        &[
            "bench",
            "-t",
            "2",
            "-N",
            "1",
            "--warmup",
            "0s",
            "--tail",
            "0s",
            "-R",
            "20kpps",
            "--prefix",
            &lab.prefix,
            "-o",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let shared: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("shared mode"))
        .collect();
    assert_eq!(
        shared,
        ["pktlab: only 1 CPU (0) is available: the generator, DUT and receiver share it, so the \
          DUT cannot be isolated and figures are the whole machine's speed (shared mode)"],
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .contains("CPU plan shared: DUT and tester on CPUs 0; generator xdp\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("[1/1] forwarding inet4 #1: forwarded "),
        "{}",
        r.stdout
    );
    let (head, res) = result_of(&out_dir);
    assert_eq!(head["cpu_plan"]["mode"], "shared");
    let env: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(env["cpu_plan"]["mode"], "shared");
    // Every thread ran on the one CPU it was allowed.
    for t in ["tx", "rx"] {
        for thread in res[t]["threads"].as_array().unwrap() {
            assert!(
                thread["cpu"].is_null() || thread["cpu"] == 0,
                "{t}: {thread}"
            );
        }
    }
    assert!(res["rx"]["packets"].as_u64().unwrap() > 0);
    let status = common::pktlab(&["lab", "status", "--prefix", &lab.prefix]);
    assert!(
        status
            .stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("CPU plan: shared (no RPS/XPS masks)"),
        "{}",
        status.stdout
    );
}
