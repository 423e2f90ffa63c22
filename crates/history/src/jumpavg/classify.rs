//! Splitting a series into groups by minimum description length, as FD.io
//! CSIT's `jumpavg` `classify` does: every way of cutting the series is
//! weighed by the bits its groups need ([`super::bits`]), by dynamic
//! programming over "the best split up to here, then one open last group",
//! and the cheapest wins. A group whose average is below the previous
//! group's is a regression, above it a progression.
//!
//! The search keeps `jumpavg`'s own bookkeeping (figures merged again when
//! a group is copied, bits cached when first asked for, the first of equal
//! candidates kept) because each of those moves a figure by a rounding
//! step, and a tie or a near-tie must go the same way as in `jumpavg`.

use std::cell::Cell;
use std::rc::Rc;

use super::bits::group_bits;
use super::stats::AvgStdev;

/// What a group is, against the group before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Normal,
    Regression,
    Progression,
}

/// One group of the result: runs `first..first + len` of the input.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Group {
    pub first: usize,
    pub len: usize,
    pub stats: AvgStdev,
    pub bits: f64,
    pub kind: Kind,
}

/// The groups of a series and the bits they need in all.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Classified {
    pub max_value: f64,
    pub unit: f64,
    pub groups: Vec<Group>,
    pub bits: f64,
}

/// A group while the search runs.
#[derive(Clone, Debug)]
struct Open {
    first: usize,
    len: usize,
    stats: AvgStdev,
    prev_avg: Option<f64>,
    cached_bits: Cell<Option<f64>>,
}

impl Open {
    fn new(first: usize, run: AvgStdev, prev_avg: Option<f64>) -> Open {
        Open {
            first,
            len: 1,
            stats: AvgStdev::merge([run]),
            prev_avg,
            cached_bits: Cell::new(None),
        }
    }

    fn bits(&self, max_value: f64, unit: f64) -> f64 {
        if let Some(b) = self.cached_bits.get() {
            return b;
        }
        let b = group_bits(&self.stats, max_value, unit, self.prev_avg);
        self.cached_bits.set(Some(b));
        b
    }

    /// A copy as `jumpavg` copies a group: its figures merged again, its
    /// cached bits kept as they are.
    fn copy(&self) -> Open {
        Open {
            stats: AvgStdev::merge([self.stats]),
            ..self.clone()
        }
    }

    fn append(&mut self, run: AvgStdev) {
        self.stats = AvgStdev::merge([self.stats, run]);
        self.len += 1;
        self.cached_bits.set(None);
    }
}

/// A way of splitting the runs so far: closed groups, then the last one.
#[derive(Clone, Debug, Default)]
struct Split {
    closed: Vec<Rc<Open>>,
    last: Option<Open>,
    bits_except_last: f64,
}

impl Split {
    fn bits(&self, max_value: f64, unit: f64) -> f64 {
        match &self.last {
            None => 0.0,
            Some(g) => self.bits_except_last + g.bits(max_value, unit),
        }
    }

    /// The closed groups shared, the last one copied.
    fn copy_fast(&self) -> Split {
        Split {
            closed: self.closed.clone(),
            last: self.last.as_ref().map(Open::copy),
            bits_except_last: self.bits_except_last,
        }
    }

    /// Closes the last group and opens one with `run`.
    fn open_group(&mut self, first: usize, run: AvgStdev, max_value: f64, unit: f64) {
        let prev_avg = self.last.as_ref().map(|g| g.stats.avg);
        let group = Open::new(first, run, prev_avg);
        self.bits_except_last = self.bits(max_value, unit);
        if let Some(g) = self.last.replace(group) {
            self.closed.push(Rc::new(g));
        }
    }

    fn append(&mut self, run: AvgStdev) {
        if let Some(g) = self.last.as_mut() {
            g.append(run);
        }
    }
}

/// Why a series cannot be classified.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClassifyError {
    #[error("no value above zero: the bit counts need a positive maximum")]
    NoPositiveValue,
    #[error("a value is not a finite number")]
    NotFinite,
}

/// `jumpavg`'s `sbps` default: the largest sample is 2^13 − 1 units, so
/// `unit = max / 8191` (FD.io CSIT's trending calls `classify` with no
/// `unit` and no `sbps`, and so gets this).
pub const DEFAULT_SBPS: f64 = 12.0;

/// The unit `jumpavg` derives from the largest sample and `sbps`
/// significant bits per sample.
pub fn unit_for(max_value: f64, sbps: f64) -> f64 {
    max_value / ((2.0_f64).powf(sbps + 1.0) - 1.0)
}

/// Splits `runs` (each one indivisible: one sample, or the samples of one
/// build or label, as [`AvgStdev::of_values`] makes them) into groups.
/// `max_value` is the largest single sample. `unit` None: from `sbps`
/// (None: [`DEFAULT_SBPS`]).
pub fn classify(
    runs: &[AvgStdev],
    max_value: f64,
    unit: Option<f64>,
    sbps: Option<f64>,
) -> Result<Classified, ClassifyError> {
    if runs
        .iter()
        .any(|r| !r.avg.is_finite() || !r.stdev.is_finite())
        || !max_value.is_finite()
    {
        return Err(ClassifyError::NotFinite);
    }
    if max_value <= 0.0 {
        return Err(ClassifyError::NoPositiveValue);
    }
    let unit = match unit.filter(|u| *u != 0.0) {
        Some(u) => u,
        None => unit_for(
            max_value,
            sbps.filter(|s| *s != 0.0).unwrap_or(DEFAULT_SBPS),
        ),
    };
    let empty = Split::default();
    // Every split tried so far, each with an open last group; `record_at`
    // is the cheapest for the runs so far.
    let mut open: Vec<Split> = Vec::with_capacity(runs.len());
    let mut record_at: Option<usize> = None;
    for (i, &run) in runs.iter().enumerate() {
        let mut fresh = match record_at {
            Some(k) => open[k].copy_fast(),
            None => empty.copy_fast(),
        };
        fresh.open_group(i, run, max_value, unit);
        // The fresh split is the one to beat; older ones win only when
        // strictly cheaper, the oldest first.
        let mut best: Option<usize> = None;
        for k in 0..open.len() {
            open[k].append(run);
            let best_bits = match best {
                Some(b) => open[b].bits(max_value, unit),
                None => fresh.bits(max_value, unit),
            };
            if open[k].bits(max_value, unit) < best_bits {
                best = Some(k);
            }
        }
        open.push(fresh);
        record_at = Some(best.unwrap_or(open.len() - 1));
    }
    let chosen = record_at.map_or(&empty, |k| &open[k]);
    Ok(finish(chosen, max_value, unit))
}

/// The chosen split as groups, each marked against the one before.
fn finish(split: &Split, max_value: f64, unit: f64) -> Classified {
    let all: Vec<&Open> = split
        .closed
        .iter()
        .map(|g| g.as_ref())
        .chain(split.last.as_ref())
        .collect();
    let mut previous = all.first().map_or(0.0, |g| g.stats.avg);
    let groups = all
        .iter()
        .map(|g| {
            let avg = g.stats.avg;
            let kind = if avg < previous {
                Kind::Regression
            } else if avg > previous {
                Kind::Progression
            } else {
                Kind::Normal
            };
            previous = avg;
            Group {
                first: g.first,
                len: g.len,
                stats: g.stats,
                bits: g.bits(max_value, unit),
                kind,
            }
        })
        .collect();
    Classified {
        max_value,
        unit,
        groups,
        bits: split.bits(max_value, unit),
    }
}
