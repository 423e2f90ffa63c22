//! Is the lab complete? Compares a [`LabPlan`] with what was observed and
//! lists every difference as one short sentence. Pure, so every rule is
//! unit-tested without root.

use std::fmt;

use crate::mac::format_mac;
use crate::observe::{LinkObservation, NsObservation};

use super::plan::{LabPlan, NsPlan};

/// How strictly to judge the queue count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queues {
    /// Every lab interface must have exactly this many TX and RX queues.
    Exactly(u16),
    /// Any count will do (as long as it is the same everywhere).
    Any,
}

/// One difference from a complete lab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Whether fixing it needs the namespaces and veths built again.
    pub rebuild: bool,
    /// Whether no DUT configuration could have caused it: the lab itself
    /// broke (a namespace or interface gone or down, forwarding off).
    pub fault: bool,
    pub text: String,
}

impl Problem {
    /// Namespaces, links and their fixed properties: only a rebuild fixes it.
    fn structure(text: String) -> Problem {
        Problem {
            rebuild: true,
            fault: true,
            text,
        }
    }

    /// Addresses, routes, neighbours, sysctls: applying the plan's
    /// configuration again fixes it in place.
    fn config(text: String) -> Problem {
        Problem {
            rebuild: false,
            fault: false,
            text,
        }
    }

    /// A sysctl that configurations leave alone: forwarding.
    fn forwarding(text: String) -> Problem {
        Problem {
            rebuild: false,
            fault: true,
            text,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Every way in which `observed` (one per namespace, in plan order) differs
/// from `plan`. Empty when the lab is complete.
pub fn problems(plan: &LabPlan, observed: &[NsObservation], queues: Queues) -> Vec<Problem> {
    // Missing namespaces first: they explain most of what follows.
    let mut out: Vec<Problem> = plan
        .namespaces
        .iter()
        .zip(observed)
        .filter(|(_, obs)| !obs.exists)
        .map(|(ns, _)| Problem::structure(format!("namespace {} does not exist", ns.name)))
        .collect();
    for (ns, obs) in plan.namespaces.iter().zip(observed) {
        if obs.exists {
            check_ns(plan, ns, obs, queues, &mut out);
        }
    }
    if queues == Queues::Any {
        let counts: Vec<(u32, u32)> = observed
            .iter()
            .flat_map(|o| &o.links)
            .filter(|l| plan.ifaces.iter().any(|i| i.name == l.name))
            .map(|l| (l.tx_queues, l.rx_queues))
            .collect();
        if counts.windows(2).any(|w| w[0] != w[1]) {
            out.push(Problem::structure(format!(
                "the interfaces' queue counts differ: {counts:?}"
            )));
        }
    }
    out
}

fn check_ns(
    plan: &LabPlan,
    ns: &NsPlan,
    obs: &NsObservation,
    queues: Queues,
    out: &mut Vec<Problem>,
) {
    let name = &ns.name;
    if !obs.lo_up {
        out.push(Problem::structure(format!("{name}: lo is down")));
    }
    // What hangs on a missing interface (its routes, neighbours and
    // sysctls) is gone with it and not listed again.
    let mut missing = Vec::new();
    for &role in &ns.ifaces {
        let want = plan.iface(role);
        let Some(link) = obs.link(want.name) else {
            out.push(Problem::structure(format!(
                "{name}: interface {} is missing",
                want.name
            )));
            missing.push(want.name);
            continue;
        };
        check_link(name, link, want.mac, queues, out);
        for a in [want.ipv4_cidr(), want.ipv6_cidr()] {
            if !link.addresses.contains(&a) {
                out.push(Problem::config(format!(
                    "{name}: {} lacks address {a}",
                    want.name
                )));
            }
        }
        if ns.ipv6_noprefixroute() {
            // The DUT's connected IPv6 /64 would cover the destination
            // range and bypass the static next hop (see LabPlan::new).
            let net = want.ipv6_cidr().network();
            let shadowing = obs
                .routes
                .iter()
                .any(|r| r.dst == net && r.dev.as_deref() == Some(want.name));
            if shadowing {
                out.push(Problem::structure(format!(
                    "{name}: a route to {net} dev {} shadows the static next hop",
                    want.name
                )));
            }
        }
    }
    for r in ns.routes.iter().filter(|r| !missing.contains(&r.dev)) {
        let found = obs
            .routes
            .iter()
            .any(|o| o.dst == r.dst && o.via == Some(r.via) && o.dev.as_deref() == Some(r.dev));
        if !found {
            out.push(Problem::config(format!(
                "{name}: route {} via {} dev {} is missing",
                r.dst, r.via, r.dev
            )));
        }
    }
    for n in ns.neighbours.iter().filter(|n| !missing.contains(&n.dev)) {
        let found = obs
            .neighbours
            .iter()
            .find(|o| o.addr == n.addr && o.dev == n.dev);
        match found {
            None => out.push(Problem::config(format!(
                "{name}: static neighbour {} dev {} is missing",
                n.addr, n.dev
            ))),
            Some(o) if o.mac != Some(n.mac) || o.state != "PERMANENT" => {
                out.push(Problem::config(format!(
                    "{name}: neighbour {} dev {} is {} {} (want {} PERMANENT)",
                    n.addr,
                    n.dev,
                    o.mac
                        .map(format_mac)
                        .unwrap_or_else(|| "without MAC".into()),
                    o.state,
                    format_mac(n.mac)
                )))
            }
            Some(_) => {}
        }
    }
    let on_missing = |key: &str| missing.iter().any(|m| key.contains(&format!(".{m}.")));
    for s in ns.sysctls().filter(|s| !on_missing(&s.key)) {
        let problem = if s.key.contains("forward") {
            Problem::forwarding
        } else {
            Problem::config
        };
        match obs.sysctls.get(&s.key) {
            Some(Some(v)) if *v == s.value => {}
            Some(Some(v)) => out.push(problem(format!(
                "{name}: {} is {v} (want {})",
                s.key, s.value
            ))),
            _ => out.push(problem(format!(
                "{name}: {} is missing (want {})",
                s.key, s.value
            ))),
        }
    }
}

/// The link's fixed properties; any difference needs a rebuild.
fn check_link(
    ns: &str,
    link: &LinkObservation,
    mac: [u8; 6],
    queues: Queues,
    out: &mut Vec<Problem>,
) {
    let name = &link.name;
    let mut bad = |text: String| out.push(Problem::structure(text));
    if link.mac != mac {
        bad(format!(
            "{ns}: {name} has MAC {} (want {})",
            format_mac(link.mac),
            format_mac(mac)
        ));
    }
    if link.kind.as_deref() != Some("veth") {
        bad(format!("{ns}: {name} is not a veth"));
    }
    if link.mtu != crate::netns::VETH_MTU {
        bad(format!(
            "{ns}: {name} has MTU {} (want {})",
            link.mtu,
            crate::netns::VETH_MTU
        ));
    }
    if !link.admin_up {
        bad(format!("{ns}: {name} is down"));
    } else if !link.carrier {
        bad(format!(
            "{ns}: {name} has no carrier (its peer is down or gone)"
        ));
    }
    if let Queues::Exactly(q) = queues {
        let q = q as u32;
        if link.tx_queues != q || link.rx_queues != q {
            bad(format!(
                "{ns}: {name} has {} TX and {} RX queues (want {q})",
                link.tx_queues, link.rx_queues
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::builtin::plan::NsRole;
    use crate::observe::{NeighObservation, RouteObservation};

    /// What a complete lab looks like when observed.
    fn complete(plan: &LabPlan) -> Vec<NsObservation> {
        plan.namespaces
            .iter()
            .map(|ns| NsObservation {
                name: ns.name.clone(),
                exists: true,
                lo_up: true,
                links: ns
                    .ifaces
                    .iter()
                    .enumerate()
                    .map(|(i, &role)| {
                        let want = plan.iface(role);
                        LinkObservation {
                            name: want.name.to_string(),
                            ifindex: 2 + i as u32,
                            mac: want.mac,
                            mtu: 9000,
                            admin_up: true,
                            carrier: true,
                            operstate: "UP".into(),
                            kind: Some("veth".into()),
                            tx_queues: plan.queues as u32,
                            rx_queues: plan.queues as u32,
                            addresses: vec![
                                want.ipv4_cidr(),
                                want.ipv6_cidr(),
                                "fe80::1/64".parse().unwrap(),
                            ],
                            counters: Default::default(),
                        }
                    })
                    .collect(),
                routes: ns
                    .routes
                    .iter()
                    .map(|r| RouteObservation {
                        dst: r.dst,
                        via: Some(r.via),
                        dev: Some(r.dev.to_string()),
                        onlink: r.onlink,
                    })
                    .collect(),
                neighbours: ns
                    .neighbours
                    .iter()
                    .map(|n| NeighObservation {
                        addr: n.addr,
                        dev: n.dev.to_string(),
                        mac: Some(n.mac),
                        state: "PERMANENT".into(),
                    })
                    .collect(),
                sysctls: ns
                    .sysctls()
                    .map(|s| (s.key.clone(), Some(s.value.clone())))
                    .collect::<BTreeMap<_, _>>(),
            })
            .collect()
    }

    #[test]
    fn complete_lab_has_no_problems() {
        let plan = LabPlan::new("t", 2);
        let obs = complete(&plan);
        assert_eq!(problems(&plan, &obs, Queues::Exactly(2)), []);
        assert_eq!(problems(&plan, &obs, Queues::Any), []);
    }

    #[test]
    fn each_difference_is_named() {
        let plan = LabPlan::new("t", 1);
        let dut = NsRole::Dut as usize;
        type Spoil = Box<dyn Fn(&mut Vec<NsObservation>)>;
        let cases: Vec<(&str, Spoil)> = vec![
            (
                "namespace t-rcv does not exist",
                Box::new(|o| {
                    o[2] = NsObservation {
                        name: "t-rcv".into(),
                        ..Default::default()
                    }
                }),
            ),
            ("t-gen: lo is down", Box::new(|o| o[0].lo_up = false)),
            (
                "t-dut: interface d1 is missing",
                Box::new(move |o| {
                    // With it go its routes, neighbours and sysctls: not listed again.
                    o[dut].links.retain(|l| l.name != "d1");
                    o[dut].routes.retain(|r| r.dev.as_deref() != Some("d1"));
                    o[dut].neighbours.retain(|n| n.dev != "d1");
                    o[dut].sysctls.retain(|k, _| !k.contains(".d1."));
                }),
            ),
            (
                "t-dut: d0 has MAC 02:00:00:00:00:09 (want 02:",
                Box::new(move |o| o[dut].links[0].mac = [2, 0, 0, 0, 0, 9]),
            ),
            (
                "t-gen: g0 is down",
                Box::new(|o| o[0].links[0].admin_up = false),
            ),
            (
                "t-gen: g0 has no carrier",
                Box::new(|o| o[0].links[0].carrier = false),
            ),
            (
                "t-gen: g0 has MTU 1500 (want 9000)",
                Box::new(|o| o[0].links[0].mtu = 1500),
            ),
            (
                "t-gen: g0 is not a veth",
                Box::new(|o| o[0].links[0].kind = None),
            ),
            (
                "t-rcv: r0 has 2 TX and 2 RX queues (want 1)",
                Box::new(|o| {
                    o[2].links[0].tx_queues = 2;
                    o[2].links[0].rx_queues = 2;
                }),
            ),
            (
                "t-rcv: r0 lacks address 2001:2:0:8000::201/64",
                Box::new(|o| o[2].links[0].addresses.retain(|a| a.is_ipv4())),
            ),
            (
                "t-dut: route 2001:2::/49 via 2001:2::208 dev d0 is missing",
                Box::new(move |o| {
                    o[dut].routes.pop();
                }),
            ),
            (
                "t-dut: route 198.19.0.0/16 via 198.19.0.208 dev d1 is missing",
                Box::new(move |o| o[dut].routes[0].via = Some("198.19.0.209".parse().unwrap())),
            ),
            (
                "t-dut: neighbour 198.19.0.208 dev d1 is ",
                Box::new(move |o| o[dut].neighbours[0].state = "REACHABLE".into()),
            ),
            (
                "t-gen: static neighbour 198.18.0.203 dev g0 is missing",
                Box::new(|o| {
                    o[0].neighbours.remove(0);
                }),
            ),
            (
                "t-dut: a route to 2001:2:0:8000::/64 dev d1 shadows the static next hop",
                Box::new(move |o| {
                    o[dut].routes.push(RouteObservation {
                        dst: "2001:2:0:8000::/64".parse().unwrap(),
                        via: None,
                        dev: Some("d1".into()),
                        onlink: false,
                    })
                }),
            ),
            (
                "t-dut: net.ipv4.ip_forward is 0 (want 1)",
                Box::new(move |o| {
                    o[dut]
                        .sysctls
                        .insert("net.ipv4.ip_forward".into(), Some("0".into()));
                }),
            ),
            (
                "t-rcv: net.ipv6.conf.r0.accept_dad is missing (want 0)",
                Box::new(|o| {
                    o[2].sysctls
                        .insert("net.ipv6.conf.r0.accept_dad".into(), None);
                }),
            ),
        ];
        // These are fixed by applying the configuration again; the rest
        // need the namespaces and veths rebuilt.
        let config = [
            "t-rcv: r0 lacks address",
            "t-dut: route ",
            "t-dut: neighbour ",
            "t-gen: static neighbour ",
            "t-dut: net.",
            "t-rcv: net.",
        ];
        for (want, spoil) in cases {
            let mut obs = complete(&plan);
            spoil(&mut obs);
            let got = problems(&plan, &obs, Queues::Exactly(1));
            assert_eq!(got.len(), 1, "{want}: {got:?}");
            assert!(
                got[0].text.starts_with(want),
                "want {want:?}, got {:?}",
                got[0]
            );
            let rebuild = !config.iter().any(|c| want.starts_with(c));
            assert_eq!(got[0].rebuild, rebuild, "{want}");
            // Faults are what no DUT configuration does: whatever needs a
            // rebuild, and forwarding turned off.
            let fault = rebuild || want == "t-dut: net.ipv4.ip_forward is 0 (want 1)";
            assert_eq!(got[0].fault, fault, "{want}");
        }
    }

    #[test]
    fn missing_namespaces_come_first() {
        let plan = LabPlan::new("t", 1);
        let mut obs = complete(&plan);
        obs[0].lo_up = false;
        for o in &mut obs[1..] {
            *o = NsObservation {
                name: o.name.clone(),
                ..Default::default()
            };
        }
        let texts: Vec<String> = problems(&plan, &obs, Queues::Exactly(1))
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(
            texts,
            [
                "namespace t-dut does not exist",
                "namespace t-rcv does not exist",
                "t-gen: lo is down"
            ]
        );
    }

    #[test]
    fn queue_count_is_judged_only_when_asked() {
        let plan = LabPlan::new("t", 1);
        let mut obs = complete(&plan);
        for o in &mut obs {
            for l in &mut o.links {
                l.tx_queues = 4;
                l.rx_queues = 4;
            }
        }
        assert_eq!(problems(&plan, &obs, Queues::Any), []);
        assert_eq!(problems(&plan, &obs, Queues::Exactly(1)).len(), 4);
        obs[0].links[0].tx_queues = 1;
        let got = problems(&plan, &obs, Queues::Any);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0]
            .text
            .starts_with("the interfaces' queue counts differ"));
        assert!(got[0].rebuild);
    }
}
