//! The DUT configurations of Linux's fast paths and knobs on built-in labs
//! of their own: each applies and reverts with the state probe equal
//! before and after; `tc-forward` and `xdp-forward` really forward (exact
//! counts at the receiver, the TTL decremented with a valid checksum, the
//! programs' counters, and netfilter's forward hook never seeing a frame);
//! a host sysctl changed by a campaign killed with SIGKILL comes back with
//! the next `lab up`; refused knobs say the kernel's reason; and a lossy
//! `xdp-forward` run's loss is placed by the XDP drop tracer, checked
//! against the kernel's own counters and exact arithmetic.
//!
//! Needs root, tcpdump and bpftool-free kernels with tcx (Linux 6.6 on) for
//! the tcx checks. The tests run one at a time: they share the DUT's CPUs,
//! and one of them changes a host-wide sysctl.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ok_in, one_at_a_time, pktlab, sh, u, Capture, Lab, Receiver, PKTLAB};
use pktlab_io::xdpdrops::{XdpDropCause, XdpDropTracer};
use pktlab_lab::dut::{builtin_config, builtin_state_probe, BuiltinBase, Dut, DutRunner};
use pktlab_lab::CpuPlan;
use serde_json::Value;

const PORTS: [&str; 2] = ["d0", "d1"];

/// The DUT of `lab`, driven in-process as a campaign drives it.
fn dut_of(lab: &Lab) -> Dut {
    // The lines and the probe run `pktlab knob`, which this test is not.
    std::env::set_var(pktlab_lab::dut::PKTLAB_ENV, PKTLAB);
    Dut::new(
        DutRunner::Netns {
            netns: lab.ns("dut"),
        },
        Some(builtin_state_probe(&PORTS)),
    )
}

/// The base the lab's CPU plan gives (the default plan of this process).
fn plan_base() -> (CpuPlan, BuiltinBase) {
    let plan = CpuPlan::for_this_process(None).unwrap();
    let base = plan.builtin_base();
    (plan, base)
}

/// `pktlab knob stats PORT --json` in the DUT: the fast path's counters.
fn fast_path_stats(lab: &Lab, port: &str) -> Value {
    let out = ok_in(&lab.ns("dut"), &["knob", "stats", port, "--json"]);
    serde_json::from_str(out.trim()).unwrap()
}

fn in_ns(ns: &str, cmd: &str) -> String {
    sh(&format!("ip netns exec {ns} sh -c '{cmd}'"))
}

/// The CPUs thread `pid` may run on, as /proc says (`1`, `0-1`).
fn allowed_cpus(pid: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

/// Pids of kernel threads whose name starts with `prefix`.
fn threads_named(prefix: &str) -> Vec<String> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            if comm.trim_end().starts_with(prefix) {
                pids.push(pid);
            }
        }
    }
    pids
}

/// Every new configuration applies, changes what the probe sees, and
/// reverts to exactly the state before, on a lab with a CPU plan: the
/// XDP router then forwards on the DUT's CPUs through a CPUMAP, and the
/// NAPI threads are pinned there.
#[test]
fn each_configuration_applies_and_reverts_exactly() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let (plan, base) = plan_base();
    let dut_cpus = pktlab_engine::affinity::format_cpu_list(&plan.dut_cpus);
    let before = dut.state().unwrap();
    for want in [
        "d0 xdp: none",
        "d1 tcx ingress: none",
        "d0 threaded 0",
        "qdisc noqueue 0: root",
        "host net.core.netdev_max_backlog = ",
    ] {
        assert!(before.contains(want), "{want} not in {before}");
    }
    for name in [
        "tc-forward",
        "xdp-forward",
        "threaded-napi",
        "fq_codel",
        "pfifo",
    ] {
        let c = builtin_config(name, &PORTS, 2, &base).unwrap();
        if let Err(e) = dut.apply(&c) {
            // Some kernels are built without fq_codel (CONFIG_NET_SCH_FQ_CODEL):
            // the configuration then stops with the kernel's words, and
            // reverts what it did.
            let e = e.to_string();
            assert!(
                name == "fq_codel" && e.contains("Specified qdisc kind is unknown"),
                "{name}: {e}"
            );
            eprintln!("note: this kernel has no fq_codel: only its refusal is tested ({e})");
            assert_eq!(dut.state().unwrap(), before, "{name}");
            continue;
        }
        let during = dut.state().unwrap();
        let seen: &[&str] = match name {
            "tc-forward" => &["d0 tcx ingress: tc_fwd", "d1 tcx ingress: tc_fwd"],
            "xdp-forward" if plan.is_shared() => &["d0 xdp: xdp_fwd (native)"],
            "xdp-forward" => &["d0 xdp: xdp_steer (native)", "d1 xdp: xdp_steer (native)"],
            "threaded-napi" => &["d0 threaded 1", "d1 threaded 1"],
            "fq_codel" => &["qdisc fq_codel"],
            _ => &["qdisc pfifo "],
        };
        for s in seen {
            assert!(during.contains(s), "{name}: {s} not in {during}");
        }
        if name == "threaded-napi" && !plan.is_shared() {
            let pids = threads_named("napi/d0-");
            assert!(!pids.is_empty(), "no napi/d0 thread");
            // Another lab's d0 may thread too: at least one is ours, pinned.
            assert!(
                pids.iter().any(|p| allowed_cpus(p) == dut_cpus),
                "no napi/d0 thread on CPUs {dut_cpus}"
            );
        }
        if name == "xdp-forward" && !plan.is_shared() {
            let cpu = plan.dut_cpus[0];
            assert!(
                !threads_named(&format!("cpumap/{cpu}/")).is_empty(),
                "no CPUMAP thread on the DUT's CPU {cpu}"
            );
        }
        dut.revert(&c, &before).unwrap();
        assert_eq!(dut.state().unwrap(), before, "{name}");
    }
}

/// How many frames captured had each TTL (hop limit), each IPv4 header
/// checksum checked against one computed by etherparse.
fn ttls(frames: &[Vec<u8>]) -> std::collections::BTreeMap<u8, u64> {
    let mut out = std::collections::BTreeMap::new();
    for f in frames {
        let p = etherparse::SlicedPacket::from_ethernet(f).unwrap();
        match p.net {
            Some(etherparse::NetSlice::Ipv4(ip)) => {
                let h = ip.header().to_header();
                assert_eq!(
                    h.header_checksum,
                    h.calc_header_checksum(),
                    "a bad IPv4 header checksum"
                );
                *out.entry(h.time_to_live).or_insert(0) += 1;
            }
            Some(etherparse::NetSlice::Ipv6(ip)) => {
                *out.entry(ip.header().hop_limit()).or_insert(0) += 1
            }
            other => panic!("not IP: {other:?}"),
        }
    }
    out
}

/// The packets the nftables counter in the DUT's forward hook counted.
fn forward_hook_packets(lab: &Lab) -> u64 {
    let out = in_ns(&lab.ns("dut"), "nft -j list counter inet kt seen");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["nftables"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|o| o["counter"]["packets"].as_u64())
        .unwrap_or_else(|| panic!("no counter in {out}"))
}

/// Sends `n` frames (IPv4, or IPv6 with `v6`) at TTL 37 through the lab's
/// DUT under configuration `name`; returns the receiver's count, the TTLs
/// captured at r0 and the packets netfilter's forward hook saw.
fn forward_through(
    lab: &Lab,
    dut: &Dut,
    base: &BuiltinBase,
    name: &str,
    v6: bool,
) -> (u64, std::collections::BTreeMap<u8, u64>, u64) {
    let n = 2000u64;
    let c = builtin_config(name, &PORTS, 2, base).unwrap();
    let before = dut.state().unwrap();
    dut.apply(&c).unwrap();
    in_ns(
        &lab.ns("dut"),
        "nft \"add table inet kt; add counter inet kt seen; \
         add chain inet kt through { type filter hook forward priority 0; policy accept; }; \
         add rule inet kt through counter name seen\"",
    );
    let cap = Capture::start(&lab.ns("rcv"), "r0", name, &["-B", "16384"]);
    let mut rx_args = vec!["-i", "r0", "--io", "afpacket", "-n", "2000", "-t", "30"];
    if v6 {
        rx_args.push("-6");
    }
    let rx = Receiver::start(&lab.ns("rcv"), &rx_args);
    let mac = lab_mac(lab, "dut", "d0");
    let mut gen = vec![
        "gen", "-i", "g0", "--io", "afpacket", "-D", &mac, "-n", "2000", "-R", "20kpps", "--ttl",
        "37", "-q",
    ];
    if v6 {
        gen.push("-6");
    }
    ok_in(&lab.ns("gen"), &gen);
    let (_, summary) = rx.wait(Duration::from_secs(40));
    let frames = cap.frames();
    let hook = forward_hook_packets(lab);
    in_ns(&lab.ns("dut"), "nft delete table inet kt");
    if name != "forwarding" {
        let s = fast_path_stats(lab, "d0");
        assert_eq!(u(&s["stats"], "forwarded"), n, "{name}: {s}");
        assert_eq!(u(&s["stats"], "redirect_failed"), 0, "{name}: {s}");
    }
    dut.revert(&c, &before).unwrap();
    (u(&summary, "packets"), ttls(&frames), hook)
}

fn lab_mac(lab: &Lab, role: &str, iface: &str) -> String {
    in_ns(
        &lab.ns(role),
        &format!("cat /sys/class/net/{iface}/address"),
    )
    .trim()
    .to_string()
}

/// Both fast paths forward every frame, decrement the TTL (and hop
/// limit) with a valid checksum, count the frames as theirs, and keep them
/// from netfilter: its forward hook counts every frame of plain
/// forwarding and none of theirs.
#[test]
fn fast_paths_forward_past_netfilter() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let (_, base) = plan_base();
    // r0 needs NAPI to take XDP-redirected frames (veth: GRO or XDP).
    in_ns(&lab.ns("rcv"), "ethtool -K r0 gro on");
    for v6 in [false, true] {
        let (got, ttl, hook) = forward_through(&lab, &dut, &base, "forwarding", v6);
        assert_eq!((got, hook), (2000, 2000), "forwarding v6={v6}");
        let want: std::collections::BTreeMap<u8, u64> = [(36, 2000)].into_iter().collect();
        assert_eq!(ttl, want, "forwarding v6={v6}");
        for name in ["tc-forward", "xdp-forward"] {
            let (got, ttl, hook) = forward_through(&lab, &dut, &base, name, v6);
            assert_eq!(got, 2000, "{name} v6={v6}: received");
            assert_eq!(ttl, want, "{name} v6={v6}: TTLs");
            assert_eq!(hook, 0, "{name} v6={v6}: netfilter saw frames");
        }
    }
}

/// tc-forward as a clsact filter (kernels without tcx) forwards and goes
/// away with its qdisc.
#[test]
fn tc_forward_as_a_clsact_filter() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let before = dut.state().unwrap();
    let ns = lab.ns("dut");
    ok_in(
        &ns,
        &[
            "knob",
            "tc-forward",
            "attach",
            "--hook",
            "clsact",
            "d0",
            "d1",
        ],
    );
    let during = dut.state().unwrap();
    assert!(
        during.contains("d0 clsact: ingress tc_fwd, egress none"),
        "{during}"
    );
    assert!(
        during.contains("qdisc clsact ffff: parent ffff:fff1"),
        "{during}"
    );
    let mac = lab_mac(&lab, "dut", "d0");
    let rx = Receiver::start(
        &lab.ns("rcv"),
        &["-i", "r0", "--io", "afpacket", "-n", "500", "-t", "30"],
    );
    ok_in(
        &lab.ns("gen"),
        &[
            "gen", "-i", "g0", "--io", "afpacket", "-D", &mac, "-n", "500", "-R", "10kpps", "-q",
        ],
    );
    let (_, summary) = rx.wait(Duration::from_secs(40));
    assert_eq!(u(&summary, "packets"), 500);
    let s = fast_path_stats(&lab, "d0");
    assert_eq!(s["program"], "tc_fwd");
    assert_eq!(u(&s["stats"], "forwarded"), 500, "{s}");
    ok_in(&ns, &["knob", "tc-forward", "detach", "d0", "d1"]);
    assert_eq!(dut.state().unwrap(), before);
}

/// The knobs the kernel refuses stop the configuration with the kernel's
/// reason, naming the knob and the value, and change nothing.
#[test]
fn refused_knobs_give_the_kernels_reason() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let (_, base) = plan_base();
    let before = dut.state().unwrap();
    let weight = std::fs::read_to_string("/proc/sys/net/core/dev_weight").unwrap();
    let c = builtin_config("dev_weight-0", &PORTS, 2, &base).unwrap();
    let e = dut.apply(&c).unwrap_err().to_string();
    assert!(
        e.contains("net.core.dev_weight=0: the kernel refused it: Invalid argument"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/core/dev_weight").unwrap(),
        weight
    );
    assert_eq!(dut.state().unwrap(), before);
    // Native XDP on a device without it: the kernel's own words.
    let r = common::pktlab_in(&lab.ns("dut"), &["knob", "xdp-forward", "attach", "lo"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("attaching XDP in native mode on lo: ")
            && r.stderr.contains("native mode"),
        "{}",
        r.stderr
    );
    // Threaded NAPI on a veth without NAPI (GRO off on d1).
    let r = common::pktlab_in(&lab.ns("dut"), &["knob", "napi-threads", "on", "d1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr.trim(),
        "pktlab: threaded NAPI on d1: the kernel refused 1: Operation not supported"
    );
    assert_eq!(dut.state().unwrap(), before);
}

/// Puts a host sysctl back to `value` when dropped, whatever happened.
struct HostValue {
    key: &'static str,
    value: String,
}

impl Drop for HostValue {
    fn drop(&mut self) {
        let path = format!("/proc/sys/{}", self.key.replace('.', "/"));
        let _ = std::fs::write(path, &self.value);
    }
}

/// A campaign that set net.core.netdev_max_backlog and was killed with
/// SIGKILL before its revert leaves it changed; the next `lab up` puts it
/// back.
#[test]
fn a_killed_campaigns_host_sysctl_comes_back_with_lab_up() {
    let _serial = one_at_a_time();
    let key = "net.core.netdev_max_backlog";
    let path = "/proc/sys/net/core/netdev_max_backlog";
    let old = std::fs::read_to_string(path).unwrap().trim().to_string();
    let _restore = HostValue {
        key,
        value: old.clone(),
    };
    let new: u64 = old.parse::<u64>().unwrap() + 1234;
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let mut bench = Command::new(PKTLAB)
        .args([
            "bench",
            "--prefix",
            &lab.prefix,
            "-N",
            "1",
            "-t",
            "60s",
            "--no-report",
            "-q",
        ])
        .args(["--configs", &format!("netdev_max_backlog-{new}"), "-o"])
        .arg(tmp.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The campaign applies and reverts each configuration once before its
    // first run: wait for the run itself, whose generator sends from g0.
    let g0_tx = || -> u64 {
        in_ns(
            &lab.ns("gen"),
            "cat /sys/class/net/g0/statistics/tx_packets",
        )
        .trim()
        .parse()
        .unwrap()
    };
    let before = g0_tx();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(path).unwrap().trim() != new.to_string() || g0_tx() == before {
        assert!(Instant::now() < deadline, "the campaign never set {key}");
        assert!(
            bench.try_wait().unwrap().is_none(),
            "the campaign ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The old value was saved before the change, with its owner.
    let saved = std::fs::read_to_string("/run/pktlab/host-sysctls.json").unwrap();
    let v: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(v[key]["value"], old.as_str(), "{saved}");
    assert_eq!(v[key]["owner"]["pid"], bench.id(), "{saved}");
    // While the campaign runs, another lab's `lab up` leaves it alone.
    let other = Lab::up();
    assert_eq!(
        std::fs::read_to_string(path).unwrap().trim(),
        new.to_string()
    );
    drop(other);
    bench.kill().unwrap(); // SIGKILL
    bench.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(bench.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(
        err.contains(&format!("note: {key} is host-wide")),
        "the campaign did not say so: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(path).unwrap().trim(),
        new.to_string()
    );
    let r = pktlab(&["lab", "up", "--prefix", &lab.prefix]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read_to_string(path).unwrap().trim(), old);
    assert!(
        r.stderr.contains(&format!(
            "pktlab: restored host sysctl {key} to {old} (a DUT configuration set it to {new} and was not reverted)"
        )),
        "{}",
        r.stderr
    );
    let left = std::fs::read_to_string("/run/pktlab/host-sysctls.json").unwrap_or_default();
    assert!(!left.contains(key), "{left}");
}

/// `ethtool -S`'s counter `name` of `iface` in `ns`.
fn ethtool_stat(ns: &str, iface: &str, name: &str) -> u64 {
    let out = in_ns(ns, &format!("ethtool -S {iface}"));
    out.lines()
        .find_map(|l| {
            let (k, v) = l.trim().split_once(':')?;
            (k.trim() == name).then(|| v.trim().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no {name} in {out}"))
}

/// xdp-forward into a veth whose peer has no NAPI (r0 without GRO or an
/// XDP program): every redirect fails. The XDP drop tracer places each
/// lost frame at d0 (redirect to d1, "Operation not supported"), as many
/// as the program redirected and as the kernel's own count of d0's
/// dropped frames; the receiver gets none.
#[test]
fn a_redirect_to_a_peer_without_napi_is_placed() {
    let _serial = one_at_a_time();
    let tracer = XdpDropTracer::start().unwrap();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let shared = BuiltinBase {
        rps_mask: "0".into(),
        gro_on: Some("d0".into()),
    };
    let (rcv, dns) = (lab.ns("rcv"), lab.ns("dut"));
    in_ns(&rcv, "ethtool -K r0 gro off");
    let c = builtin_config("xdp-forward", &PORTS, 2, &shared).unwrap();
    let before_state = dut.state().unwrap();
    dut.apply(&c).unwrap();
    let dropped0 = ethtool_stat(&dns, "d0", "rx_queue_0_drops");
    let rx0 = common::link_rx_dropped(&rcv, "r0");
    let before = tracer.read().unwrap();
    let mac = lab_mac(&lab, "dut", "d0");
    ok_in(
        &lab.ns("gen"),
        &[
            "gen", "-i", "g0", "--io", "afpacket", "-D", &mac, "-n", "1000", "-R", "20kpps", "-q",
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    let d = tracer.read().unwrap().since(&before);
    let s = fast_path_stats(&lab, "d0");
    assert_eq!(u(&s["stats"], "forwarded"), 1000, "{s}");
    let kernel = ethtool_stat(&dns, "d0", "rx_queue_0_drops") - dropped0;
    assert_eq!(kernel, 1000, "the kernel's count of d0's drops");
    let named = pktlab_io::xdpdrops::name(&d);
    let ours: Vec<_> = named.iter().filter(|p| p.netns == dns).collect();
    assert_eq!(ours.len(), 1, "{named:?}");
    let p = ours[0];
    assert_eq!(
        (
            p.iface.as_str(),
            p.peer.as_str(),
            p.cause,
            p.error.as_str(),
            p.detail.as_str(),
            p.frames
        ),
        (
            "d0",
            "d1",
            XdpDropCause::RedirectError,
            "Operation not supported",
            "ifindex",
            1000
        ),
        "{named:?}"
    );
    assert_eq!(common::link_rx_dropped(&rcv, "r0"), rx0);
    dut.revert(&c, &before_state).unwrap();
}

/// xdp-forward through a CPUMAP queue of 8 frames, fed a burst by the XDP
/// generator: the queue overflows. Every frame the steering program queued
/// is forwarded or counted by the tracer at the full queue, and every
/// frame forwarded reaches the receiver's XDP program or is counted where
/// r0's ring refused it: exact arithmetic, with some loss.
#[test]
fn a_full_cpu_queue_is_placed_exactly() {
    let _serial = one_at_a_time();
    let tracer = XdpDropTracer::start().unwrap();
    let lab = Lab::up();
    let (plan, _) = plan_base();
    if plan.is_shared() {
        panic!("this test needs two CPUs (a DUT CPU for the queue), this process has one");
    }
    let (rcv, dns) = (lab.ns("rcv"), lab.ns("dut"));
    in_ns(&rcv, "ethtool -K r0 gro on");
    ok_in(
        &dns,
        &[
            "knob",
            "xdp-forward",
            "attach",
            "--cpus-mask",
            &plan.dut_mask(),
            "--queue",
            "8",
            "d0",
            "d1",
        ],
    );
    // The in-kernel receiver counts at r0's XDP: no backlog or socket ring
    // of its own to lose frames in.
    let rx = Receiver::start(&rcv, &["-i", "r0", "--io", "xdp", "-t", "8", "-W", "2"]);
    // Which DUT port steers into which CPU queue, read in the DUT.
    let map = std::thread::spawn({
        let dns = dns.clone();
        move || {
            pktlab_io::netns::enter(&dns).unwrap();
            pktlab_io::fastpath::queue_map("d0").unwrap()
        }
    })
    .join()
    .unwrap()
    .expect("xdp_steer on d0 has a CPU queue map");
    let owners = [(map, (dns.clone(), "d0".to_string()))]
        .into_iter()
        .collect();
    let before = tracer.read().unwrap();
    let mac = lab_mac(&lab, "dut", "d0");
    let sent = 200_000u64;
    let r = common::pktlab_in(
        &lab.ns("gen"),
        &[
            "gen",
            "-i",
            "g0",
            "--io",
            "xdp",
            "-D",
            &mac,
            "-n",
            &sent.to_string(),
            "-q",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let (_, summary) = rx.wait(Duration::from_secs(30));
    let d = tracer.read().unwrap().since(&before);
    let s = fast_path_stats(&lab, "d0");
    ok_in(&dns, &["knob", "xdp-forward", "detach", "d0", "d1"]);
    let st = &s["stats"];
    let steered = u(st, "steered");
    assert_eq!(steered, sent, "{s}");
    let named = pktlab_io::xdpdrops::name_with(&d, &owners);
    let by = |cause| -> u64 {
        named
            .iter()
            .filter(|p| p.cause == cause)
            .map(|p| p.frames)
            .sum()
    };
    let queue_full = by(XdpDropCause::CpuQueueFull);
    // The queue's drops are placed at the DUT's port that steers into it.
    let cpu = format!("cpu {}", plan.dut_cpus[0]);
    assert!(
        named.iter().any(|p| p.cause == XdpDropCause::CpuQueueFull
            && p.netns == dns
            && p.iface == "d0"
            && p.peer == cpu),
        "{named:?}"
    );
    assert!(queue_full > 0, "no loss at an 8-frame queue: {s}");
    assert_eq!(u(st, "frames") + queue_full, steered, "{s}");
    assert_eq!(u(st, "forwarded"), u(st, "frames"), "{s}");
    // The receiver's test frames: a frame of the lab's own (a neighbour
    // solicitation, say) may reach r0 too, counted as foreign.
    let received = u(&summary, "packets") - u(&summary, "foreign");
    let refused = by(XdpDropCause::XmitRefused) + by(XdpDropCause::RedirectError);
    assert_eq!(received + refused, u(st, "forwarded"), "{s} {summary}");
}

/// xdp-forward through a devmap: frames to a port in the map are
/// redirected; with only d0 in the map, the FIB's answer (d1) is not one
/// of its ports and every frame goes to the stack, which forwards it.
#[test]
fn xdp_forward_through_a_devmap() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = dut_of(&lab);
    let before = dut.state().unwrap();
    let (ns, rcv) = (lab.ns("dut"), lab.ns("rcv"));
    in_ns(&rcv, "ethtool -K r0 gro on");
    let mac = lab_mac(&lab, "dut", "d0");
    for (ports, redirected) in [(&["d0", "d1"][..], 500), (&["d0"][..], 0)] {
        let mut args = vec!["knob", "xdp-forward", "attach", "--redirect", "devmap"];
        args.extend_from_slice(ports);
        ok_in(&ns, &args);
        let rx = Receiver::start(
            &rcv,
            &["-i", "r0", "--io", "afpacket", "-n", "500", "-t", "30"],
        );
        ok_in(
            &lab.ns("gen"),
            &[
                "gen", "-i", "g0", "--io", "afpacket", "-D", &mac, "-n", "500", "-R", "10kpps",
                "-q",
            ],
        );
        let (_, summary) = rx.wait(Duration::from_secs(40));
        assert_eq!(u(&summary, "packets"), 500, "ports {ports:?}");
        let s = fast_path_stats(&lab, "d0");
        assert_eq!(s["program"], "xdp_fwd_devmap", "{s}");
        let st = &s["stats"];
        assert_eq!(u(st, "forwarded"), redirected, "ports {ports:?}: {s}");
        assert_eq!(u(st, "no_port"), 500 - redirected, "ports {ports:?}: {s}");
        ok_in(&ns, &["knob", "xdp-forward", "detach", "d0", "d1"]);
    }
    assert_eq!(dut.state().unwrap(), before);
}

/// A lossy `xdp-forward` run is explained by place: `pktlab bench` at
/// full speed with the XDP generator overfills the DUT's CPU queue, and
/// the run's drops place those frames at d0 (layer `xdp`, the queue's
/// cause), with the tracer on and in auto mode (where the kfree_skb tracer
/// is off at full speed but the XDP tracer runs). The places and what is
/// left unexplained add up to the loss exactly, within the drops line's
/// own 1% of the loss unexplained, and the line people read names them.
#[test]
fn a_lossy_xdp_forward_run_is_explained_by_place() {
    let _serial = one_at_a_time();
    let (plan, _) = plan_base();
    if plan.is_shared() {
        panic!("this test needs two CPUs (a DUT CPU for the queue), this process has one");
    }
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["on", "auto"] {
        let out = tmp.path().join(mode);
        let r = pktlab(&[
            "bench",
            "--prefix",
            &lab.prefix,
            "--configs",
            "xdp-forward",
            "--drop-trace",
            mode,
            "-N",
            "1",
            "-t",
            "4s",
            "--warmup",
            "1s",
            "--tail",
            "1s",
            "--no-report",
            "--no-history",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let runs: Vec<_> = std::fs::read_dir(out.join("runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("xdp-forward"))
            .collect();
        assert_eq!(runs.len(), 1, "{runs:?}");
        let text = std::fs::read_to_string(&runs[0]).unwrap();
        let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(v["type"], "result", "{v}");
        let d = &v["drops"];
        let lost = u(d, "lost");
        assert!(lost > 0, "no loss at full speed through the CPU queue: {v}");
        let places = d["places"].as_array().unwrap();
        let sum: u64 = places.iter().map(|p| u(p, "frames")).sum();
        let unexplained = u(d, "unexplained");
        assert_eq!(sum + unexplained, lost, "{d}");
        assert_eq!(u(d, "dut") + u(d, "tester"), sum, "{d}");
        assert!(
            unexplained * 100 <= lost,
            "more than 1% of the loss unexplained ({mode}): {d}"
        );
        let queue = places
            .iter()
            .find(|p| p["layer"] == "xdp" && p["reason"] == "cpu_queue_full")
            .unwrap_or_else(|| panic!("no CPU queue place ({mode}): {d}"));
        assert_eq!(queue["side"], "dut", "{queue}");
        assert_eq!(queue["netns"], lab.ns("dut").as_str(), "{queue}");
        assert_eq!(queue["iface"], "d0", "{queue}");
        let n = u(queue, "frames");
        let share = 100.0 * n as f64 / lost as f64;
        let pct = if share >= 10.0 {
            format!("{share:.0}")
        } else if share >= 1.0 {
            format!("{share:.1}")
        } else {
            format!("{share:.2}")
        };
        let said = format!("DUT d0 xdp cpu_queue_full {n} ({pct}%)");
        assert!(r.stdout.contains(&said), "{said} not in {}", r.stdout);
        assert!(
            !r.stdout.contains("more than 1% of the loss unexplained"),
            "{}",
            r.stdout
        );
    }
}
