//! `pktlab recv` output.

use pktlab_engine::rx::{RxInterval, RxSummary};
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

pub fn summary_text(s: &RxSummary, info: &RecvInfo) -> String {
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
        "Test traffic: {} flows in {} streams, {} lost, {} out of order, {} duplicates; {} foreign frames\n",
        s.flows, s.streams, s.lost, s.out_of_order, s.duplicates, s.foreign
    );
    if let Some(l) = &s.latency_ns {
        out += &format!(
            "Latency: min {} avg {} p50 {} p99 {} p99.9 {} max {}\n",
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

pub fn summary_json(s: &RxSummary, info: &RecvInfo) -> Value {
    let mut v = serde_json::to_value(s).expect("serialisable");
    v["type"] = json!("summary");
    v["iface_name"] = json!(info.iface);
    v
}
