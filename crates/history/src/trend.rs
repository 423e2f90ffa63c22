//! A series split into groups by FD.io CSIT's `jumpavg`, and the changes
//! between them: where each starts, the averages before and after, and
//! the relative change.
//!
//! The settings are CSIT's for its trending pages: `classify` with no
//! `unit` and no `sbps`, so `sbps` 12 and `unit = max / 8191` (the
//! largest sample of the series is 2^13 − 1 units); each label's runs (or
//! each campaign's, in time order) are one indivisible run, as CSIT
//! passes a build's samples.

use serde::Serialize;

use crate::jumpavg::{self, AvgStdev, ClassifyError, Kind};
use crate::series::{Point, Series, SeriesKey};

/// One group of the series: points `first..=last`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrendGroup {
    pub first: usize,
    pub last: usize,
    pub first_label: String,
    pub last_label: String,
    /// Samples in the group (runs of all its labels).
    pub runs: u64,
    pub average: f64,
    pub stdev: f64,
    pub bits: f64,
    /// Against the group before, by what is better for the metric.
    pub kind: Kind,
}

/// Where the series changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub kind: Kind,
    /// The label where the new group starts, and its point's index.
    pub label: String,
    pub index: usize,
    pub before: f64,
    pub after: f64,
    /// `(after − before) / before`.
    pub relative: f64,
}

/// A series with its groups.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trend {
    #[serde(flatten)]
    pub key: SeriesKey,
    pub unit: &'static str,
    pub points: Vec<Point>,
    pub groups: Vec<TrendGroup>,
    pub changes: Vec<Change>,
    /// The bits of the whole split, jumpavg's unit and the series' maximum.
    pub bits: f64,
    pub jumpavg_unit: f64,
    pub max_value: f64,
}

/// Splits `series` with CSIT's settings. A series with no value above 0
/// cannot be coded and is refused.
pub fn trend(series: &Series) -> Result<Trend, ClassifyError> {
    let runs: Vec<AvgStdev> = series
        .points
        .iter()
        .map(|p| AvgStdev::of_values(&p.values))
        .collect();
    let max = series
        .points
        .iter()
        .flat_map(|p| p.values.iter().copied())
        .fold(0.0, f64::max);
    let c = jumpavg::classify(&runs, max, None, None)?;
    let flip = !series.metric.higher_is_better();
    let label = |i: usize| series.points[i].label.clone();
    let groups: Vec<TrendGroup> = c
        .groups
        .iter()
        .map(|g| TrendGroup {
            first: g.first,
            last: g.first + g.len - 1,
            first_label: label(g.first),
            last_label: label(g.first + g.len - 1),
            runs: g.stats.size,
            average: g.stats.avg,
            stdev: g.stats.stdev,
            bits: g.bits,
            kind: match (g.kind, flip) {
                (Kind::Regression, true) => Kind::Progression,
                (Kind::Progression, true) => Kind::Regression,
                (k, _) => k,
            },
        })
        .collect();
    let changes = groups
        .windows(2)
        .filter(|w| w[1].kind != Kind::Normal)
        .map(|w| Change {
            kind: w[1].kind,
            label: w[1].first_label.clone(),
            index: w[1].first,
            before: w[0].average,
            after: w[1].average,
            relative: (w[1].average - w[0].average) / w[0].average,
        })
        .collect();
    Ok(Trend {
        key: series.key.clone(),
        unit: series.metric.unit(),
        points: series.points.clone(),
        groups,
        changes,
        bits: c.bits,
        jumpavg_unit: c.unit,
        max_value: c.max_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Metric;

    fn series(metric: Metric, values: &[&[f64]]) -> Series {
        Series {
            key: SeriesKey {
                config: "fw".into(),
                traffic: String::new(),
                size: String::new(),
                metric: metric.name(),
            },
            metric,
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| Point {
                    label: format!("r{}", i + 1),
                    values: v.to_vec(),
                    campaigns: vec![i as i64],
                    started_at: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_drop_is_a_regression_of_throughput_and_a_progression_of_latency() {
        // The "labels" series of jumpavg's tests: groups r1-r2, r3-r4, r5-r6.
        let v: [&[f64]; 6] = [
            &[788e3, 790e3, 785e3],
            &[791e3, 786e3, 789e3],
            &[820e3, 824e3, 819e3, 822e3],
            &[818e3, 823e3],
            &[720e3, 716e3, 722e3],
            &[719e3, 721e3, 717e3],
        ];
        let t = trend(&series(Metric::Forwarded, &v)).unwrap();
        let spans: Vec<(&str, &str, u64, Kind)> = t
            .groups
            .iter()
            .map(|g| {
                (
                    g.first_label.as_str(),
                    g.last_label.as_str(),
                    g.runs,
                    g.kind,
                )
            })
            .collect();
        assert_eq!(
            spans,
            [
                ("r1", "r2", 6, Kind::Normal),
                ("r3", "r4", 6, Kind::Progression),
                ("r5", "r6", 6, Kind::Regression)
            ]
        );
        assert_eq!(t.changes.len(), 2);
        let c = &t.changes[1];
        assert_eq!(
            (c.label.as_str(), c.index, c.kind),
            ("r5", 4, Kind::Regression)
        );
        // (719166.67 − 821000) / 821000 = −12.4035 %.
        assert_eq!((c.before, c.after), (821000.0, 719166.6666666667));
        assert!((c.relative - (-0.124035)).abs() < 1e-6, "{}", c.relative);
        assert_eq!(t.bits, 171.02730835887456);
        let lat = trend(&series(
            Metric::Latency(crate::series::Percentile::P99, 0.9),
            &v,
        ))
        .unwrap();
        let kinds: Vec<Kind> = lat.changes.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Kind::Regression, Kind::Progression]);
    }

    #[test]
    fn zeros_cannot_be_coded() {
        assert_eq!(
            trend(&series(Metric::Forwarded, &[&[0.0], &[0.0]])),
            Err(ClassifyError::NoPositiveValue)
        );
    }
}
