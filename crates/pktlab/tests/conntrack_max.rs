//! `pktlab rfc9693 --conntrack-max N` on the built-in lab (root): the
//! campaign sets the host's nf_conntrack_max, says in one line that it
//! changes the whole host, finds the table's capacity within 1 % of N,
//! and puts the old value back after the run, and after a campaign
//! killed with SIGKILL at the next `pktlab lab down`.
//!
//! A guard writes the old value back if a test fails half-way.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{one_at_a_time, pktlab, Lab, PKTLAB};
use pktlab_search::stateful::results::{StatefulReport, REPORT_FILE};

const FILE: &str = "/proc/sys/net/netfilter/nf_conntrack_max";
const LIMIT: u64 = 3000;

fn host_limit() -> u64 {
    std::fs::read_to_string(FILE)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Puts the value found at the start back when dropped, whatever
/// happened; the test itself checks that pktlab did it first.
struct KeepHostLimit(u64);

impl KeepHostLimit {
    fn now() -> KeepHostLimit {
        let v = host_limit();
        assert_ne!(v, LIMIT, "the host's nf_conntrack_max is already {LIMIT}");
        KeepHostLimit(v)
    }
}

impl Drop for KeepHostLimit {
    fn drop(&mut self) {
        let _ = std::fs::write(FILE, self.0.to_string());
    }
}

fn notice() -> String {
    format!(
        "note: net.netfilter.nf_conntrack_max is host-wide: setting it to {LIMIT} changes the whole host, not only the lab (its old value is saved and restored)\n"
    )
}

#[test]
fn the_campaign_sets_the_limit_and_puts_it_back() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    let before = KeepHostLimit::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let limit = LIMIT.to_string();
    let r = pktlab(&[
        "rfc9693",
        "--prefix",
        &lab.prefix,
        "--configs",
        "nft-stateful",
        "--tests",
        "capacity",
        "--width",
        "0.1",
        "--conntrack-max",
        &limit,
        "--no-history",
        "--json",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(host_limit(), before.0, "not restored after the run");
    assert_eq!(r.stderr.matches(&notice()).count(), 1, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.join(REPORT_FILE)).unwrap();
    let report: StatefulReport = serde_json::from_str(&text).unwrap();
    assert_eq!(report.settings.conntrack_max, Some(LIMIT));
    let run = &report.runs[0];
    // The run read the limit it set.
    assert_eq!(run.conntrack_max, Some(LIMIT));
    let cap = run.capacity.as_ref().unwrap();
    let (lower, upper) = (cap.lower.unwrap(), cap.upper.unwrap());
    let trace = format!("{cap:?}\n{:#?}", run.trials);
    assert!((2970.0..=3000.0).contains(&lower), "{trace}");
    assert!(upper > 3000.0 && upper <= 3030.0, "{trace}");
}

#[test]
fn a_killed_campaign_s_limit_is_put_back_by_lab_down() {
    let _one = one_at_a_time();
    let lab = Lab::up();
    let before = KeepHostLimit::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut child = Command::new(PKTLAB)
        .args([
            "rfc9693",
            "--prefix",
            &lab.prefix,
            "--configs",
            "nft-stateful",
        ])
        .args([
            "--tests",
            "capacity,rate,teardown",
            "--no-history",
            "--quiet",
        ])
        .args(["--conntrack-max", &LIMIT.to_string(), "-o"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while host_limit() != LIMIT {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the campaign never set the limit"
        );
        assert!(child.try_wait().unwrap().is_none(), "the campaign ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no revert, no restore.
    child.wait().unwrap();
    assert_eq!(host_limit(), LIMIT, "the killed campaign restored it");
    let r = pktlab(&["lab", "down", "--prefix", &lab.prefix]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(host_limit(), before.0, "lab down did not restore it");
    let said = format!(
        "pktlab: restored host sysctl net.netfilter.nf_conntrack_max to {} (a DUT configuration set it to {LIMIT} and was not reverted)",
        before.0
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
}
