//! Which packet port a run uses (`--io`).

use std::path::PathBuf;
use std::str::FromStr;

use crate::EngineError;

/// The `--io` choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IoSpec {
    /// AF_PACKET with mmap rings.
    AfPacket,
    /// A pcap file: written by `gen`, read by `recv`.
    Pcap(PathBuf),
    /// Frames are built and dropped (`gen` only): the cost of generation.
    Null,
}

impl IoSpec {
    /// The name printed in reports and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            IoSpec::AfPacket => "afpacket",
            IoSpec::Pcap(_) => "pcap",
            IoSpec::Null => "null",
        }
    }

    /// True when the backend sends on or receives from an interface.
    pub fn needs_iface(&self) -> bool {
        matches!(self, IoSpec::AfPacket)
    }
}

impl FromStr for IoSpec {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<IoSpec, EngineError> {
        match s {
            "afpacket" => Ok(IoSpec::AfPacket),
            "null" => Ok(IoSpec::Null),
            _ => match s.strip_prefix("pcap:") {
                Some("") => Err(EngineError::BadPlan(
                    "invalid I/O backend 'pcap:': give a file name after pcap:".into(),
                )),
                Some(path) => Ok(IoSpec::Pcap(PathBuf::from(path))),
                None => Err(EngineError::BadPlan(format!(
                    "invalid I/O backend '{s}': use afpacket, pcap:FILE or null"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse() {
        assert_eq!("afpacket".parse::<IoSpec>().unwrap(), IoSpec::AfPacket);
        assert_eq!("null".parse::<IoSpec>().unwrap(), IoSpec::Null);
        assert_eq!(
            "pcap:/tmp/x.pcap".parse::<IoSpec>().unwrap(),
            IoSpec::Pcap("/tmp/x.pcap".into())
        );
        for bad in ["pcap:", "dpdk", ""] {
            let e = bad.parse::<IoSpec>().unwrap_err();
            assert!(e.is_usage());
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }
}
