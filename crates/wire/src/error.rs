//! The wire layer's error type.

/// Bad input to the wire layer: a malformed range, MAC, size, rate, ...
///
/// Every variant is a usage error (the CLI exits with code 2, see
/// [`WireError::is_usage`]). Every message is one line that names the
/// offending value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// An address that does not parse; `family` is "IPv4", "IPv6" or "IP".
    #[error("invalid {family} address '{text}' in range '{range}'")]
    InvalidAddress {
        family: &'static str,
        text: String,
        range: String,
    },
    /// A port that is empty, not a number or above 65535.
    #[error("invalid port '{text}' in range '{range}': use a number from 0 to 65535")]
    InvalidPort { text: String, range: String },
    /// Text around the addresses that the range syntax does not allow.
    #[error("invalid range '{range}': {reason}")]
    InvalidRange { range: String, reason: &'static str },
    /// A range whose end address or port comes before its start.
    #[error("range '{range}' ends before it starts ({end} < {start})")]
    ReversedRange {
        range: String,
        start: String,
        end: String,
    },
    /// IPv4 and IPv6 in the same range.
    #[error("range '{range}' mixes IPv4 and IPv6 addresses")]
    MixedFamilyInRange { range: String },
    /// Source and destination ranges of different families.
    #[error("source range '{src}' is {src_family} but destination range '{dst}' is {dst_family}")]
    MixedFamilies {
        src: String,
        src_family: &'static str,
        dst: String,
        dst_family: &'static str,
    },
    /// More flows than the 24-bit stream id can number.
    #[error(
        "{count} flows from '{src}' to '{dst}' is more than {max}: the stream id in the test payload is 24 bits"
    )]
    TooManyFlows {
        count: u128,
        max: u32,
        src: String,
        dst: String,
    },
    /// More TX threads than flows: threads never share a flow.
    #[error(
        "{threads} threads need at least {threads} flows, but the ranges give {flows}: each thread sends its own flows"
    )]
    TooFewFlows { threads: u32, flows: u32 },
    #[error("invalid MAC address '{0}': use six hex bytes such as 02:00:00:00:00:01")]
    InvalidMac(String),
    /// A worker-thread count outside 1..=[`crate::threads::MAX_THREADS`].
    #[error("invalid thread count {0}: use 1 to {max}", max = crate::threads::MAX_THREADS)]
    InvalidThreads(usize),
    /// A frame size outside 64..=9018.
    #[error("frame size {0} is not between 64 and 9018 bytes")]
    FrameSizeRange(u32),
    /// 60..=63: probably a size without the FCS, as pkt-gen counts.
    #[error(
        "frame size {size} is below 64: pktlab sizes include the 4-byte FCS (pkt-gen's -l {size} is -l {plus_fcs})"
    )]
    FrameSizeWithoutFcs { size: u32, plus_fcs: u32 },
    /// A size too small for the headers and the test payload of a family.
    #[error(
        "frame size {size} is too small for {family}{vlan}: the smallest is {min} bytes (headers, the {payload}-byte test payload and the FCS)"
    )]
    FrameSizeTooSmall {
        size: u16,
        family: &'static str,
        vlan: &'static str,
        min: u16,
        payload: usize,
    },
    /// A size mix that does not parse.
    #[error("invalid frame size '{text}': {reason}")]
    InvalidSize { text: String, reason: String },
    #[error("invalid rate '{0}': use a number with pps, kpps, Mpps, bps, kbps, Mbps, Gbps or %")]
    InvalidRate(String),
    /// A rate that parses but is zero, negative, NaN or above 100%.
    #[error("invalid rate '{text}': {reason}")]
    RateOutOfRange { text: String, reason: &'static str },
    /// A percentage rate with no link speed to take it of.
    #[error("rate {percent}% is a share of the line rate: give the link speed with --link-speed")]
    PercentNeedsLinkSpeed { percent: f64 },
    #[error("invalid link speed '{0}': use a number with M or G, such as 1G, 10Gbps or 100M")]
    InvalidLinkSpeed(String),
    #[error("invalid duration '{0}': use a number with ms, s, m or h, such as 30s, 2m or 500ms")]
    InvalidDuration(String),
    #[error("invalid count '{text}': {reason}")]
    InvalidCount { text: String, reason: &'static str },
    #[error("VLAN id {0} is not between 1 and 4094")]
    InvalidVlan(u16),
    #[error("TTL {0} is not between 1 and 255")]
    InvalidTtl(u8),
    /// A destination outside the ranges [`crate::safety`] allows.
    #[error(
        "destination {addr}{in_range} is outside the benchmark, private and documentation ranges (use --allow-public to send there anyway)"
    )]
    PublicDestination {
        addr: std::net::IpAddr,
        /// Empty, or " (in range 'TEXT')" when the range holds more than one address.
        in_range: String,
    },
    /// Other invalid input, named in the message.
    #[error("{0}")]
    Invalid(String),
}

impl WireError {
    /// Always true: every wire error is caused by the user's input (exit code 2).
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// A message that quotes what the user wrote (a campaign file's value may
/// hold a newline), its control characters shown escaped so that it stays
/// one line.
pub fn one_line(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_control_characters_stay_on_one_line() {
        assert_eq!(
            one_line("invalid drop trace 'a\nb\tc': use auto, on or off"),
            "invalid drop trace 'a\\nb\\tc': use auto, on or off"
        );
        assert_eq!(one_line("é ok"), "é ok");
    }
}
