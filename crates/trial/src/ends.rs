//! A trial's ends at work: every receiver up, the other hosts and this
//! host's sampler counting, the generators for the trial, the drain, and
//! everything down again. A one-way trial has one pair of ends; traffic
//! both ways has two, each generator on a thread of its own, started
//! together once every receiver counts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pktlab_engine::gen::GenConfig;
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxEvent, RxSummary};
use pktlab_engine::stop::OnPanic;
use pktlab_engine::tx::{TxEvent, TxSummary};
use pktlab_engine::StopSignal;
use pktlab_loss::monitor::{self, Second};
use pktlab_remote::endpoint::Endpoint;
use pktlab_remote::ssh::observe;
use pktlab_remote::RemoteError;

use crate::target::Target;
use crate::TrialError;

/// How long the receiver keeps counting after the generator stopped, for
/// frames still in the DUT's queues.
pub const DRAIN: Duration = Duration::from_millis(500);
/// How long a receiver may take to open its ports.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Progress of a trial, for a live display.
#[derive(Clone, Debug)]
pub enum TrialEvent {
    /// The receiver is ready and the generator starts.
    Started,
    /// A generator interval: frames per second offered.
    Offered(f64),
    /// A receiver interval: test frames per second forwarded (both
    /// directions added up when the traffic goes both ways).
    Forwarded(f64),
    /// Something the receiver says the user must know (one line), such as
    /// frames it saw but could not check.
    Warning(String),
    /// The trial is over: where its lost frames went, for a line per trial.
    Finished {
        /// The rate asked for (None: as fast as the generator can).
        intended_pps: Option<f64>,
        /// Frames the generator sent.
        sent: u64,
        drops: pktlab_loss::drops::Drops,
        /// Traffic both ways: each direction's name, frames sent and
        /// loss (`drops` and `sent` above are their total).
        directions: Vec<(String, u64, pktlab_loss::drops::Drops)>,
    },
}

/// One direction's generator and receiver, where they run and how.
pub struct End<'a> {
    pub gen: &'a dyn Endpoint,
    pub rcv: &'a dyn Endpoint,
    pub gen_cfg: &'a GenConfig,
    pub recv_cfg: &'a RecvConfig,
}

/// What one direction's ends saw.
pub struct EndRan {
    pub tx: TxSummary,
    pub tx_samples: Vec<f64>,
    pub rx: RxSummary,
    pub rx_samples: Vec<f64>,
    /// (seconds since the receivers started, test frames) per interval.
    pub rx_counts: Vec<(f64, u64)>,
}

/// What the trial's ends and the samplers saw.
pub struct Ran {
    /// In the order of the ends given.
    pub ends: Vec<EndRan>,
    /// When the drain ended, since the receivers started.
    pub drain_end: Duration,
    pub seconds: Vec<Second>,
    /// The other hosts' counters and drops.
    pub observed: Vec<observe::Observed>,
}

/// The receivers' events of one trial turned into samples and trial
/// events.
struct RxSides<'a> {
    events: Vec<mpsc::Receiver<RxEvent>>,
    samples: Vec<Vec<f64>>,
    counts: Vec<Vec<(f64, u64)>>,
    /// Intervals said as `Forwarded` so far (every end had them).
    said: usize,
    on_event: &'a mut dyn FnMut(TrialEvent),
}

impl RxSides<'_> {
    /// Waits until every receiver counts; false when one did not start.
    fn wait_ready(&mut self) -> bool {
        for i in 0..self.events.len() {
            loop {
                match self.events[i].recv_timeout(READY_TIMEOUT) {
                    Ok(RxEvent::Ready { .. }) => break,
                    Ok(RxEvent::Warning(w)) => (self.on_event)(TrialEvent::Warning(w)),
                    Ok(RxEvent::Interval(_) | RxEvent::Note(_)) => continue,
                    Err(_) => return false,
                }
            }
        }
        true
    }

    /// Takes the receivers' events so far; says each interval every
    /// receiver has reported, added up.
    fn drain(&mut self) {
        for i in 0..self.events.len() {
            while let Ok(e) = self.events[i].try_recv() {
                match e {
                    RxEvent::Interval(iv) => {
                        let test = iv.packets - iv.foreign;
                        self.samples[i].push(test as f64 / iv.seconds);
                        self.counts[i].push((iv.elapsed, test));
                        self.say_common();
                    }
                    RxEvent::Warning(w) => (self.on_event)(TrialEvent::Warning(w)),
                    // Said once by `recv`, not by every trial.
                    RxEvent::Ready { .. } | RxEvent::Note(_) => {}
                }
            }
        }
    }

    /// Says the intervals every receiver has reported and were not said.
    fn say_common(&mut self) {
        let common = self.samples.iter().map(Vec::len).min().unwrap_or(0);
        for k in self.said..common {
            let pps = self.samples.iter().map(|s| s[k]).sum();
            (self.on_event)(TrialEvent::Forwarded(pps));
        }
        self.said = self.said.max(common);
    }
}

/// A generator's run and its per-interval rates.
fn generate(
    end: &End<'_>,
    stop: &StopSignal,
    on_interval: &mut dyn FnMut(f64),
) -> (Result<TxSummary, RemoteError>, Vec<f64>) {
    let mut samples = Vec::new();
    let tx = end.gen.generate(end.gen_cfg, stop, &mut |e| {
        if let TxEvent::Interval(iv) = e {
            samples.push(iv.pps);
            on_interval(iv.pps);
        }
    });
    (tx, samples)
}

/// Every receiver up, the other hosts and this host's sampler counting,
/// the generators for the trial (the first on this thread, the others on
/// threads of their own), the drain (and `late_window`), and everything
/// down again.
pub fn run_ends(
    lab: &Target,
    ends: &[End<'_>],
    stop: &StopSignal,
    tracer_mode: pktlab_loss::drops::DropTrace,
    interval: Duration,
    late_window: Duration,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Ran, TrialError> {
    let rx_stop = StopSignal::new();
    let monitor_stop = AtomicBool::new(false);
    let (senders, events): (Vec<_>, Vec<_>) = ends.iter().map(|_| mpsc::channel()).unzip();
    let mut sides = RxSides {
        events,
        samples: vec![Vec::new(); ends.len()],
        counts: vec![Vec::new(); ends.len()],
        said: 0,
        on_event,
    };
    std::thread::scope(|scope| {
        // A panic on this thread stops the receivers and the sampler: the
        // scope waits for them before the panic goes on, for ever if
        // nothing told them to stop.
        let _stop_on_panic = OnPanic(|| {
            rx_stop.stop();
            monitor_stop.store(true, Ordering::Relaxed);
        });
        let receivers: Vec<_> = ends
            .iter()
            .zip(senders)
            .map(|(end, tx_events)| {
                let rx_stop = &rx_stop;
                scope.spawn(move || {
                    end.rcv.receive(end.recv_cfg, rx_stop, &mut move |e| {
                        let _ = tx_events.send(e);
                    })
                })
            })
            .collect();
        let join_all = |receivers: Vec<std::thread::ScopedJoinHandle<'_, _>>| {
            receivers
                .into_iter()
                .map(|r| {
                    r.join()
                        .map_err(|_| TrialError::Failed("the receiver thread panicked".into()))
                })
                .collect::<Result<Vec<Result<RxSummary, RemoteError>>, TrialError>>()
        };
        // The generators start only once every receiver counts.
        if !sides.wait_ready() {
            rx_stop.stop();
            let failed = join_all(receivers)?.into_iter().find_map(Result::err);
            return Err(failed.map_or_else(
                || TrialError::Failed("the receiver did not start".into()),
                TrialError::from,
            ));
        }
        let rx_start = Instant::now();
        // The other hosts count from here, before the first frame.
        let observing = match observe::start(&lab.observers, interval, tracer_mode) {
            Ok(o) => o,
            Err(e) => {
                rx_stop.stop();
                let _ = join_all(receivers);
                return Err(e.into());
            }
        };
        let sampler = scope.spawn(|| monitor::sample_until(lab.sampled(), interval, &monitor_stop));
        (sides.on_event)(TrialEvent::Started);
        let others: Vec<_> = ends[1..]
            .iter()
            .map(|end| scope.spawn(move || generate(end, stop, &mut |_| {})))
            .collect();
        let first = generate(&ends[0], stop, &mut |pps| {
            (sides.on_event)(TrialEvent::Offered(pps));
            sides.drain();
        });
        let mut generated = vec![first];
        for g in others {
            generated.push(
                g.join()
                    .map_err(|_| TrialError::Failed("a generator thread panicked".into()))?,
            );
        }
        let drain_end = rx_start.elapsed() + DRAIN;
        if generated.iter().all(|g| g.0.is_ok()) {
            std::thread::sleep(DRAIN + late_window);
        }
        rx_stop.stop();
        monitor_stop.store(true, Ordering::Relaxed);
        let received = join_all(receivers)?;
        let seconds = sampler
            .join()
            .map_err(|_| TrialError::Failed("the sampling thread panicked".into()))?;
        let observed = observing.finish();
        sides.drain();
        let mut ran = Vec::new();
        for (i, ((tx, tx_samples), rx)) in generated.into_iter().zip(received).enumerate() {
            ran.push(EndRan {
                tx: tx?,
                tx_samples,
                rx: rx?,
                rx_samples: std::mem::take(&mut sides.samples[i]),
                rx_counts: std::mem::take(&mut sides.counts[i]),
            });
        }
        Ok(Ran {
            ends: ran,
            drain_end,
            seconds: seconds?,
            observed: observed?,
        })
    })
}
