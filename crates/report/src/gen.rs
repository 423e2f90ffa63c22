//! `pktlab gen` output.

use pktlab_engine::gen::GenConfig;
use pktlab_engine::options::default_range;
use pktlab_engine::tx::{TxInterval, TxSummary};
use pktlab_loss::drops::Place;
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
    /// Set with RFC 4814 ports: each flow is then an address pair and its
    /// ports change with every frame.
    pub rfc4814_ports: bool,
}

impl GenInfo {
    /// What `cfg` says of its run.
    pub fn of(cfg: &GenConfig) -> GenInfo {
        let sizes = &cfg.frames.sizes;
        GenInfo {
            iface: cfg.iface.clone(),
            flows: cfg.frames.flows.count(),
            sizes: sizes.to_string(),
            fixed_size: (sizes.min() == sizes.max()).then(|| sizes.min()),
            requested_pps: cfg.plan.rate_pps,
            threads: cfg.plan.threads,
            rfc4814_ports: cfg.frames.ports != pktlab_wire::PortMode::Ranges,
        }
    }
}

/// The ranges a run's header names: `src` and `dst` as given, else the
/// built-in lab's of the run's family.
pub fn ranges(cfg: &GenConfig, src: Option<&str>, dst: Option<&str>) -> (String, String) {
    let or_lab = |given: Option<&str>, is_src: bool| {
        given.map_or_else(|| default_range(cfg, is_src).to_string(), str::to_string)
    };
    (or_lab(src, true), or_lab(dst, false))
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
    let ports = match info.rfc4814_ports {
        true => " (address pairs, RFC 4814 ports)",
        false => "",
    };
    format!(
        "Sending with {backend}{on}: {} flows{ports} {src} -> {dst}, frames {}, {} thread{}, {speed}",
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

/// What the kernel dropped on this host while sending (`--drop-trace`): by
/// place, and the events the tracer missed.
pub type HostDrops = (Vec<Place>, u64);

/// The closing summary, pkt-gen's two lines plus what pktlab knows more.
pub fn summary_text(s: &TxSummary, info: &GenInfo, dropped: Option<&HostDrops>) -> String {
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
    if let Some((d, _)) = dropped {
        out += &crate::drops::host_drops_line(d);
        out += "\n";
    }
    out
}

pub fn summary_json(s: &TxSummary, info: &GenInfo, dropped: Option<&HostDrops>) -> Value {
    let mut v = serde_json::to_value(s).expect("serialisable");
    v["type"] = json!("summary");
    v["flows"] = json!(info.flows);
    v["ports"] = json!(if info.rfc4814_ports {
        "rfc4814"
    } else {
        "ranges"
    });
    v["sizes"] = json!(info.sizes);
    v["requested_pps"] = json!(info.requested_pps);
    v["iface_name"] = json!(info.iface);
    if let Some((d, missed)) = dropped {
        v["drops"] = crate::drops::host_drops_json(d);
        if *missed > 0 {
            v["drops"]["tracer_missed"] = (*missed).into();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_io::iface::IfCounters;

    fn info(fixed_size: Option<u16>, requested_pps: Option<f64>) -> GenInfo {
        GenInfo {
            iface: Some("g0".into()),
            flows: 2000,
            sizes: "64".into(),
            fixed_size,
            requested_pps,
            threads: 2,
            rfc4814_ports: false,
        }
    }

    /// 3 000 000 frames of 64 bytes in 2 s: 1.5 Mpps, 768 Mbps L2 and
    /// (64 + 20) x 8 x 1.5 M = 1008 Mbps L1.
    fn summary() -> TxSummary {
        TxSummary {
            backend: "afpacket".into(),
            packets: 3_000_000,
            bytes: 192_000_000,
            seconds: 2.0,
            pps: 1_500_000.0,
            l2_bps: 768_000_000.0,
            l1_bps: 1_008_000_000.0,
            tx_errors: 0,
            interrupted: false,
            threads: vec![],
            iface: None,
        }
    }

    #[test]
    fn header_by_hand() {
        assert_eq!(
            header(&info(Some(64), Some(1.2e6)), "afxdp (copy)", "198.18.10.1:2000-198.18.10.20", "198.19.10.1:2000-198.19.10.100"),
            "Sending with afxdp (copy) on g0: 2000 flows 198.18.10.1:2000-198.18.10.20 -> 198.19.10.1:2000-198.19.10.100, frames 64, 2 threads, 1.20 Mpps"
        );
        let mut one = info(None, None);
        one.threads = 1;
        one.iface = None;
        assert_eq!(
            header(&one, "null", "a", "b"),
            "Sending with null: 2000 flows a -> b, frames 64, 1 thread, full speed"
        );
        one.rfc4814_ports = true;
        one.flows = 20;
        assert_eq!(
            header(&one, "null", "a", "b"),
            "Sending with null: 20 flows (address pairs, RFC 4814 ports) a -> b, frames 64, 1 thread, full speed"
        );
    }

    #[test]
    fn summary_by_hand() {
        assert_eq!(
            summary_text(&summary(), &info(Some(64), None), None),
            "Sent 3000000 packets, 64 bytes each, in 2.00 seconds.\n\
             Speed: 1.50 Mpps Bandwidth: 768.00 Mbps (raw 1.01 Gbps)\n"
        );
    }

    #[test]
    fn summary_with_request_errors_counters_and_interrupt() {
        let mut s = summary();
        s.tx_errors = 7;
        s.interrupted = true;
        s.iface = Some(IfCounters {
            tx_packets: 2_999_993,
            tx_bytes: 179_999_580,
            tx_dropped: 3,
            tx_errors: 1,
            ..IfCounters::default()
        });
        // 1.5 Mpps of 2 Mpps requested: 75.0 %.
        assert_eq!(
            summary_text(&s, &info(None, Some(2e6)), None),
            "Sent 3000000 packets, 64.00 bytes on average, in 2.00 seconds.\n\
             Speed: 1.50 Mpps Bandwidth: 768.00 Mbps (raw 1.01 Gbps)\n\
             Requested 2.00 Mpps: achieved 75.0%\n\
             Refused by the port or the kernel: 7 frames\n\
             Interface g0: tx_packets 2999993 tx_bytes 179999580 tx_dropped 3 tx_errors 1\n\
             Interrupted: the figures cover the run until Ctrl-C.\n"
        );
    }

    #[test]
    fn interval_by_hand() {
        let iv = TxInterval {
            elapsed: 2.0,
            seconds: 1.000102,
            packets: 1_488_123,
            bytes: 95_239_872,
            pps: 1_487_971.2,
            l2_bps: 761_841_254.4,
            l1_bps: 999_916_646.4,
            threads: vec![1_488_123],
        };
        assert_eq!(
            interval_line(&iv),
            "   2.000 tx 1.49 Mpps (1488123 pkts 761.84 Mbps L2 999.92 Mbps L1 in 1000102 usec)"
        );
    }
}
