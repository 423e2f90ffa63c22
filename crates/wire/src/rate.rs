//! Line-rate arithmetic (README.md, "Conventions").
//!
//! Sizes are Ethernet frame sizes including the 4-byte FCS. On the wire each
//! frame also takes 20 more bytes of time: 7 bytes preamble, 1 byte SFD and a
//! 12-byte inter-frame gap. For a mix of sizes, the line rate of the mix is
//! the line rate of its mean size, because per-frame times add up.

/// Preamble (7) + SFD (1) + inter-frame gap (12) bytes per frame.
pub const L1_OVERHEAD: u32 = 20;

/// L2 bits per second: `pps × size × 8`.
pub fn l2_bps(pps: f64, size: u16) -> f64 {
    l2_bps_mean(pps, f64::from(size))
}

/// L1 bits per second: `pps × (size + 20) × 8`.
pub fn l1_bps(pps: f64, size: u16) -> f64 {
    l1_bps_mean(pps, f64::from(size))
}

/// The most frames per second a link of `link_bps` carries: `link / ((size + 20) × 8)`.
pub fn line_rate_pps(link_bps: f64, size: u16) -> f64 {
    line_rate_pps_mean(link_bps, f64::from(size))
}

/// [`l2_bps`] for a mix whose mean frame size is `mean_size`.
pub fn l2_bps_mean(pps: f64, mean_size: f64) -> f64 {
    pps * mean_size * 8.0
}

/// [`l1_bps`] for a mix whose mean frame size is `mean_size`.
pub fn l1_bps_mean(pps: f64, mean_size: f64) -> f64 {
    pps * (mean_size + f64::from(L1_OVERHEAD)) * 8.0
}

/// [`line_rate_pps`] for a mix whose mean frame size is `mean_size`.
pub fn line_rate_pps_mean(link_bps: f64, mean_size: f64) -> f64 {
    link_bps / ((mean_size + f64::from(L1_OVERHEAD)) * 8.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_rates_of_the_tuning_guide() {
        // 1e9 / 672 and 1e10 / 672.
        assert_eq!(format!("{:.1}", line_rate_pps(1e9, 64)), "1488095.2");
        assert_eq!(format!("{:.1}", line_rate_pps(10e9, 64)), "14880952.4");
        // 1518-byte frames: 1e9 / (1538 * 8) = 81,274.38.
        assert_eq!(format!("{:.2}", line_rate_pps(1e9, 1518)), "81274.38");
    }

    #[test]
    fn l1_and_l2_bits() {
        // BSDRP's forwarding lab: 1,488,095 pps of 64-byte frames.
        assert_eq!(l2_bps(1_488_095.0, 64), 761_904_640.0);
        assert_eq!(l1_bps(1_488_095.0, 64), 999_999_840.0);
        assert_eq!(l1_bps(line_rate_pps(10e9, 128), 128).round(), 10e9);
    }

    #[test]
    fn simple_imix_mean() {
        // 7 × 64 + 4 × 594 + 1 × 1518 = 4342 bytes over 12 frames.
        let mean = 4342.0 / 12.0;
        let pps = line_rate_pps_mean(1e9, mean);
        // 12 frames take (4342 + 12 × 20) × 8 = 36656 bits.
        assert!((pps - 1e9 * 12.0 / 36656.0).abs() < 1e-6, "{pps}");
        assert!((l1_bps_mean(pps, mean) - 1e9).abs() < 1e-3);
        assert!((l2_bps_mean(pps, mean) - 1e9 * 4342.0 / 4582.0).abs() < 1e-3);
    }
}
