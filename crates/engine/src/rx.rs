//! The receive side: one worker thread per port, each checking the test
//! payload of every frame it gets.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use pktlab_io::iface::IfCounters;
use pktlab_io::port::{RxFrame, RxPort};
use pktlab_io::IoError;
use pktlab_wire::parse::{parse_test_frame, FlowKey};
use pktlab_wire::payload::latency_ns;

use crate::backend::describe_backends;
use crate::pool::{self, PoolSpec, Published, Sample, Watch, Worker};
use crate::rates::{l1_bps, per_second};
use crate::seq::{SeqCounts, StreamTable};
use crate::{EngineError, StopSignal, FCS_LEN};

/// How long a worker waits for frames before it looks at the stop signal.
const POLL_TIMEOUT: Duration = Duration::from_millis(20);
/// Latencies above this (an hour) are clamped: the clocks are not shared.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// What an RX run should do.
#[derive(Clone, Debug)]
pub struct RxPlan {
    pub threads: usize,
    /// Stop after this many frames (in total; exact with one thread).
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    /// Stop after this long without frames, once frames have arrived.
    pub idle: Option<Duration>,
    pub interval: Duration,
    pub cpus: Vec<usize>,
    pub netns: Option<String>,
    /// An interface whose own counters are read before and after the run.
    pub iface: Option<String>,
}

impl Default for RxPlan {
    fn default() -> Self {
        RxPlan {
            threads: 1,
            count: None,
            duration: None,
            idle: None,
            interval: Duration::from_secs(1),
            cpus: Vec::new(),
            netns: None,
            iface: None,
        }
    }
}

/// One reporting interval, summed over threads.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RxInterval {
    pub elapsed: f64,
    pub seconds: f64,
    /// Every frame received, test frames and foreign ones.
    pub packets: u64,
    pub bytes: u64,
    /// Frames without a valid test payload.
    pub foreign: u64,
    pub pps: f64,
    pub l2_bps: f64,
    pub l1_bps: f64,
    pub threads: Vec<u64>,
}

/// One-way latency in nanoseconds, from the payload's TX timestamp to the
/// receive timestamp. Meaningful when sender and receiver share a clock.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub min: u64,
    pub avg: f64,
    pub p50: u64,
    /// Absent from summaries written before it was measured.
    #[serde(default)]
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RxThreadSummary {
    /// The port this thread used (`afxdp (copy, native XDP)`, `afpacket`, ...).
    pub backend: String,
    pub packets: u64,
    pub bytes: u64,
    pub foreign: u64,
    /// Frames the kernel dropped because this port's ring was full.
    pub ring_drops: u64,
    pub cpu: Option<usize>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RxSummary {
    /// The backend of the run: the one every thread used, or a count of each.
    pub backend: String,
    pub packets: u64,
    pub bytes: u64,
    /// From the first frame to the last one.
    pub seconds: f64,
    pub pps: f64,
    pub l2_bps: f64,
    pub l1_bps: f64,
    /// Distinct 5-tuples among the test frames.
    pub flows: u64,
    /// Streams (flow indexes of the generator) seen.
    pub streams: u64,
    pub lost: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    pub foreign: u64,
    /// Test frames of streams beyond the receiver's stream limit (`--io
    /// xdp --streams`): counted, not sequence-checked. Always 0 elsewhere.
    #[serde(default)]
    pub untracked: u64,
    pub ring_drops: u64,
    pub latency_ns: Option<Latency>,
    /// Every frame's latency as HDR histogram buckets `(ns, frames)`, in
    /// rising order (3 significant digits), so that runs can be merged and
    /// kept; not part of the JSON summary, which has the percentiles.
    #[serde(skip)]
    pub latency_buckets: Vec<(u64, u64)>,
    pub interrupted: bool,
    pub threads: Vec<RxThreadSummary>,
    pub iface: Option<IfCounters>,
}

#[derive(Clone, Debug)]
pub enum RxEvent {
    /// Every port is open and receiving.
    Ready {
        backend: String,
    },
    Interval(RxInterval),
}

#[derive(Default)]
struct Counters {
    packets: AtomicU64,
    bytes: AtomicU64,
    foreign: AtomicU64,
    /// Nanoseconds since the start at the end of the last batch with
    /// frames, plus one (0: no frame yet).
    last_frame: AtomicU64,
}

impl Published for Counters {
    fn read(&self) -> [u64; 3] {
        [
            self.packets.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
            self.foreign.load(Ordering::Relaxed),
        ]
    }
}

/// Everything one worker learns about the frames it checks.
struct Checker {
    streams: StreamTable,
    /// A hash of each stream's 5-tuple, so that the flow set is touched only
    /// when a stream shows a 5-tuple not seen with it before.
    stream_keys: Vec<u64>,
    flows: HashSet<FlowKey>,
    latency: Histogram<u64>,
    packets: u64,
    bytes: u64,
    foreign: u64,
    /// Receive timestamps of the first and the last frame (0: none yet).
    first_ts: u64,
    last_ts: u64,
}

impl Checker {
    fn new() -> Checker {
        Checker {
            streams: StreamTable::default(),
            stream_keys: Vec::new(),
            flows: HashSet::new(),
            latency: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
                .expect("valid histogram bounds"),
            packets: 0,
            bytes: 0,
            foreign: 0,
            first_ts: 0,
            last_ts: 0,
        }
    }

    #[inline]
    fn check(&mut self, frame: &RxFrame<'_>) {
        self.packets += 1;
        self.bytes += frame.wire_len as u64 + FCS_LEN;
        if self.first_ts == 0 {
            self.first_ts = frame.ts_ns;
        }
        self.last_ts = frame.ts_ns;
        let Some(t) = parse_test_frame(frame.data) else {
            self.foreign += 1;
            return;
        };
        let stream = t.payload.stream;
        self.streams.observe(stream, t.payload.seq);
        let key_hash = hash_key(&t.key);
        let i = stream as usize;
        if i >= self.stream_keys.len() {
            self.stream_keys
                .resize((i + 1).next_power_of_two().max(1024), 0);
        }
        if self.stream_keys[i] != key_hash {
            self.stream_keys[i] = key_hash;
            self.flows.insert(t.key);
        }
        let lat = latency_ns(frame.ts_ns, t.payload.ts40).clamp(1, MAX_LATENCY_NS);
        self.latency.saturating_record(lat);
    }
}

/// A fast, non-zero hash of a flow key (FxHash-style); collisions only
/// cost an extra set lookup.
#[inline]
fn hash_key(key: &FlowKey) -> u64 {
    use std::hash::{Hash, Hasher};
    struct Fx(u64);
    impl Hasher for Fx {
        fn finish(&self) -> u64 {
            self.0 | 1
        }
        fn write(&mut self, bytes: &[u8]) {
            for chunk in bytes.chunks(8) {
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w))
                    .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
            }
        }
    }
    let mut h = Fx(0);
    key.hash(&mut h);
    h.finish()
}

struct WorkerEnd {
    checker: Checker,
    summary: RxThreadSummary,
}

/// Runs one RX thread per port; `open(i)` opens port i inside the thread
/// after it entered `plan.netns` and was pinned. `on_event` runs on the
/// calling thread. The run ends at the count, the duration, the idle
/// timeout, the end of a finite source (pcap), or the stop signal.
pub fn run_rx<P, O, E>(
    plan: &RxPlan,
    open: O,
    stop: &StopSignal,
    mut on_event: E,
) -> Result<RxSummary, EngineError>
where
    P: RxPort,
    O: Fn(usize) -> Result<P, IoError> + Sync,
    E: FnMut(RxEvent),
{
    pktlab_wire::check_threads(plan.threads).map_err(|e| EngineError::BadPlan(e.to_string()))?;
    if plan.interval.is_zero() {
        return Err(EngineError::BadPlan(
            "the report interval must not be zero".into(),
        ));
    }
    let spec = PoolSpec {
        side: "RX",
        netns: plan.netns.as_deref(),
        cpus: &plan.cpus,
        iface: plan.iface.as_deref(),
        interval: plan.interval,
        stop,
        // One thread ending (error, count, end of file) ends the run.
        one_ends_all: true,
    };
    let taken = AtomicU64::new(0);
    let (open, taken) = (&open, &taken);
    let workers: Vec<_> = (0..plan.threads)
        .map(|_| move |w: &Worker<'_, Counters>| worker(plan, open, w, taken))
        .collect();
    let mut watch = RxWatch {
        plan,
        on_event: &mut on_event,
    };
    let finished = pool::run(&spec, workers, &mut watch)?;
    Ok(summarize(finished.ends, finished.iface))
}

/// The calling thread's side of an RX run: events out, and the ends that
/// no worker sees alone (the duration, the idle timeout over all ports).
struct RxWatch<'a, E> {
    plan: &'a RxPlan,
    on_event: &'a mut E,
}

impl<E: FnMut(RxEvent)> Watch<Counters> for RxWatch<'_, E> {
    fn started(&mut self, backends: &[String]) {
        (self.on_event)(RxEvent::Ready {
            backend: describe_backends(backends),
        });
    }

    fn look(
        &mut self,
        now: Instant,
        start: Instant,
        counters: &[CachePadded<Counters>],
        end: &StopSignal,
    ) {
        if self.plan.duration.is_some_and(|d| now >= start + d) {
            end.stop();
        }
        if let Some(idle) = self.plan.idle {
            let last_frame = counters
                .iter()
                .map(|c| c.last_frame.load(Ordering::Relaxed))
                .max()
                .unwrap_or(0);
            if last_frame > 0
                && (now - start).saturating_sub(Duration::from_nanos(last_frame - 1)) >= idle
            {
                end.stop();
            }
        }
    }

    fn sample(&mut self, s: Sample) {
        (self.on_event)(RxEvent::Interval(RxInterval {
            elapsed: s.elapsed,
            seconds: s.seconds,
            packets: s.packets,
            bytes: s.bytes,
            foreign: s.extra,
            pps: s.pps(),
            l2_bps: s.l2_bps(),
            l1_bps: s.l1_bps(),
            threads: s.threads,
        }));
    }
}

/// Sums up what the workers that ran found.
fn summarize(ends: Vec<WorkerEnd>, iface: Option<IfCounters>) -> RxSummary {
    // The active period, by the frames' own receive timestamps.
    let first = ends
        .iter()
        .map(|e| e.checker.first_ts)
        .filter(|&t| t > 0)
        .min();
    let last = ends.iter().map(|e| e.checker.last_ts).max().unwrap_or(0);
    let seconds = match first {
        Some(f) if last > f => (last - f) as f64 / 1e9,
        _ => 0.0,
    };
    let mut seq = SeqCounts::default();
    let mut streams = 0u64;
    let mut flows: HashSet<FlowKey> = HashSet::new();
    let mut latency: Option<Histogram<u64>> = None;
    for e in &ends {
        seq += e.checker.streams.totals();
        streams += e.checker.streams.streams_seen() as u64;
        flows.extend(e.checker.flows.iter().copied());
        match latency.as_mut() {
            Some(h) => h.add(&e.checker.latency).expect("same histogram bounds"),
            None => latency = Some(e.checker.latency.clone()),
        }
    }
    let packets: u64 = ends.iter().map(|e| e.summary.packets).sum();
    let bytes: u64 = ends.iter().map(|e| e.summary.bytes).sum();
    let names: Vec<String> = ends.iter().map(|e| e.summary.backend.clone()).collect();
    RxSummary {
        backend: describe_backends(&names),
        packets,
        bytes,
        seconds,
        pps: per_second(packets as f64, seconds),
        l2_bps: per_second(bytes as f64 * 8.0, seconds),
        l1_bps: l1_bps(packets, bytes, seconds),
        flows: flows.len() as u64,
        streams,
        lost: seq.lost,
        out_of_order: seq.out_of_order,
        duplicates: seq.duplicates,
        foreign: ends.iter().map(|e| e.summary.foreign).sum(),
        untracked: 0,
        ring_drops: ends.iter().map(|e| e.summary.ring_drops).sum(),
        latency_buckets: latency.as_ref().map_or_else(Vec::new, |h| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        }),
        latency_ns: latency.filter(|h| !h.is_empty()).map(|h| Latency {
            count: h.len(),
            min: h.min(),
            avg: h.mean(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }),
        interrupted: crate::stop::interrupted(),
        iface,
        threads: ends.into_iter().map(|e| e.summary).collect(),
    }
}

fn worker<P, O>(
    plan: &RxPlan,
    open: &O,
    w: &Worker<'_, Counters>,
    taken: &AtomicU64,
) -> Result<Option<WorkerEnd>, EngineError>
where
    P: RxPort,
    O: Fn(usize) -> Result<P, IoError>,
{
    let i = w.index();
    let counters = w.counters();
    let cpu = w.cpu();
    let mut port = open(i)?;
    w.opened(port.backend());
    let mut checker = Checker::new();
    let Some(start) = w.wait_start() else {
        return Ok(None);
    };
    let limit = plan.count.unwrap_or(u64::MAX);
    loop {
        if w.should_stop() {
            break;
        }
        let already = taken.load(Ordering::Relaxed);
        if already >= limit {
            break;
        }
        // Frames past the count are left uncounted (exact with one thread;
        // with several, each may take what was left when its batch began).
        let mut budget = limit - already;
        let before_batch = checker.packets;
        port.recv_batch(POLL_TIMEOUT, |frame| {
            if budget > 0 {
                budget -= 1;
                checker.check(frame);
            }
        })?;
        let got = checker.packets - before_batch;
        if got > 0 {
            taken.fetch_add(got, Ordering::Relaxed);
            let now = start.elapsed().as_nanos() as u64 + 1;
            counters.last_frame.store(now, Ordering::Relaxed);
            counters.packets.store(checker.packets, Ordering::Relaxed);
            counters.bytes.store(checker.bytes, Ordering::Relaxed);
            counters.foreign.store(checker.foreign, Ordering::Relaxed);
        }
        if port.at_eof() {
            break;
        }
    }
    let ring_drops = port.drops()?;
    Ok(Some(WorkerEnd {
        summary: RxThreadSummary {
            backend: port.backend(),
            packets: checker.packets,
            bytes: checker.bytes,
            foreign: checker.foreign,
            ring_drops,
            cpu,
        },
        checker,
    }))
}
