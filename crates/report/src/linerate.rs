//! `pktlab linerate`: Ethernet line-rate arithmetic as a table.
//!
//! A frame size includes the 4-byte FCS; on the wire every frame also takes
//! 20 bytes of preamble, SFD and inter-frame gap (L1). The IP layer is the
//! frame less its 14-byte Ethernet header and 4-byte FCS.

use pktlab_campaign::plan::RFC2544_SIZES;
use pktlab_wire::rate;
use pktlab_wire::size::SizeMix;
use pktlab_wire::units::{self, Rate};
use pktlab_wire::WireError;
use serde_json::json;

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

/// What `pktlab linerate` prints: the line rates of a link of `speed`
/// (both directions with `fdx`) for `size` (a size or mix; default: the
/// RFC 2544 sizes and imix), or with `pps` that measured rate of `size`
/// against its line rate; JSON lines with `json`.
pub fn command_text(
    speed: &str,
    fdx: bool,
    size: Option<&str>,
    pps: Option<&str>,
    json: bool,
) -> Result<String, WireError> {
    let speed = units::parse_link_speed(speed)?;
    let link_bps = if fdx { speed * 2.0 } else { speed };
    let mixes: Vec<SizeMix> = match size {
        Some(text) => vec![text.parse()?],
        None => RFC2544_SIZES
            .iter()
            .map(|&s| SizeMix::single(s).expect("RFC 2544 sizes are valid"))
            .chain([SizeMix::imix()])
            .collect(),
    };
    let lines: Vec<LineRate> = mixes.iter().map(|m| line_rate(link_bps, m)).collect();
    let Some(text) = pps else {
        return Ok(match json {
            true => lines
                .iter()
                .map(|l| json!({"type": "line_rate", "fdx": fdx, "line": l}).to_string() + "\n")
                .collect(),
            false => format!("{}\n{}", title(link_bps, fdx), table(&lines)),
        });
    };
    let Rate::Pps(pps) = units::parse_rate(text)? else {
        return Err(WireError::Invalid(format!(
            "invalid --pps '{text}': give frames per second, such as 1.2M or 850kpps"
        )));
    };
    if size.is_none() {
        return Err(WireError::Invalid(
            "--pps needs the frame size or mix of the measured rate (-l 64, -l imix, ...)".into(),
        ));
    }
    let rate = at_rate(link_bps, &mixes[0], pps);
    Ok(match json {
        true => {
            json!({
                "type": "measured_rate",
                "fdx": fdx,
                "rate": rate,
                "line": lines[0],
                "line_percent": pps / lines[0].pps * 100.0,
            })
            .to_string()
                + "\n"
        }
        false => format!("{}\n{}", title(link_bps, fdx), measured(&rate, &lines[0])),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_s_lines_and_its_complaints() {
        // Full duplex 10G at 64 bytes: 2 × 10e9 / 672 = 29,761,904.76 pps.
        let text = command_text("10G", true, None, None, true).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 8, "the 7 RFC 2544 sizes and imix");
        assert_eq!(lines[0]["line"]["size"], "64");
        assert_eq!(lines[7]["line"]["size"], "imix");
        let pps = lines[0]["line"]["pps"].as_f64().unwrap();
        assert!((pps - 29_761_904.76).abs() < 0.01, "{pps}");
        // Half of the 1G line rate of 64-byte frames (1,488,095.24 pps).
        let m = command_text("1G", false, Some("64"), Some("744047.62"), true).unwrap();
        let m: serde_json::Value = serde_json::from_str(m.trim_end()).unwrap();
        let percent = m["line_percent"].as_f64().unwrap();
        assert!((percent - 50.0).abs() < 1e-6, "{percent}");
        assert_eq!(
            command_text("1G", false, None, Some("1M"), false)
                .unwrap_err()
                .to_string(),
            "--pps needs the frame size or mix of the measured rate (-l 64, -l imix, ...)"
        );
        assert_eq!(
            command_text("1G", false, Some("64"), Some("1Gbps"), false)
                .unwrap_err()
                .to_string(),
            "invalid --pps '1Gbps': give frames per second, such as 1.2M or 850kpps"
        );
    }

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
