//! `pktlab gen --json` and `pktlab recv --json` lines read back as the
//! engine's own types: what a remote worker's caller does with them. Real
//! runs over a veth pair in a namespace the test creates (root needed).

mod common;

use std::time::Duration;

use pktlab_engine::rx::{RxInterval, RxSummary};
use pktlab_engine::tx::{TxInterval, TxSummary};

use common::{ok_in, Receiver, VethNs};

/// `a` and `b` agree to 1e-9 of `b` (JSON floats are read back to within
/// an ulp or so).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= b.abs() * 1e-9
}

#[test]
fn gen_and_recv_json_lines_deserialize_into_the_engine_types() {
    let v = VethNs::new();
    let rx = Receiver::start(
        &v.ns,
        &["--io", "afpacket", "-i", "vb", "-n", "6000", "-t", "50"],
    );
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
            "-n",
            "6000",
            "-p",
            "2",
            "-R",
            "30kpps",
            "-l",
            "100",
            "--json",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    let (last, intervals) = lines.split_last().expect("gen printed lines");

    let tx: TxSummary = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(tx.backend, "afpacket");
    assert_eq!(tx.packets, 6000);
    assert_eq!(tx.bytes, 6000 * 100);
    assert_eq!(tx.tx_errors, 0);
    assert!(!tx.interrupted);
    // 6000 frames split over 2 threads.
    let per_thread: Vec<u64> = tx.threads.iter().map(|t| t.packets).collect();
    assert_eq!(per_thread, [3000, 3000]);
    assert!(tx
        .threads
        .iter()
        .all(|t| t.backend == "afpacket" && t.bytes == 300_000));
    // 6000 frames at 30 kpps take 0.2 s at least.
    assert!(tx.seconds >= 0.19 && tx.seconds < 30.0, "{}", tx.seconds);
    assert!(close(tx.pps, 6000.0 / tx.seconds), "{} pps", tx.pps);
    // L1: 100 bytes and 20 of preamble, SFD and gap per frame.
    assert!(
        close(tx.l1_bps, 6000.0 * 120.0 * 8.0 / tx.seconds),
        "{}",
        tx.l1_bps
    );
    let iface = tx.iface.expect("the interface's counters");
    assert_eq!(iface.tx_packets, 6000);
    // Every interval line is a TxInterval too, and they add up.
    let ivs: Vec<TxInterval> = intervals
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!ivs.is_empty());
    assert_eq!(ivs.iter().map(|i| i.packets).sum::<u64>(), 6000);
    assert_eq!(ivs.iter().map(|i| i.bytes).sum::<u64>(), 600_000);

    let (values, _) = rx.wait(Duration::from_secs(60));
    let texts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    let (last, rest) = texts.split_last().expect("recv printed lines");
    let rx: RxSummary = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert_eq!(rx.backend, "afpacket");
    assert_eq!(rx.packets, 6000);
    assert_eq!(rx.bytes, 6000 * 100);
    // The lab's default ranges: 2000 flows, one stream each.
    assert_eq!((rx.flows, rx.streams), (2000, 2000));
    assert_eq!((rx.lost, rx.out_of_order, rx.duplicates), (0, 0, 0));
    assert_eq!((rx.foreign, rx.ring_drops), (0, 0));
    assert!(!rx.interrupted);
    assert_eq!(rx.threads.len(), 1);
    assert_eq!(rx.threads[0].packets, 6000);
    let lat = rx.latency_ns.expect("latency, the clock is shared");
    assert_eq!(lat.count, 6000);
    assert!(
        lat.min <= lat.p50 && lat.p50 <= lat.p99 && lat.p99 <= lat.max,
        "{lat:?}"
    );
    assert_eq!(rx.iface.expect("the interface's counters").rx_packets, 6000);
    let ivs: Vec<RxInterval> = rest
        .iter()
        .filter(|l| l.contains(r#""type":"interval""#))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(ivs.iter().map(|i| i.packets).sum::<u64>(), 6000);
    assert_eq!(ivs.iter().map(|i| i.foreign).sum::<u64>(), 0);
}
