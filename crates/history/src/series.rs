//! Series: the values of one metric for one configuration, traffic and
//! frame size, as points in label (or time) order. A point is every run
//! of one label (or of one campaign): one indivisible run for the trend.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::order;
use crate::record::{RunRecord, StoredRun};
use crate::HistoryError;

/// A latency percentile of `rfc2544.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Percentile {
    Min,
    P50,
    P90,
    P99,
    P999,
    Max,
}

const PERCENTILES: [(Percentile, &str); 6] = [
    (Percentile::Min, "min"),
    (Percentile::P50, "p50"),
    (Percentile::P90, "p90"),
    (Percentile::P99, "p99"),
    (Percentile::P999, "p999"),
    (Percentile::Max, "max"),
];

/// What a series measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// A run's value: the median of its per-second forwarded counts.
    Forwarded,
    /// What a run's generator offered.
    Offered,
    /// A search goal's lower bound (throughput), by the goal's loss ratio.
    Lower(f64),
    /// A search goal's upper bound.
    Upper(f64),
    /// A latency percentile at a load (a fraction of the PDR), in ns.
    Latency(Percentile, f64),
    /// An rfc9693 test's result (a search's lower bound, a measured rate)
    /// or, with `upper`, a search's upper bound.
    Stateful { test: String, upper: bool },
}

/// An rfc9693 test's metric by its name: `capacity`, `rate_upper`.
fn stateful_metric(name: &str) -> Option<Metric> {
    let (test, upper) = match name.strip_suffix("_upper") {
        Some(t) => (t, true),
        None => (name, false),
    };
    let known = pktlab_search::stateful::Test::ALL
        .iter()
        .any(|t| t.name() == test);
    known.then(|| Metric::Stateful {
        test: test.to_string(),
        upper,
    })
}

/// `0.005` as `0.5`: a ratio in percent, without trailing zeros.
pub fn percent(ratio: f64) -> String {
    let t = format!("{:.6}", ratio * 100.0);
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_string()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

impl Metric {
    /// `forwarded_pps`, `offered_pps`, `lower_pps@0.5%`, `p99_ns@90%`.
    pub fn name(&self) -> String {
        match self {
            Metric::Forwarded => "forwarded_pps".into(),
            Metric::Offered => "offered_pps".into(),
            Metric::Lower(l) => format!("lower_pps@{}%", percent(*l)),
            Metric::Upper(l) => format!("upper_pps@{}%", percent(*l)),
            Metric::Latency(p, f) => {
                let n = PERCENTILES.iter().find(|x| x.0 == *p).map_or("", |x| x.1);
                format!("{n}_ns@{}%", percent(*f))
            }
            Metric::Stateful { test, upper: false } => test.clone(),
            Metric::Stateful { test, upper: true } => format!("{test}_upper"),
        }
    }

    /// Parses a name as [`Metric::name`] writes it, or `forwarded`,
    /// `offered`, `ndr` (the 0 % goal's lower bound) and `pdr` (the 0.5 %
    /// goal's).
    pub fn parse(text: &str) -> Result<Metric, HistoryError> {
        let bad = || {
            HistoryError::Usage(format!(
                "unknown metric '{text}': use forwarded_pps, offered_pps, ndr, pdr, lower_pps@LOSS%, upper_pps@LOSS%, p50_ns@LOAD% (min, p50, p90, p99, p999, max; LOAD in % of the PDR), or rfc9693's capacity, rate, throughput, teardown (capacity_upper, rate_upper, throughput_upper: a search's upper bound)"
            ))
        };
        let t = text.trim();
        if let Some(m) = stateful_metric(t) {
            return Ok(m);
        }
        match t {
            "forwarded_pps" | "forwarded" => return Ok(Metric::Forwarded),
            "offered_pps" | "offered" => return Ok(Metric::Offered),
            "ndr" => return Ok(Metric::Lower(0.0)),
            "pdr" => return Ok(Metric::Lower(0.005)),
            _ => {}
        }
        let (what, at) = t.split_once('@').ok_or_else(bad)?;
        let at: f64 = at
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && (0.0..=100.0).contains(v))
            .ok_or_else(bad)?;
        let ratio = at / 100.0;
        match what {
            "lower_pps" => Ok(Metric::Lower(ratio)),
            "upper_pps" => Ok(Metric::Upper(ratio)),
            _ => {
                let p = what.strip_suffix("_ns").ok_or_else(bad)?;
                let p = PERCENTILES.iter().find(|x| x.1 == p).ok_or_else(bad)?.0;
                Ok(Metric::Latency(p, ratio))
            }
        }
    }

    /// Whether a higher value is better (throughput), or a lower one
    /// (latency): a drop of the former is a regression, of the latter a
    /// progression.
    pub fn higher_is_better(&self) -> bool {
        !matches!(self, Metric::Latency(..))
    }

    /// The unit of the values.
    pub fn unit(&self) -> &'static str {
        match self {
            Metric::Latency(..) => "ns",
            Metric::Stateful { test, .. } => crate::record::unit_of(test),
            _ => "pps",
        }
    }

    /// The run's value of this metric, if it has one.
    pub fn value(&self, run: &RunRecord) -> Option<f64> {
        match self {
            Metric::Forwarded => run.forwarded_pps,
            Metric::Offered => run.offered_pps,
            Metric::Lower(l) => {
                run.goals
                    .iter()
                    .find(|g| close(g.loss_ratio, *l))?
                    .lower_pps
            }
            Metric::Upper(l) => {
                run.goals
                    .iter()
                    .find(|g| close(g.loss_ratio, *l))?
                    .upper_pps
            }
            Metric::Latency(p, f) => {
                let lat = run.latencies.iter().find(|x| close(x.load_fraction, *f))?;
                Some(match p {
                    Percentile::Min => lat.min_ns,
                    Percentile::P50 => lat.p50_ns,
                    Percentile::P90 => lat.p90_ns,
                    Percentile::P99 => lat.p99_ns,
                    Percentile::P999 => lat.p999_ns,
                    Percentile::Max => lat.max_ns,
                } as f64)
            }
            Metric::Stateful { test, upper } => {
                let r = run.stateful.iter().find(|r| r.test == *test)?;
                if *upper {
                    r.upper
                } else {
                    r.value
                }
            }
        }
    }

    /// The metrics a run has by default: its forwarded pps, each of its
    /// goals' lower bounds, or each of its stateful results.
    pub fn headline(run: &RunRecord) -> Vec<Metric> {
        let mut out = Vec::new();
        if run.forwarded_pps.is_some() {
            out.push(Metric::Forwarded);
        }
        out.extend(run.goals.iter().map(|g| Metric::Lower(g.loss_ratio)));
        out.extend(run.stateful.iter().map(|r| Metric::Stateful {
            test: r.test.clone(),
            upper: false,
        }));
        out
    }
}

/// Which runs: every filter that is set must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub config: Option<String>,
    pub traffic: Option<String>,
    pub size: Option<String>,
    /// None: each run's [`Metric::headline`] metrics.
    pub metric: Option<Metric>,
}

impl Filter {
    fn keeps(&self, run: &RunRecord) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        is(&self.config, &run.config)
            && is(&self.traffic, &run.traffic)
            && is(&self.size, &run.size)
    }

    fn metrics(&self, run: &RunRecord) -> Vec<Metric> {
        match &self.metric {
            Some(m) => vec![m.clone()],
            None => Metric::headline(run),
        }
    }
}

/// How points follow each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderBy {
    /// One point per label, labels in order (natural, or as an order file
    /// gave them).
    Label,
    /// One point per campaign, by the time it started.
    Time,
}

/// Which series: configuration, traffic, frame size, metric.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SeriesKey {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub metric: String,
}

impl SeriesKey {
    /// `fastforwarding`, `forwarding inet4 64`: the parts that are known.
    pub fn title(&self) -> String {
        [&self.config, &self.traffic, &self.size]
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The runs of one label (or one campaign).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub label: String,
    pub values: Vec<f64>,
    /// The campaigns the values come from.
    pub campaigns: Vec<i64>,
    /// When the first of them started (Unix seconds), if known.
    pub started_at: Option<i64>,
}

/// One series, its points in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub key: SeriesKey,
    pub metric: Metric,
    pub points: Vec<Point>,
}

/// The series of `runs` that `filter` keeps, each in `by` order; labels
/// with a position in `positions` come first, in its order.
pub fn build(
    runs: &[StoredRun],
    filter: &Filter,
    by: OrderBy,
    positions: &HashMap<String, i64>,
) -> Vec<Series> {
    // Per series: point key → point, and the metric.
    let mut all: BTreeMap<SeriesKey, (Metric, Vec<Point>)> = BTreeMap::new();
    for r in runs.iter().filter(|r| filter.keeps(&r.run)) {
        for metric in filter.metrics(&r.run) {
            let Some(v) = metric.value(&r.run) else {
                continue;
            };
            let key = SeriesKey {
                config: r.run.config.clone(),
                traffic: r.run.traffic.clone(),
                size: r.run.size.clone(),
                metric: metric.name(),
            };
            let (_, points) = all.entry(key).or_insert_with(|| (metric, Vec::new()));
            let same = |p: &&mut Point| match by {
                OrderBy::Label => p.label == r.label,
                OrderBy::Time => p.campaigns[0] == r.campaign_id,
            };
            match points.iter_mut().find(|p| same(p)) {
                Some(p) => {
                    p.values.push(v);
                    if !p.campaigns.contains(&r.campaign_id) {
                        p.campaigns.push(r.campaign_id);
                    }
                    p.started_at = match (p.started_at, r.campaign_started_at) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                None => points.push(Point {
                    label: r.label.clone(),
                    values: vec![v],
                    campaigns: vec![r.campaign_id],
                    started_at: r.campaign_started_at,
                }),
            }
        }
    }
    all.into_iter()
        .map(|(key, (metric, mut points))| {
            sort_points(&mut points, by, positions);
            Series {
                key,
                metric,
                points,
            }
        })
        .collect()
}

fn sort_points(points: &mut [Point], by: OrderBy, positions: &HashMap<String, i64>) {
    match by {
        OrderBy::Label => {
            let mut labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
            order::sort_labels(&mut labels, positions);
            points.sort_by_key(|p| labels.iter().position(|l| *l == p.label));
        }
        OrderBy::Time => points.sort_by(|a, b| {
            (a.started_at.is_none(), a.started_at, a.campaigns[0]).cmp(&(
                b.started_at.is_none(),
                b.started_at,
                b.campaigns[0],
            ))
        }),
    }
}

/// The labels the history holds, in order.
pub fn labels(runs: &[StoredRun], positions: &HashMap<String, i64>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.label) {
            out.push(r.label.clone());
        }
    }
    order::sort_labels(&mut out, positions);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GoalRecord, LatencyRecord, Source};

    fn run(campaign: i64, label: &str, config: &str, v: Option<f64>) -> StoredRun {
        StoredRun {
            campaign_id: campaign,
            label: label.into(),
            source: Source::Bench,
            campaign_started_at: Some(1000 - campaign),
            run: RunRecord {
                config: config.into(),
                traffic: "inet4".into(),
                size: "64".into(),
                iteration: 1,
                started_at: None,
                forwarded_pps: v,
                offered_pps: v.map(|x| x + 1.0),
                loss_ratio: None,
                goals: Vec::new(),
                latencies: Vec::new(),
                stateful: Vec::new(),
            },
        }
    }

    #[test]
    fn metric_names_round_trip() {
        for text in [
            "forwarded_pps",
            "offered_pps",
            "lower_pps@0%",
            "upper_pps@0.5%",
            "p99_ns@90%",
            "min_ns@0%",
        ] {
            assert_eq!(Metric::parse(text).unwrap().name(), text);
        }
        assert_eq!(Metric::parse("ndr").unwrap(), Metric::Lower(0.0));
        assert_eq!(Metric::parse("pdr").unwrap().name(), "lower_pps@0.5%");
        assert_eq!(
            Metric::parse("lower_pps@0.1").unwrap().name(),
            "lower_pps@0.1%"
        );
        for bad in [
            "",
            "speed",
            "lower_pps@",
            "lower_pps@200%",
            "p42_ns@10%",
            "p50@10%",
        ] {
            assert!(Metric::parse(bad).unwrap_err().is_usage(), "{bad}");
        }
    }

    #[test]
    fn values_of_searches() {
        let mut r = run(1, "a", "fw", None).run;
        r.goals = vec![GoalRecord {
            loss_ratio: 0.005,
            exceed_ratio: 0.5,
            lower_pps: Some(900.0),
            upper_pps: Some(905.0),
            conditional_pps: None,
            hit_max: false,
            generator_limited: false,
            complete: true,
        }];
        r.latencies = vec![LatencyRecord {
            load_fraction: 0.9,
            load_pps: 810.0,
            offered_pps: 810.0,
            frames: 100,
            lost: 0,
            min_ns: 1,
            p50_ns: 2,
            p90_ns: 3,
            p99_ns: 4,
            p999_ns: 5,
            max_ns: 6,
        }];
        assert_eq!(Metric::parse("pdr").unwrap().value(&r), Some(900.0));
        assert_eq!(
            Metric::parse("upper_pps@0.5%").unwrap().value(&r),
            Some(905.0)
        );
        assert_eq!(Metric::parse("ndr").unwrap().value(&r), None);
        assert_eq!(Metric::parse("p99_ns@90%").unwrap().value(&r), Some(4.0));
        assert_eq!(Metric::parse("p99_ns@50%").unwrap().value(&r), None);
        assert_eq!(Metric::headline(&r), [Metric::Lower(0.005)]);
        assert!(!Metric::parse("p99_ns@90%").unwrap().higher_is_better());
    }

    #[test]
    fn points_by_label_and_by_time() {
        let runs = vec![
            run(1, "r10", "fw", Some(10.0)),
            run(1, "r10", "fw", Some(11.0)),
            run(2, "r9", "fw", Some(9.0)),
            run(3, "r10", "fw", Some(12.0)),
            run(3, "r10", "nft", Some(5.0)),
            run(4, "r11", "fw", None),
        ];
        let s = build(&runs, &Filter::default(), OrderBy::Label, &HashMap::new());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].key.title(), "fw inet4 64");
        let pts: Vec<(&str, &[f64], &[i64])> = s[0]
            .points
            .iter()
            .map(|p| {
                (
                    p.label.as_str(),
                    p.values.as_slice(),
                    p.campaigns.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            pts,
            [
                ("r9", &[9.0][..], &[2][..]),
                ("r10", &[10.0, 11.0, 12.0][..], &[1, 3][..])
            ]
        );
        // Campaign 1 started last (started_at = 1000 − id).
        let s = build(&runs, &Filter::default(), OrderBy::Time, &HashMap::new());
        let order: Vec<i64> = s[0].points.iter().map(|p| p.campaigns[0]).collect();
        assert_eq!(order, [3, 2, 1]);
        let only = Filter {
            config: Some("nft".into()),
            metric: Some(Metric::Offered),
            ..Filter::default()
        };
        let s = build(&runs, &only, OrderBy::Label, &HashMap::new());
        assert_eq!(
            (s.len(), s[0].key.metric.as_str(), s[0].points[0].values[0]),
            (1, "offered_pps", 6.0)
        );
        let positions = HashMap::from([("r10".to_string(), 0), ("r9".to_string(), 1)]);
        assert_eq!(labels(&runs, &positions), ["r10", "r9", "r11"]);
    }
}
