//! `pktlab gen` output.

use pktlab_engine::tx::{TxInterval, TxSummary};
use serde_json::{json, Value};

use crate::units::{self, frame_size, rate};

/// What the summary says about the run besides its counts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenInfo {
    pub iface: Option<String>,
    pub flows: u32,
    /// The size or mix as given (`64`, `imix`, `64:7,570:4,1518:1`).
    pub sizes: String,
    /// Set when every frame has this size.
    pub fixed_size: Option<u16>,
    pub requested_pps: Option<f64>,
    pub threads: usize,
}

/// The line that opens a human run.
/// `backend` is the one the threads actually use (`afxdp (copy)`, ...).
pub fn header(info: &GenInfo, backend: &str, src: &str, dst: &str) -> String {
    let on = info
        .iface
        .as_deref()
        .map(|i| format!(" on {i}"))
        .unwrap_or_default();
    let speed = match info.requested_pps {
        Some(p) => rate(p, "pps"),
        None => "full speed".to_string(),
    };
    format!(
        "Sending with {backend}{on}: {} flows {src} -> {dst}, frames {}, {} thread{}, {speed}",
        info.flows,
        info.sizes,
        info.threads,
        if info.threads == 1 { "" } else { "s" },
    )
}

/// One human line per interval, like pkt-gen's:
/// `   2.000 tx 1.49 Mpps (1488123 pkts 761.92 Mbps L2 1.00 Gbps L1 in 1000102 usec)`.
pub fn interval_line(iv: &TxInterval) -> String {
    units::interval_line(
        "tx", iv.elapsed, iv.seconds, iv.packets, iv.pps, iv.l2_bps, iv.l1_bps,
    )
}

pub fn interval_json(iv: &TxInterval) -> Value {
    let mut v = serde_json::to_value(iv).expect("serialisable");
    v["type"] = json!("interval");
    v
}

/// The closing summary, pkt-gen's two lines plus what pktlab knows more.
pub fn summary_text(s: &TxSummary, info: &GenInfo) -> String {
    let mut out = format!(
        "Sent {} packets, {}, in {:.2} seconds.\n{}\n",
        s.packets,
        frame_size(s.packets, s.bytes, info.fixed_size),
        s.seconds,
        units::speed_line(s.pps, s.l2_bps, s.l1_bps),
    );
    if let Some(req) = info.requested_pps {
        let pct = if req > 0.0 { s.pps / req * 100.0 } else { 0.0 };
        out += &format!("Requested {}: achieved {pct:.1}%\n", rate(req, "pps"));
    }
    if s.tx_errors > 0 {
        out += &format!(
            "Refused by the port or the kernel: {} frames\n",
            s.tx_errors
        );
    }
    if let (Some(c), Some(name)) = (&s.iface, &info.iface) {
        out += &format!(
            "Interface {name}: tx_packets {} tx_bytes {} tx_dropped {} tx_errors {}\n",
            c.tx_packets, c.tx_bytes, c.tx_dropped, c.tx_errors
        );
    }
    if s.interrupted {
        out += "Interrupted: the figures cover the run until Ctrl-C.\n";
    }
    out
}

pub fn summary_json(s: &TxSummary, info: &GenInfo) -> Value {
    let mut v = serde_json::to_value(s).expect("serialisable");
    v["type"] = json!("summary");
    v["flows"] = json!(info.flows);
    v["sizes"] = json!(info.sizes);
    v["requested_pps"] = json!(info.requested_pps);
    v["iface_name"] = json!(info.iface);
    v
}
