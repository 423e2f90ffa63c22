//! netmap pkt-gen's own text, for `pktlab pkt-gen`: the timestamped
//! diagnostic lines of its `D()` macro, the per-interval `main_thread` line
//! and the closing `Sent ...` / `Speed: ...` summary, character for
//! character, so that scripts written for pkt-gen (BSDRP's bench-lab among
//! them) read pktlab's output unchanged.

use std::time::{SystemTime, UNIX_EPOCH};

/// Source lines pkt-gen prints in its `[LINE]` field (netmap's
/// apps/pkt-gen/pkt-gen.c as of its current master), so each message keeps
/// the number people grep for.
pub mod line {
    pub const EXTRACT_IP_RANGE: u32 = 477;
    pub const START_THREADS_WAIT: u32 = 2695;
    pub const START_THREADS_READY: u32 = 2697;
    pub const MAIN_THREAD: u32 = 2781;
    pub const MAIN_INTERFACE: u32 = 3036;
    pub const MAIN_BURST: u32 = 3159;
    pub const MAIN_CPUS: u32 = 3167;
    pub const MAIN_SENDING: u32 = 3369;
    pub const SIGINT: u32 = 574;
}

/// pkt-gen's `STATS_WIN`: the samples `-A` averages over.
pub const STATS_WINDOW: usize = 15;

/// One line of netmap's `D()` macro: `SSS.uuuuuu function [LINE] message`,
/// the seconds modulo 1000 of the wall clock.
pub fn diag(function: &str, line: u32, message: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    diag_at(now.as_secs(), now.subsec_micros(), function, line, message)
}

/// [`diag`] at a given time, for tests.
pub fn diag_at(secs: u64, micros: u32, function: &str, line: u32, message: &str) -> String {
    format!(
        "{:03}.{micros:06} {function} [{line}] {message}",
        secs % 1000
    )
}

/// netmap's `norm()`: with `normalize`, three decimals and a K/M/G/T prefix
/// (`5.850 M`); without, the integer (`5849644 `). Both end with the space
/// that separates the number from the unit pkt-gen appends (`pps`, `bps`).
pub fn norm(value: f64, normalize: bool) -> String {
    const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
    if !normalize {
        return format!("{} ", c_float(value, 0));
    }
    let mut value = value;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    format!("{} {}", c_float(value, 3), UNITS[unit])
}

/// printf's `%.Nf`, including its spelling of infinities and NaN (FreeBSD's
/// libc, where pkt-gen's logs come from).
fn c_float(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{value:.decimals$}")
    }
}

/// What one reporting interval counted, in pkt-gen's terms: bytes without
/// the FCS, as netmap's slot lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub packets: u64,
    pub bytes: u64,
    pub usec: u64,
}

/// The state of the `main_thread` report line: the unit style, the framing
/// bits of `-B` and the sliding window of `-A`.
#[derive(Clone, Debug)]
pub struct Reporter {
    pub normalize: bool,
    /// Bits added per packet to the bit rate (`-B`: 24 × 8, else 0).
    pub framing_bits: u64,
    /// `-A`: append the average and standard deviation over the window.
    pub pps_stats: bool,
    window: [u64; STATS_WINDOW],
    next: usize,
}

impl Reporter {
    pub fn new(normalize: bool, framing_bits: u64, pps_stats: bool) -> Reporter {
        Reporter {
            normalize,
            framing_bits,
            pps_stats,
            window: [0; STATS_WINDOW],
            next: 0,
        }
    }

    /// The message of one `main_thread` line (without the `D()` prefix):
    /// `5849644 pps (5878652 pkts 2807828936 bps in 1004959 usec) 0.00 avg_batch 0 min_space`.
    ///
    /// pktlab's ports have no netmap events nor ring space to report: the
    /// average batch and the minimum space print as 0.
    pub fn message(&mut self, iv: Interval) -> String {
        let usec = iv.usec.max(1);
        // pkt-gen's rounding: (pkts * 1000000 + usec / 2) / usec, in integers.
        let pps = (u128::from(iv.packets) * 1_000_000 + u128::from(usec / 2)) / u128::from(usec);
        let pps = pps as u64;
        let stats = if self.pps_stats {
            self.window_text(pps)
        } else {
            String::new()
        };
        let bits = iv.bytes as f64 * 8.0 + iv.packets as f64 * self.framing_bits as f64;
        format!(
            "{}pps {stats}({}pkts {}bps in {usec} usec) {:.2} avg_batch {} min_space",
            norm(pps as f64, self.normalize),
            norm(iv.packets as f64, self.normalize),
            norm(1_000_000.0 * bits / usec as f64, self.normalize),
            0.0,
            0
        )
    }

    /// `[avg/std A/S pps]`: pkt-gen's mean over the non-zero entries of a
    /// window of the last 15 rates (a sum over all 15, zeros included,
    /// divided by the count of non-zero ones) and the deviation around it.
    fn window_text(&mut self, pps: u64) -> String {
        self.window[self.next] = pps;
        self.next = (self.next + 1) % STATS_WINDOW;
        let sum: f64 = self.window.iter().map(|&v| v as f64).sum();
        let nonzero = self.window.iter().filter(|&&v| v != 0).count() as f64;
        let avg = sum / nonzero;
        let var = self
            .window
            .iter()
            .filter(|&&v| v != 0)
            .map(|&v| (v as f64 - avg) * (v as f64 - avg))
            .sum::<f64>()
            / nonzero;
        format!(
            "[avg/std {}/{} pps]",
            norm(avg, self.normalize),
            norm(var.sqrt(), self.normalize)
        )
    }
}

/// What a whole run did, in pkt-gen's terms (bytes without FCS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Totals {
    pub packets: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// pkt-gen's closing lines on stdout, `what` being `Sent` or `Received`:
///
/// ```text
/// Sent 43314032 packets 2598841920 bytes 0 events 60 bytes each in 32.03 seconds.
/// Speed: 1.352 Mpps Bandwidth: 649.102 Mbps (raw 908.743 Mbps). Average batch: 0.00 pkts
/// ```
///
/// or `Sent nothing.`. Events and the average batch are netmap figures
/// pktlab's ports do not have: they print as 0.
pub fn summary(what: &str, t: Totals, normalize: bool, framing_bits: u64) -> String {
    if t.packets == 0 {
        return format!("{what} nothing.\n");
    }
    let size = t.bytes / t.packets;
    let mut out = format!(
        "{what} {} packets {} bytes {} events {size} bytes each in {:.2} seconds.\n",
        t.packets, t.bytes, 0, t.seconds
    );
    let delta = if t.seconds == 0.0 { 1e-6 } else { t.seconds };
    let pps = t.packets as f64 / delta;
    let bw = 8.0 * t.bytes as f64 / delta;
    let raw = (8.0 * t.bytes as f64 + t.packets as f64 * framing_bits as f64) / delta;
    out += &format!(
        "Speed: {}pps Bandwidth: {}bps (raw {}bps). Average batch: {:.2} pkts\n",
        norm(pps, normalize),
        norm(bw, normalize),
        norm(raw, normalize),
        0.0
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diag_prefix_is_seconds_mod_1000_and_microseconds() {
        assert_eq!(
            diag_at(1_700_000_881, 961_254, "main_thread", 2781, "x"),
            "881.961254 main_thread [2781] x"
        );
        assert_eq!(
            diag_at(1005, 7, "main", 3036, "y"),
            "005.000007 main [3036] y"
        );
    }

    #[test]
    fn norm_like_netmap() {
        assert_eq!(norm(5849644.0, false), "5849644 ");
        assert_eq!(norm(5849644.0, true), "5.850 M");
        assert_eq!(norm(999.0, true), "999.000 ");
        assert_eq!(norm(1000.0, true), "1.000 K");
        assert_eq!(norm(2.5e15, true), "2500.000 T");
        assert_eq!(norm(0.0, true), "0.000 ");
        assert_eq!(norm(0.0, false), "0 ");
        assert_eq!(norm(f64::NAN, true), "nan ");
    }

    #[test]
    fn main_thread_line_raw_and_normalized() {
        // 5878652 packets of 60 bytes in 1004959 usec:
        // pps = (5878652e6 + 502479) / 1004959 = 5849643.9.. -> 5849644;
        // bps = 1e6 * 5878652 * 480 / 1004959 = 2807828936.30 -> 2807828936.
        let iv = Interval {
            packets: 5878652,
            bytes: 5878652 * 60,
            usec: 1004959,
        };
        assert_eq!(
            Reporter::new(false, 0, false).message(iv),
            "5849644 pps (5878652 pkts 2807828936 bps in 1004959 usec) 0.00 avg_batch 0 min_space"
        );
        assert_eq!(
            Reporter::new(true, 0, false).message(iv),
            "5.850 Mpps (5.879 Mpkts 2.808 Gbps in 1004959 usec) 0.00 avg_batch 0 min_space"
        );
        // -B adds 24 bytes of framing per packet: 1e6 * 5878652 * 672 / 1004959
        // = 3930960510.83 bps, printed 3930960511.
        assert_eq!(
            Reporter::new(false, 24 * 8, false).message(iv),
            "5849644 pps (5878652 pkts 3930960511 bps in 1004959 usec) 0.00 avg_batch 0 min_space"
        );
    }

    #[test]
    fn pps_stats_window() {
        let mut r = Reporter::new(false, 0, true);
        let one = |packets| Interval {
            packets,
            bytes: packets * 60,
            usec: 1_000_000,
        };
        // First: window [100, 0 x 14]: avg 100/1, std 0.
        assert_eq!(
            r.message(one(100)),
            "100 pps [avg/std 100 /0  pps](100 pkts 48000 bps in 1000000 usec) 0.00 avg_batch 0 min_space"
        );
        // Then [100, 300]: avg 200, std sqrt((100² + 100²) / 2) = 100.
        assert!(r
            .message(one(300))
            .starts_with("300 pps [avg/std 200 /100  pps](300 pkts"));
        // A zero rate counts in the sum but not in the divisor: (400 + 0) / 2.
        assert!(r
            .message(one(0))
            .starts_with("0 pps [avg/std 200 /100  pps](0 pkts"));
    }

    #[test]
    fn summaries() {
        let t = Totals {
            packets: 100000,
            bytes: 6_000_000,
            seconds: 2.0,
        };
        assert_eq!(
            summary("Sent", t, true, 0),
            "Sent 100000 packets 6000000 bytes 0 events 60 bytes each in 2.00 seconds.\n\
             Speed: 50.000 Kpps Bandwidth: 24.000 Mbps (raw 24.000 Mbps). Average batch: 0.00 pkts\n"
        );
        assert_eq!(
            summary("Received", t, false, 192),
            "Received 100000 packets 6000000 bytes 0 events 60 bytes each in 2.00 seconds.\n\
             Speed: 50000 pps Bandwidth: 24000000 bps (raw 33600000 bps). Average batch: 0.00 pkts\n"
        );
        let none = Totals {
            packets: 0,
            bytes: 0,
            seconds: 0.0,
        };
        assert_eq!(summary("Received", none, true, 0), "Received nothing.\n");
    }
}
