//! `pktlab drops` on the built-in lab (root, nftables): faults made on
//! purpose in the DUT are attributed in full to their place and the
//! kernel's reason, and frames that are not test frames are not counted.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use common::{assert_traced, ok_in, one_at_a_time, u, Lab, Receiver};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(60);

/// A `pktlab drops` running in the background, started before the
/// traffic (it has printed its first line once the tracer is attached).
struct Tracer {
    child: Child,
    lines: BufReader<ChildStdout>,
    first: String,
}

impl Tracer {
    fn start(args: &[&str]) -> Tracer {
        let mut child = Command::new(common::PKTLAB)
            .arg("drops")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        lines.read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "pktlab drops did not start");
        Tracer {
            child,
            lines,
            first,
        }
    }

    /// Ctrl-C, then everything it printed after its first line.
    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        let mut rest = String::new();
        self.lines.read_to_string(&mut rest).unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "pktlab drops failed: {err}");
        rest
    }

    /// Ctrl-C, then the JSON summary.
    fn summary(self) -> Value {
        let first: Value = serde_json::from_str(self.first.trim()).unwrap();
        assert_eq!(first["type"], "ready", "{}", self.first);
        let rest = self.stop();
        let last = rest.lines().last().expect("a summary");
        let v: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"));
        assert_eq!(v["type"], "summary", "{rest}");
        v
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (netns, iface, layer, reason, location, frames) of a summary place.
type PlaceRow = (String, String, String, String, String, u64);

/// Each summary place.
fn places(s: &Value) -> Vec<PlaceRow> {
    s["places"]
        .as_array()
        .expect("places")
        .iter()
        .map(|p| {
            let t = |k: &str| {
                p[k].as_str()
                    .unwrap_or_else(|| panic!("{k} in {p}"))
                    .to_string()
            };
            (
                t("netns"),
                t("iface"),
                t("layer"),
                t("reason"),
                t("location"),
                u(p, "frames"),
            )
        })
        .collect()
}

/// `places` without the DUT backlog's refusals (CPU_BACKLOG, which a busy
/// machine adds beside the fault a test made), and those refusals' sum.
fn without_backlog(s: &Value) -> (Vec<PlaceRow>, u64) {
    let (backlog, rest): (Vec<_>, Vec<_>) =
        places(s).into_iter().partition(|p| p.3 == "CPU_BACKLOG");
    (rest, backlog.iter().map(|p| p.5).sum())
}

fn nft(ns: &str, rules: &str) {
    let path = std::env::temp_dir().join(format!("pktlab-drops-{}-{ns}.nft", std::process::id()));
    std::fs::write(&path, rules).unwrap();
    common::sh(&format!("ip netns exec {ns} nft -f {}", path.display()));
    std::fs::remove_file(&path).unwrap();
}

/// 10000 test frames, 5 per stream over the lab's 2000 streams (sequence
/// numbers 0 to 4), through the DUT; returns the test frames received
/// (not the DUT's ARP requests, which the receiver counts as foreign).
fn send_through(lab: &Lab) -> u64 {
    let rx = Receiver::start(&lab.ns("rcv"), &["-i", "r0", "-W", "2", "-t", "50"]);
    ok_in(
        &lab.ns("gen"),
        &["gen", "-i", "g0", "-n", "10000", "-R", "20kpps", "-q"],
    );
    let (_, s) = rx.wait(WAIT);
    u(&s, "packets") - u(&s, "foreign")
}

/// The first fault: nft drops the frames whose sequence number is
/// 2 (one per stream, 2000), and UDP to port 9 (not test frames). All
/// 2000 lost frames are NETFILTER_DROP at nft_do_chain on d0; the 50
/// port-9 datagrams are counted only with --all.
#[test]
fn nft_drops_are_attributed_in_full_and_other_frames_are_not_counted() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    nft(
        &dut,
        "table ip pktlabtest {\n\
           chain forward_test {\n\
             type filter hook forward priority 0;\n\
             udp dport 2000 @th,104,32 2 counter drop\n\
             udp dport 9 counter drop\n\
           }\n\
         }\n",
    );
    let test_only = Tracer::start(&["--json", "--netns", &dut]);
    let all = Tracer::start(&["--json", "--all", "--netns", &dut]);
    let before = lab.refused();
    let received = send_through(&lab);
    let refused = lab.refused().since(&before);
    // 50 UDP datagrams to port 9 from the generator's own stack.
    common::sh(&format!(
        "ip netns exec {} bash -c 'for i in $(seq 50); do echo x > /dev/udp/198.19.10.1/9; done'",
        lab.ns("gen")
    ));
    let s = test_only.summary();
    let a = all.summary();
    // A frame the DUT's backlog refused never reached nft: of the 2000
    // numbered 2, nft dropped those the backlog did not.
    let nft_min = 2000 - refused.dut.min(2000);
    assert!(
        (8000..=8000 + refused.dut).contains(&(received + refused.total())),
        "{received} received, {refused:?}"
    );
    let nft_place = |n: u64| {
        (
            dut.clone(),
            "d0".to_string(),
            "kernel".to_string(),
            "NETFILTER_DROP".to_string(),
            "nft_do_chain".to_string(),
            n,
        )
    };
    let (nft_places, backlog) = without_backlog(&s);
    assert!(backlog <= refused.dut, "{s}");
    let traced = u(&s, "total") - backlog;
    assert!(
        traced <= 2000 && traced * 100 >= nft_min * 85,
        "the tracer counted {traced} of {nft_min} to 2000 nft drops: {s}"
    );
    assert_eq!(nft_places, vec![nft_place(traced)]);
    // --all also sees the port-9 datagrams, at the same place: exactly 50
    // more than the kernel events of the test frames. (The DUT's own
    // traffic in the lab is none: IPv6 router solicitations and the like
    // are not dropped there.)
    let (all_places, all_backlog) = without_backlog(&a);
    assert_eq!(all_places, vec![nft_place(traced + 50)], "{s}");
    assert_eq!(u(&a, "total"), traced + 50 + all_backlog);
}

/// A blackhole route for 198.19.10.1 (20 streams, 5 frames each) and a
/// route for 198.19.10.2 through a next hop that never answers ARP: each
/// of the 100 frames at ip_error, and the other 100 at the neighbour code
/// (NEIGH_FAILED, or NEIGH_QUEUEFULL when the queue is full), the human
/// text's summary read.
#[test]
fn blackhole_and_unresolvable_next_hop_are_attributed_in_text() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    common::sh(&format!("ip -n {dut} route add blackhole 198.19.10.1/32"));
    common::sh(&format!(
        "ip -n {dut} route add 198.19.10.2/32 via 198.19.0.250 dev d1"
    ));
    let tracer = Tracer::start(&["--netns", &dut]);
    assert!(
        tracer.first.starts_with("    t     frames/s  netns"),
        "{}",
        tracer.first
    );
    let before = lab.refused();
    let received = send_through(&lab);
    let refused = lab.refused().since(&before);
    // ARP gives up after 3 solicitations a second apart: the neighbour
    // turns FAILED and its queued frames are dropped then.
    wait_until(
        "198.19.0.250's neighbour entry in the DUT to fail",
        Duration::from_secs(20),
        || common::sh(&format!("ip -n {dut} neigh show 198.19.0.250 dev d1")).contains("FAILED"),
    );
    let text = tracer.stop();
    assert_eq!(received + refused.total(), 9800, "{refused:?}");
    let summary: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("test frames dropped in"))
        .collect();
    let mut neigh = 0;
    let mut blackhole = 0;
    let mut backlog = 0;
    // The last line, when a backlog refused frames meanwhile: what the
    // kernel counted (softnet), CPU by CPU.
    let counted_line = "counted by the kernel meanwhile (softnet dropped, frames of any kind): \
                        CPU_BACKLOG ";
    let (counted, places): (Vec<&str>, Vec<&str>) = summary[1..]
        .iter()
        .partition(|l| l.starts_with(counted_line));
    let counted: u64 = counted
        .iter()
        .flat_map(|l| l[counted_line.len()..].split(", "))
        .map(|cpu| cpu.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    for line in &places {
        let f: Vec<&str> = line.split_whitespace().collect();
        // frames (share%) netns iface location reason
        assert_eq!(f.len(), 7, "{line}");
        let n: u64 = f[0].parse().unwrap();
        assert_eq!(f[3], dut, "{line}");
        match (f[4], f[5], f[6]) {
            ("d0", "ip_error", _) => blackhole += n,
            ("d1", _, "NEIGH_FAILED" | "NEIGH_QUEUEFULL") => neigh += n,
            ("d0", "enqueue_to_backlog", "CPU_BACKLOG") => backlog += n,
            _ => panic!("unexpected place: {line}"),
        }
    }
    assert_eq!((blackhole, neigh), (100, 100), "{text}");
    assert!(backlog <= refused.dut, "{refused:?} {text}");
    // Every refusal traced was counted too (the count has every frame,
    // other labs' as well).
    assert!(counted >= backlog, "{text}");
    assert!(
        summary
            .first()
            .is_some_and(|l| l.starts_with(&format!("{} test frames dropped in ", 200 + backlog))),
        "{text}"
    );
    // Each interval line names the place it saw.
    assert!(text.lines().any(|l| l.contains(" ip_error ")), "{text}");
}

/// Bad input is one line and exit 2; the namespace must exist.
#[test]
fn bad_input_is_one_line() {
    let r = common::pktlab(&["drops", "--netns", "pktlab-no-such-ns", "-t", "1s"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr.trim(),
        "pktlab: network namespace pktlab-no-such-ns does not exist"
    );
    let r = common::pktlab(&["drops", "-t", "0s"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr.trim(),
        "pktlab: invalid time '0s': use more than 0s"
    );
}

/// With -t and nothing dropped: interval lines, then a summary of 0.
#[test]
fn a_quiet_run_ends_by_itself_with_zero() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let r = common::pktlab(&[
        "drops",
        "--json",
        "--netns",
        &lab.ns("dut"),
        "-t",
        "2s",
        "-w",
        "1s",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ready", "interval", "interval", "summary"]);
    let s = lines.last().unwrap();
    assert_eq!(u(s, "total"), 0);
    assert_eq!(s["places"], serde_json::json!([]));
    let secs = s["seconds"].as_f64().unwrap();
    assert!((1.9..10.0).contains(&secs), "{secs}");
}

/// `recv` given the generator's ranges: with a blackhole route for
/// 198.19.10.1 and 198.19.10.2 in the DUT, the 40 streams to them (20
/// sources each) never arrive, which the receiver alone cannot see as
/// loss; the JSON and the text both say so.
#[test]
fn recv_with_the_ranges_reports_the_streams_that_never_arrived() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    for d in ["198.19.10.1", "198.19.10.2"] {
        common::sh(&format!("ip -n {dut} route add blackhole {d}/32"));
    }
    let ranges = [
        "-s",
        "198.18.10.1:2000-198.18.10.20",
        "-d",
        "198.19.10.1:2000-198.19.10.100",
    ];
    let mut args = vec!["-i", "r0", "-W", "2", "-t", "50"];
    args.extend(ranges);
    let send = || {
        ok_in(
            &lab.ns("gen"),
            &["gen", "-i", "g0", "-n", "10000", "-R", "20kpps", "-q"],
        )
    };
    let rx = Receiver::start(&lab.ns("rcv"), &args);
    send();
    let (_, s) = rx.wait(WAIT);
    assert_eq!(u(&s, "streams"), 1960);
    assert_eq!(u(&s, "lost"), 0);
    assert_eq!(u(&s, "streams_expected"), 2000);
    assert_eq!(u(&s, "streams_missing"), 40);
    // Again, read as text. (Receivers on one port share its packet fanout
    // group, so the two are not run at once.) The header comes once the
    // receiver counts.
    let mut text_rx = Command::new("ip")
        .args(["netns", "exec", &lab.ns("rcv"), common::PKTLAB, "recv"])
        .args(&args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut text_out = BufReader::new(text_rx.stdout.take().unwrap());
    let mut header = String::new();
    text_out.read_line(&mut header).unwrap();
    send();
    assert!(text_rx.wait().unwrap().success());
    let mut text = String::new();
    text_out.read_to_string(&mut text).unwrap();
    assert!(
        text.contains("Test traffic: 1960 flows in 1960 streams, 0 lost"),
        "{text}"
    );
    assert!(
        text.contains("\n40 of 2000 streams never arrived.\n"),
        "{text}"
    );
}

/// Without permission for BPF (as user nobody, no capabilities): one
/// line naming what is missing, exit 1.
#[test]
fn without_permission_for_bpf_it_says_so_in_one_line() {
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            common::PKTLAB,
            "drops",
            "-t",
            "1",
        ])
        .output()
        .unwrap();
    let r = common::finish(out);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr,
        "pktlab: the drop tracer (BPF on skb:kfree_skb) needs root or CAP_BPF and CAP_PERFMON\n"
    );
    assert_eq!(r.stdout, "");
}

/// Polls `done` every 20 ms until it holds; fails after `limit`, saying
/// what it waited for.
fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "no {what} within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends the 10000 frames with `pktlab drops --json --netns <dut>`
/// running, waits until `settled` holds (late drops done), and returns
/// (frames lost: sent minus test frames received, the lab's backlog
/// refusals meanwhile, the summary).
fn lost_and_traced(lab: &Lab, settled: impl FnMut() -> bool) -> (u64, common::Refused, Value) {
    let tracer = Tracer::start(&["--json", "--netns", &lab.ns("dut")]);
    let before = lab.refused();
    let received = send_through(lab);
    let refused = lab.refused().since(&before);
    wait_until("end of the late drops", Duration::from_secs(20), settled);
    (10_000 - received, refused, tracer.summary())
}

/// An nft policer (over 2000 frames a second, with a burst of 100, drop)
/// in the DUT: however many it drops on this machine, every lost frame is
/// a NETFILTER_DROP at nft_do_chain.
#[test]
fn an_nft_policer_is_attributed_in_full() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    nft(
        &lab.ns("dut"),
        "table ip pktlabtest {\n\
           chain forward_test {\n\
             type filter hook forward priority 0;\n\
             udp dport 2000 limit rate over 2000/second burst 100 packets drop\n\
           }\n\
         }\n",
    );
    let (lost, refused, s) = lost_and_traced(&lab, || true);
    // 10000 frames at 20 kpps take at least 0.5 s, of which the policer
    // lets through about 2000/s plus the burst: most are dropped.
    assert!((4000..=9500).contains(&lost), "{lost}");
    let (p, backlog) = without_backlog(&s);
    assert!(backlog <= refused.dut, "{refused:?} {s}");
    let traced = u(&s, "total") - backlog;
    assert_traced(traced, lost - refused.total(), &s.to_string());
    assert_eq!(
        p,
        vec![(
            lab.ns("dut"),
            "d0".to_string(),
            "kernel".to_string(),
            "NETFILTER_DROP".to_string(),
            "nft_do_chain".to_string(),
            traced
        )]
    );
}

/// An egress qdisc on the DUT's d1 that shapes to 1 Mbit/s with a small
/// queue: every lost frame is a qdisc drop on d1.
#[test]
fn an_egress_qdisc_drop_is_attributed_in_full() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    common::sh(&format!(
        "ip netns exec {} tc qdisc add dev d1 root tbf rate 1mbit burst 1600 limit 3000",
        lab.ns("dut")
    ));
    // The queue's frames are sent or dropped once it is empty.
    let dut = lab.ns("dut");
    let (lost, refused, s) = lost_and_traced(&lab, || {
        common::sh(&format!("ip netns exec {dut} tc -s qdisc show dev d1 root"))
            .contains("backlog 0b 0p")
    });
    assert!((5000..=9900).contains(&lost), "{lost}");
    let (p, backlog) = without_backlog(&s);
    assert!(backlog <= refused.dut, "{refused:?} {s}");
    let lost = lost - refused.total();
    assert_eq!(p.len(), 1, "{s}");
    let (ns, iface, layer, reason, _location, frames) = &p[0];
    assert_eq!(
        (
            ns.as_str(),
            iface.as_str(),
            layer.as_str(),
            reason.as_str(),
            *frames
        ),
        (
            lab.ns("dut").as_str(),
            "d1",
            "kernel",
            "QDISC_DROP",
            *frames
        ),
        "{s}"
    );
    assert_traced(*frames, lost, &s.to_string());
}
