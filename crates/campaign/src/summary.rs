//! What a campaign's finished runs add up to, as data: the cells, the
//! comparisons, the size sweep tables, the `.pps` files' text and
//! `summary.json`'s contents, computed; and the names and reading of the
//! files holding them. The fixed-rate method ([`crate::runs`]) writes the
//! `.pps` files and `summary.json`; the report layer's exporters turn the
//! rest into text.

use pktlab_stats::{Comparison, Confidence, Summary};
use serde::{Deserialize, Serialize};

use crate::folder::ResultsDir;
use crate::plan::{LabChoice, Plan};
use crate::records::RunRecord;
use crate::CampaignError;

/// The campaign's summary in its results folder.
pub const SUMMARY_FILE: &str = "summary.json";

/// `<config>.<traffic>.pps`: the name of a cell's values file, which is
/// also its ministat data set name (BSDRP's bench-lab names them so).
pub fn pps_name(config: &str, traffic: &str) -> String {
    format!("{config}.{traffic}.pps")
}

/// The configuration and traffic a `.pps` file name stands for.
pub fn parse_pps_name(name: &str) -> Option<(&str, &str)> {
    name.strip_suffix(".pps")?.split_once('.')
}

/// Every finished run of one configuration with one traffic profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub config: String,
    pub traffic: String,
    /// Finished iterations, ascending; the vectors below follow them.
    pub iterations: Vec<usize>,
    /// Forwarded pps of each run (the run values).
    pub values: Vec<f64>,
    /// Offered pps actually achieved by each run.
    pub offered_values: Vec<f64>,
    pub forwarded: Option<Summary>,
    pub offered: Option<Summary>,
    /// The worst loss ratio of the runs.
    pub max_loss_ratio: f64,
    /// Traffic both ways: each direction's forwarded pps per run (the
    /// values above are their total).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<CellDirection>,
}

/// One direction of a cell's runs both ways.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellDirection {
    /// `forward` or `reverse`.
    pub name: String,
    /// Forwarded pps of each run in this direction.
    pub values: Vec<f64>,
    pub forwarded: Option<Summary>,
    /// The worst loss ratio of the runs in this direction.
    pub max_loss_ratio: f64,
}

/// Each direction's values of runs both ways (none when a run went one
/// way).
fn cell_directions(runs: &[&RunRecord]) -> Vec<CellDirection> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .result
        .directions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let of = |r: &&RunRecord| r.result.directions.get(i).cloned();
            let values: Vec<f64> = runs
                .iter()
                .filter_map(of)
                .map(|d| d.forwarded_pps)
                .collect();
            CellDirection {
                name: d.name.clone(),
                forwarded: pktlab_stats::summarize(&values),
                max_loss_ratio: runs
                    .iter()
                    .filter_map(of)
                    .map(|d| d.loss_ratio)
                    .fold(0.0, f64::max),
                values,
            }
        })
        .collect()
}

/// The cells of `campaign` (configuration by configuration, traffic under
/// each) filled from `runs`.
pub fn cells(campaign: &Plan, runs: &[RunRecord]) -> Vec<Cell> {
    let mut out = Vec::new();
    for c in &campaign.configs {
        for t in &campaign.traffics {
            let mut mine: Vec<&RunRecord> = runs
                .iter()
                .filter(|r| r.header.config == c.name && r.header.traffic == t.name)
                .collect();
            mine.sort_by_key(|r| r.header.iteration);
            let values: Vec<f64> = mine.iter().map(|r| r.result.forwarded_pps).collect();
            let offered_values: Vec<f64> = mine.iter().map(|r| r.result.offered_pps).collect();
            out.push(Cell {
                config: c.name.clone(),
                traffic: t.name.clone(),
                iterations: mine.iter().map(|r| r.header.iteration).collect(),
                forwarded: pktlab_stats::summarize(&values),
                offered: pktlab_stats::summarize(&offered_values),
                max_loss_ratio: mine.iter().map(|r| r.result.loss_ratio).fold(0.0, f64::max),
                directions: cell_directions(&mine),
                values,
                offered_values,
            });
        }
    }
    out
}

/// A `.pps` file as BSDRP's bench-lab-ministat writes it: one value per
/// line, ministat's `%.8g`.
pub fn pps_text(values: &[f64]) -> String {
    values
        .iter()
        .map(|&v| pktlab_stats::pktgen::format_run_value(v) + "\n")
        .collect()
}

/// The ministat data set name of a cell: its `.pps` file name.
pub fn dataset_name(config: &str, traffic: &str) -> String {
    pps_name(config, traffic)
}

/// One configuration compared with the first on one traffic profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigComparison {
    pub traffic: String,
    pub baseline: String,
    pub config: String,
    /// `None` until both have at least two runs.
    pub comparison: Option<Comparison>,
}

pub fn comparisons(campaign: &Plan, cells: &[Cell]) -> Vec<ConfigComparison> {
    let mut out = Vec::new();
    for t in &campaign.traffics {
        let of = |config: &str| {
            cells
                .iter()
                .find(|c| c.config == config && c.traffic == t.name)
        };
        let Some(base) = campaign.configs.first() else {
            continue;
        };
        for c in campaign.configs.iter().skip(1) {
            let comparison = match (of(&base.name), of(&c.name)) {
                (Some(b), Some(o)) => match (&b.forwarded, &o.forwarded) {
                    (Some(bs), Some(os)) if bs.n >= 2 && os.n >= 2 => {
                        Some(pktlab_stats::compare(bs, os, Confidence::P95))
                    }
                    _ => None,
                },
                _ => None,
            };
            out.push(ConfigComparison {
                traffic: t.name.clone(),
                baseline: base.name.clone(),
                config: c.name.clone(),
                comparison,
            });
        }
    }
    out
}

/// One row of a size sweep (the table of Ostinato's "throughput on a 40G NIC").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub size: u16,
    pub runs: usize,
    pub offered_kpps: f64,
    pub forwarded_kpps: f64,
    /// `pps × (size + 20) × 8`: the bits a link carries, preamble and gap
    /// included.
    pub offered_l1_mbps: f64,
    pub forwarded_l1_mbps: f64,
    /// `link / ((size + 20) × 8)`, when the link speed is known.
    pub line_rate_kpps: Option<f64>,
}

/// A size sweep of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepTable {
    pub config: String,
    pub traffic: String,
    pub link_bps: Option<f64>,
    pub rows: Vec<SweepRow>,
}

/// `pps` of `size`-byte frames in L1 Mbit/s.
pub fn l1_mbps(pps: f64, size: u16) -> f64 {
    pktlab_wire::rate::l1_bps(pps, size) / 1e6
}

/// The sweep tables: every sweep under every configuration, from the
/// medians of the finished runs (sizes without a finished run are left out).
pub fn sweep_tables(campaign: &Plan, cells: &[Cell]) -> Vec<SweepTable> {
    let mut out = Vec::new();
    for c in &campaign.configs {
        for sweep in &campaign.sweeps {
            let mut rows = Vec::new();
            for (size, traffic) in &sweep.members {
                let Some(cell) = cells
                    .iter()
                    .find(|x| x.config == c.name && &x.traffic == traffic)
                else {
                    continue;
                };
                let (Some(fwd), Some(off)) = (
                    pktlab_stats::median(&cell.values),
                    pktlab_stats::median(&cell.offered_values),
                ) else {
                    continue;
                };
                rows.push(SweepRow {
                    size: *size,
                    runs: cell.values.len(),
                    offered_kpps: off / 1e3,
                    forwarded_kpps: fwd / 1e3,
                    offered_l1_mbps: l1_mbps(off, *size),
                    forwarded_l1_mbps: l1_mbps(fwd, *size),
                    line_rate_kpps: campaign
                        .link_bps
                        .map(|l| pktlab_wire::rate::line_rate_pps(l, *size) / 1e3),
                });
            }
            if !rows.is_empty() {
                out.push(SweepTable {
                    config: c.name.clone(),
                    traffic: sweep.name.clone(),
                    link_bps: campaign.link_bps,
                    rows,
                });
            }
        }
    }
    out
}

/// One value of a knob sweep: its configuration's runs on one traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobSweepRow {
    pub value: String,
    pub config: String,
    pub runs: usize,
    pub forwarded_median_pps: f64,
    pub forwarded_mean_pps: f64,
    /// The mean's 95 % confidence interval (Student's t, ministat's
    /// table); none for fewer than two runs.
    pub ci95_low_pps: Option<f64>,
    pub ci95_high_pps: Option<f64>,
    pub offered_median_pps: f64,
    /// The worst loss ratio of the runs.
    pub max_loss_ratio: f64,
}

/// A knob sweep on one traffic: forwarded pps against the knob's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobSweepTable {
    /// The knob as written (`netdev_max_backlog`, `ethtool-K:gro`).
    pub knob: String,
    pub label: String,
    pub traffic: String,
    /// Every value a number.
    pub numeric: bool,
    pub rows: Vec<KnobSweepRow>,
}

/// The 95 % confidence interval of the mean of `s` (none below two runs).
pub fn mean_ci95(s: &Summary) -> Option<(f64, f64)> {
    if s.n < 2 {
        return None;
    }
    let t = Confidence::P95.critical_t(s.n - 1);
    let half = t * s.stddev / (s.n as f64).sqrt();
    Some((s.avg - half, s.avg + half))
}

/// The knob sweep tables: every knob sweep on every traffic, values in
/// the order given (values without a finished run are left out).
pub fn knob_sweep_tables(campaign: &Plan, cells: &[Cell]) -> Vec<KnobSweepTable> {
    let mut out = Vec::new();
    for sweep in &campaign.knob_sweeps {
        for t in &campaign.traffics {
            let rows: Vec<KnobSweepRow> = sweep
                .values
                .iter()
                .zip(&sweep.configs)
                .filter_map(|(value, config)| {
                    let cell = cells
                        .iter()
                        .find(|c| &c.config == config && c.traffic == t.name)?;
                    let (fwd, off) = (cell.forwarded.as_ref()?, cell.offered.as_ref()?);
                    let ci = mean_ci95(fwd);
                    Some(KnobSweepRow {
                        value: value.clone(),
                        config: config.clone(),
                        runs: fwd.n,
                        forwarded_median_pps: fwd.median,
                        forwarded_mean_pps: fwd.avg,
                        ci95_low_pps: ci.map(|c| c.0),
                        ci95_high_pps: ci.map(|c| c.1),
                        offered_median_pps: off.median,
                        max_loss_ratio: cell.max_loss_ratio,
                    })
                })
                .collect();
            if !rows.is_empty() {
                out.push(KnobSweepTable {
                    knob: sweep.knob.clone(),
                    label: sweep.label.clone(),
                    traffic: t.name.clone(),
                    numeric: sweep.numeric,
                    rows,
                });
            }
        }
    }
    out
}

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignSummary {
    /// Always `summary`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub lab: LabChoice,
    /// Generator, DUT and receiver share this host's CPUs.
    pub virtual_lab: bool,
    pub order: crate::order::Order,
    pub iterations: usize,
    pub duration_s: f64,
    pub warmup_samples: usize,
    pub tail_samples: usize,
    pub configs: Vec<String>,
    pub traffics: Vec<String>,
    pub runs_planned: usize,
    pub runs_finished: usize,
    pub complete: bool,
    pub cells: Vec<Cell>,
    pub comparisons: Vec<ConfigComparison>,
    pub sweeps: Vec<SweepTable>,
    /// Absent from folders written before knob sweeps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub knob_sweeps: Vec<KnobSweepTable>,
}

impl CampaignSummary {
    pub fn new(campaign: &Plan, runs: &[RunRecord]) -> CampaignSummary {
        let cells = cells(campaign, runs);
        let planned = campaign.plan().len();
        CampaignSummary {
            kind: "summary".into(),
            name: campaign.name.clone(),
            lab: campaign.lab.without_cpu_plan(),
            virtual_lab: campaign.is_builtin(),
            order: campaign.run.order.clone(),
            iterations: campaign.run.iterations,
            duration_s: campaign.run.trial.duration.as_secs_f64(),
            warmup_samples: campaign.run.trial.trim_head,
            tail_samples: campaign.run.trial.trim_tail,
            configs: campaign.configs.iter().map(|c| c.name.clone()).collect(),
            traffics: campaign.traffics.iter().map(|t| t.name.clone()).collect(),
            runs_planned: planned,
            runs_finished: runs.len(),
            complete: runs.len() >= planned,
            comparisons: comparisons(campaign, &cells),
            sweeps: sweep_tables(campaign, &cells),
            knob_sweeps: knob_sweep_tables(campaign, &cells),
            cells,
        }
    }
}

impl CampaignSummary {
    /// The `summary.json` of `dir`, or None when it has none.
    pub fn read(dir: &ResultsDir) -> Result<Option<CampaignSummary>, CampaignError> {
        dir.read_json(SUMMARY_FILE)
    }

    /// Writes it as `dir`'s `summary.json`.
    pub fn write(&self, dir: &ResultsDir) -> Result<(), CampaignError> {
        dir.write_json(SUMMARY_FILE, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::CampaignFile;

    fn campaign(text: &str) -> Plan {
        Plan::from_file(&CampaignFile::parse(text).unwrap(), 2).unwrap()
    }

    fn run(config: &str, traffic: &str, iteration: usize, fwd: f64, off: f64) -> RunRecord {
        crate::records::tests::record(config, traffic, iteration, fwd, off)
    }

    #[test]
    fn knob_sweep_table_with_confidence_intervals() {
        let c = campaign(
            "[run]\niterations = 3\n[[sweep]]\nknob = \"dev_weight\"\nvalues = [64, 256, 1024]\n",
        );
        let runs = vec![
            run("dev_weight-64", "inet4", 0, 100.0, 200.0),
            run("dev_weight-64", "inet4", 1, 110.0, 200.0),
            run("dev_weight-64", "inet4", 2, 120.0, 210.0),
            run("dev_weight-256", "inet4", 0, 150.0, 200.0),
        ];
        let t = knob_sweep_tables(&c, &cells(&c, &runs));
        assert_eq!(t.len(), 1);
        assert_eq!(
            (t[0].knob.as_str(), t[0].traffic.as_str()),
            ("dev_weight", "inet4")
        );
        // 1024 has no finished run: left out.
        let values: Vec<&str> = t[0].rows.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(values, ["64", "256"]);
        let r = &t[0].rows[0];
        assert_eq!((r.config.as_str(), r.runs), ("dev_weight-64", 3));
        assert_eq!(
            (r.forwarded_median_pps, r.forwarded_mean_pps),
            (110.0, 110.0)
        );
        assert_eq!(r.offered_median_pps, 200.0);
        // Mean 110, standard deviation 10, n 3: t(2 df, 95 %) = 4.303, the
        // half width 4.303 × 10 / √3 = 24.8434.
        let (lo, hi) = (r.ci95_low_pps.unwrap(), r.ci95_high_pps.unwrap());
        assert!((lo - 85.1566).abs() < 1e-3, "{lo}");
        assert!((hi - 134.8434).abs() < 1e-3, "{hi}");
        // One run: no interval.
        assert_eq!(t[0].rows[1].ci95_low_pps, None);
        assert_eq!(t[0].rows[1].forwarded_median_pps, 150.0);
        // Into summary.json and back.
        let s = CampaignSummary::new(&c, &runs);
        assert_eq!(s.knob_sweeps, t);
        let back: CampaignSummary =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.knob_sweeps, t);
    }

    #[test]
    fn cells_both_ways_keep_each_direction() {
        let c = campaign("[[traffic]]\nname = \"inet4\"\ndirection = \"both\"\n");
        let both = |iteration, fwd: f64, rev: f64| {
            let mut r = run("forwarding", "inet4", iteration, fwd + rev, 2.0 * fwd);
            for (name, pps, loss) in [("forward", fwd, 0.0), ("reverse", rev, 0.25)] {
                r.result
                    .directions
                    .push(pktlab_trial::direction::Direction {
                        name: name.into(),
                        forwarded_pps: pps,
                        offered_pps: fwd,
                        lost: 0,
                        late: None,
                        loss_ratio: loss * f64::from(iteration as u32),
                        rx_samples: vec![],
                        tx_samples: vec![],
                        tx: r.result.tx.clone(),
                        rx: r.result.rx.clone(),
                        drops: r.result.drops.clone().unwrap(),
                    });
            }
            r
        };
        let cells = cells(&c, &[both(1, 100.0, 60.0), both(2, 110.0, 70.0)]);
        assert_eq!(cells[0].values, [160.0, 180.0]);
        let d = &cells[0].directions;
        assert_eq!(
            (d[0].name.as_str(), &d[0].values[..]),
            ("forward", &[100.0, 110.0][..])
        );
        assert_eq!(
            (d[1].name.as_str(), &d[1].values[..]),
            ("reverse", &[60.0, 70.0][..])
        );
        assert_eq!((d[0].max_loss_ratio, d[1].max_loss_ratio), (0.0, 0.5));
        assert_eq!(d[1].forwarded.as_ref().unwrap().median, 65.0);
        // A one-way cell has none, and none in summary.json.
        let one = cells_of_one_way();
        assert!(one.directions.is_empty());
        assert!(!serde_json::to_string(&one).unwrap().contains("directions"));
    }

    fn cells_of_one_way() -> Cell {
        let c = campaign("");
        cells(&c, &[run("forwarding", "inet4", 1, 100.0, 100.0)]).remove(0)
    }

    #[test]
    fn pps_files_like_bsdrp() {
        assert_eq!(
            pps_text(&[1488141.0, 550723.5, 19097753.25]),
            "1488141\n550723.5\n19097753\n"
        );
    }

    #[test]
    fn cells_and_comparisons() {
        let c = campaign("[[config]]\nname = \"forwarding\"\n[[config]]\nname = \"rps\"\n");
        let runs = vec![
            run("rps", "inet4", 2, 130.0, 200.0),
            run("forwarding", "inet4", 1, 100.0, 200.0),
            run("forwarding", "inet4", 2, 102.0, 200.0),
            run("rps", "inet4", 1, 128.0, 200.0),
        ];
        let cells = cells(&c, &runs);
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].config, "rps");
        assert_eq!(cells[1].iterations, [1, 2]);
        assert_eq!(cells[1].values, [128.0, 130.0]);
        assert_eq!(cells[1].max_loss_ratio, 0.36);
        let cmp = comparisons(&c, &cells);
        // avg 101 vs 129, both stddev sqrt(2): difference 28.
        let k = cmp[0].comparison.unwrap();
        assert_eq!(k.difference, 28.0);
        assert!(k.significant);
        let s = CampaignSummary::new(&c, &runs);
        assert_eq!(
            (s.runs_planned, s.runs_finished, s.complete),
            (10, 4, false)
        );
        // summary.json reads back as the same summary.
        let text = serde_json::to_string_pretty(&s).unwrap();
        let back: CampaignSummary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn a_comparison_needs_two_runs_on_each_side() {
        let c = campaign("[[config]]\nname = \"forwarding\"\n[[config]]\nname = \"rps\"\n");
        // Two runs of the baseline, one of rps: no t-test yet.
        let runs = vec![
            run("forwarding", "inet4", 1, 100.0, 200.0),
            run("forwarding", "inet4", 2, 102.0, 200.0),
            run("rps", "inet4", 1, 128.0, 200.0),
        ];
        let cmp = comparisons(&c, &cells(&c, &runs));
        assert_eq!(cmp.len(), 1);
        assert_eq!(
            (cmp[0].baseline.as_str(), cmp[0].config.as_str()),
            ("forwarding", "rps")
        );
        assert_eq!(cmp[0].comparison, None);
        // The other way round: one baseline run, two of rps.
        let runs = vec![
            run("forwarding", "inet4", 1, 100.0, 200.0),
            run("rps", "inet4", 1, 128.0, 200.0),
            run("rps", "inet4", 2, 130.0, 200.0),
        ];
        assert_eq!(comparisons(&c, &cells(&c, &runs))[0].comparison, None);
    }

    #[test]
    fn dataset_names_are_the_pps_file_names() {
        assert_eq!(
            dataset_name("forwarding", "inet4-64"),
            "forwarding.inet4-64.pps"
        );
    }

    #[test]
    fn sweep_table_like_seed_004() {
        let c = campaign(
            "[lab]\nlink_speed = \"10Gbps\"\n[[traffic]]\nname = \"inet4\"\nsizes = [64, 1518]\n",
        );
        // The first and sixth rows of Ostinato's 40G table: 755/630 Kpps at 64 bytes,
        // 725/639 Kpps at 1518 bytes.
        let runs = vec![
            run("forwarding", "inet4-64", 1, 630_000.0, 755_000.0),
            run("forwarding", "inet4-1518", 1, 639_000.0, 725_000.0),
        ];
        let t = sweep_tables(&c, &cells(&c, &runs));
        assert_eq!(t.len(), 1);
        let r = &t[0].rows;
        // (64 + 20) × 755 × 8 / 1000 = 507.36; (1518 + 20) × 639 × 8 / 1000 = 7862.26.
        assert!((r[0].offered_l1_mbps - 507.36).abs() < 1e-9);
        assert!((r[1].forwarded_l1_mbps - 7862.256).abs() < 1e-9);
        // 10 Gb/s line rate: 14880.95 Kpps at 64 bytes, 812.74 at 1518.
        assert!((r[0].line_rate_kpps.unwrap() - 14_880.952).abs() < 0.001);
        assert!((r[0].forwarded_l1_mbps - 423.36).abs() < 1e-9);
        assert_eq!((r[0].offered_kpps, r[1].forwarded_kpps), (755.0, 639.0));
        assert!((r[1].line_rate_kpps.unwrap() - 812.744).abs() < 0.001);
    }
}
