//! The drop tracer on its own (`pktlab drops`), for runs made by another
//! generator: the frames the kernel dropped in each interval, by place
//! and reason, then those of the whole watch with the CPUs' backlog
//! refusals the kernel counted meanwhile.

use std::time::{Duration, Instant};

use pktlab_engine::stop::Ticker;
use pktlab_io::droptrace::{netns_inode, DropCounts, DropTracer, NamedDrop, Places};
use pktlab_lab::softnet::{self, SoftnetCpu};
use pktlab_wire::units;

use crate::LossError;

/// What to watch, and for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchSpec {
    pub interval: Duration,
    /// None: until Ctrl-C.
    pub time: Option<Duration>,
    /// Only the drops in the network namespace of this inode.
    pub netns: Option<u32>,
    /// Every dropped frame, not only test frames.
    pub all: bool,
}

/// The shortest interval: the tracer's maps are read once per interval.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

impl WatchSpec {
    /// The spec of the words a user typed: the interval and time as
    /// durations (`1s`, `500ms`), the namespace by its `ip netns` name.
    pub fn parse(
        interval: &str,
        time: Option<&str>,
        netns: Option<&str>,
        all: bool,
    ) -> Result<WatchSpec, LossError> {
        let interval_d = units::parse_duration(interval).map_err(usage)?;
        if interval_d < MIN_INTERVAL {
            return Err(LossError::Usage(format!(
                "invalid interval '{interval}': use at least 10ms"
            )));
        }
        let time = match time {
            Some(t) => {
                let d = units::parse_duration(t).map_err(usage)?;
                if d.is_zero() {
                    return Err(LossError::Usage(format!(
                        "invalid time '{t}': use more than 0s"
                    )));
                }
                Some(d)
            }
            None => None,
        };
        let netns = match netns {
            Some(n) => Some(netns_inode(Some(n)).map_err(LossError::Usage)?),
            None => None,
        };
        Ok(WatchSpec {
            interval: interval_d,
            time,
            netns,
            all,
        })
    }

    /// `counts` less the drops of other namespaces than the one watched.
    fn keep(&self, c: DropCounts) -> DropCounts {
        match self.netns {
            Some(ino) => DropCounts {
                frames: c
                    .frames
                    .into_iter()
                    .filter(|(k, _)| k.netns == ino)
                    .collect(),
                overflow: c.overflow,
                missed: c.missed,
            },
            None => c,
        }
    }
}

fn usage(e: pktlab_wire::WireError) -> LossError {
    LossError::Usage(e.to_string())
}

/// What a watch sees, in order: `Ready` once, an `Interval` per interval,
/// a `Summary` at the end.
#[derive(Debug)]
pub enum Watched<'a> {
    /// The tracer counts.
    Ready,
    Interval {
        /// From 1.
        number: u64,
        seconds: f64,
        drops: &'a [NamedDrop],
    },
    Summary {
        seconds: f64,
        drops: &'a [NamedDrop],
        /// Each CPU's softnet counts over the watch (none when unreadable).
        backlogs: &'a [SoftnetCpu],
        /// Drops the tracer saw but could not count (its map was full).
        missed: u64,
    },
}

/// Watches the kernel's drops as `spec` says until its time or Ctrl-C,
/// handing `on` what it sees; `on` returns true when nobody reads any
/// more (the watch then ends at once, without its summary).
pub fn watch<E: From<LossError>>(
    spec: &WatchSpec,
    mut on: impl FnMut(Watched<'_>) -> Result<bool, E>,
) -> Result<(), E> {
    let tracer = DropTracer::start(spec.all).map_err(LossError::from)?;
    // Unreadable softnet counts only leave out the summary's counted line.
    let softnet_before = softnet::read().unwrap_or_default();
    let mut places = Places::load();
    let read = |t: &DropTracer| -> Result<DropCounts, LossError> { Ok(spec.keep(t.read()?)) };
    let first = read(&tracer)?;
    if on(Watched::Ready)? {
        return Ok(());
    }
    let mut ticker = Ticker::new(spec.interval, spec.time);
    let (mut prev, mut prev_at) = (first.clone(), ticker.start());
    loop {
        let tick = ticker.wait();
        let now = read(&tracer)?;
        let at = Instant::now();
        let named = places.name(&now.since(&prev));
        let seconds = (at - prev_at).as_secs_f64();
        let gone = on(Watched::Interval {
            number: tick.number,
            seconds,
            drops: &named,
        })?;
        if gone {
            return Ok(());
        }
        (prev, prev_at) = (now, at);
        if tick.interrupted || tick.at_end {
            break;
        }
    }
    let all = prev.since(&first);
    let backlogs = softnet::deltas(&softnet_before, &softnet::read().unwrap_or_default());
    on(Watched::Summary {
        seconds: (prev_at - ticker.start()).as_secs_f64(),
        drops: &places.name(&all),
        backlogs: &backlogs,
        missed: all.missed,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_checked_as_typed() {
        let s = WatchSpec::parse("500ms", Some("3s"), None, true).unwrap();
        assert_eq!(
            s,
            WatchSpec {
                interval: Duration::from_millis(500),
                time: Some(Duration::from_secs(3)),
                netns: None,
                all: true,
            }
        );
        let e = WatchSpec::parse("5ms", None, None, false).unwrap_err();
        assert_eq!(e.to_string(), "invalid interval '5ms': use at least 10ms");
        assert!(e.is_usage());
        let e = WatchSpec::parse("1s", Some("0s"), None, false).unwrap_err();
        assert_eq!(e.to_string(), "invalid time '0s': use more than 0s");
        assert!(WatchSpec::parse("fast", None, None, false)
            .unwrap_err()
            .is_usage());
    }
}
