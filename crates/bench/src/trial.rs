//! One trial: receiver up, generator for a while, drain, receiver down.
//! Both ends run where their [`Endpoint`] says, with the campaign's I/O
//! backend.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pktlab_engine::gen::GenConfig;
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxEvent, RxPlan, RxSummary};
use pktlab_engine::tx::{TxEvent, TxPlan, TxSummary};
use pktlab_engine::StopSignal;
use pktlab_lab::softnet::{self, SoftnetCpu};

use crate::drops::{self, Drops};
use crate::endpoint::{BenchIo, Endpoint, Local};
use crate::monitor::{self, IfaceCounters, Second};
use crate::samples::{run_value, steady};
use crate::target::Target;
use crate::traffic::Traffic;
use crate::BenchError;

/// How long the receiver keeps counting after the generator stopped, for
/// frames still in the DUT's queues.
pub const DRAIN: Duration = Duration::from_millis(500);
/// How long a receiver may take to open its ports.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// Test frames sent but not received over the whole trial.
    pub lost: u64,
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
    /// Where the lost frames went (`crate::drops`).
    pub drops: Drops,
}

/// Progress of a trial, for a live display.
#[derive(Clone, Debug)]
pub enum TrialEvent {
    /// The receiver is ready and the generator starts.
    Started,
    /// A generator interval: frames per second offered.
    Offered(f64),
    /// A receiver interval: test frames per second forwarded.
    Forwarded(f64),
}

/// Runs one trial of `traffic` on `lab` at the profile's own rate, both
/// ends local, over AF_PACKET.
pub fn run_trial(
    lab: &Target,
    traffic: &Traffic,
    settings: &TrialSettings,
    stop: &StopSignal,
    mut on_event: impl FnMut(TrialEvent),
) -> Result<TrialResult, BenchError> {
    Trials::local(lab, BenchIo::Afpacket, settings, stop).run(
        traffic,
        traffic.rate_pps,
        &mut on_event,
    )
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
}

impl<'a> Trials<'a> {
    /// Both ends as threads of this process.
    pub fn local(
        lab: &'a Target,
        io: BenchIo,
        settings: &'a TrialSettings,
        stop: &'a StopSignal,
    ) -> Trials<'a> {
        Trials {
            lab,
            gen: &Local,
            rcv: &Local,
            io,
            settings,
            stop,
        }
    }

    /// One trial of `traffic` at `rate_pps` (None: as fast as the
    /// generator can), whatever rate the profile itself asks for.
    pub fn run(
        &self,
        traffic: &Traffic,
        rate_pps: Option<f64>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<TrialResult, BenchError> {
        one_trial(self, traffic, rate_pps, on_event)
    }
}

fn one_trial(
    trials: &Trials<'_>,
    traffic: &Traffic,
    rate_pps: Option<f64>,
    mut on_event: &mut dyn FnMut(TrialEvent),
) -> Result<TrialResult, BenchError> {
    let (lab, settings, stop) = (trials.lab, trials.settings, trials.stop);
    let frames = traffic.frame_spec(lab.src_mac, lab.dst_mac)?;
    let gen = GenConfig {
        io: trials.io.gen(),
        iface: Some(lab.gen.iface.clone()),
        frames,
        plan: TxPlan {
            threads: traffic.threads,
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
    };
    let window = drops::begin()?;
    let before = monitor::read_counters(&lab.watched)?;
    let softnet_before = softnet::read()?;
    let rx_stop = StopSignal::new();
    let monitor_stop = AtomicBool::new(false);
    let (tx_events, rx_events) = mpsc::channel::<RxEvent>();

    let (tx, rx, seconds) = std::thread::scope(|scope| {
        let receiver = scope.spawn(|| {
            trials.rcv.receive(&recv, &rx_stop, &mut move |e| {
                let _ = tx_events.send(e);
            })
        });
        // The generator starts only once the receiver counts.
        let ready = loop {
            match rx_events.recv_timeout(READY_TIMEOUT) {
                Ok(RxEvent::Ready { .. }) => break Ok(()),
                Ok(RxEvent::Interval(_)) => continue,
                Err(_) => break Err(()),
            }
        };
        if ready.is_err() {
            rx_stop.stop();
            let err = match receiver.join() {
                Ok(Err(e)) => e,
                _ => BenchError::Trial("the receiver did not start".into()),
            };
            return Err(err);
        }
        let sampler = scope.spawn(|| monitor::sample_until(lab, settings.interval, &monitor_stop));
        on_event(TrialEvent::Started);
        let mut tx_samples = Vec::new();
        let mut rx_samples = Vec::new();
        let drain = |rx_samples: &mut Vec<f64>, on_event: &mut dyn FnMut(TrialEvent)| {
            while let Ok(e) = rx_events.try_recv() {
                if let RxEvent::Interval(iv) = e {
                    let pps = (iv.packets - iv.foreign) as f64 / iv.seconds;
                    rx_samples.push(pps);
                    on_event(TrialEvent::Forwarded(pps));
                }
            }
        };
        let tx = trials.gen.generate(&gen, stop, &mut |e| {
            if let TxEvent::Interval(iv) = e {
                tx_samples.push(iv.pps);
                on_event(TrialEvent::Offered(iv.pps));
                drain(&mut rx_samples, &mut on_event);
            }
        });
        if tx.is_ok() {
            std::thread::sleep(DRAIN);
        }
        rx_stop.stop();
        monitor_stop.store(true, Ordering::Relaxed);
        let rx = receiver
            .join()
            .map_err(|_| BenchError::Trial("the receiver thread panicked".into()))?;
        let seconds = sampler
            .join()
            .map_err(|_| BenchError::Trial("the sampling thread panicked".into()))?;
        drain(&mut rx_samples, &mut on_event);
        Ok((
            tx.map(|t| (t, tx_samples)),
            rx.map(|r| (r, rx_samples)),
            seconds,
        ))
    })?;
    let (tx, tx_samples) = tx?;
    let (rx, rx_samples) = rx?;
    let seconds = seconds?;
    let after = monitor::read_counters(&lab.watched)?;
    let lab_counters = monitor::counter_deltas(&before, &after);
    let softnet = softnet::deltas(&softnet_before, &softnet::read()?);
    let kernel = window.end()?;
    let drops = drops::reconcile(
        lab,
        kernel.as_deref(),
        &drops::Counters {
            tx: &tx,
            rx: &rx,
            ifaces: &lab_counters,
            softnet: &softnet,
        },
    );
    let dut_backlog_drops = lab
        .cpus
        .as_ref()
        .map(|p| softnet::dropped_on(&softnet, &p.dut_cpus));

    let (head, tail) = (settings.trim_head, settings.trim_tail);
    let forwarded_pps = run_value(&rx_samples, head, tail).ok_or_else(|| {
        BenchError::Trial(format!(
            "no per-second sample left after leaving out the first {head} and the last {tail}: \
             the run forwarded nothing or is too short (use a longer --duration)"
        ))
    })?;
    let offered_pps = pktlab_stats::median(steady(&tx_samples, head, tail)).unwrap_or(tx.pps);
    let received = rx.packets - rx.foreign;
    let lost = tx.packets.saturating_sub(received);
    Ok(TrialResult {
        intended_pps: rate_pps,
        forwarded_pps,
        offered_pps,
        lost,
        loss_ratio: if tx.packets > 0 {
            lost as f64 / tx.packets as f64
        } else {
            0.0
        },
        rx_samples,
        tx_samples,
        tx,
        rx,
        lab_counters,
        softnet,
        dut_backlog_drops,
        seconds,
        drops,
    })
}
