//! Jumbo frames at the receiver (issue 16, part 3): on an interface of MTU
//! 9000, `recv --io auto` must receive every 9018-byte frame (AF_XDP's
//! 2048-byte chunks cannot hold one), and a receiver that gets none of the
//! frames its interface counts must say so while it runs.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{ok_in, one_at_a_time, summary, u, Receiver, VethNs, PKTLAB};

const WAIT: Duration = Duration::from_secs(60);

/// A veth pair of one queue each (where `auto` would take AF_XDP) at MTU
/// 9000, as the built-in lab's.
fn jumbo_pair() -> VethNs {
    let v = VethNs::new();
    for i in ["va", "vb"] {
        v.ip(&format!("link set {i} mtu 9000"));
    }
    v
}

fn send_jumbo(v: &VethNs, n: &str) {
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "--io",
            "afpacket",
            "-i",
            "va",
            "-D",
            &v.mac("vb"),
            "-l",
            "9018",
            "-n",
            n,
            "-R",
            "2kpps",
            "--json",
        ],
    );
    assert_eq!(u(&summary(&out), "packets"), n.parse::<u64>().unwrap());
}

#[test]
fn auto_receives_every_jumbo_frame() {
    let v = jumbo_pair();
    let rx = Receiver::start(&v.ns, &["-i", "vb", "-n", "1000", "-t", "50"]);
    assert_eq!(
        rx.ready["backend"],
        "afpacket (MTU 9000: frames of up to 9018 bytes do not fit an AF_XDP chunk)"
    );
    send_jumbo(&v, "1000");
    let (_, s) = rx.wait(WAIT);
    assert_eq!(u(&s, "packets"), 1000);
    // 9018 bytes each, FCS included.
    assert_eq!(u(&s, "bytes"), 1000 * 9018);
    assert_eq!(u(&s, "lost"), 0);
    assert_eq!(u(&s, "foreign"), 0);
}

#[test]
fn auto_keeps_af_xdp_at_mtu_1500() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let rx = Receiver::start(&v.ns, &["-i", "vb", "-n", "100", "-t", "50"]);
    let backend = rx.ready["backend"].as_str().unwrap().to_string();
    assert!(backend.starts_with("afxdp"), "{backend}");
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "-D",
            &v.mac("vb"),
            "-l",
            "1518",
            "-n",
            "100",
            "--json",
        ],
    );
    assert_eq!(u(&summary(&out), "packets"), 100);
    let (_, s) = rx.wait(WAIT);
    assert_eq!(u(&s, "packets"), 100);
    assert_eq!(u(&s, "bytes"), 100 * 1518);
}

#[test]
fn af_xdp_that_gets_none_of_the_frames_says_so() {
    let v = jumbo_pair();
    // Text output: the warning is on stderr while the receiver runs.
    let mut child = Command::new("ip")
        .args([
            "netns", "exec", &v.ns, PKTLAB, "recv", "-i", "vb", "--io", "afxdp", "-t", "6",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    out.read_line(&mut header).unwrap();
    assert!(header.starts_with("Receiving with afxdp"), "{header}");
    send_jumbo(&v, "1000");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert!(rest.contains("Received 0 packets"), "{rest}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    let w = warnings[0];
    let prefix = "pktlab: warning: vb counted ";
    assert!(w.starts_with(prefix), "{w}");
    let seen: u64 = w[prefix.len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=1000).contains(&seen), "{w}");
    assert!(
        w.ends_with(
            " frames since the start and the receiver (afxdp (copy, native XDP)) got none: \
             frames longer than its buffers, or taken by another program on vb?"
        ),
        "{w}"
    );
}
