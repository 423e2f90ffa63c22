//! Numbers for people: `847.91 Kpps`, `9.84 Gbps`, `12.3 us`.

/// Scales `value` with K/M/G/T prefixes and two decimals, as pkt-gen's
/// summary does: `rate(847_910.0, "pps")` is `847.91 Kpps`.
pub fn rate(value: f64, unit: &str) -> String {
    const PREFIXES: [&str; 5] = ["", "K", "M", "G", "T"];
    let mut v = value;
    let mut i = 0;
    while v.abs() >= 1000.0 && i + 1 < PREFIXES.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.2} {}{unit}", PREFIXES[i])
}

/// A duration in nanoseconds with a fitting unit: `850 ns`, `12.3 us`,
/// `1.25 ms`, `2.000 s`.
pub fn nanos(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// The frame size of a run for its summary: `64 bytes each` when all
/// frames have one size, `592.67 bytes on average` otherwise.
pub fn frame_size(packets: u64, bytes: u64, fixed: Option<u16>) -> String {
    match fixed {
        Some(s) => format!("{s} bytes each"),
        None if packets > 0 => format!("{:.2} bytes on average", bytes as f64 / packets as f64),
        None => "no bytes".to_string(),
    }
}

/// One interval, pkt-gen style:
/// `   2.000 tx 1.49 Mpps (1488123 pkts 761.92 Mbps L2 1.00 Gbps L1 in 1000102 usec)`.
pub fn interval_line(
    tag: &str,
    elapsed: f64,
    seconds: f64,
    packets: u64,
    pps: f64,
    l2_bps: f64,
    l1_bps: f64,
) -> String {
    format!(
        "{elapsed:8.3} {tag} {} ({packets} pkts {} L2 {} L1 in {} usec)",
        rate(pps, "pps"),
        rate(l2_bps, "bps"),
        rate(l1_bps, "bps"),
        (seconds * 1e6).round() as u64
    )
}

/// pkt-gen's `Speed: 847.91 Kpps Bandwidth: 9.84 Gbps (raw 10.00 Gbps)`.
pub fn speed_line(pps: f64, l2_bps: f64, l1_bps: f64) -> String {
    format!(
        "Speed: {} Bandwidth: {} (raw {})",
        rate(pps, "pps"),
        rate(l2_bps, "bps"),
        rate(l1_bps, "bps")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_like_pkt_gen() {
        assert_eq!(rate(847_910.0, "pps"), "847.91 Kpps");
        assert_eq!(rate(14_200_000.0, "pps"), "14.20 Mpps");
        assert_eq!(rate(9.84e9, "bps"), "9.84 Gbps");
        assert_eq!(rate(502_800_000.0, "bps"), "502.80 Mbps");
        assert_eq!(rate(12.0, "pps"), "12.00 pps");
        assert_eq!(rate(0.0, "bps"), "0.00 bps");
    }

    #[test]
    fn durations() {
        assert_eq!(nanos(850.0), "850 ns");
        assert_eq!(nanos(12_345.0), "12.3 us");
        assert_eq!(nanos(1_250_000.0), "1.25 ms");
        assert_eq!(nanos(2e9), "2.000 s");
    }

    #[test]
    fn sizes() {
        assert_eq!(frame_size(10, 640, Some(64)), "64 bytes each");
        assert_eq!(frame_size(3, 1778, None), "592.67 bytes on average");
    }
}
