//! `--io xdp`: a generator run whose frames are built by the io layer's
//! XDP live-frame generator, with the same plan, events and summary as
//! [`crate::tx::run_tx`].
//!
//! Each thread is pinned to a CPU of its own (the program's state is per
//! CPU) and calls [`XdpGen::run`] in chunks: as large as
//! [`MAX_CHUNK`] when unpaced, about a millisecond's worth of frames when
//! paced, so a rate is held chunk by chunk. Counts and rates are totals
//! over threads, split as `run_tx` splits them. The counters come from the
//! program's maps; at the end, what the kernel's tracepoints saw is
//! checked against them: every frame built must have been taken by the
//! driver, and any frame dropped or refused fails the run with the count.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use pktlab_io::iface::IfCounters;
use pktlab_io::xdpgen::{CpuState, RunEnd, TxReport, XdpGen, XdpGenConfig};
use pktlab_wire::frame::FrameSpec;

use crate::error::Undelivered;
use crate::pool::{self, in_netns, NoCounters, PoolSpec, Sample, Watch, Worker};
use crate::rates::{l1_bps, per_second};
use crate::tx::{TxEvent, TxPlan, TxSummary, TxThreadSummary, TxWatch};
use crate::{EngineError, StopSignal};

/// Frames per BPF_PROG_RUN call when nothing limits it: large enough that
/// the call's own cost (a page pool made and freed, ~20 µs) stays below
/// 1%, small enough to stop within a few milliseconds.
pub const MAX_CHUNK: u32 = 16384;
/// Chunks are multiples of the program's clock reuse (one read per 16
/// frames), so no chunk starts with a stale timestamp.
const CHUNK_ALIGN: u32 = 16;
/// The program reads the clock once per this many frames.
const TS_EVERY: u32 = 16;
/// The longest a paced thread sleeps before it looks at the stop signal.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// The CPUs of the threads: `--cpus` (one each, at least as many as
/// threads), or the first CPUs this process may use.
fn thread_cpus(threads: usize, cpus: &[usize]) -> Result<Vec<usize>, EngineError> {
    let list = if cpus.is_empty() {
        crate::affinity::allowed_cpus()
    } else {
        cpus.to_vec()
    };
    if list.len() < threads {
        let what = if cpus.is_empty() {
            format!("this process may use {} CPUs", list.len())
        } else {
            format!("--cpus lists {}", list.len())
        };
        return Err(EngineError::BadPlan(format!(
            "--io xdp runs each of its {threads} threads on a CPU of its own, but {what}: use fewer threads (-p) or more CPUs (--cpus)"
        )));
    }
    Ok(list[..threads].to_vec())
}

/// Frames per call for a thread paced at `rate` frames per second: about
/// a millisecond's worth, a multiple of [`CHUNK_ALIGN`].
fn paced_chunk(rate: f64) -> u32 {
    let per_ms = (rate / 1000.0).ceil() as u64;
    let aligned = per_ms.div_ceil(u64::from(CHUNK_ALIGN)) * u64::from(CHUNK_ALIGN);
    aligned.clamp(u64::from(CHUNK_ALIGN), u64::from(MAX_CHUNK)) as u32
}

/// When the next chunk may start: each chunk leaves at the time its first
/// frame is due. A thread that fell behind by more than a chunk and a
/// millisecond forgives the rest, as [`crate::pacer::Pacer`] does, rather
/// than catch up with a burst.
struct ChunkPacer {
    rate: f64,
    accounted: u64,
    slack: u64,
}

impl ChunkPacer {
    fn new(rate: f64, chunk: u32) -> ChunkPacer {
        ChunkPacer {
            rate,
            accounted: 0,
            slack: u64::from(chunk) + (rate / 1000.0).ceil() as u64,
        }
    }

    /// How long to wait at `elapsed` before sending the next chunk.
    fn wait(&mut self, elapsed: Duration) -> Duration {
        let due_now = (elapsed.as_secs_f64() * self.rate) as u64;
        if due_now > self.accounted + self.slack {
            self.accounted = due_now - self.slack;
        }
        let at = self.accounted as f64 / self.rate;
        Duration::from_secs_f64((at - elapsed.as_secs_f64()).max(0.0))
    }

    fn sent(&mut self, n: u64) {
        self.accounted += n;
    }
}

/// Runs `plan` with the XDP live-frame generator on `iface`, frames as
/// `frames` describes. A run whose frames did not all go out is still
/// summed up: the summary comes with what was lost, if anything.
pub fn run_xdp_gen(
    frames: &FrameSpec,
    iface: &str,
    plan: &TxPlan,
    stop: &StopSignal,
    mut on_event: impl FnMut(TxEvent),
) -> Result<(TxSummary, Option<Undelivered>), EngineError> {
    pktlab_wire::check_threads(plan.threads).map_err(|e| EngineError::BadPlan(e.to_string()))?;
    if plan.interval.is_zero() {
        return Err(EngineError::BadPlan(
            "the report interval must not be zero".into(),
        ));
    }
    let cpus = thread_cpus(plan.threads, &plan.cpus)?;
    let batch = u32::try_from(plan.batch).unwrap_or(u32::MAX);
    let xcfg = XdpGenConfig {
        cpus: cpus.clone(),
        batch,
        ts_every: TS_EVERY,
        ..Default::default()
    };
    let netns = plan.netns.as_deref();
    // Loaded where the interface is (the devmap takes the ifindex of the
    // loading thread's namespace).
    let gen = in_netns(netns, "TX", || Ok(XdpGen::open(frames, iface, &xcfg)?))?;
    let backend = gen.backend();
    let spec = PoolSpec {
        side: "TX",
        netns,
        cpus: &cpus,
        iface: plan.iface.as_deref(),
        interval: plan.interval,
        stop,
        one_ends_all: false,
    };
    let gen_ref = &gen;
    // One worker per CPU of `cpus`, pinned there by the pool.
    let workers: Vec<_> = (0..cpus.len())
        .map(|_| move |w: &Worker<'_, NoCounters>| worker(plan, gen_ref, w))
        .collect();
    let mut watch = XdpWatch {
        gen: &gen,
        backend: &backend,
        events: TxWatch(&mut on_event),
    };
    let finished = pool::run(&spec, workers, &mut watch)?;
    let interrupted = crate::stop::interrupted();
    let Some(start) = finished.start else {
        return Ok((TxSummary::empty(interrupted), None));
    };
    let end = finished.ends.iter().max().copied().unwrap_or(start);
    let seconds = (end - start).as_secs_f64();
    let states = gen.counters()?;
    let reports = gen.tx_reports()?;
    let summary = summarize(
        &backend,
        &cpus,
        &states,
        &reports,
        seconds,
        interrupted,
        finished.iface,
    );
    Ok((summary, account(iface, &states, &reports)))
}

/// The calling thread's side of an XDP run: the counts come from the
/// program's maps, the events go out as any TX run's do.
struct XdpWatch<'a, E> {
    gen: &'a XdpGen,
    /// The generator's backend: the workers open no port to publish one.
    backend: &'a str,
    events: TxWatch<'a, E>,
}

impl<E: FnMut(TxEvent)> Watch<NoCounters> for XdpWatch<'_, E> {
    fn started(&mut self, _backends: &[String]) {
        (self.events.0)(TxEvent::Started {
            backend: self.backend.to_string(),
        });
    }

    fn counts(&mut self, _counters: &[CachePadded<NoCounters>]) -> Option<Vec<[u64; 3]>> {
        // On failure the workers report the same error.
        let states = self.gen.counters().ok()?;
        Some(states.iter().map(|s| [s.frames, s.bytes, 0]).collect())
    }

    fn sample(&mut self, sample: Sample) {
        <TxWatch<'_, E> as Watch<NoCounters>>::sample(&mut self.events, sample);
    }
}

/// Sums the map counters up into the summary every backend reports.
fn summarize(
    backend: &str,
    cpus: &[usize],
    states: &[CpuState],
    reports: &[TxReport],
    seconds: f64,
    interrupted: bool,
    iface: Option<IfCounters>,
) -> TxSummary {
    let packets: u64 = states.iter().map(|s| s.frames).sum();
    let bytes: u64 = states.iter().map(|s| s.bytes).sum();
    TxSummary {
        backend: backend.to_string(),
        packets,
        bytes,
        seconds,
        pps: per_second(packets as f64, seconds),
        l2_bps: per_second(bytes as f64 * 8.0, seconds),
        l1_bps: l1_bps(packets, bytes, seconds),
        tx_errors: reports.iter().map(TxReport::lost).sum(),
        interrupted,
        threads: states
            .iter()
            .zip(reports)
            .zip(cpus)
            .map(|((s, r), &cpu)| TxThreadSummary {
                backend: backend.to_string(),
                packets: s.frames,
                bytes: s.bytes,
                tx_errors: r.lost(),
                cpu: Some(cpu),
            })
            .collect(),
        iface,
    }
}

/// Checks that the tracepoints saw every frame the program built go to
/// the driver: None when they did, otherwise what was lost and why.
fn account(iface: &str, states: &[CpuState], reports: &[TxReport]) -> Option<Undelivered> {
    let built: u64 = states.iter().map(|s| s.frames).sum();
    let aborted: u64 = states.iter().map(|s| s.aborted).sum();
    let r = TxReport::sum(reports);
    let seen = r.xmit_sent + r.xmit_drops + r.redirect_errs;
    if r.lost() == 0 && aborted == 0 && seen == built {
        return None;
    }
    Some(Undelivered {
        iface: iface.to_string(),
        built: built + aborted,
        driver_drops: r.xmit_drops,
        redirect_errors: r.redirect_errs,
        aborted,
        unseen: built.abs_diff(seen),
        last_errno: r.last_err,
    })
}

/// One thread, on a CPU of its own: its share of the count and rate, chunk after
/// chunk. Returns when it handed its last chunk over.
fn worker(
    plan: &TxPlan,
    gen: &XdpGen,
    w: &Worker<'_, NoCounters>,
) -> Result<Option<Instant>, EngineError> {
    let i = w.index();
    let Some(start) = w.wait_start() else {
        return Ok(None);
    };
    let mut remaining = plan.count.map(|n| TxPlan::share(n, plan.threads, i));
    let rate = plan.rate_pps.map(|r| r / plan.threads as f64);
    let chunk = rate.map_or(MAX_CHUNK, paced_chunk);
    let mut pacer = rate.map(|r| ChunkPacer::new(r, chunk));
    let deadline = plan.duration.map(|d| start + d);
    let mut sent = 0u64;
    loop {
        if w.should_stop() || remaining == Some(0) {
            break;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break;
        }
        if let Some(p) = pacer.as_mut() {
            let wait = p.wait(now - start);
            if !wait.is_zero() {
                let until_deadline = deadline.map_or(MAX_SLEEP, |d| d - now);
                crate::pacer::wait(wait.min(MAX_SLEEP).min(until_deadline));
                continue;
            }
        }
        let n = remaining.map_or(chunk, |r| r.min(u64::from(chunk)) as u32);
        let went = match gen.run(n)? {
            RunEnd::Done => u64::from(n),
            // A signal cut the call short: the program's counters say how
            // far it got (aborted frames were runs too).
            RunEnd::Interrupted => {
                let s = gen.counters()?[i];
                (s.frames + s.aborted).saturating_sub(sent)
            }
        };
        sent += went;
        if let Some(p) = pacer.as_mut() {
            p.sent(went);
        }
        if let Some(r) = remaining.as_mut() {
            *r = r.saturating_sub(went);
        }
    }
    Ok(Some(Instant::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_a_millisecond_aligned_to_16() {
        assert_eq!(paced_chunk(200_000.0), 208);
        assert_eq!(paced_chunk(100_000.0), 112);
        assert_eq!(paced_chunk(1000.0), 16);
        assert_eq!(paced_chunk(10.0), 16);
        assert_eq!(paced_chunk(1e9), MAX_CHUNK);
    }

    #[test]
    fn pacing_releases_chunks_on_time_and_forgives_stalls() {
        let mut p = ChunkPacer::new(1000.0, 16); // a frame per ms
        assert_eq!(p.wait(Duration::ZERO), Duration::ZERO);
        p.sent(16);
        assert_eq!(p.wait(Duration::from_millis(10)), Duration::from_millis(6));
        assert_eq!(p.wait(Duration::from_millis(16)), Duration::ZERO);
        p.sent(16);
        // A 1 s stall: 1000 frames due; only a chunk and a ms of debt kept.
        assert_eq!(p.wait(Duration::from_secs(1)), Duration::ZERO);
        assert_eq!(p.accounted, 1000 - 17);
    }

    #[test]
    fn cpus_one_per_thread() {
        assert_eq!(thread_cpus(2, &[3, 1, 0]).unwrap(), [3, 1]);
        let e = thread_cpus(3, &[0, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--io xdp runs each of its 3 threads on a CPU of its own, but --cpus lists 2: use fewer threads (-p) or more CPUs (--cpus)"
        );
        assert!(e.is_usage());
        let all = crate::affinity::allowed_cpus();
        assert_eq!(thread_cpus(1, &[]).unwrap(), [all[0]]);
    }

    #[test]
    fn lost_frames_fail_the_run_with_the_count_and_cause() {
        let state = |frames| CpuState {
            frames,
            ..Default::default()
        };
        let ok = [TxReport {
            xmit_sent: 100,
            xmit_calls: 7,
            ..Default::default()
        }];
        let s = summarize("xdp", &[0], &[state(100)], &ok, 1.0, false, None);
        assert_eq!((s.packets, s.tx_errors), (100, 0));
        assert_eq!(account("g0", &[state(100)], &ok), None);
        let lossy = [TxReport {
            xmit_sent: 936,
            xmit_drops: 64,
            last_err: 0,
            ..Default::default()
        }];
        let s = summarize("xdp", &[0], &[state(1000)], &lossy, 1.0, false, None);
        assert_eq!(s.tx_errors, 64);
        let e = EngineError::Undelivered(account("g0", &[state(1000)], &lossy).unwrap());
        assert_eq!(
            e.to_string(),
            "64 of 1000 frames did not go out on g0: 64 dropped by g0's driver (a full ring)"
        );
        assert!(!e.is_usage());
        let refused = [TxReport {
            redirect_errs: 10,
            last_err: -95,
            ..Default::default()
        }];
        let s = summarize("xdp", &[0], &[state(10)], &refused, 1.0, false, None);
        assert_eq!((s.packets, s.tx_errors), (10, 10));
        let e = EngineError::Undelivered(account("g0", &[state(10)], &refused).unwrap());
        assert_eq!(
            e.to_string(),
            "10 of 10 frames did not go out on g0: 10 refused by the redirect (last error: Operation not supported)"
        );
        // Frames the tracepoints never saw are not silently fine either.
        let unseen = [TxReport {
            xmit_sent: 90,
            ..Default::default()
        }];
        let s = summarize("xdp", &[0], &[state(100)], &unseen, 1.0, false, None);
        // The tracepoints report no error: only the accounting finds them.
        assert_eq!((s.packets, s.tx_errors), (100, 0));
        let e = EngineError::Undelivered(account("g0", &[state(100)], &unseen).unwrap());
        assert_eq!(
            e.to_string(),
            "10 of 100 frames did not go out on g0: 10 not seen by the kernel's XDP tracepoints"
        );
    }
}
