//! `pktlab gen --ports rfc4814` into `pktlab recv` on a veth pair in a
//! namespace the test creates (root, tcpdump and tshark needed), with the
//! AF_PACKET sender and with the XDP live-frame generator: exact counts at
//! the receiver with streams that are address pairs, and a capture of
//! every frame that tshark decodes, checksums recomputed, with RFC 4814's
//! ports.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{counts, ok_in, one_at_a_time, summary, u, Capture, Receiver, VethNs};

const WAIT: Duration = Duration::from_secs(90);
const FRAMES: u64 = 20_000;
/// 4 source × 5 destination addresses: 20 address pairs, 1000 frames each.
const SRC: &str = "198.18.10.1-198.18.10.4";
const DST: &str = "198.19.10.1-198.19.10.5";

impl Capture {
    /// Waits for tcpdump to have written its FRAMES frames, then decodes
    /// them with tshark, checksum validation on: one row of `fields` each.
    fn rows(mut self, fields: &[&str]) -> Vec<Vec<String>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "tcpdump did not capture {FRAMES} frames"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut cmd = Command::new("tshark");
        cmd.arg("-r")
            .arg(&self.file)
            .args(["-n", "-o", "ip.check_checksum:TRUE"])
            .args(["-o", "udp.check_checksum:TRUE"])
            .args(["-T", "fields", "-E", "separator=/t"]);
        for f in fields {
            cmd.args(["-e", f]);
        }
        let out = cmd.output().expect("tshark (apt-get install tshark)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    }
}

/// Sends FRAMES frames with `io` and RFC 4814 ports; checks the sender's
/// and the receiver's counts and every captured frame.
fn rfc4814_ports_arrive_exactly(io: &str) {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    // The XDP generator's redirected frames need GRO (or XDP) on the peer.
    v.exec("ethtool -K vb gro on");
    let capture = Capture::start(&v.ns, "vb", io, &["-B", "65536", "-c", &FRAMES.to_string()]);
    let n = FRAMES.to_string();
    let rx = Receiver::start(
        &v.ns,
        &["-i", "vb", "--io", "afpacket", "-n", &n, "-t", "80"],
    );
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "--io",
            io,
            "-D",
            &v.mac("vb"),
            "-s",
            SRC,
            "-d",
            DST,
            "--ports",
            "rfc4814",
            "--seed",
            "7",
            "-n",
            &n,
            "-R",
            "20kpps",
            "--json",
        ],
    );
    let tx = summary(&out);
    assert_eq!(u(&tx, "packets"), FRAMES, "{io}");
    assert_eq!(u(&tx, "flows"), 20, "{io}: address pairs");
    assert_eq!(tx["ports"], "rfc4814", "{io}");

    let rows = capture.rows(&[
        "ip.src",
        "ip.dst",
        "udp.srcport",
        "udp.dstport",
        "ip.checksum.status",
        "udp.checksum.status",
    ]);
    assert_eq!(rows.len() as u64, FRAMES, "{io}: captured frames");
    let mut per_pair: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut tuples = BTreeSet::new();
    for r in &rows {
        let (sport, dport): (u16, u16) = (r[2].parse().unwrap(), r[3].parse().unwrap());
        assert!((1024..=65535).contains(&sport), "{io}: {r:?}");
        assert!((1..=49151).contains(&dport), "{io}: {r:?}");
        // 1 = Good: tshark recomputed both checksums.
        assert_eq!((r[4].as_str(), r[5].as_str()), ("1", "1"), "{io}: {r:?}");
        *per_pair.entry((&r[0], &r[1])).or_default() += 1;
        tuples.insert(&r[..4]);
    }
    // Every address pair, 1000 frames each (sequential order, one thread).
    assert_eq!(per_pair.len(), 20, "{io}: {per_pair:?}");
    assert!(per_pair.values().all(|&c| c == 1000), "{io}: {per_pair:?}");
    assert!(
        per_pair.contains_key(&("198.18.10.4", "198.19.10.5")),
        "{io}"
    );
    // The ports vary: far more distinct 4-tuples than pairs.
    assert!(
        tuples.len() as u64 > FRAMES * 99 / 100,
        "{io}: {}",
        tuples.len()
    );

    // The receiver checks streams by the payload's id: 20 of them, each
    // in sequence, whatever its ports; its 5-tuples are the capture's.
    let (_, s) = rx.wait(WAIT);
    let flows = tuples.len() as u64;
    assert_eq!(counts(&s), (FRAMES, flows, 0, 0, 0, 0), "{io}: {s}");
    assert_eq!(u(&s, "streams"), 20, "{io}");
}

#[test]
fn afpacket_sends_rfc4814_ports_every_frame_counted() {
    rfc4814_ports_arrive_exactly("afpacket");
}

#[test]
fn xdp_sends_rfc4814_ports_every_frame_counted() {
    rfc4814_ports_arrive_exactly("xdp");
}
