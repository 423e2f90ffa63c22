//! The connection tracking table capacity and the maximum connection
//! establishment rate, each found by the throughput search's machinery
//! ([`crate::Search`]) with one goal: no connection may fail. A trial at
//! a count or rate either validates every connection (a lower bound) or
//! not (an upper bound); the search narrows them to the final width.

use pktlab_campaign::CampaignError;
use pktlab_trial::trial::TrialEvent;

use super::phases::{Phases, StatefulTrial};
use crate::{Goal, GoalResult, Search, SearchConfig};

/// One trial decides a load: any failed connection makes it an upper
/// bound. The durations are the search's units, not seconds of traffic.
fn goal(width: f64) -> Goal {
    Goal {
        loss_ratio: 0.0,
        exceed_ratio: 0.0,
        width,
        initial_trial_duration: UNIT,
        final_trial_duration: UNIT,
        duration_sum: UNIT,
        preceding_targets: 0,
    }
}

const UNIT: f64 = 0.001;

/// The bounds a search found.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bounds {
    /// The highest value that validated every connection (None: not even
    /// the lowest did).
    pub lower: Option<f64>,
    /// The lowest value that failed some (None: the highest validated).
    pub upper: Option<f64>,
    /// The range searched.
    pub min: f64,
    pub max: f64,
    /// The lower bound is the highest value tried: "at least".
    pub hit_max: bool,
    /// The generator fell short of the rate at the lower bound.
    pub generator_limited: bool,
    /// The bounds reached the final width.
    pub complete: bool,
    /// The values the search asked for at the bounds (the width is
    /// theirs); `lower` and `upper` are lower where the generator offered
    /// less.
    pub lower_intended: Option<f64>,
    pub upper_intended: Option<f64>,
}

impl Bounds {
    pub(super) fn of(r: &GoalResult, min: f64, max: f64) -> Bounds {
        Bounds {
            lower: r.lower.map(|b| b.pps),
            upper: r.upper.map(|b| b.pps),
            min,
            max,
            hit_max: r.hit_max,
            generator_limited: r.generator_limited,
            complete: r.complete,
            lower_intended: r.lower.map(|b| b.intended_pps),
            upper_intended: r.upper.map(|b| b.intended_pps),
        }
    }
}

/// Runs a search between `min` and `max`; `trial(value)` runs the trials
/// of one value (the last one decides it) and returns them with the
/// measurement's offered value and length.
fn search(
    width: f64,
    min: f64,
    max: f64,
    trace: &mut Vec<StatefulTrial>,
    mut trial: impl FnMut(f64) -> Result<Option<Ran>, CampaignError>,
) -> Result<Option<Bounds>, CampaignError> {
    let mut s = Search::new(SearchConfig::new(vec![goal(width)], min, max))?;
    while let Some(req) = s.next_trial() {
        let Some((trials, offered, duration)) = trial(req.load)? else {
            return Ok(None);
        };
        if let Some(last) = trials.last() {
            s.add(last.measurement(req.load, offered, duration));
        }
        trace.extend(trials);
    }
    let r = &s.results()[0];
    Ok(Some(Bounds::of(r, min, max)))
}

/// The trials of one value, the offered value and the length of the last.
type Ran = (Vec<StatefulTrial>, f64, f64);

/// The connection tracking table capacity: the most connections, set up
/// at `setup_pps`, that all validate, searched from 1 to `max`.
///
/// After a table overflowed, Linux's garbage collector drops unanswered
/// connections while a namespace holds more than 95 % of
/// `nf_conntrack_max` (`limit`), until it has scanned the whole table
/// once. A trial within the limit that lost connections although the
/// table never filled (no refusal, no eviction) is run again, up to
/// [`REPEATS`] times; every trial stays in the trace.
#[allow(clippy::too_many_arguments)] // The search's numbers, each its own.
pub fn capacity(
    phases: &Phases<'_>,
    max: u64,
    limit: Option<u64>,
    setup_pps: f64,
    validation_pps: f64,
    width: f64,
    trace: &mut Vec<StatefulTrial>,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Bounds>, CampaignError> {
    search(width, 1.0, max as f64, trace, |load| {
        let n = load.round().max(1.0) as u64;
        let mut ran = Vec::new();
        for _ in 0..=REPEATS {
            let Some(t) = phases.trial("capacity", n, setup_pps, validation_pps, on_event)? else {
                return Ok(None);
            };
            let again = disturbed(&t, limit);
            ran.push(t);
            if !again {
                break;
            }
        }
        // The count searched is the load; every frame sent means all of
        // them were offered.
        let last = &ran[ran.len() - 1];
        let offered = load * last.preliminary_sent as f64 / last.connections as f64;
        Ok(Some((ran, offered, 1.0)))
    })
}

/// Times a capacity trial is run again ([`capacity`]).
pub const REPEATS: usize = 2;

/// A trial within the table's limit that failed although the DUT neither
/// refused nor evicted a connection.
fn disturbed(t: &StatefulTrial, limit: Option<u64>) -> bool {
    let within = limit.is_some_and(|m| t.connections <= m);
    let never_full =
        t.setup_refused == Some(0) && t.setup_evicted == Some(0) && t.validation_evicted == Some(0);
    within && never_full && !t.validated()
}

/// The maximum connection establishment rate: the highest preliminary
/// rate at which `n` connections all validate, searched between `min`
/// and `max` frames per second.
#[allow(clippy::too_many_arguments)] // The search's numbers, each its own.
pub fn establishment_rate(
    phases: &Phases<'_>,
    n: u64,
    min: f64,
    max: f64,
    validation_pps: f64,
    width: f64,
    trace: &mut Vec<StatefulTrial>,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Bounds>, CampaignError> {
    search(width, min, max, trace, |rate| {
        let t = phases.trial("rate", n, rate, validation_pps, on_event)?;
        // A trial's length is its preliminary phase's: what the DUT
        // "forwarded" per second is then the rate of validated
        // connections, where the search looks next.
        Ok(t.map(|t| {
            let length = t.connections as f64 / rate;
            let offered = t.offered_pps;
            (vec![t], offered, length)
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(n: u64, validated: u64, refused: u64) -> StatefulTrial {
        StatefulTrial {
            test: "capacity".into(),
            connections: n,
            setup_rate_pps: 20_000.0,
            offered_pps: 20_000.0,
            preliminary_sent: n,
            preliminary_received: n - refused,
            conntrack_count: Some(validated),
            validation_rate_pps: 20_000.0,
            validation_sent: n,
            validation_received: validated,
            setup_refused: Some(refused),
            setup_evicted: Some(0),
            validation_evicted: Some(0),
        }
    }

    #[test]
    fn which_trials_run_again() {
        // Within the limit, lost without a full table: again.
        assert!(disturbed(&trial(2990, 2850, 0), Some(3000)));
        // Validated, above the limit, refused, or no known limit: not.
        assert!(!disturbed(&trial(2990, 2990, 0), Some(3000)));
        assert!(!disturbed(&trial(3010, 3000, 10), Some(3000)));
        assert!(!disturbed(&trial(2990, 2980, 10), Some(3000)));
        assert!(!disturbed(&trial(2990, 2850, 0), None));
        let unknown = StatefulTrial {
            setup_refused: None,
            ..trial(2990, 2850, 0)
        };
        assert!(!disturbed(&unknown, Some(3000)));
    }
}
