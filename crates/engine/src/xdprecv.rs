//! `recv --io xdp`: a receiver run whose frames are checked by the io
//! layer's XDP program ([`XdpRecv`]) in the kernel, with the same plan,
//! events and summary as [`crate::rx::run_rx`].
//!
//! No frame reaches user space. The pool runs one worker that only holds
//! the run open and detaches the program at its end; the calling thread
//! reads the program's per-CPU counters for the interval lines and the
//! ends (duration, idle time, count), and the summary comes from the maps
//! once the program is detached, so it is final: the last interval and the
//! summary agree.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use pktlab_io::clock::realtime_ns;
use pktlab_io::iface::IfCounters;
use pktlab_io::xdprecv::{
    bucket_range, CpuStats, LatencyHistogram, Stream, Timing, XdpRecv, XdpRecvConfig,
};

use crate::pool::{self, in_netns, NoCounters, PoolSpec, Sample, Watch, Worker};
use crate::rates::{l1_bps, per_second};
use crate::rx::{Latency, RxEvent, RxInterval, RxPlan, RxSummary, RxThreadSummary};
use crate::seq::SeqCounts;
use crate::{EngineError, StopSignal};

/// How often the holding worker looks at the stop signal.
const NAP: Duration = Duration::from_millis(5);

/// Runs `plan` with the XDP receiver program on `iface`.
pub fn run_xdp_recv(
    iface: &str,
    plan: &RxPlan,
    xcfg: &XdpRecvConfig,
    stop: &StopSignal,
    mut on_event: impl FnMut(RxEvent),
) -> Result<RxSummary, EngineError> {
    if plan.threads != 1 {
        return Err(EngineError::BadPlan(
            "--io xdp checks frames in the kernel on every CPU that receives them: leave -p at 1"
                .into(),
        ));
    }
    if plan.interval.is_zero() {
        return Err(EngineError::BadPlan(
            "the report interval must not be zero".into(),
        ));
    }
    let netns = plan.netns.as_deref();
    // The program itself stops counting at -n, exactly; the run ends at
    // the first look that sees the count reached.
    let xcfg = XdpRecvConfig {
        count: plan.count,
        ..*xcfg
    };
    // Attached where the interface is.
    let rx = in_netns(netns, "RX", || Ok(XdpRecv::open(iface, &xcfg)?))?;
    on_event(RxEvent::Note(memory_line(&rx)));
    let backend = rx.backend();
    let spec = PoolSpec {
        side: "RX",
        netns,
        cpus: &[],
        iface: plan.iface.as_deref(),
        interval: plan.interval,
        stop,
        one_ends_all: true,
    };
    let rx_ref = &rx;
    let workers = vec![move |w: &Worker<'_, NoCounters>| hold(rx_ref, w)];
    let mut watch = XdpRecvWatch {
        rx: &rx,
        plan,
        backend: &backend,
        on_event: &mut on_event,
        seen: LastGrowth::default(),
    };
    let finished = pool::run(&spec, workers, &mut watch);
    // Whatever happened, nothing is counted from here on.
    rx.detach();
    let detached_ns = realtime_ns();
    let mut seen = watch.seen;
    let finished = finished?;
    let stats = rx.cpu_stats()?;
    // Unless every frame is timed, the last frame is dated by the looks:
    // frames counted after the last look came before the detach.
    let last_frame_ns = (!rx.timing().dates_every_frame()).then(|| {
        seen.saw(total(&stats).packets, detached_ns);
        seen.at_ns
    });
    let busy: u64 = stats.iter().map(|s| s.busy).sum();
    if busy > 0 {
        on_event(RxEvent::Warning(busy_warning(busy)));
    }
    let hist = rx.histogram()?;
    let mut streams = Vec::new();
    rx.for_each_stream(|id, s| streams.push((id, *s)))?;
    let mut summary = summarize(
        &backend,
        &stats,
        &hist,
        &streams,
        last_frame_ns,
        crate::stop::interrupted(),
        finished.iface,
    );
    if let Some(l) = &mut summary.latency_ns {
        l.one_in = rx.timing().one_in();
    }
    Ok(summary)
}

/// When user space last saw the frame count grow: the time of the last
/// frame to within a look (5 ms) when the program reads no clock per
/// frame (`--latency off`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LastGrowth {
    packets: u64,
    /// CLOCK_REALTIME ns of the look that saw `packets` (0: no frame yet).
    at_ns: u64,
}

impl LastGrowth {
    fn saw(&mut self, packets: u64, now_ns: u64) {
        if packets > self.packets {
            self.packets = packets;
            self.at_ns = now_ns;
        }
    }
}

/// Said when the program could not check some test frames because their
/// stream stayed held by another CPU (counted in `untracked` too).
fn busy_warning(frames: u64) -> String {
    format!(
        "xdp: {frames} test frames counted but not checked: their stream's state stayed held by another CPU for the program's whole wait (a CPU stalled for milliseconds)"
    )
}

/// What is printed at the start: the memory the program's maps take.
pub fn memory_line(rx: &XdpRecv) -> String {
    let bytes = rx.memory_bytes();
    let timing = match rx.timing() {
        Timing::Every => String::new(),
        Timing::OneIn(n) => format!("; one test frame in {n} is timed per CPU (--latency 1/{n})"),
        Timing::Off => "; frames are not timed (--latency off)".to_string(),
    };
    format!(
        "xdp: state for {} streams (--streams) and a latency histogram per CPU ({} CPUs): {:.1} MiB of BPF maps ({bytes} bytes){timing}",
        rx.stream_limit(),
        rx.cpus(),
        bytes as f64 / (1u64 << 20) as f64
    )
}

/// The only worker: waits for the gate, holds the run open until it ends,
/// then detaches the program so that the last sample is final.
fn hold(rx: &XdpRecv, w: &Worker<'_, NoCounters>) -> Result<Option<()>, EngineError> {
    w.opened(rx.backend());
    if w.wait_start().is_none() {
        return Ok(None);
    }
    while !w.should_stop() {
        std::thread::sleep(NAP);
    }
    rx.detach();
    Ok(Some(()))
}

struct XdpRecvWatch<'a, E> {
    rx: &'a XdpRecv,
    plan: &'a RxPlan,
    backend: &'a str,
    on_event: &'a mut E,
    seen: LastGrowth,
}

impl<E: FnMut(RxEvent)> Watch<NoCounters> for XdpRecvWatch<'_, E> {
    fn started(&mut self, _backends: &[String]) {
        (self.on_event)(RxEvent::Ready {
            backend: self.backend.to_string(),
        });
    }

    fn look(
        &mut self,
        now: Instant,
        start: Instant,
        _counters: &[CachePadded<NoCounters>],
        end: &StopSignal,
    ) {
        if self.plan.duration.is_some_and(|d| now >= start + d) {
            end.stop();
        }
        let untimed = !self.rx.timing().dates_every_frame();
        if self.plan.idle.is_none() && self.plan.count.is_none() && !untimed {
            return;
        }
        // A failed read ends nothing here: the summary's read reports it.
        let Ok(stats) = self.rx.cpu_stats() else {
            return;
        };
        let t = total(&stats);
        self.seen.saw(t.packets, realtime_ns());
        if self.plan.count.is_some_and(|n| t.packets >= n) {
            end.stop();
        }
        if let Some(idle) = self.plan.idle {
            let last = if untimed {
                self.seen.at_ns
            } else {
                stats.iter().map(|s| s.last_ns).max().unwrap_or(0)
            };
            if last > 0 && realtime_ns().saturating_sub(last) >= idle.as_nanos() as u64 {
                end.stop();
            }
        }
    }

    fn counts(&mut self, _counters: &[CachePadded<NoCounters>]) -> Option<Vec<[u64; 3]>> {
        let stats = self.rx.cpu_stats().ok()?;
        let t = total(&stats);
        Some(vec![[t.packets, t.bytes, t.foreign]])
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

/// The sum of every CPU's counters (first_ns: the earliest, last_ns: the
/// latest, lat_min over the CPUs that had latencies).
fn total(stats: &[CpuStats]) -> CpuStats {
    let mut t = CpuStats::default();
    for s in stats {
        t.packets += s.packets;
        t.bytes += s.bytes;
        t.foreign += s.foreign;
        t.untracked += s.untracked + s.busy;
        t.busy += s.busy;
        t.bad_stamps += s.bad_stamps;
        if s.first_ns > 0 && (t.first_ns == 0 || s.first_ns < t.first_ns) {
            t.first_ns = s.first_ns;
        }
        t.last_ns = t.last_ns.max(s.last_ns);
        t.lat_count += s.lat_count;
        t.lat_sum += s.lat_sum;
        if s.lat_count > 0 && (t.lat_min == 0 || s.lat_min < t.lat_min) {
            t.lat_min = s.lat_min;
        }
        t.lat_max = t.lat_max.max(s.lat_max);
    }
    t
}

/// The summary every receiver reports, from the program's maps: one
/// "thread" per CPU that received frames. `last_frame_ns` dates the last
/// frame when the program did not (untimed).
fn summarize(
    backend: &str,
    stats: &[CpuStats],
    hist: &LatencyHistogram,
    streams: &[(u32, Stream)],
    last_frame_ns: Option<u64>,
    interrupted: bool,
    iface: Option<IfCounters>,
) -> RxSummary {
    let mut t = total(stats);
    if let Some(last) = last_frame_ns {
        t.last_ns = t.last_ns.max(last);
    }
    let seconds = if t.last_ns > t.first_ns && t.first_ns > 0 {
        (t.last_ns - t.first_ns) as f64 / 1e9
    } else {
        0.0
    };
    let mut seq = SeqCounts::default();
    let mut keys = std::collections::HashSet::new();
    for (_, s) in streams {
        seq += SeqCounts {
            received: s.received,
            lost: s.lost,
            out_of_order: s.out_of_order,
            duplicates: s.duplicates,
        };
        keys.insert(s.key_hash);
    }
    RxSummary {
        backend: backend.to_string(),
        packets: t.packets,
        bytes: t.bytes,
        seconds,
        pps: per_second(t.packets as f64, seconds),
        l2_bps: per_second(t.bytes as f64 * 8.0, seconds),
        l1_bps: l1_bps(t.packets, t.bytes, seconds),
        flows: keys.len() as u64,
        streams: streams.len() as u64,
        lost: seq.lost,
        out_of_order: seq.out_of_order,
        duplicates: seq.duplicates,
        foreign: t.foreign,
        untracked: t.untracked,
        ring_drops: 0,
        bad_stamps: t.bad_stamps,
        // Each bucket's highest value, as HdrHistogram's recorded values.
        latency_buckets: hist
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (bucket_range(i).1, c))
            .collect(),
        latency_ns: latency(&t, hist),
        interrupted,
        threads: stats
            .iter()
            .enumerate()
            .filter(|(_, s)| s.packets > 0)
            .map(|(cpu, s)| RxThreadSummary {
                backend: backend.to_string(),
                packets: s.packets,
                bytes: s.bytes,
                foreign: s.foreign,
                untracked: s.untracked + s.busy,
                ring_drops: 0,
                cpu: Some(cpu),
            })
            .collect(),
        iface,
    }
}

/// Min, average and max are exact (kept per CPU); the quantiles come from
/// the histogram, within 1/128 of the true value and inside [min, max].
fn latency(t: &CpuStats, hist: &LatencyHistogram) -> Option<Latency> {
    if t.lat_count == 0 {
        return None;
    }
    let q = |p: f64| {
        hist.value_at_quantile(p)
            .unwrap_or(t.lat_max)
            .clamp(t.lat_min, t.lat_max)
    };
    Some(Latency {
        count: t.lat_count,
        min: t.lat_min,
        avg: t.lat_sum as f64 / t.lat_count as f64,
        p50: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        p999: q(0.999),
        max: t.lat_max,
        one_in: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_io::xdprecv::{bucket_of, BUCKETS};

    fn cpu(packets: u64, first_ns: u64, last_ns: u64, lat: (u64, u64, u64, u64)) -> CpuStats {
        CpuStats {
            packets,
            bytes: packets * 64,
            foreign: 1,
            untracked: 2,
            first_ns,
            last_ns,
            lat_count: lat.0,
            lat_sum: lat.1,
            lat_min: lat.2,
            lat_max: lat.3,
            busy: 0,
            bad_stamps: 0,
            until_timed: 0,
        }
    }

    fn stream(received: u64, lost: u64, ooo: u64, dups: u64, key_hash: u64) -> Stream {
        Stream {
            received,
            lost,
            out_of_order: ooo,
            duplicates: dups,
            key_hash,
            ..Stream::default()
        }
    }

    #[test]
    fn summary_from_the_maps_by_hand() {
        // CPU 0 idle, CPU 1: 1000 frames from t=5 s to t=5.5 s, CPU 2: 500
        // frames from t=5.1 s to t=6 s.
        let mut stats = [
            CpuStats::default(),
            cpu(
                1000,
                5_000_000_000,
                5_500_000_000,
                (997, 997 * 2000, 1500, 9000),
            ),
            cpu(
                500,
                5_100_000_000,
                6_000_000_000,
                (497, 497 * 4000, 1200, 8000),
            ),
        ];
        // Three test frames of CPU 2 found their stream held too long:
        // not checked, so untracked.
        stats[2].busy = 3;
        let mut hist = LatencyHistogram {
            counts: vec![0; BUCKETS],
        };
        hist.counts[bucket_of(1000)] += 600; // below min: read back as min
        hist.counts[bucket_of(3000)] += 884;
        hist.counts[bucket_of(20_000)] += 10; // above max: read back as max
                                              // Three streams, two sharing a 5-tuple.
        let streams = [
            (0, stream(700, 3, 1, 0, 11)),
            (1, stream(600, 0, 0, 2, 11)),
            (7, stream(194, 5, 0, 0, 13)),
        ];
        let s = summarize(
            "xdp (native XDP)",
            &stats,
            &hist,
            &streams,
            None,
            false,
            None,
        );
        assert_eq!(
            (s.packets, s.bytes, s.foreign, s.untracked),
            (1500, 96_000, 2, 7)
        );
        assert_eq!(s.seconds, 1.0);
        assert_eq!(s.pps, 1500.0);
        assert_eq!((s.streams, s.flows), (3, 2));
        assert_eq!((s.lost, s.out_of_order, s.duplicates), (8, 1, 2));
        assert_eq!(s.ring_drops, 0);
        let l = s.latency_ns.unwrap();
        assert_eq!((l.count, l.min, l.max), (1494, 1200, 9000));
        assert_eq!(l.avg, (997.0 * 2000.0 + 497.0 * 4000.0) / 1494.0);
        // 3000 sits in a bucket of width 16 (2048..4095 in 128 steps):
        // 187 × 16 = 2992 to 3007; ranks 747 and 1480 of 1494 are there.
        assert_eq!((l.p50, l.p99), (3007, 3007));
        assert_eq!(l.p999, 9000);
        // A "thread" per CPU that received, with its CPU number.
        let cpus: Vec<(Option<usize>, u64)> =
            s.threads.iter().map(|t| (t.cpu, t.packets)).collect();
        assert_eq!(cpus, [(Some(1), 1000), (Some(2), 500)]);
        let untracked: Vec<u64> = s.threads.iter().map(|t| t.untracked).collect();
        assert_eq!(untracked, [2, 5]);
        assert_eq!(s.backend, "xdp (native XDP)");
    }

    #[test]
    fn the_busy_warning_says_how_many_and_why() {
        assert_eq!(
            busy_warning(3),
            "xdp: 3 test frames counted but not checked: their stream's state stayed held by another CPU for the program's whole wait (a CPU stalled for milliseconds)"
        );
    }

    /// Untimed: the first frames' times come from the program, the last
    /// one's from the looks, and there is no latency.
    #[test]
    fn untimed_runs_end_at_the_last_look_that_saw_frames() {
        let stats = [
            cpu(300, 7_000_000_000, 0, (0, 0, 0, 0)),
            cpu(100, 7_250_000_000, 0, (0, 0, 0, 0)),
        ];
        let hist = LatencyHistogram {
            counts: vec![0; BUCKETS],
        };
        let s = summarize("xdp", &stats, &hist, &[], Some(9_000_000_000), false, None);
        assert_eq!(s.seconds, 2.0);
        assert_eq!(s.pps, 200.0);
        assert!(s.latency_ns.is_none());
        let mut seen = LastGrowth::default();
        seen.saw(0, 5);
        assert_eq!(seen.at_ns, 0, "no frame yet");
        seen.saw(10, 6);
        seen.saw(10, 7);
        assert_eq!(
            seen,
            LastGrowth {
                packets: 10,
                at_ns: 6
            }
        );
        seen.saw(11, 8);
        assert_eq!(seen.at_ns, 8);
    }

    #[test]
    fn nothing_received() {
        let hist = LatencyHistogram {
            counts: vec![0; BUCKETS],
        };
        let s = summarize(
            "xdp (generic XDP)",
            &[CpuStats::default(); 2],
            &hist,
            &[],
            None,
            true,
            None,
        );
        assert_eq!((s.packets, s.streams, s.flows, s.seconds), (0, 0, 0, 0.0));
        assert!(s.latency_ns.is_none() && s.threads.is_empty() && s.interrupted);
    }
}
