//! The connection tear-down rate, as RFC 9693 measures it on a DUT that
//! can delete its connections on command: the time to delete N
//! connections less the time the same command takes on an empty table,
//! N over the difference. On Linux the command is `conntrack -F` in the
//! DUT's namespace (or on its host); each deletion follows a fresh
//! preliminary phase that validated every connection.

use std::time::Instant;

use pktlab_campaign::CampaignError;
use pktlab_trial::trial::TrialEvent;

use super::phases::{Phases, StatefulTrial, FLUSH};

/// How many times each deletion is timed (the median counts).
pub const REPEAT: usize = 3;

/// What the tear-down test found.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Teardown {
    Measured {
        connections: u64,
        /// Median seconds to delete the table holding the connections.
        full_s: f64,
        /// Median seconds of the same command on an empty table.
        empty_s: f64,
        /// Connections deleted per second: connections / (full − empty).
        rate_per_s: f64,
    },
    /// Why the rate was not measured.
    NotMeasured { why: String },
}

/// Fills the table with `n` validated connections and times its
/// deletion, [`REPEAT`] times, then the empty table's; None after Ctrl-C.
pub fn teardown(
    phases: &Phases<'_>,
    n: u64,
    setup_pps: f64,
    validation_pps: f64,
    trace: &mut Vec<StatefulTrial>,
    on_event: &mut dyn FnMut(TrialEvent),
) -> Result<Option<Teardown>, CampaignError> {
    let mut full = Vec::new();
    for _ in 0..REPEAT {
        let Some(t) = phases.trial("teardown", n, setup_pps, validation_pps, on_event)? else {
            return Ok(None);
        };
        let (validated, failed, connections) = (t.validated(), t.failed(), t.connections);
        trace.push(t);
        if !validated {
            return Ok(Some(Teardown::NotMeasured {
                why: format!(
                    "{failed} of {connections} connections did not validate at {setup_pps} pps: \
                     the table to delete was not full"
                ),
            }));
        }
        full.push(timed(phases)?);
    }
    let mut empty = Vec::new();
    for _ in 0..REPEAT {
        empty.push(timed(phases)?);
    }
    let connections = trace.last().map_or(n, |t| t.connections);
    Ok(Some(rate(connections, &full, &empty)))
}

/// Seconds `conntrack -F` took.
fn timed(phases: &Phases<'_>) -> Result<f64, CampaignError> {
    let start = Instant::now();
    phases.flush()?;
    Ok(start.elapsed().as_secs_f64())
}

/// The rate from the timings, when deleting took measurably longer than
/// running the command on an empty table.
pub fn rate(connections: u64, full: &[f64], empty: &[f64]) -> Teardown {
    let median = |v: &[f64]| pktlab_stats::median(v).unwrap_or(f64::NAN);
    let (full_s, empty_s) = (median(full), median(empty));
    let spread = empty.iter().copied().fold(0.0, f64::max)
        - empty.iter().copied().fold(f64::INFINITY, f64::min);
    let took = full_s - empty_s;
    // NaN (no timing) is not measurable either.
    let measurable = took.partial_cmp(&spread.max(0.0)) == Some(std::cmp::Ordering::Greater);
    if !measurable {
        return Teardown::NotMeasured {
            why: format!(
                "deleting {connections} connections took {:.1} ms, no more than `{FLUSH}` on an \
                 empty table ({:.1} ms, spread {:.1} ms): use more connections",
                full_s * 1e3,
                empty_s * 1e3,
                spread * 1e3
            ),
        };
    }
    Teardown::Measured {
        connections,
        full_s,
        empty_s,
        rate_per_s: connections as f64 / took,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_by_hand() {
        // Medians 0.030 and 0.010: 10,000 connections in 20 ms.
        let t = rate(10_000, &[0.031, 0.030, 0.029], &[0.010, 0.011, 0.009]);
        let Teardown::Measured {
            rate_per_s,
            full_s,
            empty_s,
            ..
        } = t
        else {
            panic!("{t:?}")
        };
        assert!((full_s - 0.030).abs() < 1e-12 && (empty_s - 0.010).abs() < 1e-12);
        assert!((rate_per_s - 500_000.0).abs() < 1e-3, "{rate_per_s}");
        // 0.5 ms more than an empty flush whose runs spread over 2 ms.
        let t = rate(100, &[0.0105], &[0.009, 0.010, 0.011]);
        assert_eq!(
            t,
            Teardown::NotMeasured {
                why: "deleting 100 connections took 10.5 ms, no more than `conntrack -F` on an \
                      empty table (10.0 ms, spread 2.0 ms): use more connections"
                    .into()
            }
        );
    }
}
