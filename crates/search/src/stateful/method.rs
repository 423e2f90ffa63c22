//! The `Stateful` method: one run of a campaign runs RFC 9693's tests on
//! one configuration and traffic profile, in order (the capacity first:
//! it bounds the connections of the others), and rewrites
//! `rfc9693.json` ([`super::results`]) when it ends.

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::method::{Method, RunContext, RunId};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::CampaignError;
use pktlab_trial::trial::TrialEvent;

use super::connections::{Connections, Endpoints, MAX_CONNECTIONS};
use super::limit::HostLimit;
use super::phases::{directions, read_number, Phases, MAX, UDP_TIMEOUT};
use super::responder::builtin_translation;
use super::results::{StatefulReport, StatefulRun};
use super::searches::{capacity, establishment_rate, Bounds};
use super::settings::{StatefulSettings, Test};
use super::teardown::teardown;
use super::throughput::{throughput, ThroughputPlan};
use crate::SearchError;

/// Seconds a trial spends besides sending: receivers up, drains, counters.
const TRIAL_OVERHEAD_S: f64 = 3.0;

/// RFC 9693's stateful tests as a campaign method.
pub struct Stateful {
    report: StatefulReport,
}

impl Stateful {
    pub fn new(settings: StatefulSettings) -> Stateful {
        Stateful {
            report: StatefulReport::new(settings),
        }
    }

    fn settings(&self) -> &StatefulSettings {
        &self.report.settings
    }
}

impl Method for Stateful {
    type Run = StatefulRun;
    type Results = StatefulReport;

    fn name(&self) -> &'static str {
        "rfc9693"
    }

    fn open(&mut self, _: &Plan, folder: &ResultsDir, created: bool) -> Result<(), CampaignError> {
        if created {
            return self.report.write(folder);
        }
        // A resumed campaign goes on with the settings it started with.
        if let Some(r) = StatefulReport::read(folder)? {
            self.report = r;
        }
        Ok(())
    }

    fn is_finished(&self, run: &RunId<'_>) -> bool {
        self.report
            .runs
            .iter()
            .any(|r| r.is(&run.config.name, &run.traffic.name, run.key.iteration))
    }

    fn run(
        &mut self,
        run: &RunId<'_>,
        cx: RunContext<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<&StatefulRun>, CampaignError> {
        let lab = cx.trials.lab;
        // The Responder sends from the receiver's port to the DUT's
        // outside port.
        let reversed = lab.reversed()?;
        let translated = self
            .settings()
            .translated
            .or_else(|| builtin_translation(lab, &run.config.name, run.config.builtin));
        let endpoints = Endpoints::of(run.traffic, translated)?;
        let (initiator, responder) = directions(cx.trials, &reversed);
        let phases = Phases {
            initiator,
            responder,
            dut: &lab.dut,
            endpoints: &endpoints,
        };
        // Set before the DUT's limit is read: the results read it.
        let limit = HostLimit::set(&lab.dut, self.settings().conntrack_max)?;
        let mut out = StatefulRun {
            config: run.config.name.clone(),
            traffic: run.traffic.name.clone(),
            iteration: run.key.iteration,
            conntrack_max: read_number(&lab.dut, MAX).ok(),
            udp_timeout_s: read_number(&lab.dut, UDP_TIMEOUT).ok(),
            translated: translated.map(|a| a.to_string()),
            ..StatefulRun::default()
        };
        if !run_tests(self.settings(), &phases, &mut out, on_event)? {
            return Ok(None);
        }
        // Leave no connection behind for the next run.
        phases.flush()?;
        limit.restore()?;
        (cx.lab_whole)()?;
        self.report.runs.push(out);
        self.report.write(cx.folder)?;
        Ok(self.report.runs.last())
    }

    fn results(&self) -> &StatefulReport {
        &self.report
    }
}

/// The tests of `s` into `out`; false when Ctrl-C cut them short.
fn run_tests(
    s: &StatefulSettings,
    phases: &Phases<'_>,
    out: &mut StatefulRun,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<bool, CampaignError> {
    let mut n = s.connections;
    let mut trace = Vec::new();
    let (setup, valid) = (s.setup_rate_pps, s.validation_rate_pps);
    if s.tests.contains(&Test::Capacity) {
        let max = capacity_max(s, out.conntrack_max)?;
        within_timeout(max, setup, valid, out.udp_timeout_s)?;
        let limit = out.conntrack_max;
        let found = capacity(
            phases, max, limit, setup, valid, s.width, &mut trace, on_event,
        )?;
        let Some(b) = found else {
            return Ok(false);
        };
        if let Some(lower) = b.lower {
            let at = Connections::at_least(lower.round() as u64)?.count();
            n = n.min(at);
            out.count_at_capacity = trace
                .iter()
                .rev()
                .find(|t| t.connections == at && t.validated())
                .and_then(|t| t.conntrack_count);
        }
        out.capacity = Some(b);
    }
    if s.tests.contains(&Test::Rate) {
        within_timeout(n, s.min_rate_pps, valid, out.udp_timeout_s)?;
        let (lo, hi) = (s.min_rate_pps, s.max_rate_pps);
        let found = establishment_rate(phases, n, lo, hi, valid, s.width, &mut trace, on_event)?;
        let Some(b) = found else { return Ok(false) };
        out.rate = Some(b);
        out.rate_connections = Some(Connections::at_least(n)?.count());
    }
    if s.tests.contains(&Test::Throughput) {
        let Some(b) = run_throughput(s, phases, n, out, on_event)? else {
            return Ok(false);
        };
        out.throughput = Some(b);
        out.throughput_connections = Some(Connections::at_least(n)?.count());
    }
    if s.tests.contains(&Test::Teardown) {
        within_timeout(n, setup, valid, out.udp_timeout_s)?;
        let Some(t) = teardown(phases, n, setup, valid, &mut trace, on_event)? else {
            return Ok(false);
        };
        out.teardown = Some(t);
    }
    out.trials = trace;
    Ok(true)
}

/// The throughput search over `n` connections (its trials into `out`);
/// None when Ctrl-C cut it short.
fn run_throughput(
    s: &StatefulSettings,
    phases: &Phases<'_>,
    n: u64,
    out: &mut StatefulRun,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Bounds>, CampaignError> {
    let plan = ThroughputPlan {
        connections: n,
        setup_pps: s.setup_rate_pps,
        min_pps: s.min_rate_pps,
        max_pps: s.max_rate_pps,
        duration_s: s.throughput_duration_s,
        width: s.width,
    };
    // Each connection must live until its first frame of the real test
    // phase (at the lowest rate the last one's), and between two of its
    // frames: the Initiator's frames keep it alive afterwards.
    let then = (plan.min_pps, "sent both ways");
    within_timeout_of(n, plan.setup_pps, then, out.udp_timeout_s)?;
    throughput(phases, &plan, &mut out.throughput_trials, on_event)
}

/// The capacity search's highest count: the settings', else a quarter
/// above the DUT's limit.
fn capacity_max(s: &StatefulSettings, conntrack_max: Option<u64>) -> Result<u64, SearchError> {
    let max = match (s.max_connections, conntrack_max) {
        (Some(m), _) => m,
        (None, Some(limit)) => limit + limit / 4,
        (None, None) => {
            return Err(SearchError(
                "the DUT's nf_conntrack_max cannot be read: give the capacity search's \
                 highest count (--max-connections)"
                    .into(),
            ))
        }
    };
    Ok(max.clamp(1, MAX_CONNECTIONS))
}

/// Refuses a trial whose first connection would expire (the DUT's UDP
/// timeout) before the Responder answers it.
fn within_timeout(n: u64, setup: f64, valid: f64, timeout: Option<u64>) -> Result<(), SearchError> {
    within_timeout_of(n, setup, (valid, "validated"), timeout)
}

/// [`within_timeout`] for a second phase that sends each connection one
/// frame at `then.0` pps, `then.1` saying how.
fn within_timeout_of(
    n: u64,
    setup: f64,
    then: (f64, &str),
    timeout: Option<u64>,
) -> Result<(), SearchError> {
    let (valid, how) = then;
    let Some(timeout) = timeout else {
        return Ok(());
    };
    let n = Connections::at_least(n)?.count() as f64;
    let takes = n / setup + n / valid + TRIAL_OVERHEAD_S;
    if takes < timeout as f64 {
        return Ok(());
    }
    Err(SearchError(format!(
        "{n} connections set up at {setup} pps and {how} at {valid} pps take about \
         {takes:.0} s, longer than the DUT's UDP timeout ({timeout} s, \
         nf_conntrack_udp_timeout): the first connections would expire before their \
         next frame; use higher rates or fewer connections"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capacity_search_goes_a_quarter_above_the_limit() {
        let s = StatefulSettings::default();
        assert_eq!(capacity_max(&s, Some(3000)).unwrap(), 3750);
        assert!(capacity_max(&s, None)
            .unwrap_err()
            .0
            .contains("--max-connections"));
        let s = StatefulSettings {
            max_connections: Some(5000),
            ..s
        };
        assert_eq!(capacity_max(&s, Some(3000)).unwrap(), 5000);
    }

    #[test]
    fn connections_must_outlive_their_validation() {
        // 10,000 at 1,000 pps and 50,000 pps: 10 + 0.2 + 3 s, within 30 s.
        assert!(within_timeout(10_000, 1_000.0, 50_000.0, Some(30)).is_ok());
        // 30,000 at 1,000 pps: 30 s alone.
        let e = within_timeout(30_000, 1_000.0, 50_000.0, Some(30)).unwrap_err();
        assert!(
            e.0.contains("take about 34 s, longer than the DUT's UDP timeout (30 s"),
            "{e}"
        );
        assert!(within_timeout(30_000, 1_000.0, 50_000.0, None).is_ok());
        // The throughput test at 1,000 pps each way: every connection's
        // next frame comes 10 s after the last; 20,000 of them at 50,000
        // pps, then 20 s: 0.4 + 20 + 3 s, within 30 s.
        let both = (1_000.0, "sent both ways");
        assert!(within_timeout_of(20_000, 50_000.0, both, Some(30)).is_ok());
        let e = within_timeout_of(27_000, 50_000.0, both, Some(30)).unwrap_err();
        assert!(
            e.0.contains(
                "27000 connections set up at 50000 pps and sent both ways at 1000 pps \
                 take about 31 s, longer than the DUT's UDP timeout (30 s"
            ),
            "{e}"
        );
    }
}
