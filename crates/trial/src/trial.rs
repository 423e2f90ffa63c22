//! One trial: receiver up, generator for a while, drain, receiver down.
//! Both ends run where their [`Endpoint`] says, with the campaign's I/O
//! backend.

use std::time::Duration;

use pktlab_engine::gen::GenConfig;
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxPlan, RxSummary};
use pktlab_engine::tx::{TxPlan, TxSummary};
use pktlab_engine::StopSignal;
use pktlab_io::xdprecv::{XdpRecvConfig, MAX_STREAMS};
use pktlab_lab::softnet::{self, SoftnetCpu};

use crate::direction::{sum_rx, sum_samples, sum_tx, Direction, DIRECTIONS};
use crate::ends::{self, End, EndRan, Ran};
use crate::late;
use crate::samples::{run_value, steady};
use crate::target::{LabKind, Target};
use crate::traffic::Traffic;
use crate::TrialError;
use pktlab_loss::both::BothCounters;
use pktlab_loss::drops::{self, Drops, LabView};
use pktlab_loss::monitor::{self, IfaceCounters, IfaceEthtool, IfaceQdisc, Second};
use pktlab_loss::tracer::{Tracer, Window};
use pktlab_remote::endpoint::{BenchIo, Endpoint, Local};
use pktlab_remote::ssh::observe;

pub use crate::ends::{TrialEvent, DRAIN};
/// A trial whose generator offered less than the rate asked for by more
/// than this fraction (0.5 %) is generator-limited: it measured the
/// generator, not the DUT.
pub const GENERATOR_TOLERANCE: f64 = 0.005;

/// How to run and value a trial.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrialSettings {
    #[serde(serialize_with = "as_secs", deserialize_with = "from_secs")]
    pub duration: Duration,
    /// Samples left out at the start and at the end of the active period.
    pub trim_head: usize,
    pub trim_tail: usize,
    #[serde(serialize_with = "as_secs", deserialize_with = "from_secs")]
    pub interval: Duration,
}

/// Durations appear in JSON as seconds.
fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn from_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = <f64 as serde::Deserialize>::deserialize(d)?;
    Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
}

impl Default for TrialSettings {
    fn default() -> Self {
        TrialSettings {
            duration: Duration::from_secs(10),
            trim_head: 1,
            trim_tail: 1,
            interval: Duration::from_secs(1),
        }
    }
}

/// What a method may ask of a trial besides its rate and duration; the
/// default is a plain trial.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shape {
    /// Send this many frames and stop (a burst), unless the duration ends
    /// first.
    pub count: Option<u64>,
    /// Frames sent at the trial's rate before the receiver starts, then a
    /// drain: they fill the DUT's caches and queues and are never counted.
    pub warmup: Duration,
    /// Keep the receiver counting this long after the drain, so that frames
    /// arriving after it are seen as late (they still count as lost).
    pub late_window: Option<Duration>,
}

/// What a trial measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrialResult {
    /// The rate the generator was asked for (None: as fast as it can).
    #[serde(skip)]
    pub intended_pps: Option<f64>,
    /// The run's value: median forwarded test frames per second.
    pub forwarded_pps: f64,
    /// The median offered load over the same kind of samples.
    pub offered_pps: f64,
    /// Test frames sent but not received by the end of the drain.
    pub lost: u64,
    /// Test frames received after the drain (part of `lost`); None when
    /// the trial did not watch for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// `lost` as a fraction of the frames sent.
    pub loss_ratio: f64,
    /// Per-interval test frames per second at the receiver, every interval.
    pub rx_samples: Vec<f64>,
    /// Per-interval frames per second at the generator.
    pub tx_samples: Vec<f64>,
    pub tx: TxSummary,
    pub rx: RxSummary,
    /// Every lab interface's counters over the trial.
    pub lab_counters: Vec<IfaceCounters>,
    /// The root qdisc counters of every lab interface that has a qdisc.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub qdiscs: Vec<IfaceQdisc>,
    /// The drivers' drop statistics that moved during the trial (`ethtool -S`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ethtool_drops: Vec<IfaceEthtool>,
    /// Per CPU over the trial: backlog packets processed, dropped and
    /// squeezed (`/proc/net/softnet_stat`, the whole host's).
    pub softnet: Vec<SoftnetCpu>,
    /// Backlog drops on the DUT's CPUs (the built-in lab's CPU plan; every
    /// CPU in shared mode): where an overloaded DUT loses frames. `None`
    /// when the DUT is another machine.
    pub dut_backlog_drops: Option<u64>,
    /// Per second from the generator's start: interface counters, per-CPU
    /// load and interrupts.
    #[serde(skip)]
    pub seconds: Vec<Second>,
    /// Where the lost frames went (`pktlab_loss::drops`).
    pub drops: Drops,
    /// What the receiver's one-way latency is worth when the generator
    /// runs on another host: "clocks of A and C synchronised to ±X µs",
    /// or "not comparable: ..." (`pktlab_remote::ssh::clock::run_latency_note`).
    /// Absent when both ends share one clock: the latency is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_note: Option<String>,
    /// Traffic both ways: each direction's figures (forward, reverse);
    /// the fields above are their total. Empty for traffic one way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<Direction>,
}

/// What the trials of a run share: the lab, where each end runs, the I/O
/// backend and how trials are run and valued. A method asks it for trials
/// at the rates it chooses.
#[derive(Clone, Copy)]
pub struct Trials<'a> {
    pub lab: &'a Target,
    pub gen: &'a dyn Endpoint,
    pub rcv: &'a dyn Endpoint,
    pub io: BenchIo,
    pub settings: &'a TrialSettings,
    /// Ctrl-C: a trial cut short by it returns its partial figures.
    pub stop: &'a StopSignal,
    /// The drop tracer, read around each trial.
    pub tracer: &'a Tracer,
}

impl<'a> Trials<'a> {
    /// Each end where the lab says: on its host over ssh
    /// ([`Target::gen_remote`], [`Target::rcv_remote`]), several
    /// generators together ([`Target::generators`]), else here.
    pub fn for_target(
        lab: &'a Target,
        io: BenchIo,
        settings: &'a TrialSettings,
        stop: &'a StopSignal,
        tracer: &'a Tracer,
    ) -> Trials<'a> {
        let here: &'a dyn Endpoint = &Local;
        Trials {
            lab,
            gen: match (&lab.generators, &lab.gen_remote) {
                (Some(g), _) => g,
                (None, Some(r)) => r,
                (None, None) => here,
            },
            rcv: lab.rcv_remote.as_ref().map_or(here, |r| r as &dyn Endpoint),
            io,
            settings,
            stop,
            tracer,
        }
    }

    /// One trial of `traffic` at `rate_pps` (None: as fast as the
    /// generator can), whatever rate the profile itself asks for.
    pub fn run(
        &self,
        traffic: &Traffic,
        rate_pps: Option<f64>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<TrialResult, TrialError> {
        one_trial(self, traffic, rate_pps, Shape::default(), on_event)
    }

    /// One trial shaped by `shape`: a burst, a warm-up, late frames seen.
    pub fn run_shaped(
        &self,
        traffic: &Traffic,
        rate_pps: Option<f64>,
        shape: Shape,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<TrialResult, TrialError> {
        one_trial(self, traffic, rate_pps, shape, on_event)
    }
}

fn one_trial(
    trials: &Trials<'_>,
    traffic: &Traffic,
    rate_pps: Option<f64>,
    shape: Shape,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<TrialResult, TrialError> {
    let back = reverse_of(trials.lab, traffic, trials.io)?;
    // The XDP generator on r0 and a receiver with an XDP program on g0
    // need the reverse path set up as the CPU plan sets the forward one,
    // for the trial only (crates/lab/src/builtin/reverse_xdp.rs).
    let reverse_path = match (&trials.lab.kind, &back, trials.io) {
        (LabKind::Builtin(lab), Some(_), io) if io != BenchIo::Afpacket => {
            Some(lab.reverse_xdp(io == BenchIo::Xdp)?)
        }
        _ => None,
    };
    let result = ends_and_figures(trials, traffic, back, rate_pps, shape, on_event);
    if let Some(path) = reverse_path {
        path.restore()?;
    }
    result
}

/// One trial's ends at work, and what they measured.
fn ends_and_figures(
    trials: &Trials<'_>,
    traffic: &Traffic,
    back: Option<(Target, Traffic)>,
    rate_pps: Option<f64>,
    shape: Shape,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<TrialResult, TrialError> {
    let lab = trials.lab;
    let mut configs = vec![end_configs(trials, lab, traffic, rate_pps, shape)?];
    if let Some((target, stream)) = &back {
        configs.push(end_configs(trials, target, stream, rate_pps, shape)?);
    }
    for (gen, _) in &configs {
        warm_up(trials, gen, shape)?;
    }
    let mut watched = lab.loss_view().namespaces.watch_list();
    if let Some((target, _)) = &back {
        watched.extend(target.loss_view().namespaces.watch_list());
        watched.sort_unstable();
        watched.dedup();
    }
    let queues = dut_ports_here(lab);
    let (window, note) = trials
        .tracer
        .trial_window(&watched, &queues, rate_pps.is_none())?;
    if let Some(note) = note {
        on_event(TrialEvent::Warning(note.into()));
    }
    let before = Before::read(lab)?;
    // The reverse stream's generator runs where the forward receiver does.
    let ends: Vec<End<'_>> = configs
        .iter()
        .enumerate()
        .map(|(i, (gen_cfg, recv_cfg))| End {
            gen: if i == 0 { trials.gen } else { trials.rcv },
            rcv: if i == 0 { trials.rcv } else { trials.gen },
            gen_cfg,
            recv_cfg,
        })
        .collect();
    let late_window = shape.late_window.unwrap_or_default();
    let mut ran = ends::run_ends(
        lab,
        &ends,
        trials.stop,
        trials.tracer.mode(),
        trials.settings.interval,
        late_window,
        on_event,
    )?;
    let reverse_view = back.as_ref().map(|(t, _)| t.loss_view());
    let counted = count_losses(
        lab,
        reverse_view.as_ref(),
        before,
        window,
        &mut ran,
        on_event,
    )?;
    let both_ways = back.is_some();
    let figures = ran
        .ends
        .iter()
        .map(|end| figures_of(trials, end, shape, ran.drain_end, both_ways))
        .collect::<Result<Vec<Figures>, TrialError>>()?;
    let result = TrialResult::of(rate_pps, ran, figures, counted, lab);
    on_event(TrialEvent::Finished {
        intended_pps: rate_pps,
        sent: result.tx.packets,
        drops: result.drops.clone(),
        directions: result
            .directions
            .iter()
            .map(|d| (d.name.clone(), d.tx.packets, d.drops.clone()))
            .collect(),
    });
    Ok(result)
}

/// The reverse stream of a traffic both ways and the lab it runs on (the
/// same lab from the receiver's side, its ends on the hosts of the
/// forward receiver and generator); None for traffic one way.
fn reverse_of(
    lab: &Target,
    traffic: &Traffic,
    io: BenchIo,
) -> Result<Option<(Target, Traffic)>, TrialError> {
    let Some(stream) = traffic.reverse_stream() else {
        return Ok(None);
    };
    let refused = |why: String| {
        TrialError::Usage(format!(
            "traffic profile '{}' goes both ways: {why}",
            traffic.name
        ))
    };
    // A port's generator and receiver share one AF_XDP socket, which only
    // one process can do; over ssh each runs in a worker of its own.
    if io == BenchIo::Afxdp && (lab.gen_remote.is_some() || lab.rcv_remote.is_some()) {
        return Err(refused(
            "AF_XDP cannot send and receive on one port from two worker processes \
             (the kernel binds one AF_XDP socket per queue): use afpacket over ssh"
                .into(),
        ));
    }
    let back = lab.reversed().map_err(|e| match e {
        TrialError::Usage(why) => refused(why),
        other => other,
    })?;
    Ok(Some((back, stream)))
}

/// One direction's figures, from its own ends.
struct Figures {
    forwarded_pps: f64,
    offered_pps: f64,
    lost: u64,
    late: Option<u64>,
    latency_note: Option<String>,
}

/// One direction's figures. A direction of traffic both ways whose
/// receiver counted no test frame forwarded 0 frames a second (a stateful
/// DUT that drops the answers): the trial still measured the other.
fn figures_of(
    trials: &Trials<'_>,
    end: &EndRan,
    shape: Shape,
    drain_end: Duration,
    both_ways: bool,
) -> Result<Figures, TrialError> {
    let (head, tail) = (trials.settings.trim_head, trials.settings.trim_tail);
    let nothing = both_ways && end.rx.packets == end.rx.foreign;
    let value = run_value(&end.rx_samples, head, tail).or(nothing.then_some(0.0));
    let forwarded_pps = value.ok_or_else(|| {
        TrialError::Failed(format!(
            "no per-second sample left after leaving out the first {head} and the last {tail}: \
             the run forwarded nothing or is too short (use a longer --duration)"
        ))
    })?;
    let offered_pps =
        pktlab_stats::median(steady(&end.tx_samples, head, tail)).unwrap_or(end.tx.pps);
    let received = end.rx.packets - end.rx.foreign;
    let late = shape
        .late_window
        .and_then(|_| late::late(&end.rx_counts, drain_end.as_secs_f64(), received));
    let lost = end.tx.packets.saturating_sub(received - late.unwrap_or(0));
    let latency_note = end
        .rx
        .latency_ns
        .as_ref()
        .and_then(|l| trials.lab.run_latency_note(l.min));
    Ok(Figures {
        forwarded_pps,
        offered_pps,
        lost,
        late,
        latency_note,
    })
}

fn ratio(lost: u64, sent: u64) -> f64 {
    if sent > 0 {
        lost as f64 / sent as f64
    } else {
        0.0
    }
}

impl TrialResult {
    /// The result of a trial's ends: one direction's figures, or both
    /// directions' and their total (rates, counts and samples added up).
    fn of(
        intended_pps: Option<f64>,
        ran: Ran,
        figures: Vec<Figures>,
        counted: Counted,
        lab: &Target,
    ) -> TrialResult {
        let Ran { ends, seconds, .. } = ran;
        let mut directions: Vec<Direction> = ends
            .into_iter()
            .zip(&figures)
            .zip(counted.drops.iter().cloned())
            .zip(DIRECTIONS)
            .map(|(((end, f), drops), name)| Direction {
                name: name.into(),
                forwarded_pps: f.forwarded_pps,
                offered_pps: f.offered_pps,
                lost: f.lost,
                late: f.late,
                loss_ratio: ratio(f.lost, end.tx.packets),
                rx_samples: end.rx_samples,
                tx_samples: end.tx_samples,
                tx: end.tx,
                rx: end.rx,
                drops,
            })
            .collect();
        let total = |f: fn(&Figures) -> f64| figures.iter().map(f).sum::<f64>();
        let lost: u64 = figures.iter().map(|f| f.lost).sum();
        let late = figures.iter().filter_map(|f| f.late).reduce(|a, b| a + b);
        let one_way = directions.len() == 1;
        let (tx, rx, rx_samples, tx_samples) = if one_way {
            let d = directions.pop().expect("one direction");
            (d.tx, d.rx, d.rx_samples, d.tx_samples)
        } else {
            let (a, b) = (&directions[0], &directions[1]);
            (
                sum_tx(&[&a.tx, &b.tx]),
                sum_rx(&[&a.rx, &b.rx]),
                sum_samples(&a.rx_samples, &b.rx_samples),
                sum_samples(&a.tx_samples, &b.tx_samples),
            )
        };
        let latency_note = match &rx.latency_ns {
            Some(l) if !one_way => lab.run_latency_note(l.min),
            _ => figures[0].latency_note.clone(),
        };
        TrialResult {
            intended_pps,
            forwarded_pps: total(|f| f.forwarded_pps),
            offered_pps: total(|f| f.offered_pps),
            lost,
            late,
            loss_ratio: ratio(lost, tx.packets),
            rx_samples,
            tx_samples,
            tx,
            rx,
            lab_counters: counted.lab_counters,
            qdiscs: counted.qdiscs,
            ethtool_drops: counted.ethtool_drops,
            softnet: counted.softnet,
            dut_backlog_drops: counted.dut_backlog_drops,
            seconds,
            drops: counted.total,
            latency_note,
            directions,
        }
    }
}

/// The generator's and the receiver's settings for one trial.
fn end_configs(
    trials: &Trials<'_>,
    lab: &Target,
    traffic: &Traffic,
    rate_pps: Option<f64>,
    shape: Shape,
) -> Result<(GenConfig, RecvConfig), TrialError> {
    let settings = trials.settings;
    let frames = traffic.frame_spec(lab.src_mac, lab.dst_mac)?;
    let gen = GenConfig {
        io: trials.io.gen(),
        iface: Some(lab.gen.iface.clone()),
        frames,
        plan: TxPlan {
            threads: traffic.threads,
            count: shape.count,
            duration: Some(settings.duration),
            rate_pps,
            interval: settings.interval,
            netns: lab.gen.netns.clone(),
            iface: Some(lab.gen.iface.clone()),
            cpus: lab.tester_cpus(),
            ..TxPlan::default()
        },
        xdp: Default::default(),
    };
    let recv = RecvConfig {
        io: trials.io.recv(),
        iface: Some(lab.rcv.iface.clone()),
        plan: RxPlan {
            interval: settings.interval,
            netns: lab.rcv.netns.clone(),
            iface: Some(lab.rcv.iface.clone()),
            cpus: lab.tester_cpus(),
            ..RxPlan::default()
        },
        xdp: Default::default(),
        // State for every flow the generator sends (each is a stream).
        xdp_recv: XdpRecvConfig {
            streams: gen.frames.flows.count().clamp(1, MAX_STREAMS),
            ..XdpRecvConfig::default()
        },
    };
    Ok((gen, recv))
}

/// The shape's warm-up: frames nobody counts, then a drain that keeps
/// them out of the trial.
fn warm_up(trials: &Trials<'_>, gen: &GenConfig, shape: Shape) -> Result<(), TrialError> {
    if shape.warmup.is_zero() {
        return Ok(());
    }
    let mut warm = gen.clone();
    warm.plan.count = None;
    warm.plan.duration = Some(shape.warmup);
    trials.gen.generate(&warm, trials.stop, &mut |_| {})?;
    std::thread::sleep(DRAIN);
    if trials.stop.is_set() {
        return Err(TrialError::Failed("interrupted during the warm-up".into()));
    }
    Ok(())
}

/// The lab's drop counters before the trial.
struct Before {
    ifaces: Vec<IfaceCounters>,
    qdiscs: Vec<IfaceQdisc>,
    ethtool: Vec<IfaceEthtool>,
    softnet: Vec<SoftnetCpu>,
}

impl Before {
    fn read(lab: &Target) -> Result<Before, TrialError> {
        Ok(Before {
            ifaces: monitor::read_counters(&lab.watched)?,
            qdiscs: monitor::read_qdiscs(&lab.watched)?,
            ethtool: monitor::read_ethtool_drops(&lab.watched)?,
            softnet: softnet::read()?,
        })
    }
}

/// The DUT's ports in namespaces of this host (namespace, interface):
/// where an XDP program may steer frames into CPU queues.
fn dut_ports_here(lab: &Target) -> Vec<(String, String)> {
    lab.watched
        .iter()
        .filter(|w| w.role.starts_with("dut"))
        .filter_map(|w| Some((w.port.netns.clone()?, w.port.iface.clone())))
        .collect()
}

/// The lab's counters and drops over the trial, and where its lost
/// frames went.
struct Counted {
    lab_counters: Vec<IfaceCounters>,
    qdiscs: Vec<IfaceQdisc>,
    ethtool_drops: Vec<IfaceEthtool>,
    softnet: Vec<SoftnetCpu>,
    dut_backlog_drops: Option<u64>,
    /// Each direction's loss (one for traffic one way).
    drops: Vec<Drops>,
    /// The trial's loss: the one direction's, or both directions' total.
    total: Drops,
}

/// Reads the counters again, merges the other hosts' into `ran`'s
/// seconds, and places the trial's loss: per direction when the traffic
/// went both ways (`reverse`: the lab as its reverse stream sees it).
fn count_losses(
    lab: &Target,
    reverse: Option<&LabView>,
    before: Before,
    window: Window<'_>,
    ran: &mut Ran,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Counted, TrialError> {
    let after = monitor::read_counters(&lab.watched)?;
    let mut lab_counters = monitor::counter_deltas(&before.ifaces, &after);
    // Each host's tracer: its drops, and whether every host's ran.
    let mut remote = Vec::new();
    for mut o in std::mem::take(&mut ran.observed) {
        remote.push((o.host.clone(), o.drops.take()));
        for w in o.warnings.drain(..) {
            on_event(TrialEvent::Warning(w));
        }
        observe::merge(&mut ran.seconds, &mut lab_counters, o);
    }
    let qdiscs = monitor::qdisc_deltas(&before.qdiscs, &monitor::read_qdiscs(&lab.watched)?);
    let ethtool_drops =
        monitor::ethtool_deltas(&before.ethtool, &monitor::read_ethtool_drops(&lab.watched)?);
    let softnet = softnet::deltas(&before.softnet, &softnet::read()?);
    let (here, xdp) = window.end_with_xdp()?;
    if let Some(t) = here.as_ref().filter(|t| t.missed > 0) {
        on_event(TrialEvent::Warning(drops::missed_line(t.missed)));
    }
    let kernel = drops::all_hosts(here, remote);
    let xdp = xdp.as_deref().unwrap_or_default();
    let forward = lab.loss_view();
    let (mut drops, mut total) = match (reverse, &ran.ends[..]) {
        (Some(reverse), [f, r]) => {
            let both = pktlab_loss::both::reconcile_both(
                [&forward, reverse],
                kernel.places.as_deref(),
                xdp,
                &BothCounters {
                    ends: [(&f.tx, &f.rx), (&r.tx, &r.rx)],
                    ifaces: &lab_counters,
                    qdiscs: &qdiscs,
                    ethtool: &ethtool_drops,
                    softnet: &softnet,
                },
            );
            (vec![both.forward, both.reverse], both.total)
        }
        _ => {
            let end = &ran.ends[0];
            let d = drops::reconcile_with_xdp(
                &forward,
                kernel.places.as_deref(),
                xdp,
                &drops::Counters {
                    tx: &end.tx,
                    rx: &end.rx,
                    ifaces: &lab_counters,
                    qdiscs: &qdiscs,
                    ethtool: &ethtool_drops,
                    softnet: &softnet,
                },
            );
            (vec![d.clone()], d)
        }
    };
    for d in drops.iter_mut().chain([&mut total]) {
        d.tracer_missed = kernel.missed;
        d.traced = kernel.traced;
    }
    let dut_backlog_drops = lab
        .cpus
        .as_ref()
        .map(|p| softnet::dropped_on(&softnet, &p.dut_cpus));
    Ok(Counted {
        lab_counters,
        qdiscs,
        ethtool_drops,
        softnet,
        dut_backlog_drops,
        drops,
        total,
    })
}

#[cfg(test)]
mod tests {
    //! `one_trial` against scripted ends: what it asks each end for, and
    //! the figures it makes of what they report, worked out by hand.

    use std::sync::Mutex;

    use std::time::Instant;

    use pktlab_engine::rx::{RxEvent, RxInterval, RxPlan};
    use pktlab_engine::tx::{TxEvent, TxInterval, TxPlan};
    use pktlab_lab::dut::{Dut, DutRunner};
    use pktlab_lab::ports::{InterfaceLab, Port};
    use pktlab_lab::{CpuMode, CpuPlan};

    use super::*;
    use crate::target::LabKind;
    use pktlab_remote::RemoteError;

    /// The scripted ends drop nothing: counters only.
    static OFF: Tracer = Tracer::off();

    /// A generator that reports the given per-interval rates and a summary
    /// of `packets` frames, and keeps the plan it was given.
    struct ScriptedGen {
        interval_pps: Vec<f64>,
        packets: u64,
        pps: f64,
        plan: Mutex<Option<TxPlan>>,
        /// Panics once it has its plan (a bug of the generator's side).
        panics: bool,
    }

    impl Endpoint for ScriptedGen {
        fn generate(
            &self,
            cfg: &GenConfig,
            _stop: &StopSignal,
            on_event: &mut dyn FnMut(TxEvent),
        ) -> Result<TxSummary, RemoteError> {
            *self.plan.lock().unwrap() = Some(cfg.plan.clone());
            assert!(!self.panics, "a generator's bug");
            for (i, &pps) in self.interval_pps.iter().enumerate() {
                on_event(TxEvent::Interval(TxInterval {
                    elapsed: (i + 1) as f64,
                    seconds: 1.0,
                    packets: pps as u64,
                    bytes: 0,
                    pps,
                    l2_bps: 0.0,
                    l1_bps: 0.0,
                    threads: Vec::new(),
                }));
            }
            Ok(serde_json::from_value(serde_json::json!({
                "backend": "scripted", "packets": self.packets, "bytes": 0,
                "seconds": 1.0, "pps": self.pps, "l2_bps": 0.0, "l1_bps": 0.0,
                "tx_errors": 0, "interrupted": false, "threads": [], "iface": null
            }))
            .unwrap())
        }

        fn receive(
            &self,
            _: &RecvConfig,
            _: &StopSignal,
            _: &mut (dyn FnMut(RxEvent) + Send),
        ) -> Result<RxSummary, RemoteError> {
            unreachable!("a generator")
        }
    }

    /// A receiver that is ready at once and, once stopped, reports
    /// intervals of (frames, foreign frames, seconds) and a summary; or
    /// fails at once with `fail`.
    struct ScriptedRcv {
        intervals: Vec<(u64, u64, f64)>,
        packets: u64,
        foreign: u64,
        fail: Option<&'static str>,
        plan: Mutex<Option<RxPlan>>,
        /// The in-kernel receiver's stream count it was given.
        xdp_streams: Mutex<Option<u32>>,
    }

    impl Endpoint for ScriptedRcv {
        fn generate(
            &self,
            _: &GenConfig,
            _: &StopSignal,
            _: &mut dyn FnMut(TxEvent),
        ) -> Result<TxSummary, RemoteError> {
            unreachable!("a receiver")
        }

        fn receive(
            &self,
            cfg: &RecvConfig,
            stop: &StopSignal,
            on_event: &mut (dyn FnMut(RxEvent) + Send),
        ) -> Result<RxSummary, RemoteError> {
            *self.plan.lock().unwrap() = Some(cfg.plan.clone());
            *self.xdp_streams.lock().unwrap() = Some(cfg.xdp_recv.streams);
            if let Some(why) = self.fail {
                return Err(RemoteError::Failed(why.into()));
            }
            // A note, never passed on, then ready.
            on_event(RxEvent::Note("scripted: set up".into()));
            on_event(RxEvent::Ready {
                backend: "scripted".into(),
            });
            while !stop.is_set() {
                std::thread::sleep(Duration::from_millis(5));
            }
            for (i, &(packets, foreign, seconds)) in self.intervals.iter().enumerate() {
                on_event(RxEvent::Interval(RxInterval {
                    elapsed: (i + 1) as f64 * seconds,
                    seconds,
                    packets,
                    bytes: 0,
                    foreign,
                    pps: 0.0,
                    l2_bps: 0.0,
                    l1_bps: 0.0,
                    threads: Vec::new(),
                }));
            }
            on_event(RxEvent::Warning("scripted: 3 frames not checked".into()));
            Ok(serde_json::from_value(serde_json::json!({
                "backend": "scripted", "packets": self.packets, "bytes": 0,
                "seconds": 1.0, "pps": 0.0, "l2_bps": 0.0, "l1_bps": 0.0,
                "flows": 0, "streams": 0, "lost": 0, "out_of_order": 0,
                "duplicates": 0, "foreign": self.foreign, "ring_drops": 0,
                "latency_ns": null, "interrupted": false, "threads": [], "iface": null
            }))
            .unwrap())
        }
    }

    /// Ports in namespaces of their own and an isolated CPU plan (tester
    /// CPU 0, DUT CPU 1), so that every plan field differs from its default.
    fn target() -> Target {
        let gen = Port::new("g0", Some("ns-gen"));
        let rcv = Port::new("r0", Some("ns-rcv"));
        Target {
            kind: LabKind::Interfaces(InterfaceLab {
                gen: gen.clone(),
                rcv: rcv.clone(),
                dut_in_mac: [2, 0, 0, 0, 0, 2],
                dut_out_mac: None,
                dut: DutRunner::Local,
                dut_ifaces: Vec::new(),
            }),
            gen,
            rcv,
            gen_remote: None,
            rcv_remote: None,
            generators: None,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: Vec::new(),
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            watched: Vec::new(),
            irqs: Vec::new(),
            dut: Dut::new(DutRunner::Local, None),
            cpus: Some(CpuPlan {
                mode: CpuMode::Isolated,
                dut_cpus: vec![1],
                tester_cpus: vec![0],
            }),
        }
    }

    fn settings() -> TrialSettings {
        TrialSettings {
            duration: Duration::from_secs(4),
            trim_head: 1,
            trim_tail: 1,
            interval: Duration::from_millis(250),
        }
    }

    /// Trials of `lab` between scripted ends.
    fn scripted_trials<'a>(
        lab: &'a Target,
        gen: &'a ScriptedGen,
        rcv: &'a ScriptedRcv,
        settings: &'a TrialSettings,
        stop: &'a StopSignal,
    ) -> Trials<'a> {
        Trials {
            lab,
            gen,
            rcv,
            io: BenchIo::Afpacket,
            settings,
            stop,
            tracer: &OFF,
        }
    }

    fn rcv(intervals: Vec<(u64, u64, f64)>, packets: u64, foreign: u64) -> ScriptedRcv {
        ScriptedRcv {
            intervals,
            packets,
            foreign,
            fail: None,
            plan: Mutex::new(None),
            xdp_streams: Mutex::new(None),
        }
    }

    fn gen(interval_pps: Vec<f64>, packets: u64, pps: f64) -> ScriptedGen {
        ScriptedGen {
            interval_pps,
            packets,
            pps,
            plan: Mutex::new(None),
            panics: false,
        }
    }

    #[test]
    fn figures_of_a_trial() {
        let lab = target();
        let settings = settings();
        let stop = StopSignal::new();
        // Received test frames per interval: (frames − foreign) / 0.5 s.
        let rcv = rcv(
            vec![
                (0, 0, 0.5),
                (500, 50, 0.5), // 900
                (520, 20, 0.5), // 1000
                (600, 50, 0.5), // 1100
                (480, 5, 0.5),  // 950
                (3, 3, 0.5),    // 0: foreign frames only
            ],
            4700,
            200,
        );
        let gen = gen(vec![1000.0, 1200.0, 1300.0, 1250.0], 5000, 1111.0);
        let trials = scripted_trials(&lab, &gen, &rcv, &settings, &stop);
        let traffic = Traffic {
            threads: 3,
            ..Traffic::inet4()
        };
        let mut events = Vec::new();
        let mut finished = None;
        let r = trials
            .run(&traffic, Some(1234.0), &mut |e| match e {
                TrialEvent::Finished {
                    intended_pps,
                    sent,
                    drops,
                    ..
                } => {
                    events.push("Finished".into());
                    finished = Some((intended_pps, sent, drops));
                }
                e => events.push(format!("{e:?}")),
            })
            .unwrap();
        // The last event: the trial's loss as its drops line needs it.
        let (intended, sent, drops) = finished.expect("a Finished event");
        assert_eq!((intended, sent), (Some(1234.0), 5000));
        assert_eq!(drops, r.drops);
        assert_eq!(
            events,
            [
                "Started",
                "Offered(1000.0)",
                "Offered(1200.0)",
                "Offered(1300.0)",
                "Offered(1250.0)",
                "Forwarded(0.0)",
                "Forwarded(900.0)",
                "Forwarded(1000.0)",
                "Forwarded(1100.0)",
                "Forwarded(950.0)",
                "Forwarded(0.0)",
                "Warning(\"scripted: 3 frames not checked\")",
                "Finished",
            ]
        );
        assert_eq!(r.rx_samples, [0.0, 900.0, 1000.0, 1100.0, 950.0, 0.0]);
        // Active 900..950, less one at each end: median of 1000 and 1100.
        assert_eq!(r.forwarded_pps, 1050.0);
        // Median of 1200 and 1300.
        assert_eq!(r.offered_pps, 1250.0);
        // 5000 sent, 4700 − 200 foreign = 4500 test frames received.
        assert_eq!(r.lost, 500);
        assert_eq!(r.loss_ratio, 0.1);
        assert_eq!(r.intended_pps, Some(1234.0));
        assert!(r.dut_backlog_drops.is_some());

        let tx = gen.plan.lock().unwrap().clone().unwrap();
        assert_eq!(tx.threads, 3);
        assert_eq!(tx.count, None);
        assert_eq!(tx.duration, Some(Duration::from_secs(4)));
        assert_eq!(tx.rate_pps, Some(1234.0));
        assert_eq!(tx.interval, Duration::from_millis(250));
        assert_eq!(tx.netns.as_deref(), Some("ns-gen"));
        assert_eq!(tx.iface.as_deref(), Some("g0"));
        assert_eq!(tx.cpus, [0]);
        let rx = rcv.plan.lock().unwrap().clone().unwrap();
        assert_eq!(rx.interval, Duration::from_millis(250));
        assert_eq!(rx.netns.as_deref(), Some("ns-rcv"));
        assert_eq!(rx.iface.as_deref(), Some("r0"));
        assert_eq!(rx.cpus, [0]);
        // State for inet4's 2000 flows (20 sources × 100 destinations).
        assert_eq!(*rcv.xdp_streams.lock().unwrap(), Some(2000));
    }

    #[test]
    fn a_shaped_trial_asks_for_its_burst_and_counts_late_frames_as_lost() {
        let lab = target();
        let settings = settings();
        let stop = StopSignal::new();
        // Intervals of 2 s: the drain (0.5 s after the scripted generator,
        // which returns at once) ends within the first, so the frames of
        // the next two came late.
        let rcv = rcv(vec![(1000, 0, 2.0), (30, 0, 2.0), (5, 0, 2.0)], 1035, 0);
        let gen = gen(vec![1000.0, 1000.0, 1000.0], 1100, 1000.0);
        let trials = scripted_trials(&lab, &gen, &rcv, &settings, &stop);
        let shape = Shape {
            count: Some(1100),
            warmup: Duration::ZERO,
            late_window: Some(Duration::from_millis(300)),
        };
        let began = Instant::now();
        let r = trials
            .run_shaped(&Traffic::inet4(), Some(1000.0), shape, &mut |_| {})
            .unwrap();
        // The receiver counts through the drain and the late window.
        let took = began.elapsed();
        assert!(took >= DRAIN + Duration::from_millis(300), "{took:?}");
        let tx = gen.plan.lock().unwrap().clone().unwrap();
        assert_eq!(tx.count, Some(1100));
        // 1035 received, 35 of them late: 1100 − 1000 on time = 100 lost.
        assert_eq!(r.late, Some(35));
        assert_eq!(r.lost, 100);
        assert_eq!(r.loss_ratio, 100.0 / 1100.0);
    }

    #[test]
    fn a_panic_during_the_trial_stops_the_receiver_and_goes_on() {
        // The receiver counts until told to stop; the generator panics.
        // The trial must end with the panic (it used to wait for the
        // receiver for ever).
        let (ended, end) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (lab, settings, stop) = (target(), settings(), StopSignal::new());
            let rcv = rcv(vec![(100, 0, 1.0)], 100, 0);
            let gen = ScriptedGen {
                panics: true,
                ..gen(vec![100.0], 100, 100.0)
            };
            let trials = scripted_trials(&lab, &gen, &rcv, &settings, &stop);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                trials.run(&Traffic::inet4(), None, &mut |_| {})
            }));
            let _ = ended.send(r.is_err());
        });
        // 8 s: a hang fails here, before cargo-mutants' 20 s timeout.
        let panicked = end
            .recv_timeout(Duration::from_secs(8))
            .expect("the trial ended after the generator panicked");
        assert!(panicked, "the generator's panic went on");
    }

    #[test]
    fn nothing_sent_is_no_loss() {
        let lab = target();
        let settings = settings();
        let stop = StopSignal::new();
        let rcv = rcv(vec![(10, 0, 1.0), (20, 0, 1.0), (30, 0, 1.0)], 60, 60);
        // No generator interval: the offered rate is the summary's.
        let gen = gen(Vec::new(), 0, 7.0);
        let trials = scripted_trials(&lab, &gen, &rcv, &settings, &stop);
        let r = trials.run(&Traffic::inet4(), None, &mut |_| {}).unwrap();
        assert_eq!((r.lost, r.loss_ratio), (0, 0.0));
        assert_eq!(r.forwarded_pps, 20.0);
        assert_eq!(r.offered_pps, 7.0);
        assert_eq!(gen.plan.lock().unwrap().as_ref().unwrap().rate_pps, None);
    }

    #[test]
    fn a_receiver_that_fails_says_why() {
        let lab = target();
        let settings = settings();
        let stop = StopSignal::new();
        let rcv = ScriptedRcv {
            fail: Some("no such interface: r0"),
            ..rcv(Vec::new(), 0, 0)
        };
        let gen = gen(Vec::new(), 0, 0.0);
        let trials = scripted_trials(&lab, &gen, &rcv, &settings, &stop);
        let err = trials
            .run(&Traffic::inet4(), None, &mut |_| {})
            .unwrap_err();
        assert_eq!(err.to_string(), "no such interface: r0");
        // The generator never started.
        assert!(gen.plan.lock().unwrap().is_none());
    }

    #[test]
    fn settings_in_json_are_seconds() {
        let s = TrialSettings {
            duration: Duration::from_millis(2500),
            trim_head: 2,
            trim_tail: 3,
            interval: Duration::from_millis(500),
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            r#"{"duration":2.5,"trim_head":2,"trim_tail":3,"interval":0.5}"#
        );
        assert_eq!(serde_json::from_str::<TrialSettings>(&text).unwrap(), s);
        let bad = r#"{"duration":-1.0,"trim_head":2,"trim_tail":3,"interval":0.5}"#;
        assert!(serde_json::from_str::<TrialSettings>(bad).is_err());
    }
}
