//! What the page shows of one results folder: the campaign, the
//! environment, and its method's results (a fixed-rate campaign's runs, or
//! an rfc2544 campaign's searches), with a note for each part that is
//! missing. Made from a campaign's results in memory (the exporter), or
//! read back from a folder (`pktlab report DIR`) with the types that wrote
//! it.

use std::path::{Path, PathBuf};

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::{ResultsDir, CAMPAIGN_FILE, ENV_FILE};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::{EnvRecord, RunRecord};
use pktlab_campaign::runs::Runs;
use pktlab_campaign::summary::{CampaignSummary, SUMMARY_FILE};
use pktlab_search::mlr::record::TrialLine;
use pktlab_search::mlr::results::{is_search_folder, Searches};
use pktlab_search::mlr::summary::Report;
use pktlab_search::stateful::StatefulReport;

/// Why a folder cannot be reported: always the user's input (exit 2).
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// Everything the page shows of one folder.
#[derive(Clone, Debug)]
pub struct Folder {
    pub path: PathBuf,
    /// The campaign's name.
    pub name: String,
    /// From `campaign.toml` (link speed, frame sizes); None when unreadable.
    pub plan: Option<Plan>,
    pub env: Option<EnvRecord>,
    /// A fixed-rate campaign's runs.
    pub runs: Option<Runs>,
    /// An rfc2544 campaign's searches.
    pub searches: Option<Searches>,
    /// An rfc9693 campaign's results: its page is a page of its own
    /// (`super::stateful`).
    pub stateful: Option<StatefulReport>,
    /// What the folder lacks, one sentence each.
    pub missing: Vec<String>,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> LoadError {
    LoadError(format!("{}: {why}", path.display()))
}

fn plan_of(path: &Path) -> Result<Option<Plan>, LoadError> {
    let file = path.join(CAMPAIGN_FILE);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    let parsed = CampaignFile::parse(&text).map_err(|e| bad(&file, e))?;
    // The CPU count only sizes the rps mask, which the report does not show.
    Plan::from_file(&parsed, 1)
        .map(Some)
        .map_err(|e| bad(&file, e))
}

impl Folder {
    /// The page of a fixed-rate campaign's runs, from memory.
    pub fn of_runs(path: &Path, plan: &Plan, env: &EnvRecord, runs: &Runs) -> Folder {
        let mut f = Folder::bare(
            path,
            plan.name.clone(),
            Some(plan.clone()),
            Some(env.clone()),
        );
        f.runs = Some(runs.clone());
        f.note_incomplete();
        f
    }

    /// The page of an rfc2544 campaign's searches, from memory.
    pub fn of_searches(path: &Path, plan: &Plan, env: &EnvRecord, s: &Searches) -> Folder {
        let mut f = Folder::bare(
            path,
            plan.name.clone(),
            Some(plan.clone()),
            Some(env.clone()),
        );
        f.searches = Some(s.clone());
        f
    }

    fn bare(path: &Path, name: String, plan: Option<Plan>, env: Option<EnvRecord>) -> Folder {
        Folder {
            path: path.to_path_buf(),
            name,
            plan,
            env,
            runs: None,
            searches: None,
            stateful: None,
            missing: Vec::new(),
        }
    }

    /// Reads folder `path`. Not a results folder, or a damaged
    /// `summary.json`, `campaign.toml`, run file or rfc2544 file: an
    /// error naming it.
    pub fn load(path: &Path) -> Result<Folder, LoadError> {
        if !path.is_dir() {
            return Err(bad(path, "not a folder"));
        }
        let dir = ResultsDir {
            path: path.to_path_buf(),
        };
        let has_summary = path.join(SUMMARY_FILE).is_file();
        if !has_summary && !dir.campaign_file().is_file() {
            return Err(bad(
                path,
                format!("not a results folder: it has neither {SUMMARY_FILE} nor {CAMPAIGN_FILE}"),
            ));
        }
        let plan = plan_of(path)?;
        let mut f = Folder::bare(path, String::new(), plan, None);
        f.env = f.read_env(&dir)?;
        let stateful = StatefulReport::read(&dir).map_err(|e| LoadError(e.to_string()))?;
        if stateful.is_some() {
            f.stateful = stateful;
        } else if is_search_folder(&dir) {
            let s = Searches::read(&dir).map_err(|e| LoadError(e.to_string()))?;
            f.searches = s;
        } else {
            f.runs = Some(f.read_runs(&dir, has_summary)?);
            f.note_incomplete();
        }
        f.name = f.name_of();
        Ok(f)
    }

    fn read_env(&mut self, dir: &ResultsDir) -> Result<Option<EnvRecord>, LoadError> {
        if !dir.has_env() {
            self.missing.push(format!(
                "{ENV_FILE} is missing: the host and NICs are unknown."
            ));
            return Ok(None);
        }
        dir.env().map(Some).map_err(|e| LoadError(e.to_string()))
    }

    /// The runs and their summary. A damaged summary is only a cache of
    /// the run files: computed again from them when the campaign is known,
    /// and said so.
    fn read_runs(&mut self, dir: &ResultsDir, has_summary: bool) -> Result<Runs, LoadError> {
        let records = dir.runs().map_err(|e| LoadError(e.to_string()))?;
        let read = has_summary.then(|| CampaignSummary::read(dir));
        let damaged = match read {
            Some(Ok(Some(summary))) => return Ok(Runs { records, summary }),
            Some(Err(e)) if self.plan.is_none() => return Err(LoadError(e.to_string())),
            Some(Err(e)) => Some(e.to_string().replace('\n', " ")),
            _ => None,
        };
        let Some(plan) = self.plan.as_ref() else {
            return Err(bad(
                &dir.path,
                format!("{CAMPAIGN_FILE} cannot be read, and {SUMMARY_FILE} needs it"),
            ));
        };
        self.missing.push(match damaged {
            Some(why) => format!(
                "{SUMMARY_FILE} is damaged ({why}): the summary was computed again from the run files."
            ),
            None => format!(
                "{SUMMARY_FILE} is missing: the summary was computed again from the run files."
            ),
        });
        Ok(Runs::of(plan, records))
    }

    fn note_incomplete(&mut self) {
        let Some(s) = self.summary() else { return };
        if !s.complete {
            let note = format!(
                "The campaign is incomplete: {} of {} runs finished (interrupted, or still running).",
                s.runs_finished, s.runs_planned
            );
            self.missing.push(note);
        }
    }

    fn name_of(&self) -> String {
        if let Some(s) = self.summary() {
            return s.name.clone();
        }
        self.plan
            .as_ref()
            .map(|p| p.name.clone())
            .unwrap_or_else(|| self.label())
    }

    /// The folder's name as a label (`before`, `after`).
    pub fn label(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }

    /// A fixed-rate campaign's summary.
    pub fn summary(&self) -> Option<&CampaignSummary> {
        self.runs.as_ref().map(|r| &r.summary)
    }

    /// A fixed-rate campaign's runs (none for a search).
    pub fn records(&self) -> &[RunRecord] {
        self.runs.as_ref().map_or(&[], |r| r.records.as_slice())
    }

    /// An rfc2544 campaign's results.
    pub fn report(&self) -> Option<&Report> {
        self.searches.as_ref().map(|s| &s.report)
    }

    /// An rfc2544 campaign's trials (none for a fixed-rate campaign).
    pub fn trials(&self) -> &[TrialLine] {
        self.searches.as_ref().map_or(&[], |s| s.trials.as_slice())
    }

    /// The lab ran on this host's CPUs alone (the built-in lab).
    pub fn virtual_lab(&self) -> bool {
        match &self.env {
            Some(e) => e.virtual_lab,
            None => self.plan.as_ref().is_some_and(Plan::is_builtin),
        }
    }

    /// The link speed in bit/s, when the campaign gives it.
    pub fn link_bps(&self) -> Option<f64> {
        self.plan.as_ref().and_then(|c| c.link_bps)
    }

    /// The mean frame size of traffic profile `name`.
    pub fn mean_size(&self, traffic: &str) -> Option<f64> {
        let t = self
            .plan
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
    ) -> impl Iterator<Item = &'a RunRecord> {
        self.records()
            .iter()
            .filter(move |r| r.header.config == config && r.header.traffic == traffic)
    }
}
