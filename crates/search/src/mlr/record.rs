//! `trials.jsonl`: one line per trial of every search, in the order run.
//! The file is rewritten atomically with each new line, so that Ctrl-C
//! never leaves half a line and a resumed search finds every finished trial.

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;

use crate::{Class, Measurement};

/// The file in the results folder.
pub const TRIALS_FILE: &str = "trials.jsonl";

/// Which test a trial served.
pub const CALIBRATION: &str = "calibration";
pub const THROUGHPUT: &str = "throughput";
pub const FRAME_LOSS: &str = "frame-loss";
pub const LATENCY: &str = "latency";
pub const BACK_TO_BACK: &str = "back-to-back";
/// A trial at the found NDR when a resumed search had nothing left to run.
pub const CONFIRMATION: &str = "confirmation";

/// A goal's classification of the trial's load after the trial.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoalClass {
    pub loss_ratio: f64,
    pub exceed_ratio: f64,
    pub class: Class,
}

/// One line of `trials.jsonl`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrialLine {
    pub config: String,
    pub traffic: String,
    /// The frame size or mix (`64`, `imix`).
    pub size: String,
    pub test: String,
    /// Which of the `--repeat` searches (from 1).
    pub iteration: usize,
    /// The load asked for; None for a calibration (as fast as possible).
    pub intended_pps: Option<f64>,
    /// Frames sent over the trial's duration.
    pub offered_pps: f64,
    pub duration_s: f64,
    pub tx: u64,
    pub rx: u64,
    pub lost: u64,
    /// Frames arriving after the drain time; None: the receiver counts
    /// every frame until the drain ends, so late frames count as lost.
    pub late: Option<u64>,
    pub loss_ratio: f64,
    pub generator_limited: bool,
    /// The search's maximum load for this search.
    pub max_pps: f64,
    /// Empty for trials outside the search.
    #[serde(default)]
    pub classes: Vec<GoalClass>,
    /// Unix seconds.
    pub started_at: u64,
    /// Back-to-back: the burst sent, in frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u64>,
    /// Back-to-back: which of the searches (from 1); latency: which of the
    /// trials at its load (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<usize>,
    /// Latency: the load as a fraction of the PDR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_fraction: Option<f64>,
    /// Latency: the trial's own percentiles (the histogram is in
    /// `latency-histograms.jsonl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<pktlab_engine::rx::Latency>,
    /// Where the trial's lost frames went (`pktlab_loss::drops`, as in a bench
    /// run's result line); None in lines written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drops: Option<pktlab_loss::drops::Drops>,
    /// What the trial's one-way latency is worth when the generator and
    /// the receiver are on different hosts (`pktlab_trial::trial::TrialResult`'s
    /// note: "clocks of A and C synchronised to ±X µs" or "not
    /// comparable: ..."); None on one host, whose clock both share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_note: Option<String>,
    /// Traffic both ways: each direction's frames and loss (forward,
    /// reverse); `tx`, `rx`, `lost` and `drops` above are their total,
    /// `intended_pps` and `offered_pps` the load of each direction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<DirectionLine>,
}

/// One direction of a trial both ways, in `trials.jsonl`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DirectionLine {
    /// `forward` or `reverse`.
    pub name: String,
    pub tx: u64,
    /// Received on time.
    pub rx: u64,
    pub lost: u64,
    pub late: Option<u64>,
    pub loss_ratio: f64,
    pub drops: pktlab_loss::drops::Drops,
}

impl TrialLine {
    /// The trial as the search sees it (None for a calibration).
    pub fn measurement(&self) -> Option<Measurement> {
        Some(Measurement {
            intended_pps: self.intended_pps?,
            offered_pps: self.offered_pps,
            duration_s: self.duration_s,
            tx: self.tx,
            rx: self.rx,
            tester_lost: self.drops.as_ref().map_or(0, |d| d.tester),
            tester_limited: self.drops.as_ref().is_some_and(|d| d.tester_limited),
        })
    }

    /// The class the first goal (NDR) gave the trial's load after it, as
    /// a word (`lower`, `upper`, `undecided`); `unclassified` for trials
    /// outside the throughput search.
    pub fn first_class(&self) -> &'static str {
        self.classes
            .first()
            .map_or("unclassified", |c| c.class.name())
    }

    /// Same search: configuration, traffic and iteration.
    pub fn of_run(&self, config: &str, traffic: &str, iteration: usize) -> bool {
        self.config == config && self.traffic == traffic && self.iteration == iteration
    }
}

/// Every line of the folder's `trials.jsonl` (none when it does not exist).
pub fn read(dir: &ResultsDir) -> Result<Vec<TrialLine>, CampaignError> {
    dir.read_lines(TRIALS_FILE)
}

/// Appends `line` by rewriting the whole file atomically.
pub fn append(dir: &ResultsDir, line: &TrialLine) -> Result<(), CampaignError> {
    dir.append_line(TRIALS_FILE, line)
}
