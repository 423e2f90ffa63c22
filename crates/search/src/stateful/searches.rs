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
    fn of(r: &GoalResult, min: f64, max: f64) -> Bounds {
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

/// Runs a search between `min` and `max`; `trial(value)` runs one trial
/// and returns it with its measurement's offered value and length.
fn search(
    width: f64,
    min: f64,
    max: f64,
    trace: &mut Vec<StatefulTrial>,
    mut trial: impl FnMut(f64) -> Result<Option<(StatefulTrial, f64, f64)>, CampaignError>,
) -> Result<Option<Bounds>, CampaignError> {
    let mut s = Search::new(SearchConfig::new(vec![goal(width)], min, max))?;
    while let Some(req) = s.next_trial() {
        let Some((t, offered, duration)) = trial(req.load)? else {
            return Ok(None);
        };
        s.add(t.measurement(req.load, offered, duration));
        trace.push(t);
    }
    let r = &s.results()[0];
    Ok(Some(Bounds::of(r, min, max)))
}

/// The connection tracking table capacity: the most connections, set up
/// at `setup_pps`, that all validate, searched from 1 to `max`.
pub fn capacity(
    phases: &Phases<'_>,
    max: u64,
    setup_pps: f64,
    validation_pps: f64,
    width: f64,
    trace: &mut Vec<StatefulTrial>,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Bounds>, CampaignError> {
    search(width, 1.0, max as f64, trace, |load| {
        let n = load.round().max(1.0) as u64;
        let t = phases.trial("capacity", n, setup_pps, validation_pps, on_event)?;
        // The count searched is the load; every frame sent means all of
        // them were offered.
        Ok(t.map(|t| {
            let offered = load * t.preliminary_sent as f64 / t.connections as f64;
            (t, offered, 1.0)
        }))
    })
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
            (t, offered, length)
        }))
    })
}
