//! The drop tracer (`pktlab_io::droptrace`) as trials use it: started once
//! per campaign, `gen` or `recv` run, or worker job, in the mode asked for
//! ([`DropTrace`]), and read around each trial ([`Window`]).
//!
//! A campaign's tracer ([`Tracer::start_for_trials`]) leaves the
//! backlog's refusals (CPU_BACKLOG) to the kernel's counters and watches
//! only the namespaces where a drop is the lab's loss (see
//! `crate::drops`); in auto mode it is unloaded for a full-speed trial,
//! whose generator would pay for the tracer's call on every frame the lab
//! frees.
//!
//! Beside it runs the XDP drop tracer (`pktlab_io::xdpdrops`): the frames
//! XDP drops never reach `skb:kfree_skb`. It runs in the same modes, and
//! in auto mode at full speed too: its tracepoints fire on XDP's
//! exceptions and failed redirects, and once per flush of a redirect's or
//! a CPU queue's bulk (up to 16 frames, only on the paths that redirect at
//! XDP), where the program returns at once when nothing was dropped; the
//! kfree_skb tracer runs on every skb the lab frees, every frame.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use pktlab_io::droptrace::{DropCounts, DropTracer, Places, TraceOptions};
use pktlab_io::xdpdrops::{NamedXdpDrop, XdpDropCounts, XdpDropTracer};
use pktlab_lab::softnet;

use crate::drops::{
    host_drops, own_netns, reconcile_receiver, DropTrace, Drops, LabNamespaces, Place,
    ReceiverLoss, Traced,
};
use crate::LossError;

/// A running tracer, what it was started with, and the names of its keys.
struct Started {
    tracer: DropTracer,
    places: Places,
}

/// A drop tracer in the mode asked for: none in mode `off`, or in mode
/// `auto` where BPF is not allowed (then every window is counters only).
pub struct Tracer {
    mode: DropTrace,
    options: TraceOptions,
    /// None: off or unavailable. Inside, None: unloaded for a while (a
    /// full-speed trial in auto mode), loaded again by the next window.
    running: Option<Mutex<Option<Started>>>,
    /// A full-speed trial went untraced in auto mode (said once).
    said_full_speed: AtomicBool,
    /// The XDP drop tracer; None: off or unavailable.
    xdp: Option<Mutex<XdpDropTracer>>,
}

/// What [`Tracer::trial_window`] says once: why full-speed trials go
/// untraced in auto mode.
pub const FULL_SPEED_UNTRACED: &str = "drop trace auto: off at full speed, where the tracer's \
     call on every frame the lab frees would slow the generator; the loss is attributed from \
     counters and XDP's drops only (--drop-trace on traces it)";

impl Tracer {
    /// Counters only.
    pub const fn off() -> Tracer {
        Tracer {
            mode: DropTrace::Off,
            options: TraceOptions {
                all: false,
                backlog_counted: false,
            },
            running: None,
            said_full_speed: AtomicBool::new(false),
            xdp: None,
        }
    }

    /// Starts the tracer unless `mode` is off: it counts the test frames
    /// every namespace drops, for whatever reason. In auto mode a tracer
    /// that cannot start is no error: it returns why, for the caller to
    /// say once, and the trials go on with counters only.
    pub fn start(mode: DropTrace) -> Result<(Tracer, Option<String>), LossError> {
        Tracer::start_with(mode, TraceOptions::default(), false)
    }

    /// [`Tracer::start`] for a campaign's trials: the backlog's refusals
    /// are left to the kernel's counters, each window watches the
    /// namespaces its lab names ([`Tracer::trial_window`]), and the XDP
    /// drop tracer runs too.
    pub fn start_for_trials(mode: DropTrace) -> Result<(Tracer, Option<String>), LossError> {
        let options = TraceOptions {
            all: false,
            backlog_counted: true,
        };
        Tracer::start_with(mode, options, true)
    }

    fn start_with(
        mode: DropTrace,
        options: TraceOptions,
        with_xdp: bool,
    ) -> Result<(Tracer, Option<String>), LossError> {
        if mode == DropTrace::Off {
            return Ok((Tracer::off(), None));
        }
        let xdp = with_xdp.then(XdpDropTracer::start);
        let (xdp, xdp_why) = match xdp {
            None => (None, None),
            Some(Ok(t)) => (Some(Mutex::new(t)), None),
            Some(Err(e)) if mode == DropTrace::Auto => (None, Some(e.to_string())),
            Some(Err(e)) => return Err(trace_error(e)),
        };
        let tracer = |running| Tracer {
            mode,
            options,
            running,
            said_full_speed: AtomicBool::new(false),
            xdp,
        };
        match DropTracer::start_with(options) {
            Ok(t) => {
                let started = Started {
                    tracer: t,
                    places: Places::load(),
                };
                // Only the XDP tracer failed: said as the kfree_skb
                // tracer's reason is.
                let why = xdp_why.map(|w| format!("{w} (the XDP drop tracer)"));
                Ok((tracer(Some(Mutex::new(Some(started)))), why))
            }
            // The kernel's reason as it is: the caller says it after
            // "drop trace off: ".
            Err(e) if mode == DropTrace::Auto => Ok((tracer(None), Some(e.to_string()))),
            Err(e) => Err(trace_error(e)),
        }
    }

    /// The mode asked for (what a remote host's tracer is asked to do).
    pub fn mode(&self) -> DropTrace {
        self.mode
    }

    /// The tracer's counts now: the start of a trial's window.
    pub fn window(&self) -> Result<Window<'_>, LossError> {
        self.window_watching(&[])
    }

    /// The start of a trial's window on a lab whose namespaces of this
    /// host are `watched` (inodes, [`LabNamespaces::watch_list`]; empty:
    /// every namespace). `full_speed`: the generator sends as fast as it
    /// can; in auto mode such a trial runs on the counters alone, and the
    /// first one returns [`FULL_SPEED_UNTRACED`] for the caller to say.
    ///
    /// `queues`: the DUT's ports on this host (namespace, interface), its
    /// way in first, whose XDP programs may steer into CPU queues: the XDP
    /// tracer's drops at such a queue are placed at its port.
    pub fn trial_window(
        &self,
        watched: &[u32],
        queues: &[(String, String)],
        full_speed: bool,
    ) -> Result<(Window<'_>, Option<&'static str>), LossError> {
        let xdp = self.xdp_window(queues)?;
        if full_speed && self.mode == DropTrace::Auto {
            if let Some(r) = &self.running {
                // An attached program costs every frame freed, read or not.
                *lock(r) = None;
                let first = !self.said_full_speed.swap(true, Ordering::Relaxed);
                let window = Window {
                    tracer: self,
                    before: None,
                    xdp,
                };
                return Ok((window, first.then_some(FULL_SPEED_UNTRACED)));
            }
        }
        let mut window = self.window_watching(watched)?;
        window.xdp = xdp;
        Ok((window, None))
    }

    /// The XDP tracer's counts now, and the owners of the CPU queues that
    /// `queues`' programs steer into (a port whose queue cannot be read
    /// has none: its queue's drops go unplaced).
    fn xdp_window(&self, queues: &[(String, String)]) -> Result<Option<XdpWindow>, LossError> {
        let Some(t) = &self.xdp else { return Ok(None) };
        let mut owners = BTreeMap::new();
        for (ns, iface) in queues {
            let found = pktlab_lab::netns::within(ns, || pktlab_io::fastpath::queue_map(iface));
            // One program (and its queues) may serve several ports: the
            // first port named keeps it (the DUT's way in comes first).
            if let Ok(Ok(Some(map))) = found {
                owners
                    .entry(map)
                    .or_insert_with(|| (ns.clone(), iface.clone()));
            }
        }
        let before = lock_xdp(t).read().map_err(trace_error)?;
        Ok(Some(XdpWindow { before, owners }))
    }

    fn window_watching(&self, watched: &[u32]) -> Result<Window<'_>, LossError> {
        let before = match &self.running {
            Some(r) => {
                let mut guard = lock(r);
                if guard.is_none() {
                    *guard = Some(load(self.options)?);
                }
                let started = guard.as_mut().expect("loaded above");
                started.tracer.watch(watched).map_err(trace_error)?;
                Some(started.tracer.read().map_err(trace_error)?)
            }
            None => None,
        };
        Ok(Window {
            tracer: self,
            before,
            xdp: None,
        })
    }

    fn total_since(&self, before: &DropCounts) -> Option<u64> {
        let r = self.running.as_ref()?;
        let guard = lock(r);
        guard
            .as_ref()?
            .tracer
            .read()
            .ok()
            .map(|c| c.since(before).total())
    }
}

fn load(options: TraceOptions) -> Result<Started, LossError> {
    let tracer = DropTracer::start_with(options).map_err(trace_error)?;
    Ok(Started {
        tracer,
        places: Places::load(),
    })
}

fn lock(m: &Mutex<Option<Started>>) -> MutexGuard<'_, Option<Started>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn lock_xdp(m: &Mutex<XdpDropTracer>) -> MutexGuard<'_, XdpDropTracer> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn trace_error(e: pktlab_io::IoError) -> LossError {
    LossError::Trace(e.to_string())
}

/// The tracer's counts when a trial started (None: counters only).
pub struct Window<'t> {
    tracer: &'t Tracer,
    before: Option<DropCounts>,
    /// The XDP tracer's (None: not running).
    xdp: Option<XdpWindow>,
}

/// The XDP tracer's counts when a trial started, and the owners of the
/// DUT's CPU queues (CPUMAP id: namespace and port).
struct XdpWindow {
    before: XdpDropCounts,
    owners: BTreeMap<u32, (String, String)>,
}

impl Window<'_> {
    /// [`Window::end`], and the frames XDP dropped on this host since the
    /// window began, by named place (None: the XDP tracer did not run).
    #[allow(clippy::type_complexity)]
    pub fn end_with_xdp(
        mut self,
    ) -> Result<(Option<Traced>, Option<Vec<NamedXdpDrop>>), LossError> {
        let xdp = match (self.xdp.take(), &self.tracer.xdp) {
            (Some(w), Some(t)) => {
                let grew = lock_xdp(t).read().map_err(trace_error)?.since(&w.before);
                Some(pktlab_io::xdpdrops::name_with(&grew, &w.owners))
            }
            _ => None,
        };
        Ok((self.end()?, xdp))
    }

    /// The named kernel places since the window began and the tracer's
    /// misses (None: counters only). The caller says the misses, if any
    /// ([`crate::drops::missed_line`]).
    pub fn end(self) -> Result<Option<Traced>, LossError> {
        let (Some(before), Some(r)) = (self.before, &self.tracer.running) else {
            return Ok(None);
        };
        let mut guard = lock(r);
        let Some(started) = guard.as_mut() else {
            return Ok(None);
        };
        let grew = started.tracer.read().map_err(trace_error)?.since(&before);
        Ok(Some(Traced {
            places: started.places.name(&grew),
            missed: grew.missed,
        }))
    }

    /// Waits, at most `limit`, until the kernel has no frames left to
    /// drop: every CPU's backlog is empty and the tracer's count has not
    /// moved for 50 ms. A sender reads its window right after its last
    /// frame; on a loaded host the DUT's softirq work can lag far behind
    /// (a backlog of 1000 frames per CPU), and drops made after the read
    /// would go uncounted.
    pub fn settle(&self, limit: Duration) {
        let Some(before) = &self.before else { return };
        let deadline = Instant::now() + limit;
        let mut last = self.tracer.total_since(before);
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            let now = self.tracer.total_since(before);
            if now == last && softnet::backlog_now().unwrap_or(0) == 0 {
                return;
            }
            last = now;
        }
    }

    /// What the kernel dropped on this host since the window began, by
    /// place (the built-in lab's namespaces named around this process's
    /// own), once the frames still in flight when the last one left have
    /// had time to be dropped further on (a DUT's queues); and the events
    /// the tracer missed. None: counters only.
    pub fn host_drops_after_send(self) -> Result<Option<(Vec<Place>, u64)>, LossError> {
        std::thread::sleep(IN_FLIGHT);
        self.settle(SETTLE_LIMIT);
        let lab = LabNamespaces::builtin_around(&own_netns());
        Ok(self
            .end()?
            .map(|t| (host_drops(&t.places, lab.as_ref()), t.missed)))
    }

    /// A receiver's loss (`lost`: its sequence gaps, and the frames of the
    /// streams that never arrived when it knows them; `ring_drops`: its
    /// ring's drops on interface `iface`) split over the places the tracer
    /// saw since the window began.
    pub fn split_receiver_loss(
        self,
        lost: u64,
        ring_drops: u64,
        iface: &str,
    ) -> Result<Drops, LossError> {
        let traced = self.end()?;
        let netns = own_netns();
        let lab = LabNamespaces::builtin_around(&netns);
        let loss = ReceiverLoss {
            lost,
            ring_drops,
            netns: &netns,
            iface,
        };
        let kernel = traced.as_ref().map(|t| t.places.as_slice());
        let mut d = reconcile_receiver(&loss, kernel, lab.as_ref());
        d.tracer_missed = traced.map_or(0, |t| t.missed);
        Ok(d)
    }
}

/// How long frames still in flight when a sender's last one left may take
/// to be dropped further on (a DUT's queues): waited before the tracer's
/// last count.
const IN_FLIGHT: Duration = Duration::from_millis(200);

/// How much longer to wait, at most, for the host's backlogs to empty and
/// the drops to stop (a loaded host's softirq work lags behind).
const SETTLE_LIMIT: Duration = Duration::from_secs(3);
