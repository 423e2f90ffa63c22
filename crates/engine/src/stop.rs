//! Stopping runs: by the caller, or by SIGINT/SIGTERM.
//!
//! The first Ctrl-C asks every run to stop cleanly: workers leave their
//! loops, ports are flushed, and the summary so far is printed. A second
//! Ctrl-C exits at once (code 130), for when a port hangs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Set by the signal handler; checked by every [`StopSignal`].
fn interrupt_flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the SIGINT/SIGTERM handlers (once per process).
pub fn install_signal_handlers() -> std::io::Result<()> {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    let result = RESULT.get_or_init(|| {
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Handlers run in registration order: the conditional exit only
            // fires when the flag is already set, that is on the second signal.
            signal_hook::flag::register_conditional_shutdown(sig, 130, interrupt_flag().clone())
                .and_then(|_| signal_hook::flag::register(sig, interrupt_flag().clone()))
                .map_err(|e| format!("cannot install the signal handlers: {e}"))?;
        }
        Ok(())
    });
    result.clone().map_err(std::io::Error::other)
}

/// True once SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    interrupt_flag().load(Ordering::Relaxed)
}

/// A stop request shared by the threads of one run. It also fires when the
/// process is interrupted.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Asks the run to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True when the run should stop.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed) || interrupted()
    }
}

/// Runs its closure when dropped by a panic: a thread that owns a
/// `std::thread::scope` tells the scope's other threads to stop, or the
/// scope would wait for them for ever before the panic could go on.
pub struct OnPanic<F: FnMut()>(pub F);

impl<F: FnMut()> Drop for OnPanic<F> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            (self.0)();
        }
    }
}

/// The clock of a monitor that reports every interval: ticks at whole
/// intervals from its start, until its end (if it has one) or Ctrl-C.
#[derive(Clone, Copy, Debug)]
pub struct Ticker {
    start: std::time::Instant,
    interval: std::time::Duration,
    end: Option<std::time::Instant>,
    ticks: u64,
}

/// One tick of a [`Ticker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// Its number, from 1.
    pub number: u64,
    /// Ctrl-C came before the tick was due (the tick comes at once).
    pub interrupted: bool,
    /// The ticker's end is reached: the last tick.
    pub at_end: bool,
}

impl Ticker {
    /// Starts now; `length`: how long until the last tick (a shorter last
    /// interval if need be), None for no end.
    pub fn new(interval: std::time::Duration, length: Option<std::time::Duration>) -> Ticker {
        let start = std::time::Instant::now();
        Ticker {
            start,
            interval,
            end: length.map(|l| start + l),
            ticks: 0,
        }
    }

    /// When it started.
    pub fn start(&self) -> std::time::Instant {
        self.start
    }

    /// Sleeps until the next tick, or until Ctrl-C.
    pub fn wait(&mut self) -> Tick {
        self.ticks += 1;
        let mut deadline = self.start + self.interval * self.ticks as u32;
        if let Some(e) = self.end {
            deadline = deadline.min(e);
        }
        let mut interrupted_now = false;
        loop {
            let now = std::time::Instant::now();
            if now >= deadline {
                break;
            }
            if interrupted() {
                interrupted_now = true;
                break;
            }
            std::thread::sleep((deadline - now).min(std::time::Duration::from_millis(50)));
        }
        Tick {
            number: self.ticks,
            interrupted: interrupted_now,
            at_end: self.end.is_some_and(|e| std::time::Instant::now() >= e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_is_shared_by_clones() {
        let a = StopSignal::new();
        let b = a.clone();
        assert!(!b.is_set());
        a.stop();
        assert!(b.is_set());
    }
}
