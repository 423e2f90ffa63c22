//! The results folder of a campaign:
//!
//! ```text
//! campaign.toml                        the campaign as run (resume reads it)
//! env.json                             kernel, CPU, NIC drivers, pktlab version
//! runs/<config>.<traffic>.<n>.jsonl    one file per finished run
//! <config>.<traffic>.pps               one value per iteration (BSDRP's format)
//! summary.json, ministat.txt, sweep.txt
//! ```
//!
//! A run file is written in one go, atomically, when its run has finished:
//! its existence means the run is done, and a run cut short by Ctrl-C
//! leaves nothing behind. That is what resume relies on.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::atomic;
use crate::BenchError;

pub const CAMPAIGN_FILE: &str = "campaign.toml";
pub const ENV_FILE: &str = "env.json";
pub const SUMMARY_FILE: &str = "summary.json";
pub const MINISTAT_FILE: &str = "ministat.txt";
pub const SWEEP_FILE: &str = "sweep.txt";
pub const RUNS_DIR: &str = "runs";

/// A results folder.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    pub path: PathBuf,
}

/// What a finished run file says about its run (its first and last lines).
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    pub config: String,
    pub traffic: String,
    pub iteration: usize,
    pub started_at: u64,
    pub forwarded_pps: f64,
    pub offered_pps: f64,
    pub loss_ratio: f64,
}

#[derive(Deserialize)]
struct HeaderLine {
    #[serde(rename = "type")]
    kind: String,
    config: String,
    traffic: String,
    iteration: usize,
    started_at: u64,
}

#[derive(Deserialize)]
struct ResultLine {
    #[serde(rename = "type")]
    kind: String,
    forwarded_pps: f64,
    offered_pps: f64,
    loss_ratio: f64,
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYYmmdd-HHMMSS` in UTC. Hand-written (a few lines of calendar
/// arithmetic, Howard Hinnant's `civil_from_days`) rather than a date crate
/// for one folder name.
pub fn utc_stamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

impl ResultsDir {
    /// `results/<name>-<timestamp>` under the current directory, or
    /// `...-2`, `...-3` when campaigns start within the same second: the
    /// folder is created here (`mkdir` claims it atomically), empty.
    pub fn claim_default(name: &str, unix: u64) -> Result<PathBuf, BenchError> {
        let base = PathBuf::from("results");
        std::fs::create_dir_all(&base).map_err(|e| BenchError::file(&base, e))?;
        let stem = format!("{name}-{}", utc_stamp(unix));
        for n in 1u32.. {
            let path = match n {
                1 => base.join(&stem),
                _ => base.join(format!("{stem}-{n}")),
            };
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(BenchError::file(&path, e)),
            }
        }
        unreachable!("u32 ran out of folder numbers")
    }

    /// A new folder (it may exist if empty, as `mktemp -d` leaves it).
    pub fn create(path: &Path) -> Result<ResultsDir, BenchError> {
        if path.exists() {
            let empty = std::fs::read_dir(path)
                .map_err(|e| BenchError::file(path, e))?
                .next()
                .is_none();
            if !empty {
                return Err(BenchError::Results {
                    path: path.to_path_buf(),
                    why: "already exists and is not empty (use --resume to carry on a campaign)"
                        .into(),
                });
            }
        }
        let runs = path.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|e| BenchError::file(&runs, e))?;
        Ok(ResultsDir {
            path: path.to_path_buf(),
        })
    }

    /// An existing folder, to resume: it must hold a campaign file. Files
    /// half-written by a killed process are removed.
    pub fn open(path: &Path) -> Result<ResultsDir, BenchError> {
        let dir = ResultsDir {
            path: path.to_path_buf(),
        };
        if !dir.campaign_file().is_file() {
            return Err(BenchError::Results {
                path: path.to_path_buf(),
                why: format!("not a results folder: it has no {CAMPAIGN_FILE}"),
            });
        }
        let runs = path.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|e| BenchError::file(&runs, e))?;
        atomic::remove_leftovers(&runs)?;
        atomic::remove_leftovers(path)?;
        Ok(dir)
    }

    pub fn campaign_file(&self) -> PathBuf {
        self.path.join(CAMPAIGN_FILE)
    }

    /// `runs/<config>.<traffic>.<iteration>.jsonl`.
    pub fn run_file(&self, config: &str, traffic: &str, iteration: usize) -> PathBuf {
        self.path
            .join(RUNS_DIR)
            .join(format!("{config}.{traffic}.{iteration}.jsonl"))
    }

    /// `<config>.<traffic>.pps`.
    pub fn pps_file(&self, config: &str, traffic: &str) -> PathBuf {
        self.path.join(format!("{config}.{traffic}.pps"))
    }

    /// Writes `name` in the folder atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), BenchError> {
        atomic::write_atomic(&self.path.join(name), bytes)
    }

    /// Writes a finished run's JSON lines atomically.
    pub fn write_run(
        &self,
        config: &str,
        traffic: &str,
        iteration: usize,
        lines: &[serde_json::Value],
    ) -> Result<(), BenchError> {
        let mut text = String::new();
        for l in lines {
            text += &l.to_string();
            text.push('\n');
        }
        atomic::write_atomic(&self.run_file(config, traffic, iteration), text.as_bytes())
    }

    /// Every finished run, read from its file, sorted by config, traffic and
    /// iteration.
    pub fn runs(&self) -> Result<Vec<RunOutcome>, BenchError> {
        let dir = self.path.join(RUNS_DIR);
        let entries = std::fs::read_dir(&dir).map_err(|e| BenchError::file(&dir, e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| BenchError::file(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") || name.starts_with('.') {
                continue;
            }
            out.push(read_run(&entry.path())?);
        }
        out.sort_by(|a, b| {
            (&a.config, &a.traffic, a.iteration).cmp(&(&b.config, &b.traffic, b.iteration))
        });
        Ok(out)
    }
}

/// Reads a run file's header and result lines.
pub fn read_run(path: &Path) -> Result<RunOutcome, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::file(path, e))?;
    let bad = |why: &str| BenchError::Results {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().ok_or_else(|| bad("empty run file"))?;
    let last = lines
        .next_back()
        .ok_or_else(|| bad("run file without a result line"))?;
    let h: HeaderLine =
        serde_json::from_str(first).map_err(|e| bad(&format!("bad first line: {e}")))?;
    let r: ResultLine =
        serde_json::from_str(last).map_err(|e| bad(&format!("bad last line: {e}")))?;
    if h.kind != "run" || r.kind != "result" {
        return Err(bad(
            "a run file starts with a \"run\" line and ends with a \"result\" line",
        ));
    }
    Ok(RunOutcome {
        config: h.config,
        traffic: h.traffic,
        iteration: h.iteration,
        started_at: h.started_at,
        forwarded_pps: r.forwarded_pps,
        offered_pps: r.offered_pps,
        loss_ratio: r.loss_ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stamps() {
        // Checked with `date -u -d @N +%Y%m%d-%H%M%S`.
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_700_000_000), "20231114-221320");
        assert_eq!(utc_stamp(4_102_444_799), "20991231-235959");
    }

    #[test]
    fn folder_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r");
        let dir = ResultsDir::create(&path).unwrap();
        let header = json!({"type": "run", "config": "a", "traffic": "inet4", "iteration": 2, "started_at": 17});
        let second = json!({"type": "second", "t": 1});
        let result = json!({"type": "result", "forwarded_pps": 1000.5, "offered_pps": 2000.0, "loss_ratio": 0.5});
        dir.write_run("a", "inet4", 2, &[header, second, result])
            .unwrap();
        let runs = dir.runs().unwrap();
        assert_eq!(
            runs,
            [RunOutcome {
                config: "a".into(),
                traffic: "inet4".into(),
                iteration: 2,
                started_at: 17,
                forwarded_pps: 1000.5,
                offered_pps: 2000.0,
                loss_ratio: 0.5,
            }]
        );
        // Not empty any more: a second create refuses it, resume needs the
        // campaign file.
        assert!(ResultsDir::create(&path).unwrap_err().is_usage());
        let e = ResultsDir::open(&path).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("not a results folder: it has no campaign.toml"),
            "{e}"
        );
        dir.write(CAMPAIGN_FILE, b"").unwrap();
        std::fs::write(path.join(RUNS_DIR).join(".tmpabc"), "half").unwrap();
        let dir = ResultsDir::open(&path).unwrap();
        assert!(!path.join(RUNS_DIR).join(".tmpabc").exists());
        assert_eq!(dir.runs().unwrap().len(), 1);
    }

    #[test]
    fn a_run_file_without_result_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.jsonl");
        std::fs::write(&p, "{\"type\":\"run\"}\n").unwrap();
        assert!(read_run(&p).is_err());
    }
}
