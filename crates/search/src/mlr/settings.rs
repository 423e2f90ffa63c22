//! What every search of an rfc2544 campaign uses: the tests, the goals,
//! the loads. Saved in the results folder (`rfc2544-settings.json`), so
//! that `--resume` goes on with the same.

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;
use pktlab_wire::rate::line_rate_pps_mean;
use pktlab_wire::size::SizeMix;

use super::latency;
use crate::{Goal, SearchConfig};

/// The settings file of an rfc2544 results folder.
pub const SETTINGS_FILE: &str = "rfc2544-settings.json";

/// Where the search's maximum load comes from.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxLoad {
    /// `--max-rate`, in frames per second.
    Pps(f64),
    /// `--link-speed`: the line rate of each size, in bits per second.
    LinkBps(f64),
    /// Neither: a first trial as fast as the generator can goes measures it.
    Calibrate,
}

/// What every search of an rfc2544 run uses (saved in the folder, so
/// that `--resume` goes on with the same).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MlrSettings {
    /// Run the throughput search.
    #[serde(default = "yes")]
    pub throughput: bool,
    /// Run RFC 2544's frame loss rate test after it.
    #[serde(default)]
    pub frame_loss: bool,
    /// Measure latency at fractions of the PDR after the search.
    #[serde(default)]
    pub latency: bool,
    /// Run the back-to-back frames test after the search.
    #[serde(default)]
    pub back_to_back: bool,
    pub goals: Vec<Goal>,
    pub max: MaxLoad,
    /// The lowest load as a fraction of the maximum.
    pub min_fraction: f64,
    /// The latency test's loads, as fractions of the PDR.
    #[serde(default = "latency_loads")]
    pub latency_loads: Vec<f64>,
    /// Latency trials per load.
    #[serde(default = "latency_trials")]
    pub latency_trials: usize,
    /// Back-to-back searches (the RFCs' trials), averaged.
    #[serde(default = "b2b_trials")]
    pub b2b_trials: usize,
    /// How long each back-to-back burst's trial lasts, idle time included.
    #[serde(default = "b2b_trial_s")]
    pub b2b_trial_s: f64,
    /// Seconds of traffic before each trial whose frames are not counted
    /// (not before a back-to-back burst, which must meet an idle DUT).
    #[serde(default)]
    pub warmup_s: f64,
}

fn yes() -> bool {
    true
}

fn latency_loads() -> Vec<f64> {
    latency::DEFAULT_LOADS.to_vec()
}

fn latency_trials() -> usize {
    latency::DEFAULT_TRIALS
}

/// RFC 2544 section 26.4: at least 50 trials of at least 2 seconds.
pub const DEFAULT_B2B_TRIALS: usize = 50;
pub const DEFAULT_B2B_TRIAL_S: f64 = 2.0;

fn b2b_trials() -> usize {
    DEFAULT_B2B_TRIALS
}

fn b2b_trial_s() -> f64 {
    DEFAULT_B2B_TRIAL_S
}

/// The lowest load tried: a thousandth of the maximum.
pub const MIN_FRACTION: f64 = 0.001;

impl MlrSettings {
    /// The search's loads for `traffic`, given the calibrated rate (if any).
    pub fn config(&self, max_pps: f64) -> SearchConfig {
        SearchConfig::new(self.goals.clone(), max_pps * self.min_fraction, max_pps)
    }

    /// The maximum load for frames of `sizes`, unless it must be calibrated.
    pub fn fixed_max(&self, sizes: &str) -> Result<Option<f64>, pktlab_wire::WireError> {
        Ok(match self.max {
            MaxLoad::Pps(p) => Some(p),
            MaxLoad::LinkBps(bps) => {
                let mix: SizeMix = sizes.parse()?;
                Some(line_rate_pps_mean(bps, mix.mean()))
            }
            MaxLoad::Calibrate => None,
        })
    }
}

impl MlrSettings {
    /// A rough guess of one search's seconds of traffic, for a progress
    /// bar: each goal's final bounds need about half their duration sum
    /// each, and the coarser targets and the steps towards them a few more
    /// trials.
    pub fn guessed_seconds(&self) -> f64 {
        let search: f64 = self
            .goals
            .iter()
            .map(|g| g.duration_sum + 10.0 * g.initial_trial_duration)
            .sum();
        let final_trial = self.goals[0].final_trial_duration;
        let latency = if self.latency {
            (self.latency_loads.len() * self.latency_trials) as f64 * final_trial
        } else {
            0.0
        };
        // A burst search takes about a dozen bursts; the receiver's
        // intervals tick for the burst and the drain (about a second), not
        // the idle rest.
        let b2b = if self.back_to_back {
            self.b2b_trials as f64 * 12.0
        } else {
            0.0
        };
        search + latency + b2b
    }

    /// The settings saved in `dir`; None when it is no rfc2544 folder.
    pub fn read(dir: &ResultsDir) -> Result<Option<MlrSettings>, CampaignError> {
        dir.read_json(SETTINGS_FILE)
    }

    /// Saves them in `dir`.
    pub fn write(&self, dir: &ResultsDir) -> Result<(), CampaignError> {
        dir.write_json(SETTINGS_FILE, self)
    }

    /// The settings of the campaign in folder `dir`, to resume it: a
    /// folder without them is not one of `rfc2544` (bad input).
    pub fn to_resume(dir: &std::path::Path) -> Result<MlrSettings, CampaignError> {
        let folder = ResultsDir {
            path: dir.to_path_buf(),
        };
        match MlrSettings::read(&folder) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(CampaignError::Usage(format!(
                "cannot resume {}: not an rfc2544 results folder (it has no search settings)",
                dir.display()
            ))),
            Err(e) => Err(CampaignError::Usage(e.to_string())),
        }
    }

    /// The names of the tests that run, in the order they run.
    pub fn test_names(&self) -> Vec<&'static str> {
        [
            ("throughput", self.throughput),
            ("latency", self.latency),
            ("frame-loss", self.frame_loss),
            ("back-to-back", self.back_to_back),
        ]
        .iter()
        .filter(|t| t.1)
        .map(|t| t.0)
        .collect()
    }
}
