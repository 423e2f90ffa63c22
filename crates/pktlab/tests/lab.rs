//! `pktlab lab up|down|status` on real namespaces (needs root).
//!
//! Every test uses its own prefix `lt<pid>x<n>`; a Drop guard deletes every
//! namespace `<prefix>-*`, also when the test fails, and namespaces left by
//! a killed run (whose pid is gone) are swept when the next guard is made.
//! Packets are sent only inside the lab's own namespaces.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use pktlab_lab::mac::format_mac;
use pktlab_lab::{netns, BuiltinLab, IfRole, LabIfCounters, LabSpec};
use serde_json::Value;

const PKTLAB: &str = env!("CARGO_BIN_EXE_pktlab");

/// A unique lab prefix; its namespaces are deleted on drop.
struct Prefix(String);

impl Prefix {
    fn new() -> Prefix {
        static N: AtomicU32 = AtomicU32::new(0);
        sweep_stale();
        let n = N.fetch_add(1, Ordering::Relaxed);
        Prefix(format!("lt{}x{n}", std::process::id()))
    }

    fn ns(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.0)
    }

    /// This prefix's namespaces that exist.
    fn existing(&self) -> Vec<String> {
        let p = format!("{}-", self.0);
        netns::list()
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with(&p))
            .collect()
    }

    fn lab(&self) -> BuiltinLab {
        BuiltinLab::new(LabSpec {
            prefix: self.0.clone(),
            queues: 1,
            cpus: None,
        })
        .unwrap()
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        for n in self.existing() {
            let _ = Command::new("ip").args(["netns", "del", &n]).status();
        }
    }
}

/// Deletes `lt<pid>x<n>-*` namespaces whose test process is gone.
fn sweep_stale() {
    for name in netns::list().unwrap_or_default() {
        let Some(rest) = name.strip_prefix("lt") else {
            continue;
        };
        let Some(pid) = rest.split('x').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn finish(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn pktlab(args: &[&str]) -> Run {
    finish(Command::new(PKTLAB).args(args).output().unwrap())
}

/// Runs pktlab and insists on exit code 0.
fn ok(args: &[&str]) -> String {
    let r = pktlab(args);
    assert_eq!(r.code, 0, "pktlab {args:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

fn status_json(prefix: &str) -> Value {
    serde_json::from_str(&ok(&["lab", "status", "--prefix", prefix, "--json"])).unwrap()
}

fn ns_json<'a>(status: &'a Value, role: &str) -> &'a Value {
    status["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == role)
        .unwrap()
}

/// name → (mac, ifindex) of every lab interface in a status.
fn macs_and_indexes(status: &Value) -> BTreeMap<String, (String, u64)> {
    let mut m = BTreeMap::new();
    for ns in status["namespaces"].as_array().unwrap() {
        for i in ns["interfaces"].as_array().unwrap() {
            m.insert(
                format!(
                    "{}/{}",
                    ns["name"].as_str().unwrap(),
                    i["name"].as_str().unwrap()
                ),
                (
                    i["mac"].as_str().unwrap().to_string(),
                    i["ifindex"].as_u64().unwrap(),
                ),
            );
        }
    }
    m
}

/// `ip -o link` of the test's own namespace: (name, MAC) pairs.
fn host_links() -> BTreeSet<(String, String)> {
    let out = Command::new("ip").args(["-o", "link"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let name = l
                .split(": ")
                .nth(1)
                .unwrap_or("")
                .split('@')
                .next()
                .unwrap();
            let mac = l
                .split_whitespace()
                .skip_while(|w| !w.starts_with("link/"))
                .nth(1)
                .unwrap_or("");
            (name.to_string(), mac.to_string())
        })
        .collect()
}

#[test]
fn up_then_down_leaves_nothing_behind() {
    let p = Prefix::new();
    let lab = p.lab();
    let lab_macs: Vec<String> = lab.ifaces().iter().map(|i| format_mac(i.mac)).collect();
    let before = host_links();

    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert!(out.starts_with(&format!("lab {} is up:", p.0)), "{out}");
    assert!(out.contains(&lab_macs[1]), "up names d0's MAC: {out}");
    assert_eq!(p.existing(), [p.ns("dut"), p.ns("gen"), p.ns("rcv")]);
    // Nothing of the lab is in the caller's namespace, not even for a moment
    // long enough to show: the veths were created inside their namespaces.
    for (name, mac) in host_links() {
        assert!(!lab_macs.contains(&mac), "host link {name} has a lab MAC");
    }

    let out = ok(&["lab", "down", "--prefix", &p.0]);
    assert_eq!(out, format!("lab {} is down\n", p.0));
    assert_eq!(p.existing(), Vec::<String>::new());
    // Links other tests create may come and go meanwhile; none may be ours.
    let appeared: Vec<_> = host_links().difference(&before).cloned().collect();
    for (name, mac) in &appeared {
        assert!(
            !lab_macs.contains(mac) && !["g0", "d0", "d1", "r0"].contains(&name.as_str()),
            "stray link on the host: {name} {mac}"
        );
    }
    // down again: nothing to do, still fine.
    ok(&["lab", "down", "--prefix", &p.0]);
}

#[test]
fn up_twice_changes_nothing() {
    let p = Prefix::new();
    ok(&["lab", "up", "--prefix", &p.0]);
    let first = macs_and_indexes(&status_json(&p.0));
    assert_eq!(first.len(), 4, "{first:?}");

    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert_eq!(out, format!("lab {} is already up; nothing changed\n", p.0));
    assert_eq!(macs_and_indexes(&status_json(&p.0)), first);

    // MACs are fixed per prefix: the same after down and up...
    ok(&["lab", "down", "--prefix", &p.0]);
    ok(&["lab", "up", "--prefix", &p.0]);
    let again = macs_and_indexes(&status_json(&p.0));
    let macs = |m: &BTreeMap<String, (String, u64)>| -> Vec<String> {
        m.values().map(|(mac, _)| mac.clone()).collect()
    };
    assert_eq!(macs(&again), macs(&first));
    // ...and the ones the library announces.
    let lab = p.lab();
    for i in lab.ifaces() {
        assert_eq!(again[&format!("{}/{}", i.ns, i.name)].0, format_mac(i.mac));
    }
    // Another prefix has other MACs.
    let other = Prefix::new();
    assert!(other
        .lab()
        .ifaces()
        .iter()
        .all(|i| !macs(&first).contains(&format_mac(i.mac))));
}

#[test]
fn partial_lab_is_repaired() {
    let p = Prefix::new();
    ok(&["lab", "up", "--prefix", &p.0]);
    let rcv = p.ns("rcv");
    assert!(Command::new("ip")
        .args(["netns", "del", &rcv])
        .status()
        .unwrap()
        .success());

    // The kernel destroys a deleted namespace's interfaces (and so the veth
    // peer d1 in the DUT) asynchronously: wait until d1 is gone.
    let d1_gone = format!("{}: interface d1 is missing", p.ns("dut"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        let st = status_json(&p.0);
        if st["problems"].to_string().contains(&d1_gone) || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(st["state"], "partial");
    let problems: Vec<&str> = st["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(problems.contains(&format!("namespace {rcv} does not exist").as_str()));
    assert!(problems.contains(&format!("{}: interface d1 is missing", p.ns("dut")).as_str()));
    assert_eq!(ns_json(&st, "rcv")["exists"], false);

    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert!(
        out.starts_with(&format!(
            "lab {} was incomplete and has been repaired:",
            p.0
        )),
        "{out}"
    );
    assert!(out.contains(&format!("was: {}: interface d1 is missing", p.ns("dut"))));
    let st = status_json(&p.0);
    assert_eq!(st["state"], "up", "{}", st["problems"]);
    assert_eq!(macs_and_indexes(&st).len(), 4);

    // What a killed `up` leaves: only the first namespace.
    ok(&["lab", "down", "--prefix", &p.0]);
    let gen = netns::Netns::create(&p.ns("gen")).unwrap().keep();
    assert_eq!(status_json(&p.0)["state"], "partial");
    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert!(out.contains(&format!("was: namespace {} does not exist", p.ns("dut"))));
    assert_eq!(status_json(&p.0)["state"], "up");
    assert!(netns::exists(&gen));
}

#[test]
fn changed_configuration_is_repaired_in_place() {
    // What a DUT configuration that was never reverted leaves behind, or a
    // route deleted by hand: `up` puts it back without rebuilding anything.
    let p = Prefix::new();
    ok(&["lab", "up", "--prefix", &p.0]);
    let first = macs_and_indexes(&status_json(&p.0));
    let dut = p.ns("dut");
    let ip = |args: &[&str]| {
        let st = Command::new("ip").args(args).status().unwrap();
        assert!(st.success(), "ip {args:?}");
    };
    ip(&[
        "netns",
        "exec",
        &dut,
        "sysctl",
        "-qw",
        "net.ipv4.conf.all.send_redirects=1",
    ]);
    ip(&["-n", &dut, "route", "del", "198.19.0.0/16"]);
    ip(&[
        "-n",
        &dut,
        "neighbour",
        "del",
        "2001:2:0:8000::208",
        "dev",
        "d1",
    ]);
    ip(&[
        "-n",
        &p.ns("gen"),
        "address",
        "del",
        "198.18.0.201/24",
        "dev",
        "g0",
    ]);

    let st = status_json(&p.0);
    assert_eq!(st["state"], "partial");
    let problems = st["problems"].as_array().unwrap();
    // (Deleting g0's address also takes the generator's route and
    // neighbour that depend on it.)
    for want in [
        format!("{dut}: route 198.19.0.0/16 via 198.19.0.208 dev d1 is missing"),
        format!("{dut}: static neighbour 2001:2:0:8000::208 dev d1 is missing"),
        format!("{dut}: net.ipv4.conf.all.send_redirects is 1 (want 0)"),
        format!("{}: g0 lacks address 198.18.0.201/24", p.ns("gen")),
    ] {
        assert!(
            problems.contains(&Value::from(want.as_str())),
            "{want} not in {problems:?}"
        );
    }

    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert!(out.contains("has been repaired"), "{out}");
    let shown = problems[0].as_str().unwrap();
    assert!(out.contains(&format!("was: {shown}")), "{out}");
    let st = status_json(&p.0);
    assert_eq!(st["state"], "up", "{}", st["problems"]);
    assert_eq!(
        ns_json(&st, "dut")["sysctls"]["net.ipv4.conf.all.send_redirects"],
        "0"
    );
    // Same namespaces, same veths.
    assert_eq!(macs_and_indexes(&st), first);
}

#[test]
fn status_json_shows_the_lab() {
    let p = Prefix::new();
    let st = status_json(&p.0);
    assert_eq!(st["state"], "down");
    assert_eq!(st["namespaces"].as_array().unwrap().len(), 3);

    ok(&["lab", "up", "--prefix", &p.0]);
    let lab = p.lab();
    let st = status_json(&p.0);
    assert_eq!(st["prefix"], p.0.as_str());
    assert_eq!(st["state"], "up", "{}", st["problems"]);
    assert_eq!(st["queues"], 1);
    assert_eq!(st["problems"], serde_json::json!([]));

    let names: Vec<&str> = st["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [p.ns("gen"), p.ns("dut"), p.ns("rcv")]);

    let iface = |role: &str, name: &str| -> Value {
        ns_json(&st, role)["interfaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {role}"))
            .clone()
    };
    let cases = [
        (
            "gen",
            "g0",
            "gen",
            lab.gen_mac(),
            "198.18.0.201/24",
            "2001:2::201/64",
        ),
        (
            "dut",
            "d0",
            "dut_in",
            lab.dut_in_mac(),
            "198.18.0.203/24",
            "2001:2::203/64",
        ),
        (
            "dut",
            "d1",
            "dut_out",
            lab.dut_out_mac(),
            "198.19.0.203/24",
            "2001:2:0:8000::203/64",
        ),
        (
            "rcv",
            "r0",
            "rcv",
            lab.rcv_mac(),
            "198.19.0.201/24",
            "2001:2:0:8000::201/64",
        ),
    ];
    for (ns, name, role, mac, v4, v6) in cases {
        let i = iface(ns, name);
        assert_eq!(i["role"], role);
        assert_eq!(i["mac"], format_mac(mac).as_str());
        assert_eq!(i["operstate"], "UP");
        assert_eq!(i["mtu"], 9000);
        assert_eq!(i["kind"], "veth");
        let addrs = i["addresses"].as_array().unwrap();
        assert!(addrs.contains(&Value::from(v4)), "{name}: {addrs:?}");
        assert!(addrs.contains(&Value::from(v6)), "{name}: {addrs:?}");
        for key in [
            "rx_packets",
            "rx_bytes",
            "rx_dropped",
            "rx_errors",
            "tx_packets",
            "tx_bytes",
            "tx_dropped",
            "tx_errors",
        ] {
            assert!(i["counters"][key].is_u64(), "{name} {key}");
        }
    }
    assert_eq!(
        ns_json(&st, "dut")["interfaces"].as_array().unwrap().len(),
        2
    );

    // Forwarding on the DUT only, without redirects.
    let sysctl = |ns: &str, key: &str| ns_json(&st, ns)["sysctls"][key].clone();
    for key in [
        "net.ipv4.ip_forward",
        "net.ipv6.conf.all.forwarding",
        "net.ipv4.conf.d0.forwarding",
        "net.ipv6.conf.d1.forwarding",
    ] {
        assert_eq!(sysctl("dut", key), "1", "{key}");
    }
    assert_eq!(sysctl("dut", "net.ipv4.conf.all.send_redirects"), "0");
    assert_eq!(sysctl("dut", "net.ipv4.conf.d1.send_redirects"), "0");
    for ns in ["gen", "rcv"] {
        assert_eq!(sysctl(ns, "net.ipv4.ip_forward"), "0");
        assert_eq!(sysctl(ns, "net.ipv6.conf.all.forwarding"), "0");
    }
    assert_eq!(sysctl("rcv", "net.ipv6.conf.r0.accept_dad"), "0");

    // The static neighbours: present and PERMANENT, with the right MACs.
    let neigh = |ns: &str, addr: &str| -> (String, String, String) {
        let n = ns_json(&st, ns)["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["addr"] == addr)
            .unwrap_or_else(|| panic!("no neighbour {addr} in {ns}"))
            .clone();
        let s = |k: &str| n[k].as_str().unwrap().to_string();
        (s("mac"), s("dev"), s("state"))
    };
    let perm =
        |mac: [u8; 6], dev: &str| (format_mac(mac), dev.to_string(), "PERMANENT".to_string());
    assert_eq!(neigh("dut", "198.19.0.208"), perm(lab.rcv_mac(), "d1"));
    assert_eq!(
        neigh("dut", "2001:2:0:8000::208"),
        perm(lab.rcv_mac(), "d1")
    );
    assert_eq!(neigh("dut", "198.18.0.208"), perm(lab.gen_mac(), "d0"));
    assert_eq!(neigh("dut", "2001:2::208"), perm(lab.gen_mac(), "d0"));
    assert_eq!(neigh("gen", "198.18.0.203"), perm(lab.dut_in_mac(), "g0"));
    assert_eq!(neigh("gen", "2001:2::203"), perm(lab.dut_in_mac(), "g0"));
    assert_eq!(neigh("rcv", "198.19.0.203"), perm(lab.dut_out_mac(), "r0"));

    // The DUT's routes to the static next hops.
    let has_route = |ns: &str, dst: &str, via: &str, dev: &str| {
        ns_json(&st, ns)["routes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["dst"] == dst && r["via"] == via && r["dev"] == dev)
    };
    assert!(has_route("dut", "198.19.0.0/16", "198.19.0.208", "d1"));
    assert!(has_route("dut", "198.18.0.0/16", "198.18.0.208", "d0"));
    assert!(has_route(
        "dut",
        "2001:2:0:8000::/49",
        "2001:2:0:8000::208",
        "d1"
    ));
    assert!(has_route("dut", "2001:2::/49", "2001:2::208", "d0"));
    assert!(has_route("gen", "198.19.0.0/16", "198.18.0.203", "g0"));
    assert!(has_route("gen", "2001:2:0:8000::/49", "2001:2::203", "g0"));

    // The text form says the same in brief.
    let text = ok(&["lab", "status", "--prefix", &p.0]);
    assert!(
        text.starts_with(&format!("lab {}: up (1 queue per interface)\n", p.0)),
        "{text}"
    );
    assert!(text.contains(&format!(
        "{} (device under test): forwarding ipv4 1 ipv6 1",
        p.ns("dut")
    )));
    assert!(text.contains(&format!(
        "  r0  {}  UP  mtu 9000",
        format_mac(lab.rcv_mac())
    )));
    assert!(text.contains(&format!(
        "  neigh 198.19.0.208 dev d1 {} PERMANENT",
        format_mac(lab.rcv_mac())
    )));
}

/// Kernel SNMP counters of namespace `ns` (`Ip.ForwDatagrams`,
/// `Icmp.OutMsgs`, `Icmp6OutMsgs`, ...), read on a thread inside it.
fn snmp(ns: &str) -> BTreeMap<String, u64> {
    netns::within(ns, || {
        let mut m = BTreeMap::new();
        // thread-self: /proc/self/net would show the main thread's namespace.
        let snmp = std::fs::read_to_string("/proc/thread-self/net/snmp").unwrap();
        let lines: Vec<&str> = snmp.lines().collect();
        for pair in lines.chunks(2) {
            let (Some((proto, keys)), Some((_, values))) =
                (pair[0].split_once(':'), pair[1].split_once(':'))
            else {
                continue;
            };
            for (k, v) in keys.split_whitespace().zip(values.split_whitespace()) {
                if let Ok(v) = v.parse() {
                    m.insert(format!("{proto}.{k}"), v);
                }
            }
        }
        let snmp6 = std::fs::read_to_string("/proc/thread-self/net/snmp6").unwrap();
        for line in snmp6.lines() {
            let mut w = line.split_whitespace();
            if let (Some(k), Some(Ok(v))) = (w.next(), w.next().map(str::parse)) {
                m.insert(k.to_string(), v);
            }
        }
        m
    })
    .unwrap()
}

fn counters(lab: &BuiltinLab) -> Vec<LabIfCounters> {
    lab.counters().unwrap()
}

/// Waits until no lab interface has counted anything for 300 ms (the MLD
/// reports of `up` are over), then checks that it stays silent for 1 s.
fn wait_until_quiet(lab: &BuiltinLab) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = counters(lab);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = counters(lab);
        if now == last {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the lab never fell silent: {now:?}"
        );
        last = now;
    }
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(counters(lab), last, "the lab sends something on its own");
}

/// Sends `n` UDP datagrams with `payload` bytes from the generator
/// namespace, cycling through `dsts`, and checks that exactly `n` frames of
/// exactly `frame_len` bytes crossed the DUT to r0, that nothing came back,
/// and that nobody sent ICMP.
fn forward_and_count(p: &Prefix, dsts: &[SocketAddr], n: u64, payload: usize, frame_len: u64) {
    ok(&["lab", "up", "--prefix", &p.0]);
    let lab = p.lab();
    wait_until_quiet(&lab);
    let (gen, dut, rcv) = (lab.gen_ns(), lab.dut_ns(), lab.rcv_ns());
    let snmp_before: Vec<_> = [gen, dut, rcv].iter().map(|ns| snmp(ns)).collect();
    let before = counters(&lab);

    let pending_error = netns::within(gen, || {
        let any: SocketAddr = match dsts[0].ip() {
            IpAddr::V4(_) => "0.0.0.0:0".parse().unwrap(),
            IpAddr::V6(_) => "[::]:0".parse().unwrap(),
        };
        let sock = UdpSocket::bind(any).unwrap();
        let data = vec![0x5a; payload];
        for i in 0..n as usize {
            let sent = sock.send_to(&data, dsts[i % dsts.len()]).unwrap();
            assert_eq!(sent, payload);
        }
        sock.take_error().unwrap()
    })
    .unwrap();
    assert!(pending_error.is_none(), "{pending_error:?}");

    let r0 = |c: &[LabIfCounters]| c[3].counters.rx_packets;
    let deadline = Instant::now() + Duration::from_secs(5);
    while r0(&counters(&lab)) < r0(&before) + n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Anything extra (ARP, ND, ICMP, a late duplicate) would show by now.
    std::thread::sleep(Duration::from_millis(500));
    let after = counters(&lab);
    let d: Vec<_> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| (a.role, a.counters.delta(&b.counters)))
        .collect();
    let get = |role: IfRole| d.iter().find(|(r, _)| *r == role).unwrap().1;
    let (g0, d0, d1, r0) = (
        get(IfRole::Gen),
        get(IfRole::DutIn),
        get(IfRole::DutOut),
        get(IfRole::Rcv),
    );
    assert_eq!((g0.tx_packets, g0.tx_bytes), (n, n * frame_len), "g0 sent");
    assert_eq!(
        (d0.rx_packets, d0.rx_bytes),
        (n, n * frame_len),
        "d0 received"
    );
    assert_eq!(
        (d1.tx_packets, d1.tx_bytes),
        (n, n * frame_len),
        "d1 forwarded"
    );
    assert_eq!(
        (r0.rx_packets, r0.rx_bytes),
        (n, n * frame_len),
        "r0 received"
    );
    // Nothing went the other way: no ARP/ND from anyone, no ICMP errors.
    assert_eq!(r0.tx_packets, 0, "r0 sent something");
    assert_eq!(d1.rx_packets, 0);
    assert_eq!(d0.tx_packets, 0, "the DUT sent something back");
    assert_eq!(g0.rx_packets, 0, "the generator received something");
    for c in [g0, d0, d1, r0] {
        assert_eq!(
            (c.rx_dropped, c.rx_errors, c.tx_dropped, c.tx_errors),
            (0, 0, 0, 0)
        );
    }

    let snmp_after: Vec<_> = [gen, dut, rcv].iter().map(|ns| snmp(ns)).collect();
    let delta = |i: usize, key: &str| snmp_after[i][key] - snmp_before[i][key];
    let v6 = dsts[0].is_ipv6();
    let forwarded = if v6 {
        delta(1, "Ip6OutForwDatagrams")
    } else {
        delta(1, "Ip.ForwDatagrams")
    };
    assert_eq!(forwarded, n, "the DUT's kernel forwarded them");
    for (i, ns) in ["gen", "dut", "rcv"].iter().enumerate() {
        assert_eq!(delta(i, "Icmp.OutMsgs"), 0, "ICMP sent by {ns}");
        assert_eq!(delta(i, "Icmp.InMsgs"), 0, "ICMP received by {ns}");
        assert_eq!(delta(i, "Icmp6OutMsgs"), 0, "ICMPv6 sent by {ns}");
        assert_eq!(delta(i, "Icmp6InMsgs"), 0, "ICMPv6 received by {ns}");
    }
}

#[test]
fn forwards_ipv4_to_the_receiver_with_no_noise() {
    let p = Prefix::new();
    // 198.19.10.1-100, the lab's destination range.
    let dsts: Vec<SocketAddr> = (1..=100)
        .map(|h| SocketAddr::from(([198, 19, 10, h], 2000)))
        .collect();
    // 18 payload bytes: a 60-byte frame (64 with the FCS, which veth does not count).
    forward_and_count(&p, &dsts, 300, 18, 14 + 20 + 8 + 18);
}

#[test]
fn forwards_ipv6_to_the_receiver_with_no_noise() {
    let p = Prefix::new();
    // 2001:2:0:8000::1-64, the lab's IPv6 destination range (inside r0's
    // /64, so this also checks that the DUT uses the static next hop).
    let dsts: Vec<SocketAddr> = (1..=0x64u16)
        .map(|h| {
            let ip = std::net::Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, h);
            SocketAddr::from((ip, 2000))
        })
        .collect();
    forward_and_count(&p, &dsts, 300, 18, 14 + 40 + 8 + 18);
}

#[test]
fn queues_option_sets_tx_and_rx_queues() {
    let p = Prefix::new();
    ok(&["lab", "up", "--prefix", &p.0, "--queues", "2"]);
    for (ns, ifname) in [("gen", "g0"), ("dut", "d0"), ("dut", "d1"), ("rcv", "r0")] {
        // `ip netns exec` mounts the namespace's own /sys.
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &p.ns(ns),
                "ls",
                &format!("/sys/class/net/{ifname}/queues"),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let queues: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(queues, ["rx-0", "rx-1", "tx-0", "tx-1"], "{ns}/{ifname}");
    }
    let st = status_json(&p.0);
    assert_eq!(st["state"], "up");
    assert_eq!(st["queues"], 2);
    // Same queue count: nothing to do. Another one: rebuilt.
    let out = ok(&["lab", "up", "--prefix", &p.0, "--queues", "2"]);
    assert!(out.contains("already up"), "{out}");
    let out = ok(&["lab", "up", "--prefix", &p.0]);
    assert!(out.contains("has been repaired"), "{out}");
    assert!(
        out.contains("g0 has 2 TX and 2 RX queues (want 1)"),
        "{out}"
    );
    assert_eq!(status_json(&p.0)["queues"], 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, want) in [
        (
            vec!["lab", "up", "--prefix", "bad/name"],
            "pktlab: invalid lab prefix 'bad/name': '/' is not allowed (use letters, digits, '-' and '_')\n",
        ),
        (
            vec!["lab", "status", "--prefix", "a b"],
            "pktlab: invalid lab prefix 'a b': ' ' is not allowed (use letters, digits, '-' and '_')\n",
        ),
        (
            vec!["lab", "down", "--prefix", ""],
            "pktlab: invalid lab prefix '': it is empty\n",
        ),
        (
            vec!["lab", "up", "--prefix", "this-prefix-is-far-too-long-for-a-lab"],
            "pktlab: invalid lab prefix 'this-prefix-is-far-too-long-for-a-lab': longer than 32 characters\n",
        ),
        (
            vec!["lab", "up", "--queues", "0"],
            "pktlab: invalid queue count 0: use 1 to 64\n",
        ),
        (
            vec!["lab", "up", "--queues", "65"],
            "pktlab: invalid queue count 65: use 1 to 64\n",
        ),
    ] {
        let r = pktlab(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr, want, "{args:?}");
        assert_eq!(r.stdout, "");
    }
    // clap's own errors are exit 2 too.
    assert_eq!(pktlab(&["lab", "up", "--queues", "many"]).code, 2);
    assert_eq!(pktlab(&["lab", "sideways"]).code, 2);
}

#[test]
fn down_of_a_missing_lab_is_fine() {
    let p = Prefix::new();
    let r = pktlab(&["lab", "down", "--prefix", &p.0]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, format!("lab {} is down\n", p.0).as_str(), "")
    );
    let text = ok(&["lab", "status", "--prefix", &p.0]);
    assert!(text.starts_with(&format!("lab {}: down\n", p.0)), "{text}");
}

#[test]
fn without_root_up_and_down_say_so() {
    let p = Prefix::new();
    // A copy that user nobody may run (the build tree may not be readable).
    let dir = std::env::temp_dir().join(format!("pktlab-lab-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("pktlab");
    std::fs::copy(PKTLAB, &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_nobody = |args: &[&str]| {
        finish(
            Command::new("setpriv")
                .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
                .arg(&bin)
                .args(args)
                .output()
                .expect("setpriv (util-linux)"),
        )
    };
    let r = as_nobody(&["lab", "up", "--prefix", &p.0]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "pktlab: bringing the lab up needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)\n"
    );
    let r = as_nobody(&["lab", "down", "--prefix", &p.0]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "pktlab: taking the lab down needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)\n"
    );
    assert!(p.existing().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn interface_names_in_the_callers_namespace_do_not_clash() {
    // Run `up` from a namespace that already has g0, d0, d1 and r0: the
    // lab's veths are created inside the lab's namespaces, so this works and
    // leaves those interfaces alone.
    let p = Prefix::new();
    let host = netns::Netns::create(&p.ns("host")).unwrap();
    for (a, b) in [("g0", "d0"), ("d1", "r0")] {
        host.ip(&["link", "add", a, "type", "veth", "peer", "name", b])
            .unwrap();
    }
    let links = || -> Vec<String> {
        let out = host.ip(&["-o", "link"]).unwrap();
        let mut v: Vec<String> = out
            .lines()
            .map(|l| {
                l.split(": ")
                    .nth(1)
                    .unwrap()
                    .split('@')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        v.sort();
        v
    };
    let before = links();
    assert_eq!(before, ["d0", "d1", "g0", "lo", "r0"]);
    // nsenter changes the network namespace only; `ip netns exec` would
    // also give pktlab a private mount namespace, where the bind mounts of
    // the namespaces it creates would stay invisible to this process.
    let r = finish(
        Command::new("nsenter")
            .arg(format!("--net=/var/run/netns/{}", host.name()))
            .args([PKTLAB, "lab", "up", "--prefix", &p.0])
            .output()
            .expect("nsenter (util-linux)"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(links(), before);
    assert_eq!(status_json(&p.0)["state"], "up");
}

/// Runs pktlab on CPUs `cpus` only (`taskset -c`), so that the CPUs it
/// may use, and with them its default CPU plan, are known.
fn pktlab_on(cpus: &str, args: &[&str]) -> Run {
    finish(
        Command::new("taskset")
            .args(["-c", cpus, PKTLAB])
            .args(args)
            .output()
            .unwrap(),
    )
}

/// A sysfs CPU bitmap (`2`, `00000002`, `0,00000002`) as a number.
fn mask_value(text: &str) -> u64 {
    u64::from_str_radix(&text.trim().replace(',', ""), 16).unwrap()
}

/// Every `rps_cpus` (`rx-N`) and, with `xps`, `xps_cpus` (`tx-N`) of the
/// lab's four ports, read from sysfs inside their namespaces.
fn masks(p: &Prefix, xps: bool) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (ns, iface) in [("gen", "g0"), ("dut", "d0"), ("dut", "d1"), ("rcv", "r0")] {
        let files = if xps {
            "*/[rx]ps_cpus"
        } else {
            "rx-*/rps_cpus"
        };
        let script = format!("grep -H . /sys/class/net/{iface}/queues/{files}");
        let out = netns::run_in(&p.ns(ns), &["sh", "-c", &script]).unwrap();
        for line in out.lines() {
            let (path, value) = line.split_once(':').unwrap();
            let short = path
                .trim_start_matches("/sys/class/net/")
                .replace("/queues/", " ");
            m.insert(short, mask_value(value));
        }
    }
    m
}

fn gro_on_d0(p: &Prefix) -> bool {
    let out = netns::run_in(&p.ns("dut"), &["ethtool", "-k", "d0"]).unwrap();
    out.contains("generic-receive-offload: on")
}

#[test]
fn cpu_plan_masks_read_back_status_shows_it_down_removes_all() {
    let p = Prefix::new();
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_ne!(
        online.trim(),
        "0",
        "this test needs a machine with 2 CPUs or more"
    );
    let before = host_links();

    // Allowed CPUs 0 and 1: the DUT gets the last (1), the tester CPU 0.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    assert!(
        r.stdout.contains(
            "  CPU plan isolated: DUT CPUs 1, tester CPUs 0; GRO on d0 (for gen --io xdp); \
             r0's NAPI in threads on CPUs 0 (for recv --io xdp)\n"
        ),
        "{}",
        r.stdout
    );
    let want: BTreeMap<String, u64> = [
        ("g0 rx-0/rps_cpus", 0b01),
        ("d0 rx-0/rps_cpus", 0b10),
        ("d1 rx-0/rps_cpus", 0b10),
        ("r0 rx-0/rps_cpus", 0b01),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(masks(&p, false), want);
    assert!(gro_on_d0(&p));
    let text = ok(&["lab", "status", "--prefix", &p.0]);
    let json = status_json(&p.0);
    let napi = &json["cpus"]["rcv_napi"]["threads"][0];
    assert_eq!(
        text.lines().nth(1),
        Some(
            format!(
                "CPU plan: isolated: DUT CPUs 1 (RPS on d0 d1), tester CPUs 0 (RPS on g0 r0); \
                 GRO on d0 on; r0's NAPI in thread {} (pid {}) on CPUs 0 at SCHED_FIFO 1",
                napi["name"].as_str().unwrap(),
                napi["pid"]
            )
            .as_str()
        ),
        "{text}"
    );
    assert_eq!(json["cpus"]["plan"]["mode"], "isolated");
    assert_eq!(json["cpus"]["plan"]["dut_cpus"], serde_json::json!([1]));
    assert_eq!(json["cpus"]["plan"]["tester_cpus"], serde_json::json!([0]));
    assert_eq!(json["cpus"]["gro_d0"], true);

    // The same plan again: nothing to do.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0]);
    assert_eq!(
        r.stdout,
        format!("lab {} is already up; nothing changed\n", p.0)
    );
    // Another plan on the running lab is applied, and says what it replaced.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0, "--dut-cpus", "0"]);
    assert_eq!(
        r.stdout,
        format!(
            "lab {} was up with another CPU plan (isolated: DUT CPUs 1, tester CPUs 0); \
             applied CPU plan isolated: DUT CPUs 0, tester CPUs 1\n",
            p.0
        )
    );
    let swapped: BTreeMap<String, u64> = want.iter().map(|(k, v)| (k.clone(), v ^ 0b11)).collect();
    assert_eq!(masks(&p, false), swapped);

    // Two queues per port: every RX queue gets the RPS mask, every TX
    // queue the XPS mask of its side.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0, "--queues", "2"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let m = masks(&p, true);
    assert_eq!(m.len(), 16, "{m:?}");
    for (file, mask) in &m {
        let want = if file.starts_with('d') { 0b10 } else { 0b01 };
        assert_eq!(*mask, want, "{file}");
    }
    let text = ok(&["lab", "status", "--prefix", &p.0]);
    assert!(
        text.contains(
            "CPU plan: isolated: DUT CPUs 1 (RPS/XPS on d0 d1), tester CPUs 0 (RPS/XPS on g0 r0)"
        ),
        "{text}"
    );

    ok(&["lab", "down", "--prefix", &p.0]);
    assert_eq!(p.existing(), Vec::<String>::new());
    let lab_macs: Vec<String> = p.lab().ifaces().iter().map(|i| format_mac(i.mac)).collect();
    for (name, mac) in host_links().difference(&before) {
        assert!(
            !lab_macs.contains(mac),
            "stray link on the host: {name} {mac}"
        );
    }
}

/// The names of the `napi/r0-*` kernel threads now (any lab's), by pid.
fn r0_napi_threads() -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.starts_with("napi/r0-") {
            out.insert(pid, comm.trim_end().to_string());
        }
    }
    out
}

/// A thread's allowed CPUs as /proc says (`Cpus_allowed_list`).
fn allowed_cpus(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

/// `chrt -p PID`'s two lines: policy and priority.
fn chrt(pid: u32) -> String {
    let out = Command::new("chrt")
        .args(["-p", &pid.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "chrt -p {pid}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Sends `n` test frames through the lab at a slow rate into `recv --io
/// IO` and returns the receiver's summary.
fn send_into_receiver(p: &Prefix, io: &str, n: &str) -> Value {
    let rx = Command::new("ip")
        .args(["netns", "exec", &p.ns("rcv"), PKTLAB, "recv", "-i", "r0"])
        .args(["--io", io, "--json", "-q", "-n", n, "-W", "2", "-t", "30s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let gen = Command::new("ip")
        .args(["netns", "exec", &p.ns("gen"), PKTLAB, "gen", "-i", "g0"])
        .args(["--io", "xdp", "--cpus", "0", "-R", "20kpps", "-n", n, "-q"])
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    let out = rx.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[test]
fn the_receivers_napi_runs_in_a_pinned_thread_on_the_tester_cpu_and_goes_with_the_lab() {
    let p = Prefix::new();
    let before = r0_napi_threads();
    // Allowed CPUs 0 and 1: the DUT on 1, the tester on 0.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Read back without pktlab: r0 is threaded with GRO on, and the lab
    // made a new napi/r0-* thread, pinned to CPU 0 at SCHED_FIFO 1.
    let rcv = p.ns("rcv");
    let sh = |cmd: &str| {
        let out = Command::new("ip")
            .args(["netns", "exec", &rcv, "sh", "-c", cmd])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(sh("cat /sys/class/net/r0/threaded").trim(), "1");
    assert!(sh("ethtool -k r0").contains("generic-receive-offload: on"));
    let json = status_json(&p.0);
    let threads = json["cpus"]["rcv_napi"]["threads"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(threads.len(), 1, "one receive queue, one thread: {json}");
    let pid = threads[0]["pid"].as_u64().unwrap() as u32;
    let now = r0_napi_threads();
    assert!(!before.contains_key(&pid), "thread {pid} is the lab's own");
    assert_eq!(
        now.get(&pid),
        threads[0]["name"].as_str().map(String::from).as_ref()
    );
    assert_eq!(allowed_cpus(pid), "0");
    let policy = chrt(pid);
    assert!(
        policy.contains("SCHED_FIFO") && policy.contains("priority: 1"),
        "{policy}"
    );
    assert_eq!(
        json["cpus"]["rcv_napi"]["threads"][0]["cpus"],
        serde_json::json!([0])
    );
    assert_eq!(json["cpus"]["rcv_napi"]["threads"][0]["fifo"], 1);

    // The in-kernel receiver's program runs there: every frame counted on
    // CPU 0, none on the DUT's CPU 1, though d1 (CPU 1) sent them.
    let summary = send_into_receiver(&p, "xdp", "2000");
    assert_eq!(summary["packets"], 2000, "{summary}");
    let cpus: Vec<(u64, u64)> = summary["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["cpu"].as_u64().unwrap(), t["packets"].as_u64().unwrap()))
        .collect();
    assert_eq!(cpus, vec![(0, 2000)], "{summary}");

    // A thread moved by hand is not the plan: `lab up` puts it back.
    let moved = Command::new("taskset")
        .args(["-pc", "0,1", &pid.to_string()])
        .output()
        .unwrap();
    assert!(moved.status.success());
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0]);
    assert!(
        r.stdout.contains("applied CPU plan isolated"),
        "{}",
        r.stdout
    );
    assert_eq!(allowed_cpus(pid), "0");

    // Shared mode takes r0's NAPI back to the kernel's defaults.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0, "--dut-cpus", "all"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(sh("cat /sys/class/net/r0/threaded").trim(), "0");
    assert!(!r0_napi_threads().contains_key(&pid));
    let json = status_json(&p.0);
    assert_eq!(json["cpus"]["rcv_napi"]["threads"], serde_json::json!([]));

    // Back to isolated, then down: the thread goes with r0.
    let r = pktlab_on("0,1", &["lab", "up", "--prefix", &p.0]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let pid = status_json(&p.0)["cpus"]["rcv_napi"]["threads"][0]["pid"]
        .as_u64()
        .unwrap() as u32;
    assert_eq!(allowed_cpus(pid), "0");
    ok(&["lab", "down", "--prefix", &p.0]);
    // The kernel dismantles a deleted namespace's devices in the
    // background: the thread goes a moment later.
    let deadline = Instant::now() + Duration::from_secs(10);
    while r0_napi_threads().contains_key(&pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !r0_napi_threads().contains_key(&pid),
        "thread {pid} outlived the lab by 10 s"
    );
}

#[test]
fn one_cpu_is_shared_mode_with_one_line_saying_so() {
    let p = Prefix::new();
    let r = pktlab_on("0", &["lab", "up", "--prefix", &p.0]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        "pktlab: only 1 CPU (0) is available: the generator, DUT and receiver share it, so the DUT \
         cannot be isolated and figures are the whole machine's speed (shared mode)\n"
    );
    assert!(
        r.stdout
            .contains("  CPU plan shared: DUT and tester on CPUs 0;"),
        "{}",
        r.stdout
    );
    assert!(masks(&p, false).values().all(|&m| m == 0));
    // GRO is on all the same: the XDP generator needs it whatever the plan.
    assert!(gro_on_d0(&p));
    let text = ok(&["lab", "status", "--prefix", &p.0]);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("CPU plan: shared (no RPS/XPS masks)"),
        "{text}"
    );
}

#[test]
fn dut_cpus_that_cannot_be_used_are_one_line_and_exit_2() {
    let p = Prefix::new();
    for (cpus, list, want) in [
        ("0,1", "4096", "pktlab: invalid CPU list '4096': CPU 4096 is beyond 1023\n"),
        ("0,1", "0-1", "pktlab: --dut-cpus 0-1: that leaves no CPU for the generator and receiver (allowed CPUs: 0-1)\n"),
        ("0", "1", "pktlab: --dut-cpus 1: CPU 1 is not allowed for this process (allowed CPUs: 0)\n"),
        ("0", "x", "pktlab: invalid CPU list 'x': 'x' is not a CPU number\n"),
    ] {
        let r = pktlab_on(cpus, &["lab", "up", "--prefix", &p.0, "--dut-cpus", list]);
        assert_eq!((r.code, r.stderr.as_str(), r.stdout.as_str()), (2, want, ""), "{list}");
    }
    // A CPU beyond the machine's: named as such.
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let last: usize = online
        .trim()
        .rsplit(['-', ','])
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let beyond = (last + 1).to_string();
    let r = pktlab(&["lab", "up", "--prefix", &p.0, "--dut-cpus", &beyond]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "pktlab: --dut-cpus {beyond}: CPU {beyond} does not exist (this machine's CPUs: {})\n",
            online.trim()
        )
    );
    assert!(p.existing().is_empty(), "nothing is built on bad input");
}
