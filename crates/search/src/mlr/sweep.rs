//! A knob sweep's searches as one table (`rfc2544.json`'s `knob_sweeps`,
//! `sweep.txt`, `sweep.csv`): each goal's bounds for each value of the
//! knob, the median over the value's repeated searches.

use pktlab_campaign::plan::KnobSweep;
use serde::{Deserialize, Serialize};

use super::summary::Throughput;

/// One goal at one value: the medians of its searches' bounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepGoal {
    pub loss_ratio: f64,
    pub lower_pps: Option<f64>,
    pub conditional_throughput_pps: Option<f64>,
    pub upper_pps: Option<f64>,
}

/// One value of the knob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchSweepRow {
    pub value: String,
    pub config: String,
    /// Searches finished for it.
    pub searches: usize,
    pub goals: Vec<SweepGoal>,
}

/// A knob sweep on one traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchSweepTable {
    pub knob: String,
    pub label: String,
    pub traffic: String,
    pub numeric: bool,
    pub rows: Vec<SearchSweepRow>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    pktlab_stats::median(&v)
}

/// The tables of `sweeps` from the searches of `throughput` (values
/// without a finished search are left out).
pub fn tables(sweeps: &[KnobSweep], throughput: &[Throughput]) -> Vec<SearchSweepTable> {
    let mut out = Vec::new();
    for sweep in sweeps {
        let mut traffics: Vec<&str> = Vec::new();
        for t in throughput {
            if sweep.configs.contains(&t.config) && !traffics.contains(&t.traffic.as_str()) {
                traffics.push(&t.traffic);
            }
        }
        for traffic in traffics {
            let rows = sweep
                .values
                .iter()
                .zip(&sweep.configs)
                .filter_map(|(value, config)| row(value, config, traffic, throughput))
                .collect();
            out.push(SearchSweepTable {
                knob: sweep.knob.clone(),
                label: sweep.label.clone(),
                traffic: traffic.to_string(),
                numeric: sweep.numeric,
                rows,
            });
        }
    }
    out
}

fn row(
    value: &str,
    config: &str,
    traffic: &str,
    throughput: &[Throughput],
) -> Option<SearchSweepRow> {
    let mine: Vec<&Throughput> = throughput
        .iter()
        .filter(|t| t.config == config && t.traffic == traffic)
        .collect();
    let first = mine.first()?;
    let goals = first
        .goals
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let of = |f: &dyn Fn(&super::summary::GoalBounds) -> Option<f64>| {
                median(
                    mine.iter()
                        .filter_map(|t| t.goals.get(i).and_then(f))
                        .collect(),
                )
            };
            SweepGoal {
                loss_ratio: g.loss_ratio,
                lower_pps: of(&|g| g.lower_pps),
                conditional_throughput_pps: of(&|g| g.conditional_throughput_pps),
                upper_pps: of(&|g| g.upper_pps),
            }
        })
        .collect();
    Some(SearchSweepRow {
        value: value.to_string(),
        config: config.to_string(),
        searches: mine.len(),
        goals,
    })
}
