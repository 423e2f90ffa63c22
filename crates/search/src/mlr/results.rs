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
use super::summary::Report;

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
        self.report.knob_sweeps = super::sweep::tables(&self.knob_sweeps, &self.report.throughput);
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
