//! `pktlab ifstat`: `netstat -iw 1` for Linux interfaces, with the drops
//! John Jasen's freebsd-net forwarding report summed up (idrops, odrops).

use pktlab_io::iface::IfCounters;
use serde_json::{json, Value};

/// One interval of one or more interfaces, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IfstatRow {
    pub ipackets: u64,
    pub ierrs: u64,
    /// Packets the kernel dropped on input (`rx_dropped`) plus those the
    /// NIC missed for lack of buffers (`rx_missed_errors`): FreeBSD's
    /// `idrops`.
    pub idrops: u64,
    pub ibytes: u64,
    pub opackets: u64,
    pub oerrs: u64,
    pub obytes: u64,
    pub odrops: u64,
}

impl IfstatRow {
    /// The sum of counter deltas.
    pub fn sum(deltas: &[IfCounters]) -> IfstatRow {
        let mut r = IfstatRow::default();
        for d in deltas {
            r.ipackets += d.rx_packets;
            r.ierrs += d.rx_errors;
            r.idrops += d.rx_dropped + d.rx_missed_errors;
            r.ibytes += d.rx_bytes;
            r.opackets += d.tx_packets;
            r.oerrs += d.tx_errors;
            r.obytes += d.tx_bytes;
            r.odrops += d.tx_dropped;
        }
        r
    }

    pub fn json(&self, t: usize, seconds: f64) -> Value {
        json!({
            "type": "interval",
            "t": t,
            "seconds": seconds,
            "ipackets": self.ipackets,
            "ierrs": self.ierrs,
            "idrops": self.idrops,
            "ibytes": self.ibytes,
            "opackets": self.opackets,
            "oerrs": self.oerrs,
            "obytes": self.obytes,
            "odrops": self.odrops,
        })
    }
}

/// The two header lines; `what` is `(Total)` or the interface name.
pub fn header(what: &str) -> String {
    format!(
        "{:>21} {what:<14} {:>36}\n{:>10} {:>5} {:>6} {:>12} {:>10} {:>5} {:>12} {:>6}",
        "input",
        "output",
        "packets",
        "errs",
        "idrops",
        "bytes",
        "packets",
        "errs",
        "bytes",
        "odrops"
    )
}

/// One row, in netstat's column order.
pub fn row(r: &IfstatRow) -> String {
    format!(
        "{:>10} {:>5} {:>6} {:>12} {:>10} {:>5} {:>12} {:>6}",
        r.ipackets, r.ierrs, r.idrops, r.ibytes, r.opackets, r.oerrs, r.obytes, r.odrops
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_formats() {
        let a = IfCounters {
            rx_packets: 1_511_778,
            rx_bytes: 91_524_540,
            rx_dropped: 3,
            rx_missed_errors: 4,
            tx_packets: 1_508_774,
            tx_bytes: 54_260_514,
            tx_dropped: 1,
            ..IfCounters::default()
        };
        let b = IfCounters {
            rx_packets: 10,
            rx_errors: 2,
            ..IfCounters::default()
        };
        let r = IfstatRow::sum(&[a, b]);
        assert_eq!(r.ipackets, 1_511_788);
        assert_eq!(r.ierrs, 2);
        assert_eq!(r.idrops, 7);
        assert_eq!(r.odrops, 1);
        // The first netstat -iw 1 line of BSDRP's forwarding lab, in our columns.
        assert_eq!(
            row(&r),
            "   1511788     2      7     91524540    1508774     0     54260514      1"
        );
        let h = header("(Total)");
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].len(), row(&r).len());
        assert!(lines[0].contains("input") && lines[0].contains("(Total)"));
        assert_eq!(r.json(1, 1.0)["idrops"], 7);
    }
}
