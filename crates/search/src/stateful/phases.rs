//! One stateful trial as RFC 9693 runs it: the DUT's connection table
//! emptied, the preliminary phase (the Initiator opens N connections at
//! rate R, one frame each), then the validation (the Responder answers
//! every connection; a stateful DUT passes an answer only for a
//! connection it holds).

use std::time::Duration;

use pktlab_campaign::CampaignError;
use pktlab_lab::dut::Dut;
use pktlab_trial::target::Target;
use pktlab_trial::trial::{Shape, TrialEvent, TrialResult, TrialSettings, Trials};

use super::connections::{Connections, Endpoints};
use crate::Measurement;

/// Receiver intervals of a phase: a burst has samples even when short.
pub(super) const INTERVAL: Duration = Duration::from_millis(100);

/// What one stateful trial measured (a line of `rfc9693.json`'s trials).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatefulTrial {
    /// `capacity`, `rate` or `teardown`: the test that asked for it.
    pub test: String,
    /// Connections opened (distinct 4-tuples).
    pub connections: u64,
    /// The preliminary phase's rate asked for, and the one achieved.
    pub setup_rate_pps: f64,
    pub offered_pps: f64,
    /// Frames of the preliminary phase: sent by the Initiator, received
    /// by the Responder.
    pub preliminary_sent: u64,
    pub preliminary_received: u64,
    /// The DUT's connection count after the preliminary phase
    /// (`nf_conntrack_count` in its namespace), when it can be read.
    pub conntrack_count: Option<u64>,
    pub validation_rate_pps: f64,
    /// Frames of the validation: sent by the Responder, received by the
    /// Initiator.
    pub validation_sent: u64,
    pub validation_received: u64,
    /// The DUT's conntrack statistics (`conntrack -S`) over each phase,
    /// when they can be read: new connections refused because the table
    /// was full, and entries evicted to make room for one (Linux evicts an
    /// unanswered connection of the same hash buckets: `early_drop`). An
    /// eviction in the validation costs a held connection its answer.
    #[serde(default)]
    pub setup_refused: Option<u64>,
    #[serde(default)]
    pub setup_evicted: Option<u64>,
    #[serde(default)]
    pub validation_evicted: Option<u64>,
}

impl StatefulTrial {
    /// Connections that failed: not set up in the preliminary phase or not
    /// answered in the validation, whichever lost more.
    pub fn failed(&self) -> u64 {
        let prelim = self.connections.saturating_sub(self.preliminary_received);
        let valid = self.connections.saturating_sub(self.validation_received);
        prelim.max(valid)
    }

    /// Every connection was set up and validated.
    pub fn validated(&self) -> bool {
        self.failed() == 0
    }

    /// The trial as the search counts it: every connection a frame, the
    /// failed ones lost; `load` is what the search asked for and
    /// `duration_s` the trial's length in the search's units.
    pub fn measurement(&self, load: f64, offered: f64, duration_s: f64) -> Measurement {
        Measurement {
            intended_pps: load,
            offered_pps: offered,
            duration_s,
            tx: self.connections,
            rx: self.connections - self.failed(),
            tester_lost: 0,
            tester_limited: false,
        }
    }
}

/// The two directions of the lab and the DUT whose table they fill.
pub struct Phases<'a> {
    pub initiator: Trials<'a>,
    pub responder: Trials<'a>,
    pub dut: &'a Dut,
    pub endpoints: &'a Endpoints,
}

/// The lines run on the DUT (in its namespace, or on its host over ssh).
pub const FLUSH: &str = "conntrack -F";
pub const COUNT: &str = "cat /proc/sys/net/netfilter/nf_conntrack_count";
pub const MAX: &str = "cat /proc/sys/net/netfilter/nf_conntrack_max";
pub const UDP_TIMEOUT: &str = "cat /proc/sys/net/netfilter/nf_conntrack_udp_timeout";
pub const STATS: &str = "conntrack -S";

/// `conntrack -S` summed over the CPUs: allocations refused (`drop`) and
/// entries evicted (`early_drop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtStats {
    pub refused: u64,
    pub evicted: u64,
}

impl CtStats {
    /// Parses `conntrack -S`'s lines (`cpu=0 found=0 ... drop=3
    /// early_drop=1 ...`); None without a single `drop=` field.
    pub fn parse(text: &str) -> Option<CtStats> {
        let mut s = CtStats::default();
        let mut seen = false;
        for word in text.split_whitespace() {
            let (key, value) = match word.split_once('=') {
                Some((k, v)) => (k, v.parse::<u64>().ok()?),
                None => continue,
            };
            match key {
                "drop" => {
                    s.refused += value;
                    seen = true;
                }
                "early_drop" => s.evicted += value,
                _ => {}
            }
        }
        seen.then_some(s)
    }

    fn read(dut: &Dut) -> Option<CtStats> {
        dut.runner
            .run(STATS)
            .ok()
            .as_deref()
            .and_then(CtStats::parse)
    }

    fn since(self, before: CtStats) -> CtStats {
        CtStats {
            refused: self.refused.saturating_sub(before.refused),
            evicted: self.evicted.saturating_sub(before.evicted),
        }
    }
}

/// The change of the statistics between two readings.
fn delta(before: Option<CtStats>, after: Option<CtStats>) -> Option<CtStats> {
    Some(after?.since(before?))
}

/// A number the DUT printed.
pub fn read_number(dut: &Dut, line: &str) -> Result<u64, CampaignError> {
    let out = dut.runner.run(line).map_err(|e| fail(e.to_string()))?;
    out.trim().parse().map_err(|_| {
        fail(format!(
            "`{line}` printed '{}' {}, not a number",
            out.trim(),
            dut.runner.describe()
        ))
    })
}

pub(super) fn fail(why: String) -> CampaignError {
    CampaignError::Trial(Box::new(pktlab_trial::TrialError::Failed(why)))
}

impl Phases<'_> {
    /// Empties the DUT's connection table.
    pub fn flush(&self) -> Result<(), CampaignError> {
        self.dut
            .runner
            .run(FLUSH)
            .map(drop)
            .map_err(|e| fail(e.to_string()))
    }

    /// One trial of `n` connections set up at `setup_pps`, validated at
    /// `validation_pps`; None when Ctrl-C cut it short.
    pub fn trial(
        &self,
        test: &str,
        n: u64,
        setup_pps: f64,
        validation_pps: f64,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<StatefulTrial>, CampaignError> {
        let c = Connections::at_least(n)?;
        self.flush()?;
        let start = CtStats::read(self.dut);
        let out = burst(
            &self.initiator,
            &c.initiator(self.endpoints)?,
            c.count(),
            setup_pps,
            on_event,
        )?;
        if self.initiator.stop.is_set() {
            return Ok(None);
        }
        let conntrack_count = read_number(self.dut, COUNT).ok();
        let between = CtStats::read(self.dut);
        let back = burst(
            &self.responder,
            &c.responder(self.endpoints)?,
            c.count(),
            validation_pps,
            on_event,
        )?;
        if self.responder.stop.is_set() {
            return Ok(None);
        }
        let (setup, valid) = (
            delta(start, between),
            delta(between, CtStats::read(self.dut)),
        );
        Ok(Some(StatefulTrial {
            test: test.to_string(),
            connections: c.count(),
            setup_rate_pps: setup_pps,
            offered_pps: out.tx.pps,
            preliminary_sent: out.tx.packets,
            preliminary_received: received(&out),
            conntrack_count,
            validation_rate_pps: validation_pps,
            validation_sent: back.tx.packets,
            validation_received: received(&back),
            setup_refused: setup.map(|s| s.refused),
            setup_evicted: setup.map(|s| s.evicted),
            validation_evicted: valid.map(|s| s.evicted),
        }))
    }
}

/// Test frames the receiver counted.
pub(super) fn received(t: &TrialResult) -> u64 {
    t.rx.packets - t.rx.foreign
}

/// Exactly `count` frames of `traffic` (each flow once) at `pps`.
pub(super) fn burst(
    trials: &Trials<'_>,
    traffic: &pktlab_trial::traffic::Traffic,
    count: u64,
    pps: f64,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<TrialResult, CampaignError> {
    // Long enough for the burst, with room for a slow start.
    let settings = TrialSettings {
        duration: Duration::from_secs_f64(count as f64 / pps * 1.5 + 1.0),
        trim_head: 0,
        trim_tail: 0,
        interval: INTERVAL,
    };
    let t = Trials {
        settings: &settings,
        ..*trials
    };
    let shape = Shape {
        count: Some(count),
        ..Shape::default()
    };
    Ok(t.run_shaped(traffic, Some(pps), shape, on_event)?)
}

/// The Initiator's trials and the Responder's on `reversed`
/// ([`Target::reversed`]).
pub fn directions<'a>(initiator: Trials<'a>, reversed: &'a Target) -> (Trials<'a>, Trials<'a>) {
    let responder = Trials::for_target(
        reversed,
        // AF_PACKET (the backends' default): the XDP generator cannot
        // feed the DUT's outside port, whose GRO is off.
        Default::default(),
        initiator.settings,
        initiator.stop,
        initiator.tracer,
    );
    (initiator, responder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conntrack_statistics_summed_over_cpus() {
        let text = "cpu=0   \tfound=0 invalid=0 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 search_restart=0 clash_resolve=0 chaintoolong=0 \n\
                    cpu=1   \tfound=0 invalid=0 insert=0 insert_failed=0 drop=632 early_drop=126 error=0 search_restart=0 clash_resolve=0 chaintoolong=0 \n";
        let s = CtStats::parse(text).unwrap();
        assert_eq!(
            s,
            CtStats {
                refused: 632,
                evicted: 126
            }
        );
        let before = CtStats {
            refused: 600,
            evicted: 100,
        };
        assert_eq!(
            delta(Some(before), Some(s)),
            Some(CtStats {
                refused: 32,
                evicted: 26
            })
        );
        assert_eq!(delta(None, Some(s)), None);
        assert_eq!(CtStats::parse("conntrack: command not found"), None);
        assert_eq!(CtStats::parse("cpu=0 drop=x"), None);
    }

    #[test]
    fn failed_connections_by_phase() {
        let t = StatefulTrial {
            test: "capacity".into(),
            connections: 3750,
            setup_rate_pps: 50_000.0,
            offered_pps: 50_000.0,
            preliminary_sent: 3750,
            preliminary_received: 3125,
            conntrack_count: Some(3000),
            validation_rate_pps: 50_000.0,
            validation_sent: 3750,
            validation_received: 2999,
            setup_refused: Some(625),
            setup_evicted: Some(125),
            validation_evicted: Some(1),
        };
        assert_eq!(t.failed(), 751);
        assert!(!t.validated());
        let m = t.measurement(3750.0, 3750.0, 1.0);
        assert_eq!((m.tx, m.rx), (3750, 2999));
    }
}
