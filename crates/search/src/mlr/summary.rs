//! `rfc2544.json`: every search's result, worked out from `trials.jsonl`
//! and `latency-histograms.jsonl` (so an interrupted and resumed search
//! reads the same).

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;
use pktlab_stats::{ministat, Confidence};

use super::back_to_back::{self, BackToBack};
use super::latency::{self, HistogramLine, LatencyResult};
use super::record::{TrialLine, FRAME_LOSS, THROUGHPUT};
use super::settings::MlrSettings;
use crate::{GoalResult, Search, SearchError};

/// The results file.
pub const REPORT_FILE: &str = "rfc2544.json";

/// One goal's bounds in `rfc2544.json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoalBounds {
    pub loss_ratio: f64,
    pub exceed_ratio: f64,
    pub lower_pps: Option<f64>,
    pub upper_pps: Option<f64>,
    pub conditional_throughput_pps: Option<f64>,
    /// The loads the search asked for at the bounds: the width is theirs;
    /// the reported rates above are lower where the generator fell short.
    pub lower_intended_pps: Option<f64>,
    pub upper_intended_pps: Option<f64>,
    /// The lower bound is the maximum load: "at least".
    pub hit_max: bool,
    pub generator_limited: bool,
    /// Trials at the lower bound lost frames mostly on the tester's side.
    #[serde(default)]
    pub tester_limited: bool,
    pub loss_inversion: bool,
    pub complete: bool,
    /// Traffic both ways: each direction's loss over the trials at each
    /// bound's load, which tells the direction that failed first (empty
    /// one way).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<DirectionLoss>,
}

/// One direction's loss at a goal's bounds, over every trial at each
/// bound's load (frames lost over frames sent).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DirectionLoss {
    /// `forward` or `reverse`.
    pub name: String,
    pub lower_loss_ratio: Option<f64>,
    pub upper_loss_ratio: Option<f64>,
}

/// One search in `rfc2544.json`'s `throughput` list.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Throughput {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub iteration: usize,
    pub max_pps: f64,
    pub goals: Vec<GoalBounds>,
    /// Some goal's result is what the generator could offer, not the DUT's limit.
    pub generator_limited: bool,
    /// Some goal's result is what the tester could take, not the DUT's limit.
    #[serde(default)]
    pub tester_limited: bool,
    /// Search trials run.
    pub trials: usize,
    /// Seconds of search trials.
    pub trial_seconds: f64,
}

/// A goal compared between configurations over the repeated searches.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    pub traffic: String,
    pub loss_ratio: f64,
    pub baseline: String,
    pub config: String,
    /// Lower bounds of each search, baseline and other.
    pub baseline_pps: Vec<f64>,
    pub config_pps: Vec<f64>,
    /// Difference of the means as a percentage of the baseline's, and its
    /// half-width at `confidence`; None when a side has fewer than 2 values.
    pub difference_percent: Option<f64>,
    pub plus_minus_percent: Option<f64>,
    /// Student's t says the difference is real at this confidence.
    pub significant: Option<bool>,
    pub confidence: String,
}

/// One step of the frame loss rate test.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LossPoint {
    pub intended_pps: f64,
    pub offered_pps: f64,
    pub loss_ratio: f64,
}

/// One frame loss rate test in `rfc2544.json`'s `frame_loss` list.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrameLoss {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub iteration: usize,
    pub points: Vec<LossPoint>,
}

/// Every frame loss rate test's steps, in the order the tests started.
pub fn frame_loss(lines: &[TrialLine]) -> Vec<FrameLoss> {
    let mut out: Vec<FrameLoss> = Vec::new();
    for l in lines.iter().filter(|l| l.test == FRAME_LOSS) {
        let point = LossPoint {
            intended_pps: l.intended_pps.unwrap_or(l.offered_pps),
            offered_pps: l.offered_pps,
            loss_ratio: l.loss_ratio,
        };
        match out
            .iter_mut()
            .find(|f| f.config == l.config && f.traffic == l.traffic && f.iteration == l.iteration)
        {
            Some(f) => f.points.push(point),
            None => out.push(FrameLoss {
                config: l.config.clone(),
                traffic: l.traffic.clone(),
                size: l.size.clone(),
                iteration: l.iteration,
                points: vec![point],
            }),
        }
    }
    out
}

/// The whole `rfc2544.json`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Report {
    pub throughput: Vec<Throughput>,
    pub comparisons: Vec<Comparison>,
    pub frame_loss: Vec<FrameLoss>,
    pub latency: Vec<LatencyResult>,
    pub back_to_back: Vec<BackToBack>,
    /// Each knob sweep's bounds per value (`super::sweep`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub knob_sweeps: Vec<super::sweep::SearchSweepTable>,
}

impl Report {
    /// Every search's results from the trials and histograms recorded.
    pub fn of(
        settings: &MlrSettings,
        lines: &[TrialLine],
        histograms: &[HistogramLine],
    ) -> Result<Report, SearchError> {
        let throughput = throughput(settings, lines)?;
        let back_to_back = back_to_back::summarize(
            lines,
            settings.b2b_trial_s,
            settings.goals[0].width,
            &|c, t, i| ndr_of(&throughput, c, t, i),
        );
        Ok(Report {
            comparisons: compare(&throughput, Confidence::P95),
            frame_loss: frame_loss(lines),
            latency: latency::summarize(lines, histograms),
            back_to_back,
            throughput,
            knob_sweeps: Vec::new(),
        })
    }

    /// The results of one search (comparisons are between searches).
    pub fn of_search(&self, config: &str, traffic: &str, iteration: usize) -> Report {
        let is = |c: &str, t: &str, i: usize| c == config && t == traffic && i == iteration;
        Report {
            throughput: self
                .throughput
                .iter()
                .filter(|x| is(&x.config, &x.traffic, x.iteration))
                .cloned()
                .collect(),
            comparisons: Vec::new(),
            knob_sweeps: Vec::new(),
            frame_loss: self
                .frame_loss
                .iter()
                .filter(|x| is(&x.config, &x.traffic, x.iteration))
                .cloned()
                .collect(),
            latency: self
                .latency
                .iter()
                .filter(|x| is(&x.config, &x.traffic, x.iteration))
                .cloned()
                .collect(),
            back_to_back: self
                .back_to_back
                .iter()
                .filter(|x| is(&x.config, &x.traffic, x.iteration))
                .cloned()
                .collect(),
        }
    }

    /// The `rfc2544.json` of `dir`, or None when it has none.
    pub fn read(dir: &ResultsDir) -> Result<Option<Report>, CampaignError> {
        dir.read_json(REPORT_FILE)
    }

    /// Writes it as `dir`'s `rfc2544.json`.
    pub fn write(&self, dir: &ResultsDir) -> Result<(), CampaignError> {
        dir.write_json(REPORT_FILE, self)
    }
}

fn bounds(r: &GoalResult) -> GoalBounds {
    GoalBounds {
        loss_ratio: r.goal.loss_ratio,
        exceed_ratio: r.goal.exceed_ratio,
        lower_pps: r.lower.map(|b| b.pps),
        upper_pps: r.upper.map(|b| b.pps),
        conditional_throughput_pps: r.conditional_throughput_pps,
        lower_intended_pps: r.lower.map(|b| b.intended_pps),
        upper_intended_pps: r.upper.map(|b| b.intended_pps),
        hit_max: r.hit_max,
        generator_limited: r.generator_limited,
        tester_limited: r.tester_limited,
        loss_inversion: r.loss_inversion,
        complete: r.complete,
        directions: Vec::new(),
    }
}

/// Each direction's loss at a goal's bounds, from the trials at the loads
/// the search asked for there (empty when the trials went one way).
fn direction_losses(g: &GoalBounds, trials: &[&TrialLine]) -> Vec<DirectionLoss> {
    let mut names: Vec<&str> = Vec::new();
    for d in trials.iter().flat_map(|t| &t.directions) {
        if !names.contains(&d.name.as_str()) {
            names.push(&d.name);
        }
    }
    // Frames lost over frames sent, in direction `name`, over the trials
    // at `load`.
    let loss_at = |name: &str, load: Option<f64>| -> Option<f64> {
        let load = load?;
        let (mut sent, mut lost) = (0u64, 0u64);
        for t in trials.iter().filter(|t| t.intended_pps == Some(load)) {
            for d in t.directions.iter().filter(|d| d.name == name) {
                sent += d.tx;
                lost += d.lost;
            }
        }
        (sent > 0).then(|| lost as f64 / sent as f64)
    };
    names
        .into_iter()
        .map(|name| DirectionLoss {
            name: name.into(),
            lower_loss_ratio: loss_at(name, g.lower_intended_pps),
            upper_loss_ratio: loss_at(name, g.upper_intended_pps),
        })
        .collect()
}

/// The zero-loss goal's lower bound of a search: RFC 2544's throughput.
pub fn ndr_of(
    results: &[Throughput],
    config: &str,
    traffic: &str,
    iteration: usize,
) -> Option<f64> {
    results
        .iter()
        .find(|t| t.config == config && t.traffic == traffic && t.iteration == iteration)?
        .goals
        .iter()
        .find(|g| g.loss_ratio == 0.0)?
        .lower_pps
}

/// Every search's result from the trial lines, in the order the searches
/// started.
pub fn throughput(
    settings: &MlrSettings,
    lines: &[TrialLine],
) -> Result<Vec<Throughput>, SearchError> {
    let mut keys: Vec<(&str, &str, usize)> = Vec::new();
    for l in lines.iter().filter(|l| l.test == THROUGHPUT) {
        let k = (l.config.as_str(), l.traffic.as_str(), l.iteration);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (config, traffic, iteration) in keys {
        let mine: Vec<&TrialLine> = lines
            .iter()
            .filter(|l| l.test == THROUGHPUT && l.of_run(config, traffic, iteration))
            .collect();
        let max_pps = mine[0].max_pps;
        let mut search = Search::new(settings.config(max_pps))?;
        for m in mine.iter().filter_map(|l| l.measurement()) {
            search.add(m);
        }
        let goals: Vec<GoalBounds> = search
            .results()
            .iter()
            .map(|r| {
                let mut g = bounds(r);
                g.directions = direction_losses(&g, &mine);
                g
            })
            .collect();
        out.push(Throughput {
            config: config.into(),
            traffic: traffic.into(),
            size: mine[0].size.clone(),
            iteration,
            max_pps,
            generator_limited: goals.iter().any(|g| g.generator_limited),
            tester_limited: goals.iter().any(|g| g.tester_limited),
            goals,
            trials: mine.len(),
            trial_seconds: mine.iter().map(|l| l.duration_s).sum(),
        });
    }
    Ok(out)
}

/// Each configuration against the first, per traffic and goal, over the
/// repeated searches' lower bounds (ministat's Student's t).
pub fn compare(results: &[Throughput], confidence: Confidence) -> Vec<Comparison> {
    let mut configs: Vec<&str> = Vec::new();
    let mut traffics: Vec<&str> = Vec::new();
    for r in results {
        if !configs.contains(&r.config.as_str()) {
            configs.push(&r.config);
        }
        if !traffics.contains(&r.traffic.as_str()) {
            traffics.push(&r.traffic);
        }
    }
    let Some((&baseline, others)) = configs.split_first() else {
        return Vec::new();
    };
    let goals = results.first().map_or(0, |r| r.goals.len());
    let mut out = Vec::new();
    for traffic in &traffics {
        for g in 0..goals {
            let values = |config: &str| -> Vec<f64> {
                results
                    .iter()
                    .filter(|r| r.config == config && r.traffic == *traffic)
                    .filter_map(|r| r.goals.get(g).and_then(|x| x.lower_pps))
                    .collect()
            };
            let base = values(baseline);
            for &config in others {
                let other = values(config);
                let (mut diff, mut pm, mut sig) = (None, None, None);
                if base.len() >= 2 && other.len() >= 2 {
                    let a = ministat::analyze(
                        &[
                            ministat::Dataset {
                                name: baseline.into(),
                                values: base.clone(),
                            },
                            ministat::Dataset {
                                name: config.into(),
                                values: other.clone(),
                            },
                        ],
                        confidence,
                    );
                    if let Some(c) = a.comparisons.first() {
                        let finite = |v: f64| v.is_finite().then_some(v);
                        diff = finite(c.comparison.percent);
                        pm = finite(c.comparison.percent_error);
                        sig = Some(c.comparison.significant);
                    }
                }
                out.push(Comparison {
                    traffic: traffic.to_string(),
                    loss_ratio: results[0].goals[g].loss_ratio,
                    baseline: baseline.into(),
                    config: config.into(),
                    baseline_pps: base.clone(),
                    config_pps: other,
                    difference_percent: diff,
                    plus_minus_percent: pm,
                    significant: sig,
                    confidence: confidence.to_string(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(config: &str, iteration: usize, ndr: f64) -> Throughput {
        Throughput {
            config: config.into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration,
            max_pps: 1e6,
            goals: vec![GoalBounds {
                loss_ratio: 0.0,
                exceed_ratio: 0.5,
                lower_pps: Some(ndr),
                upper_pps: Some(ndr * 1.005),
                conditional_throughput_pps: Some(ndr),
                lower_intended_pps: Some(ndr),
                upper_intended_pps: Some(ndr * 1.005),
                hit_max: false,
                generator_limited: false,
                tester_limited: false,
                loss_inversion: false,
                complete: true,
                directions: Vec::new(),
            }],
            generator_limited: false,
            tester_limited: false,
            trials: 20,
            trial_seconds: 20.0,
        }
    }

    /// A throughput trial both ways at `load`: (sent, lost) forward and
    /// reverse.
    fn both_ways(load: f64, fwd: (u64, u64), rev: (u64, u64)) -> TrialLine {
        let dir = |name: &str, (tx, lost): (u64, u64)| super::super::record::DirectionLine {
            name: name.into(),
            tx,
            rx: tx - lost,
            lost,
            late: None,
            loss_ratio: lost as f64 / tx as f64,
            drops: pktlab_loss::drops::Drops {
                lost,
                dut: lost,
                tester: 0,
                unexplained: 0,
                places: Vec::new(),
                traced: false,
                tracer_missed: 0,
                tester_limited: false,
            },
        };
        TrialLine {
            config: "nft".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            test: THROUGHPUT.into(),
            iteration: 1,
            intended_pps: Some(load),
            offered_pps: load,
            duration_s: 1.0,
            tx: fwd.0 + rev.0,
            rx: fwd.0 + rev.0 - fwd.1 - rev.1,
            lost: fwd.1 + rev.1,
            late: None,
            loss_ratio: (fwd.1 + rev.1) as f64 / (fwd.0 + rev.0) as f64,
            generator_limited: false,
            max_pps: 1e5,
            classes: vec![],
            started_at: 0,
            burst: None,
            repetition: None,
            load_fraction: None,
            latency_ns: None,
            drops: None,
            latency_note: None,
            directions: vec![dir("forward", fwd), dir("reverse", rev)],
        }
    }

    #[test]
    fn each_direction_s_loss_at_the_bounds() {
        let mut g = search("nft", 1, 1000.0).goals.remove(0);
        g.lower_intended_pps = Some(1000.0);
        g.upper_intended_pps = Some(1100.0);
        let trials = [
            both_ways(1000.0, (1000, 0), (1000, 0)),
            // Two trials at the upper bound's load: 30 of 2200 lost
            // forward, none reverse.
            both_ways(1100.0, (1100, 10), (1100, 0)),
            both_ways(1100.0, (1100, 20), (1100, 0)),
            // Another load counts at neither bound.
            both_ways(5000.0, (5000, 4000), (5000, 4000)),
        ];
        let refs: Vec<&TrialLine> = trials.iter().collect();
        let d = direction_losses(&g, &refs);
        assert_eq!(
            d,
            [
                DirectionLoss {
                    name: "forward".into(),
                    lower_loss_ratio: Some(0.0),
                    upper_loss_ratio: Some(30.0 / 2200.0),
                },
                DirectionLoss {
                    name: "reverse".into(),
                    lower_loss_ratio: Some(0.0),
                    upper_loss_ratio: Some(0.0),
                },
            ]
        );
        // No upper bound: no loss there.
        g.upper_intended_pps = None;
        assert_eq!(direction_losses(&g, &refs)[0].upper_loss_ratio, None);
        // One way: no directions.
        let one_way = TrialLine {
            directions: Vec::new(),
            ..trials[0].clone()
        };
        assert!(direction_losses(&g, &[&one_way]).is_empty());
    }

    #[test]
    fn repeated_searches_compared_with_ministat() {
        let results = [
            search("forwarding", 1, 100.0),
            search("nft", 1, 90.0),
            search("forwarding", 2, 102.0),
            search("nft", 2, 92.0),
        ];
        let c = compare(&results, Confidence::P95);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!(
            (c.baseline.as_str(), c.config.as_str()),
            ("forwarding", "nft")
        );
        assert_eq!(c.baseline_pps, [100.0, 102.0]);
        assert_eq!(c.config_pps, [90.0, 92.0]);
        // Means 101 and 91: (91 − 101) / 101 = −9.901 %. Each sample's
        // variance is 2, pooled s = √2, t(2 df, 95 %) = 4.303: the error
        // 4.303 × √2 × √(1/2 + 1/2) = 6.085 is below the difference of 10.
        let d = c.difference_percent.unwrap();
        assert!((d + 9.90099).abs() < 1e-4, "{d}");
        assert_eq!(c.significant, Some(true));
        // One search each: no comparison to make.
        let c = compare(&results[..2], Confidence::P95);
        assert_eq!((c[0].difference_percent, c[0].significant), (None, None));
    }
}
