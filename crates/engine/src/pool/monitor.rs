//! Sampling the workers' counters once per interval.

use std::time::{Duration, Instant};

use crate::rates::{l1_bps, per_second};

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

    /// True at an interval boundary: time to read the counters.
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// Turns the counts read at `now` (one `[packets, bytes, extra]` per
    /// worker) into the sample of the interval that ends there. With
    /// `last` (the workers are done), the last, partial interval is
    /// returned only if it carried traffic.
    pub fn sample(
        &mut self,
        now: Instant,
        now_counts: Vec<[u64; 3]>,
        last: bool,
    ) -> Option<Sample> {
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
