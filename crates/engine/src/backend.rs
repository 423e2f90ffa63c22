//! Which packet port a run uses (`--io`).

use std::path::PathBuf;
use std::str::FromStr;

use crate::EngineError;

/// The `--io` choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IoSpec {
    /// AF_PACKET with mmap rings.
    AfPacket,
    /// AF_XDP, one socket per thread and queue.
    AfXdp,
    /// AF_XDP where it works for the whole run, AF_PACKET otherwise. Never
    /// `Xdp`: `auto` only picks ports that lose no frame unseen.
    Auto,
    /// The XDP live-frame generator (`gen` only): frames built by an XDP
    /// program and redirected to the interface.
    Xdp,
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
            IoSpec::AfXdp => "afxdp",
            IoSpec::Auto => "auto",
            IoSpec::Xdp => "xdp",
            IoSpec::Pcap(_) => "pcap",
            IoSpec::Null => "null",
        }
    }

    /// True when the backend sends on or receives from an interface.
    pub fn needs_iface(&self) -> bool {
        matches!(
            self,
            IoSpec::AfPacket | IoSpec::AfXdp | IoSpec::Auto | IoSpec::Xdp
        )
    }
}

impl FromStr for IoSpec {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<IoSpec, EngineError> {
        match s {
            "afpacket" => Ok(IoSpec::AfPacket),
            "afxdp" => Ok(IoSpec::AfXdp),
            "auto" => Ok(IoSpec::Auto),
            "xdp" => Ok(IoSpec::Xdp),
            "null" => Ok(IoSpec::Null),
            _ => match s.strip_prefix("pcap:") {
                Some("") => Err(EngineError::BadPlan(
                    "invalid I/O backend 'pcap:': give a file name after pcap:".into(),
                )),
                Some(path) => Ok(IoSpec::Pcap(PathBuf::from(path))),
                None => Err(EngineError::BadPlan(format!(
                    "invalid I/O backend '{s}': use auto, afxdp, afpacket, xdp, pcap:FILE or null"
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
        assert_eq!("afxdp".parse::<IoSpec>().unwrap(), IoSpec::AfXdp);
        assert_eq!("auto".parse::<IoSpec>().unwrap(), IoSpec::Auto);
        assert_eq!("xdp".parse::<IoSpec>().unwrap(), IoSpec::Xdp);
        assert_eq!(IoSpec::Xdp.name(), "xdp");
        assert!(IoSpec::Xdp.needs_iface());
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

/// The backend of a run as a whole: the one every thread used, or a
/// count of each when they differ.
pub fn describe_backends(per_thread: &[String]) -> String {
    let Some(first) = per_thread.first() else {
        return String::new();
    };
    if per_thread.iter().all(|b| b == first) {
        return first.clone();
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for b in per_thread {
        match counts.iter_mut().find(|(name, _)| *name == b.as_str()) {
            Some((_, n)) => *n += 1,
            None => counts.push((b, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(name, n)| format!("{name} on {n} thread{}", if *n == 1 { "" } else { "s" }))
        .collect();
    format!("mixed: {}", parts.join(", "))
}

#[cfg(test)]
mod describe_tests {
    use super::describe_backends;

    #[test]
    fn same_or_mixed() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(describe_backends(&s(&["afpacket", "afpacket"])), "afpacket");
        assert_eq!(
            describe_backends(&s(&["afxdp (copy)", "afpacket", "afxdp (copy)"])),
            "mixed: afxdp (copy) on 2 threads, afpacket on 1 thread"
        );
        assert_eq!(describe_backends(&[]), "");
    }
}
