//! Traffic from the receiver's side and both ways on the built-in lab
//! (needs root). Each test makes a lab with its own prefix (`gl<pid>x<n>`,
//! removed on drop, also when the test fails).

mod common;

use common::Lab;
use pktlab_engine::StopSignal;
use pktlab_lab::LabSpec;
use pktlab_loss::tracer::Tracer;
use pktlab_remote::endpoint::BenchIo;
use pktlab_trial::target::Target;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{Shape, TrialSettings, Trials};
use serde_json::{json, Value};
use std::time::Duration;

fn builtin_target(lab: &Lab) -> Target {
    // The DUT's reset lines run this pktlab (`pktlab knob`).
    std::env::set_var(pktlab_lab::dut::PKTLAB_ENV, common::PKTLAB);
    Target::builtin(LabSpec {
        prefix: lab.prefix.clone(),
        queues: 1,
        cpus: None,
    })
    .unwrap()
    .0
}

/// A counter of one watched port over the trial.
fn counter(result: &pktlab_trial::trial::TrialResult, iface: &str, rx: bool) -> u64 {
    let c = result
        .lab_counters
        .iter()
        .find(|c| c.iface == iface)
        .unwrap_or_else(|| panic!("no counters of {iface}"));
    if rx {
        c.counters.rx_packets
    } else {
        c.counters.tx_packets
    }
}

#[test]
fn a_one_way_trial_from_r0_reaches_g0_through_the_dut() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let forward = builtin_target(&lab);
    let back = forward.reversed().unwrap();
    assert_eq!(back.gen.iface, "r0");
    assert_eq!(back.gen.netns.as_deref(), Some(lab.ns("rcv").as_str()));
    assert_eq!(back.rcv.iface, "g0");
    assert_eq!(back.rcv.netns.as_deref(), Some(lab.ns("gen").as_str()));
    let settings = TrialSettings {
        duration: Duration::from_secs(3),
        trim_head: 0,
        trim_tail: 0,
        interval: Duration::from_millis(500),
    };
    let stop = StopSignal::new();
    let tracer = Tracer::off();
    let trials = Trials::for_target(&back, BenchIo::Afpacket, &settings, &stop, &tracer);
    // 20 000 frames at 20 kpps: one second, well inside the 3 s trial.
    let shape = Shape {
        count: Some(20_000),
        ..Shape::default()
    };
    let traffic = Traffic::inet4().reversed();
    let r = trials
        .run_shaped(&traffic, Some(20_000.0), shape, &mut |_| {})
        .unwrap();
    assert_eq!(r.tx.packets, 20_000);
    assert_eq!(r.rx.packets - r.rx.foreign, 20_000, "{:?}", r.rx);
    assert_eq!((r.lost, r.rx.lost, r.rx.duplicates), (0, 0, 0));
    // 100 sources x 20 destinations, every one seen at g0.
    assert_eq!((r.rx.flows, r.rx.streams), (2000, 2000));
    // The frames went r0 -> d1 -> d0 -> g0: each port counted them (and
    // perhaps a neighbour message or two of the lab's own).
    for (iface, rx) in [("r0", false), ("d1", true), ("d0", false), ("g0", true)] {
        let n = counter(&r, iface, rx);
        assert!((20_000..20_010).contains(&n), "{iface}: {n}");
    }
    // Nothing went the forward way.
    for (iface, rx) in [("g0", false), ("d0", true), ("d1", false), ("r0", true)] {
        let n = counter(&r, iface, rx);
        assert!(n < 10, "{iface}: {n}");
    }
    assert_eq!(
        r.lab_counters
            .iter()
            .map(|c| (c.role.as_str(), c.iface.as_str()))
            .collect::<Vec<_>>(),
        [
            ("gen", "r0"),
            ("dut_in", "d1"),
            ("dut_out", "d0"),
            ("rcv", "g0")
        ]
    );
}

/// A campaign both ways at 20 kpps each way for 3 s on `prefix`'s lab,
/// with backend `io`, in configuration `config` (apply, revert).
fn campaign(
    dir: &std::path::Path,
    prefix: &str,
    io: &str,
    config: (&str, &str),
) -> std::path::PathBuf {
    let path = dir.join("both.toml");
    let text = format!(
        r#"name = "both"
[lab]
prefix = "{prefix}"
[run]
iterations = 1
duration = "3s"
io = "{io}"
[[traffic]]
name = "inet4"
rate = "20kpps"
direction = "both"
[[config]]
name = "seq2"
apply = [{}]
revert = [{}]
"#,
        config.0, config.1
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The run record's result line.
fn result_line(out_dir: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(out_dir.join("runs/seq2.inet4.1.jsonl")).unwrap();
    let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(v["type"], "result");
    v
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// (sent, received) as a direction's text line says them.
fn said(stdout: &str, name: &str) -> (u64, u64, String) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("  {name}: ")))
        .unwrap_or_else(|| panic!("no {name} line in {stdout}"));
    let after = |key: &str| -> u64 {
        let rest = &line[line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (after(", sent "), after(", received "), line.to_string())
}

/// Runs the campaign and checks what every run both ways must show: each
/// direction within the rate, the text's counts those of the record, and
/// a total that is the directions' sum. Returns the record's result.
fn bench_both_ways(lab: &Lab, io: &str, config: (&str, &str)) -> (Value, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = campaign(dir.path(), &lab.prefix, io, config);
    let out_dir = dir.path().join("out");
    let r = common::pktlab(&[
        "bench",
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--no-report",
        "--no-history",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = result_line(&out_dir);
    let ways = v["directions"].as_array().expect("two directions");
    assert_eq!(ways.len(), 2, "{v}");
    let mut sums = (0, 0, 0, 0.0);
    for (way, name) in ways.iter().zip(["forward", "reverse"]) {
        assert_eq!(way["name"], name);
        let (sent, received) = (n(&way["tx"]["packets"]), n(&way["rx"]["packets"]));
        let received = received - n(&way["rx"]["foreign"]);
        // 20 kpps for 3 s: 60 000 at most (a loaded host's generator
        // falls short, never over); no more received than sent.
        assert!((20_000..=60_100).contains(&sent), "{name}: {sent}");
        assert!(received <= sent, "{name}: {received} of {sent}");
        assert_eq!(n(&way["lost"]), sent - received, "{name}");
        assert_eq!(n(&way["drops"]["lost"]), sent - received, "{name}");
        let text = said(&r.stdout, name);
        assert_eq!((text.0, text.1), (sent, received), "{}", text.2);
        sums.0 += sent;
        sums.1 += received;
        sums.2 += n(&way["lost"]);
        sums.3 += way["forwarded_pps"].as_f64().unwrap();
    }
    let total = said(&r.stdout, "total");
    assert_eq!((total.0, total.1), (sums.0, sums.1), "{}", total.2);
    assert_eq!(n(&v["tx"]["packets"]), sums.0);
    assert_eq!(n(&v["rx"]["packets"]) - n(&v["rx"]["foreign"]), sums.1);
    assert_eq!((n(&v["lost"]), n(&v["drops"]["lost"])), (sums.2, sums.2));
    assert_eq!(v["forwarded_pps"].as_f64().unwrap(), sums.3);
    // The run's line says it went both ways, at the rate each way.
    assert!(r.stdout.contains(", both ways:\n"), "{}", r.stdout);
    assert!(r.stdout.contains("at 20.00 Kpps each way"), "{}", r.stdout);
    let env = std::fs::read_to_string(out_dir.join("env.json")).unwrap();
    (v, r.stdout, serde_json::from_str(&env).unwrap())
}

#[test]
fn a_bench_both_ways_prints_each_direction_and_their_sum() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let before = lab.refused();
    let (v, _, _) = bench_both_ways(&lab, "afpacket", ("\"true\"", "\"true\""));
    if lab.refused().since(&before).total() == 0 {
        // Nothing refused on a quiet host: nothing lost either way.
        assert_eq!(n(&v["lost"]), 0, "{v}");
    }
    // Each direction's receiver saw its 2000 streams.
    for way in v["directions"].as_array().unwrap() {
        assert_eq!(n(&way["rx"]["streams"]), 2000, "{way}");
    }
}

#[test]
fn afxdp_both_ways_counts_each_direction_and_their_sum() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let before = lab.refused();
    let (v, _, env) = bench_both_ways(&lab, "afxdp", ("\"true\"", "\"true\""));
    // Each tester port sent and received with AF_XDP at once: the reverse
    // generator went through the forward receiver's socket.
    each_way_counted(&v, "afxdp", lab.refused().since(&before).total());
    assert_eq!(
        env["reverse_path"],
        "traffic both ways with --io afxdp: each trial, in isolated mode, puts g0's NAPI in \
         threads on the tester's CPUs (for the receiver's XDP program on g0), and puts it back \
         after it"
    );
}

#[test]
fn xdp_both_ways_sets_the_reverse_path_for_each_run_and_puts_it_back() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let (dut, gen) = (lab.ns("dut"), lab.ns("gen"));
    let gro_d1 = || common::sh(&format!("ip netns exec {dut} ethtool -k d1"));
    let threaded_g0 = || {
        common::sh(&format!(
            "ip netns exec {gen} cat /sys/class/net/g0/threaded"
        ))
    };
    // The CPU plan sets GRO on d0 and r0's NAPI threads only.
    assert!(
        gro_d1().contains("generic-receive-offload: off"),
        "{}",
        gro_d1()
    );
    assert_eq!(threaded_g0().trim(), "0");
    let before = lab.refused();
    let (v, stdout, env) = bench_both_ways(&lab, "xdp", ("\"true\"", "\"true\""));
    // The XDP generator on r0 sends into d1 only with d1's GRO on, and
    // the in-kernel receiver on g0 counted the reverse stream.
    each_way_counted(&v, "xdp", lab.refused().since(&before).total());
    let note = "traffic both ways with --io xdp: each trial turns GRO on on the DUT's d1 (for \
                the XDP generator on r0) and, in isolated mode, puts g0's NAPI in threads on the \
                tester's CPUs (for the receiver's XDP program on g0), and puts both back after it";
    assert_eq!(env["reverse_path"], note, "{env}");
    assert!(stdout.contains(&format!("\nnote: {note}\n")), "{stdout}");
    // Both are back as they were.
    assert!(
        gro_d1().contains("generic-receive-offload: off"),
        "{}",
        gro_d1()
    );
    assert_eq!(threaded_g0().trim(), "0");
}

/// What a run both ways on the built-in lab with backend `io` must show:
/// each direction's backends and streams and, when the host refused
/// nothing (`refused`: its backlog refusals over the run), every frame
/// received, as its receiver and the ports' counters say.
fn each_way_counted(v: &Value, io: &str, refused: u64) {
    for way in v["directions"].as_array().unwrap() {
        let backend = |end: &str| way[end]["backend"].as_str().unwrap().to_string();
        assert!(backend("tx").starts_with(io), "{way}");
        assert!(backend("rx").starts_with(io), "{way}");
        assert_eq!(n(&way["rx"]["streams"]), 2000, "{way}");
        if refused == 0 {
            // Nothing refused on a quiet host: every frame of each
            // direction arrived, in sequence.
            assert_eq!(n(&way["rx"]["packets"]), n(&way["tx"]["packets"]), "{way}");
            assert_eq!(
                (
                    n(&way["lost"]),
                    n(&way["rx"]["lost"]),
                    n(&way["rx"]["duplicates"])
                ),
                (0, 0, 0),
                "{way}"
            );
        }
    }
    // The ports' own counters agree with each direction's ends: g0 sent
    // the forward stream and received the reverse one, r0 the other way
    // round (the lab's own neighbour messages aside).
    let (fwd, rev) = (&v["directions"][0], &v["directions"][1]);
    let port = |iface: &str, which: &str| -> u64 {
        let c = v["lab_counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["iface"] == iface)
            .unwrap_or_else(|| panic!("no counters of {iface}: {v}"));
        n(&c[which])
    };
    for (iface, which, want) in [
        ("g0", "tx_packets", n(&fwd["tx"]["packets"])),
        (
            "r0",
            "rx_packets",
            n(&fwd["tx"]["packets"]) - n(&fwd["lost"]),
        ),
        ("r0", "tx_packets", n(&rev["tx"]["packets"])),
        (
            "g0",
            "rx_packets",
            n(&rev["tx"]["packets"]) - n(&rev["lost"]),
        ),
    ] {
        let got = port(iface, which);
        assert!(
            (want..want + 10).contains(&got),
            "{iface} {which}: {got}, want {want}"
        );
    }
}

#[test]
fn a_loss_both_ways_is_placed_in_its_direction() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let before = lab.refused();
    // The DUT drops the reverse stream's frame of sequence number 2 in
    // each of its 2000 streams (sources 198.19.10.x): 2000 frames, none
    // of the forward stream's.
    let apply = "\"nft 'add table ip bidirdrops; add chain ip bidirdrops forward_test { type filter hook forward priority 0; }; add rule ip bidirdrops forward_test ip saddr 198.19.10.0/24 udp dport 2000 @th,104,32 2 drop'\"";
    let (v, stdout, _) = bench_both_ways(
        &lab,
        "afpacket",
        (apply, "\"nft delete table ip bidirdrops\""),
    );
    let refused = lab.refused().since(&before).total();
    let (fwd, rev) = (&v["directions"][0], &v["directions"][1]);
    let nft = |d: &Value| -> u64 {
        d["drops"]["places"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["reason"] == "NETFILTER_DROP")
            .map(|p| {
                assert_eq!(
                    (&p["iface"], &p["side"]),
                    (&json!("d1"), &json!("dut")),
                    "{p}"
                );
                n(&p["frames"])
            })
            .sum()
    };
    assert_eq!(nft(fwd), 0, "{fwd}");
    let traced = nft(rev);
    if refused == 0 {
        assert_eq!((n(&fwd["lost"]), n(&rev["lost"])), (0, 2000), "{v}");
        // The tracer sees nearly all of them; what it missed stays
        // unexplained in the reverse direction.
        common::assert_traced(traced, 2000, &rev.to_string());
        assert_eq!(n(&rev["drops"]["unexplained"]), 2000 - traced, "{rev}");
        let line = said(&stdout, "reverse").2;
        assert!(
            line.contains(&format!("DUT nft_do_chain NETFILTER_DROP {traced} (")),
            "{line}"
        );
        let line = said(&stdout, "forward").2;
        assert!(line.ends_with("lost 0 (0.00%)"), "{line}");
    } else {
        // A loaded host's backlogs refused frames too: nft's are still
        // the reverse stream's, at most its 2000.
        assert!(traced <= 2000 && n(&rev["lost"]) >= traced, "{v}");
    }
    // The total places nft's drops once.
    assert_eq!(nft(&json!({"drops": v["drops"]})), traced, "{v}");
}

#[test]
fn bidir_with_resume_is_one_line_and_exit_2() {
    let r = common::pktlab(&["rfc2544", "--bidir", "--resume", "/nonexistent"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "pktlab: --bidir cannot be used with --resume: the campaign is the one saved in /nonexistent\n"
        )
    );
}

#[test]
fn a_search_both_ways_asks_each_direction_for_its_load() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = common::pktlab(&[
        "rfc2544",
        "--bidir",
        "--prefix",
        &lab.prefix,
        "-o",
        out.to_str().unwrap(),
        "--max-rate",
        "10k",
        "--duration-sum",
        "2s",
        "--width",
        "2",
        "--goal",
        "0",
        "--no-report",
        "--no-history",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        let ways = l["directions"].as_array().expect("each direction");
        assert_eq!(ways.len(), 2, "{l}");
        assert_eq!(
            (&ways[0]["name"], &ways[1]["name"]),
            (&json!("forward"), &json!("reverse"))
        );
        let sum = |key: &str| ways.iter().map(|w| n(&w[key])).sum::<u64>();
        assert_eq!(
            (n(&l["tx"]), n(&l["rx"]), n(&l["lost"])),
            (sum("tx"), sum("rx"), sum("lost")),
            "{l}"
        );
        assert_eq!(n(&l["drops"]["lost"]), sum("lost"), "{l}");
        // The load is each direction's: at most 10 kpps asked, and the
        // offered load is half the frames of both over the trial.
        let intended = l["intended_pps"].as_f64().unwrap();
        assert!(intended <= 10_000.0, "{l}");
        let offered = n(&l["tx"]) as f64 / l["duration_s"].as_f64().unwrap() / 2.0;
        assert!(
            (l["offered_pps"].as_f64().unwrap() - offered).abs() < 1e-6,
            "{l}"
        );
        for w in ways {
            assert!(n(&w["rx"]) <= n(&w["tx"]), "{w}");
            // 10 kpps for at most the 2 s of the search's trials.
            assert!(n(&w["tx"]) <= 20_100, "{w}");
        }
    }
    // Each trial's line says both directions.
    assert!(r.stdout.contains(" pps each way: lost "), "{}", r.stdout);
    assert!(r.stdout.contains("\n    forward: sent "), "{}", r.stdout);
    assert!(r.stdout.contains("\n    reverse: sent "), "{}", r.stdout);
    // rfc2544.json: each direction's loss at the NDR's bounds, worked out
    // here from the trials at each bound's load.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rfc2544.json")).unwrap()).unwrap();
    let ndr = &report["throughput"][0]["goals"][0];
    let ways = ndr["directions"].as_array().expect("each direction's loss");
    assert_eq!(ways.len(), 2, "{ndr}");
    for (i, name) in ["forward", "reverse"].iter().enumerate() {
        assert_eq!(ways[i]["name"], json!(name), "{ndr}");
        for bound in ["lower", "upper"] {
            let Some(load) = ndr[format!("{bound}_intended_pps")].as_f64() else {
                assert!(ways[i][format!("{bound}_loss_ratio")].is_null(), "{ndr}");
                continue;
            };
            let (mut sent, mut lost) = (0, 0);
            for l in lines
                .iter()
                .filter(|l| l["test"] == "throughput" && l["intended_pps"].as_f64() == Some(load))
            {
                sent += n(&l["directions"][i]["tx"]);
                lost += n(&l["directions"][i]["lost"]);
            }
            let ratio = ways[i][format!("{bound}_loss_ratio")].as_f64().unwrap();
            assert!(
                (ratio - lost as f64 / sent as f64).abs() < 1e-12,
                "{name} at the {bound} bound: {ratio} against {lost}/{sent}: {ndr}"
            );
        }
        // And in the text, under the goal's line.
        assert!(
            r.stdout.contains(&format!("\n    {name}: lost ")),
            "{}",
            r.stdout
        );
    }
}
