//! How well the lab's hosts' clocks agree, from chrony's own estimate
//! (`chronyc tracking`): one-way latency between two hosts is only as
//! exact as their clocks.

use serde::{Deserialize, Serialize};

/// One host's clock as chrony reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostClock {
    /// `here`, or the ssh destination.
    pub host: String,
    /// Seconds the clock is ahead of its reference (negative: behind);
    /// None: unknown (no chrony, or not synchronised).
    pub offset_s: Option<f64>,
    /// chronyc(1)'s bound on the clock's error: |offset| + root
    /// dispersion + root delay / 2. None: unknown.
    pub error_s: Option<f64>,
}

/// The clocks of every host of a lab, and what they mean for latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    pub hosts: Vec<HostClock>,
    /// One line on one-way latency between the generator's and the
    /// receiver's hosts.
    pub latency: String,
}

/// `chronyc tracking` text: (offset, error bound) in seconds, or None
/// when chrony does not say or is not synchronised.
pub fn parse_tracking(text: &str) -> Option<(f64, f64)> {
    let mut offset = None;
    let mut delay = None;
    let mut dispersion = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let words: Vec<&str> = value.split_whitespace().collect();
        let number = words.first().and_then(|w| w.parse::<f64>().ok());
        match key.trim() {
            // "0.000001234 seconds slow of NTP time"
            "System time" => {
                offset = number.map(|n| match words.get(2) {
                    Some(&"slow") => -n,
                    _ => n,
                })
            }
            "Root delay" => delay = number,
            "Root dispersion" => dispersion = number,
            "Leap status" if value.trim() == "Not synchronised" => return None,
            _ => {}
        }
    }
    let (o, d, e) = (offset?, delay?, dispersion?);
    Some((o, o.abs() + e + d / 2.0))
}

impl HostClock {
    pub fn from_tracking(host: &str, text: &str) -> HostClock {
        let parsed = parse_tracking(text);
        HostClock {
            host: host.to_string(),
            offset_s: parsed.map(|p| p.0),
            error_s: parsed.map(|p| p.1),
        }
    }
}

/// The note on latency between the generator's host `gen` and the
/// receiver's `rcv` (both among `hosts`).
pub fn latency_note(hosts: &[HostClock], gen: &str, rcv: &str) -> String {
    if gen == rcv {
        return format!(
            "generator and receiver share the clock of {gen}: one-way latency is exact"
        );
    }
    let error = |h: &str| hosts.iter().find(|c| c.host == h).and_then(|c| c.error_s);
    match (error(gen), error(rcv)) {
        (Some(a), Some(b)) => format!(
            "clocks of {gen} and {rcv} synchronised to ±{} µs (chrony): one-way latency below that is not comparable",
            round_us(a + b)
        ),
        _ => format!(
            "one-way latency between {gen} and {rcv} is not comparable: the clocks' error is unknown (no synchronised chrony on {})",
            [(gen, error(gen)), (rcv, error(rcv))]
                .iter()
                .filter(|(_, e)| e.is_none())
                .map(|(h, _)| *h)
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    }
}

fn round_us(s: f64) -> String {
    format!("{:.1}", s * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACKING: &str = "Reference ID    : C0A80101 (192.168.1.1)
Stratum         : 3
Ref time (UTC)  : Mon Nov 23 12:00:00 2026
System time     : 0.000012000 seconds slow of NTP time
Last offset     : +0.000001000 seconds
RMS offset      : 0.000010000 seconds
Frequency       : 1.234 ppm fast
Residual freq   : +0.000 ppm
Skew            : 0.012 ppm
Root delay      : 0.000400000 seconds
Root dispersion : 0.000050000 seconds
Update interval : 64.2 seconds
Leap status     : Normal
";

    #[test]
    fn chrony_tracking() {
        let (offset, error) = parse_tracking(TRACKING).unwrap();
        assert_eq!(offset, -0.000012);
        // 12 µs + 50 µs + 400 µs / 2 = 262 µs.
        assert!((error - 0.000262).abs() < 1e-12, "{error}");
        let fast = TRACKING.replace("slow", "fast");
        assert_eq!(parse_tracking(&fast).unwrap().0, 0.000012);
        let unsync = TRACKING.replace(
            "Leap status     : Normal",
            "Leap status     : Not synchronised",
        );
        assert_eq!(parse_tracking(&unsync), None);
        assert_eq!(parse_tracking(""), None);
        assert_eq!(parse_tracking("506 Cannot talk to daemon\n"), None);
    }

    #[test]
    fn latency_notes() {
        let a = HostClock::from_tracking("hosta", TRACKING);
        let c = HostClock::from_tracking("hostc", TRACKING);
        let none = HostClock::from_tracking("hostd", "");
        assert_eq!(
            latency_note(&[a.clone(), c], "hosta", "hostc"),
            "clocks of hosta and hostc synchronised to ±524.0 µs (chrony): one-way latency below that is not comparable"
        );
        assert_eq!(
            latency_note(&[a, none], "hosta", "hostd"),
            "one-way latency between hosta and hostd is not comparable: the clocks' error is unknown (no synchronised chrony on hostd)"
        );
        assert_eq!(
            latency_note(&[], "here", "here"),
            "generator and receiver share the clock of here: one-way latency is exact"
        );
    }
}
