//! What one campaign adds to the history, and what the history gives back:
//! plain data, with no database or file in sight.

use serde::Serialize;

/// Where a record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A `pktlab bench` results folder: every run's forwarded pps.
    Bench,
    /// A `pktlab rfc2544` results folder: every search's goals and
    /// latencies.
    Rfc2544,
    /// A `pktlab rfc9693` results folder: every run's stateful results.
    Rfc9693,
    /// A BSDRP/netbenches `<label>.<config>.pps` file set.
    Pps,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Bench => "bench",
            Source::Rfc2544 => "rfc2544",
            Source::Rfc9693 => "rfc9693",
            Source::Pps => "pps",
        }
    }

    pub fn parse(text: &str) -> Option<Source> {
        [Source::Bench, Source::Rfc2544, Source::Rfc9693, Source::Pps]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// One campaign (or one label of a `.pps` folder), with its runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CampaignRecord {
    /// What makes importing it twice add nothing: the SHA-256 of the files
    /// that name it (`env.json`; a label's `.pps` files).
    pub identity: String,
    pub source: Source,
    pub name: String,
    /// The kernel, firmware or ruleset under test: what trends are drawn
    /// over.
    pub label: String,
    /// Unix seconds; None when unknown (a `.pps` folder).
    pub started_at: Option<i64>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub kernel_build: Option<String>,
    pub os: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus: Option<i64>,
    /// The lab and DUT as `env.json` describes them.
    pub dut: Option<String>,
    /// `uname -a` of a DUT reached over ssh.
    pub dut_uname: Option<String>,
    pub virtual_lab: Option<bool>,
    pub pktlab_version: Option<String>,
    /// The folder it was read from, absolute.
    pub results_dir: String,
    pub runs: Vec<RunRecord>,
}

/// One run (a fixed-rate run, or a search) of one configuration, traffic
/// and frame size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRecord {
    pub config: String,
    /// Empty when the source does not say (a `.pps` file).
    pub traffic: String,
    pub size: String,
    pub iteration: i64,
    pub started_at: Option<i64>,
    /// The run's value: the median of its per-second counts; None for a
    /// search.
    pub forwarded_pps: Option<f64>,
    pub offered_pps: Option<f64>,
    pub loss_ratio: Option<f64>,
    pub goals: Vec<GoalRecord>,
    pub latencies: Vec<LatencyRecord>,
    /// RFC 9693's results (`rfc9693.json`), one per test.
    pub stateful: Vec<StatefulRecord>,
}

/// A search goal's bounds (`rfc2544.json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoalRecord {
    pub loss_ratio: f64,
    pub exceed_ratio: f64,
    pub lower_pps: Option<f64>,
    pub upper_pps: Option<f64>,
    pub conditional_pps: Option<f64>,
    pub hit_max: bool,
    pub generator_limited: bool,
    pub complete: bool,
}

/// One result of RFC 9693's stateful tests (`rfc9693.json`): a test's
/// value and, for a search, its bounds. Each test is a row of its own, so
/// a new test adds rows, not columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatefulRecord {
    /// The test, as `pktlab rfc9693 --tests` names it: `capacity`, `rate`,
    /// `teardown`, `throughput`.
    pub test: String,
    /// The unit of `value` and `upper`: `connections`, `connections/s`,
    /// `pps each way`.
    pub unit: String,
    /// The result: a search's lower bound, a measured rate (None: the
    /// search found none).
    pub value: Option<f64>,
    /// A search's upper bound (None: none failed, or not a search).
    pub upper: Option<f64>,
    /// The connections each trial opened (the rate, throughput and
    /// tear-down tests).
    pub connections: Option<i64>,
    /// The DUT's `nf_conntrack_max` during the run.
    pub dut_limit: Option<i64>,
    pub hit_max: bool,
    pub generator_limited: bool,
    pub complete: bool,
}

/// The unit of an rfc9693 test's results: the capacity counts
/// connections, the throughput frames each way, the other tests are
/// connection rates.
pub fn unit_of(test: &str) -> &'static str {
    match test {
        "capacity" => "connections",
        "throughput" => "pps each way",
        _ => "connections/s",
    }
}

/// Latency at one load of a search (`rfc2544.json`), in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyRecord {
    /// The load as a fraction of the PDR.
    pub load_fraction: f64,
    pub load_pps: f64,
    pub offered_pps: f64,
    pub frames: i64,
    pub lost: i64,
    pub min_ns: i64,
    pub p50_ns: i64,
    pub p90_ns: i64,
    pub p99_ns: i64,
    pub p999_ns: i64,
    pub max_ns: i64,
}

/// A run read back, with its campaign's label and time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredRun {
    pub campaign_id: i64,
    pub label: String,
    pub source: Source,
    pub campaign_started_at: Option<i64>,
    #[serde(flatten)]
    pub run: RunRecord,
}

/// A campaign read back (`pktlab history list`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredCampaign {
    pub id: i64,
    pub source: Source,
    pub name: String,
    pub label: String,
    pub started_at: Option<i64>,
    pub recorded_at: i64,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub dut: Option<String>,
    pub pktlab_version: Option<String>,
    pub results_dir: String,
    pub runs: i64,
}

/// What recording a campaign did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Recorded {
    pub campaign_id: i64,
    /// False: the campaign was there already (only runs it did not have
    /// were added).
    pub new_campaign: bool,
    pub runs_added: usize,
    /// The campaign's label in the history (the first one it was given).
    pub label: String,
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
