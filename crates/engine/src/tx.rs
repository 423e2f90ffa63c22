//! The transmit side: one worker thread per port, paced, counted, stopped
//! by count, duration or signal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pktlab_io::iface::IfCounters;
use pktlab_io::port::TxPort;
use pktlab_io::IoError;

use crate::backend::describe_backends;
use crate::frame::{FrameSource, FCS_LEN};
use crate::pacer::{self, Pace, Pacer};
use crate::pool::{self, PoolSpec, Published, Sample, Watch, Worker};
use crate::rates::{l1_bps, per_second};
use crate::{clock, EngineError, StopSignal};

/// Frames per `send_batch` call when nothing else limits it.
pub const DEFAULT_BATCH: usize = 64;
/// The longest a paced thread sleeps before it looks at the stop signal again.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// What a TX run should do. Count and rate are totals over all threads.
#[derive(Clone, Debug)]
pub struct TxPlan {
    pub threads: usize,
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    pub rate_pps: Option<f64>,
    pub batch: usize,
    pub interval: Duration,
    /// Thread i runs on `cpus[i % cpus.len()]`; empty: not pinned.
    pub cpus: Vec<usize>,
    /// The network namespace the threads enter before opening their ports.
    pub netns: Option<String>,
    /// An interface whose own counters are read before and after the run.
    pub iface: Option<String>,
    /// Several generators sending one traffic together (one per host):
    /// this run's threads are threads `first..first + threads` of `of`.
    /// Each thread owns the flows of its index among all, so the streams
    /// of the generators are disjoint. None: this run is all of them.
    pub share: Option<ThreadShare>,
}

/// This generator's part of the threads of several generators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThreadShare {
    pub first: usize,
    pub of: usize,
}

impl Default for TxPlan {
    fn default() -> Self {
        TxPlan {
            threads: 1,
            count: None,
            duration: None,
            rate_pps: None,
            batch: DEFAULT_BATCH,
            interval: Duration::from_secs(1),
            cpus: Vec::new(),
            netns: None,
            iface: None,
            share: None,
        }
    }
}

impl TxPlan {
    fn check(&self) -> Result<(), EngineError> {
        pktlab_wire::check_threads(self.threads)
            .map_err(|e| EngineError::BadPlan(e.to_string()))?;
        if self.batch == 0 {
            return Err(EngineError::BadPlan(
                "the batch size must be at least 1".into(),
            ));
        }
        if self.interval.is_zero() {
            return Err(EngineError::BadPlan(
                "the report interval must not be zero".into(),
            ));
        }
        if let Some(r) = self.rate_pps {
            if !(r.is_finite() && r > 0.0) {
                return Err(EngineError::BadPlan(format!("invalid rate {r} pps")));
            }
        }
        Ok(())
    }

    /// Thread `i`'s share of a total: the first `total % threads` threads
    /// take one more.
    pub(crate) fn share(total: u64, threads: usize, i: usize) -> u64 {
        let t = threads as u64;
        total / t + u64::from((i as u64) < total % t)
    }
}

/// One reporting interval, summed over threads.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TxInterval {
    /// Seconds since the start, at the end of this interval.
    pub elapsed: f64,
    /// The interval's real length in seconds.
    pub seconds: f64,
    pub packets: u64,
    pub bytes: u64,
    pub pps: f64,
    pub l2_bps: f64,
    pub l1_bps: f64,
    /// Packets per thread in this interval.
    pub threads: Vec<u64>,
}

impl From<Sample> for TxInterval {
    fn from(s: Sample) -> TxInterval {
        TxInterval {
            elapsed: s.elapsed,
            seconds: s.seconds,
            packets: s.packets,
            bytes: s.bytes,
            pps: s.pps(),
            l2_bps: s.l2_bps(),
            l1_bps: s.l1_bps(),
            threads: s.threads,
        }
    }
}

/// What one thread did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TxThreadSummary {
    /// The port this thread used (`afxdp (copy)`, `afpacket`, ...).
    pub backend: String,
    pub packets: u64,
    pub bytes: u64,
    pub tx_errors: u64,
    pub cpu: Option<usize>,
}

/// What the whole run did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TxSummary {
    /// The backend of the run: the one every thread used, or a count of each.
    pub backend: String,
    pub packets: u64,
    pub bytes: u64,
    /// From the start until the last thread had handed its last frame over.
    pub seconds: f64,
    pub pps: f64,
    pub l2_bps: f64,
    pub l1_bps: f64,
    /// Frames the port or the kernel refused.
    pub tx_errors: u64,
    /// The run was cut short by Ctrl-C / SIGTERM.
    pub interrupted: bool,
    pub threads: Vec<TxThreadSummary>,
    /// The interface's own counters over the run.
    pub iface: Option<IfCounters>,
}

/// Events handed to the caller's thread while the run goes on.
#[derive(Clone, Debug)]
pub enum TxEvent {
    /// Every port is open; the clock starts now.
    Started {
        backend: String,
    },
    Interval(TxInterval),
}

#[derive(Default)]
struct Counters {
    packets: AtomicU64,
    bytes: AtomicU64,
}

impl Published for Counters {
    fn read(&self) -> [u64; 3] {
        [
            self.packets.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
            0,
        ]
    }
}

struct WorkerEnd {
    summary: TxThreadSummary,
    end: Instant,
}

/// Runs one TX thread per source. Each thread enters `plan.netns`, pins
/// itself, opens its port with `open(thread_index)`, and then they start
/// together. `on_event` runs on the calling thread.
pub fn run_tx<P, S, O, E>(
    plan: &TxPlan,
    sources: Vec<S>,
    open: O,
    stop: &StopSignal,
    mut on_event: E,
) -> Result<TxSummary, EngineError>
where
    P: TxPort,
    S: FrameSource,
    O: Fn(usize) -> Result<P, IoError> + Sync,
    E: FnMut(TxEvent),
{
    plan.check()?;
    if sources.len() != plan.threads {
        return Err(EngineError::BadPlan(format!(
            "{} frame sources for {} threads",
            sources.len(),
            plan.threads
        )));
    }
    let spec = PoolSpec {
        side: "TX",
        netns: plan.netns.as_deref(),
        cpus: &plan.cpus,
        iface: plan.iface.as_deref(),
        interval: plan.interval,
        stop,
        one_ends_all: false,
    };
    let open = &open;
    let workers: Vec<_> = sources
        .into_iter()
        .map(|source| move |w: &Worker<'_, Counters>| worker(plan, source, open, w))
        .collect();
    let finished = pool::run(&spec, workers, &mut TxWatch(&mut on_event))?;
    let interrupted = crate::stop::interrupted();
    let Some(start) = finished.start else {
        return Ok(TxSummary::empty(interrupted));
    };
    let (ends, iface) = (finished.ends, finished.iface);
    let packets: u64 = ends.iter().map(|e| e.summary.packets).sum();
    let bytes: u64 = ends.iter().map(|e| e.summary.bytes).sum();
    let end = ends.iter().map(|e| e.end).max().unwrap_or(start);
    let seconds = (end - start).as_secs_f64();
    let names: Vec<String> = ends.iter().map(|e| e.summary.backend.clone()).collect();
    Ok(TxSummary {
        backend: describe_backends(&names),
        packets,
        bytes,
        seconds,
        pps: per_second(packets as f64, seconds),
        l2_bps: per_second(bytes as f64 * 8.0, seconds),
        l1_bps: l1_bps(packets, bytes, seconds),
        tx_errors: ends.iter().map(|e| e.summary.tx_errors).sum(),
        interrupted,
        iface,
        threads: ends.into_iter().map(|e| e.summary).collect(),
    })
}

/// The calling thread's side of a TX run: events out, nothing to watch.
pub(crate) struct TxWatch<'e, E>(pub &'e mut E);

impl<C, E: FnMut(TxEvent)> Watch<C> for TxWatch<'_, E> {
    fn started(&mut self, backends: &[String]) {
        (self.0)(TxEvent::Started {
            backend: describe_backends(backends),
        });
    }

    fn sample(&mut self, sample: Sample) {
        (self.0)(TxEvent::Interval(TxInterval::from(sample)));
    }
}

impl TxSummary {
    /// The summary of a run that never started.
    pub(crate) fn empty(interrupted: bool) -> TxSummary {
        TxSummary {
            backend: String::new(),
            packets: 0,
            bytes: 0,
            seconds: 0.0,
            pps: 0.0,
            l2_bps: 0.0,
            l1_bps: 0.0,
            tx_errors: 0,
            interrupted,
            threads: Vec::new(),
            iface: None,
        }
    }
}

fn worker<P, S, O>(
    plan: &TxPlan,
    mut source: S,
    open: &O,
    w: &Worker<'_, Counters>,
) -> Result<Option<WorkerEnd>, EngineError>
where
    P: TxPort,
    S: FrameSource,
    O: Fn(usize) -> Result<P, IoError>,
{
    let i = w.index();
    let counters = w.counters();
    let cpu = w.cpu();
    let mut port = open(i)?;
    w.opened(port.backend());
    if port.slot_size() < source.max_len() {
        return Err(EngineError::BadPlan(format!(
            "frames of {} bytes do not fit the port's {}-byte slots",
            source.max_len() + FCS_LEN as usize,
            port.slot_size()
        )));
    }

    let Some(start) = w.wait_start() else {
        return Ok(None);
    };
    let mut remaining = plan.count.map(|n| TxPlan::share(n, plan.threads, i));
    let mut pacer = plan
        .rate_pps
        .map(|r| Pacer::new(r / plan.threads as f64, plan.batch));
    let deadline = plan.duration.map(|d| start + d);
    let (mut packets, mut bytes) = (0u64, 0u64);

    loop {
        if w.should_stop() {
            break;
        }
        let mut want = plan.batch;
        if let Some(r) = remaining {
            if r == 0 {
                break;
            }
            want = want.min(r as usize);
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break;
        }
        if let Some(p) = pacer.as_mut() {
            match p.pace(now - start, want) {
                Pace::Send(n) => want = n,
                Pace::Wait(d) => {
                    let until_deadline = deadline.map_or(MAX_SLEEP, |dl| dl - now);
                    pacer::wait(d.min(MAX_SLEEP).min(until_deadline));
                    continue;
                }
            }
        }
        // One timestamp per batch: a clock read per frame would cost more
        // than building the frame. Batches are small when the rate is low.
        let ts = clock::realtime_ns();
        let mut batch_bytes = 0u64;
        let n = port.send_batch(want, |_, slot, prev_len| {
            let len = source.write_next(slot, prev_len, ts);
            batch_bytes += len as u64 + FCS_LEN;
            len
        })?;
        if let Some(p) = pacer.as_mut() {
            p.sent(n);
        }
        if let Some(r) = remaining.as_mut() {
            *r -= n as u64;
        }
        packets += n as u64;
        bytes += batch_bytes;
        counters.packets.store(packets, Ordering::Relaxed);
        counters.bytes.store(bytes, Ordering::Relaxed);
    }
    port.flush()?;
    let end = Instant::now();
    Ok(Some(WorkerEnd {
        summary: TxThreadSummary {
            backend: port.backend(),
            packets,
            bytes,
            tx_errors: port.tx_errors(),
            cpu,
        },
        end,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_io::null::NullTx;

    /// Writes 60-byte frames numbered in their first 8 bytes.
    struct Numbered(u64);

    impl FrameSource for Numbered {
        fn max_len(&self) -> usize {
            60
        }
        fn write_next(&mut self, buf: &mut [u8], _prev: usize, _ts: u64) -> usize {
            buf[..8].copy_from_slice(&self.0.to_be_bytes());
            self.0 += 1;
            60
        }
    }

    /// `plan` with one `Numbered` source into a null port of `slot` bytes.
    fn run_one(plan: &TxPlan, slot: usize) -> Result<TxSummary, EngineError> {
        watched(|stop| {
            run_tx(
                plan,
                vec![Numbered(0)],
                move |_| Ok(NullTx::new(slot)),
                stop,
                |_| {},
            )
        })
    }

    /// Runs `run` with a stop signal that a watchdog gives after 10 s, so
    /// that a paced run whose pacer never lets its frames go (a broken
    /// `pacer.rs`) fails the test's counts rather than never ending.
    fn watched<T>(run: impl FnOnce(&StopSignal) -> T) -> T {
        let stop = StopSignal::new();
        let (ended, end) = std::sync::mpsc::channel::<()>();
        let watchdog = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                if end.recv_timeout(Duration::from_secs(10)).is_err() {
                    stop.stop();
                }
            })
        };
        let out = run(&stop);
        let _ = ended.send(());
        watchdog.join().unwrap();
        out
    }

    #[test]
    fn count_is_a_total_split_across_threads() {
        // The first `count % threads` threads take one more, by hand.
        let cases: [(u64, &[u64]); 4] = [
            (1000, &[1000]),
            (1001, &[501, 500]),
            (10, &[4, 3, 3]),
            (2, &[1, 1, 0, 0]),
        ];
        for (count, want) in cases {
            let threads = want.len();
            let plan = TxPlan {
                threads,
                count: Some(count),
                interval: Duration::from_millis(50),
                ..TxPlan::default()
            };
            let sources = (0..threads).map(|_| Numbered(0)).collect();
            let summary = run_tx(
                &plan,
                sources,
                |_| Ok(NullTx::new(64)),
                &StopSignal::new(),
                |_| {},
            )
            .unwrap();
            assert_eq!(summary.packets, count);
            assert_eq!(summary.bytes, count * 64);
            let per: Vec<u64> = summary.threads.iter().map(|t| t.packets).collect();
            assert_eq!(per, want);
            assert_eq!(per.iter().sum::<u64>(), count);
        }
    }

    #[test]
    fn paced_run_sends_exactly_count_and_reports_intervals() {
        let plan = TxPlan {
            threads: 2,
            count: Some(2000),
            rate_pps: Some(20_000.0),
            interval: Duration::from_millis(20),
            ..TxPlan::default()
        };
        let mut intervals = Vec::new();
        let mut started = false;
        let summary = watched(|stop| {
            run_tx(
                &plan,
                vec![Numbered(0), Numbered(0)],
                |_| Ok(NullTx::new(64)),
                stop,
                |e| match e {
                    TxEvent::Started { .. } => started = true,
                    TxEvent::Interval(iv) => intervals.push(iv),
                },
            )
        })
        .unwrap();
        assert!(started);
        assert_eq!(summary.packets, 2000);
        // The intervals add up to the total.
        assert_eq!(intervals.iter().map(|i| i.packets).sum::<u64>(), 2000);
        assert_eq!(intervals.iter().map(|i| i.bytes).sum::<u64>(), 2000 * 64);
        // 2000 frames at 20 kpps cannot take less than ~0.1 s.
        assert!(summary.seconds >= 0.09, "{}", summary.seconds);
        assert_eq!(summary.l2_bps, (2000 * 64 * 8) as f64 / summary.seconds);
        for iv in &intervals {
            assert_eq!(iv.threads.iter().sum::<u64>(), iv.packets);
            assert_eq!(
                iv.l1_bps,
                (iv.bytes + 20 * iv.packets) as f64 * 8.0 / iv.seconds
            );
        }
    }

    #[test]
    fn duration_stops_an_unlimited_run() {
        let plan = TxPlan {
            duration: Some(Duration::from_millis(100)),
            ..TxPlan::default()
        };
        let s = run_one(&plan, 64).unwrap();
        assert!(s.packets > 0);
        assert!(s.seconds >= 0.1 && s.seconds < 5.0, "{}", s.seconds);
    }

    #[test]
    fn a_port_that_fails_to_open_fails_the_run() {
        let plan = TxPlan {
            threads: 2,
            count: Some(10),
            ..TxPlan::default()
        };
        let e = run_tx(
            &plan,
            vec![Numbered(0), Numbered(0)],
            |i| {
                if i == 1 {
                    Err(IoError::NoSuchInterface("nosuchif".into()))
                } else {
                    Ok(NullTx::new(64))
                }
            },
            &StopSignal::new(),
            |_| {},
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "no such interface: nosuchif");
        assert!(e.is_usage());
    }

    #[test]
    fn frames_larger_than_the_slot_are_refused() {
        let plan = TxPlan {
            count: Some(1),
            ..TxPlan::default()
        };
        let e = run_one(&plan, 32).unwrap_err();
        assert!(e.to_string().contains("do not fit"), "{e}");
        // 60-byte frames (64 with the FCS) fit a 60-byte slot exactly,
        // and not one of 59.
        assert_eq!(run_one(&plan, 60).unwrap().packets, 1);
        assert_eq!(
            run_one(&plan, 59).unwrap_err().to_string(),
            "frames of 64 bytes do not fit the port's 59-byte slots"
        );
    }

    #[test]
    fn bad_plans_are_refused_before_any_frame() {
        // Checked directly: a plan let through by mistake would panic a
        // worker (the pacer asserts its rate) or never send.
        let base = TxPlan {
            count: Some(1),
            ..TxPlan::default()
        };
        let check = |plan: TxPlan| plan.check().map_err(|e| e.to_string());
        for rate in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            let plan = TxPlan {
                rate_pps: Some(rate),
                ..base.clone()
            };
            assert_eq!(check(plan), Err(format!("invalid rate {rate} pps")));
        }
        let plan = TxPlan {
            batch: 0,
            ..base.clone()
        };
        assert_eq!(check(plan), Err("the batch size must be at least 1".into()));
        let plan = TxPlan {
            interval: Duration::ZERO,
            ..base.clone()
        };
        assert_eq!(
            check(plan),
            Err("the report interval must not be zero".into())
        );
        let plan = TxPlan {
            threads: 0,
            ..base.clone()
        };
        assert!(check(plan).is_err());
        // A positive, finite rate is taken, and the run sends its frame.
        let plan = TxPlan {
            rate_pps: Some(1e6),
            ..base
        };
        assert_eq!(check(plan.clone()), Ok(()));
        assert_eq!(run_one(&plan, 64).unwrap().packets, 1);
    }

    #[test]
    fn stop_signal_ends_the_run() {
        let stop = StopSignal::new();
        let stopper = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            stopper.stop();
        });
        let s = run_tx(
            &TxPlan::default(),
            vec![Numbered(0)],
            |_| Ok(NullTx::new(64)),
            &stop,
            |_| {},
        )
        .unwrap();
        t.join().unwrap();
        assert!(s.packets > 0);
    }
}
