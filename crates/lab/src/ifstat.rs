//! Interface counters interval by interval (`pktlab ifstat`, like
//! FreeBSD's `netstat -iw 1`): what changed on each interface since the
//! last interval.

use std::time::{Duration, Instant};

use pktlab_engine::stop::Ticker;
use pktlab_io::iface::IfCounters;
use pktlab_wire::units;

use crate::{netns, ports, LabError};

/// What to watch, checked: every interface named can be read.
#[derive(Debug)]
pub struct IfWatch {
    interval: Duration,
    count: Option<u64>,
    netns: Option<String>,
    names: Vec<String>,
    /// The counters when the watch was opened.
    first: Vec<IfCounters>,
}

/// The shortest interval.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// What a watch sees.
#[derive(Debug)]
pub enum IfSeen<'a> {
    /// The watch is about to wait for its interval `index` (from 0).
    Waiting { index: u64 },
    /// Interval `number` (from 1) ended, `seconds` after the one before:
    /// each interface's counters grew by `deltas`.
    Interval {
        number: u64,
        seconds: f64,
        deltas: &'a [IfCounters],
    },
}

impl IfWatch {
    /// Checks what the user typed, in this order: the interval (`1s`, at
    /// least 10 ms), the count of intervals (at least 1; None: until
    /// Ctrl-C), the network namespace, and the interfaces (none: every
    /// one of the namespace but lo), whose counters are read once.
    pub fn open(
        interval: &str,
        count: Option<u64>,
        netns: Option<&str>,
        ifaces: &[String],
    ) -> Result<IfWatch, LabError> {
        let usage = |e: &dyn std::fmt::Display| LabError::Usage(e.to_string());
        let interval_d = units::parse_duration(interval).map_err(|e| usage(&e))?;
        if interval_d < MIN_INTERVAL {
            return Err(LabError::Usage(format!(
                "invalid interval '{interval}': use at least 10ms"
            )));
        }
        if count == Some(0) {
            return Err(LabError::Usage("invalid count 0: use at least 1".into()));
        }
        if let Some(n) = netns.filter(|n| !netns::exists(n)) {
            return Err(LabError::Usage(format!(
                "network namespace {n} does not exist"
            )));
        }
        let names = match (ifaces.is_empty(), netns) {
            (false, _) => ifaces.to_vec(),
            (true, Some(n)) => netns::within(n, ports::iface_names)?.map_err(listing)?,
            (true, None) => ports::iface_names().map_err(listing)?,
        };
        if names.is_empty() {
            return Err(LabError::Usage("no interface to watch".into()));
        }
        let mut watch = IfWatch {
            interval: interval_d,
            count,
            netns: netns.map(str::to_string),
            names,
            first: Vec::new(),
        };
        // A bad interface name is bad input: said before the first interval.
        watch.first = watch.read().map_err(|e| usage(&e))?;
        Ok(watch)
    }

    /// The interfaces watched.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn read(&self) -> Result<Vec<IfCounters>, LabError> {
        let refs: Vec<&str> = self.names.iter().map(String::as_str).collect();
        ports::counters_at(self.netns.as_deref(), &refs)
    }

    /// Watches until the count of intervals, Ctrl-C, or `on` returns true
    /// (nobody reads any more).
    pub fn run<E: From<LabError>>(
        self,
        mut on: impl FnMut(IfSeen<'_>) -> Result<bool, E>,
    ) -> Result<(), E> {
        let mut ticker = Ticker::new(self.interval, None);
        let (mut prev, mut prev_at) = (self.first.clone(), ticker.start());
        for index in 0.. {
            if on(IfSeen::Waiting { index })? {
                return Ok(());
            }
            let tick = ticker.wait();
            if tick.interrupted {
                return Ok(());
            }
            let now = self.read()?;
            let at = Instant::now();
            let deltas: Vec<IfCounters> = now.iter().zip(&prev).map(|(n, p)| n.delta(p)).collect();
            let gone = on(IfSeen::Interval {
                number: tick.number,
                seconds: (at - prev_at).as_secs_f64(),
                deltas: &deltas,
            })?;
            if gone || self.count.is_some_and(|c| tick.number >= c) {
                return Ok(());
            }
            (prev, prev_at) = (now, at);
        }
        Ok(())
    }
}

fn listing(err: std::io::Error) -> LabError {
    LabError::Sys {
        what: "cannot list the interfaces".into(),
        err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_user_typed_is_checked_in_order() {
        let none: &[String] = &[];
        let e = IfWatch::open("5ms", Some(0), None, none).unwrap_err();
        assert_eq!(e.to_string(), "invalid interval '5ms': use at least 10ms");
        assert!(e.is_usage());
        let e = IfWatch::open("1s", Some(0), Some("no/such"), none).unwrap_err();
        assert_eq!(e.to_string(), "invalid count 0: use at least 1");
        let e = IfWatch::open("1s", None, Some("pktlab-no-such-ns"), none).unwrap_err();
        assert_eq!(
            e.to_string(),
            "network namespace pktlab-no-such-ns does not exist"
        );
        assert!(e.is_usage());
        let e = IfWatch::open("1s", None, None, &["pktlab-no-such0".to_string()]).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("pktlab-no-such0"), "{e}");
    }

    #[test]
    fn lo_s_counters_grow_by_what_it_carried() {
        // lo is in every namespace; nothing else is sure to be.
        let w = IfWatch::open("10ms", Some(2), None, &["lo".to_string()]).unwrap();
        assert_eq!(w.names(), ["lo"]);
        let mut seen = Vec::new();
        w.run(|s| -> Result<bool, LabError> {
            match s {
                IfSeen::Waiting { index } => seen.push(format!("wait {index}")),
                IfSeen::Interval { number, deltas, .. } => {
                    assert_eq!(deltas.len(), 1);
                    seen.push(format!("interval {number}"));
                }
            }
            Ok(false)
        })
        .unwrap();
        assert_eq!(seen, ["wait 0", "interval 1", "wait 1", "interval 2"]);
    }
}
