//! An rfc2544 campaign's results in memory: its settings, every trial and
//! latency histogram its searches recorded, and what they add up to
//! (`rfc2544.json`'s [`Report`]). What the sinks are given, and what
//! `pktlab report` reads back from a folder.

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;

use super::latency::{self, HistogramLine};
use super::record::{self, TrialLine};
use super::settings::{MlrSettings, SETTINGS_FILE};
use super::steps::SearchRun;
use super::summary::{GoalBounds, Report, Throughput};
use super::sweep::{SearchSweepRow, SearchSweepTable, SweepGoal};
use pktlab_campaign::plan::KnobSweep;

/// The searches of a campaign so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Searches {
    pub settings: MlrSettings,
    /// `trials.jsonl`, in the order run.
    pub trials: Vec<TrialLine>,
    /// `latency-histograms.jsonl`.
    pub histograms: Vec<HistogramLine>,
    /// `rfc2544.json`.
    pub report: Report,
    /// The campaign's knob sweeps, whose tables the report holds.
    pub knob_sweeps: Vec<pktlab_campaign::plan::KnobSweep>,
}

/// True for the folder of an rfc2544 campaign (it holds its settings).
pub fn is_search_folder(dir: &ResultsDir) -> bool {
    dir.path.join(SETTINGS_FILE).is_file()
}

impl Searches {
    /// None yet.
    pub fn new(settings: MlrSettings) -> Searches {
        Searches {
            settings,
            trials: Vec::new(),
            histograms: Vec::new(),
            report: Report::default(),
            knob_sweeps: Vec::new(),
        }
    }

    /// What `dir` holds, as recorded; None when it is no rfc2544 folder.
    /// A folder whose `rfc2544.json` is missing (a campaign stopped before
    /// its first search ended) gets it worked out from its trials.
    pub fn read(dir: &ResultsDir) -> Result<Option<Searches>, CampaignError> {
        let Some(settings) = MlrSettings::read(dir)? else {
            return Ok(None);
        };
        let mut s = Searches::new(settings);
        s.read_trials(dir)?;
        match Report::read(dir)? {
            Some(report) => s.report = report,
            None => s.refresh()?,
        }
        Ok(Some(s))
    }

    /// Reads back the trials and histograms `dir` holds.
    pub fn read_trials(&mut self, dir: &ResultsDir) -> Result<(), CampaignError> {
        self.trials = record::read(dir)?;
        self.histograms = latency::read(dir)?;
        Ok(())
    }

    /// Works the report out again from the trials.
    pub fn refresh(&mut self) -> Result<(), CampaignError> {
        self.report = Report::of(&self.settings, &self.trials, &self.histograms)?;
        self.report.knob_sweeps = sweep_tables(&self.knob_sweeps, &self.report.throughput);
        Ok(())
    }

    /// The search of `config`, `traffic` and `iteration` asks for no more
    /// trials: it ran whole (one cut short by Ctrl-C has more to run, and
    /// `--resume` runs them).
    pub fn is_finished(&self, config: &str, traffic: &str, iteration: usize) -> bool {
        let lines = self.trials_of(config, traffic, iteration);
        let Some(size) = lines.first().map(|l| l.size.clone()) else {
            return false;
        };
        SearchRun::replay(&self.settings, &size, lines).is_ok_and(|s| s.next().is_none())
    }

    /// The trials of one search, in the order run.
    pub fn trials_of(&self, config: &str, traffic: &str, iteration: usize) -> Vec<TrialLine> {
        self.trials
            .iter()
            .filter(|l| l.of_run(config, traffic, iteration))
            .cloned()
            .collect()
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    pktlab_stats::median(&v)
}

/// The tables of `sweeps` from the searches of `throughput` (values
/// without a finished search are left out).
pub(crate) fn sweep_tables(
    sweeps: &[KnobSweep],
    throughput: &[Throughput],
) -> Vec<SearchSweepTable> {
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
            let of = |f: &dyn Fn(&GoalBounds) -> Option<f64>| {
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
