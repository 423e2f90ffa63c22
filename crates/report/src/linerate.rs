//! `pktlab linerate`: Ethernet line-rate arithmetic as a table.
//!
//! A frame size includes the 4-byte FCS; on the wire every frame also takes
//! 20 bytes of preamble, SFD and inter-frame gap (L1). The IP layer is the
//! frame less its 14-byte Ethernet header and 4-byte FCS.

use pktlab_wire::rate;
use pktlab_wire::size::SizeMix;

/// Ethernet header (14) + FCS (4): what a frame carries beyond its IP packet.
pub const ETHERNET_OVERHEAD: f64 = 18.0;

/// The line rate of one size or mix on one link.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LineRate {
    /// `64`, `imix`, ...
    pub size: String,
    pub mean_frame_bytes: f64,
    pub link_bps: f64,
    pub pps: f64,
    pub l1_bps: f64,
    pub l2_bps: f64,
    pub ip_bps: f64,
}

/// The most a link of `link_bps` carries of `mix`.
pub fn line_rate(link_bps: f64, mix: &SizeMix) -> LineRate {
    let mean = mix.mean();
    let pps = rate::line_rate_pps_mean(link_bps, mean);
    at_rate(link_bps, mix, pps)
}

/// `pps` frames per second of `mix` in bits per second at each layer.
pub fn at_rate(link_bps: f64, mix: &SizeMix, pps: f64) -> LineRate {
    let mean = mix.mean();
    LineRate {
        size: mix.to_string(),
        mean_frame_bytes: mean,
        link_bps,
        pps,
        l1_bps: rate::l1_bps_mean(pps, mean),
        l2_bps: rate::l2_bps_mean(pps, mean),
        ip_bps: pps * (mean - ETHERNET_OVERHEAD) * 8.0,
    }
}

/// A whole number with thousands separators: `14,880,952`.
pub fn grouped(value: f64) -> String {
    let digits = format!("{:.0}", value.round());
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits.as_str()),
    };
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// Bits per second with three decimals: `7.619 Gbps`.
pub fn bits(value: f64) -> String {
    const PREFIXES: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = value;
    let mut i = 0;
    while v.abs() >= 1000.0 && i + 1 < PREFIXES.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.3} {}bps", PREFIXES[i])
}

/// The header line of the table: the link and whether both directions count.
pub fn title(link_bps: f64, fdx: bool) -> String {
    if fdx {
        format!(
            "Line rate of {} full duplex (both directions, {} in all)",
            bits(link_bps / 2.0),
            bits(link_bps)
        )
    } else {
        format!("Line rate of {} (one direction)", bits(link_bps))
    }
}

/// The table of line rates, one row per size.
pub fn table(rows: &[LineRate]) -> String {
    let mut out = format!(
        "{:>6} {:>16} {:>12} {:>12} {:>12}\n",
        "size", "pps", "L1", "L2", "IP"
    );
    for r in rows {
        out.push_str(&format!(
            "{:>6} {:>16} {:>12} {:>12} {:>12}\n",
            r.size,
            grouped(r.pps),
            bits(r.l1_bps),
            bits(r.l2_bps),
            bits(r.ip_bps)
        ));
    }
    out
}

/// A measured rate against the line rate: bits at each layer and its share.
pub fn measured(rate: &LineRate, line: &LineRate) -> String {
    format!(
        "{} pps of {} ({:.2} bytes on average): L1 {}, L2 {}, IP {}; {:.2} % of the line rate ({} pps)\n",
        grouped(rate.pps),
        rate.size,
        rate.mean_frame_bytes,
        bits(rate.l1_bps),
        bits(rate.l2_bps),
        bits(rate.ip_bps),
        rate.pps / line.pps * 100.0,
        grouped(line.pps)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(text: &str) -> SizeMix {
        text.parse().unwrap()
    }

    #[test]
    fn ten_gigabit_at_64_bytes() {
        // 10e9 / (84 * 8) = 14,880,952.38 pps; L2 = that × 512 bits =
        // 7.619 Gbps; IP = × 46 × 8 = 5.476 Gbps.
        let r = line_rate(10e9, &mix("64"));
        assert_eq!(grouped(r.pps), "14,880,952");
        assert_eq!(bits(r.l1_bps), "10.000 Gbps");
        assert_eq!(bits(r.l2_bps), "7.619 Gbps");
        assert_eq!(bits(r.ip_bps), "5.476 Gbps");
    }

    #[test]
    fn simple_imix() {
        // 12 frames of 4342 bytes take 36656 bits on the wire:
        // 10e9 × 12 / 36656 = 3,273,679.6 pps; L2 = 10e9 × 4342 / 4582
        // = 9.476 Gbps; IP = 10e9 × (4342 − 216) / 4582 = 9.005 Gbps.
        let r = line_rate(10e9, &mix("imix"));
        assert_eq!(grouped(r.pps), "3,273,680");
        assert_eq!(bits(r.l2_bps), "9.476 Gbps");
        assert_eq!(bits(r.ip_bps), "9.005 Gbps");
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0.0), "0");
        assert_eq!(grouped(999.4), "999");
        assert_eq!(grouped(1000.0), "1,000");
        assert_eq!(grouped(81_274.38), "81,274");
        assert_eq!(grouped(1_234_567_890.0), "1,234,567,890");
        assert_eq!(bits(1e9), "1.000 Gbps");
        assert_eq!(bits(761_904_640.0), "761.905 Mbps");
    }
}
