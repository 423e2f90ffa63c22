//! What is in a network namespace right now: its links (with MACs, state,
//! queues, addresses and counters), routes, neighbours and chosen sysctls.
//!
//! Links' MACs, indexes, MTUs and counters come from `pktlab_io::iface`, read
//! on a thread inside the namespace; queue counts, carrier, addresses, routes
//! and neighbours come from `ip -json`, whose output is stable and
//! documented, rather than from hand-built rtnetlink dumps.

use std::collections::BTreeMap;
use std::net::IpAddr;

use pktlab_io::iface::{self, IfCounters};
use serde::{Deserialize, Serialize};

use crate::cidr::Cidr;
use crate::{netns, runner, sysctl, LabError};

/// One namespace as observed.
#[derive(Clone, Debug, Default)]
pub struct NsObservation {
    pub name: String,
    pub exists: bool,
    /// Loopback administratively up.
    pub lo_up: bool,
    /// Every link but loopback, in ifindex order.
    pub links: Vec<LinkObservation>,
    /// The main routing table, IPv4 then IPv6.
    pub routes: Vec<RouteObservation>,
    /// The neighbour (ARP and NDP) tables.
    pub neighbours: Vec<NeighObservation>,
    /// The sysctls that were asked for; `None` when the key does not exist.
    pub sysctls: BTreeMap<String, Option<String>>,
}

impl NsObservation {
    pub fn link(&self, name: &str) -> Option<&LinkObservation> {
        self.links.iter().find(|l| l.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkObservation {
    pub name: String,
    pub ifindex: u32,
    #[serde(serialize_with = "crate::mac::serialize_mac")]
    pub mac: [u8; 6],
    pub mtu: u32,
    /// IFF_UP: administratively up.
    pub admin_up: bool,
    /// IFF_LOWER_UP: the link has carrier (for veth: both ends are up).
    pub carrier: bool,
    /// RFC 2863 operational state as `ip` prints it (`UP`, `DOWN`, `LOWERLAYERDOWN`, ...).
    pub operstate: String,
    /// `veth`, `dummy`, ... (`None` for a physical device).
    pub kind: Option<String>,
    pub tx_queues: u32,
    pub rx_queues: u32,
    pub addresses: Vec<Cidr>,
    pub counters: IfCounters,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RouteObservation {
    pub dst: Cidr,
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
    pub onlink: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NeighObservation {
    pub addr: IpAddr,
    pub dev: String,
    #[serde(serialize_with = "crate::mac::serialize_opt_mac")]
    pub mac: Option<[u8; 6]>,
    /// NUD states as `ip` prints them, joined with `,` (`PERMANENT`, `REACHABLE`, ...).
    pub state: String,
}

/// Observes namespace `ns`; a namespace that does not exist gives
/// `exists: false` and nothing else. `sysctl_keys` are read inside it.
pub fn observe(ns: &str, sysctl_keys: &[String]) -> Result<NsObservation, LabError> {
    if !netns::exists(ns) {
        return Ok(NsObservation {
            name: ns.to_string(),
            ..NsObservation::default()
        });
    }
    let ip_links = ip_json::<Vec<IpLink>>(ns, &["-details", "address", "show"])?;
    let mut routes = Vec::new();
    for family in ["-4", "-6"] {
        let rows = ip_json::<Vec<IpRoute>>(ns, &[family, "route", "show", "table", "main"])?;
        routes.extend(rows.into_iter().filter_map(|r| r.parse(family == "-6")));
    }
    let neighbours = ip_json::<Vec<IpNeigh>>(ns, &["neighbour", "show"])?
        .into_iter()
        .filter_map(IpNeigh::parse)
        .collect();

    let names: Vec<String> = ip_links
        .iter()
        .filter(|l| l.ifname != "lo")
        .map(|l| l.ifname.clone())
        .collect();
    let from_io = io_facts_in(ns, &names)?;
    let sysctls = sysctl::read_in(ns, sysctl_keys)?;

    let mut links = Vec::new();
    for l in ip_links.iter().filter(|l| l.ifname != "lo") {
        // A link that vanished between the two reads is simply not there.
        let Some((facts, admin_up, counters)) = from_io.get(&l.ifname) else {
            continue;
        };
        links.push(LinkObservation {
            name: l.ifname.clone(),
            ifindex: facts.index,
            mac: facts.mac,
            mtu: facts.mtu,
            admin_up: *admin_up,
            carrier: l.flags.iter().any(|f| f == "LOWER_UP"),
            operstate: l.operstate.clone(),
            kind: l.linkinfo.as_ref().and_then(|i| i.info_kind.clone()),
            tx_queues: l.num_tx_queues,
            rx_queues: l.num_rx_queues,
            addresses: l
                .addr_info
                .iter()
                .filter_map(|a| Cidr::new(a.local.parse::<IpAddr>().ok()?, a.prefixlen))
                .collect(),
            counters: *counters,
        });
    }
    links.sort_by_key(|l| l.ifindex);
    Ok(NsObservation {
        name: ns.to_string(),
        exists: true,
        lo_up: from_io.get("lo").is_some_and(|(_, up, _)| *up),
        links,
        routes,
        neighbours,
        sysctls,
    })
}

type IoFacts = BTreeMap<String, (iface::Iface, bool, IfCounters)>;

/// MAC, index, MTU, admin state and counters of `names` (and `lo`), read by
/// the io layer on a thread inside `ns`. Interfaces that no longer exist are
/// left out.
fn io_facts_in(ns: &str, names: &[String]) -> Result<IoFacts, LabError> {
    netns::within(ns, || {
        let mut facts = BTreeMap::new();
        for name in std::iter::once("lo").chain(names.iter().map(String::as_str)) {
            let read = || -> Result<_, pktlab_io::IoError> {
                Ok((
                    iface::lookup(name)?,
                    iface::is_up(name)?,
                    iface::read_counters(name)?,
                ))
            };
            match read() {
                Ok(f) => {
                    facts.insert(name.to_string(), f);
                }
                Err(pktlab_io::IoError::NoSuchInterface(_)) => {}
                Err(err) => {
                    return Err(LabError::Io {
                        ns: ns.to_string(),
                        err,
                    })
                }
            }
        }
        Ok(facts)
    })?
}

/// Counters of `names`, read inside `ns` (one thread for all of them).
pub fn counters_in(ns: &str, names: &[&str]) -> Result<Vec<IfCounters>, LabError> {
    netns::within(ns, || {
        names
            .iter()
            .map(|name| {
                iface::read_counters(name).map_err(|err| LabError::Io {
                    ns: ns.to_string(),
                    err,
                })
            })
            .collect()
    })?
}

/// Runs `ip -n NS -json ARGS` and decodes its output.
fn ip_json<T: for<'de> Deserialize<'de>>(ns: &str, args: &[&str]) -> Result<T, LabError> {
    let full: Vec<&str> = ["-json"].into_iter().chain(args.iter().copied()).collect();
    let out = netns::ip_in(ns, &full)?;
    // `ip -json` prints nothing at all (not `[]`) for some empty tables.
    let text = if out.trim().is_empty() { "[]" } else { &out };
    serde_json::from_str(text).map_err(|e| LabError::Output {
        command: runner::command_line("ip", &[&["-n", ns], &full[..]].concat()),
        why: e.to_string(),
    })
}

#[derive(Deserialize)]
struct IpLink {
    ifname: String,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    operstate: String,
    #[serde(default)]
    linkinfo: Option<IpLinkInfo>,
    #[serde(default)]
    num_tx_queues: u32,
    #[serde(default)]
    num_rx_queues: u32,
    #[serde(default)]
    addr_info: Vec<IpAddrInfo>,
}

#[derive(Deserialize)]
struct IpLinkInfo {
    info_kind: Option<String>,
}

#[derive(Deserialize)]
struct IpAddrInfo {
    local: String,
    prefixlen: u8,
}

#[derive(Deserialize)]
struct IpRoute {
    dst: String,
    gateway: Option<String>,
    dev: Option<String>,
    #[serde(default)]
    flags: Vec<String>,
}

impl IpRoute {
    fn parse(self, ipv6: bool) -> Option<RouteObservation> {
        let dst = if self.dst == "default" {
            let any: IpAddr = if ipv6 {
                std::net::Ipv6Addr::UNSPECIFIED.into()
            } else {
                std::net::Ipv4Addr::UNSPECIFIED.into()
            };
            Cidr::new(any, 0)?
        } else {
            self.dst.parse().ok()?
        };
        Some(RouteObservation {
            dst,
            via: self.gateway.and_then(|g| g.parse().ok()),
            dev: self.dev,
            onlink: self.flags.iter().any(|f| f == "onlink"),
        })
    }
}

#[derive(Deserialize)]
struct IpNeigh {
    dst: String,
    dev: String,
    lladdr: Option<String>,
    #[serde(default)]
    state: Vec<String>,
}

impl IpNeigh {
    fn parse(self) -> Option<NeighObservation> {
        Some(NeighObservation {
            addr: self.dst.parse().ok()?,
            mac: self.lladdr.as_deref().and_then(crate::mac::parse_mac),
            dev: self.dev,
            state: self.state.join(","),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_ip_json() {
        // Trimmed output of iproute2 6.1 `ip -json -details address show`,
        // `ip -json -6 route show` and `ip -json neighbour show`.
        let links: Vec<IpLink> = serde_json::from_str(
            r#"[{"ifindex":2,"link_index":2,"ifname":"x0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],
            "mtu":1500,"operstate":"UP","address":"02:00:00:00:00:01","linkinfo":{"info_kind":"veth"},
            "num_tx_queues":2,"num_rx_queues":2,"addr_info":[
            {"family":"inet","local":"10.0.0.1","prefixlen":24,"scope":"global"},
            {"family":"inet6","local":"2001:2::1","prefixlen":64,"scope":"global","nodad":true,"noprefixroute":true}]}]"#,
        )
        .unwrap();
        assert_eq!(links[0].ifname, "x0");
        assert!(links[0].flags.contains(&"LOWER_UP".to_string()));
        assert_eq!(links[0].num_tx_queues, 2);
        assert_eq!(
            links[0].linkinfo.as_ref().unwrap().info_kind.as_deref(),
            Some("veth")
        );
        assert_eq!(links[0].addr_info[1].local, "2001:2::1");
        assert_eq!(links[0].addr_info[1].prefixlen, 64);

        let routes: Vec<IpRoute> = serde_json::from_str(
            r#"[{"dst":"2001:2::/49","gateway":"2001:2::208","dev":"x0","metric":1024,"flags":["onlink"],"pref":"medium"},
            {"dst":"fe80::/64","dev":"x0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},
            {"dst":"default","gateway":"fe80::1","dev":"x0","flags":[]}]"#,
        )
        .unwrap();
        let routes: Vec<RouteObservation> =
            routes.into_iter().filter_map(|r| r.parse(true)).collect();
        assert_eq!(routes.len(), 3);
        assert_eq!(routes[0].dst.to_string(), "2001:2::/49");
        assert_eq!(routes[0].via, Some("2001:2::208".parse().unwrap()));
        assert_eq!(routes[0].dev.as_deref(), Some("x0"));
        assert!(routes[0].onlink);
        assert_eq!(routes[1].via, None);
        assert!(!routes[1].onlink);
        assert_eq!(routes[2].dst.to_string(), "::/0");

        let neigh: Vec<IpNeigh> = serde_json::from_str(
            r#"[{"dst":"10.0.0.2","dev":"x0","lladdr":"02:00:00:00:00:02","state":["PERMANENT"]},
            {"dst":"10.0.0.9","dev":"x0","state":["FAILED"]}]"#,
        )
        .unwrap();
        let neigh: Vec<NeighObservation> = neigh.into_iter().filter_map(IpNeigh::parse).collect();
        assert_eq!(neigh[0].addr, "10.0.0.2".parse::<IpAddr>().unwrap());
        assert_eq!(neigh[0].mac, Some([2, 0, 0, 0, 0, 2]));
        assert_eq!(neigh[0].state, "PERMANENT");
        assert_eq!(neigh[1].mac, None);
        assert_eq!(neigh[1].state, "FAILED");
    }

    #[test]
    fn missing_namespace_is_not_an_error() {
        let o = observe("pktlab-surely-not-a-namespace-xyz", &[]).unwrap();
        assert!(!o.exists);
        assert!(o.links.is_empty());
    }
}
