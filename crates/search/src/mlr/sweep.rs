//! A knob sweep's searches as one table (`rfc2544.json`'s `knob_sweeps`,
//! `sweep.txt`, `sweep.csv`): each goal's bounds for each value of the
//! knob, the median over the value's repeated searches
//! (`super::results` works them out).

use serde::{Deserialize, Serialize};

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
