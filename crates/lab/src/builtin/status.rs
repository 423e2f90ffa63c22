//! What `pktlab lab status` shows: each namespace with its interfaces
//! (MAC, state, queues, addresses, counters), routes, neighbours and the
//! sysctls the lab sets. Serializes to JSON; `Display` is the text form.

use std::collections::BTreeMap;
use std::fmt;

use pktlab_io::iface::IfCounters;
use serde::Serialize;

use crate::mac::format_mac;
use crate::observe::{LinkObservation, NeighObservation, NsObservation, RouteObservation};

use super::plan::{IfRole, LabPlan, NsRole};
use super::steer::CpuStatus;

/// Whether the lab is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabState {
    /// Complete: every namespace, link, address, route, neighbour and sysctl.
    Up,
    /// Some of it exists (a killed `up`, a namespace deleted by hand, ...);
    /// `problems` says what is wrong, and `up` rebuilds it.
    Partial,
    /// None of its namespaces exist.
    Down,
}

impl fmt::Display for LabState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LabState::Up => "up",
            LabState::Partial => "partial",
            LabState::Down => "down",
        })
    }
}

/// The lab as observed.
#[derive(Clone, Debug, Serialize)]
pub struct LabStatus {
    pub prefix: String,
    pub state: LabState,
    /// TX (= RX) queues per lab interface, when they all agree.
    pub queues: Option<u32>,
    /// What differs from a complete lab; empty when `state` is `up` or `down`.
    pub problems: Vec<String>,
    /// The CPU plan the lab's RPS/XPS masks amount to, and GRO on d0
    /// (`None` unless every namespace exists).
    pub cpus: Option<CpuStatus>,
    /// Generator, DUT, receiver.
    pub namespaces: Vec<NsStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NsStatus {
    pub name: String,
    pub role: NsRole,
    pub exists: bool,
    /// Lab interfaces first, then any other link found there.
    pub interfaces: Vec<IfStatus>,
    /// The main routing table (IPv4, then IPv6).
    pub routes: Vec<RouteObservation>,
    pub neighbours: Vec<NeighObservation>,
    /// The sysctls the lab sets here, with their values (`null`: missing).
    pub sysctls: BTreeMap<String, Option<String>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct IfStatus {
    /// `None` for a link that is not part of the lab.
    pub role: Option<IfRole>,
    #[serde(flatten)]
    pub link: LinkObservation,
}

/// A lab interface's counters, read in its namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LabIfCounters {
    pub ns: String,
    pub iface: String,
    pub role: IfRole,
    pub counters: IfCounters,
}

impl LabStatus {
    pub(crate) fn new(
        plan: &LabPlan,
        observed: Vec<NsObservation>,
        problems: Vec<String>,
        cpus: Option<CpuStatus>,
    ) -> Self {
        let any = observed.iter().any(|o| o.exists);
        let state = match (any, problems.is_empty()) {
            (false, _) => LabState::Down,
            (true, true) => LabState::Up,
            (true, false) => LabState::Partial,
        };
        let lab_links: Vec<&LinkObservation> = observed
            .iter()
            .flat_map(|o| &o.links)
            .filter(|l| plan.ifaces.iter().any(|i| i.name == l.name))
            .collect();
        let queues = lab_links.first().map(|l| l.tx_queues).filter(|&q| {
            lab_links.len() == plan.ifaces.len()
                && lab_links
                    .iter()
                    .all(|l| l.tx_queues == q && l.rx_queues == q)
        });
        let namespaces = plan
            .namespaces
            .iter()
            .zip(observed)
            .map(|(ns, obs)| {
                let role_of = |name: &str| {
                    ns.ifaces
                        .iter()
                        .copied()
                        .find(|r| plan.iface(*r).name == name)
                };
                let mut interfaces: Vec<IfStatus> = obs
                    .links
                    .into_iter()
                    .map(|link| IfStatus {
                        role: role_of(&link.name),
                        link,
                    })
                    .collect();
                // Lab interfaces first, in plan order; the rest by ifindex.
                interfaces.sort_by_key(|i| {
                    (
                        i.role.map(|r| r as usize).unwrap_or(usize::MAX),
                        i.link.ifindex,
                    )
                });
                NsStatus {
                    name: ns.name.clone(),
                    role: ns.role,
                    exists: obs.exists,
                    interfaces,
                    routes: obs.routes,
                    neighbours: obs.neighbours,
                    sysctls: obs.sysctls,
                }
            })
            .collect();
        LabStatus {
            prefix: plan.prefix.clone(),
            state,
            queues,
            problems,
            cpus,
            namespaces,
        }
    }

    pub fn ns(&self, role: NsRole) -> &NsStatus {
        &self.namespaces[role as usize]
    }
}

impl fmt::Display for LabStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lab {}: {}", self.prefix, self.state)?;
        match self.queues {
            Some(q) if self.state != LabState::Down => {
                writeln!(f, " ({q} queue{} per interface)", plural(q))?
            }
            _ => writeln!(f)?,
        }
        for p in &self.problems {
            writeln!(f, "  problem: {p}")?;
        }
        if let Some(c) = &self.cpus {
            write!(f, "{c}")?;
        }
        for ns in &self.namespaces {
            write!(f, "{} ({})", ns.name, ns.role.describe())?;
            if !ns.exists {
                writeln!(f, ": does not exist")?;
                continue;
            }
            let get = |k: &str| ns.sysctls.get(k).cloned().flatten().unwrap_or("?".into());
            writeln!(
                f,
                ": forwarding ipv4 {} ipv6 {}",
                get("net.ipv4.ip_forward"),
                get("net.ipv6.conf.all.forwarding")
            )?;
            for i in &ns.interfaces {
                write_iface(f, &i.link)?;
            }
            for r in &ns.routes {
                write!(f, "  route {}", r.dst)?;
                if let Some(via) = r.via {
                    write!(f, " via {via}")?;
                }
                if let Some(dev) = &r.dev {
                    write!(f, " dev {dev}")?;
                }
                writeln!(f, "{}", if r.onlink { " onlink" } else { "" })?;
            }
            for n in &ns.neighbours {
                let mac = n.mac.map(format_mac).unwrap_or_else(|| "-".into());
                writeln!(f, "  neigh {} dev {} {mac} {}", n.addr, n.dev, n.state)?;
            }
        }
        Ok(())
    }
}

fn write_iface(f: &mut fmt::Formatter<'_>, l: &LinkObservation) -> fmt::Result {
    writeln!(
        f,
        "  {}  {}  {}  mtu {}  queues {} tx {} rx  ifindex {}",
        l.name,
        format_mac(l.mac),
        l.operstate,
        l.mtu,
        l.tx_queues,
        l.rx_queues,
        l.ifindex
    )?;
    let addrs: Vec<String> = l.addresses.iter().map(|a| a.to_string()).collect();
    if !addrs.is_empty() {
        writeln!(f, "      {}", addrs.join(" "))?;
    }
    let c = &l.counters;
    writeln!(
        f,
        "      rx {} packets {} bytes {} dropped {} errors   tx {} packets {} bytes {} dropped {} errors",
        c.rx_packets,
        c.rx_bytes,
        c.rx_dropped,
        c.rx_errors,
        c.tx_packets,
        c.tx_bytes,
        c.tx_dropped,
        c.tx_errors
    )
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
