//! `--drop-trace` on `pktlab gen` and `pktlab recv` (root, nftables, the
//! built-in lab): recv given the generator's ranges splits its loss over
//! the kernel's places in the DUT, gen names the kernel's drops of its
//! frames on this host; off prints nothing of it; without permission for
//! BPF, auto says so in one line and the run goes on, on fails.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{assert_traced, ok_in, one_at_a_time, u, Lab, Receiver};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

/// The generator's ranges, as gen's defaults (2000 streams).
const RANGES: [&str; 4] = [
    "-s",
    "198.18.10.1:2000-198.18.10.20",
    "-d",
    "198.19.10.1:2000-198.19.10.100",
];

/// 10000 frames over the lab's 2000 streams: 5 per stream, sequence
/// numbers 0 to 4.
fn send(lab: &Lab, extra: &[&str]) -> String {
    let mut args = vec!["gen", "-i", "g0", "-n", "10000", "-R", "20kpps"];
    args.extend(extra);
    ok_in(&lab.ns("gen"), &args)
}

/// Drops each stream's frame with sequence number 2 in the DUT: 2000
/// frames of the 10000.
fn drop_seq2(lab: &Lab) {
    common::sh(&format!(
        "ip netns exec {} nft 'add table ip pktlabgr; \
         add chain ip pktlabgr forward_test {{ type filter hook forward priority 0; }}; \
         add rule ip pktlabgr forward_test udp dport 2000 @th,104,32 2 drop'",
        lab.ns("dut")
    ));
}

/// A share as the drops line writes it (two significant figures or more).
fn percent(part: u64, whole: u64) -> String {
    let share = 100.0 * part as f64 / whole as f64;
    if share >= 10.0 {
        format!("{share:.0}%")
    } else if share >= 1.0 {
        format!("{share:.1}%")
    } else {
        format!("{share:.2}%")
    }
}

/// `pktlab recv` as text in the receiver's namespace while `gen` sends;
/// its whole output once it stopped by itself.
fn recv_text(lab: &Lab, args: &[&str], gen: &[&str]) -> String {
    let mut child = Command::new("ip")
        .args(["netns", "exec", &lab.ns("rcv"), common::PKTLAB, "recv"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // The header comes once the receiver counts (and its tracer runs).
    let mut text = String::new();
    out.read_line(&mut text).unwrap();
    send(lab, gen);
    assert!(child.wait().unwrap().success(), "{text}");
    out.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn recv_with_the_ranges_puts_its_loss_at_the_duts_nft_rule() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    drop_seq2(&lab);
    let mut args = vec!["-i", "r0", "-W", "2", "-t", "50"];
    args.extend(RANGES);
    // The tracer is on by default when the ranges are given.
    let rx = Receiver::start(&lab.ns("rcv"), &args);
    send(&lab, &["-q"]);
    let (_, s) = rx.wait(WAIT);
    assert_eq!((u(&s, "packets"), u(&s, "lost")), (8000, 2000), "{s}");
    assert_eq!(u(&s, "streams_missing"), 0, "{s}");
    let d = &s["drops"];
    let traced = d["dut"].as_u64().unwrap();
    assert_traced(traced, 2000, &s.to_string());
    // The receiver namespace's own "not for this host" drops of the 8000
    // frames it received are no place.
    assert_eq!(
        d,
        &json!({"lost": 2000, "dut": traced, "tester": 0, "unexplained": 2000 - traced,
            "places": [{"side": "dut", "host": "local", "netns": lab.ns("dut"), "iface": "d0",
                "layer": "kernel", "reason": "NETFILTER_DROP", "location": "nft_do_chain",
                "frames": traced}],
            "traced": true, "tester_limited": false}),
        "{s}"
    );

    // As text: the line after the summary, 2000 of the 10000 frames,
    // with this run's count of the tracer.
    let text = recv_text(&lab, &args, &[]);
    let line = text.lines().last().unwrap();
    let n: u64 = line
        .split("NETFILTER_DROP ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no nft place in {text}"));
    assert_traced(n, 2000, &text);
    let mut want = format!(
        "lost 2000 (20%): DUT nft_do_chain NETFILTER_DROP {n} ({})",
        percent(n, 2000)
    );
    if n < 2000 {
        want += &format!(", unexplained {} ({})", 2000 - n, percent(2000 - n, 2000));
        if (2000 - n) * 100 > 2000 {
            want += ", more than 1% of the loss unexplained";
        }
    }
    assert_eq!(line, want, "{text}");
    assert!(
        text.contains("\nAll 2000 expected streams arrived.\nlost 2000 "),
        "{text}"
    );

    // Off: no drops line, no drops object.
    let mut off = args.clone();
    off.extend(["--drop-trace", "off"]);
    let text = recv_text(&lab, &off, &[]);
    assert!(text.contains(", 2000 lost,"), "{text}");
    assert!(!text.contains("\nlost "), "{text}");
    let rx = Receiver::start(&lab.ns("rcv"), &off);
    send(&lab, &["-q"]);
    let (_, s) = rx.wait(WAIT);
    assert_eq!(u(&s, "lost"), 2000, "{s}");
    assert!(s.get("drops").is_none(), "{s}");
}

/// A blackhole route for 198.19.10.1 in the DUT: the 20 streams to it (5
/// frames each) never arrive. gen names the kernel's drops of its 100
/// frames there; recv counts the 100 as lost and puts them at the same
/// place.
#[test]
fn a_blackhole_is_named_by_gen_and_recv() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    common::sh(&format!(
        "ip -n {} route add blackhole 198.19.10.1/32",
        lab.ns("dut")
    ));
    let mut args = vec!["-i", "r0", "-W", "2", "-t", "50"];
    args.extend(RANGES);
    let rx = Receiver::start(&lab.ns("rcv"), &args);
    let text = send(&lab, &["-q", "--drop-trace", "on"]);
    let (_, s) = rx.wait(WAIT);
    assert_eq!((u(&s, "packets"), u(&s, "lost")), (9900, 0), "{s}");
    assert_eq!(u(&s, "streams_missing"), 20, "{s}");
    // This kernel (6.18) names no reason for the blackhole's drop in
    // ip_error: NOT_SPECIFIED, read with `pktlab drops`.
    let blackhole = |frames: u64| {
        json!({"side": "dut", "host": "local", "netns": lab.ns("dut"), "iface": "d0",
            "layer": "kernel", "reason": "NOT_SPECIFIED", "location": "ip_error",
            "frames": frames})
    };
    let d = &s["drops"];
    let traced = d["dut"].as_u64().unwrap();
    assert_traced(traced, 100, &s.to_string());
    assert_eq!(
        d,
        &json!({"lost": 100, "dut": traced, "tester": 0, "unexplained": 100 - traced,
            "places": [blackhole(traced)], "traced": true, "tester_limited": false}),
        "{s}"
    );
    // gen's line: the DUT's drops, not the receiver namespace's.
    let line = text
        .lines()
        .find(|l| l.starts_with("dropped on this host: "))
        .unwrap_or_else(|| panic!("no drops line in {text}"));
    let n: u64 = line["dropped on this host: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_traced(n, 100, line);
    assert_eq!(
        line,
        format!("dropped on this host: {n} test frames: DUT ip_error NOT_SPECIFIED {n} (100%)")
    );
    // The same as JSON, in gen's summary.
    let out = send(&lab, &["--json", "--drop-trace", "auto"]);
    let summary: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let n = u(&summary["drops"], "total");
    assert_traced(n, 100, &summary.to_string());
    assert_eq!(
        summary["drops"],
        json!({"total": n, "places": [blackhole(n)]}),
        "{summary}"
    );
    // Off, gen's default: no line.
    let text = send(&lab, &[]);
    assert!(text.contains("Sent 10000 packets"), "{text}");
    assert!(!text.contains("dropped on this host"), "{text}");
}

#[test]
fn a_bad_mode_is_a_usage_error() {
    for args in [
        ["gen", "--io", "null", "-n", "1", "--drop-trace", "maybe"].as_slice(),
        ["recv", "-i", "lo", "-n", "1", "--drop-trace", "maybe"].as_slice(),
    ] {
        let r = common::pktlab(args);
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(
            r.stderr,
            "pktlab: invalid drop trace 'maybe': use auto, on or off\n"
        );
        assert_eq!(r.stdout, "");
    }
}

/// `pktlab args` as user nobody, without capabilities.
fn as_nobody(args: &[&str]) -> common::Run {
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            common::PKTLAB,
        ])
        .args(args)
        .output()
        .unwrap();
    common::finish(out)
}

const NO_BPF: &str = "the drop tracer (BPF on skb:kfree_skb) needs root or CAP_BPF and CAP_PERFMON";

/// Without permission for BPF: auto says so in one line and the run goes
/// on (gen to nowhere, recv from a pcap file); on fails with one line.
#[test]
fn without_permission_for_bpf_auto_goes_on_and_on_fails() {
    let gen = ["gen", "--io", "null", "-n", "1000", "-q"];
    let mut auto = gen.to_vec();
    auto.extend(["--drop-trace", "auto"]);
    let r = as_nobody(&auto);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stderr,
        format!("drop trace off: {NO_BPF}; no drops are reported\n")
    );
    assert!(r.stdout.starts_with("Sent 1000 packets"), "{r:?}");
    assert!(!r.stdout.contains("dropped on this host"), "{r:?}");
    let mut on = gen.to_vec();
    on.extend(["--drop-trace", "on"]);
    let r = as_nobody(&on);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr, format!("pktlab: drop trace: {NO_BPF}\n"));
    assert_eq!(r.stdout, "");

    // recv reads a file of 2000 frames, one per stream, that nobody may
    // read; nothing is lost, and the line says so.
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("frames.pcap");
    let io = format!("pcap:{}", pcap.display());
    let r = common::pktlab(&["gen", "--io", &io, "-n", "2000", "-q"]);
    assert_eq!(r.code, 0, "{r:?}");
    common::sh(&format!("chmod 755 {}", dir.path().display()));
    common::sh(&format!("chmod 644 {}", pcap.display()));
    let mut recv = vec!["recv", "--io", &io, "--drop-trace", "auto"];
    recv.extend(RANGES);
    let r = as_nobody(&recv);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stderr,
        format!("drop trace off: {NO_BPF}; the loss is attributed to the receiver's ring only\n")
    );
    assert!(
        r.stdout
            .ends_with("All 2000 expected streams arrived.\nlost 0 (0.00%)\n"),
        "{}",
        r.stdout
    );
    let on = recv
        .iter()
        .map(|a| if *a == "auto" { "on" } else { a })
        .collect::<Vec<_>>();
    let r = as_nobody(&on);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr, format!("pktlab: drop trace: {NO_BPF}\n"));
}
