//! The records of a results folder, as types: what [`super::results`]
//! writes and what it reads back are the same structs.
//!
//! A run file (`runs/<config>.<traffic>.<n>.jsonl`) is one JSON object per
//! line, each with a `type`: a [`RunHeader`] (`run`), one [`Second`] per
//! second (`second`), then a [`RunResult`] (`result`). `env.json` is an
//! [`EnvRecord`]. Keys are those of the files written before these types
//! existed, so that old folders still load.

use pktlab_lab::dut::DutConfig;
use pktlab_lab::envinfo::{HostFacts, NicFacts};
use serde::{Deserialize, Serialize};

pub use crate::monitor::Second;
use crate::traffic::Traffic;
use crate::trial::{TrialResult, TrialSettings};

/// The `type` of each line of a run file.
pub const HEADER_TYPE: &str = "run";
pub const SECOND_TYPE: &str = "second";
pub const RESULT_TYPE: &str = "result";

/// The first line of a run file: which run, on what, how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub campaign: String,
    pub config: String,
    pub traffic: String,
    pub iteration: usize,
    /// Seconds since the Unix epoch.
    pub started_at: u64,
    pub pktlab_version: String,
    pub kernel: String,
    pub cpu_model: Option<String>,
    pub cpus: usize,
    /// The lab, as people read it (`built-in lab pktlab`).
    pub lab: String,
    pub virtual_lab: bool,
    /// The I/O backend the generator and the receiver were asked for
    /// (`afpacket`, `afxdp`, `xdp`, `auto`). Folders written before it was
    /// recorded only ever used AF_PACKET.
    #[serde(default = "afpacket")]
    pub io: String,
    pub traffic_profile: Traffic,
    pub settings: TrialSettings,
    /// The configuration's apply/revert lines, as text.
    pub config_text: String,
    /// Why the NICs' interrupts are not recorded, when they are not.
    pub interrupts: Option<String>,
}

fn afpacket() -> String {
    "afpacket".into()
}

/// The last line of a run file: the trial's figures and what was asked.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    #[serde(flatten)]
    pub trial: TrialResult,
    /// The rate the traffic profile asked for (None: full speed).
    pub requested_pps: Option<f64>,
    /// Seconds since the Unix epoch.
    pub finished_at: u64,
}

/// The figures of a result line that summaries and resume need: read from
/// the same line [`RunResult`] writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub forwarded_pps: f64,
    pub offered_pps: f64,
    pub lost: u64,
    pub loss_ratio: f64,
    #[serde(default)]
    pub requested_pps: Option<f64>,
    #[serde(default)]
    pub finished_at: Option<u64>,
}

/// A whole finished run, as its file holds it.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub header: RunHeader,
    pub seconds: Vec<Second>,
    pub result: RunResult,
}

/// A record with its line `type` first (`{"type":"run",...}`).
#[derive(Serialize, Deserialize)]
pub struct Typed<T> {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub record: T,
}

impl RunRecord {
    /// The run file's text: one JSON line per record.
    pub fn to_jsonl(&self) -> String {
        fn line<T: Serialize>(kind: &str, record: T) -> String {
            let typed = Typed {
                kind: kind.into(),
                record,
            };
            serde_json::to_string(&typed).expect("records serialise") + "\n"
        }
        let mut text = line(HEADER_TYPE, &self.header);
        for s in &self.seconds {
            text += &line(SECOND_TYPE, s);
        }
        text + &line(RESULT_TYPE, &self.result)
    }
}

/// One DUT configuration in `env.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvConfig {
    pub config: DutConfig,
    pub name: String,
    pub text: String,
}

/// `env.json`: the host, the lab's NIC drivers, the DUT (when remote),
/// pktlab's version and every configuration's exact text. Fields in
/// alphabetical order: the order of the file as first written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvRecord {
    pub configs: Vec<EnvConfig>,
    pub created_at: u64,
    pub dut_uname: Option<String>,
    pub host: HostFacts,
    pub interrupts: Option<String>,
    pub lab: String,
    pub nics: Vec<NicFacts>,
    pub pktlab_version: String,
    pub virtual_lab: bool,
}

/// What `summary.json` tells about the campaign's shape: its
/// configurations and traffic profiles in campaign order. The figures are
/// read from the `.pps` files, which any ministat reads too.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryShape {
    #[serde(default)]
    pub configs: Vec<String>,
    #[serde(default)]
    pub traffics: Vec<String>,
}
