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

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pktlab_io::iface::IfCounters;
use pktlab_io::xdpgen::{CpuState, RunEnd, TxReport, XdpGen, XdpGenConfig};

use crate::gate::Gate;
use crate::gen::GenConfig;
use crate::monitor::{join_all, l1_bps, per_second, Monitor, Published};
use crate::tx::{place_thread, TxEvent, TxInterval, TxSummary, TxThreadSummary};
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

/// A thread's counters as the program's map has them.
struct MapCount([u64; 3]);

impl Published for MapCount {
    fn read(&self) -> [u64; 3] {
        self.0
    }
}

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

/// Thread `i`'s share of a total (as `run_tx` splits it).
fn share(total: u64, threads: usize, i: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((i as u64) < total % t)
}

/// Runs `cfg` with the XDP live-frame generator.
pub fn run_xdp_gen(
    cfg: &GenConfig,
    stop: &StopSignal,
    mut on_event: impl FnMut(TxEvent),
) -> Result<TxSummary, EngineError> {
    let plan = &cfg.plan;
    pktlab_wire::check_threads(plan.threads).map_err(|e| EngineError::BadPlan(e.to_string()))?;
    if plan.interval.is_zero() {
        return Err(EngineError::BadPlan(
            "the report interval must not be zero".into(),
        ));
    }
    let iface = cfg
        .iface
        .clone()
        .ok_or_else(|| EngineError::BadPlan("--io xdp needs an interface (-i)".into()))?;
    let cpus = thread_cpus(plan.threads, &plan.cpus)?;
    let batch = u32::try_from(plan.batch).unwrap_or(u32::MAX);
    let xcfg = XdpGenConfig {
        cpus: cpus.clone(),
        batch,
        ts_every: TS_EVERY,
        ..Default::default()
    };
    // Loaded where the interface is (the devmap takes the ifindex of the
    // loading thread's namespace).
    let (gen, before) = std::thread::scope(|s| {
        s.spawn(|| -> Result<_, EngineError> {
            place_thread(plan.netns.as_deref(), &[], 0)?;
            let gen = XdpGen::open(&cfg.frames, &iface, &xcfg)?;
            let before = plan
                .iface
                .as_deref()
                .map(pktlab_io::iface::read_counters)
                .transpose()?;
            Ok((gen, before))
        })
        .join()
        .map_err(|_| EngineError::WorkerPanicked("TX"))?
    })?;
    let backend = gen.backend();
    let gate = Gate::default();
    let done = AtomicU64::new(0);
    let run_stop = StopSignal::new();

    let (ends, start): (Result<Vec<Option<WorkerEnd>>, EngineError>, _) =
        std::thread::scope(|scope| {
            let handles: Vec<_> = cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    let (gen, gate, done, run_stop) = (&gen, &gate, &done, &run_stop);
                    scope.spawn(move || {
                        let r = worker(cfg, i, cpu, gen, gate, stop, run_stop);
                        if r.is_err() {
                            gate.fail();
                            run_stop.stop();
                        }
                        done.fetch_add(1, Ordering::Release);
                        r
                    })
                })
                .collect();
            let Some(start) = gate.open_when_ready(plan.threads, stop) else {
                return (join_all(handles, "TX"), None);
            };
            on_event(TxEvent::Started {
                backend: backend.clone(),
            });
            let mut monitor = Monitor::new(start, plan.interval, plan.threads);
            loop {
                let all_done = done.load(Ordering::Acquire) as usize == plan.threads;
                let counts: Vec<MapCount> = match gen.counters() {
                    Ok(c) => c.iter().map(|s| MapCount([s.frames, s.bytes, 0])).collect(),
                    // The workers report the same failure.
                    Err(_) => break,
                };
                if let Some(s) = monitor.poll(Instant::now(), &counts, all_done) {
                    on_event(TxEvent::Interval(TxInterval::from(s)));
                }
                if all_done {
                    break;
                }
                std::thread::sleep(monitor.nap());
            }
            (join_all(handles, "TX"), Some(start))
        });
    let ends = ends?;
    let interrupted = crate::stop::interrupted();
    let Some(start) = start else {
        return Ok(TxSummary::empty(interrupted));
    };
    let end = ends.iter().flatten().map(|e| e.end).max().unwrap_or(start);
    let seconds = (end - start).as_secs_f64();
    let after = plan
        .iface
        .as_deref()
        .map(|name| -> Result<IfCounters, EngineError> {
            std::thread::scope(|s| {
                s.spawn(|| {
                    place_thread(plan.netns.as_deref(), &[], 0)?;
                    Ok(pktlab_io::iface::read_counters(name)?)
                })
                .join()
                .map_err(|_| EngineError::WorkerPanicked("TX"))?
            })
        })
        .transpose()?;
    let states = gen.counters()?;
    let reports = gen.tx_reports()?;
    let summary = summarize(
        &backend,
        &cpus,
        &states,
        &reports,
        seconds,
        interrupted,
        before.zip(after),
    );
    account(&iface, &states, &reports, summary)
}

/// Sums the map counters up into the summary every backend reports.
fn summarize(
    backend: &str,
    cpus: &[usize],
    states: &[CpuState],
    reports: &[TxReport],
    seconds: f64,
    interrupted: bool,
    iface: Option<(IfCounters, IfCounters)>,
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
        iface: iface.map(|(before, after)| after.delta(&before)),
    }
}

/// Checks that the tracepoints saw every frame the program built go to
/// the driver; any frame lost fails the run, with its count and cause.
fn account(
    iface: &str,
    states: &[CpuState],
    reports: &[TxReport],
    summary: TxSummary,
) -> Result<TxSummary, EngineError> {
    let built: u64 = states.iter().map(|s| s.frames).sum();
    let aborted: u64 = states.iter().map(|s| s.aborted).sum();
    let r = TxReport::sum(reports);
    let seen = r.xmit_sent + r.xmit_drops + r.redirect_errs;
    if r.lost() == 0 && aborted == 0 && seen == built {
        return Ok(summary);
    }
    let mut causes = Vec::new();
    if r.xmit_drops > 0 {
        causes.push(format!(
            "{} dropped by {iface}'s driver (a full ring)",
            r.xmit_drops
        ));
    }
    if r.redirect_errs > 0 {
        causes.push(format!("{} refused by the redirect", r.redirect_errs));
    }
    if aborted > 0 {
        causes.push(format!("{aborted} aborted by the program"));
    }
    if seen != built {
        causes.push(format!(
            "{} not seen by the kernel's XDP tracepoints",
            built.abs_diff(seen)
        ));
    }
    let err = if r.last_err != 0 {
        let text = pktlab_io::os_message(&std::io::Error::from_raw_os_error(-r.last_err as i32));
        format!(" (last error: {text})")
    } else {
        String::new()
    };
    let lost = r.lost() + aborted + built.saturating_sub(seen);
    Err(EngineError::Undelivered {
        message: format!(
            "{lost} of {} frames did not go out on {iface}: {}{err}",
            built + aborted,
            causes.join(", ")
        ),
        summary: Box::new(summary),
    })
}

struct WorkerEnd {
    end: Instant,
}

/// One thread: its CPU, its share of the count and rate, chunk after chunk.
fn worker(
    cfg: &GenConfig,
    i: usize,
    cpu: usize,
    gen: &XdpGen,
    gate: &Gate,
    stop: &StopSignal,
    run_stop: &StopSignal,
) -> Result<Option<WorkerEnd>, EngineError> {
    let plan = &cfg.plan;
    place_thread(plan.netns.as_deref(), &[cpu], 0)?;
    let Some(start) = gate.arrive_and_wait(stop) else {
        return Ok(None);
    };
    let mut remaining = plan.count.map(|n| share(n, plan.threads, i));
    let rate = plan.rate_pps.map(|r| r / plan.threads as f64);
    let chunk = rate.map_or(MAX_CHUNK, paced_chunk);
    let mut pacer = rate.map(|r| ChunkPacer::new(r, chunk));
    let deadline = plan.duration.map(|d| start + d);
    let mut sent = 0u64;
    loop {
        if stop.is_set() || run_stop.is_set() || remaining == Some(0) {
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
    Ok(Some(WorkerEnd {
        end: Instant::now(),
    }))
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
        assert!(account("g0", &[state(100)], &ok, s.clone()).is_ok());
        let lossy = [TxReport {
            xmit_sent: 936,
            xmit_drops: 64,
            last_err: 0,
            ..Default::default()
        }];
        let s = summarize("xdp", &[0], &[state(1000)], &lossy, 1.0, false, None);
        assert_eq!(s.tx_errors, 64);
        let e = account("g0", &[state(1000)], &lossy, s).unwrap_err();
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
        let e = account("g0", &[state(10)], &refused, s).unwrap_err();
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
        let e = account("g0", &[state(100)], &unseen, s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "10 of 100 frames did not go out on g0: 10 not seen by the kernel's XDP tracepoints"
        );
    }
}
