//! Throughput over established connections, RFC 9693's real test: each
//! trial empties the DUT's connection table, sets up N connections in a
//! preliminary phase, then sends the connections' own traffic both ways
//! at once for a while, the Initiator's frames forward and the
//! Responder's answers back, at the same rate each way. A stateful DUT
//! drops an answer of a connection it does not hold, so the loss also
//! counts lost state. The loss is both directions' total, as the
//! throughput search of `pktlab rfc2544` counts traffic both ways; each
//! direction is kept. The search is [`crate::Search`] with a loss goal of
//! 0 (the NDR).

use std::time::Duration;

use pktlab_campaign::CampaignError;
use pktlab_trial::direction::Direction;
use pktlab_trial::trial::{TrialEvent, TrialResult, TrialSettings, Trials};

use super::connections::Connections;
use super::phases::{burst, fail, read_number, received, Phases, COUNT, INTERVAL};
use super::searches::Bounds;
use crate::{Goal, Measurement, Search, SearchConfig};

/// One direction of a throughput trial's real test phase.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WayCounts {
    /// Test frames the direction's generator sent, its receiver counted,
    /// and the loss as the trial counted it (sent less received).
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// The generator's median rate and the receiver's.
    pub offered_pps: f64,
    pub forwarded_pps: f64,
}

impl WayCounts {
    fn of(d: &Direction) -> WayCounts {
        WayCounts {
            sent: d.tx.packets,
            received: d.rx.packets - d.rx.foreign,
            lost: d.lost,
            offered_pps: d.offered_pps,
            forwarded_pps: d.forwarded_pps,
        }
    }
}

/// What one throughput trial measured (a line of `rfc9693.json`'s
/// `throughput_trials`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThroughputTrial {
    /// Connections set up (distinct 4-tuples), at `setup_rate_pps`.
    pub connections: u64,
    pub setup_rate_pps: f64,
    /// The preliminary phase's frames: sent by the Initiator, received by
    /// the Responder.
    pub preliminary_sent: u64,
    pub preliminary_received: u64,
    /// The DUT's connection count after the preliminary phase.
    pub conntrack_count: Option<u64>,
    /// The rate asked of each direction, and the real test's length.
    pub rate_pps: f64,
    pub duration_s: f64,
    pub forward: WayCounts,
    pub reverse: WayCounts,
    /// Lost frames the drop attribution placed on the tester's side, and
    /// whether most of the loss was (as in `pktlab rfc2544`'s trials).
    pub tester_lost: u64,
    pub tester_limited: bool,
}

impl ThroughputTrial {
    /// Both directions' sent frames.
    pub fn sent(&self) -> u64 {
        self.forward.sent + self.reverse.sent
    }

    /// Both directions' lost frames.
    pub fn lost(&self) -> u64 {
        self.forward.lost + self.reverse.lost
    }

    /// The trial as the search counts it: both directions' total, the
    /// load each direction's.
    pub fn measurement(&self) -> Measurement {
        let sent = self.sent();
        Measurement {
            intended_pps: self.rate_pps,
            offered_pps: sent as f64 / self.duration_s / 2.0,
            duration_s: self.duration_s,
            tx: sent,
            rx: sent.saturating_sub(self.lost()),
            tester_lost: self.tester_lost,
            tester_limited: self.tester_limited,
        }
    }
}

/// The goal: no frame lost (NDR), one full-length trial decides a load.
fn goal(width: f64, duration_s: f64) -> Goal {
    Goal {
        loss_ratio: 0.0,
        exceed_ratio: 0.0,
        width,
        initial_trial_duration: duration_s,
        final_trial_duration: duration_s,
        duration_sum: duration_s,
        preceding_targets: 0,
    }
}

/// How a throughput search runs: connections, the preliminary phase's
/// rate, the range of rates each way, each trial's length and the final
/// width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThroughputPlan {
    pub connections: u64,
    pub setup_pps: f64,
    pub min_pps: f64,
    pub max_pps: f64,
    pub duration_s: f64,
    pub width: f64,
}

/// The throughput over established connections: the highest rate each
/// way at which a trial loses no frame, searched between the plan's
/// rates; every trial goes to `trace`. None when Ctrl-C cut it short.
pub fn throughput(
    phases: &Phases<'_>,
    plan: &ThroughputPlan,
    trace: &mut Vec<ThroughputTrial>,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Bounds>, CampaignError> {
    let goals = vec![goal(plan.width, plan.duration_s)];
    let mut s = Search::new(SearchConfig::new(goals, plan.min_pps, plan.max_pps))?;
    while let Some(req) = s.next_trial() {
        let Some(t) = trial(phases, plan, req.load, on_event)? else {
            return Ok(None);
        };
        s.add(t.measurement());
        trace.push(t);
    }
    let r = &s.results()[0];
    Ok(Some(Bounds::of(r, plan.min_pps, plan.max_pps)))
}

/// One trial at `rate_pps` each way; None when Ctrl-C cut it short.
pub fn trial(
    phases: &Phases<'_>,
    plan: &ThroughputPlan,
    rate_pps: f64,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<ThroughputTrial>, CampaignError> {
    let c = Connections::at_least(plan.connections)?;
    phases.flush()?;
    let setup = burst(
        &phases.initiator,
        &c.initiator(phases.endpoints)?,
        c.count(),
        plan.setup_pps,
        on_event,
    )?;
    if phases.initiator.stop.is_set() {
        return Ok(None);
    }
    let conntrack_count = read_number(phases.dut, COUNT).ok();
    // Short intervals and nothing trimmed: every frame counts, and a
    // trial of a second still has its rates.
    let settings = TrialSettings {
        duration: Duration::from_secs_f64(plan.duration_s),
        trim_head: 0,
        trim_tail: 0,
        interval: INTERVAL,
    };
    // AF_PACKET both ways (the backends' default), as the Responder
    // sends alone: the XDP generator cannot feed the DUT's outside port,
    // whose GRO is off.
    let both = Trials {
        settings: &settings,
        io: Default::default(),
        ..phases.initiator
    };
    let r = both.run(&c.both_ways(phases.endpoints)?, Some(rate_pps), on_event)?;
    if phases.initiator.stop.is_set() {
        return Ok(None);
    }
    let (forward, reverse) = ways(&r)?;
    Ok(Some(ThroughputTrial {
        connections: c.count(),
        setup_rate_pps: plan.setup_pps,
        preliminary_sent: setup.tx.packets,
        preliminary_received: received(&setup),
        conntrack_count,
        rate_pps,
        duration_s: plan.duration_s,
        forward,
        reverse,
        tester_lost: r.drops.tester,
        tester_limited: r.drops.tester_limited,
    }))
}

/// The forward and reverse directions of a trial sent both ways.
fn ways(r: &TrialResult) -> Result<(WayCounts, WayCounts), CampaignError> {
    match &r.directions[..] {
        [f, b] => Ok((WayCounts::of(f), WayCounts::of(b))),
        other => Err(fail(format!(
            "a trial both ways measured {} directions, not 2",
            other.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn way(sent: u64, lost: u64) -> WayCounts {
        WayCounts {
            sent,
            received: sent - lost,
            lost,
            offered_pps: sent as f64 / 2.0,
            forwarded_pps: (sent - lost) as f64 / 2.0,
        }
    }

    fn t(rate: f64, forward_lost: u64, reverse_lost: u64) -> ThroughputTrial {
        let sent = (rate * 2.0) as u64;
        ThroughputTrial {
            connections: 1000,
            setup_rate_pps: 50_000.0,
            preliminary_sent: 1000,
            preliminary_received: 1000,
            conntrack_count: Some(1000),
            rate_pps: rate,
            duration_s: 2.0,
            forward: way(sent, forward_lost),
            reverse: way(sent, reverse_lost),
            tester_lost: 0,
            tester_limited: false,
        }
    }

    #[test]
    fn a_trial_counts_both_directions() {
        // 20,000 pps each way for 2 s: 40,000 frames each way.
        let m = t(20_000.0, 3, 7).measurement();
        assert_eq!((m.tx, m.rx, m.lost()), (80_000, 79_990, 10));
        assert_eq!((m.intended_pps, m.offered_pps), (20_000.0, 20_000.0));
        assert_eq!(m.duration_s, 2.0);
        assert_eq!(t(20_000.0, 0, 0).measurement().lost(), 0);
    }

    /// The search of this module, fed trials where the DUT loses frames
    /// above a rate: its bounds bracket that rate within the width.
    fn searched(limit: f64, reverse_only: bool) -> (Bounds, Vec<ThroughputTrial>) {
        let plan = ThroughputPlan {
            connections: 1000,
            setup_pps: 50_000.0,
            min_pps: 1_000.0,
            max_pps: 100_000.0,
            duration_s: 2.0,
            width: 0.01,
        };
        let mut s = Search::new(SearchConfig::new(
            vec![goal(plan.width, plan.duration_s)],
            plan.min_pps,
            plan.max_pps,
        ))
        .unwrap();
        let mut trace = Vec::new();
        while let Some(req) = s.next_trial() {
            let lost = if reverse_only || req.load > limit {
                1
            } else {
                0
            };
            let fwd = if reverse_only { 0 } else { lost };
            let tr = t(req.load, fwd, lost);
            s.add(tr.measurement());
            trace.push(tr);
        }
        (
            Bounds::of(&s.results()[0], plan.min_pps, plan.max_pps),
            trace,
        )
    }

    #[test]
    fn the_search_brackets_the_lossless_rate() {
        let (b, trace) = searched(20_000.0, false);
        let (lo, hi) = (b.lower_intended.unwrap(), b.upper_intended.unwrap());
        assert!(lo <= 20_000.0 && hi > 20_000.0, "{b:?}");
        assert!((hi - lo) / hi <= 0.01 + 1e-9, "{b:?}");
        assert!(b.complete && !b.hit_max && !b.generator_limited, "{b:?}");
        // The first trial is at the highest rate, and every trial is in
        // the trace.
        assert_eq!(trace[0].rate_pps, 100_000.0);
        assert!(trace.iter().any(|t| t.rate_pps == lo && t.lost() == 0));
        assert!(trace.iter().any(|t| t.rate_pps == hi && t.lost() > 0));
    }

    #[test]
    fn answers_lost_at_every_rate_leave_only_an_upper_bound() {
        let (b, trace) = searched(0.0, true);
        assert_eq!((b.lower, b.upper), (None, Some(1_000.0)), "{b:?}");
        assert!(trace
            .iter()
            .all(|t| t.forward.lost == 0 && t.reverse.lost > 0));
    }
}
