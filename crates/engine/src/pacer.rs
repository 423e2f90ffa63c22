//! Rate pacing for one TX thread.
//!
//! The pacer compares how many frames *should* have left by now
//! (`elapsed × rate`) with how many did, and lets the difference go, at most
//! one batch at a time. When the thread falls behind (the port was full, the
//! CPU was busy), at most `max_backlog` frames of debt are kept: the rest is
//! forgiven rather than sent as a burst that would overflow the next hop's
//! rings. The achieved rate is then lower than the requested one, and the
//! reports say so instead of hiding it behind a burst.

use std::time::Duration;

/// Sleep only when the next frame is at least this far away; shorter waits
/// spin, because sleeping overshoots by tens of microseconds.
const SLEEP_THRESHOLD: Duration = Duration::from_micros(200);
/// How much earlier than due a sleeping thread wakes up, to absorb timer slack.
const WAKE_EARLY: Duration = Duration::from_micros(100);

#[derive(Clone, Debug)]
pub struct Pacer {
    rate_pps: f64,
    /// Frames sent so far, plus the debt forgiven when falling behind.
    accounted: u64,
    max_backlog: u64,
}

/// What a TX thread should do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Send this many frames now (≥ 1).
    Send(usize),
    /// Nothing is due yet: sleep this long (or spin when it is short).
    Wait(Duration),
}

impl Pacer {
    /// A pacer for `rate_pps` frames per second. `batch` bounds each answer
    /// and the debt kept when falling behind (at least one batch, at most a
    /// millisecond's worth of frames beyond it).
    pub fn new(rate_pps: f64, batch: usize) -> Pacer {
        assert!(rate_pps > 0.0 && rate_pps.is_finite());
        let per_ms = (rate_pps / 1000.0).ceil() as u64;
        Pacer {
            rate_pps,
            accounted: 0,
            max_backlog: batch.max(1) as u64 + per_ms,
        }
    }

    pub fn rate_pps(&self) -> f64 {
        self.rate_pps
    }

    /// How many of `want` frames may go at `elapsed` since the start.
    pub fn pace(&mut self, elapsed: Duration, want: usize) -> Pace {
        let due = (elapsed.as_secs_f64() * self.rate_pps) as u64;
        let mut owed = due.saturating_sub(self.accounted);
        if owed > self.max_backlog {
            // Forgive what cannot be sent without a burst.
            self.accounted += owed - self.max_backlog;
            owed = self.max_backlog;
        }
        if owed > 0 {
            return Pace::Send(owed.min(want as u64) as usize);
        }
        let next_at = (self.accounted + 1) as f64 / self.rate_pps;
        Pace::Wait(Duration::from_secs_f64(
            (next_at - elapsed.as_secs_f64()).max(0.0),
        ))
    }

    /// Records that `n` frames went.
    pub fn sent(&mut self, n: usize) {
        self.accounted += n as u64;
    }
}

/// Waits the way [`Pace::Wait`] asks: sleeps for long waits, spins briefly
/// for short ones.
pub fn wait(d: Duration) {
    match sleep_for(d) {
        Some(s) => std::thread::sleep(s),
        None => std::hint::spin_loop(),
    }
}

/// How long [`wait`] sleeps for a wait of `d` (None: it spins instead).
fn sleep_for(d: Duration) -> Option<Duration> {
    (d >= SLEEP_THRESHOLD).then(|| d - WAKE_EARLY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn sends_what_is_due_and_no_more() {
        let mut p = Pacer::new(1000.0, 64); // one frame per ms
        assert_eq!(p.pace(ms(0), 64), Pace::Wait(ms(1)));
        assert_eq!(p.pace(ms(5), 64), Pace::Send(5));
        p.sent(5);
        match p.pace(Duration::from_micros(5500), 64) {
            Pace::Wait(d) => {
                assert!(d.abs_diff(Duration::from_micros(500)) < Duration::from_nanos(10))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.pace(ms(7), 1), Pace::Send(1));
    }

    #[test]
    fn exact_count_over_a_simulated_second() {
        // Step a fake clock in 37 µs ticks; the pacer must release exactly
        // rate × time frames.
        let mut p = Pacer::new(200_000.0, 32);
        let mut sent = 0u64;
        let mut t = Duration::ZERO;
        while t < Duration::from_secs(1) {
            if let Pace::Send(n) = p.pace(t, 32) {
                p.sent(n);
                sent += n as u64;
            }
            t += Duration::from_micros(37);
        }
        // Due at the last tick (999.999 ms... the loop stops before 1 s).
        let last = t - Duration::from_micros(37);
        assert_eq!(sent, (last.as_secs_f64() * 200_000.0) as u64);
    }

    #[test]
    fn debt_is_capped_after_a_stall() {
        let mut p = Pacer::new(1_000_000.0, 64); // 1000 frames per ms
                                                 // A 100 ms stall: 100,000 frames were due; only one batch plus one
                                                 // millisecond's worth may still go, one batch at a time.
        let mut total = 0;
        // Bounded, so that a pacer that never stops sending fails instead
        // of hanging.
        for _ in 0..1000 {
            match p.pace(ms(100), 64) {
                Pace::Send(n) => {
                    assert!(n <= 64);
                    p.sent(n);
                    total += n;
                }
                Pace::Wait(_) => break,
            }
        }
        assert_eq!(total, 64 + 1000);
        // Caught up: the next frame is due 1 µs after the 100,000th.
        match p.pace(ms(100), 64) {
            Pace::Wait(d) => {
                assert!(d.abs_diff(Duration::from_micros(1)) < Duration::from_nanos(10))
            }
            other => panic!("{other:?}"),
        }
        // 1 ms later, 1000 more are due, less than the cap: all of them go,
        // one batch at a time.
        let mut later = 0;
        for _ in 0..1000 {
            match p.pace(ms(101), 64) {
                Pace::Send(n) => {
                    p.sent(n);
                    later += n;
                }
                Pace::Wait(_) => break,
            }
        }
        assert_eq!(later, 1000);
    }

    #[test]
    fn the_rate_asked_for() {
        assert_eq!(Pacer::new(1234.5, 8).rate_pps(), 1234.5);
        assert_eq!(Pacer::new(1e6, 8).rate_pps(), 1e6);
    }

    #[test]
    fn a_debt_of_exactly_the_cap_is_sent_whole() {
        // 10 frames per ms, batch 4: the cap is 4 + 10 = 14 frames of debt.
        let mut p = Pacer::new(10_000.0, 4);
        // 1.4 ms: 14 due, exactly the cap: nothing forgiven.
        let mut total = 0;
        for _ in 0..100 {
            match p.pace(Duration::from_micros(1400), 64) {
                Pace::Send(n) => {
                    p.sent(n);
                    total += n;
                }
                Pace::Wait(_) => break,
            }
        }
        assert_eq!(total, 14);
        // 3 ms: 30 due, 16 owed, 2 beyond the cap are forgiven.
        assert_eq!(p.pace(ms(3), 64), Pace::Send(14));
        p.sent(14);
        // The next frame (the 31st) is due at 3.1 ms.
        match p.pace(ms(3), 64) {
            Pace::Wait(d) => {
                assert!(d.abs_diff(Duration::from_micros(100)) < Duration::from_nanos(10))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn long_waits_sleep_short_ones_spin() {
        // 200 µs and more sleep, 100 µs less than asked (timer slack).
        assert_eq!(sleep_for(ms(50)), Some(Duration::from_micros(49_900)));
        assert_eq!(
            sleep_for(Duration::from_micros(200)),
            Some(Duration::from_micros(100))
        );
        assert_eq!(sleep_for(Duration::from_micros(199)), None);
        assert_eq!(sleep_for(Duration::ZERO), None);
        // A sleep never ends early, however busy the machine is.
        let start = std::time::Instant::now();
        wait(ms(30));
        assert!(start.elapsed() >= Duration::from_micros(29_900));
        // A short wait returns at once (no sleep, no panic below the slack).
        wait(Duration::from_micros(50));
    }
}
