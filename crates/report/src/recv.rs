//! `pktlab recv` output.

use pktlab_engine::rx::{RxInterval, RxSummary, CHECKER_MAX_BYTES};
use pktlab_engine::seq::MAX_STREAMS;
use pktlab_loss::drops::Drops;
use serde_json::{json, Value};

use crate::units::{self, nanos};

#[derive(Clone, Debug, serde::Serialize)]
pub struct RecvInfo {
    pub iface: Option<String>,
    pub threads: usize,
}

/// `backend` is the one the threads actually use.
pub fn header(info: &RecvInfo, backend: &str) -> String {
    let on = info
        .iface
        .as_deref()
        .map(|i| format!(" on {i}"))
        .unwrap_or_default();
    format!(
        "Receiving with {backend}{on}, {} thread{}",
        info.threads,
        if info.threads == 1 { "" } else { "s" }
    )
}

/// What the receiver keeps per thread whatever arrives, said at the start:
/// `Per thread: streams 0 to 1048575 checked (others counted as untracked), at most 81.2 MiB for their state`.
pub fn bound_line() -> String {
    format!(
        "Per thread: streams 0 to {} checked (others counted as untracked), at most {:.1} MiB for their state",
        MAX_STREAMS - 1,
        CHECKER_MAX_BYTES as f64 / (1 << 20) as f64
    )
}

/// `   1.000 rx 1.49 Mpps (1488123 pkts 761.92 Mbps L2 1.00 Gbps L1 in 1000102 usec)`,
/// plus the foreign frames when there were any.
pub fn interval_line(iv: &RxInterval) -> String {
    let mut line = units::interval_line(
        "rx", iv.elapsed, iv.seconds, iv.packets, iv.pps, iv.l2_bps, iv.l1_bps,
    );
    if iv.foreign > 0 {
        line += &format!(" {} foreign", iv.foreign);
    }
    line
}

pub fn interval_json(iv: &RxInterval) -> Value {
    let mut v = serde_json::to_value(iv).expect("serialisable");
    v["type"] = json!("interval");
    v
}

/// The closing summary; with the streams to expect (`expected`) when the
/// generator's ranges are known, and where the loss went (`--drop-trace`)
/// with the frames sent as the receiver knows them.
pub fn summary_text(
    s: &RxSummary,
    info: &RecvInfo,
    expected: Option<u64>,
    loss: Option<&(Drops, u64)>,
) -> String {
    let mut text = summary_lines(s, info);
    if let Some(n) = expected {
        text += &missing_line(s, n);
    }
    if let Some((d, sent)) = loss {
        text += &crate::bench::drops_line(d, *sent);
        text += "\n";
    }
    text
}

fn summary_lines(s: &RxSummary, info: &RecvInfo) -> String {
    let avg = if s.packets > 0 {
        format!("{:.2} bytes on average", s.bytes as f64 / s.packets as f64)
    } else {
        "no bytes".to_string()
    };
    let mut out = format!(
        "Received {} packets, {avg}, in {:.2} seconds.\n{}\n",
        s.packets,
        s.seconds,
        units::speed_line(s.pps, s.l2_bps, s.l1_bps),
    );
    out += &format!(
        "Test traffic: {} flows in {} streams, {} lost, {} out of order, {} duplicates; {} foreign frames",
        s.flows, s.streams, s.lost, s.out_of_order, s.duplicates, s.foreign
    );
    if s.untracked > 0 {
        out += &format!(
            "\nUntracked: {} test frames of streams beyond the receiver's stream limit, counted but not checked",
            s.untracked
        );
    }
    if s.bad_stamps > 0 {
        out += &format!(
            "\nNot timed: {} test frames stamped in the future or before the run (clocks apart, or frames not from pktlab)",
            s.bad_stamps
        );
    }
    out += "\n";
    if let Some(l) = &s.latency_ns {
        let sample = match l.one_in {
            Some(n) => format!(" (1 test frame in {n} timed per CPU: {})", l.count),
            None => String::new(),
        };
        out += &format!(
            "Latency{sample}: min {} avg {} p50 {} p99 {} p99.9 {} max {}\n",
            nanos(l.min as f64),
            nanos(l.avg),
            nanos(l.p50 as f64),
            nanos(l.p99 as f64),
            nanos(l.p999 as f64),
            nanos(l.max as f64)
        );
    }
    if let (Some(c), Some(name)) = (&s.iface, &info.iface) {
        out += &format!(
            "Interface {name}: rx_packets {} rx_dropped {} rx_missed_errors {} rx_fifo_errors {} rx_errors {}; socket ring drops {}\n",
            c.rx_packets, c.rx_dropped, c.rx_missed_errors, c.rx_fifo_errors, c.rx_errors, s.ring_drops
        );
    } else if s.ring_drops > 0 {
        out += &format!("Socket ring drops: {}\n", s.ring_drops);
    }
    if s.interrupted {
        out += "Interrupted: the figures cover the run until Ctrl-C.\n";
    }
    out
}

/// Streams of the `expected` ones that never arrived. Stream ids are flow
/// indices, so the streams seen are all expected ones unless frames of
/// another generator came in.
pub fn streams_missing(s: &RxSummary, expected: u64) -> u64 {
    expected.saturating_sub(s.streams)
}

/// The frames of the streams that never arrived, counted at the mean of
/// the streams that did: each stream's frames up to its last one seen are
/// its highest sequence number plus one (received, less duplicates, plus
/// the gaps). Exact when the generator gives every stream the same number
/// of frames (`-n` a multiple of the flows, in sequential order).
pub fn missing_frames(s: &RxSummary, expected: u64) -> u64 {
    let missing = streams_missing(s, expected);
    if missing == 0 || s.streams == 0 {
        return 0;
    }
    let checked = s
        .packets
        .saturating_sub(s.foreign + s.untracked + s.duplicates)
        + s.lost;
    // Rounded to the nearest frame.
    ((u128::from(checked) * u128::from(missing) * 2 + u128::from(s.streams))
        / (2 * u128::from(s.streams))) as u64
}

/// `20 of 2000 streams never arrived` (or that all did), one line.
pub fn missing_line(s: &RxSummary, expected: u64) -> String {
    match streams_missing(s, expected) {
        0 => format!("All {expected} expected streams arrived.\n"),
        n => format!("{n} of {expected} streams never arrived.\n"),
    }
}

/// The line that lets a script start its generator only once frames are
/// counted.
pub fn ready_json(backend: &str, info: &RecvInfo) -> Value {
    json!({
        "type": "ready",
        "backend": backend,
        "iface": info.iface,
        "max_streams": pktlab_engine::seq::MAX_STREAMS,
        "checker_max_bytes": pktlab_engine::rx::CHECKER_MAX_BYTES,
    })
}

pub fn summary_json(
    s: &RxSummary,
    info: &RecvInfo,
    expected: Option<u64>,
    loss: Option<&(Drops, u64)>,
) -> Value {
    let mut v = serde_json::to_value(s).expect("serialisable");
    v["type"] = json!("summary");
    v["iface_name"] = json!(info.iface);
    if let Some(n) = expected {
        v["streams_expected"] = n.into();
        v["streams_missing"] = streams_missing(s, n).into();
    }
    if let Some((d, _)) = loss {
        v["drops"] = serde_json::to_value(d).expect("serialisable");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_engine::rx::Latency;
    use pktlab_io::iface::IfCounters;

    fn info() -> RecvInfo {
        RecvInfo {
            iface: Some("r0".into()),
            threads: 1,
        }
    }

    /// 10 000 frames of 64 bytes in 0.5 s: 20 kpps, 10.24 Mbps L2,
    /// 13.44 Mbps L1.
    fn summary() -> RxSummary {
        RxSummary {
            backend: "afpacket".into(),
            packets: 10_000,
            bytes: 640_000,
            seconds: 0.5,
            pps: 20_000.0,
            l2_bps: 10_240_000.0,
            l1_bps: 13_440_000.0,
            flows: 2000,
            streams: 2000,
            lost: 4000,
            out_of_order: 3,
            duplicates: 0,
            foreign: 2,
            untracked: 0,
            ring_drops: 0,
            bad_stamps: 0,
            latency_ns: None,
            latency_buckets: vec![],
            interrupted: false,
            threads: vec![],
            iface: None,
        }
    }

    #[test]
    fn bound_by_hand() {
        // 2^20 streams of 64 bytes, 2^20 hashes of 8 bytes, and a flow set
        // of 2^16 keys (48 bytes and a control byte) in twice as many
        // buckets, 1.5 times while it grows: 85 131 264 bytes.
        assert_eq!(
            bound_line(),
            "Per thread: streams 0 to 1048575 checked (others counted as untracked), at most 81.2 MiB for their state"
        );
    }

    #[test]
    fn the_frames_of_missing_streams_are_the_mean_of_the_others() {
        // 1960 streams arrived with 10 000 - 2 foreign frames and 4000
        // gaps: 13 998 frames, 7.142 per stream; 40 missing streams are
        // 285.67, so 286 frames.
        let mut s = summary();
        s.streams = 1960;
        assert_eq!(missing_frames(&s, 2000), 286);
        // Every stream arrived, or none (nothing to count from).
        assert_eq!(missing_frames(&s, 1960), 0);
        s.streams = 0;
        assert_eq!(missing_frames(&s, 2000), 0);
        // 1980 streams of 5 frames each, 3 duplicates: 20 missing are 100.
        let mut s = summary();
        (s.streams, s.packets, s.foreign, s.lost, s.duplicates) = (1980, 9903, 0, 0, 3);
        assert_eq!(missing_frames(&s, 2000), 100);
    }

    #[test]
    fn untracked_frames_are_said() {
        let mut s = summary();
        assert!(!summary_text(&s, &info(), None, None).contains("untracked"));
        s.untracked = 42;
        let text = summary_text(&s, &info(), None, None);
        assert!(
            text.contains("; 2 foreign frames\nUntracked: 42 test frames of streams beyond the receiver's stream limit, counted but not checked\n"),
            "{text}"
        );
    }

    #[test]
    fn frames_not_timed_get_a_line_only_when_there_are_some() {
        let mut s = summary();
        assert!(!summary_text(&s, &info(), None, None).contains("Not timed"));
        s.bad_stamps = 7;
        assert_eq!(
            summary_text(&s, &RecvInfo { iface: None, threads: 1 }, None, None),
            "Received 10000 packets, 64.00 bytes on average, in 0.50 seconds.\n\
             Speed: 20.00 Kpps Bandwidth: 10.24 Mbps (raw 13.44 Mbps)\n\
             Test traffic: 2000 flows in 2000 streams, 4000 lost, 3 out of order, 0 duplicates; 2 foreign frames\n\
             Not timed: 7 test frames stamped in the future or before the run (clocks apart, or frames not from pktlab)\n"
        );
    }

    #[test]
    fn header_by_hand() {
        assert_eq!(
            header(&info(), "afxdp (copy, native XDP)"),
            "Receiving with afxdp (copy, native XDP) on r0, 1 thread"
        );
        let two = RecvInfo {
            iface: None,
            threads: 2,
        };
        assert_eq!(header(&two, "pcap"), "Receiving with pcap, 2 threads");
    }

    #[test]
    fn lost_and_duplicates_each_in_their_place() {
        assert_eq!(
            summary_text(&summary(), &RecvInfo { iface: None, threads: 1 }, None, None),
            "Received 10000 packets, 64.00 bytes on average, in 0.50 seconds.\n\
             Speed: 20.00 Kpps Bandwidth: 10.24 Mbps (raw 13.44 Mbps)\n\
             Test traffic: 2000 flows in 2000 streams, 4000 lost, 3 out of order, 0 duplicates; 2 foreign frames\n"
        );
        let mut s = summary();
        (s.lost, s.duplicates) = (0, 17);
        assert!(summary_text(&s, &info(), None, None)
            .contains(", 0 lost, 3 out of order, 17 duplicates; 2 foreign frames\n"));
    }

    #[test]
    fn untracked_frames_get_a_line_only_when_there_are_some() {
        let mut s = summary();
        s.untracked = 300;
        assert_eq!(
            summary_text(&s, &RecvInfo { iface: None, threads: 1 }, None, None),
            "Received 10000 packets, 64.00 bytes on average, in 0.50 seconds.\n\
             Speed: 20.00 Kpps Bandwidth: 10.24 Mbps (raw 13.44 Mbps)\n\
             Test traffic: 2000 flows in 2000 streams, 4000 lost, 3 out of order, 0 duplicates; 2 foreign frames\n\
             Untracked: 300 test frames of streams beyond the receiver's stream limit, counted but not checked\n"
        );
        assert!(!summary_text(&summary(), &info(), None, None).contains("Untracked"));
    }

    #[test]
    fn latency_counters_and_interrupt_by_hand() {
        let mut s = summary();
        s.latency_ns = Some(Latency {
            count: 10_000,
            min: 850,
            avg: 12_345.0,
            p50: 9_999,
            p90: 500_000,
            p99: 1_250_000,
            p999: 2_000_000_000,
            max: 2_500_000_000,
            one_in: None,
        });
        s.iface = Some(IfCounters {
            rx_packets: 10_002,
            rx_dropped: 1,
            rx_missed_errors: 2,
            rx_fifo_errors: 3,
            rx_errors: 4,
            ..IfCounters::default()
        });
        s.ring_drops = 5;
        s.interrupted = true;
        assert_eq!(
            summary_text(&s, &info(), None, None),
            "Received 10000 packets, 64.00 bytes on average, in 0.50 seconds.\n\
             Speed: 20.00 Kpps Bandwidth: 10.24 Mbps (raw 13.44 Mbps)\n\
             Test traffic: 2000 flows in 2000 streams, 4000 lost, 3 out of order, 0 duplicates; 2 foreign frames\n\
             Latency: min 850 ns avg 12.3 us p50 10.0 us p99 1.25 ms p99.9 2.000 s max 2.500 s\n\
             Interface r0: rx_packets 10002 rx_dropped 1 rx_missed_errors 2 rx_fifo_errors 3 rx_errors 4; socket ring drops 5\n\
             Interrupted: the figures cover the run until Ctrl-C.\n"
        );
        // A sample (recv --io xdp --latency 1/16) says so and how big.
        let mut timed = s.clone();
        if let Some(l) = &mut timed.latency_ns {
            l.count = 625;
            l.one_in = Some(16);
        }
        assert!(summary_text(&timed, &info(), None, None).contains(
            "\nLatency (1 test frame in 16 timed per CPU: 625): min 850 ns avg 12.3 us p50 10.0 us p99 1.25 ms p99.9 2.000 s max 2.500 s\n"
        ));
        let json = serde_json::to_value(&timed).unwrap();
        assert_eq!(json["latency_ns"]["one_in"], 16);
        assert!(serde_json::to_value(&s).unwrap()["latency_ns"]
            .get("one_in")
            .is_none());
        // Without the interface, ring drops still show.
        let mut s = summary();
        s.ring_drops = 5;
        assert!(summary_text(&s, &info(), None, None).ends_with("Socket ring drops: 5\n"));
    }

    #[test]
    fn nothing_received() {
        let mut s = summary();
        (s.packets, s.bytes, s.seconds, s.pps, s.l2_bps, s.l1_bps) = (0, 0, 0.0, 0.0, 0.0, 0.0);
        assert!(summary_text(&s, &info(), None, None)
            .starts_with("Received 0 packets, no bytes, in 0.00 seconds.\nSpeed: 0.00 pps Bandwidth: 0.00 bps (raw 0.00 bps)\n"));
    }

    #[test]
    fn interval_with_foreign_frames() {
        let iv = RxInterval {
            elapsed: 1.0,
            seconds: 1.0,
            packets: 20_010,
            bytes: 1_280_640,
            foreign: 10,
            pps: 20_010.0,
            l2_bps: 10_245_120.0,
            l1_bps: 13_446_720.0,
            threads: vec![20_010],
        };
        assert_eq!(
            interval_line(&iv),
            "   1.000 rx 20.01 Kpps (20010 pkts 10.25 Mbps L2 13.45 Mbps L1 in 1000000 usec) 10 foreign"
        );
    }

    #[test]
    fn missing_streams_are_the_expected_ones_not_seen() {
        let mut s = summary();
        s.streams = 1960;
        assert_eq!(streams_missing(&s, 2000), 40);
        assert_eq!(
            missing_line(&s, 2000),
            "40 of 2000 streams never arrived.\n"
        );
        s.streams = 2000;
        assert_eq!(
            missing_line(&s, 2000),
            "All 2000 expected streams arrived.\n"
        );
        // More streams than expected (another generator): none missing.
        s.streams = 2100;
        assert_eq!(streams_missing(&s, 2000), 0);
    }
}
