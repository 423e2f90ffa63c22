//! A results folder read for the report: the summary, the campaign, the
//! environment, every run file in full and the RFC 2544 files, with a note
//! for each part that is missing.

use std::path::{Path, PathBuf};

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::plan::Campaign;
use pktlab_campaign::records::{EnvRecord, RunHeader, Second, Typed};
use pktlab_campaign::results::{self, ResultsDir, CAMPAIGN_FILE, ENV_FILE, RUNS_DIR, SUMMARY_FILE};
use pktlab_campaign::summary::CampaignSummary;
use serde::Deserialize;

use super::rfc2544::{Rfc2544, TrialLine, RFC2544_FILE, TRIALS_FILE};

/// An offered load this far below the requested one means the generator,
/// not the DUT, set the pace (the 0.5 % of the rfc2544 search).
pub const GENERATOR_LIMIT: f64 = 0.995;

/// Why a folder cannot be reported: always the user's input (exit 2).
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// The part of a result line the report draws.
#[derive(Clone, Debug, Deserialize)]
pub struct ResultFigures {
    pub forwarded_pps: f64,
    pub offered_pps: f64,
    pub lost: u64,
    pub loss_ratio: f64,
    #[serde(default)]
    pub requested_pps: Option<f64>,
    #[serde(default)]
    pub finished_at: Option<u64>,
    /// The receiver's count per second, warm-up and tail included.
    #[serde(default)]
    pub rx_samples: Vec<f64>,
    /// The generator's count per second.
    #[serde(default)]
    pub tx_samples: Vec<f64>,
    /// Where the lost frames went (None: not recorded).
    #[serde(default)]
    pub drops: Option<pktlab_loss::drops::Drops>,
}

/// One finished run file.
#[derive(Clone, Debug)]
pub struct Run {
    pub header: RunHeader,
    pub seconds: Vec<Second>,
    pub result: ResultFigures,
}

impl Run {
    /// The generator offered clearly less than the profile asked for.
    pub fn generator_limited(&self) -> bool {
        self.result
            .requested_pps
            .is_some_and(|r| r > 0.0 && self.result.offered_pps < r * GENERATOR_LIMIT)
    }
}

/// Everything the page shows of one folder.
#[derive(Clone, Debug)]
pub struct Folder {
    pub path: PathBuf,
    pub summary: CampaignSummary,
    /// From `campaign.toml` (link speed, frame sizes); None when unreadable.
    pub campaign: Option<Campaign>,
    pub env: Option<EnvRecord>,
    /// Sorted by configuration, traffic and iteration.
    pub runs: Vec<Run>,
    pub rfc2544: Option<Rfc2544>,
    pub trials: Vec<TrialLine>,
    /// What the folder lacks, one sentence each.
    pub missing: Vec<String>,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> LoadError {
    LoadError(format!("{}: {why}", path.display()))
}

fn campaign_of(path: &Path) -> Result<Option<Campaign>, LoadError> {
    let file = path.join(CAMPAIGN_FILE);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    let parsed = CampaignFile::parse(&text).map_err(|e| bad(&file, e))?;
    // The CPU count only sizes the rps mask, which the report does not show.
    Campaign::from_file(&parsed, 1)
        .map(Some)
        .map_err(|e| bad(&file, e))
}

impl Folder {
    /// Reads folder `path`. Not a results folder, or a damaged
    /// `summary.json`, `campaign.toml` or run file: an error naming it.
    pub fn load(path: &Path) -> Result<Folder, LoadError> {
        if !path.is_dir() {
            return Err(bad(path, "not a folder"));
        }
        let has_summary = path.join(SUMMARY_FILE).is_file();
        if !has_summary && !path.join(CAMPAIGN_FILE).is_file() {
            return Err(bad(
                path,
                format!("not a results folder: it has neither {SUMMARY_FILE} nor {CAMPAIGN_FILE}"),
            ));
        }
        let campaign = campaign_of(path)?;
        let mut missing = Vec::new();
        // A damaged summary is only a cache of the run files: computed
        // again from them when the campaign is known, and said so.
        let read = has_summary.then(|| results::read_summary::<CampaignSummary>(path));
        let (summary, damaged) = match read {
            Some(Ok(s)) => (Some(s), None),
            Some(Err(e)) if campaign.is_none() => return Err(LoadError(e.to_string())),
            Some(Err(e)) => (None, Some(e.to_string().replace('\n', " "))),
            None => (None, None),
        };
        let summary = match summary {
            Some(s) => s,
            None => {
                let campaign = campaign.as_ref().expect("checked above");
                let dir = ResultsDir {
                    path: path.to_path_buf(),
                };
                let outcomes = if path.join(RUNS_DIR).is_dir() {
                    dir.runs().map_err(|e| LoadError(e.to_string()))?
                } else {
                    Vec::new()
                };
                missing.push(match damaged {
                    Some(why) => format!(
                        "{SUMMARY_FILE} is damaged ({why}): the summary was computed again from the run files."
                    ),
                    None => format!(
                        "{SUMMARY_FILE} is missing: the summary was computed again from the run files."
                    ),
                });
                CampaignSummary::new(campaign, &outcomes)
            }
        };
        Folder::from_parts(path, summary, campaign, missing)
    }

    /// The folder of a campaign whose summary is at hand (the exporter hook).
    pub fn from_parts(
        path: &Path,
        summary: CampaignSummary,
        campaign: Option<Campaign>,
        mut missing: Vec<String>,
    ) -> Result<Folder, LoadError> {
        let env_path = path.join(ENV_FILE);
        let env = if env_path.is_file() {
            let text = std::fs::read_to_string(&env_path).map_err(|e| bad(&env_path, e))?;
            Some(serde_json::from_str(&text).map_err(|e| bad(&env_path, e))?)
        } else {
            missing.push(format!(
                "{ENV_FILE} is missing: the host and NICs are unknown."
            ));
            None
        };
        let runs = read_runs(&path.join(RUNS_DIR))?;
        if !summary.complete {
            missing.push(format!(
                "The campaign is incomplete: {} of {} runs finished (interrupted, or still running).",
                summary.runs_finished, summary.runs_planned
            ));
        }
        let rfc_path = path.join(RFC2544_FILE);
        let rfc2544 = if rfc_path.is_file() {
            let text = std::fs::read_to_string(&rfc_path).map_err(|e| bad(&rfc_path, e))?;
            Some(serde_json::from_str(&text).map_err(|e| bad(&rfc_path, e))?)
        } else {
            None
        };
        let trials_path = path.join(TRIALS_FILE);
        let mut trials = Vec::new();
        if trials_path.is_file() {
            let text = std::fs::read_to_string(&trials_path).map_err(|e| bad(&trials_path, e))?;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                trials.push(
                    serde_json::from_str(line)
                        .map_err(|e| bad(&trials_path, format!("line {}: {e}", i + 1)))?,
                );
            }
        }
        if rfc2544.is_none() && trials.is_empty() {
            missing.push(format!(
                "No RFC 2544 data ({RFC2544_FILE}, {TRIALS_FILE}): run `pktlab rfc2544` for NDR/PDR, latency, frame loss and back-to-back."
            ));
        }
        Ok(Folder {
            path: path.to_path_buf(),
            summary,
            campaign,
            env,
            runs,
            rfc2544,
            trials,
            missing,
        })
    }

    /// The folder's name as a label (`before`, `after`).
    pub fn label(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }

    /// The link speed in bit/s, when the campaign gives it.
    pub fn link_bps(&self) -> Option<f64> {
        self.campaign.as_ref().and_then(|c| c.link_bps)
    }

    /// The mean frame size of traffic profile `name`.
    pub fn mean_size(&self, traffic: &str) -> Option<f64> {
        let t = self
            .campaign
            .as_ref()?
            .traffics
            .iter()
            .find(|t| t.name == traffic)?;
        t.sizes
            .parse::<pktlab_wire::size::SizeMix>()
            .ok()
            .map(|m| m.mean())
    }

    pub fn runs_of<'a>(
        &'a self,
        config: &'a str,
        traffic: &'a str,
    ) -> impl Iterator<Item = &'a Run> {
        self.runs
            .iter()
            .filter(move |r| r.header.config == config && r.header.traffic == traffic)
    }
}

fn read_runs(dir: &Path) -> Result<Vec<Run>, LoadError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") && !name.starts_with('.') {
            out.push(read_run(&entry.path())?);
        }
    }
    out.sort_by(|a, b| {
        let key = |r: &Run| {
            (
                r.header.config.clone(),
                r.header.traffic.clone(),
                r.header.iteration,
            )
        };
        key(a).cmp(&key(b))
    });
    Ok(out)
}

fn read_run(path: &Path) -> Result<Run, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(path, e))?;
    results::check_whole(&text).map_err(|e| bad(path, e))?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return Err(bad(path, "empty run file"));
    };
    if lines.len() < 2 {
        return Err(bad(path, "run file without a result line"));
    }
    let header: Typed<RunHeader> =
        serde_json::from_str(first).map_err(|e| bad(path, format!("bad first line: {e}")))?;
    let result: Typed<ResultFigures> =
        serde_json::from_str(last).map_err(|e| bad(path, format!("bad last line: {e}")))?;
    let mut seconds = Vec::new();
    for (i, line) in lines[1..lines.len() - 1].iter().enumerate() {
        let s: Typed<Second> = serde_json::from_str(line)
            .map_err(|e| bad(path, format!("bad line {}: {e}", i + 2)))?;
        seconds.push(s.record);
    }
    results::check_version(&header.record.pktlab_version).map_err(|e| bad(path, e))?;
    Ok(Run {
        header: header.record,
        seconds,
        result: result.record,
    })
}
