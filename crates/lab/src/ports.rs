//! Labs on interfaces pktlab did not build: a generator port and a
//! receiver port on this host (each optionally inside a network namespace),
//! cabled to a DUT whose MACs are known and whose commands run through a
//! [`DutRunner`].

use pktlab_io::iface::{self, IfCounters};
use pktlab_io::qdisc::QdiscCounters;
use serde::{Deserialize, Serialize};

use crate::dut::DutRunner;
use crate::{netns, LabError};

/// An interface, in a network namespace or in this process's own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub iface: String,
    pub netns: Option<String>,
}

impl Port {
    pub fn new(iface: &str, netns: Option<&str>) -> Port {
        Port {
            iface: iface.to_string(),
            netns: netns.map(str::to_string),
        }
    }

    /// `g0` or `g0 (in lab-gen)`.
    pub fn describe(&self) -> String {
        match &self.netns {
            Some(ns) => format!("{} (in {ns})", self.iface),
            None => self.iface.clone(),
        }
    }

    /// The interface's MAC address.
    pub fn mac(&self) -> Result<[u8; 6], LabError> {
        let name = self.iface.clone();
        let lookup = move || iface::lookup(&name).map(|i| i.mac);
        let result = match &self.netns {
            Some(ns) => netns::within(ns, lookup)?,
            None => lookup(),
        };
        result.map_err(|err| LabError::Io {
            ns: self
                .netns
                .clone()
                .unwrap_or_else(|| "of this process".into()),
            err,
        })
    }
}

/// Names of the interfaces in the calling thread's network namespace, from
/// `/proc/thread-self/net/dev` (the thread's namespace, unlike
/// `/proc/self/net`, which follows the main thread), `lo` left out.
pub fn iface_names() -> std::io::Result<Vec<String>> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    Ok(text
        .lines()
        .skip(2)
        .filter_map(|l| l.split_once(':').map(|(n, _)| n.trim().to_string()))
        .filter(|n| n != "lo")
        .collect())
}

/// Counters of `names`, read in `ns` (`None`: this thread's namespace).
pub fn counters_at(ns: Option<&str>, names: &[&str]) -> Result<Vec<IfCounters>, LabError> {
    match ns {
        Some(ns) => crate::observe::counters_in(ns, names),
        None => names
            .iter()
            .map(|name| {
                iface::read_counters(name).map_err(|err| LabError::Io {
                    ns: "of this process".into(),
                    err,
                })
            })
            .collect(),
    }
}

/// The root qdisc counters of `names`, read in `ns` (`None`: this
/// thread's namespace); None for an interface without a qdisc.
pub fn qdiscs_at(ns: Option<&str>, names: &[&str]) -> Result<Vec<Option<QdiscCounters>>, LabError> {
    let read = || pktlab_io::qdisc::read_roots(names);
    let result = match ns {
        Some(ns) => netns::within(ns, read)?,
        None => read(),
    };
    result.map_err(|err| LabError::Io {
        ns: ns.map_or_else(|| "of this process".into(), str::to_string),
        err,
    })
}

/// The drivers' drop statistics (`ethtool -S`) of `names`, read in `ns`
/// (`None`: this thread's namespace); empty for a driver without any.
pub fn ethtool_drops_at(
    ns: Option<&str>,
    names: &[&str],
) -> Result<Vec<Vec<(String, u64)>>, LabError> {
    let read = || {
        names
            .iter()
            .map(|n| pktlab_io::ethtool::drop_stats(n))
            .collect::<Result<Vec<_>, _>>()
    };
    let result = match ns {
        Some(ns) => netns::within(ns, read)?,
        None => read(),
    };
    result.map_err(|err| LabError::Io {
        ns: ns.map_or_else(|| "of this process".into(), str::to_string),
        err,
    })
}

/// A forwarding lab on existing interfaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceLab {
    /// Where the generator sends (its MAC is the frames' source).
    pub gen: Port,
    /// Where the receiver counts.
    pub rcv: Port,
    /// The DUT port facing the generator: the frames' destination MAC.
    #[serde(
        serialize_with = "crate::mac::serialize_mac",
        deserialize_with = "crate::mac::deserialize_mac"
    )]
    pub dut_in_mac: [u8; 6],
    /// The DUT port facing the receiver (for the record).
    #[serde(
        serialize_with = "crate::mac::serialize_opt_mac",
        deserialize_with = "crate::mac::deserialize_opt_mac"
    )]
    pub dut_out_mac: Option<[u8; 6]>,
    /// How the DUT's configuration commands run.
    pub dut: DutRunner,
    /// The DUT's port names, for its facts (drivers) when its commands can
    /// reach them.
    pub dut_ifaces: Vec<String>,
}

impl InterfaceLab {
    /// What keeps the lab from running: local ports that are missing or
    /// down (empty when both are fine).
    pub fn problems(&self) -> Result<Vec<String>, LabError> {
        let mut out = Vec::new();
        for port in [&self.gen, &self.rcv] {
            out.extend(port.problem()?);
        }
        Ok(out)
    }
}

impl Port {
    /// Why this local port cannot be used (missing or down), if it cannot.
    pub fn problem(&self) -> Result<Option<String>, LabError> {
        let name = self.iface.clone();
        let up = move || iface::is_up(&name);
        let up = match &self.netns {
            Some(ns) => netns::within(ns, up)?,
            None => up(),
        };
        Ok(match up {
            Ok(true) => None,
            Ok(false) => Some(format!("interface {} is down", self.describe())),
            Err(e) => Some(format!("interface {}: {e}", self.describe())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_here() {
        let lo = Port::new("lo", None);
        assert_eq!(lo.mac().unwrap(), [0; 6]);
        let c = counters_at(None, &["lo"]).unwrap();
        assert_eq!(c.len(), 1);
        let e = Port::new("nosuchif0", None).mac().unwrap_err();
        assert!(e.to_string().contains("nosuchif0"), "{e}");
        assert_eq!(Port::new("g0", Some("x-gen")).describe(), "g0 (in x-gen)");
    }
}
