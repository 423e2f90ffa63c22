//! `pktlab ifstat` against known traffic (needs root): two namespaces of
//! our own joined by a veth pair, IPv6 off so that nothing else is sent,
//! `pktlab gen -n 1000` from one end; both ends' ifstat must count exactly
//! the 1000 frames and their bytes.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use pktlab_lab::netns;
use serde_json::Value;

const PKTLAB: &str = env!("CARGO_BIN_EXE_pktlab");

/// Namespaces `i<pid>x<n>-a` and `-b`, deleted on drop.
struct Pair {
    a: String,
    b: String,
}

impl Pair {
    fn new() -> Pair {
        static N: AtomicU32 = AtomicU32::new(0);
        let base = format!(
            "i{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let pair = Pair {
            a: format!("{base}-a"),
            b: format!("{base}-b"),
        };
        for ns in [&pair.a, &pair.b] {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            // No IPv6 means no router solicitation, DAD or MLD frame.
            netns::run_in(
                ns,
                &[
                    "sysctl",
                    "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1",
                ],
            )
            .unwrap();
        }
        ip(&[
            "link", "add", "a0", "netns", &pair.a, "type", "veth", "peer", "name", "b0", "netns",
            &pair.b,
        ]);
        ip(&["-n", &pair.a, "link", "set", "a0", "up"]);
        ip(&["-n", &pair.b, "link", "set", "b0", "up"]);
        pair
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn ip(args: &[&str]) {
    let st = Command::new("ip").args(args).status().unwrap();
    assert!(st.success(), "ip {args:?}");
}

fn mac_of(ns: &str, iface: &str) -> String {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "link", "show", iface])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v[0]["address"].as_str().unwrap().to_string()
}

fn sum(rows: &[Value], key: &str) -> u64 {
    rows.iter().map(|r| r[key].as_u64().unwrap()).sum()
}

#[test]
fn counts_exactly_the_frames_sent() {
    let pair = Pair::new();
    // 40 samples of 100 ms. The first line of each watcher shows that it
    // has read its starting counters: only then does the generator start
    // (1000 frames at 2000 pps: 0.5 s of the 4).
    let watch = |ns: &str, extra: &[&str]| {
        let mut child = Command::new(PKTLAB)
            .args(["ifstat", "--netns", ns, "-c", "40", "-w", "100ms", "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        std::io::BufRead::read_line(&mut out, &mut first).unwrap();
        assert!(first.contains(r#""t":1"#), "{first}");
        (child, out, first)
    };
    // The sender's side by default (every interface but lo), the
    // receiver's by name.
    let tx_side = watch(&pair.a, &[]);
    let rx_side = watch(&pair.b, &["b0"]);
    let gen = Command::new("ip")
        .args(["netns", "exec", &pair.a, PKTLAB, "gen", "-i", "a0", "-D"])
        .arg(mac_of(&pair.b, "b0"))
        .args(["-n", "1000", "-R", "2000pps", "-q"])
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );
    type Watcher = (
        std::process::Child,
        std::io::BufReader<std::process::ChildStdout>,
        String,
    );
    let rows = |(mut child, mut out, first): Watcher| -> Vec<Value> {
        let mut text = first;
        std::io::Read::read_to_string(&mut out, &mut text).unwrap();
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "{err}");
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (tx, rx) = (rows(tx_side), rows(rx_side));
    assert_eq!(tx.len(), 40);
    assert_eq!(rx.len(), 40);
    assert_eq!(
        rx.iter()
            .map(|r| r["t"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        (1..=40).collect::<Vec<u64>>()
    );
    // 1000 frames of 64 bytes: 60 bytes each without the FCS.
    assert_eq!(sum(&tx, "opackets"), 1000);
    assert_eq!(sum(&tx, "obytes"), 60_000);
    assert_eq!(sum(&tx, "ipackets"), 0);
    assert_eq!(sum(&rx, "ipackets"), 1000);
    assert_eq!(sum(&rx, "ibytes"), 60_000);
    assert_eq!(sum(&rx, "opackets"), 0);
    for key in ["ierrs", "idrops", "oerrs", "odrops"] {
        assert_eq!(sum(&rx, key) + sum(&tx, key), 0, "{key}");
    }
}

#[test]
fn text_output_like_netstat() {
    let pair = Pair::new();
    let out = Command::new(PKTLAB)
        .args(["ifstat", "--netns", &pair.b, "-c", "2", "-w", "100ms", "b0"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].contains("input") && lines[0].contains("b0") && lines[0].contains("output"));
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["packets", "errs", "idrops", "bytes", "packets", "errs", "bytes", "odrops"]
    );
    assert_eq!(lines[2].split_whitespace().count(), 8);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let pair = Pair::new();
    for (args, msg) in [
        (
            vec!["ifstat", "--netns", "pktlab-no-such-ns-x", "-c", "1"],
            "pktlab: network namespace pktlab-no-such-ns-x does not exist\n",
        ),
        (
            vec!["ifstat", "--netns", &pair.a, "-c", "1", "nosuch0"],
            "pktlab: no such interface: nosuch0",
        ),
        (
            vec!["ifstat", "-c", "0"],
            "pktlab: invalid count 0: use at least 1\n",
        ),
    ] {
        let out = Command::new(PKTLAB).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(msg), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
