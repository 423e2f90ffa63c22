//! The worker pool every run uses: one thread per port (or per CPU), placed
//! in its namespace and on its CPU, started together through a gate,
//! stopped together, sampled once per interval by the calling thread, and
//! joined. TX ([`crate::tx`]), RX ([`crate::rx`]) and the XDP generator
//! ([`crate::xdpgen`]) differ only in what a worker does between the gate
//! and its end, and in what the calling thread watches while they run.

mod gate;
mod monitor;
mod place;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use pktlab_io::iface::{read_counters, IfCounters};

use crate::stop::OnPanic;
use crate::{EngineError, StopSignal};
use gate::Gate;
use monitor::Monitor;
pub(crate) use monitor::Sample;
pub(crate) use place::in_netns;
use place::place_thread;

/// A worker's published counters: packets, bytes, and one more count the
/// side cares about (RX: foreign frames; TX: none).
pub(crate) trait Published {
    fn read(&self) -> [u64; 3];
}

/// For workers whose counts the monitor reads elsewhere (the XDP
/// generator's come from the program's maps).
#[derive(Default)]
pub(crate) struct NoCounters;

impl Published for NoCounters {
    fn read(&self) -> [u64; 3] {
        [0; 3]
    }
}

/// How a pool runs.
pub(crate) struct PoolSpec<'a> {
    /// "TX" or "RX", for the text of a worker's panic.
    pub side: &'static str,
    /// The network namespace every worker enters before it starts.
    pub netns: Option<&'a str>,
    /// Worker i is pinned to `cpus[i % cpus.len()]`; empty: not pinned.
    pub cpus: &'a [usize],
    /// An interface (in `netns`) whose own counters are read before the
    /// workers start and after the last one ended.
    pub iface: Option<&'a str>,
    pub interval: Duration,
    /// The caller's stop (and Ctrl-C).
    pub stop: &'a StopSignal,
    /// One worker ending, for any reason, ends the others (RX: a count
    /// reached, the end of a file). Otherwise only a failure does.
    pub one_ends_all: bool,
}

/// What one worker sees of the pool.
pub(crate) struct Worker<'p, C> {
    index: usize,
    cpu: Option<usize>,
    gate: &'p Gate,
    counters: &'p C,
    backend: &'p OnceLock<String>,
    stop: &'p StopSignal,
    run_stop: &'p StopSignal,
}

impl<C> Worker<'_, C> {
    /// This worker's index, 0 to threads - 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The CPU this worker is pinned to, if any.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// The counters this worker publishes to the monitor.
    pub fn counters(&self) -> &C {
        self.counters
    }

    /// Publishes the backend of the port this worker opened.
    pub fn opened(&self, backend: String) {
        let _ = self.backend.set(backend);
    }

    /// Reports ready and waits for the others. Returns the common start
    /// time, or None when the run was abandoned before it started.
    pub fn wait_start(&self) -> Option<Instant> {
        self.gate.arrive_and_wait(self.stop)
    }

    /// True when the worker should leave its loop: the caller's stop, a
    /// signal, or the run's own end (another worker failed, a deadline).
    #[inline]
    pub fn should_stop(&self) -> bool {
        self.stop.is_set() || self.run_stop.is_set()
    }
}

/// What the calling thread does while the workers run.
pub(crate) trait Watch<C> {
    /// Every worker is ready; the clock starts now. `backends` are the
    /// ones the workers published.
    fn started(&mut self, backends: &[String]);

    /// Called on every look between samples; may end the run through
    /// `end` (RX: a duration, an idle timeout).
    fn look(
        &mut self,
        _now: Instant,
        _start: Instant,
        _counters: &[CachePadded<C>],
        _end: &StopSignal,
    ) {
    }

    /// The counts of each worker, `[packets, bytes, extra]`: what the
    /// workers published, unless the side reads them elsewhere. None when
    /// they cannot be read (the workers report why).
    fn counts(&mut self, counters: &[CachePadded<C>]) -> Option<Vec<[u64; 3]>>
    where
        C: Published,
    {
        Some(counters.iter().map(|c| c.read()).collect())
    }

    /// One interval's sample.
    fn sample(&mut self, sample: Sample);
}

/// How a run ended.
pub(crate) struct Finished<T> {
    /// When the clock started; None when the run never started (a worker
    /// failed to prepare, or a stop came first).
    pub start: Option<Instant>,
    /// What each worker that ran returned, in worker order.
    pub ends: Vec<T>,
    /// The interface's own counters over the whole run, all workers'
    /// frames included (when the spec names one and the run started).
    pub iface: Option<IfCounters>,
}

/// Runs one thread per entry of `workers`, each placed in the spec's
/// namespace and on its CPU before it is given its [`Worker`] view (and
/// opens its port: rings are allocated where they are used, sockets belong
/// to the namespace). The calling thread opens the gate once all are
/// ready, then samples and watches them until every one has returned. The
/// first error (or panic) of a worker is the run's error.
pub(crate) fn run<C, T, W>(
    spec: &PoolSpec<'_>,
    workers: Vec<W>,
    watch: &mut impl Watch<C>,
) -> Result<Finished<T>, EngineError>
where
    C: Published + Default + Sync,
    T: Send,
    W: FnOnce(&Worker<'_, C>) -> Result<Option<T>, EngineError> + Send,
{
    let threads = workers.len();
    let read_iface = || {
        spec.iface
            .map(|name| in_netns(spec.netns, spec.side, || Ok(read_counters(name)?)))
            .transpose()
    };
    let before = read_iface()?;
    let gate = Gate::default();
    let counters: Vec<CachePadded<C>> = (0..threads).map(|_| CachePadded::default()).collect();
    let backends: Vec<OnceLock<String>> = (0..threads).map(|_| OnceLock::new()).collect();
    let done = AtomicUsize::new(0);
    let run_stop = StopSignal::new();
    let stop = spec.stop;

    let (start, ends) = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .enumerate()
            .map(|(index, work)| {
                let mut view = Worker {
                    index,
                    cpu: None,
                    gate: &gate,
                    counters: &*counters[index],
                    backend: &backends[index],
                    stop,
                    run_stop: &run_stop,
                };
                let (done, one_ends_all) = (&done, spec.one_ends_all);
                let (netns, cpus) = (spec.netns, spec.cpus);
                scope.spawn(move || {
                    // Counts the worker as done however it ends: a panic
                    // too, or the calling thread would wait for it forever
                    // (and the join below reports the panic).
                    let _end = WorkerDone {
                        done,
                        gate: view.gate,
                        run_stop: view.run_stop,
                    };
                    let r = place_thread(netns, cpus, index).and_then(|cpu| {
                        view.cpu = cpu;
                        work(&view)
                    });
                    if r.is_err() {
                        view.gate.fail();
                    }
                    if r.is_err() || one_ends_all {
                        view.run_stop.stop();
                    }
                    r
                })
            })
            .collect();

        let start = gate.open_when_ready(threads, stop);
        // A panic of the watch (on this thread) stops the workers: the
        // scope waits for them before the panic goes on, for ever if
        // nothing told them to stop.
        let _stop_on_panic = OnPanic(|| run_stop.stop());
        if let Some(start) = start {
            let published: Vec<String> = backends.iter().filter_map(|b| b.get().cloned()).collect();
            watch.started(&published);
            let mut monitor = Monitor::new(start, spec.interval, threads);
            loop {
                let all_done = done.load(Ordering::Acquire) == threads;
                let now = Instant::now();
                watch.look(now, start, &counters, &run_stop);
                if monitor.due(now) || all_done {
                    let Some(counts) = watch.counts(&counters) else {
                        break;
                    };
                    if let Some(s) = monitor.sample(now, counts, all_done) {
                        watch.sample(s);
                    }
                }
                if all_done {
                    break;
                }
                std::thread::sleep(monitor.nap());
            }
        }
        (start, join_all(handles, spec.side))
    });
    let ends = ends?;
    let iface = match (start, before) {
        (Some(_), Some(before)) => read_iface()?.map(|after| after.delta(&before)),
        _ => None,
    };
    Ok(Finished {
        start,
        ends: ends.into_iter().flatten().collect(),
        iface,
    })
}

/// Marks a worker's end when it is dropped, at the end of the worker's
/// thread or while a panic unwinds it: a panicking worker fails the gate
/// and stops the run, as an error does.
struct WorkerDone<'a> {
    done: &'a AtomicUsize,
    gate: &'a Gate,
    run_stop: &'a StopSignal,
}

impl Drop for WorkerDone<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.gate.fail();
            self.run_stop.stop();
        }
        self.done.fetch_add(1, Ordering::Release);
    }
}

/// Joins every worker; the first error (or panic) wins.
fn join_all<T>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<T, EngineError>>>,
    side: &'static str,
) -> Result<Vec<T>, EngineError> {
    let mut ends = Vec::with_capacity(handles.len());
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(end)) => ends.push(end),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(EngineError::WorkerPanicked(side));
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(ends),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[derive(Default)]
    struct Count(AtomicU64);

    impl Published for Count {
        fn read(&self) -> [u64; 3] {
            let n = self.0.load(Ordering::Relaxed);
            [n, n * 100, 1]
        }
    }

    #[derive(Default)]
    struct Seen {
        started: Vec<String>,
        samples: Vec<Sample>,
    }

    impl Watch<Count> for Seen {
        fn started(&mut self, backends: &[String]) {
            self.started = backends.to_vec();
        }
        fn sample(&mut self, sample: Sample) {
            self.samples.push(sample);
        }
    }

    fn spec(stop: &StopSignal, one_ends_all: bool) -> PoolSpec<'_> {
        PoolSpec {
            side: "TX",
            netns: None,
            cpus: &[],
            iface: None,
            interval: Duration::from_millis(10),
            stop,
            one_ends_all,
        }
    }

    type Work<'a> =
        Box<dyn FnOnce(&Worker<'_, Count>) -> Result<Option<u64>, EngineError> + Send + 'a>;

    #[test]
    fn samples_add_up_to_what_the_workers_published() {
        let stop = StopSignal::new();
        let workers: Vec<Work<'static>> = (0..3u64)
            .map(|k| -> Work<'static> {
                Box::new(move |w: &Worker<'_, Count>| {
                    w.opened(format!("port{}", w.index()));
                    w.wait_start().expect("the gate opens");
                    for n in 1..=(k + 1) * 1000 {
                        w.counters().0.store(n, Ordering::Relaxed);
                    }
                    Ok(Some(k))
                })
            })
            .collect();
        let mut seen = Seen::default();
        let f = run(&spec(&stop, false), workers, &mut seen).unwrap();
        assert!(f.start.is_some());
        assert_eq!(f.ends, [0, 1, 2]);
        assert_eq!(seen.started, ["port0", "port1", "port2"]);
        // 1000 + 2000 + 3000 frames, 100 bytes each; `extra` is a level
        // of 1 per worker, so only the first sample carries it.
        let packets: u64 = seen.samples.iter().map(|s| s.packets).sum();
        let bytes: u64 = seen.samples.iter().map(|s| s.bytes).sum();
        assert_eq!((packets, bytes), (6000, 600_000));
        let per_thread: Vec<u64> = (0..3)
            .map(|i| seen.samples.iter().map(|s| s.threads[i]).sum())
            .collect();
        assert_eq!(per_thread, [1000, 2000, 3000]);
        assert_eq!(seen.samples[0].extra, 3);
    }

    #[test]
    fn a_worker_that_fails_to_prepare_abandons_the_run() {
        let stop = StopSignal::new();
        let passed = AtomicU64::new(0);
        let passed = &passed;
        let workers: Vec<Work<'_>> = vec![
            Box::new(move |w: &Worker<'_, Count>| {
                let r = w.wait_start();
                passed.fetch_add(u64::from(r.is_some()), Ordering::Relaxed);
                Ok(r.map(|_| 0u64))
            }),
            Box::new(|_: &Worker<'_, Count>| Err(EngineError::BadPlan("no port".into()))),
        ];
        let mut seen = Seen::default();
        let e = run(&spec(&stop, false), workers, &mut seen)
            .err()
            .expect("the failure is the run's");
        assert_eq!(e.to_string(), "no port");
        assert_eq!(passed.load(Ordering::Relaxed), 0);
        assert!(seen.started.is_empty() && seen.samples.is_empty());
    }

    #[test]
    fn a_worker_that_panics_ends_the_run_with_an_error() {
        // One worker panics after the start, the other runs until told to
        // stop: the run ends (it used to wait for the panicked worker
        // forever), and the panic is its error. Before the start too.
        for before_start in [false, true] {
            let stop = StopSignal::new();
            let workers: Vec<Work<'static>> = vec![
                Box::new(|w: &Worker<'_, Count>| {
                    let start = w.wait_start();
                    while start.is_some() && !w.should_stop() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Ok(start.map(|_| 0))
                }),
                Box::new(move |w: &Worker<'_, Count>| {
                    if !before_start {
                        w.wait_start().expect("the gate opens");
                    }
                    panic!("a worker's bug");
                }),
            ];
            let e = run(&spec(&stop, false), workers, &mut Seen::default())
                .err()
                .expect("the panic is the run's error");
            assert_eq!(e.to_string(), EngineError::WorkerPanicked("TX").to_string());
        }
    }

    /// A watch whose look panics once the run has started.
    struct PanickyWatch;

    impl Watch<Count> for PanickyWatch {
        fn started(&mut self, _: &[String]) {}
        fn look(&mut self, _: Instant, _: Instant, _: &[CachePadded<Count>], _: &StopSignal) {
            panic!("a watch's bug");
        }
        fn sample(&mut self, _: Sample) {}
    }

    #[test]
    fn a_watch_that_panics_stops_the_workers_and_the_panic_goes_on() {
        // The worker runs until told to stop; the run must end with the
        // watch's panic (it used to wait for the worker for ever).
        let (done, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let stop = StopSignal::new();
            let workers: Vec<Work<'static>> = vec![Box::new(|w: &Worker<'_, Count>| {
                let start = w.wait_start();
                while start.is_some() && !w.should_stop() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(start.map(|_| 0))
            })];
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&spec(&stop, false), workers, &mut PanickyWatch)
            }));
            let _ = done.send(r.is_err());
        });
        // 8 s: a hang fails here, before cargo-mutants' 20 s timeout.
        let panicked = ended
            .recv_timeout(Duration::from_secs(8))
            .expect("the run ended after the watch panicked");
        assert!(panicked, "the watch's panic went on");
    }

    #[test]
    fn one_worker_ending_ends_the_others_only_when_asked() {
        let stop = StopSignal::new();
        let workers = || -> Vec<Work<'static>> {
            vec![
                Box::new(|w: &Worker<'_, Count>| Ok(w.wait_start().map(|_| 0))),
                Box::new(|w: &Worker<'_, Count>| {
                    let start = w.wait_start().expect("the gate opens");
                    while !w.should_stop() {
                        if start.elapsed() > Duration::from_millis(200) {
                            return Ok(Some(2));
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Ok(Some(1))
                }),
            ]
        };
        let f = run(&spec(&stop, true), workers(), &mut Seen::default()).unwrap();
        assert_eq!(f.ends, [0, 1], "the second worker was told to stop");
        let f = run(&spec(&stop, false), workers(), &mut Seen::default()).unwrap();
        assert_eq!(f.ends, [0, 2], "the second worker ran to its own end");
    }

    #[test]
    fn a_stop_before_the_start_leaves_nothing_to_sum() {
        let stop = StopSignal::new();
        stop.stop();
        let workers: Vec<Work<'static>> = vec![Box::new(|w: &Worker<'_, Count>| {
            Ok(w.wait_start().map(|_| 0))
        })];
        let f = run(&spec(&stop, false), workers, &mut Seen::default()).unwrap();
        assert!(f.start.is_none());
        assert!(f.ends.is_empty());
    }
}
