//! Where a trial's lost frames went: the drop tracer's kernel events
//! (`pktlab_io::droptrace`) and the counters read around the trial,
//! reconciled into DUT-side places, tester-side places and what is left
//! unexplained (the run record's `drops`).
//!
//! - Kernel events count test frames only, so they come first. Only the
//!   lab's own namespaces count (other labs on the same host are not this
//!   run's). In the receiver's namespace only backlog drops count: the IP
//!   stack there drops every test frame after the packet socket counted it
//!   ("not for this host"), which is no loss.
//! - Counters (interfaces, softnet, the receiver's ring) count every frame
//!   and may describe the same frames as an event (a veth drop is both a
//!   kfree_skb and a tx_dropped), so they fill in only what the events
//!   left unexplained, at most that much.
//! - A bench trial's tracer ([`begin_for`]) skips the backlog's refusals
//!   (CPU_BACKLOG) and every namespace where a drop is no loss of the lab:
//!   at full load the DUT's backlog refuses half of what it gets, and the
//!   receiver's namespace frees every frame it counted, far too many
//!   frames to inspect one by one on the CPUs that do the lab's work. The
//!   refusals are placed from the kernel's own exact counts instead:
//!   softnet's `dropped` of the CPUs whose backlog refused them and the
//!   receiving interface's rx_dropped (places of layer `softnet`,
//!   "counted" in the text; the tracer's places are "traced").

use std::collections::HashMap;

use pktlab_engine::affinity::format_cpu_list;
use pktlab_engine::rx::RxSummary;
use pktlab_engine::tx::TxSummary;
use pktlab_io::droptrace::{netns_inode, NamedDrop, NetnsNames, BACKLOG_REASON, HOST, MAX_WATCHED};
use pktlab_io::xdpdrops::{NamedXdpDrop, XdpDropCause};
use pktlab_lab::ports::Port;
use pktlab_lab::softnet::{self, SoftnetCpu};
use pktlab_lab::CpuPlan;
use serde::{Deserialize, Serialize};

use crate::monitor::{IfaceCounters, IfaceEthtool, IfaceQdisc};
use crate::LossError;

/// `--drop-trace`: whether trials run the drop tracer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DropTrace {
    /// Where BPF is allowed; otherwise one line and counters only.
    #[default]
    Auto,
    /// Always; a run fails where BPF is not allowed.
    On,
    /// Counters only.
    Off,
}

impl std::str::FromStr for DropTrace {
    type Err = LossError;
    fn from_str(s: &str) -> Result<Self, LossError> {
        match s {
            "auto" => Ok(DropTrace::Auto),
            "on" => Ok(DropTrace::On),
            "off" => Ok(DropTrace::Off),
            _ => Err(LossError::Usage(format!(
                "invalid drop trace '{s}': use auto, on or off"
            ))),
        }
    }
}

impl DropTrace {
    /// A receiver's mode (`recv --drop-trace`): as `given`, else auto
    /// only when the generator's ranges are known (`ranges`) and frames
    /// come from an interface (`live`; nothing to trace in a file). Only
    /// then does the receiver know its whole loss (the streams that never
    /// arrived included), so a split of a bare receiver's loss would leave
    /// out what a blackhole took; and a plain receiver (another
    /// generator's frames) loads no BPF and puts no program on the
    /// kernel's drop path it did not ask for.
    pub fn for_receiver(
        given: Option<&str>,
        ranges: bool,
        live: bool,
    ) -> Result<DropTrace, LossError> {
        Ok(match given {
            Some(text) => text.parse()?,
            None if ranges && live => DropTrace::Auto,
            None => DropTrace::Off,
        })
    }
}

/// What the tracer saw in a window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traced {
    /// Test frames dropped, by place.
    pub places: Vec<NamedDrop>,
    /// Drop events the kernel did not hand to the tracer.
    pub missed: u64,
}

/// A kernel drop seen by the tracer of one of the lab's hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostDrop {
    /// None: this host; else the ssh destination whose worker saw it.
    pub host: Option<String>,
    pub drop: NamedDrop,
}

impl HostDrop {
    /// This host's drops.
    pub fn local(places: &[NamedDrop]) -> Vec<HostDrop> {
        Self::on(None, places)
    }

    /// The drops a worker on `host` saw (None: this host).
    pub fn on(host: Option<&str>, places: &[NamedDrop]) -> Vec<HostDrop> {
        places
            .iter()
            .map(|d| HostDrop {
                host: host.map(String::from),
                drop: d.clone(),
            })
            .collect()
    }
}

/// The kernel's drops over every host of a trial.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AllHosts {
    /// Every place, under its host; None when no host's tracer ran.
    pub places: Option<Vec<HostDrop>>,
    /// Drop events the tracers did not get, over every host.
    pub missed: u64,
    /// True only when every host's tracer ran.
    pub traced: bool,
}

/// Gathers this host's trace (`local`, None when its tracer did not run)
/// and each observing worker's (`remote`: its host and its trace, None
/// where its tracer did not run).
pub fn all_hosts(local: Option<Traced>, remote: Vec<(String, Option<Traced>)>) -> AllHosts {
    let mut all = AllHosts {
        traced: local.is_some(),
        missed: local.as_ref().map_or(0, |t| t.missed),
        places: local.map(|t| HostDrop::local(&t.places)),
    };
    for (host, t) in remote {
        let Some(t) = t else {
            all.traced = false;
            continue;
        };
        all.missed += t.missed;
        all.places
            .get_or_insert_with(Vec::new)
            .extend(HostDrop::on(Some(&host), &t.places));
    }
    all
}

/// The places a worker reports: its tracer sees every namespace of its
/// host's kernel, but only its ports' namespaces are the lab's. Its own
/// namespace, where its ports without a namespace are, is named `host`,
/// as the controller names such a port.
pub fn worker_places(traced: Traced, port_netns: &[Option<String>], own: &str) -> Traced {
    let keep = |ns: &str| {
        port_netns
            .iter()
            .any(|p| p.as_deref() == Some(ns) || (p.is_none() && ns == own))
    };
    let places = traced
        .places
        .into_iter()
        .filter(|d| keep(&d.netns))
        .map(|mut d| {
            if d.netns == own && !port_netns.iter().any(|p| p.as_deref() == Some(own)) {
                d.netns = HOST.to_string();
            }
            d
        })
        .collect();
    Traced {
        places,
        missed: traced.missed,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Says that the kernel skipped the tracer on `n` drop events, since it
/// was already running on that CPU: the places may hold fewer frames than
/// were dropped.
pub fn missed_line(n: u64) -> String {
    format!(
        "the drop tracer missed {n} kernel drop event{} (it was already running on that CPU): \
         the places may count fewer frames than were dropped",
        if n == 1 { "" } else { "s" }
    )
}

/// Says that a remote host's tracer could not start, and why.
pub fn remote_off_line(host: &str, why: &str) -> String {
    format!("drop trace off on {host}: {why}; the loss there is attributed from counters only")
}

/// Which side of the test a place is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Dut,
    Tester,
    /// Outside a known lab (`recv` or `gen` on their own): the place is
    /// named by its namespace and interface only.
    Unknown,
}

/// One place where lost frames went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub side: Side,
    /// The machine: `local` (this one), else the ssh destination of the
    /// host whose counter it is, as the lab file names it.
    pub host: String,
    pub netns: String,
    pub iface: String,
    /// `kernel` (a tracer event), `interface`, `softnet`, `qdisc`, `ring`.
    pub layer: String,
    /// The kernel's drop reason, or the counter's name.
    pub reason: String,
    /// The dropping function (kernel events), else `-`.
    pub location: String,
    pub frames: u64,
}

/// A trial's loss, split (the result line's `drops`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    pub lost: u64,
    pub dut: u64,
    pub tester: u64,
    pub unexplained: u64,
    pub places: Vec<Place>,
    /// The tracer ran (false: counters only).
    pub traced: bool,
    /// Kernel drop events the tracer was skipped on (it was already
    /// running on that CPU): of any frame, so no place; the places may
    /// count fewer test frames than were dropped by up to this many.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tracer_missed: u64,
    /// Most of the loss was on the tester's side: the trial measured the
    /// tester, not the DUT.
    pub tester_limited: bool,
}

/// What a trial measured besides the tracer.
pub struct Counters<'a> {
    pub tx: &'a TxSummary,
    pub rx: &'a RxSummary,
    pub ifaces: &'a [IfaceCounters],
    pub qdiscs: &'a [IfaceQdisc],
    /// The drivers' drop statistics that moved (`ethtool -S`).
    pub ethtool: &'a [IfaceEthtool],
    pub softnet: &'a [SoftnetCpu],
}

/// A namespace on one of the lab's hosts, as that host's tracer names
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NsAt {
    /// None: this host; else its ssh destination.
    pub host: Option<String>,
    pub netns: String,
}

impl NsAt {
    pub fn local(netns: &str) -> NsAt {
        NsAt {
            host: None,
            netns: netns.into(),
        }
    }

    /// A port's namespace on `host`: one without a namespace is in the
    /// host's own (`host`).
    pub fn of_port(host: Option<&str>, netns: &Option<String>) -> NsAt {
        NsAt {
            host: host.map(String::from),
            netns: netns.clone().unwrap_or_else(|| HOST.to_string()),
        }
    }

    fn is(&self, host: Option<&str>, netns: &str) -> bool {
        self.host.as_deref() == host && self.netns == netns
    }
}

/// The lab's namespaces as the tracers name them, by side and host: the
/// generators' and the receiver's are the tester's, the DUT ports' the
/// DUT's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabNamespaces {
    pub gen: Vec<NsAt>,
    pub rcv: NsAt,
    pub dut: Vec<NsAt>,
}

/// The lab as loss accounting sees it (made by the lab's owner,
/// `pktlab_trial::target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabView {
    pub namespaces: LabNamespaces,
    /// The receiver's port: its ring's drops, and its XDP drops that are
    /// no loss.
    pub rcv: Port,
    /// The ports are veth pairs (the built-in lab): a frame a peer's
    /// backlog refused counts at both ends.
    pub veth: bool,
    /// The lab's CPU plan when its CPUs are this host's (the built-in
    /// lab): the backlog refusals of the DUT's CPUs are the DUT's, the
    /// tester's CPUs' the tester's.
    pub cpus: Option<CpuPlan>,
}

/// This process's network namespace as the tracer names it: its `ip
/// netns` name, else `host`.
pub fn own_netns() -> String {
    match netns_inode(None) {
        Ok(ino) => NetnsNames::load().name(ino),
        Err(_) => HOST.to_string(),
    }
}

impl LabNamespaces {
    /// Namespaces all on this host.
    pub fn local(gen: &str, rcv: &str, dut: &[&str]) -> LabNamespaces {
        LabNamespaces {
            gen: vec![NsAt::local(gen)],
            rcv: NsAt::local(rcv),
            dut: dut.iter().map(|d| NsAt::local(d)).collect(),
        }
    }

    /// The built-in lab around a `gen` or `recv` run in namespace `own`
    /// (as [`own_netns`] names it): `<prefix>-gen`, `<prefix>-dut` and
    /// `<prefix>-rcv`, when `own` is the generator's or the receiver's and
    /// all three exist. None: no lab, sides unknown.
    pub fn builtin_around(own: &str) -> Option<LabNamespaces> {
        let prefix = own
            .strip_suffix("-rcv")
            .or_else(|| own.strip_suffix("-gen"))?;
        let (gen, rcv, dut) = (
            format!("{prefix}-gen"),
            format!("{prefix}-rcv"),
            format!("{prefix}-dut"),
        );
        [&gen, &rcv, &dut]
            .iter()
            .all(|n| netns_inode(Some(n)).is_ok())
            .then(|| LabNamespaces::local(&gen, &rcv, &[&dut]))
    }

    /// The namespaces of this host whose drops can be the lab's loss, as
    /// inodes for the tracer's watch list: the generators' and the DUT's,
    /// not the receiver's (where only the backlog's refusals are a loss,
    /// and a trial's tracer leaves those to the counters). Empty (every
    /// namespace) when one cannot be resolved or there are more than the
    /// tracer takes; `[0]` when no namespace of this host is one: 0 is no
    /// namespace's inode, only the key of a frame of no known namespace,
    /// which no side claims.
    pub fn watch_list(&self) -> Vec<u32> {
        let mut names: Vec<&str> = Vec::new();
        for ns in self.gen.iter().chain(&self.dut) {
            let local = ns.host.is_none() && !self.rcv.is(None, &ns.netns);
            if local && !names.contains(&ns.netns.as_str()) {
                names.push(&ns.netns);
            }
        }
        if names.is_empty() {
            return vec![0];
        }
        let inodes: Option<Vec<u32>> = names
            .iter()
            .map(|&n| netns_inode((n != HOST).then_some(n)).ok())
            .collect();
        match inodes {
            Some(v) if v.len() <= MAX_WATCHED => v,
            _ => Vec::new(),
        }
    }

    /// The side of a kernel event in `netns` on `host` (None: this one)
    /// with `reason`, or None when it is not this run's loss.
    pub fn side(&self, host: Option<&str>, netns: &str, reason: &str) -> Option<Side> {
        let is_gen = self.gen.iter().any(|g| g.is(host, netns));
        let is_rcv = self.rcv.is(host, netns);
        if self.dut.iter().any(|d| d.is(host, netns)) && !is_gen && !is_rcv {
            Some(Side::Dut)
        } else if is_rcv {
            (reason == "CPU_BACKLOG").then_some(Side::Tester)
        } else if is_gen {
            Some(Side::Tester)
        } else {
            None
        }
    }
}

/// The counter that also counts a kernel drop of `reason` at the same
/// interface: a qdisc's drops count its QDISC_DROP events, and the
/// backlog's refusals (CPU_BACKLOG) count in the receiving interface's
/// rx_dropped (the kernel's enqueue_to_backlog adds them there).
fn counter_of_kernel_reason(reason: &str) -> Option<&'static str> {
    match reason {
        "QDISC_DROP" => Some("qdisc"),
        BACKLOG_REASON => Some("rx_dropped"),
        _ => None,
    }
}

/// The role of the other end of `role`'s veth pair in the built-in lab
/// (the generator's and the DUT's way in, the DUT's way out and the
/// receiver's); None in a lab of real interfaces, whose ends count their
/// own frames.
fn veth_peer(lab: &LabView, role: &str) -> Option<&'static str> {
    if !lab.veth {
        return None;
    }
    match role {
        "gen" => Some("dut_in"),
        "dut_in" => Some("gen"),
        "dut_out" => Some("rcv"),
        "rcv" => Some("dut_out"),
        _ => None,
    }
}

/// One counter's frames: side, host (None: this one), namespace,
/// interface, layer, counter name, frames.
type CounterRow<'a> = (Side, Option<String>, String, String, &'a str, String, u64);

/// A place's `host`: `local` for this one, else the ssh destination.
fn host_name(host: &Option<String>) -> String {
    host.clone().unwrap_or_else(|| "local".into())
}

/// A counter's place on a host (None: this one): namespace, interface and
/// the counter (`qdisc` or `rx_dropped`).
type CounterKey = (Option<String>, String, String, &'static str);

/// The frames of one trial's loss placed so far.
struct Placing {
    places: Vec<Place>,
    /// What is lost and not placed yet.
    left: u64,
    /// The frames placed that a counter below counts too, by the
    /// counter's place: they are taken off that counter, so that a counter
    /// adds only the frames not placed yet at its own place (under load
    /// the tracer misses some; the rest must not land on another counter).
    seen: HashMap<CounterKey, u64>,
    /// This host's backlog refusals placed so far (events, then counted),
    /// by side: the DUT's and the tester's.
    backlog: (u64, u64),
}

impl Placing {
    /// Adds `p` as far as the loss not placed yet allows.
    fn push(&mut self, mut p: Place) {
        p.frames = p.frames.min(self.left);
        if p.frames > 0 {
            self.left -= p.frames;
            self.places.push(p);
        }
    }

    /// Counts `n` backlog refusals of this host as placed on `side`.
    fn add_backlog(&mut self, side: Side, n: u64) {
        match side {
            Side::Dut => self.backlog.0 += n,
            _ => self.backlog.1 += n,
        }
    }
}

/// Splits the trial's loss over the places, with the kernel events of
/// every host whose tracer ran (None: none ran).
pub fn reconcile(lab: &LabView, kernel: Option<&[HostDrop]>, c: &Counters<'_>) -> Drops {
    reconcile_with_xdp(lab, kernel, &[], c)
}

/// [`reconcile`], with the frames XDP dropped on this host
/// (`pktlab_io::xdpdrops`, named with the CPU queues' owners) placed after
/// the kernel events and before the counters.
pub fn reconcile_with_xdp(
    lab: &LabView,
    kernel: Option<&[HostDrop]>,
    xdp: &[NamedXdpDrop],
    c: &Counters<'_>,
) -> Drops {
    let received = c.rx.packets - c.rx.foreign;
    let lost = c.tx.packets.saturating_sub(received);
    let namespaces = &lab.namespaces;
    let mut p = Placing {
        places: Vec::new(),
        left: lost,
        seen: HashMap::new(),
        backlog: (0, 0),
    };
    place_events(&mut p, namespaces, kernel.unwrap_or_default());
    place_xdp(&mut p, lab, c, xdp);
    // Then the backlogs' refusals no event placed, from the kernel's own
    // counts (a trial's tracer leaves them all to these), then the other
    // counters, and last the CPUs' backlog refusals no lab interface
    // counted (softnet is the whole host's, shared with other labs).
    let leftover = match &lab.cpus {
        Some(plan) => counted_backlog(&mut p, plan, c, namespaces),
        None => Vec::new(),
    };
    place_counters(&mut p, lab, namespaces, c);
    for l in leftover {
        p.push(l);
    }
    let sum = |s: Side| {
        p.places
            .iter()
            .filter(|p| p.side == s)
            .map(|p| p.frames)
            .sum::<u64>()
    };
    let (dut, tester) = (sum(Side::Dut), sum(Side::Tester));
    Drops {
        lost,
        dut,
        tester,
        unexplained: p.left,
        traced: kernel.is_some(),
        tracer_missed: 0,
        tester_limited: lost > 0 && tester * 2 > lost,
        places: p.places,
    }
}

/// The kernel events that are this run's loss, as places.
fn place_events(p: &mut Placing, namespaces: &LabNamespaces, kernel: &[HostDrop]) {
    for HostDrop { host, drop: k } in kernel {
        let Some(side) = namespaces.side(host.as_deref(), &k.netns, &k.reason) else {
            continue;
        };
        if k.reason == BACKLOG_REASON && host.is_none() {
            p.add_backlog(side, k.frames);
        }
        if let Some(counter) = counter_of_kernel_reason(&k.reason) {
            *p.seen
                .entry((host.clone(), k.netns.clone(), k.iface.clone(), counter))
                .or_default() += k.frames;
        }
        p.push(Place {
            side,
            host: host_name(host),
            netns: k.netns.clone(),
            iface: k.iface.clone(),
            layer: "kernel".into(),
            reason: k.reason.clone(),
            location: k.location.clone(),
            frames: k.frames,
        });
    }
}

/// XDP's drops as places of layer `xdp`, sided as the namespace of their
/// place is. An XDP frame has no skb, so no kernel event counts it; but
/// some interface counters do, and those frames are noted as placed
/// (`Placing::seen`) so that the counters below add only the rest:
///
/// - a failed redirect or an exception at a veth counts in that veth's
///   driver statistics (`rx_queue_N_drops`, `rx_queue_N_xdp_drops`,
///   which its rx_dropped also counts and `interface_rows` leaves to
///   them);
/// - a transmit a veth's peer refused (its XDP ring full; a redirect's
///   or an XDP_TX) counts in that veth's tx_dropped and in the peer's
///   rx_dropped, as a peer's backlog refusal does: the peer's side's loss,
///   kept at the peer's rx_dropped by `interface_rows`' rule, so the
///   frames are taken off that counter; on a real port, off its own
///   tx_dropped;
/// - a full CPU queue (CPUMAP) or a failed skb there counts nowhere else.
///
/// The receiver's namespace is skipped: an XDP receiver drops every frame
/// it counted, and an AF_XDP receiver's full ring is its ring's drops.
fn place_xdp(p: &mut Placing, lab: &LabView, c: &Counters<'_>, xdp: &[NamedXdpDrop]) {
    let namespaces = &lab.namespaces;
    for x in xdp {
        if namespaces.rcv.is(None, &x.netns) {
            continue;
        }
        let Some(mut side) = namespaces.side(None, &x.netns, "") else {
            continue;
        };
        let port = c.ifaces.iter().find(|w| {
            w.host.is_none() && w.ns.as_deref().unwrap_or(HOST) == x.netns && w.iface == x.iface
        });
        match x.cause {
            XdpDropCause::RedirectError | XdpDropCause::Exception => {
                let key = (None, x.netns.clone(), x.iface.clone(), "ethtool");
                *p.seen.entry(key).or_default() += x.frames;
            }
            XdpDropCause::XmitRefused | XdpDropCause::XdpTxRefused => {
                let peer = port
                    .and_then(|w| veth_peer(lab, &w.role))
                    .and_then(|role| c.ifaces.iter().find(|w| w.role == role));
                let key = match peer {
                    Some(peer) => {
                        side = side_of_role(&peer.role);
                        let ns = peer.ns.clone().unwrap_or_else(|| HOST.to_string());
                        (peer.host.clone(), ns, peer.iface.clone(), "rx_dropped")
                    }
                    None => (None, x.netns.clone(), x.iface.clone(), "tx_dropped"),
                };
                *p.seen.entry(key).or_default() += x.frames;
            }
            XdpDropCause::CpuQueueFull | XdpDropCause::CpuAlloc => {}
        }
        p.push(Place {
            side,
            host: host_name(&None),
            netns: x.netns.clone(),
            iface: x.iface.clone(),
            layer: "xdp".into(),
            reason: xdp_reason(x),
            location: "-".into(),
            frames: x.frames,
        });
    }
}

/// An XDP place's reason: the cause, with the kernel's error
/// (`redirect_error(ENETDOWN)`) or an exception's action
/// (`exception(XDP_ABORTED)`) when there is one.
fn xdp_reason(x: &NamedXdpDrop) -> String {
    let cause = x.cause.name();
    if x.errno != "-" && !x.errno.is_empty() {
        format!("{cause}({})", x.errno)
    } else if x.cause == XdpDropCause::Exception && x.detail != "-" {
        format!("{cause}({})", x.detail)
    } else {
        cause.to_string()
    }
}

/// Places this host's backlog refusals that no event placed, from the
/// kernel's own counts: the kernel's enqueue_to_backlog adds each refusal
/// to softnet's `dropped` of the CPU whose backlog was full (whichever CPU
/// ran the refusal) and to the receiving interface's rx_dropped. So each
/// lab interface's rx_dropped not placed yet is placed at that interface
/// (its side), as far as the refusals that softnet counted on the lab's
/// CPUs and no place holds yet go: those are the frames refused at
/// CPU_BACKLOG, counted, not traced. Returns what softnet counted beyond
/// every lab interface, by the side whose CPUs refused it (isolated mode
/// only: a shared CPU's is no side's), to be placed last.
fn counted_backlog(
    p: &mut Placing,
    plan: &CpuPlan,
    c: &Counters<'_>,
    namespaces: &LabNamespaces,
) -> Vec<Place> {
    let mut cpus: Vec<usize> = plan
        .dut_cpus
        .iter()
        .chain(&plan.tester_cpus)
        .copied()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut pool = softnet::dropped_on(c.softnet, &cpus).saturating_sub(p.backlog.0 + p.backlog.1);
    let counted = |side, netns: &str, iface: &str, location: &str, frames| Place {
        side,
        host: host_name(&None),
        netns: netns.into(),
        iface: iface.into(),
        layer: "softnet".into(),
        reason: BACKLOG_REASON.into(),
        location: location.into(),
        frames,
    };
    for w in c.ifaces.iter().filter(|w| w.host.is_none()) {
        let ns = w.ns.clone().unwrap_or_else(|| HOST.to_string());
        let key: CounterKey = (None, ns.clone(), w.iface.clone(), "rx_dropped");
        let placed = p.seen.get(&key).copied().unwrap_or(0);
        let n = w.counters.rx_dropped.saturating_sub(placed).min(pool);
        if n == 0 {
            continue;
        }
        pool -= n;
        *p.seen.entry(key).or_default() += n;
        let side = side_of_role(&w.role);
        p.add_backlog(side, n);
        p.push(counted(side, &ns, &w.iface, "enqueue_to_backlog", n));
    }
    if plan.is_shared() {
        return Vec::new();
    }
    let tester_cpus: Vec<usize> = plan
        .tester_cpus
        .iter()
        .filter(|c| !plan.dut_cpus.contains(c))
        .copied()
        .collect();
    let dut_ns = namespaces
        .dut
        .first()
        .map_or_else(|| "-".into(), |d| d.netns.clone());
    let mut leftover = Vec::new();
    for (side, cpus, placed, ns) in [
        (Side::Dut, &plan.dut_cpus, p.backlog.0, dut_ns),
        (
            Side::Tester,
            &tester_cpus,
            p.backlog.1,
            namespaces.rcv.netns.clone(),
        ),
    ] {
        let n = softnet::dropped_on(c.softnet, cpus)
            .saturating_sub(placed)
            .min(pool);
        if n > 0 {
            pool -= n;
            let at = format!("cpu {}", format_cpu_list(cpus));
            leftover.push(counted(side, &ns, &at, "-", n));
        }
    }
    leftover
}

/// The side of a lab port by its role (`dut_in`, `gen`, ...).
fn side_of_role(role: &str) -> Side {
    if role.starts_with("dut") {
        Side::Dut
    } else {
        Side::Tester
    }
}

/// The counters, for what is left: the receiver's ring first (frames the
/// kernel had but the receiver never read), then each interface's drop
/// counters and its root qdisc's drops (a qdisc's drop does not count in
/// the interface's tx_dropped; a kernel event of the same frame,
/// QDISC_DROP, came first, so the qdisc adds only what the events missed,
/// and likewise rx_dropped after the backlog's refusals). A driver's own
/// drop statistics (ethtool) come before its interface's generic counters:
/// they name the cause of what rx_dropped or rx_missed_errors also count.
/// The qdisc and ethtool readers read this host only (a remote host's
/// ports are read by its worker, into `ifaces` with their host), so only
/// an interface counter can be another host's.
fn place_counters(p: &mut Placing, lab: &LabView, namespaces: &LabNamespaces, c: &Counters<'_>) {
    let mut counters: Vec<CounterRow> = vec![(
        Side::Tester,
        namespaces.rcv.host.clone(),
        namespaces.rcv.netns.clone(),
        lab.rcv.iface.clone(),
        "ring",
        "ring_drops".into(),
        c.rx.ring_drops,
    )];
    for e in c.ethtool {
        let ns = e.ns.clone().unwrap_or_else(|| HOST.to_string());
        // An XDP receiver (`recv --io xdp`) drops every frame it counted:
        // its interface's XDP drops are no loss.
        let counted_then_dropped =
            |name: &str| e.ns == lab.rcv.netns && e.iface == lab.rcv.iface && name.contains("xdp");
        // XDP's drops placed at this interface count here too: taken off
        // its statistics in their order.
        let xdp_key: CounterKey = (None, ns.clone(), e.iface.clone(), "ethtool");
        let mut placed_by_xdp = p.seen.remove(&xdp_key).unwrap_or(0);
        for (name, n) in e.drops.iter().filter(|d| !counted_then_dropped(&d.0)) {
            let same = placed_by_xdp.min(*n);
            placed_by_xdp -= same;
            counters.push((
                side_of_role(&e.role),
                None,
                ns.clone(),
                e.iface.clone(),
                "interface",
                name.clone(),
                n - same,
            ));
        }
    }
    for w in c.ifaces {
        interface_rows(&mut counters, lab, c, w);
    }
    for q in c.qdiscs {
        let ns = q.ns.clone().unwrap_or_else(|| HOST.to_string());
        counters.push((
            side_of_role(&q.role),
            None,
            ns,
            q.iface.clone(),
            "qdisc",
            format!("{} drops", q.counters.kind),
            q.counters.drops,
        ));
    }
    for (side, host, ns, iface, layer, reason, n) in counters {
        // A counter describes the places of its own host only (the ring's
        // frames are no kernel event).
        let counter = match (layer, reason.as_str()) {
            ("qdisc", _) => Some("qdisc"),
            ("interface", "rx_dropped") => Some("rx_dropped"),
            ("interface", "tx_dropped") => Some("tx_dropped"),
            _ => None,
        };
        let placed = counter
            .and_then(|counter| {
                p.seen
                    .get_mut(&(host.clone(), ns.clone(), iface.clone(), counter))
            })
            .map(std::mem::take)
            .unwrap_or(0);
        p.push(Place {
            side,
            host: host_name(&host),
            netns: ns,
            iface,
            layer: layer.into(),
            reason,
            location: "-".into(),
            frames: n.saturating_sub(placed),
        });
    }
}

/// One interface's generic drop counters, less what its driver's own
/// statistics (ethtool) already name.
fn interface_rows<'a>(
    counters: &mut Vec<CounterRow<'a>>,
    lab: &LabView,
    c: &Counters<'_>,
    w: &IfaceCounters,
) {
    let side = side_of_role(&w.role);
    let ns = w.ns.clone().unwrap_or_else(|| HOST.to_string());
    let k = &w.counters;
    // A veth counts a frame its peer's backlog refused twice: in its own
    // tx_dropped and in the peer's rx_dropped (the kernel's
    // enqueue_to_backlog adds it there). The peer, where it was refused,
    // keeps them.
    let peer = veth_peer(lab, &w.role);
    let refused_by_peer = peer
        .and_then(|peer| c.ifaces.iter().find(|p| p.role == peer))
        .map_or(0, |p| p.counters.rx_dropped.min(k.tx_dropped));
    // The rest of a veth's tx_dropped are frames its peer did not take
    // either (its ring full: an XDP receiver's NAPI thread behind; its
    // MTU; down): the peer's side's loss, d1's the receiver's and g0's the
    // DUT's. A real interface's are its own side's.
    let tx_side = peer.map_or(side, side_of_role);
    // What the driver's statistics of this interface already placed (read
    // on this host only).
    let mut covered: u64 = c
        .ethtool
        .iter()
        .filter(|e| w.host.is_none() && e.ns == w.ns && e.iface == w.iface)
        .flat_map(|e| e.drops.iter().map(|d| d.1))
        .sum();
    for (name, n, side) in [
        ("rx_dropped", k.rx_dropped, side),
        ("rx_missed_errors", k.rx_missed_errors, side),
        ("rx_fifo_errors", k.rx_fifo_errors, side),
        ("rx_errors", k.rx_errors, side),
        ("tx_dropped", k.tx_dropped - refused_by_peer, tx_side),
        ("tx_errors", k.tx_errors, side),
    ] {
        let same = n.min(covered);
        covered -= same;
        counters.push((
            side,
            w.host.clone(),
            ns.clone(),
            w.iface.clone(),
            "interface",
            name.into(),
            n - same,
        ));
    }
}

/// The side of a kernel event seen by a `gen` or `recv` run outside
/// bench, or None when it is no loss of this run: in the built-in lab
/// around it, as bench decides; without a lab, the receiver's own
/// namespace keeps only its backlog's refusals (the IP stack there drops
/// every test frame "not for this host" after the packet socket counted
/// it) and every other place is named by namespace and interface.
fn side_outside_bench(
    lab: Option<&LabNamespaces>,
    receiver: Option<&str>,
    netns: &str,
    reason: &str,
) -> Option<Side> {
    match lab {
        Some(lab) => lab.side(None, netns, reason),
        None if receiver == Some(netns) => (reason == "CPU_BACKLOG").then_some(Side::Tester),
        None => Some(Side::Unknown),
    }
}

/// A kernel event as a place on this host.
fn kernel_place(side: Side, k: &NamedDrop, frames: u64) -> Place {
    Place {
        side,
        host: host_name(&None),
        netns: k.netns.clone(),
        iface: k.iface.clone(),
        layer: "kernel".into(),
        reason: k.reason.clone(),
        location: k.location.clone(),
        frames,
    }
}

/// What `pktlab recv` saw of its loss.
pub struct ReceiverLoss<'a> {
    /// Frames lost: the sequence gaps, plus the frames of the streams
    /// that never arrived when the generator's ranges are known.
    pub lost: u64,
    /// Frames the receiver's ring dropped (counted in the gaps too).
    pub ring_drops: u64,
    /// The receiver's namespace, as [`own_netns`] names it, and interface.
    pub netns: &'a str,
    pub iface: &'a str,
}

/// Splits a `recv` run's loss over the kernel places the tracer saw on
/// this host during the receive (every namespace: the built-in lab's DUT
/// is one), then the receiver's ring; the rest is unexplained. `lab`: the
/// built-in lab around the receiver, which gives the sides.
pub fn reconcile_receiver(
    loss: &ReceiverLoss<'_>,
    kernel: Option<&[NamedDrop]>,
    lab: Option<&LabNamespaces>,
) -> Drops {
    let mut left = loss.lost;
    let mut places = Vec::new();
    for k in kernel.unwrap_or_default() {
        let Some(side) = side_outside_bench(lab, Some(loss.netns), &k.netns, &k.reason) else {
            continue;
        };
        let n = k.frames.min(left);
        if n > 0 {
            left -= n;
            places.push(kernel_place(side, k, n));
        }
    }
    let n = loss.ring_drops.min(left);
    if n > 0 {
        left -= n;
        places.push(Place {
            side: Side::Tester,
            host: host_name(&None),
            netns: loss.netns.into(),
            iface: loss.iface.into(),
            layer: "ring".into(),
            reason: "ring_drops".into(),
            location: "-".into(),
            frames: n,
        });
    }
    let sum = |s: Side| {
        places
            .iter()
            .filter(|p| p.side == s)
            .map(|p| p.frames)
            .sum::<u64>()
    };
    let (dut, tester) = (sum(Side::Dut), sum(Side::Tester));
    Drops {
        lost: loss.lost,
        dut,
        tester,
        unexplained: left,
        traced: kernel.is_some(),
        tracer_missed: 0,
        tester_limited: loss.lost > 0 && tester * 2 > loss.lost,
        places,
    }
}

/// The kernel's drops of test frames on this host during a `gen` run, by
/// place (gen cannot know the loss: nothing is reconciled). In the
/// built-in lab around the generator only the lab's places count, as in
/// bench; without a lab, every place.
pub fn host_drops(kernel: &[NamedDrop], lab: Option<&LabNamespaces>) -> Vec<Place> {
    kernel
        .iter()
        .filter_map(|k| {
            let side = side_outside_bench(lab, None, &k.netns, &k.reason)?;
            Some(kernel_place(side, k, k.frames))
        })
        .collect()
}

/// The loss of several runs added up (one configuration's, for `pktlab
/// compare` and the report): the sides, and each place's frames summed
/// over the runs where it is the same place.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LossSum {
    /// Runs whose loss was attributed.
    pub runs: usize,
    /// Of them, attributed from counters only (the tracer did not run).
    pub untraced: usize,
    pub lost: u64,
    pub dut: u64,
    pub tester: u64,
    pub unexplained: u64,
    /// Most frames first; equal counts in the order first seen.
    pub places: Vec<Place>,
    /// Runs that were tester-limited.
    pub tester_limited: usize,
    /// Kernel drop events the tracers missed over the runs: the places
    /// may hold up to this many frames fewer than were dropped there.
    #[serde(skip_serializing_if = "is_zero")]
    pub tracer_missed: u64,
}

impl LossSum {
    /// Adds one run's drops.
    pub fn add(&mut self, d: &Drops) {
        self.runs += 1;
        self.untraced += usize::from(!d.traced);
        self.tester_limited += usize::from(d.tester_limited);
        self.tracer_missed += d.tracer_missed;
        self.lost += d.lost;
        self.dut += d.dut;
        self.tester += d.tester;
        self.unexplained += d.unexplained;
        for p in &d.places {
            let same = |q: &&mut Place| {
                Place {
                    frames: 0,
                    ..(*q).clone()
                } == Place {
                    frames: 0,
                    ..p.clone()
                }
            };
            match self.places.iter_mut().find(same) {
                Some(q) => q.frames += p.frames,
                None => self.places.push(p.clone()),
            }
        }
        // A stable sort: equal counts keep the order first seen.
        self.places.sort_by_key(|p| std::cmp::Reverse(p.frames));
    }

    /// The sum of `drops`.
    pub fn of<'a>(drops: impl IntoIterator<Item = &'a Drops>) -> LossSum {
        let mut s = LossSum::default();
        for d in drops {
            s.add(d);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use pktlab_io::qdisc::QdiscCounters;

    use super::*;

    #[test]
    fn tracer_misses_are_in_the_record_only_when_there_are_some() {
        let mut d = Drops {
            lost: 3,
            dut: 2,
            tester: 0,
            unexplained: 1,
            places: vec![],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        let text = serde_json::to_string(&d).unwrap();
        assert_eq!(
            text,
            r#"{"lost":3,"dut":2,"tester":0,"unexplained":1,"places":[],"traced":true,"tester_limited":false}"#
        );
        // A record written before the field reads as no misses.
        assert_eq!(serde_json::from_str::<Drops>(&text).unwrap(), d);
        d.tracer_missed = 5;
        let text = serde_json::to_string(&d).unwrap();
        assert!(
            text.contains(r#""traced":true,"tracer_missed":5,"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Drops>(&text).unwrap(), d);
    }

    #[test]
    fn the_missed_line_names_the_count() {
        assert_eq!(
            missed_line(1),
            "the drop tracer missed 1 kernel drop event (it was already running on that CPU): \
             the places may count fewer frames than were dropped"
        );
        assert!(missed_line(12).starts_with("the drop tracer missed 12 kernel drop events ("));
    }
    /// [`reconcile`] with this host's kernel events only.
    fn reconcile_here(lab: &LabView, kernel: Option<&[NamedDrop]>, c: &Counters<'_>) -> Drops {
        let kernel = kernel.map(HostDrop::local);
        reconcile(lab, kernel.as_deref(), c)
    }

    /// A lab of real ports in namespaces `gen`, `dut` and `rcv`.
    fn lab() -> LabView {
        LabView {
            namespaces: LabNamespaces::local("gen", "rcv", &["dut", "dut"]),
            rcv: Port::new("r0", Some("rcv")),
            veth: false,
            cpus: None,
        }
    }

    fn summaries(sent: u64, received: u64) -> (TxSummary, RxSummary) {
        let tx = serde_json::from_value(serde_json::json!({
            "backend": "t", "packets": sent, "bytes": 0, "seconds": 1.0, "pps": 0.0,
            "l2_bps": 0.0, "l1_bps": 0.0, "tx_errors": 0, "interrupted": false,
            "threads": [], "iface": null
        }))
        .unwrap();
        let rx = serde_json::from_value(serde_json::json!({
            "backend": "t", "packets": received, "bytes": 0, "seconds": 1.0, "pps": 0.0,
            "l2_bps": 0.0, "l1_bps": 0.0, "flows": 0, "streams": 0, "lost": 0,
            "out_of_order": 0, "duplicates": 0, "foreign": 0, "ring_drops": 0,
            "latency_ns": null, "interrupted": false, "threads": [], "iface": null
        }))
        .unwrap();
        (tx, rx)
    }

    #[test]
    fn every_hosts_drops_and_misses_add_up_and_one_host_untraced_makes_the_trial_untraced() {
        let local = Traced {
            places: vec![event("pktlab-dut", "d0", "NETFILTER_DROP", 600)],
            missed: 3,
        };
        let b = Traced {
            places: vec![
                event("host", "d0", "NETFILTER_DROP", 300),
                event("host", "d1", "QDISC_DROP", 40),
            ],
            missed: 14,
        };
        let all = all_hosts(Some(local.clone()), vec![("hostb".into(), Some(b.clone()))]);
        assert_eq!(all.missed, 17);
        assert!(all.traced);
        let places = all.places.expect("places");
        let named: Vec<(Option<&str>, &str, u64)> = places
            .iter()
            .map(|p| (p.host.as_deref(), p.drop.iface.as_str(), p.drop.frames))
            .collect();
        assert_eq!(
            named,
            [
                (None, "d0", 600),
                (Some("hostb"), "d0", 300),
                (Some("hostb"), "d1", 40)
            ]
        );
        // A host whose tracer did not run: its misses are unknown, the
        // others' places stay, and the trial is not traced.
        let all = all_hosts(
            Some(local.clone()),
            vec![("hostb".into(), Some(b.clone())), ("hostc".into(), None)],
        );
        assert_eq!((all.missed, all.traced), (17, false));
        assert_eq!(all.places.map(|p| p.len()), Some(3));
        // This host's tracer off: the remote places alone, not traced.
        let all = all_hosts(None, vec![("hostb".into(), Some(b))]);
        assert_eq!((all.missed, all.traced), (14, false));
        assert_eq!(all.places.map(|p| p.len()), Some(2));
        // No tracer anywhere: no places at all (counters only).
        assert_eq!(
            all_hosts(None, vec![("hostb".into(), None)]),
            AllHosts {
                places: None,
                missed: 0,
                traced: false
            }
        );
        // Only this host, traced.
        let all = all_hosts(Some(local), Vec::new());
        assert_eq!((all.missed, all.traced), (3, true));
    }

    fn event(netns: &str, iface: &str, reason: &str, frames: u64) -> NamedDrop {
        NamedDrop {
            netns: netns.into(),
            iface: iface.into(),
            reason: reason.into(),
            location: "__dev_queue_xmit".into(),
            frames,
        }
    }

    #[test]
    fn a_qdisc_counter_adds_only_what_the_kernel_events_missed() {
        // 1000 sent, 0 received: the DUT's egress qdisc dropped all 1000
        // and says so; the tracer saw 700 of them (QDISC_DROP), plus the
        // receiver's own "not for this host" drops and another lab's.
        let lab = lab();
        let (tx, rx) = summaries(1000, 0);
        let qdiscs = [IfaceQdisc {
            role: "dut_out".into(),
            ns: Some("dut".into()),
            iface: "d1".into(),
            counters: QdiscCounters {
                kind: "tbf".into(),
                drops: 1000,
                overlimits: 1500,
            },
        }];
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &[],
            qdiscs: &qdiscs,
            ethtool: &[],
            softnet: &[],
        };
        let kernel = [
            event("dut", "d1", "QDISC_DROP", 700),
            event("rcv", "r0", "OTHERHOST", 50),
            event("elsewhere", "d1", "QDISC_DROP", 99),
        ];
        let d = reconcile_here(&lab, Some(&kernel), &c);
        let place = |layer: &str, reason: &str, location: &str, frames| Place {
            side: Side::Dut,
            host: "local".into(),
            netns: "dut".into(),
            iface: "d1".into(),
            layer: layer.into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        };
        assert_eq!(
            d,
            Drops {
                lost: 1000,
                dut: 1000,
                tester: 0,
                unexplained: 0,
                places: vec![
                    place("kernel", "QDISC_DROP", "__dev_queue_xmit", 700),
                    place("qdisc", "tbf drops", "-", 300),
                ],
                traced: true,
                tracer_missed: 0,
                tester_limited: false,
            }
        );
        // Counters only: the qdisc explains all 1000.
        let d = reconcile_here(&lab, None, &c);
        assert_eq!(d.places, vec![place("qdisc", "tbf drops", "-", 1000)]);
        assert_eq!((d.dut, d.unexplained, d.traced), (1000, 0, false));
        // A driver's statistic comes before its interface's generic
        // counters, which count the same frames (d1's 40 tx_dropped are
        // its 40 rx_queue_0_drops); the receiver's XDP drops are frames an
        // XDP receiver counted, no loss.
        let ethtool = [
            IfaceEthtool {
                role: "dut_out".into(),
                ns: Some("dut".into()),
                iface: "d1".into(),
                drops: vec![("rx_queue_0_drops".into(), 40)],
            },
            IfaceEthtool {
                role: "rcv".into(),
                ns: Some("rcv".into()),
                iface: "r0".into(),
                drops: vec![("rx_queue_0_xdp_drops".into(), 999)],
            },
        ];
        let ifaces = [crate::monitor::IfaceCounters {
            role: "dut_out".into(),
            ns: Some("dut".into()),
            host: None,
            iface: "d1".into(),
            counters: pktlab_io::iface::IfCounters {
                tx_dropped: 40,
                ..Default::default()
            },
        }];
        let (tx, rx) = summaries(1045, 0);
        let d = reconcile(
            &lab,
            None,
            &Counters {
                tx: &tx,
                rx: &rx,
                ifaces: &ifaces,
                qdiscs: &qdiscs,
                ethtool: &ethtool,
                softnet: &[],
            },
        );
        assert_eq!(
            d.places,
            vec![
                place("interface", "rx_queue_0_drops", "-", 40),
                place("qdisc", "tbf drops", "-", 1000),
            ]
        );
        assert_eq!((d.lost, d.dut, d.unexplained), (1045, 1040, 5));
        // A qdisc that dropped less than was lost leaves the rest unexplained.
        let (tx, rx) = summaries(1200, 0);
        let d = reconcile(
            &lab,
            None,
            &Counters {
                tx: &tx,
                rx: &rx,
                ..c
            },
        );
        assert_eq!((d.lost, d.dut, d.unexplained), (1200, 1000, 200));
    }

    fn xdp_drop(
        netns: &str,
        iface: &str,
        cause: XdpDropCause,
        errno: &str,
        frames: u64,
    ) -> NamedXdpDrop {
        NamedXdpDrop {
            netns: netns.into(),
            iface: iface.into(),
            peer: "-".into(),
            cause,
            error: "-".into(),
            errno: errno.into(),
            detail: "-".into(),
            frames,
        }
    }

    #[test]
    fn xdps_drops_are_placed_once_beside_the_counters_that_count_them_too() {
        // xdp-forward on the built-in lab: 1000 sent, 700 received. XDP
        // dropped 200 at d0's full CPU queue, 30 redirects failed at d0
        // (veth counts them in d0's rx_queue_0_drops, which its rx_dropped
        // counts too), and r0's ring refused 50 that d1 transmitted (d1's
        // tx_dropped and r0's rx_dropped both count them); r0's backlog
        // refused 20 more (in r0's rx_dropped only). The receiver's own
        // XDP drops and another lab's are no loss of this run.
        let iface = |role: &str, ns: &str, name: &str, rx_dropped, tx_dropped| {
            crate::monitor::IfaceCounters {
                role: role.into(),
                ns: Some(ns.into()),
                host: None,
                iface: name.into(),
                counters: pktlab_io::iface::IfCounters {
                    rx_dropped,
                    tx_dropped,
                    ..Default::default()
                },
            }
        };
        let ifaces = [
            iface("gen", "gen", "g0", 0, 0),
            iface("dut_in", "dut", "d0", 30, 0),
            iface("dut_out", "dut", "d1", 0, 50),
            iface("rcv", "rcv", "r0", 70, 0),
        ];
        let ethtool = [IfaceEthtool {
            role: "dut_in".into(),
            ns: Some("dut".into()),
            iface: "d0".into(),
            drops: vec![("rx_queue_0_drops".into(), 30)],
        }];
        let xdp = [
            xdp_drop("dut", "d0", XdpDropCause::CpuQueueFull, "-", 200),
            xdp_drop("dut", "d0", XdpDropCause::RedirectError, "ENETDOWN", 30),
            xdp_drop("dut", "d1", XdpDropCause::XmitRefused, "-", 50),
            xdp_drop("rcv", "r0", XdpDropCause::RedirectError, "ENOSPC", 9),
            xdp_drop("elsewhere", "d0", XdpDropCause::CpuQueueFull, "-", 7),
        ];
        let (tx, rx) = summaries(1000, 700);
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &[],
            ethtool: &ethtool,
            softnet: &[],
        };
        let at = |side, ns: &str, iface: &str, layer: &str, reason: &str, frames| Place {
            side,
            host: "local".into(),
            netns: ns.into(),
            iface: iface.into(),
            layer: layer.into(),
            reason: reason.into(),
            location: "-".into(),
            frames,
        };
        let builtin = LabView {
            veth: true,
            ..lab()
        };
        let d = reconcile_with_xdp(&builtin, None, &xdp, &c);
        assert_eq!(
            d.places,
            vec![
                at(Side::Dut, "dut", "d0", "xdp", "cpu_queue_full", 200),
                at(
                    Side::Dut,
                    "dut",
                    "d0",
                    "xdp",
                    "redirect_error(ENETDOWN)",
                    30
                ),
                // The peer's ring was full: the receiver's side, as d1's
                // tx_dropped beyond r0's backlog refusals is.
                at(Side::Tester, "dut", "d1", "xdp", "xmit_refused", 50),
                at(Side::Tester, "rcv", "r0", "interface", "rx_dropped", 20),
            ]
        );
        assert_eq!((d.lost, d.dut, d.tester, d.unexplained), (300, 230, 70, 0));
        // Without the XDP tracer the same counters explain 50 + 20 at r0
        // and the driver's 30 at d0; the CPU queue's 200 stay unexplained.
        let d = reconcile(&builtin, None, &c);
        assert_eq!(
            d.places,
            vec![
                at(Side::Dut, "dut", "d0", "interface", "rx_queue_0_drops", 30),
                at(Side::Tester, "rcv", "r0", "interface", "rx_dropped", 70),
            ]
        );
        assert_eq!(d.unexplained, 200);

        // Real ports count their own frames: d1's refused transmits are
        // the DUT's, and taken off d1's tx_dropped, not added to it.
        let ifaces = [
            iface("dut_in", "dut", "d0", 30, 0),
            iface("dut_out", "dut", "d1", 0, 50),
        ];
        let (tx, rx) = summaries(1000, 716);
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            ..c
        };
        let d = reconcile_with_xdp(&lab(), None, &xdp[..3], &c);
        assert_eq!(
            d.places[2],
            at(Side::Dut, "dut", "d1", "xdp", "xmit_refused", 50)
        );
        assert_eq!(d.places.len(), 3, "{:?}", d.places);
        assert_eq!((d.lost, d.dut, d.tester, d.unexplained), (284, 280, 0, 4));
    }

    #[test]
    fn an_xdp_reason_names_the_error_or_the_action() {
        let mut x = xdp_drop("dut", "d0", XdpDropCause::Exception, "-", 1);
        x.detail = "XDP_ABORTED".into();
        assert_eq!(xdp_reason(&x), "exception(XDP_ABORTED)");
        let x = xdp_drop("dut", "d0", XdpDropCause::RedirectError, "EOPNOTSUPP", 1);
        assert_eq!(xdp_reason(&x), "redirect_error(EOPNOTSUPP)");
        let x = xdp_drop("dut", "d0", XdpDropCause::CpuQueueFull, "-", 1);
        assert_eq!(xdp_reason(&x), "cpu_queue_full");
    }

    #[test]
    fn a_veth_frame_refused_by_its_peer_is_placed_once_at_the_peer() {
        // 100 sent, 90 received: the DUT's backlog refused 6 on d0, and
        // the receiver's refused 4 that d1 sent, which d1's tx_dropped and
        // r0's rx_dropped both count.
        let iface = |role: &str, ns: &str, name: &str, rx_dropped, tx_dropped| {
            crate::monitor::IfaceCounters {
                role: role.into(),
                ns: Some(ns.into()),
                host: None,
                iface: name.into(),
                counters: pktlab_io::iface::IfCounters {
                    rx_dropped,
                    tx_dropped,
                    ..Default::default()
                },
            }
        };
        let ifaces = [
            iface("dut_in", "dut", "d0", 6, 0),
            iface("dut_out", "dut", "d1", 0, 4),
            iface("rcv", "rcv", "r0", 4, 0),
        ];
        let (tx, rx) = summaries(100, 90);
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &[],
            ethtool: &[],
            softnet: &[],
        };
        let at = |side, ns: &str, iface: &str, reason: &str, frames| Place {
            side,
            host: "local".into(),
            netns: ns.into(),
            iface: iface.into(),
            layer: "interface".into(),
            reason: reason.into(),
            location: "-".into(),
            frames,
        };
        // The built-in lab's ports are veth pairs: the 4 are the
        // receiver's (the tester's side), once.
        let builtin = LabView {
            veth: true,
            ..lab()
        };
        let d = reconcile_here(&builtin, None, &c);
        assert_eq!(
            d.places,
            vec![
                at(Side::Dut, "dut", "d0", "rx_dropped", 6),
                at(Side::Tester, "rcv", "r0", "rx_dropped", 4),
            ]
        );
        assert_eq!((d.lost, d.dut, d.tester, d.unexplained), (10, 6, 4, 0));
        // Real interfaces count their own frames: d1's 4 come first.
        let d = reconcile_here(&lab(), None, &c);
        assert_eq!(
            d.places,
            vec![
                at(Side::Dut, "dut", "d0", "rx_dropped", 6),
                at(Side::Dut, "dut", "d1", "tx_dropped", 4),
            ]
        );
        assert_eq!((d.dut, d.tester, d.unexplained), (10, 0, 0));

        // d1 could not hand 7 more to r0 (its ring was full: r0's NAPI
        // thread fell behind), which only d1's tx_dropped counts: in the
        // built-in lab they are the receiver's loss; on real interfaces,
        // d1's own.
        let ifaces = [
            iface("dut_in", "dut", "d0", 6, 0),
            iface("dut_out", "dut", "d1", 0, 11),
            iface("rcv", "rcv", "r0", 4, 0),
        ];
        let (tx, rx) = summaries(100, 83);
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            ..c
        };
        let d = reconcile_here(&builtin, None, &c);
        assert_eq!(
            d.places,
            vec![
                at(Side::Dut, "dut", "d0", "rx_dropped", 6),
                at(Side::Tester, "dut", "d1", "tx_dropped", 7),
                at(Side::Tester, "rcv", "r0", "rx_dropped", 4),
            ]
        );
        assert_eq!((d.lost, d.dut, d.tester, d.unexplained), (17, 6, 11, 0));
        let d = reconcile_here(&lab(), None, &c);
        assert_eq!((d.dut, d.tester, d.unexplained), (17, 0, 0));
    }

    #[test]
    fn what_the_tracer_missed_stays_at_its_own_interface() {
        // 1000 sent, 0 received. The DUT's egress qdisc on d1 dropped 900
        // and its CPU backlog refused 100 arriving on d0 (d0's rx_dropped
        // and the DUT CPU's softnet count both say 100). Under load the
        // tracer saw 850 QDISC_DROP and 70 CPU_BACKLOG: the 50 and 30 it
        // missed belong to d1's qdisc and d0's backlog (counted: d0's
        // rx_dropped and softnet both have 30 more than the events), and
        // the softnet counter adds nothing more (the same 100 are placed).
        let mut lab = lab();
        lab.cpus = Some(pktlab_lab::CpuPlan {
            mode: pktlab_lab::CpuMode::Isolated,
            dut_cpus: vec![1],
            tester_cpus: vec![0],
        });
        let (tx, rx) = summaries(1000, 0);
        let qdiscs = [IfaceQdisc {
            role: "dut_out".into(),
            ns: Some("dut".into()),
            iface: "d1".into(),
            counters: QdiscCounters {
                kind: "tbf".into(),
                drops: 900,
                overlimits: 950,
            },
        }];
        let ifaces = [crate::monitor::IfaceCounters {
            role: "dut_in".into(),
            ns: Some("dut".into()),
            host: None,
            iface: "d0".into(),
            counters: pktlab_io::iface::IfCounters {
                rx_dropped: 100,
                ..Default::default()
            },
        }];
        let softnet = [SoftnetCpu {
            cpu: 1,
            processed: 5000,
            dropped: 100,
            time_squeeze: 3,
        }];
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &qdiscs,
            ethtool: &[],
            softnet: &softnet,
        };
        let mut backlog = event("dut", "d0", "CPU_BACKLOG", 70);
        backlog.location = "enqueue_to_backlog".into();
        let kernel = [event("dut", "d1", "QDISC_DROP", 850), backlog];
        let d = reconcile_here(&lab, Some(&kernel), &c);
        let at = |iface: &str, layer: &str, reason: &str, location: &str, frames| Place {
            side: Side::Dut,
            host: "local".into(),
            netns: "dut".into(),
            iface: iface.into(),
            layer: layer.into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        };
        assert_eq!(
            d.places,
            vec![
                at("d1", "kernel", "QDISC_DROP", "__dev_queue_xmit", 850),
                at("d0", "kernel", "CPU_BACKLOG", "enqueue_to_backlog", 70),
                at("d0", "softnet", "CPU_BACKLOG", "enqueue_to_backlog", 30),
                at("d1", "qdisc", "tbf drops", "-", 50),
            ]
        );
        assert_eq!((d.lost, d.dut, d.unexplained), (1000, 1000, 0));
        // Counters only, with 20 more lost than the counters explain: the
        // 100 refusals are counted once, at d0, and the softnet counter
        // does not count them a second time.
        let (tx, rx) = summaries(1020, 0);
        let d = reconcile(
            &lab,
            None,
            &Counters {
                tx: &tx,
                rx: &rx,
                ..c
            },
        );
        assert_eq!(
            d.places,
            vec![
                at("d0", "softnet", "CPU_BACKLOG", "enqueue_to_backlog", 100),
                at("d1", "qdisc", "tbf drops", "-", 900),
            ]
        );
        assert_eq!((d.lost, d.dut, d.unexplained), (1020, 1000, 20));
    }

    /// An interface's counters in the lab of [`lab`].
    fn port(
        role: &str,
        ns: &str,
        iface: &str,
        rx_dropped: u64,
        tx_dropped: u64,
    ) -> crate::monitor::IfaceCounters {
        crate::monitor::IfaceCounters {
            role: role.into(),
            ns: Some(ns.into()),
            host: None,
            iface: iface.into(),
            counters: pktlab_io::iface::IfCounters {
                rx_dropped,
                tx_dropped,
                ..Default::default()
            },
        }
    }

    fn softnet_dropped(cpu: usize, dropped: u64) -> SoftnetCpu {
        SoftnetCpu {
            cpu,
            processed: 0,
            dropped,
            time_squeeze: 0,
        }
    }

    fn counted(side: Side, ns: &str, iface: &str, location: &str, frames: u64) -> Place {
        Place {
            side,
            host: "local".into(),
            netns: ns.into(),
            iface: iface.into(),
            layer: "softnet".into(),
            reason: "CPU_BACKLOG".into(),
            location: location.into(),
            frames,
        }
    }

    #[test]
    fn a_full_duts_backlog_refusals_are_counted_when_the_tracer_leaves_them() {
        // A default run at full speed: 1916928 sent, 893334 received; the
        // DUT's backlog (CPU 1) refused the other 1023594, which d0's
        // rx_dropped and CPU 1's softnet `dropped` both count. The trial's
        // tracer ran but leaves CPU_BACKLOG to these counters: it saw
        // nothing. Every lost frame is placed, once, at d0, as counted.
        let mut lab = lab();
        lab.cpus = Some(pktlab_lab::CpuPlan {
            mode: pktlab_lab::CpuMode::Isolated,
            dut_cpus: vec![1],
            tester_cpus: vec![0],
        });
        let (tx, rx) = summaries(1_916_928, 893_334);
        let ifaces = [
            port("gen", "gen", "g0", 0, 0),
            port("dut_in", "dut", "d0", 1_023_594, 0),
            port("dut_out", "dut", "d1", 0, 0),
            port("rcv", "rcv", "r0", 0, 0),
        ];
        let softnet = [softnet_dropped(0, 0), softnet_dropped(1, 1_023_594)];
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &[],
            ethtool: &[],
            softnet: &softnet,
        };
        let d = reconcile_here(&lab, Some(&[]), &c);
        assert_eq!(
            d,
            Drops {
                lost: 1_023_594,
                dut: 1_023_594,
                tester: 0,
                unexplained: 0,
                places: vec![counted(
                    Side::Dut,
                    "dut",
                    "d0",
                    "enqueue_to_backlog",
                    1_023_594
                )],
                traced: true,
                tracer_missed: 0,
                tester_limited: false,
            }
        );
        // The tracer off: the same place, counters only.
        let d = reconcile_here(&lab, None, &c);
        assert_eq!((d.places.len(), d.dut, d.traced), (1, 1_023_594, false));
    }

    #[test]
    fn softnet_beyond_the_interfaces_lands_on_the_side_of_its_cpus() {
        // Isolated: the DUT on CPU 1, the tester on CPU 0. d0's backlog
        // (CPU 1) refused 600, r0's (CPU 0) 200, which d1's tx_dropped
        // counts too (veth). Softnet counted 650 on CPU 1 and 230 on CPU
        // 0: 50 and 30 refusals of no lab interface. 890 lost: 600 + 200
        // + 50 + 30 + 10 that nothing explains.
        let mut lab = lab();
        let isolated = pktlab_lab::CpuPlan {
            mode: pktlab_lab::CpuMode::Isolated,
            dut_cpus: vec![1],
            tester_cpus: vec![0],
        };
        lab.cpus = Some(isolated);
        lab.veth = true;
        let (tx, rx) = summaries(1890, 1000);
        let ifaces = [
            port("gen", "gen", "g0", 0, 0),
            port("dut_in", "dut", "d0", 600, 0),
            port("dut_out", "dut", "d1", 0, 200),
            port("rcv", "rcv", "r0", 200, 0),
        ];
        let softnet = [softnet_dropped(0, 230), softnet_dropped(1, 650)];
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &[],
            ethtool: &[],
            softnet: &softnet,
        };
        let d = reconcile_here(&lab, Some(&[]), &c);
        assert_eq!(
            d.places,
            vec![
                counted(Side::Dut, "dut", "d0", "enqueue_to_backlog", 600),
                counted(Side::Tester, "rcv", "r0", "enqueue_to_backlog", 200),
                counted(Side::Dut, "dut", "cpu 1", "-", 50),
                counted(Side::Tester, "rcv", "cpu 0", "-", 30),
            ]
        );
        assert_eq!(
            (d.lost, d.dut, d.tester, d.unexplained),
            (890, 650, 230, 10)
        );
        // The same with the tracer's events of 500 of d0's refusals and
        // 150 of r0's: the events come first, the counters add the rest,
        // and each side's CPUs still add only what their softnet counted
        // beyond their own interfaces.
        let mut d0 = event("dut", "d0", "CPU_BACKLOG", 500);
        d0.location = "enqueue_to_backlog".into();
        let mut r0 = event("rcv", "r0", "CPU_BACKLOG", 150);
        r0.location = "enqueue_to_backlog".into();
        let d = reconcile_here(&lab, Some(&[d0.clone(), r0.clone()]), &c);
        assert_eq!(
            d.places,
            vec![
                kernel_place(Side::Dut, &d0, 500),
                kernel_place(Side::Tester, &r0, 150),
                counted(Side::Dut, "dut", "d0", "enqueue_to_backlog", 100),
                counted(Side::Tester, "rcv", "r0", "enqueue_to_backlog", 50),
                counted(Side::Dut, "dut", "cpu 1", "-", 50),
                counted(Side::Tester, "rcv", "cpu 0", "-", 30),
            ]
        );
        assert_eq!((d.dut, d.tester, d.unexplained), (650, 230, 10));
        // The DUT's CPU alone counted more than d0 (CPU 0 nothing beyond
        // r0): every extra frame is the DUT's, none the tester's.
        let softnet = [softnet_dropped(0, 200), softnet_dropped(1, 680)];
        let d = reconcile_here(
            &lab,
            Some(&[]),
            &Counters {
                softnet: &softnet,
                ..c
            },
        );
        assert_eq!((d.dut, d.tester, d.unexplained), (680, 200, 10));
        assert_eq!(d.places[2..], [counted(Side::Dut, "dut", "cpu 1", "-", 80)]);
        // Shared mode: every CPU is both sides', so what softnet counted
        // beyond the interfaces is no side's and stays unexplained; the
        // interfaces still say whose refusals theirs were.
        lab.cpus = Some(pktlab_lab::CpuPlan::shared(&[0, 1]));
        let d = reconcile_here(&lab, Some(&[]), &c);
        assert_eq!(
            d.places,
            vec![
                counted(Side::Dut, "dut", "d0", "enqueue_to_backlog", 600),
                counted(Side::Tester, "rcv", "r0", "enqueue_to_backlog", 200),
            ]
        );
        assert_eq!((d.dut, d.tester, d.unexplained), (600, 200, 90));
    }

    #[test]
    fn an_interfaces_refusals_are_counted_only_as_far_as_softnet_counted_them() {
        // d0's rx_dropped says 300, but the lab's CPUs refused only 200
        // at their backlogs: the other 100 are d0's other drops (its ring
        // full, say), placed by the interface counter, not as CPU_BACKLOG.
        let mut lab = lab();
        lab.cpus = Some(pktlab_lab::CpuPlan {
            mode: pktlab_lab::CpuMode::Isolated,
            dut_cpus: vec![1],
            tester_cpus: vec![0],
        });
        let (tx, rx) = summaries(1300, 1000);
        let ifaces = [port("dut_in", "dut", "d0", 300, 0)];
        let softnet = [softnet_dropped(0, 0), softnet_dropped(1, 200)];
        let d = reconcile_here(
            &lab,
            Some(&[]),
            &Counters {
                tx: &tx,
                rx: &rx,
                ifaces: &ifaces,
                qdiscs: &[],
                ethtool: &[],
                softnet: &softnet,
            },
        );
        assert_eq!(
            d.places,
            vec![
                counted(Side::Dut, "dut", "d0", "enqueue_to_backlog", 200),
                Place {
                    layer: "interface".into(),
                    reason: "rx_dropped".into(),
                    location: "-".into(),
                    ..counted(Side::Dut, "dut", "d0", "-", 100)
                },
            ]
        );
        assert_eq!((d.dut, d.unexplained), (300, 0));
    }

    #[test]
    fn the_tracer_watches_the_generators_and_duts_namespaces_only() {
        // This process's namespace (`host`) is the generator's and the
        // DUT's: one inode, once.
        let own = netns_inode(None).unwrap();
        let lab = LabNamespaces::local(HOST, "pktlab-no-such-rcv", &[HOST]);
        assert_eq!(lab.watch_list(), vec![own]);
        // Everything in the receiver's namespace: no namespace of this
        // host holds a loss, so none is watched (0 is no namespace).
        let lab = LabNamespaces::local(HOST, HOST, &[HOST]);
        assert_eq!(lab.watch_list(), vec![0]);
        // A namespace that cannot be resolved: every namespace.
        let lab = LabNamespaces::local("pktlab-no-such-gen", HOST, &[HOST]);
        assert!(lab.watch_list().is_empty());
    }

    #[test]
    fn a_counter_read_on_another_host_carries_that_host() {
        // 1300 sent, 0 received. The DUT is reached over ssh as
        // root@dut1: its worker read d0's rx_dropped 600 and d1's
        // tx_dropped 300 there. This host's tracer saw 100 CPU_BACKLOG at
        // an interface also named d0 in this host's namespace, and the
        // driver of a d1 here counted 300 drops: neither is a frame of the
        // remote counters of the same names, so those stay whole.
        let mut lab = lab();
        // The DUT's ports are no port of this host.
        lab.namespaces.dut = Vec::new();
        let (tx, rx) = summaries(1300, 0);
        let remote = |role: &str, iface: &str, counters| crate::monitor::IfaceCounters {
            role: role.into(),
            ns: None,
            host: Some("root@dut1".into()),
            iface: iface.into(),
            counters,
        };
        let ifaces = [
            remote(
                "dut_in",
                "d0",
                pktlab_io::iface::IfCounters {
                    rx_dropped: 600,
                    ..Default::default()
                },
            ),
            remote(
                "dut_out",
                "d1",
                pktlab_io::iface::IfCounters {
                    tx_dropped: 300,
                    ..Default::default()
                },
            ),
        ];
        let ethtool = [IfaceEthtool {
            role: "gen".into(),
            ns: None,
            iface: "d1".into(),
            drops: vec![("rx_queue_0_drops".into(), 300)],
        }];
        let mut backlog = event(HOST, "d0", "CPU_BACKLOG", 100);
        backlog.location = "enqueue_to_backlog".into();
        // This host's namespace is the generator's here.
        lab.namespaces.gen = vec![NsAt::local(HOST)];
        let kernel = [backlog.clone()];
        let d = reconcile_here(
            &lab,
            Some(&kernel),
            &Counters {
                tx: &tx,
                rx: &rx,
                ifaces: &ifaces,
                qdiscs: &[],
                ethtool: &ethtool,
                softnet: &[],
            },
        );
        let remote_d0 = Place {
            side: Side::Dut,
            host: "root@dut1".into(),
            netns: HOST.into(),
            iface: "d0".into(),
            layer: "interface".into(),
            reason: "rx_dropped".into(),
            location: "-".into(),
            frames: 600,
        };
        assert_eq!(
            d.places,
            vec![
                kernel_place(Side::Tester, &backlog, 100),
                Place {
                    side: Side::Tester,
                    host: "local".into(),
                    iface: "d1".into(),
                    reason: "rx_queue_0_drops".into(),
                    frames: 300,
                    ..remote_d0.clone()
                },
                remote_d0.clone(),
                Place {
                    iface: "d1".into(),
                    reason: "tx_dropped".into(),
                    frames: 300,
                    ..remote_d0
                },
            ]
        );
        assert_eq!(
            (d.lost, d.dut, d.tester, d.unexplained),
            (1300, 900, 400, 0)
        );
    }

    #[test]
    fn a_receivers_loss_goes_to_the_places_of_its_lab() {
        // recv in lab-rcv lost 2500: 2000 nft drops in lab-dut, 300
        // backlog refusals and 900 "not for this host" drops in its own
        // namespace (no loss), 50 dropped in another lab (not this run's),
        // 150 ring drops; 50 unexplained.
        let lab = LabNamespaces::local("lab-gen", "lab-rcv", &["lab-dut"]);
        let mut nft = event("lab-dut", "d0", "NETFILTER_DROP", 2000);
        nft.location = "nft_do_chain".into();
        let mut backlog = event("lab-rcv", "r0", "CPU_BACKLOG", 300);
        backlog.location = "enqueue_to_backlog".into();
        let mut otherhost = event("lab-rcv", "r0", "OTHERHOST", 900);
        otherhost.location = "ip_rcv_core".into();
        let kernel = [
            nft.clone(),
            otherhost,
            backlog.clone(),
            event("x-dut", "d0", "NETFILTER_DROP", 50),
        ];
        let loss = ReceiverLoss {
            lost: 2500,
            ring_drops: 150,
            netns: "lab-rcv",
            iface: "r0",
        };
        let d = reconcile_receiver(&loss, Some(&kernel), Some(&lab));
        let ring = Place {
            side: Side::Tester,
            host: "local".into(),
            netns: "lab-rcv".into(),
            iface: "r0".into(),
            layer: "ring".into(),
            reason: "ring_drops".into(),
            location: "-".into(),
            frames: 150,
        };
        assert_eq!(
            d,
            Drops {
                lost: 2500,
                dut: 2000,
                tester: 450,
                unexplained: 50,
                places: vec![
                    kernel_place(Side::Dut, &nft, 2000),
                    kernel_place(Side::Tester, &backlog, 300),
                    ring.clone(),
                ],
                traced: true,
                tracer_missed: 0,
                tester_limited: false,
            }
        );
        // Without a lab: every other namespace's drops, by namespace (the
        // other lab's 50 too); still none of its own "not for this host".
        let d = reconcile_receiver(&loss, Some(&kernel), None);
        let unknown = |k: &NamedDrop| kernel_place(Side::Unknown, k, k.frames);
        assert_eq!(
            d.places,
            vec![
                unknown(&nft),
                kernel_place(Side::Tester, &backlog, 300),
                unknown(&kernel[3]),
                Place {
                    frames: 150,
                    ..ring.clone()
                },
            ]
        );
        assert_eq!((d.dut, d.tester, d.unexplained), (0, 450, 0));
        // The tracer off: the ring only; no loss, no place.
        let d = reconcile_receiver(&loss, None, Some(&lab));
        assert_eq!(d.places, vec![ring]);
        assert_eq!((d.unexplained, d.traced), (2350, false));
        let d = reconcile_receiver(&ReceiverLoss { lost: 0, ..loss }, Some(&kernel), Some(&lab));
        assert_eq!((d.places.len(), d.unexplained), (0, 0));
    }

    #[test]
    fn a_remote_duts_drops_are_placed_on_its_host_and_no_other_hosts() {
        // The DUT is hostb, watched by a worker; the generator and the
        // receiver are here. 1000 sent, 0 received. hostb's tracer saw 600
        // nft drops on d0, 300 qdisc drops on d1 and 40 backlog refusals
        // on d0, whose rx_dropped (read there) says 50: it adds 10. This
        // host's tracer saw drops in its own `host` namespace, which is no
        // port of this lab here, and hostc is no host of the lab.
        let mut lab = lab();
        // d0 and d1, in hostb's own namespace.
        lab.namespaces.dut = vec![NsAt::of_port(Some("hostb"), &None); 2];
        let (tx, rx) = summaries(1000, 0);
        let ifaces = [crate::monitor::IfaceCounters {
            role: "dut_in".into(),
            ns: None,
            host: Some("hostb".into()),
            iface: "d0".into(),
            counters: pktlab_io::iface::IfCounters {
                rx_dropped: 50,
                ..Default::default()
            },
        }];
        let c = Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &ifaces,
            qdiscs: &[],
            ethtool: &[],
            softnet: &[],
        };
        let at = |host: Option<&str>, e: NamedDrop| HostDrop {
            host: host.map(String::from),
            drop: e,
        };
        let kernel = [
            at(Some("hostb"), event("host", "d0", "NETFILTER_DROP", 600)),
            at(Some("hostb"), event("host", "d1", "QDISC_DROP", 300)),
            at(Some("hostb"), event("host", "d0", "CPU_BACKLOG", 40)),
            at(None, event("host", "d0", "NETFILTER_DROP", 999)),
            at(None, event("dut", "d0", "NETFILTER_DROP", 999)),
            at(Some("hostc"), event("host", "r0", "CPU_BACKLOG", 999)),
        ];
        let d = reconcile(&lab, Some(&kernel), &c);
        let place = |iface: &str, layer: &str, reason: &str, location: &str, frames| Place {
            side: Side::Dut,
            host: "hostb".into(),
            netns: "host".into(),
            iface: iface.into(),
            layer: layer.into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        };
        let q = "__dev_queue_xmit";
        assert_eq!(
            d.places,
            vec![
                place("d0", "kernel", "NETFILTER_DROP", q, 600),
                place("d1", "kernel", "QDISC_DROP", q, 300),
                place("d0", "kernel", "CPU_BACKLOG", q, 40),
                place("d0", "interface", "rx_dropped", "-", 10),
            ]
        );
        assert_eq!((d.lost, d.dut, d.tester, d.unexplained), (1000, 950, 0, 50));
    }

    #[test]
    fn a_worker_keeps_its_ports_namespaces_and_calls_its_own_host() {
        // A worker in namespace `ns-b` with ports there (no namespace
        // given) and in `x`: `other` is another lab's.
        let traced = Traced {
            places: vec![
                event("ns-b", "d0", "NETFILTER_DROP", 10),
                event("x", "d1", "QDISC_DROP", 5),
                event("other", "d0", "NETFILTER_DROP", 7),
            ],
            missed: 3,
        };
        let kept = worker_places(traced, &[None, Some("x".into())], "ns-b");
        assert_eq!(
            kept,
            Traced {
                places: vec![
                    event("host", "d0", "NETFILTER_DROP", 10),
                    event("x", "d1", "QDISC_DROP", 5),
                ],
                missed: 3,
            }
        );
        // Ports all in named namespaces: the worker's own is not the lab's.
        let traced = Traced {
            places: vec![event("ns-b", "d0", "NETFILTER_DROP", 10)],
            missed: 0,
        };
        assert!(worker_places(traced, &[Some("x".into())], "ns-b")
            .places
            .is_empty());
    }

    #[test]
    fn a_generator_sees_its_labs_drops_only() {
        let lab = LabNamespaces::local("lab-gen", "lab-rcv", &["lab-dut"]);
        let mut blackhole = event("lab-dut", "d0", "NOT_SPECIFIED", 100);
        blackhole.location = "ip_error".into();
        let kernel = [
            blackhole.clone(),
            event("lab-rcv", "r0", "OTHERHOST", 900),
            event("x-dut", "d0", "NETFILTER_DROP", 50),
        ];
        assert_eq!(
            host_drops(&kernel, Some(&lab)),
            vec![kernel_place(Side::Dut, &blackhole, 100)]
        );
        // Without a lab every place is this host's, of no known side.
        let all: Vec<u64> = host_drops(&kernel, None)
            .iter()
            .filter(|p| p.side == Side::Unknown)
            .map(|p| p.frames)
            .collect();
        assert_eq!(all, [100, 900, 50]);
    }

    fn place(side: Side, iface: &str, reason: &str, location: &str, frames: u64) -> Place {
        Place {
            side,
            host: "local".into(),
            netns: "lab-dut".into(),
            iface: iface.into(),
            layer: "kernel".into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        }
    }

    fn drops(lost: u64, unexplained: u64, places: Vec<Place>, traced: bool) -> Drops {
        let side = |s| {
            places
                .iter()
                .filter(|p| p.side == s)
                .map(|p| p.frames)
                .sum()
        };
        Drops {
            lost,
            dut: side(Side::Dut),
            tester: side(Side::Tester),
            unexplained,
            tester_limited: false,
            traced,
            tracer_missed: 0,
            places,
        }
    }

    #[test]
    fn runs_add_up_by_place() {
        let nft = |n| place(Side::Dut, "d0", "NETFILTER_DROP", "nft_do_chain", n);
        let ring = |n| Place {
            layer: "ring".into(),
            ..place(Side::Tester, "r0", "ring_drops", "-", n)
        };
        let runs = [
            drops(2000, 0, vec![nft(2000)], true),
            drops(2100, 30, vec![nft(1970), ring(100)], true),
            drops(0, 0, vec![], true),
            drops(500, 0, vec![ring(500)], false),
        ];
        let s = LossSum::of(&runs);
        // 2000 + 2100 + 0 + 500 lost; nft 2000 + 1970, the ring 100 + 500.
        assert_eq!(
            (s.runs, s.untraced, s.lost, s.dut, s.tester, s.unexplained),
            (4, 1, 4600, 3970, 600, 30)
        );
        assert_eq!(s.places, vec![nft(3970), ring(600)]);
        // The same reason in another interface is another place.
        let other = place(Side::Dut, "d1", "NETFILTER_DROP", "nft_do_chain", 5000);
        let s = LossSum::of(&[
            drops(2000, 0, vec![nft(2000)], true),
            drops(5000, 0, vec![other.clone()], true),
        ]);
        assert_eq!(s.places, vec![other, nft(2000)]);
        assert_eq!(LossSum::of(&[]), LossSum::default());
    }
}
