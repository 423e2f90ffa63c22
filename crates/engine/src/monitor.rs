//! What TX and RX runs share: sampling the workers' counters once per
//! interval, and joining the workers.

use std::time::{Duration, Instant};

use crate::{EngineError, L1_OVERHEAD};

/// A worker's published counters: packets, bytes, and one more count the
/// side cares about (RX: foreign frames; TX: none).
pub(crate) trait Published {
    fn read(&self) -> [u64; 3];
}

/// One interval's worth of counts.
pub(crate) struct Sample {
    /// Seconds since the start, at the end of the interval.
    pub elapsed: f64,
    /// The interval's real length in seconds.
    pub seconds: f64,
    pub packets: u64,
    pub bytes: u64,
    pub extra: u64,
    /// Packets per thread.
    pub threads: Vec<u64>,
}

impl Sample {
    pub fn pps(&self) -> f64 {
        per_second(self.packets as f64, self.seconds)
    }
    pub fn l2_bps(&self) -> f64 {
        per_second(self.bytes as f64 * 8.0, self.seconds)
    }
    pub fn l1_bps(&self) -> f64 {
        l1_bps(self.packets, self.bytes, self.seconds)
    }
}

/// `x / seconds`, 0 for an empty period.
pub(crate) fn per_second(x: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        x / seconds
    } else {
        0.0
    }
}

/// L1 bits per second of `packets` frames of `bytes` in total.
pub(crate) fn l1_bps(packets: u64, bytes: u64, seconds: f64) -> f64 {
    per_second((bytes + packets * L1_OVERHEAD) as f64 * 8.0, seconds)
}

/// Samples the workers' counters at every interval boundary.
pub(crate) struct Monitor {
    start: Instant,
    interval: Duration,
    next: Instant,
    last_t: Instant,
    last: Vec<[u64; 3]>,
}

impl Monitor {
    pub fn new(start: Instant, interval: Duration, threads: usize) -> Monitor {
        Monitor {
            start,
            interval,
            next: start + interval,
            last_t: start,
            last: vec![[0; 3]; threads],
        }
    }

    /// At an interval boundary, or with `last` (the workers are done),
    /// reads the counters and returns the interval's sample. The last,
    /// partial interval is returned only if it carried traffic.
    pub fn poll<C: Published>(
        &mut self,
        now: Instant,
        counters: &[C],
        last: bool,
    ) -> Option<Sample> {
        if now < self.next && !last {
            return None;
        }
        let now_counts: Vec<[u64; 3]> = counters.iter().map(Published::read).collect();
        let diff = |k: usize| -> u64 {
            now_counts
                .iter()
                .zip(&self.last)
                .map(|(a, b)| a[k] - b[k])
                .sum()
        };
        let sample = Sample {
            elapsed: (now - self.start).as_secs_f64(),
            seconds: (now - self.last_t).as_secs_f64(),
            packets: diff(0),
            bytes: diff(1),
            extra: diff(2),
            threads: now_counts
                .iter()
                .zip(&self.last)
                .map(|(a, b)| a[0] - b[0])
                .collect(),
        };
        self.last = now_counts;
        self.last_t = now;
        while self.next <= now {
            self.next += self.interval;
        }
        (!last || sample.packets > 0).then_some(sample)
    }

    /// How long to sleep before looking again.
    pub fn nap(&self) -> Duration {
        self.next
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(5))
    }
}

/// Joins every worker; the first error (or panic) wins.
pub(crate) fn join_all<T>(
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
