//! An `rfc9693` campaign's runs as history records: each finished run's
//! results (`rfc9693.json`, `pktlab_search::stateful::results`), one
//! [`StatefulRecord`] per test. A test RFC 9693's tests gain later becomes
//! one more row here, with no change to the database.

use pktlab_campaign::plan::Plan;
use pktlab_search::stateful::searches::Bounds;
use pktlab_search::stateful::teardown::Teardown;
use pktlab_search::stateful::{StatefulReport, StatefulRun};

use crate::record::{unit_of, RunRecord, StatefulRecord};

/// Every finished run of `report`; `plan` (when known) gives each
/// traffic's frame sizes.
pub fn stateful_runs(report: &StatefulReport, plan: Option<&Plan>) -> Vec<RunRecord> {
    report
        .runs
        .iter()
        .map(|r| RunRecord {
            config: r.config.clone(),
            traffic: r.traffic.clone(),
            size: sizes_of(plan, &r.traffic),
            iteration: r.iteration as i64,
            started_at: None,
            forwarded_pps: None,
            offered_pps: None,
            loss_ratio: None,
            goals: Vec::new(),
            latencies: Vec::new(),
            stateful: results(r),
        })
        .filter(|r| !r.stateful.is_empty())
        .collect()
}

fn sizes_of(plan: Option<&Plan>, traffic: &str) -> String {
    plan.and_then(|p| p.traffics.iter().find(|t| t.name == traffic))
        .map(|t| t.sizes.clone())
        .unwrap_or_default()
}

/// The run's results, in the order of their tests' names (the order the
/// database gives them back in).
pub fn results(r: &StatefulRun) -> Vec<StatefulRecord> {
    let limit = r.conntrack_max.map(|m| m as i64);
    let mut out = Vec::new();
    if let Some(b) = &r.capacity {
        out.push(search("capacity", b, None, limit));
    }
    if let Some(b) = &r.rate {
        let n = r.rate_connections.map(|n| n as i64);
        out.push(search("rate", b, n, limit));
    }
    // A tear-down rate that could not be measured has no value to trend.
    if let Some(Teardown::Measured {
        connections,
        rate_per_s,
        ..
    }) = &r.teardown
    {
        out.push(StatefulRecord {
            test: "teardown".into(),
            unit: unit_of("teardown").into(),
            value: Some(*rate_per_s),
            upper: None,
            connections: Some(*connections as i64),
            dut_limit: limit,
            hit_max: false,
            generator_limited: false,
            complete: true,
        });
    }
    if let Some(b) = &r.throughput {
        let n = r.throughput_connections.map(|n| n as i64);
        out.push(search("throughput", b, n, limit));
    }
    out
}

fn search(test: &str, b: &Bounds, connections: Option<i64>, limit: Option<i64>) -> StatefulRecord {
    StatefulRecord {
        test: test.into(),
        unit: unit_of(test).into(),
        value: b.lower,
        upper: b.upper,
        connections,
        dut_limit: limit,
        hit_max: b.hit_max,
        generator_limited: b.generator_limited,
        complete: b.complete,
    }
}
