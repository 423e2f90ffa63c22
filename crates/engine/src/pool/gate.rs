//! Starting worker threads together.
//!
//! Each worker prepares (enters its namespace, pins itself, opens its
//! port), then reports ready and waits. The monitor starts the clock only
//! once every worker is ready, so slow ring setup does not eat into the
//! measured time; if any worker fails to prepare, all of them give up.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::StopSignal;

#[derive(Debug, Default)]
pub(crate) struct Gate {
    ready: AtomicUsize,
    failed: AtomicBool,
    open: AtomicBool,
    closed: AtomicBool,
    start: OnceLock<Instant>,
}

/// How long a waiting worker or monitor sleeps between checks.
const POLL: Duration = Duration::from_micros(200);

impl Gate {
    /// Called by a worker once prepared. Returns the common start time, or
    /// None when the run was abandoned (another worker failed, or the stop
    /// signal fired).
    pub fn arrive_and_wait(&self, stop: &StopSignal) -> Option<Instant> {
        self.ready.fetch_add(1, Ordering::AcqRel);
        loop {
            if self.open.load(Ordering::Acquire) {
                return self.start.get().copied();
            }
            if self.closed.load(Ordering::Acquire) || stop.is_set() {
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Called by a worker that could not prepare.
    pub fn fail(&self) {
        self.failed.store(true, Ordering::Release);
    }

    /// Waits until all `n` workers are ready (true, and the gate opens) or
    /// one failed or the stop signal fired (false, and the gate closes).
    pub fn open_when_ready(&self, n: usize, stop: &StopSignal) -> Option<Instant> {
        loop {
            if self.failed.load(Ordering::Acquire) || stop.is_set() {
                self.closed.store(true, Ordering::Release);
                return None;
            }
            if self.ready.load(Ordering::Acquire) == n {
                let start = *self.start.get_or_init(Instant::now);
                self.open.store(true, Ordering::Release);
                return Some(start);
            }
            std::thread::sleep(POLL);
        }
    }
}
