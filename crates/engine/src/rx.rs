//! The receive side: one worker thread per port, each checking the test
//! payload of every frame it gets.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use pktlab_io::iface::{read_counters, IfCounters};
use pktlab_io::port::{RxFrame, RxPort};
use pktlab_io::IoError;
use pktlab_wire::parse::{parse_test_frame, FlowKey};
use pktlab_wire::payload::{believable_latency, latency_ns};

use crate::backend::describe_backends;
use crate::frame::FCS_LEN;
use crate::pool::{self, PoolSpec, Published, Sample, Watch, Worker};
use crate::rates::{l1_bps, per_second};
use crate::seq::{SeqCounts, StreamTable, MAX_STREAMS};
use crate::{EngineError, StopSignal};

/// How long a worker waits for frames before it looks at the stop signal.
const POLL_TIMEOUT: Duration = Duration::from_millis(20);
/// Latencies above this (an hour) are clamped: the clocks are not shared.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Distinct 5-tuples one thread remembers: frames anyone sends can carry
/// new ones, so the set stops growing there (a generator's flows are fewer
/// as a rule; `flows` then says "at least").
pub const MAX_FLOWS_SEEN: usize = 1 << 16;

/// The most memory one RX thread's checking takes, whatever frames arrive:
/// the stream table, a 5-tuple hash per stream, and the flow set (a
/// hashbrown table of at most twice as many buckets as entries, each a key
/// and a control byte, plus the old table while it grows).
pub const CHECKER_MAX_BYTES: usize = StreamTable::MAX_BYTES
    + MAX_STREAMS as usize * std::mem::size_of::<u64>()
    + 2 * MAX_FLOWS_SEEN * (std::mem::size_of::<FlowKey>() + 1) * 3 / 2;

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
    /// One test frame in this many was timed (`recv --io xdp --latency
    /// 1/N`); absent when every one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_in: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RxThreadSummary {
    /// The port this thread used (`afxdp (copy, native XDP)`, `afpacket`, ...).
    pub backend: String,
    pub packets: u64,
    pub bytes: u64,
    pub foreign: u64,
    /// Test frames of stream ids beyond the ones a thread tracks.
    #[serde(default)]
    pub untracked: u64,
    /// Frames the kernel dropped because this port's ring was full.
    pub ring_drops: u64,
    pub cpu: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// Test frames counted in `packets` but not sequence-checked: stream
    /// ids from [`MAX_STREAMS`] up in user space, streams beyond `--io xdp
    /// --streams` in the kernel (bounds on the receiver's memory).
    #[serde(default)]
    pub untracked: u64,
    pub ring_drops: u64,
    /// Test frames whose TX stamp is from the future or from before the
    /// run (clocks apart, or frames that are not pktlab's): counted and
    /// checked, but not in `latency_ns`.
    #[serde(default)]
    pub bad_stamps: u64,
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
    /// Something the user must know now, not in the summary: one line.
    Warning(String),
    /// What the receiver set up, said once at the start (one line, for a
    /// person; `recv --io xdp`'s memory): not a problem.
    Note(String),
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
    /// Test frames whose stamp cannot be a real latency (not timed).
    bad_stamps: u64,
    packets: u64,
    bytes: u64,
    foreign: u64,
    /// The earliest and the latest receive timestamp (0: none yet). Not
    /// the first and the last frame's: a pcap's stamps may go backwards
    /// (a clock stepped during the capture), and the span is what counts.
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
            bad_stamps: 0,
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
        if self.first_ts == 0 || frame.ts_ns < self.first_ts {
            self.first_ts = frame.ts_ns;
        }
        self.last_ts = self.last_ts.max(frame.ts_ns);
        let Some(t) = parse_test_frame(frame.data) else {
            self.foreign += 1;
            return;
        };
        let stream = t.payload.stream;
        self.streams.observe(stream, t.payload.seq);
        if !StreamTable::tracks(stream) {
            return;
        }
        let key_hash = hash_key(&t.key);
        let i = stream as usize;
        if i >= self.stream_keys.len() {
            let len = (i + 1)
                .next_power_of_two()
                .clamp(1024, MAX_STREAMS as usize);
            self.stream_keys.resize(len, 0);
        }
        if self.stream_keys[i] != key_hash {
            self.stream_keys[i] = key_hash;
            if self.flows.len() < MAX_FLOWS_SEEN {
                self.flows.insert(t.key);
            }
        }
        let lat = latency_ns(frame.ts_ns, t.payload.ts40);
        if believable_latency(lat, frame.ts_ns.saturating_sub(self.first_ts)) {
            self.latency.saturating_record(lat.clamp(1, MAX_LATENCY_NS));
        } else {
            self.bad_stamps += 1;
        }
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
        unseen: plan.iface.as_deref().map(UnseenFrames::new),
        backend: String::new(),
    };
    let finished = pool::run(&spec, workers, &mut watch)?;
    Ok(summarize(finished.ends, finished.iface))
}

/// The calling thread's side of an RX run: events out, and the ends that
/// no worker sees alone (the duration, the idle timeout over all ports).
struct RxWatch<'a, E> {
    plan: &'a RxPlan,
    on_event: &'a mut E,
    unseen: Option<UnseenFrames>,
    backend: String,
}

/// Watches for frames the interface counts and the receiver never gets
/// (frames longer than an AF_XDP chunk, a program that takes them first):
/// the run would otherwise count 0 and, with `-W`, wait for ever.
struct UnseenFrames {
    iface: String,
    /// The interface's `rx_packets` and `rx_dropped` at the start.
    start: Option<(u64, u64)>,
    /// The sample at which the interface first counted frames.
    first_seen: Option<u64>,
    samples: u64,
    received: u64,
    said: bool,
}

impl UnseenFrames {
    fn new(iface: &str) -> UnseenFrames {
        UnseenFrames {
            iface: iface.to_string(),
            start: None,
            first_seen: None,
            samples: 0,
            received: 0,
            said: false,
        }
    }

    /// The interface's `rx_packets` and `rx_dropped`, read in the
    /// receiver's namespace; None when they cannot be read (the run's end
    /// reports that).
    fn read(&self, netns: Option<&str>) -> Option<(u64, u64)> {
        let name = self.iface.as_str();
        pool::in_netns(netns, "RX", || Ok(read_counters(name)?))
            .ok()
            .map(|c| (c.rx_packets, c.rx_dropped))
    }

    /// After each interval (`packets` received in it): reads the
    /// interface while the receiver has nothing, and says so once.
    fn check(&mut self, netns: Option<&str>, packets: u64, backend: &str) -> Option<String> {
        let now = if self.said || self.received + packets > 0 {
            None
        } else {
            self.read(netns)
        };
        self.step(packets, now, backend)
    }

    /// The warning, once, when a whole interval has passed since the
    /// interface (`now`: its counters) counted its first frame and the
    /// receiver still has none. A frame the interface drops is in
    /// `rx_dropped` and, on some drivers (veth), in `rx_packets` too: the
    /// frames seen are the larger of the two counts.
    fn step(&mut self, packets: u64, now: Option<(u64, u64)>, backend: &str) -> Option<String> {
        self.samples += 1;
        self.received += packets;
        if self.said || self.received > 0 {
            return None;
        }
        let (start, now) = (self.start?, now?);
        let seen = now
            .0
            .saturating_sub(start.0)
            .max(now.1.saturating_sub(start.1));
        if seen == 0 {
            return None;
        }
        let first = *self.first_seen.get_or_insert(self.samples);
        if first == self.samples {
            return None;
        }
        self.said = true;
        Some(unseen_warning(&self.iface, seen, backend))
    }
}

/// The warning of [`UnseenFrames`].
pub fn unseen_warning(iface: &str, seen: u64, backend: &str) -> String {
    format!(
        "{iface} counted {seen} frames since the start and the receiver ({backend}) got none: \
         frames longer than its buffers, or taken by another program on {iface}?"
    )
}

impl<E: FnMut(RxEvent)> Watch<Counters> for RxWatch<'_, E> {
    fn started(&mut self, backends: &[String]) {
        let backend = describe_backends(backends);
        if let Some(u) = self.unseen.as_mut() {
            u.start = u.read(self.plan.netns.as_deref());
        }
        self.backend = backend.clone();
        (self.on_event)(RxEvent::Ready { backend });
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
        let netns = self.plan.netns.as_deref();
        let (packets, backend) = (s.packets, &self.backend);
        if let Some(w) = self
            .unseen
            .as_mut()
            .and_then(|u| u.check(netns, packets, backend))
        {
            (self.on_event)(RxEvent::Warning(w));
        }
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
    // The active period, from the earliest to the latest receive
    // timestamp of any worker (each worker's earliest is at most its
    // latest, so the span is never negative).
    let first = ends
        .iter()
        .map(|e| e.checker.first_ts)
        .filter(|&t| t > 0)
        .min();
    let last = ends.iter().map(|e| e.checker.last_ts).max().unwrap_or(0);
    let seconds = match first {
        Some(f) => last.saturating_sub(f) as f64 / 1e9,
        None => 0.0,
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
        untracked: ends.iter().map(|e| e.summary.untracked).sum(),
        ring_drops: ends.iter().map(|e| e.summary.ring_drops).sum(),
        bad_stamps: ends.iter().map(|e| e.checker.bad_stamps).sum(),
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
            one_in: None,
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
            untracked: checker.streams.untracked(),
            ring_drops,
            cpu,
        },
        checker,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watcher() -> UnseenFrames {
        let mut u = UnseenFrames::new("r0");
        u.start = Some((100, 7));
        u
    }

    #[test]
    fn unseen_frames_are_said_one_interval_after_the_first() {
        let mut u = watcher();
        // Nothing yet, then the interface's first frames: wait a whole
        // interval (they may be in the ring still).
        assert_eq!(u.step(0, Some((100, 7)), "afxdp"), None);
        assert_eq!(u.step(0, Some((5100, 5007)), "afxdp"), None);
        let w = u.step(0, Some((10100, 10007)), "afxdp").unwrap();
        assert_eq!(
            w,
            "r0 counted 10000 frames since the start and the receiver (afxdp) got none: \
             frames longer than its buffers, or taken by another program on r0?"
        );
        // Once only.
        assert_eq!(u.step(0, Some((20100, 20007)), "afxdp"), None);
    }

    #[test]
    fn a_burst_within_one_interval_is_said_too() {
        let mut u = watcher();
        assert_eq!(u.step(0, Some((100, 17)), "afxdp"), None);
        assert!(u.step(0, Some((100, 17)), "afxdp").is_some());
    }

    #[test]
    fn frames_received_mean_no_warning() {
        let mut u = watcher();
        assert_eq!(u.step(0, Some((200, 7)), "afpacket"), None);
        assert_eq!(u.step(5, Some((300, 7)), "afpacket"), None);
        assert_eq!(u.step(0, Some((400, 7)), "afpacket"), None);
        // And no reading: nothing to say.
        let mut u = watcher();
        assert_eq!(u.step(0, None, "afpacket"), None);
        assert_eq!(u.step(0, None, "afpacket"), None);
    }

    #[test]
    fn a_flow_whose_hash_state_is_one_still_hashes_to_non_zero() {
        // hash_key's state goes s -> (s.rotate_left(5) ^ w) * K for each
        // 8-byte chunk w of each write. FlowKey's derived Hash writes the
        // family's discriminant (an isize: 8 bytes), src and dst (16 bytes
        // each: two chunks, the low half first) and the two ports (2 bytes
        // each: one chunk each). K is odd, so each step can be undone:
        // dst's high half is chosen, by hand below, to leave the final
        // state exactly 1. `| 1` keeps it 1; `^ 1` would make it 0, the
        // mark of an empty slot, and the flow would go uncounted.
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        // K's inverse mod 2^64 by Newton's iteration: each doubles the
        // bits that are right, from 3 (K x K = 1 mod 8 for any odd K).
        let mut inv = K;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(K.wrapping_mul(inv)));
        }
        assert_eq!(K.wrapping_mul(inv), 1);
        let step = |s: u64, w: u64| (s.rotate_left(5) ^ w).wrapping_mul(K);
        // The state s with step(s, w) = t.
        let undo = |t: u64, w: u64| (t.wrapping_mul(inv) ^ w).rotate_right(5);
        let (sport, dport) = (1000u16, 2000u16);
        // Inet6 (discriminant 1), src 0 (two chunks), dst's low half 0.
        let before_dst_high = step(step(step(step(0, 1), 0), 0), 0);
        let after_dst_high = undo(undo(1, u64::from(dport)), u64::from(sport));
        let high = before_dst_high.rotate_left(5) ^ after_dst_high.wrapping_mul(inv);
        assert_eq!(step(before_dst_high, high), after_dst_high);
        let key = FlowKey {
            family: pktlab_wire::range::Family::Inet6,
            src: 0,
            dst: u128::from(high) << 64,
            sport,
            dport,
        };
        assert_eq!(hash_key(&key), 1);
    }

    #[test]
    fn checker_bound_by_hand() {
        // 2^20 x 64 + 2^20 x 8 + 2 x 2^16 x 49 x 3 / 2 bytes.
        assert_eq!(std::mem::size_of::<FlowKey>(), 48);
        assert_eq!(CHECKER_MAX_BYTES, 67_108_864 + 8_388_608 + 9_633_792);
    }

    #[test]
    fn stamps_from_the_future_or_before_the_run_are_not_timed() {
        // The fuzz corpus's test frame, its TX stamp (bytes 51-55) set to
        // chosen times; the receiver's first frame comes at T.
        let seed = include_bytes!("../../../fuzz/corpus/frame/ipv4.bin");
        const T: u64 = 1_800_000_000_000_000_000;
        const S: u64 = 1_000_000_000;
        let mut c = Checker::new();
        // (received at, sent at): 1 us; 1 s in the future; 20 s before a
        // frame 2 s into the run (more than 2 + 10 s); 12 s before one 3 s
        // into the run (at most 3 + 10 s, believed).
        for (seq, (rx, tx)) in [
            (T, T - 1000),
            (T + S, T + 2 * S),
            (T + 2 * S, T + 2 * S - 20 * S),
            (T + 3 * S, T - 9 * S),
        ]
        .into_iter()
        .enumerate()
        {
            let mut f = seed.to_vec();
            f[47..51].copy_from_slice(&(seq as u32 + 7).to_be_bytes());
            f[51..56].copy_from_slice(&(tx & ((1 << 40) - 1)).to_be_bytes()[3..]);
            c.check(&RxFrame {
                data: &f,
                wire_len: f.len() as u32,
                ts_ns: rx,
            });
        }
        assert_eq!((c.packets, c.foreign, c.bad_stamps), (4, 0, 2));
        // Counted and checked all the same: stream 1, 7 to 10 in order.
        assert_eq!(c.streams.totals().lost, 7);
        assert_eq!(c.latency.len(), 2);
        assert_eq!(c.latency.min(), 1000);
        // 12 s, within the histogram's 3 significant digits.
        let max = c.latency.max();
        assert!((11_990_000_000..=12_010_000_000).contains(&max), "{max}");
    }

    /// The fuzz corpus's 60-byte test frame with its stream (bytes 44-46),
    /// sequence (47-50), TX stamp (51-55) and UDP ports (34-37) set.
    fn test_frame(stream: u32, seq: u32, tx_ns: u64, sport: u16, dport: u16) -> Vec<u8> {
        let mut f = include_bytes!("../../../fuzz/corpus/frame/ipv4.bin").to_vec();
        f[34..36].copy_from_slice(&sport.to_be_bytes());
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f[44..47].copy_from_slice(&stream.to_be_bytes()[1..]);
        f[47..51].copy_from_slice(&seq.to_be_bytes());
        f[51..56].copy_from_slice(&(tx_ns & ((1 << 40) - 1)).to_be_bytes()[3..]);
        f
    }

    /// A worker's end after `frames` (data, received at).
    fn worker_end(frames: &[(Vec<u8>, u64)]) -> WorkerEnd {
        let mut checker = Checker::new();
        for (f, ts_ns) in frames {
            checker.check(&RxFrame {
                data: f,
                wire_len: f.len() as u32,
                ts_ns: *ts_ns,
            });
        }
        WorkerEnd {
            summary: RxThreadSummary {
                backend: "afpacket".into(),
                packets: checker.packets,
                bytes: checker.bytes,
                foreign: checker.foreign,
                untracked: checker.streams.untracked(),
                ring_drops: 0,
                cpu: None,
            },
            checker,
        }
    }

    #[test]
    fn two_workers_and_an_idle_one_sum_up_by_hand() {
        const T: u64 = 1_800_000_000_000_000_000;
        const MS: u64 = 1_000_000;
        // A: stream 1, numbers 0 to 2, the third from another 5-tuple,
        // at T, T + 250 ms and T + 500 ms, sent 1, 2 and 3 us before.
        let a = worker_end(&[
            (test_frame(1, 0, T - 1000, 7, 2000), T),
            (test_frame(1, 1, T + 250 * MS - 2000, 7, 2000), T + 250 * MS),
            (test_frame(1, 2, T + 500 * MS - 3000, 8, 2000), T + 500 * MS),
        ]);
        // B: stream 1024 (its slot past the table's first 1024), numbers 0
        // and 2 (1 lost), and a 20-byte foreign frame, from T + 100 ms to
        // T + 1 s; latencies 4 and 5 us.
        let seed = include_bytes!("../../../fuzz/corpus/frame/ipv4.bin");
        let b = worker_end(&[
            (
                test_frame(1024, 0, T + 100 * MS - 4000, 9, 2000),
                T + 100 * MS,
            ),
            (seed[..20].to_vec(), T + 600 * MS),
            (
                test_frame(1024, 2, T + 1000 * MS - 5000, 9, 2000),
                T + 1000 * MS,
            ),
        ]);
        // C received nothing: no first frame, it does not start the run.
        let c = worker_end(&[]);
        let s = summarize(vec![a, b, c], None);
        // From the first frame (T) to the last (T + 1 s).
        assert_eq!(s.seconds, 1.0);
        assert_eq!((s.packets, s.foreign), (6, 1));
        // Five 60-byte frames and one of 20, each with its 4-byte FCS.
        assert_eq!(s.bytes, 5 * 64 + 24);
        assert_eq!(s.pps, 6.0);
        assert_eq!(s.l2_bps, 344.0 * 8.0);
        assert_eq!((s.streams, s.flows), (2, 3));
        assert_eq!((s.lost, s.out_of_order, s.duplicates), (1, 0, 0));
        let l = s.latency_ns.expect("five timed frames");
        assert_eq!((l.count, l.min), (5, 1000));
        // 3 significant digits: 5000 and 3000 within their buckets.
        assert!((5000..=5003).contains(&l.max), "{}", l.max);
        assert!((3000..=3001).contains(&l.p50), "{}", l.p50);
        assert!((l.avg - 3000.0).abs() < 2.0, "{}", l.avg);
        assert_eq!(s.latency_buckets.iter().map(|b| b.1).sum::<u64>(), 5);
        assert_eq!(s.threads.len(), 3);
    }

    #[test]
    fn the_flow_set_stops_at_its_bound() {
        // 2^16 + 1 frames of stream 1, each from its own 5-tuple: the
        // set keeps 2^16 of them.
        let mut c = Checker::new();
        for i in 0..=MAX_FLOWS_SEEN as u32 {
            let f = test_frame(1, i, 1, i as u16, 2000 + (i >> 16) as u16);
            c.check(&RxFrame {
                data: &f,
                wire_len: f.len() as u32,
                ts_ns: 2,
            });
        }
        assert_eq!(c.packets, MAX_FLOWS_SEEN as u64 + 1);
        assert_eq!(c.flows.len(), MAX_FLOWS_SEEN);
    }

    #[test]
    fn checker_counts_high_streams_as_untracked() {
        // A test frame of the fuzz corpus (stream 1, sequence 7); the
        // stream id is bytes 44-46 (Ethernet 14, IPv4 20, UDP 8, magic 2).
        let seed = include_bytes!("../../../fuzz/corpus/frame/ipv4.bin");
        let mut c = Checker::new();
        for (i, stream) in [1u32, MAX_STREAMS - 1, MAX_STREAMS, 0xff_ffff]
            .iter()
            .enumerate()
        {
            let mut f = seed.to_vec();
            f[44..47].copy_from_slice(&stream.to_be_bytes()[1..]);
            // A new source port each time: a new 5-tuple.
            f[34..36].copy_from_slice(&(i as u16).to_be_bytes());
            c.check(&RxFrame {
                data: &f,
                wire_len: f.len() as u32,
                ts_ns: 1,
            });
        }
        c.check(&RxFrame {
            data: &seed[..20],
            wire_len: 20,
            ts_ns: 2,
        });
        assert_eq!(c.packets, 5);
        assert_eq!(c.foreign, 1);
        assert_eq!(c.streams.untracked(), 2);
        assert_eq!(c.streams.streams_seen(), 2);
        // Only the tracked streams' 5-tuples are kept.
        assert_eq!(c.flows.len(), 2);
        assert_eq!(c.stream_keys.len(), MAX_STREAMS as usize);
        // Both tracked streams started at 7: 0 to 6 lost in each.
        assert_eq!(c.streams.totals().lost, 14);
    }

    /// A port that hands out `batches` batches of frames made by `batch`
    /// (from the batch's index), one a call, then nothing (waiting up to
    /// 1 ms a call, as a real port waits for frames) or, for a finite
    /// source, the end.
    struct ScriptedPort {
        batch: fn(u32) -> Vec<Vec<u8>>,
        batches: u32,
        given: u32,
        finite: bool,
        ring_drops: u64,
    }

    impl RxPort for ScriptedPort {
        fn backend(&self) -> String {
            "scripted".into()
        }

        fn recv_batch<F: FnMut(&RxFrame<'_>)>(
            &mut self,
            timeout: Duration,
            mut on_frame: F,
        ) -> Result<usize, IoError> {
            if self.given == self.batches {
                std::thread::sleep(timeout.min(Duration::from_millis(1)));
                return Ok(0);
            }
            let batch = (self.batch)(self.given);
            self.given += 1;
            for f in &batch {
                on_frame(&RxFrame {
                    data: f,
                    wire_len: f.len() as u32,
                    ts_ns: 1_800_000_000_000_000_000,
                });
            }
            Ok(batch.len())
        }

        fn drops(&mut self) -> Result<u64, IoError> {
            Ok(self.ring_drops)
        }

        fn at_eof(&self) -> bool {
            self.finite && self.given == self.batches
        }
    }

    /// Batch `b`: 8 frames of stream 3, numbers 8b to 8b + 7.
    fn eight_frames(b: u32) -> Vec<Vec<u8>> {
        (0..8)
            .map(|i| test_frame(3, b * 8 + i, 1_800_000_000_000_000_000 - 1000, 7, 9))
            .collect()
    }

    /// `batches` batches of [`eight_frames`].
    fn port(batches: u32, finite: bool) -> ScriptedPort {
        ScriptedPort {
            batch: eight_frames,
            batches,
            given: 0,
            finite,
            ring_drops: 0,
        }
    }

    /// Runs `plan` over one scripted port: the summary, every event and
    /// how long the run took. A watchdog stops a run that does not end by
    /// itself within 6 s (a broken count, duration, idle or end check), so
    /// that the test fails on its bounds rather than never ending.
    fn run_scripted(
        plan: RxPlan,
        make: impl Fn() -> ScriptedPort + Sync,
    ) -> (RxSummary, Vec<RxEvent>, Duration) {
        let stop = StopSignal::new();
        let (ended, end) = std::sync::mpsc::channel::<()>();
        let watchdog = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                if end.recv_timeout(Duration::from_secs(6)).is_err() {
                    stop.stop();
                }
            })
        };
        let mut events = Vec::new();
        let began = Instant::now();
        let summary = run_rx(&plan, |_| Ok(make()), &stop, |e| events.push(e));
        let took = began.elapsed();
        let _ = ended.send(());
        watchdog.join().unwrap();
        (summary.expect("a scripted run"), events, took)
    }

    fn intervals(events: &[RxEvent]) -> Vec<&RxInterval> {
        events
            .iter()
            .filter_map(|e| match e {
                RxEvent::Interval(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    fn warnings(events: &[RxEvent]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|e| match e {
                RxEvent::Warning(w) => Some(w.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_count_stops_the_run_at_exactly_that_many_frames() {
        // 10 batches of 8 on offer, 20 wanted: 8, 8, then 4 of the third.
        let plan = RxPlan {
            count: Some(20),
            ..RxPlan::default()
        };
        let (s, _, took) = run_scripted(plan, || port(10, false));
        assert_eq!((s.packets, s.bytes), (20, 20 * 64));
        assert_eq!(
            (s.streams, s.lost, s.out_of_order, s.duplicates),
            (1, 0, 0, 0)
        );
        assert!(
            took < Duration::from_secs(5),
            "the count did not end the run: {took:?}"
        );
    }

    #[test]
    fn a_finite_source_ends_the_run_with_every_frame_and_its_ring_drops() {
        let (s, events, took) = run_scripted(RxPlan::default(), || ScriptedPort {
            ring_drops: 7,
            ..port(3, true)
        });
        assert_eq!((s.packets, s.bytes, s.foreign), (24, 24 * 64, 0));
        assert_eq!((s.streams, s.lost), (1, 0));
        assert_eq!(s.ring_drops, 7);
        assert_eq!(s.threads.len(), 1);
        assert_eq!((s.threads[0].packets, s.threads[0].ring_drops), (24, 7));
        assert_eq!(s.threads[0].backend, "scripted");
        assert!(
            took < Duration::from_secs(5),
            "the source's end did not end the run: {took:?}"
        );
        // Ready comes first and names the backend.
        assert!(
            matches!(events.first(), Some(RxEvent::Ready { backend }) if backend == "scripted"),
            "{:?}",
            events.first()
        );
    }

    #[test]
    fn intervals_add_up_to_the_frames_received() {
        // Three test frames and a foreign one (ARP-sized zeros) per batch,
        // 40 batches, reported every 2 ms.
        fn three_and_a_foreign(b: u32) -> Vec<Vec<u8>> {
            let mut batch: Vec<Vec<u8>> = (0..3)
                .map(|i| test_frame(5, b * 3 + i, 1_800_000_000_000_000_000 - 1000, 7, 9))
                .collect();
            batch.push(vec![0u8; 42]);
            batch
        }
        let make = || ScriptedPort {
            batch: three_and_a_foreign,
            ..port(40, true)
        };
        let plan = RxPlan {
            interval: Duration::from_millis(2),
            ..RxPlan::default()
        };
        let (s, events, _) = run_scripted(plan, make);
        assert_eq!((s.packets, s.foreign), (160, 40));
        assert_eq!(s.bytes, 120 * 64 + 40 * 46);
        let iv = intervals(&events);
        assert!(!iv.is_empty());
        assert_eq!(iv.iter().map(|i| i.packets).sum::<u64>(), 160);
        assert_eq!(iv.iter().map(|i| i.bytes).sum::<u64>(), 120 * 64 + 40 * 46);
        assert_eq!(iv.iter().map(|i| i.foreign).sum::<u64>(), 40);
    }

    #[test]
    fn a_duration_ends_the_run_neither_before_nor_long_after() {
        // Frames for ever.
        let plan = RxPlan {
            duration: Some(Duration::from_millis(150)),
            ..RxPlan::default()
        };
        let (s, _, took) = run_scripted(plan, || port(u32::MAX, false));
        assert!(s.packets > 0);
        assert!(took >= Duration::from_millis(150), "ended early: {took:?}");
        assert!(took < Duration::from_secs(5), "ended late: {took:?}");
    }

    #[test]
    fn the_idle_timeout_counts_from_the_last_frame() {
        // Two batches at once, then nothing: the run ends 200 ms later, by
        // itself (the watchdog's stop would fail the upper bound).
        let plan = RxPlan {
            idle: Some(Duration::from_millis(200)),
            ..RxPlan::default()
        };
        let (s, _, took) = run_scripted(plan, || port(2, false));
        assert_eq!(s.packets, 16);
        assert!(took >= Duration::from_millis(200), "ended early: {took:?}");
        assert!(
            took < Duration::from_secs(5),
            "the idle timeout did not end the run: {took:?}"
        );
        // No frame, no idle end: only the duration ends it.
        let plan = RxPlan {
            idle: Some(Duration::from_millis(50)),
            duration: Some(Duration::from_millis(300)),
            ..RxPlan::default()
        };
        let (s, _, took) = run_scripted(plan, || port(0, false));
        assert_eq!(s.packets, 0);
        assert!(
            took >= Duration::from_millis(300),
            "ended before its duration: {took:?}"
        );
    }

    /// Sends `n` UDP datagrams to 127.0.0.1's discard port, counted by
    /// `lo` (nothing listens: the port-unreachable answers count too).
    fn send_on_lo(n: usize) {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP socket on lo");
        for _ in 0..n {
            let _ = sock.send_to(b"x", "127.0.0.1:9");
        }
    }

    #[test]
    fn frames_the_interface_counts_and_the_receiver_never_gets_are_said_once() {
        // `lo` counts datagrams sent to it while the port gets nothing.
        let plan = RxPlan {
            iface: Some("lo".into()),
            interval: Duration::from_millis(20),
            duration: Some(Duration::from_millis(400)),
            ..RxPlan::default()
        };
        let sender = std::thread::spawn(|| {
            for _ in 0..20 {
                send_on_lo(10);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let (s, events, _) = run_scripted(plan.clone(), || port(0, false));
        sender.join().unwrap();
        assert_eq!(s.packets, 0);
        let w = warnings(&events);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("lo counted "), "{}", w[0]);
        assert!(
            w[0].ends_with(
                " frames since the start and the receiver (scripted) got none: \
                 frames longer than its buffers, or taken by another program on lo?"
            ),
            "{}",
            w[0]
        );
        // A receiver that gets frames has nothing to say.
        let sender = std::thread::spawn(|| {
            for _ in 0..20 {
                send_on_lo(10);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let (s, events, _) = run_scripted(plan, || port(1, false));
        sender.join().unwrap();
        assert_eq!(s.packets, 8);
        assert!(warnings(&events).is_empty(), "{:?}", warnings(&events));
    }
}
