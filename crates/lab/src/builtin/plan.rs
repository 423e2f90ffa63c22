//! The built-in lab as data (BSDRP's forwarding-lab diagram, README.md "The built-in lab"):
//!
//! ```text
//! [gen] g0 ---- d0 [dut] d1 ---- r0 [rcv]
//! 198.18.0.201/24   198.18.0.203/24   198.19.0.203/24        198.19.0.201/24
//! 2001:2::201/64    2001:2::203/64    2001:2:0:8000::203/64  2001:2:0:8000::201/64
//! ```
//!
//! Pure: `build` applies a [`LabPlan`], `check` compares it with what is
//! there, `status` shows both.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::Serialize;

use crate::cidr::Cidr;
use crate::mac::derived_mac;
use crate::sysctl::Setting;

/// Prefix length of the lab's IPv4 link addresses.
pub const IPV4_PREFIX_LEN: u8 = 24;
/// Prefix length of the lab's IPv6 link addresses.
pub const IPV6_PREFIX_LEN: u8 = 64;

/// The three namespaces of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NsRole {
    /// The generator.
    Gen,
    /// The device under test: the router.
    Dut,
    /// The receiver.
    Rcv,
}

impl NsRole {
    pub const ALL: [NsRole; 3] = [NsRole::Gen, NsRole::Dut, NsRole::Rcv];

    /// The namespace name is `<prefix>-<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            NsRole::Gen => "gen",
            NsRole::Dut => "dut",
            NsRole::Rcv => "rcv",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            NsRole::Gen => "generator",
            NsRole::Dut => "device under test",
            NsRole::Rcv => "receiver",
        }
    }
}

/// The four interfaces of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IfRole {
    /// `g0`, the generator's port.
    Gen,
    /// `d0`, the DUT's port facing the generator.
    DutIn,
    /// `d1`, the DUT's port facing the receiver.
    DutOut,
    /// `r0`, the receiver's port.
    Rcv,
}

impl IfRole {
    pub const ALL: [IfRole; 4] = [IfRole::Gen, IfRole::DutIn, IfRole::DutOut, IfRole::Rcv];

    /// The interface name, the same in every lab (names are per namespace).
    pub fn name(self) -> &'static str {
        match self {
            IfRole::Gen => "g0",
            IfRole::DutIn => "d0",
            IfRole::DutOut => "d1",
            IfRole::Rcv => "r0",
        }
    }

    pub fn ns_role(self) -> NsRole {
        match self {
            IfRole::Gen => NsRole::Gen,
            IfRole::DutIn | IfRole::DutOut => NsRole::Dut,
            IfRole::Rcv => NsRole::Rcv,
        }
    }

    /// The other end of this interface's veth pair.
    pub fn peer(self) -> IfRole {
        match self {
            IfRole::Gen => IfRole::DutIn,
            IfRole::DutIn => IfRole::Gen,
            IfRole::DutOut => IfRole::Rcv,
            IfRole::Rcv => IfRole::DutOut,
        }
    }

    pub fn ipv4(self) -> Ipv4Addr {
        match self {
            IfRole::Gen => Ipv4Addr::new(198, 18, 0, 201),
            IfRole::DutIn => Ipv4Addr::new(198, 18, 0, 203),
            IfRole::DutOut => Ipv4Addr::new(198, 19, 0, 203),
            IfRole::Rcv => Ipv4Addr::new(198, 19, 0, 201),
        }
    }

    pub fn ipv6(self) -> Ipv6Addr {
        match self {
            IfRole::Gen => Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0x201),
            IfRole::DutIn => Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0x203),
            IfRole::DutOut => Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 0x203),
            IfRole::Rcv => Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 0x201),
        }
    }

    /// Last byte of the interface's MAC: 01 to 04 from generator to receiver.
    fn mac_id(self) -> u8 {
        match self {
            IfRole::Gen => 1,
            IfRole::DutIn => 2,
            IfRole::DutOut => 3,
            IfRole::Rcv => 4,
        }
    }
}

/// The generator side's next hop as the DUT sees it (BSDRP's forwarding lab's `.208`):
/// it only exists as a static neighbour entry pointing at g0's MAC.
pub const GEN_SIDE_NEXT_HOP4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 208);
pub const GEN_SIDE_NEXT_HOP6: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0x208);
/// The receiver side's next hop as the DUT sees it; maps to r0's MAC.
pub const RCV_SIDE_NEXT_HOP4: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 208);
pub const RCV_SIDE_NEXT_HOP6: Ipv6Addr = Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 0x208);

/// The generator side's networks: its link and the source ranges
/// (198.18.10.1-20, 2001:2::1-14).
pub fn gen_side_nets() -> [Cidr; 2] {
    [
        Cidr::new(Ipv4Addr::new(198, 18, 0, 0), 16).expect("valid"),
        Cidr::new(Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0), 49).expect("valid"),
    ]
}

/// The receiver side's networks: its link and the destination ranges
/// (198.19.10.1-100, 2001:2:0:8000::1-64).
pub fn rcv_side_nets() -> [Cidr; 2] {
    [
        Cidr::new(Ipv4Addr::new(198, 19, 0, 0), 16).expect("valid"),
        Cidr::new(Ipv6Addr::new(0x2001, 2, 0, 0x8000, 0, 0, 0, 0), 49).expect("valid"),
    ]
}

/// One lab interface: where it lives, its MAC and addresses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LabIface {
    pub role: IfRole,
    /// Its namespace's name.
    pub ns: String,
    pub name: &'static str,
    #[serde(serialize_with = "crate::mac::serialize_mac")]
    pub mac: [u8; 6],
    pub ipv4: Ipv4Addr,
    pub ipv6: Ipv6Addr,
}

impl LabIface {
    pub fn ipv4_cidr(&self) -> Cidr {
        Cidr::new(self.ipv4, IPV4_PREFIX_LEN).expect("valid prefix length")
    }

    pub fn ipv6_cidr(&self) -> Cidr {
        Cidr::new(self.ipv6, IPV6_PREFIX_LEN).expect("valid prefix length")
    }
}

/// A route the lab installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutePlan {
    pub dst: Cidr,
    pub via: IpAddr,
    pub dev: &'static str,
    /// The gateway is on the link although no connected route says so.
    pub onlink: bool,
}

/// A static (PERMANENT) neighbour entry the lab installs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighPlan {
    pub addr: IpAddr,
    pub mac: [u8; 6],
    pub dev: &'static str,
}

/// Everything that lives in one namespace.
#[derive(Clone, Debug)]
pub struct NsPlan {
    pub role: NsRole,
    pub name: String,
    pub ifaces: Vec<IfRole>,
    /// Set before the interfaces exist, so that they inherit the
    /// `conf/default` values from their first moment (no DAD or router
    /// solicitation ever leaves them).
    pub sysctls_first: Vec<Setting>,
    /// Per-interface values, set (again) once the interfaces exist.
    pub sysctls_ifaces: Vec<Setting>,
    pub routes: Vec<RoutePlan>,
    pub neighbours: Vec<NeighPlan>,
}

impl NsPlan {
    /// Every sysctl the lab sets here, in the order it sets them.
    pub fn sysctls(&self) -> impl Iterator<Item = &Setting> {
        self.sysctls_first.iter().chain(&self.sysctls_ifaces)
    }

    /// IPv6 addresses on this namespace's DUT ports get `noprefixroute`; see
    /// [`LabPlan::new`].
    pub fn ipv6_noprefixroute(&self) -> bool {
        self.role == NsRole::Dut
    }
}

/// The whole lab for one prefix and queue count.
#[derive(Clone, Debug)]
pub struct LabPlan {
    pub prefix: String,
    pub queues: u16,
    pub ifaces: [LabIface; 4],
    pub namespaces: [NsPlan; 3],
}

impl LabPlan {
    /// The plan for `prefix` (already validated) with `queues` TX and RX
    /// queues per veth.
    ///
    /// Routing follows BSDRP's forwarding lab: the DUT routes each side's /16 and /49 to a
    /// `.208` next hop that exists only as a static neighbour entry holding
    /// the generator's or receiver's MAC, so forwarded traffic reaches r0 with
    /// no ARP or ND, and nothing answers it. The DUT's IPv6 addresses are
    /// added with `noprefixroute`: their connected /64s would otherwise be
    /// more specific than the /49 routes and cover the lab's IPv6 ranges
    /// (2001:2:0:8000::1-64 is inside d1's /64), making the DUT solicit every
    /// destination instead of using the static next hop. The generator and
    /// receiver route the other side's networks via the DUT (static
    /// neighbours again), so the lab is symmetric and either end can send.
    pub fn new(prefix: &str, queues: u16) -> LabPlan {
        let ns_name = |role: NsRole| format!("{prefix}-{}", role.suffix());
        let ifaces = IfRole::ALL.map(|role| LabIface {
            role,
            ns: ns_name(role.ns_role()),
            name: role.name(),
            mac: derived_mac(prefix, role.mac_id()),
            ipv4: role.ipv4(),
            ipv6: role.ipv6(),
        });
        let mac = |role: IfRole| ifaces[role as usize].mac;
        let [gen4, gen6] = gen_side_nets();
        let [rcv4, rcv6] = rcv_side_nets();
        let route = |dst: Cidr, via: IpAddr, dev: IfRole, onlink: bool| RoutePlan {
            dst,
            via,
            dev: dev.name(),
            onlink,
        };
        let neigh = |addr: IpAddr, owner: IfRole, dev: IfRole| NeighPlan {
            addr,
            mac: mac(owner),
            dev: dev.name(),
        };
        use IfRole::*;

        let gen = NsPlan {
            role: NsRole::Gen,
            name: ns_name(NsRole::Gen),
            ifaces: vec![Gen],
            sysctls_first: namespace_sysctls(false),
            sysctls_ifaces: iface_sysctls(false, &[Gen]),
            routes: vec![
                route(rcv4, DutIn.ipv4().into(), Gen, false),
                route(rcv6, DutIn.ipv6().into(), Gen, false),
            ],
            neighbours: vec![
                neigh(DutIn.ipv4().into(), DutIn, Gen),
                neigh(DutIn.ipv6().into(), DutIn, Gen),
            ],
        };
        let dut = NsPlan {
            role: NsRole::Dut,
            name: ns_name(NsRole::Dut),
            ifaces: vec![DutIn, DutOut],
            sysctls_first: namespace_sysctls(true),
            sysctls_ifaces: iface_sysctls(true, &[DutIn, DutOut]),
            routes: vec![
                route(rcv4, RCV_SIDE_NEXT_HOP4.into(), DutOut, false),
                route(gen4, GEN_SIDE_NEXT_HOP4.into(), DutIn, false),
                route(rcv6, RCV_SIDE_NEXT_HOP6.into(), DutOut, true),
                route(gen6, GEN_SIDE_NEXT_HOP6.into(), DutIn, true),
            ],
            neighbours: vec![
                neigh(RCV_SIDE_NEXT_HOP4.into(), Rcv, DutOut),
                neigh(GEN_SIDE_NEXT_HOP4.into(), Gen, DutIn),
                neigh(RCV_SIDE_NEXT_HOP6.into(), Rcv, DutOut),
                neigh(GEN_SIDE_NEXT_HOP6.into(), Gen, DutIn),
                // The end hosts' own IPv4 addresses are on the DUT's
                // connected /24s; static entries keep traffic to them (a
                // ping, a reply) free of ARP too. Their IPv6 addresses are
                // reached through the .208 next hops (noprefixroute).
                neigh(Rcv.ipv4().into(), Rcv, DutOut),
                neigh(Gen.ipv4().into(), Gen, DutIn),
            ],
        };
        let rcv = NsPlan {
            role: NsRole::Rcv,
            name: ns_name(NsRole::Rcv),
            ifaces: vec![Rcv],
            sysctls_first: namespace_sysctls(false),
            sysctls_ifaces: iface_sysctls(false, &[Rcv]),
            routes: vec![
                route(gen4, DutOut.ipv4().into(), Rcv, false),
                route(gen6, DutOut.ipv6().into(), Rcv, false),
            ],
            neighbours: vec![
                neigh(DutOut.ipv4().into(), DutOut, Rcv),
                neigh(DutOut.ipv6().into(), DutOut, Rcv),
            ],
        };
        LabPlan {
            prefix: prefix.to_string(),
            queues,
            ifaces,
            namespaces: [gen, dut, rcv],
        }
    }

    pub fn iface(&self, role: IfRole) -> &LabIface {
        &self.ifaces[role as usize]
    }

    pub fn ns(&self, role: NsRole) -> &NsPlan {
        &self.namespaces[role as usize]
    }

    /// The veth pairs, as (one end, other end).
    pub fn veth_pairs(&self) -> [(IfRole, IfRole); 2] {
        [(IfRole::Gen, IfRole::DutIn), (IfRole::DutOut, IfRole::Rcv)]
    }
}

// Per-interface settings (`net.ipv{4,6}.conf.<all|default|IFACE>.<name>`)
// that keep the lab silent, so a receiver counts test traffic only.
// IPv4 `conf` values of a new namespace are copied from the host's, IPv6
// ones start at kernel defaults (net.core.devconf_inherit_init_net = 0),
// so every value is set explicitly: the lab must not depend on the host.

/// IPv6: nothing is sent that no one asked for.
const QUIET_IPV6: [(&str, &str); 6] = [
    // No duplicate address detection: adding an address sends no neighbour
    // solicitation (addresses are also added with `nodad`).
    ("accept_dad", "0"),
    // No router solicitations when a link comes up.
    ("router_solicitations", "0"),
    // Ignore router advertisements: addresses and routes stay as built.
    ("accept_ra", "0"),
    // No unsolicited neighbour advertisements on link or address changes.
    ("ndisc_notify", "0"),
    // Joining a multicast group (solicited-node, all-routers) always sends
    // MLD reports; there is no switch for that. Repeat them after 20 ms
    // instead of 1 s (MLDv2) or 10 s (MLDv1) so the lab falls silent within
    // moments of `up`, and stays silent: nobody sends MLD queries. (The
    // kernel stores jiffies: 20 ms reads back unchanged at HZ 100, 250, 300
    // and 1000, 10 ms would read back as 12 at HZ 250.)
    ("mldv2_unsolicited_report_interval", "20"),
    ("mldv1_unsolicited_report_interval", "20"),
];

/// IPv4: nothing is sent that no one asked for, and no per-packet extras.
const QUIET_IPV4: [(&str, &str); 2] = [
    // No gratuitous ARP on link up or address change.
    ("arp_notify", "0"),
    // No reverse-path filter: it would cost the DUT a second route lookup
    // per forwarded packet, with the cost depending on the host's setting.
    ("rp_filter", "0"),
];

/// Values for one `conf/<scope>` directory of a namespace.
fn conf_settings(scope: &str, forwarding: bool) -> Vec<Setting> {
    let fwd = if forwarding { "1" } else { "0" };
    let mut v = Vec::new();
    for (name, value) in QUIET_IPV6 {
        v.push(Setting::new(format!("net.ipv6.conf.{scope}.{name}"), value));
    }
    for (name, value) in QUIET_IPV4 {
        v.push(Setting::new(format!("net.ipv4.conf.{scope}.{name}"), value));
    }
    // Forwarding on the DUT only: the receiver must drop what it gets
    // (nothing routes 198.19.10.x there), and with forwarding off the kernel
    // drops such packets without an ICMP error.
    v.push(Setting::new(
        format!("net.ipv4.conf.{scope}.forwarding"),
        fwd,
    ));
    v.push(Setting::new(
        format!("net.ipv6.conf.{scope}.forwarding"),
        fwd,
    ));
    if forwarding {
        // BSDRP's "forwarding" configuration: no ICMP redirects (they
        // would only go out if a packet left by the port it came in on).
        v.push(Setting::new(
            format!("net.ipv4.conf.{scope}.send_redirects"),
            "0",
        ));
    }
    v
}

/// Namespace-wide values, set before the interfaces are created.
fn namespace_sysctls(forwarding: bool) -> Vec<Setting> {
    let fwd = if forwarding { "1" } else { "0" };
    // ip_forward first: writing it resets every IPv4 conf/*/forwarding.
    let mut v = vec![Setting::new("net.ipv4.ip_forward", fwd)];
    v.extend(conf_settings("all", forwarding));
    v.extend(conf_settings("default", forwarding));
    v
}

/// Per-interface values, checked and set again once the interfaces exist.
fn iface_sysctls(forwarding: bool, ifaces: &[IfRole]) -> Vec<Setting> {
    ifaces
        .iter()
        .flat_map(|i| conf_settings(i.name(), forwarding))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting<'a>(ns: &'a NsPlan, key: &str) -> Option<&'a str> {
        ns.sysctls()
            .find(|s| s.key == key)
            .map(|s| s.value.as_str())
    }

    #[test]
    fn names_macs_addresses() {
        let p = LabPlan::new("pktlab", 2);
        assert_eq!(p.queues, 2);
        let names: Vec<&str> = p.namespaces.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["pktlab-gen", "pktlab-dut", "pktlab-rcv"]);
        let g0 = p.iface(IfRole::Gen);
        assert_eq!((g0.ns.as_str(), g0.name), ("pktlab-gen", "g0"));
        assert_eq!(g0.ipv4_cidr().to_string(), "198.18.0.201/24");
        assert_eq!(g0.ipv6_cidr().to_string(), "2001:2::201/64");
        let d1 = p.iface(IfRole::DutOut);
        assert_eq!((d1.ns.as_str(), d1.name), ("pktlab-dut", "d1"));
        assert_eq!(d1.ipv4_cidr().to_string(), "198.19.0.203/24");
        assert_eq!(d1.ipv6_cidr().to_string(), "2001:2:0:8000::203/64");
        assert_eq!(
            p.iface(IfRole::Rcv).ipv6_cidr().to_string(),
            "2001:2:0:8000::201/64"
        );
        assert_eq!(p.iface(IfRole::DutIn).ipv4.to_string(), "198.18.0.203");
        // MACs: fnv1a32("pktlab") = 94e4ae2f, then 01..04.
        let macs: Vec<String> = p
            .ifaces
            .iter()
            .map(|i| crate::mac::format_mac(i.mac))
            .collect();
        assert_eq!(
            macs,
            [
                "02:94:e4:ae:2f:01",
                "02:94:e4:ae:2f:02",
                "02:94:e4:ae:2f:03",
                "02:94:e4:ae:2f:04"
            ]
        );
        let other = LabPlan::new("lab2", 1);
        for (a, b) in p.ifaces.iter().zip(&other.ifaces) {
            assert_ne!(a.mac, b.mac);
        }
        for r in IfRole::ALL {
            assert_eq!(r.peer().peer(), r);
            assert_ne!(r.peer().ns_role(), r.ns_role());
        }
    }

    #[test]
    fn dut_routes_to_static_next_hops() {
        let p = LabPlan::new("pktlab", 1);
        let dut = p.ns(NsRole::Dut);
        let shown: Vec<String> = dut
            .routes
            .iter()
            .map(|r| format!("{} via {} dev {} onlink={}", r.dst, r.via, r.dev, r.onlink))
            .collect();
        assert_eq!(
            shown,
            [
                "198.19.0.0/16 via 198.19.0.208 dev d1 onlink=false",
                "198.18.0.0/16 via 198.18.0.208 dev d0 onlink=false",
                "2001:2:0:8000::/49 via 2001:2:0:8000::208 dev d1 onlink=true",
                "2001:2::/49 via 2001:2::208 dev d0 onlink=true",
            ]
        );
        let n = |addr: &str| {
            dut.neighbours
                .iter()
                .find(|n| n.addr == addr.parse::<IpAddr>().unwrap())
                .map(|n| (n.mac, n.dev))
        };
        let r0 = p.iface(IfRole::Rcv).mac;
        let g0 = p.iface(IfRole::Gen).mac;
        assert_eq!(n("198.19.0.208"), Some((r0, "d1")));
        assert_eq!(n("2001:2:0:8000::208"), Some((r0, "d1")));
        assert_eq!(n("198.18.0.208"), Some((g0, "d0")));
        assert_eq!(n("2001:2::208"), Some((g0, "d0")));
        assert!(dut.ipv6_noprefixroute());
        // The lab's destination ranges are inside the routed /16 and /49 and
        // outside the DUT's connected IPv4 /24.
        let [rcv4, rcv6] = rcv_side_nets();
        let in_net = |c: Cidr, a: &str| {
            Cidr::new(a.parse::<IpAddr>().unwrap(), c.prefix_len())
                .unwrap()
                .network()
                == c
        };
        assert!(in_net(rcv4, "198.19.10.1") && in_net(rcv4, "198.19.10.100"));
        assert!(in_net(rcv6, "2001:2:0:8000::1") && in_net(rcv6, "2001:2:0:8000::64"));
        assert!(!in_net(
            p.iface(IfRole::DutOut).ipv4_cidr().network(),
            "198.19.10.1"
        ));
        let [gen4, gen6] = gen_side_nets();
        assert!(in_net(gen4, "198.18.10.20") && in_net(gen6, "2001:2::14"));
    }

    #[test]
    fn end_hosts_route_via_the_dut() {
        let p = LabPlan::new("pktlab", 1);
        let gen = p.ns(NsRole::Gen);
        assert_eq!(gen.routes[0].dst.to_string(), "198.19.0.0/16");
        assert_eq!(gen.routes[0].via.to_string(), "198.18.0.203");
        assert_eq!(gen.routes[1].via.to_string(), "2001:2::203");
        assert!(gen
            .neighbours
            .iter()
            .all(|n| n.mac == p.iface(IfRole::DutIn).mac && n.dev == "g0"));
        let rcv = p.ns(NsRole::Rcv);
        assert_eq!(rcv.routes[0].dst.to_string(), "198.18.0.0/16");
        assert_eq!(rcv.routes[1].via.to_string(), "2001:2:0:8000::203");
        assert!(rcv
            .neighbours
            .iter()
            .all(|n| n.mac == p.iface(IfRole::DutOut).mac && n.dev == "r0"));
        assert!(!gen.ipv6_noprefixroute() && !rcv.ipv6_noprefixroute());
    }

    #[test]
    fn sysctls_forward_on_the_dut_only_and_keep_quiet() {
        let p = LabPlan::new("pktlab", 1);
        let (gen, dut, rcv) = (p.ns(NsRole::Gen), p.ns(NsRole::Dut), p.ns(NsRole::Rcv));
        assert_eq!(setting(dut, "net.ipv4.ip_forward"), Some("1"));
        assert_eq!(setting(dut, "net.ipv6.conf.all.forwarding"), Some("1"));
        assert_eq!(setting(dut, "net.ipv4.conf.all.send_redirects"), Some("0"));
        assert_eq!(setting(dut, "net.ipv4.conf.d1.send_redirects"), Some("0"));
        assert_eq!(setting(dut, "net.ipv6.conf.d0.forwarding"), Some("1"));
        for ns in [gen, rcv] {
            assert_eq!(setting(ns, "net.ipv4.ip_forward"), Some("0"));
            assert_eq!(setting(ns, "net.ipv6.conf.all.forwarding"), Some("0"));
            assert_eq!(setting(ns, "net.ipv4.conf.all.send_redirects"), None);
        }
        assert_eq!(setting(rcv, "net.ipv4.conf.r0.forwarding"), Some("0"));
        for ns in [gen, dut, rcv] {
            for scope in ["all", "default"] {
                let key = format!("net.ipv6.conf.{scope}.accept_dad");
                assert_eq!(setting(ns, &key), Some("0"));
                let key = format!("net.ipv6.conf.{scope}.router_solicitations");
                assert_eq!(setting(ns, &key), Some("0"));
            }
            // Namespace-wide values come before the interfaces exist;
            // per-interface ones only name this namespace's interfaces.
            assert!(ns.sysctls_first.iter().all(|s| {
                s.key == "net.ipv4.ip_forward"
                    || s.key.contains(".all.")
                    || s.key.contains(".default.")
            }));
            assert!(ns.sysctls_ifaces.iter().all(|s| ns
                .ifaces
                .iter()
                .any(|i| s.key.contains(&format!(".{}.", i.name())))));
            assert_eq!(ns.sysctls_first[0].key, "net.ipv4.ip_forward");
            for s in ns.sysctls() {
                assert!(crate::sysctl::path_of(&s.key).is_ok(), "{}", s.key);
            }
        }
    }
}
