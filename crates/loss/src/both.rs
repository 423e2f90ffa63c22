//! Traffic both ways: one trial's loss placed per direction.
//!
//! Both directions cross the same ports, so the tracer's events and the
//! counters are split before each direction's loss is reconciled on its
//! own ([`crate::drops::reconcile_with_xdp`], with its own view of the
//! lab). What says the direction is the port and which way the frame
//! crossed it:
//!
//! - an interface's receive counters (`rx_*`) and its driver's drop
//!   statistics count the frames coming in, its transmit counters
//!   (`tx_*`) and its qdisc the frames going out: at the generator's port
//!   and the DUT's port facing the receiver the forward frames go out and
//!   the reverse ones come in; at the DUT's port facing the generator and
//!   at the receiver's port the other way round;
//! - a kernel event is on a frame's way out when its reason is one of the
//!   transmit path's (a qdisc's, a neighbour's, tc egress), else on its
//!   way in; XDP runs on frames coming in;
//! - a tester namespace's event at no lab port belongs to the direction
//!   sending from there when it is on a frame's way out, else to the
//!   direction received there.
//!
//! What nothing splits is placed in the total only, as "either
//! direction": a DUT event at no lab port (a loopback, a tunnel), the
//! ports a lab adds beyond its four, and the CPUs' backlog refusals that
//! no interface counted (softnet counts per CPU, not per frame).

use pktlab_engine::affinity::format_cpu_list;
use pktlab_engine::rx::RxSummary;
use pktlab_engine::tx::TxSummary;
use pktlab_io::droptrace::{BACKLOG_REASON, HOST};
use pktlab_io::iface::IfCounters;
use pktlab_io::xdpdrops::NamedXdpDrop;
use pktlab_lab::softnet::{self, SoftnetCpu};
use pktlab_lab::CpuPlan;

use crate::drops::{reconcile_with_xdp, Counters, Drops, HostDrop, LabView, LossSum, Place, Side};
use crate::monitor::{IfaceCounters, IfaceEthtool, IfaceQdisc};

/// A direction of traffic both ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// From the generator's port to the receiver's.
    Forward,
    /// From the receiver's port back to the generator's.
    Reverse,
}

/// The trial's loss: each direction's, and the total (their sum, and the
/// places of either direction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BothDrops {
    pub forward: Drops,
    pub reverse: Drops,
    pub total: Drops,
}

/// What a trial both ways measured: each direction's ends (forward,
/// reverse), and the lab's counters with the forward direction's roles.
pub struct BothCounters<'a> {
    pub ends: [(&'a TxSummary, &'a RxSummary); 2],
    pub ifaces: &'a [IfaceCounters],
    pub qdiscs: &'a [IfaceQdisc],
    pub ethtool: &'a [IfaceEthtool],
    pub softnet: &'a [SoftnetCpu],
}

/// The kernel drop reasons of a frame on its way out of an interface.
fn leaving(reason: &str) -> bool {
    const OUT: [&str; 7] = [
        "QDISC",
        "CAKE_",
        "FQ_",
        "TC_EGRESS",
        "NEIGH_",
        "DEV_READY",
        "FULL_RING",
    ];
    OUT.iter().any(|p| reason.starts_with(p))
}

/// The direction of a frame crossing the port of forward role `role`,
/// going out (`out`) or coming in; None for a port beyond the lab's four.
fn way_at(role: &str, out: bool) -> Option<Way> {
    match (role, out) {
        ("gen" | "dut_out", true) | ("dut_in" | "rcv", false) => Some(Way::Forward),
        ("gen" | "dut_out", false) | ("dut_in" | "rcv", true) => Some(Way::Reverse),
        _ => None,
    }
}

/// The role a port has in the other direction.
pub fn mirror_role(role: &str) -> String {
    match role {
        "gen" => "rcv",
        "rcv" => "gen",
        "dut_in" => "dut_out",
        "dut_out" => "dut_in",
        other => other,
    }
    .to_string()
}

/// One direction's share of the events and counters.
#[derive(Default)]
struct Part {
    kernel: Vec<HostDrop>,
    xdp: Vec<NamedXdpDrop>,
    ifaces: Vec<IfaceCounters>,
    qdiscs: Vec<IfaceQdisc>,
    ethtool: Vec<IfaceEthtool>,
}

/// The events and counters split: forward, reverse, either.
struct Split {
    ways: [Part; 2],
    either: Part,
}

impl Split {
    fn part(&mut self, way: Option<Way>) -> &mut Part {
        match way {
            Some(Way::Forward) => &mut self.ways[0],
            Some(Way::Reverse) => &mut self.ways[1],
            None => &mut self.either,
        }
    }
}

/// The forward role of the lab port at (`host`, `netns`, `iface`).
fn role_of<'a>(
    ifaces: &'a [IfaceCounters],
    host: Option<&str>,
    netns: &str,
    iface: &str,
) -> Option<&'a str> {
    ifaces
        .iter()
        .find(|w| {
            w.host.as_deref() == host
                && w.ns.as_deref().unwrap_or(HOST) == netns
                && w.iface == iface
        })
        .map(|w| w.role.as_str())
}

/// The direction of a drop at (`host`, `netns`, `iface`), going out or
/// coming in: by its lab port, else by its tester namespace.
fn way_of(
    view: &LabView,
    ifaces: &[IfaceCounters],
    at: (Option<&str>, &str, &str),
    out: bool,
) -> Option<Way> {
    let (host, netns, iface) = at;
    if let Some(role) = role_of(ifaces, host, netns, iface) {
        return way_at(role, out);
    }
    let ns = &view.namespaces;
    let at_gen = ns
        .gen
        .iter()
        .any(|g| g.host.as_deref() == host && g.netns == netns);
    let at_rcv = ns.rcv.host.as_deref() == host && ns.rcv.netns == netns;
    match (at_gen, at_rcv) {
        (true, false) => Some(if out { Way::Forward } else { Way::Reverse }),
        (false, true) => Some(if out { Way::Reverse } else { Way::Forward }),
        _ => None,
    }
}

/// An interface's counters with only the receive (`rx`) or transmit side.
fn half(c: &IfCounters, rx: bool) -> IfCounters {
    if rx {
        IfCounters {
            tx_packets: 0,
            tx_bytes: 0,
            tx_errors: 0,
            tx_dropped: 0,
            ..*c
        }
    } else {
        IfCounters {
            rx_packets: 0,
            rx_bytes: 0,
            rx_errors: 0,
            rx_dropped: 0,
            rx_missed_errors: 0,
            rx_fifo_errors: 0,
            ..*c
        }
    }
}

/// Splits the events and counters of a trial both ways.
fn split(view: &LabView, kernel: &[HostDrop], xdp: &[NamedXdpDrop], c: &BothCounters<'_>) -> Split {
    let mut s = Split {
        ways: [Part::default(), Part::default()],
        either: Part::default(),
    };
    for k in kernel {
        let at = (
            k.host.as_deref(),
            k.drop.netns.as_str(),
            k.drop.iface.as_str(),
        );
        let way = way_of(view, c.ifaces, at, leaving(&k.drop.reason));
        s.part(way).kernel.push(k.clone());
    }
    for x in xdp {
        let way = way_of(view, c.ifaces, (None, &x.netns, &x.iface), false);
        s.part(way).xdp.push(x.clone());
    }
    for w in c.ifaces {
        match (way_at(&w.role, false), way_at(&w.role, true)) {
            (Some(inward), Some(outward)) => {
                for (way, rx) in [(inward, true), (outward, false)] {
                    s.part(Some(way)).ifaces.push(IfaceCounters {
                        counters: half(&w.counters, rx),
                        ..w.clone()
                    });
                }
            }
            _ => s.either.ifaces.push(w.clone()),
        }
    }
    for q in c.qdiscs {
        s.part(way_at(&q.role, true)).qdiscs.push(q.clone());
    }
    for e in c.ethtool {
        s.part(way_at(&e.role, false)).ethtool.push(e.clone());
    }
    // The reverse direction's view names the ports by their roles in it.
    let rev = &mut s.ways[1];
    for w in &mut rev.ifaces {
        w.role = mirror_role(&w.role);
    }
    for q in &mut rev.qdiscs {
        q.role = mirror_role(&q.role);
    }
    for e in &mut rev.ethtool {
        e.role = mirror_role(&e.role);
    }
    s
}

/// Places each direction's loss with its own view of the lab
/// (`views`: forward, reverse; the forward one names the ports' roles in
/// `c`), then the total: the directions added up, and what only the
/// total can place (see the module's comment) as far as its unexplained
/// frames go. `kernel` is None when no tracer ran.
pub fn reconcile_both(
    views: [&LabView; 2],
    kernel: Option<&[HostDrop]>,
    xdp: &[NamedXdpDrop],
    c: &BothCounters<'_>,
) -> BothDrops {
    let s = split(views[0], kernel.unwrap_or_default(), xdp, c);
    let mut ways = Vec::new();
    for (i, part) in s.ways.iter().enumerate() {
        let counters = Counters {
            tx: c.ends[i].0,
            rx: c.ends[i].1,
            ifaces: &part.ifaces,
            qdiscs: &part.qdiscs,
            ethtool: &part.ethtool,
            softnet: c.softnet,
        };
        let traced = kernel.map(|_| part.kernel.as_slice());
        ways.push(without_cpu_leftover(reconcile_with_xdp(
            views[i], traced, &part.xdp, &counters,
        )));
    }
    let reverse = ways.pop().expect("two directions");
    let forward = ways.pop().expect("two directions");
    let total = total_of(views[0], kernel.is_some(), &forward, &reverse, &s.either, c);
    BothDrops {
        forward,
        reverse,
        total,
    }
}

/// A direction's drops less the CPUs' backlog refusals no interface
/// counted: per CPU, not per direction (the total places them once).
fn without_cpu_leftover(mut d: Drops) -> Drops {
    let (keep, leftover): (Vec<Place>, Vec<Place>) = std::mem::take(&mut d.places)
        .into_iter()
        .partition(|p| !(p.layer == "softnet" && p.location == "-"));
    for p in leftover {
        match p.side {
            Side::Dut => d.dut -= p.frames,
            Side::Tester => d.tester -= p.frames,
            Side::Unknown => {}
        }
        d.unexplained += p.frames;
    }
    d.places = keep;
    d.tester_limited = d.lost > 0 && d.tester * 2 > d.lost;
    d
}

/// The two directions added up, then the places of either direction as
/// far as the frames neither direction placed go.
fn total_of(
    view: &LabView,
    traced: bool,
    forward: &Drops,
    reverse: &Drops,
    either: &Part,
    c: &BothCounters<'_>,
) -> Drops {
    let sum = LossSum::of([forward, reverse]);
    let mut places = sum.places;
    let mut left = sum.unexplained;
    // The either-direction events and counters, reconciled as a loss of
    // the frames left (no ends of their own: nothing sent, nothing in a
    // ring).
    let none_tx = TxSummary {
        packets: left,
        ..c.ends[0].0.clone()
    };
    let none_rx = RxSummary {
        packets: 0,
        foreign: 0,
        ring_drops: 0,
        ..c.ends[0].1.clone()
    };
    let counters = Counters {
        tx: &none_tx,
        rx: &none_rx,
        ifaces: &either.ifaces,
        qdiscs: &either.qdiscs,
        ethtool: &either.ethtool,
        softnet: &[],
    };
    let no_cpus = LabView {
        cpus: None,
        ..view.clone()
    };
    let kernel = traced.then_some(either.kernel.as_slice());
    let mut extra = reconcile_with_xdp(&no_cpus, kernel, &either.xdp, &counters).places;
    if let Some(plan) = &view.cpus {
        extra.extend(cpu_leftover(plan, c.softnet, &places, view));
    }
    for mut p in extra {
        p.frames = p.frames.min(left);
        if p.frames > 0 {
            left -= p.frames;
            places.push(p);
        }
    }
    let side = |s: Side| {
        places
            .iter()
            .filter(|p| p.side == s)
            .map(|p| p.frames)
            .sum()
    };
    let (dut, tester): (u64, u64) = (side(Side::Dut), side(Side::Tester));
    Drops {
        lost: sum.lost,
        dut,
        tester,
        unexplained: left,
        places,
        traced,
        tracer_missed: 0,
        tester_limited: sum.lost > 0 && tester * 2 > sum.lost,
    }
}

/// The backlog refusals softnet counted on the lab's CPUs beyond every
/// refusal placed already (`placed`), by the side whose CPUs refused them
/// (isolated CPU plans only: a shared CPU's are no side's).
fn cpu_leftover(
    plan: &CpuPlan,
    softnet: &[SoftnetCpu],
    placed: &[Place],
    view: &LabView,
) -> Vec<Place> {
    if plan.is_shared() {
        return Vec::new();
    }
    let refused = |s: Side| -> u64 {
        placed
            .iter()
            .filter(|p| p.side == s && p.reason == BACKLOG_REASON)
            .map(|p| p.frames)
            .sum()
    };
    let tester_cpus: Vec<usize> = plan
        .tester_cpus
        .iter()
        .filter(|c| !plan.dut_cpus.contains(c))
        .copied()
        .collect();
    let dut_ns = view
        .namespaces
        .dut
        .first()
        .map_or_else(|| "-".into(), |d| d.netns.clone());
    let mut out = Vec::new();
    for (side, cpus, ns) in [
        (Side::Dut, &plan.dut_cpus, dut_ns),
        (
            Side::Tester,
            &tester_cpus,
            view.namespaces.rcv.netns.clone(),
        ),
    ] {
        let n = softnet::dropped_on(softnet, cpus).saturating_sub(refused(side));
        if n > 0 {
            out.push(Place {
                side,
                host: "local".into(),
                netns: ns,
                iface: format!("cpu {}", format_cpu_list(cpus)),
                layer: "softnet".into(),
                reason: BACKLOG_REASON.into(),
                location: "-".into(),
                frames: n,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
