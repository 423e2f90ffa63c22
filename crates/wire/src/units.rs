//! Command-line units: rates, link speeds, durations and counts.
//!
//! SI multipliers throughout (k = 10^3, M = 10^6, G = 10^9), as every packet
//! tool and link speed uses them. Rates in bits per second count the Ethernet
//! frame including its FCS (L2, TRex's default); `%` is a share of the L1
//! line rate of `--link-speed` (see [`crate::rate`]).

use std::time::Duration;

use crate::decimal::{split_number, Decimal};
use crate::rate;
use crate::WireError;

/// A requested transmit rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Frames per second.
    Pps(f64),
    /// L2 bits per second: frames × size (with FCS) × 8.
    L2Bps(f64),
    /// Percent (0 < p ≤ 100) of the line rate of the link.
    LinePercent(f64),
}

impl Rate {
    /// The rate in frames per second for frames of `mean_frame_size` bytes
    /// (FCS included) on a link of `link_bps` bits per second (needed only for
    /// [`Rate::LinePercent`]).
    pub fn to_pps(&self, mean_frame_size: f64, link_bps: Option<f64>) -> Result<f64, WireError> {
        match *self {
            Rate::Pps(pps) => Ok(pps),
            Rate::L2Bps(bps) => Ok(bps / (mean_frame_size * 8.0)),
            Rate::LinePercent(percent) => {
                let link = link_bps.ok_or(WireError::PercentNeedsLinkSpeed { percent })?;
                Ok(rate::line_rate_pps_mean(link, mean_frame_size) * percent / 100.0)
            }
        }
    }
}

/// Parses a rate: `10000` or `10k` or `10kpps` or `1.5Mpps` (frames per
/// second), `500Mbps`, `10Gbps`, `1.5kbps` (L2 bits per second), `100%`,
/// `12.5%` (of the line rate). `K` is accepted for `k`.
pub fn parse_rate(text: &str) -> Result<Rate, WireError> {
    let invalid = || WireError::InvalidRate(text.to_string());
    let out_of_range = |reason| WireError::RateOutOfRange {
        text: text.to_string(),
        reason,
    };
    if text.starts_with('-') && Decimal::parse(split_number(&text[1..]).0).is_some() {
        return Err(out_of_range("a rate must be more than zero"));
    }
    let (number, unit) = split_number(text);
    let value = Decimal::parse(number).ok_or_else(invalid)?;
    if value.is_zero() {
        return Err(out_of_range("a rate must be more than zero"));
    }
    let value = value.to_f64();
    let (multiplier, rest) = match unit.as_bytes().first() {
        Some(b'k' | b'K') => (1e3, &unit[1..]),
        Some(b'M') => (1e6, &unit[1..]),
        Some(b'G') => (1e9, &unit[1..]),
        _ => (1.0, unit),
    };
    match rest {
        "" | "pps" => Ok(Rate::Pps(value * multiplier)),
        "bps" => Ok(Rate::L2Bps(value * multiplier)),
        "%" if multiplier == 1.0 => {
            if value > 100.0 {
                Err(out_of_range("more than 100% of the line rate"))
            } else {
                Ok(Rate::LinePercent(value))
            }
        }
        _ => Err(invalid()),
    }
}

/// Parses a link speed into bits per second: `1G`, `10G`, `10Gbps`, `25g`,
/// `100M`, `100Mbps`, `40000M`, `2.5G` (any case; an optional `bps`, `b/s` or
/// `bit/s`). A bare number is refused: it could mean bits or megabits.
pub fn parse_link_speed(text: &str) -> Result<f64, WireError> {
    let invalid = || WireError::InvalidLinkSpeed(text.to_string());
    let (number, unit) = split_number(text);
    let value = Decimal::parse(number).ok_or_else(invalid)?;
    let unit = unit.to_ascii_lowercase();
    let (multiplier, rest) = match unit.as_bytes().first() {
        Some(b'k') => (1e3, &unit[1..]),
        Some(b'm') => (1e6, &unit[1..]),
        Some(b'g') => (1e9, &unit[1..]),
        Some(b't') => (1e12, &unit[1..]),
        _ => (1.0, unit.as_str()),
    };
    let unit_ok = match rest {
        "" => multiplier != 1.0,
        "bps" | "b/s" | "bit/s" => true,
        _ => false,
    };
    if !unit_ok || value.is_zero() {
        return Err(invalid());
    }
    Ok(value.to_f64() * multiplier)
}

/// Parses a duration: `30s`, `2m`, `1h`, `500ms`, `1.5s`; a bare number is
/// seconds. Exact to the nanosecond (fractions below are dropped). Zero is
/// returned as is: callers that need a positive duration check.
pub fn parse_duration(text: &str) -> Result<Duration, WireError> {
    let invalid = || WireError::InvalidDuration(text.to_string());
    let (number, unit) = split_number(text);
    let value = Decimal::parse(number).ok_or_else(invalid)?;
    let unit_ns: u128 = match unit {
        "ms" => 1_000_000,
        "" | "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(invalid()),
    };
    let nanos = value.times_floor(unit_ns).ok_or_else(invalid)?;
    let nanos = u64::try_from(nanos).map_err(|_| invalid())?;
    Ok(Duration::from_nanos(nanos))
}

/// Parses a count of frames: `1000000`, `10k`, `1M`, `1G` (`K` for `k`).
/// The value must be a whole number: `1.5k` is 1500, `1.2345k` an error.
/// Zero is returned as is.
pub fn parse_count(text: &str) -> Result<u64, WireError> {
    let err = |reason| WireError::InvalidCount {
        text: text.to_string(),
        reason,
    };
    let (number, unit) = split_number(text);
    let value = Decimal::parse(number)
        .ok_or_else(|| err("use a whole number, optionally with k, M or G"))?;
    let multiplier: u128 = match unit {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        _ => return Err(err("use a whole number, optionally with k, M or G")),
    };
    let count = value
        .times_exact(multiplier)
        .ok_or_else(|| err("not a whole number of frames"))?;
    u64::try_from(count).map_err(|_| err("too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn rates_in_pps() {
        assert_eq!(parse_rate("10000").unwrap(), Rate::Pps(10000.0));
        assert_eq!(parse_rate("10k").unwrap(), Rate::Pps(10000.0));
        assert_eq!(parse_rate("10K").unwrap(), Rate::Pps(10000.0));
        assert_eq!(parse_rate("10kpps").unwrap(), Rate::Pps(10000.0));
        assert_eq!(parse_rate("1.5Mpps").unwrap(), Rate::Pps(1_500_000.0));
        assert_eq!(parse_rate("2M").unwrap(), Rate::Pps(2_000_000.0));
        assert_eq!(parse_rate("250pps").unwrap(), Rate::Pps(250.0));
        assert_eq!(parse_rate("0.5pps").unwrap(), Rate::Pps(0.5));
    }

    #[test]
    fn rates_in_bps_and_percent() {
        assert_eq!(parse_rate("500Mbps").unwrap(), Rate::L2Bps(500e6));
        assert_eq!(parse_rate("10Gbps").unwrap(), Rate::L2Bps(10e9));
        assert_eq!(parse_rate("1.5kbps").unwrap(), Rate::L2Bps(1500.0));
        assert_eq!(parse_rate("64000bps").unwrap(), Rate::L2Bps(64000.0));
        assert_eq!(parse_rate("100%").unwrap(), Rate::LinePercent(100.0));
        assert_eq!(parse_rate("12.5%").unwrap(), Rate::LinePercent(12.5));
    }

    #[test]
    fn rate_errors_name_the_text() {
        let generic = "use a number with pps, kpps, Mpps, bps, kbps, Mbps, Gbps or %";
        for bad in [
            "fast", "", "10 kpps", "10mpps", "10Mbit", "NaN", "nan%", "inf", "1e6", "10kk", "5k%",
            "10Bps",
        ] {
            assert_eq!(
                parse_rate(bad).unwrap_err().to_string(),
                format!("invalid rate '{bad}': {generic}"),
                "{bad}"
            );
        }
        assert_eq!(
            parse_rate("0").unwrap_err().to_string(),
            "invalid rate '0': a rate must be more than zero"
        );
        assert_eq!(
            parse_rate("0.0Mpps").unwrap_err().to_string(),
            "invalid rate '0.0Mpps': a rate must be more than zero"
        );
        assert_eq!(
            parse_rate("-5kpps").unwrap_err().to_string(),
            "invalid rate '-5kpps': a rate must be more than zero"
        );
        assert_eq!(
            parse_rate("100.5%").unwrap_err().to_string(),
            "invalid rate '100.5%': more than 100% of the line rate"
        );
    }

    #[test]
    fn rate_to_pps() {
        // 1 Gb/s at 64 bytes is 1e9 / (84 * 8) = 1,488,095.238 pps.
        let line = Rate::LinePercent(100.0).to_pps(64.0, Some(1e9)).unwrap();
        assert!(close(line, 1e9 / 672.0), "{line}");
        let half = Rate::LinePercent(50.0).to_pps(64.0, Some(10e9)).unwrap();
        assert!(close(half, 10e9 / 672.0 / 2.0), "{half}");
        // 512 kbit/s of 64-byte frames: 512000 / 512 = 1000 pps.
        assert!(close(
            Rate::L2Bps(512_000.0).to_pps(64.0, None).unwrap(),
            1000.0
        ));
        assert_eq!(Rate::Pps(42.0).to_pps(1518.0, None).unwrap(), 42.0);
        let err = Rate::LinePercent(50.0).to_pps(64.0, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rate 50% is a share of the line rate: give the link speed with --link-speed"
        );
    }

    #[test]
    fn link_speeds() {
        assert_eq!(parse_link_speed("1G").unwrap(), 1e9);
        assert_eq!(parse_link_speed("10G").unwrap(), 10e9);
        assert_eq!(parse_link_speed("10Gbps").unwrap(), 10e9);
        assert_eq!(parse_link_speed("25g").unwrap(), 25e9);
        assert_eq!(parse_link_speed("100M").unwrap(), 100e6);
        assert_eq!(parse_link_speed("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_link_speed("40000M").unwrap(), 40e9);
        assert_eq!(parse_link_speed("2.5G").unwrap(), 2.5e9);
        assert_eq!(parse_link_speed("10Gb/s").unwrap(), 10e9);
        assert_eq!(parse_link_speed("1000000000bps").unwrap(), 1e9);
        assert_eq!(parse_link_speed("100k").unwrap(), 1e5);
        assert_eq!(parse_link_speed("512kbps").unwrap(), 512e3);
        assert_eq!(parse_link_speed("1.6T").unwrap(), 1.6e12);
        assert_eq!(parse_link_speed("1Tbps").unwrap(), 1e12);
        for bad in ["", "10", "fast", "0G", "10Gbit", "-1G", "10 G", "G"] {
            assert_eq!(
                parse_link_speed(bad).unwrap_err().to_string(),
                format!("invalid link speed '{bad}': use a number with M or G, such as 1G, 10Gbps or 100M")
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("0.1s").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        for bad in [
            "",
            "s",
            "10x",
            "-1s",
            "1.5.s",
            "1e3s",
            "10 s",
            "99999999999h",
        ] {
            assert_eq!(
                parse_duration(bad).unwrap_err().to_string(),
                format!("invalid duration '{bad}': use a number with ms, s, m or h, such as 30s, 2m or 500ms")
            );
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000000").unwrap(), 1_000_000);
        assert_eq!(parse_count("10k").unwrap(), 10_000);
        assert_eq!(parse_count("10K").unwrap(), 10_000);
        assert_eq!(parse_count("1M").unwrap(), 1_000_000);
        assert_eq!(parse_count("1G").unwrap(), 1_000_000_000);
        assert_eq!(parse_count("1.5k").unwrap(), 1500);
        assert_eq!(parse_count("0").unwrap(), 0);
        assert_eq!(
            parse_count("1.2345k").unwrap_err().to_string(),
            "invalid count '1.2345k': not a whole number of frames"
        );
        assert_eq!(
            parse_count("1.5").unwrap_err().to_string(),
            "invalid count '1.5': not a whole number of frames"
        );
        assert_eq!(
            parse_count("99999999999G").unwrap_err().to_string(),
            "invalid count '99999999999G': too large"
        );
        for bad in ["", "ten", "10m", "-1", "1e6", "10kpps"] {
            assert_eq!(
                parse_count(bad).unwrap_err().to_string(),
                format!("invalid count '{bad}': use a whole number, optionally with k, M or G")
            );
        }
    }
}
