//! Stateful DUTs on the built-in lab (root): `nft-stateful` and `nat44`
//! pass an answer from the outside only for a connection opened from the
//! inside, `nat44` translates the source, and `pktlab rfc9693` finds the
//! connection table's capacity where nf_conntrack_max puts it, the
//! connection establishment rate and the throughput over established
//! connections (both ways at once) with bounds and a trace.

mod common;

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::time::Duration;

use common::{one_at_a_time, pktlab, sh, u, Capture, Lab, Receiver};
use pktlab_lab::dut::{builtin_config, BuiltinBase, Dut, DutRunner};
use pktlab_search::stateful::phases::StatefulTrial;
use pktlab_search::stateful::results::{StatefulReport, StatefulRun, REPORT_FILE};
use pktlab_search::stateful::throughput::ThroughputTrial;

fn in_ns(ns: &str, cmd: &str) -> String {
    sh(&format!("ip netns exec {ns} sh -c '{cmd}'"))
}

fn mac(lab: &Lab, role: &str, iface: &str) -> String {
    in_ns(
        &lab.ns(role),
        &format!("cat /sys/class/net/{iface}/address"),
    )
    .trim()
    .to_string()
}

impl Capture {
    /// Stops the capture and returns each UDP frame's (source, source
    /// port, destination, destination port), decoded from its bytes.
    fn tuples(self) -> Vec<(Ipv4Addr, u16, Ipv4Addr, u16)> {
        self.frames()
            .into_iter()
            .map(|b| {
                // Ethernet (14 bytes), IPv4 with its header length, UDP.
                assert_eq!(&b[12..14], [0x08, 0x00], "not IPv4: {b:02x?}");
                let ihl = usize::from(b[14] & 0x0f) * 4;
                assert_eq!(b[23], 17, "not UDP: {b:02x?}");
                let ip = |at: usize| Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3]);
                let port = |at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
                let udp = 14 + ihl;
                (ip(26), port(udp), ip(30), port(udp + 2))
            })
            .collect()
    }
}

/// Test frames a receiver on `iface` in `ns` counts while `send` runs.
fn count_while(ns: &str, iface: &str, expect: u64, send: impl FnOnce()) -> u64 {
    let n = expect.max(1).to_string();
    let rx = Receiver::start(ns, &["-i", iface, "--io", "afpacket", "-n", &n, "-t", "4"]);
    send();
    let (_, s) = rx.wait(Duration::from_secs(20));
    u(&s, "packets") - u(&s, "foreign")
}

/// 100 connections from 198.18.10.1, ports 1024 to 1123, to 198.19.10.1:2000.
const PORTS: std::ops::RangeInclusive<u16> = 1024..=1123;

fn initiate(lab: &Lab, d0: &str) {
    let args = [
        "gen",
        "-i",
        "g0",
        "--io",
        "afpacket",
        "-D",
        d0,
        "-s",
        "198.18.10.1:1024-198.18.10.1:1123",
        "-d",
        "198.19.10.1:2000",
        "-n",
        "100",
        "-R",
        "2kpps",
        "-q",
    ];
    common::ok_in(&lab.ns("gen"), &args);
}

/// The answers of the 100 connections, addressed to `to`.
fn answer(lab: &Lab, d1: &str, to: &str) {
    let dst = format!("{to}:1024-{to}:1123");
    let args = [
        "gen",
        "-i",
        "r0",
        "--io",
        "afpacket",
        "-D",
        d1,
        "-s",
        "198.19.10.1:2000",
        "-d",
        &dst,
        "-n",
        "100",
        "-R",
        "2kpps",
        "-q",
    ];
    common::ok_in(&lab.ns("rcv"), &args);
}

#[test]
fn stateful_configurations_pass_answers_only_and_nat44_translates() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    let dut = Dut::new(
        DutRunner::Netns {
            netns: lab.ns("dut"),
        },
        None,
    );
    let (d0, d1) = (mac(&lab, "dut", "d0"), mac(&lab, "dut", "d1"));
    let inside: Ipv4Addr = "198.18.10.1".parse().unwrap();
    let outside: Ipv4Addr = "198.19.10.1".parse().unwrap();
    let ports: BTreeSet<u16> = PORTS.collect();
    for (name, seen) in [
        ("nft-stateful", inside),
        ("nat44", "198.19.0.203".parse().unwrap()),
    ] {
        let c = builtin_config(name, &["d0", "d1"], 2, &BuiltinBase::default()).unwrap();
        dut.apply(&c).unwrap();
        in_ns(&lab.ns("dut"), "conntrack -F");
        let to = seen.to_string();
        // No connection: every answer is dropped.
        let back = count_while(&lab.ns("gen"), "g0", 0, || answer(&lab, &d1, &to));
        assert_eq!(back, 0, "{name}: answers without a connection passed");
        // The Initiator's 100 frames pass, from `seen` with their ports.
        let cap = Capture::start(&lab.ns("rcv"), "r0", "out", &["-B", "16384"]);
        let out = count_while(&lab.ns("rcv"), "r0", 100, || initiate(&lab, &d0));
        assert_eq!(out, 100, "{name}");
        let tuples = cap.tuples();
        assert_eq!(tuples.len(), 100, "{name}: {tuples:?}");
        assert!(tuples
            .iter()
            .all(|t| t.0 == seen && t.2 == outside && t.3 == 2000));
        let sports: BTreeSet<u16> = tuples.iter().map(|t| t.1).collect();
        assert_eq!(sports, ports, "{name}: the source ports changed");
        assert_eq!(
            in_ns(
                &lab.ns("dut"),
                "cat /proc/sys/net/netfilter/nf_conntrack_count"
            )
            .trim(),
            "100",
            "{name}"
        );
        // Each answer of an open connection passes, back to the inside.
        let cap = Capture::start(&lab.ns("gen"), "g0", "back", &["-B", "16384"]);
        let back = count_while(&lab.ns("gen"), "g0", 100, || answer(&lab, &d1, &to));
        assert_eq!(back, 100, "{name}");
        let tuples = cap.tuples();
        assert_eq!(tuples.len(), 100, "{name}");
        assert!(tuples
            .iter()
            .all(|t| t.0 == outside && t.1 == 2000 && t.2 == inside));
        let dports: BTreeSet<u16> = tuples.iter().map(|t| t.3).collect();
        assert_eq!(dports, ports, "{name}");
        dut.revert(&c, "").unwrap();
    }
}

/// Sets the host's nf_conntrack_max and puts the old value back when
/// dropped, also when the test fails.
struct ConntrackMax(String);

impl ConntrackMax {
    const FILE: &'static str = "/proc/sys/net/netfilter/nf_conntrack_max";

    fn set(value: u64) -> ConntrackMax {
        let old = std::fs::read_to_string(Self::FILE)
            .unwrap()
            .trim()
            .to_string();
        let guard = ConntrackMax(old);
        std::fs::write(Self::FILE, value.to_string()).unwrap();
        guard
    }
}

impl Drop for ConntrackMax {
    fn drop(&mut self) {
        std::fs::write(Self::FILE, &self.0).unwrap();
    }
}

/// `pktlab rfc9693 ARGS` on `lab`; its one run from `rfc9693.json`.
fn rfc9693(lab: &Lab, args: &[&str]) -> StatefulRun {
    let mut runs = rfc9693_runs(lab, args);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    runs.remove(0)
}

/// `pktlab rfc9693 ARGS` on `lab`; every run from `rfc9693.json`.
fn rfc9693_runs(lab: &Lab, args: &[&str]) -> Vec<StatefulRun> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let d = dir.to_str().unwrap();
    let mut all = vec!["rfc9693", "--prefix", &lab.prefix, "-o", d, "--json"];
    all.extend(args);
    let r = pktlab(&all);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(dir.join(REPORT_FILE)).unwrap();
    let report: StatefulReport = serde_json::from_str(&text).unwrap();
    report.runs
}

fn trials_of<'a>(run: &'a StatefulRun, test: &str) -> Vec<&'a StatefulTrial> {
    run.trials.iter().filter(|t| t.test == test).collect()
}

#[test]
fn table_capacity_is_nf_conntrack_max() {
    const MAX: u64 = 3000;
    let _one = one_at_a_time();
    let lab = Lab::up();
    let run = {
        let _max = ConntrackMax::set(MAX);
        rfc9693(
            &lab,
            &[
                "--configs",
                "nft-stateful",
                "--tests",
                "capacity",
                "--width",
                "0.1",
            ],
        )
    };
    assert_eq!(run.conntrack_max, Some(MAX));
    let cap = run.capacity.as_ref().unwrap();
    let (lower, upper) = (cap.lower.unwrap(), cap.upper.unwrap());
    // Within 1 % of the limit, and bounds on either side of it.
    let trace = format!("{cap:?}\n{:#?}", run.trials);
    assert!(lower <= MAX as f64 && lower >= MAX as f64 * 0.99, "{trace}");
    assert!(upper > MAX as f64 && upper <= MAX as f64 * 1.01, "{trace}");
    assert!(cap.complete, "{cap:?}");
    assert_eq!(run.count_at_capacity, Some(lower.round() as u64), "{run:?}");
    let trials = trials_of(&run, "capacity");
    assert!(trials.len() >= 2, "{trace}");
    for (i, t) in trials.iter().enumerate() {
        let n = t.connections;
        assert_eq!(t.preliminary_sent, n, "{t:?}");
        if n <= MAX {
            if t.validated() {
                assert_eq!(t.conntrack_count, Some(n), "{t:?}");
            } else {
                // Linux's garbage collector, after an overflow, dropped
                // connections the table had room for: the search ran the
                // same count again.
                assert_eq!(t.setup_refused, Some(0), "{trace}");
                assert_eq!(trials.get(i + 1).map(|t| t.connections), Some(n), "{trace}");
            }
            continue;
        }
        // Above the limit the table is full, and every frame beyond it
        // is refused or evicts an unanswered connection (Linux's
        // early_drop, counted by `conntrack -S`).
        assert_eq!(t.conntrack_count, Some(MAX), "{t:?}");
        let (refused, evicted) = (t.setup_refused.unwrap(), t.setup_evicted.unwrap());
        assert_eq!(refused + evicted, n - MAX, "{t:?}");
        assert_eq!(t.preliminary_received, n - refused, "{t:?}");
        // The validation loses the N - max answers of the connections the
        // table could not hold, and one more for each held connection an
        // unanswerable answer evicted before its own answer came.
        let lost = n - t.validation_received;
        let extra = lost - (n - MAX);
        assert!(extra <= t.validation_evicted.unwrap(), "{t:?}");
    }
}

#[test]
fn establishment_rate_is_searched_with_bounds_and_a_trace() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    // nft-stateful's filter with a policer of 20,000 new connections a
    // second (burst 100): 5000 connections set up at R pass only while
    // 20,000 x 5000 / R + 100 >= 5000, that is R <= 20,408, however fast
    // the machine is.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("policed.toml");
    std::fs::write(
        &file,
        "[[config]]\nname = \"policed\"\n\
         apply = [\'\'\'nft 'add table inet pktlab; \
         add chain inet pktlab forward { type filter hook forward priority filter; policy drop; }; \
         add rule inet pktlab forward ct state established,related accept; \
         add rule inet pktlab forward iifname \"d0\" ct state new limit rate 20000/second burst 100 packets accept' \'\'\']\n\
         revert = [\"nft delete table inet pktlab\"]\n",
    )
    .unwrap();
    let run = rfc9693(
        &lab,
        &[
            "-f",
            file.to_str().unwrap(),
            "--tests",
            "rate",
            "--connections",
            "5000",
            "--max-rate",
            "1M",
            "--width",
            "5",
        ],
    );
    // 1M new connections a second is far beyond the policer: the search
    // must find an upper bound below it, and a lower bound of validated
    // trials, both near the policer's 20,408.
    let trace = format!("{:?}\n{:#?}", run.rate, run.trials);
    assert_eq!(run.rate_connections, Some(5000));
    let rate = run.rate.as_ref().unwrap();
    let (lower, upper) = (rate.lower_intended, rate.upper_intended);
    let (lower, upper) = (lower.expect(&trace), upper.expect(&trace));
    assert!(lower < upper, "{trace}");
    assert!(lower < 30_000.0 && upper > 10_000.0, "{trace}");
    let trials = trials_of(&run, "rate");
    assert_eq!(trials.len(), run.trials.len());
    assert!(trials.len() >= 2, "{trace}");
    let at = |r: f64| {
        trials
            .iter()
            .filter(|t| (t.setup_rate_pps - r).abs() < 1e-6 * r)
            .collect::<Vec<_>>()
    };
    // The trace holds the trials that decided the bounds: every
    // connection validated at the lower one, some failed at the upper.
    assert!(!at(lower).is_empty(), "{trace}");
    assert!(at(lower).iter().all(|t| t.validated()), "{trace}");
    assert!(at(upper).iter().any(|t| !t.validated()), "{trace}");
    for t in trials {
        assert_eq!((t.connections, t.preliminary_sent), (5000, 5000), "{t:?}");
    }
}

/// A campaign file of one configuration `name` whose nft lines follow
/// the forward chain's drop policy.
fn nft_config(dir: &std::path::Path, name: &str, rules: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.toml"));
    let rules: String = rules
        .iter()
        .map(|r| format!("; add rule inet pktlab forward {r}"))
        .collect();
    std::fs::write(
        &file,
        format!(
            "[[config]]\nname = \"{name}\"\n\
             apply = [\'\'\'nft 'add table inet pktlab; \
             add chain inet pktlab forward {{ type filter hook forward priority filter; policy drop; }}\
             {rules}' \'\'\']\n\
             revert = [\"nft delete table inet pktlab\"]\n"
        ),
    )
    .unwrap();
    file
}

/// Every throughput trial's counts are exact each way: the connections
/// all set up, each direction sent, and sent = received + lost.
fn exact_counts(run: &StatefulRun, connections: u64) {
    assert!(!run.throughput_trials.is_empty(), "{run:#?}");
    for t in &run.throughput_trials {
        assert_eq!(t.connections, connections, "{t:?}");
        assert_eq!(t.preliminary_sent, connections, "{t:?}");
        assert_eq!(t.preliminary_received, connections, "{t:?}");
        assert_eq!(t.conntrack_count, Some(connections), "{t:?}");
        for w in [&t.forward, &t.reverse] {
            assert!(w.sent > 0, "{t:?}");
            assert_eq!(w.sent, w.received + w.lost, "{t:?}");
        }
    }
    assert_eq!(run.throughput_connections, Some(connections));
}

/// The trials at a rate each way.
fn throughput_at(run: &StatefulRun, rate: f64) -> Vec<&ThroughputTrial> {
    run.throughput_trials
        .iter()
        .filter(|t| (t.rate_pps - rate).abs() < 1e-6 * rate)
        .collect()
}

#[test]
fn throughput_over_established_connections_both_ways() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    // The built-in nft-stateful and nat44, at rates any tester reaches:
    // the search finds a lossless rate, each direction passing.
    let runs = rfc9693_runs(
        &lab,
        &[
            "--configs",
            "nft-stateful,nat44",
            "--tests",
            "throughput",
            "--connections",
            "1000",
            "--duration",
            "1",
            "--min-rate",
            "1k",
            "--max-rate",
            "4k",
            "--width",
            "10",
        ],
    );
    let configs: Vec<&str> = runs.iter().map(|r| r.config.as_str()).collect();
    assert_eq!(configs, ["nft-stateful", "nat44"]);
    for run in &runs {
        exact_counts(run, 1000);
        let b = run.throughput.as_ref().unwrap();
        let trace = format!("{b:?}\n{:#?}", run.throughput_trials);
        let lower = b.lower_intended.expect(&trace);
        // Every frame of both ways passed at the lower bound: the
        // answers to the inside address (or, under nat44, to the DUT's
        // outside address) were let through as established traffic.
        let at = throughput_at(run, lower);
        assert!(!at.is_empty(), "{trace}");
        // (A trial whose loss the drop tracer placed mostly on the
        // tester's side is judged without it, as in `pktlab rfc2544`.)
        for t in at.iter().filter(|t| !t.tester_limited) {
            assert_eq!((t.forward.lost, t.reverse.lost), (0, 0), "{trace}");
            assert_eq!(t.reverse.received, t.reverse.sent, "{trace}");
        }
        if let Some(upper) = b.upper_intended {
            assert!(upper > lower, "{trace}");
            assert!(throughput_at(run, upper).iter().any(|t| t.lost() > 0));
        } else {
            assert!(b.hit_max || b.generator_limited, "{trace}");
        }
    }
    assert_eq!(
        runs[1].translated.as_deref(),
        Some("198.19.0.203"),
        "{runs:#?}"
    );
}

#[test]
fn throughput_is_bounded_by_a_policer_of_established_traffic() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    // Established traffic policed at 20,000 frames a second (burst
    // 1000), both ways together: over a 2 s trial no frame is lost while
    // 2 x R x 2 <= 20,000 x 2 + 1000, that is R <= 10,250 each way,
    // however fast the machine is.
    let tmp = tempfile::tempdir().unwrap();
    let file = nft_config(
        tmp.path(),
        "policed",
        &[
            "ct state established limit rate 20000/second burst 1000 packets accept",
            "iifname \"d0\" ct state new accept",
        ],
    );
    let run = rfc9693(
        &lab,
        &[
            "-f",
            file.to_str().unwrap(),
            "--tests",
            "throughput",
            "--connections",
            "1000",
            "--duration",
            "2",
            "--min-rate",
            "1k",
            "--max-rate",
            "100k",
            "--width",
            "5",
        ],
    );
    exact_counts(&run, 1000);
    let b = run.throughput.as_ref().unwrap();
    let trace = format!("{b:?}\n{:#?}", run.throughput_trials);
    let (lower, upper) = (
        b.lower_intended.expect(&trace),
        b.upper_intended.expect(&trace),
    );
    assert!(lower < upper, "{trace}");
    // The rates the generator offered at the bounds (less than asked on
    // a busy machine) bracket the policer's.
    let (offered_lower, offered_upper) = (b.lower.unwrap(), b.upper.unwrap());
    assert!(
        offered_lower < 10_800.0 && offered_upper > 5_000.0,
        "{trace}"
    );
    assert!(
        throughput_at(&run, lower)
            .iter()
            .all(|t| t.lost() == 0 || t.tester_limited),
        "{trace}"
    );
    // Above the policer both directions lose: it counts them together.
    let over = throughput_at(&run, upper);
    assert!(
        over.iter()
            .any(|t| t.forward.lost > 0 && t.reverse.lost > 0),
        "{trace}"
    );
    assert_eq!(run.throughput_trials[0].rate_pps, 100_000.0, "{trace}");
}

#[test]
fn answers_a_dut_drops_fail_every_throughput_trial_in_the_reverse_direction() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    // Only the inside port's frames pass, tracked (a rule without `ct`
    // would leave conntrack off in the DUT's namespace): the DUT holds
    // the connections, yet every answer is dropped.
    let tmp = tempfile::tempdir().unwrap();
    let rule = "iifname \"d0\" ct state new,established accept";
    let file = nft_config(tmp.path(), "no-answers", &[rule]);
    let run = rfc9693(
        &lab,
        &[
            "-f",
            file.to_str().unwrap(),
            "--tests",
            "throughput",
            "--connections",
            "500",
            "--duration",
            "1",
            "--min-rate",
            "1k",
            "--max-rate",
            "4k",
            "--width",
            "10",
        ],
    );
    exact_counts(&run, 500);
    let b = run.throughput.as_ref().unwrap();
    let trace = format!("{b:?}\n{:#?}", run.throughput_trials);
    // No rate passes: the upper bound is the lowest rate.
    assert_eq!(b.lower, None, "{trace}");
    assert_eq!(b.upper_intended, Some(1_000.0), "{trace}");
    for t in &run.throughput_trials {
        assert_eq!(t.forward.lost, 0, "{trace}");
        assert_eq!(t.forward.received, t.forward.sent, "{trace}");
        assert_eq!(t.reverse.received, 0, "{trace}");
    }
}
