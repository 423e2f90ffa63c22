//! The results folder of a campaign:
//!
//! ```text
//! campaign.toml                        the campaign as run (resume reads it)
//! env.json                             kernel, CPU, NIC drivers, pktlab version
//! runs/<config>.<traffic>.<n>.jsonl    one file per finished run
//! ```
//!
//! and the files of the campaign's method (a fixed-rate campaign's `.pps`
//! files and `summary.json`, [`crate::runs`]; a search's, in
//! `pktlab_search`) and of its exporters.
//!
//! A run file is written in one go, atomically, when its run has finished:
//! its existence means the run is done, and a run cut short by Ctrl-C
//! leaves nothing behind. That is what resume relies on.
//!
//! This module owns the folder's layout, its common file names, and
//! writing and reading its files; the records are typed in
//! [`crate::records`].

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;

use crate::atomic;
use crate::records::{EnvRecord, RunRecord};
use crate::CampaignError;

pub const CAMPAIGN_FILE: &str = "campaign.toml";
pub const ENV_FILE: &str = "env.json";
pub const RUNS_DIR: &str = "runs";

/// A results folder.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    pub path: PathBuf,
}

/// `<config>.<traffic>.<iteration>.jsonl`.
pub fn run_name(config: &str, traffic: &str, iteration: usize) -> String {
    format!("{config}.{traffic}.{iteration}.jsonl")
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

fn bad(path: &Path, why: impl Into<String>) -> CampaignError {
    CampaignError::Results {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

impl ResultsDir {
    /// `results/<name>-<timestamp>` under the current directory, or
    /// `...-2`, `...-3` when campaigns start within the same second: the
    /// folder is created here (`mkdir` claims it atomically), empty.
    pub fn claim_default(name: &str, unix: u64) -> Result<PathBuf, CampaignError> {
        let base = PathBuf::from("results");
        std::fs::create_dir_all(&base).map_err(|e| CampaignError::file(&base, e))?;
        let stem = format!("{name}-{}", utc_stamp(unix));
        for n in 1u32.. {
            let path = match n {
                1 => base.join(&stem),
                _ => base.join(format!("{stem}-{n}")),
            };
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(CampaignError::file(&path, e)),
            }
        }
        unreachable!("u32 ran out of folder numbers")
    }

    /// A new folder (it may exist if empty, as `mktemp -d` leaves it).
    pub fn create(path: &Path) -> Result<ResultsDir, CampaignError> {
        if path.exists() {
            let empty = std::fs::read_dir(path)
                .map_err(|e| CampaignError::file(path, e))?
                .next()
                .is_none();
            if !empty {
                return Err(bad(
                    path,
                    "already exists and is not empty (use --resume to carry on a campaign)",
                ));
            }
        }
        std::fs::create_dir_all(path).map_err(|e| CampaignError::file(path, e))?;
        Ok(ResultsDir {
            path: path.to_path_buf(),
        })
    }

    /// Removes a folder [`ResultsDir::create`] made and nothing filled: a
    /// campaign that could not start leaves no empty folder behind.
    pub fn remove_if_empty(&self) {
        let _ = std::fs::remove_dir(self.path.join(RUNS_DIR));
        let _ = std::fs::remove_dir(&self.path);
    }

    /// An existing folder, to resume: it must hold a campaign file. Files
    /// half-written by a killed process are removed.
    pub fn open(path: &Path) -> Result<ResultsDir, CampaignError> {
        let dir = ResultsDir {
            path: path.to_path_buf(),
        };
        if !dir.campaign_file().is_file() {
            return Err(bad(
                path,
                format!("not a results folder: it has no {CAMPAIGN_FILE}"),
            ));
        }
        let runs = path.join(RUNS_DIR);
        if runs.is_dir() {
            atomic::remove_leftovers(&runs)?;
        }
        atomic::remove_leftovers(path)?;
        if dir.has_env() {
            let env = dir.env()?;
            check_version(&env.pktlab_version).map_err(|why| bad(&path.join(ENV_FILE), why))?;
        }
        Ok(dir)
    }

    pub fn campaign_file(&self) -> PathBuf {
        self.path.join(CAMPAIGN_FILE)
    }

    /// `runs/<config>.<traffic>.<iteration>.jsonl`.
    pub fn run_file(&self, config: &str, traffic: &str, iteration: usize) -> PathBuf {
        self.path
            .join(RUNS_DIR)
            .join(run_name(config, traffic, iteration))
    }

    /// Writes `name` in the folder atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), CampaignError> {
        atomic::write_atomic(&self.path.join(name), bytes)
    }

    /// Makes `runs/` (a method whose runs are runs does, when it opens).
    pub fn make_runs_dir(&self) -> Result<(), CampaignError> {
        let runs = self.path.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|e| CampaignError::file(&runs, e))
    }

    /// Writes a finished run's file atomically (`runs/` made with the
    /// first).
    pub fn write_run(&self, run: &RunRecord) -> Result<(), CampaignError> {
        self.make_runs_dir()?;
        let h = &run.header;
        let path = self.run_file(&h.config, &h.traffic, h.iteration);
        atomic::write_atomic(&path, run.to_jsonl().as_bytes())
    }

    /// Writes `env.json`.
    pub fn write_env(&self, env: &EnvRecord) -> Result<(), CampaignError> {
        let text = serde_json::to_string_pretty(env).expect("records serialise") + "\n";
        self.write(ENV_FILE, text.as_bytes())
    }

    /// Reads `env.json`.
    pub fn env(&self) -> Result<EnvRecord, CampaignError> {
        read_json(&self.path.join(ENV_FILE))
    }

    /// Reads `env.json`: its record and its exact text (what names the
    /// campaign in the results history).
    pub fn env_and_text(&self) -> Result<(EnvRecord, String), CampaignError> {
        let path = self.path.join(ENV_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| CampaignError::file(&path, e))?;
        let env = serde_json::from_str(&text).map_err(|e| bad(&path, e.to_string()))?;
        Ok((env, text))
    }

    pub fn has_env(&self) -> bool {
        self.path.join(ENV_FILE).exists()
    }

    /// Every finished run, read from its file, sorted by config, traffic
    /// and iteration; none when the folder has no `runs/`.
    pub fn runs(&self) -> Result<Vec<RunRecord>, CampaignError> {
        let dir = self.path.join(RUNS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CampaignError::file(&dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| CampaignError::file(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") || name.starts_with('.') {
                continue;
            }
            out.push(read_run(&entry.path())?);
        }
        out.sort_by(|a, b| {
            let key = |r: &RunRecord| {
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

    /// Every JSON line of the folder's file `name` (none when it does not
    /// exist); a bad line is an error naming the file and the line.
    pub fn read_lines<T: DeserializeOwned>(&self, name: &str) -> Result<Vec<T>, CampaignError> {
        let path = self.path.join(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CampaignError::file(&path, e)),
        };
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| bad(&path, format!("line {}: {e}", i + 1)))
            })
            .collect()
    }

    /// Appends `line` to the folder's file `name` as JSON, rewriting the
    /// whole file atomically (a crash leaves the old file or the new one).
    pub fn append_line<T: serde::Serialize>(
        &self,
        name: &str,
        line: &T,
    ) -> Result<(), CampaignError> {
        let path = self.path.join(name);
        let mut text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(CampaignError::file(&path, e)),
        };
        let json = serde_json::to_string(line).expect("records serialise");
        text.push_str(&json);
        text.push('\n');
        atomic::write_atomic(&path, text.as_bytes())
    }

    /// The folder's JSON file `name`, or None when it does not exist.
    pub fn read_json<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, CampaignError> {
        let path = self.path.join(name);
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path).map(Some)
    }

    /// Writes `value` as the folder's JSON file `name`, pretty, atomically.
    pub fn write_json<T: serde::Serialize>(
        &self,
        name: &str,
        value: &T,
    ) -> Result<(), CampaignError> {
        let text = serde_json::to_string_pretty(value).expect("records serialise") + "\n";
        self.write(name, text.as_bytes())
    }
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| CampaignError::file(path, e))?;
    serde_json::from_str(&text).map_err(|e| bad(path, e.to_string()))
}

/// A run file is written whole, ending with a newline: one that does not
/// was cut short (a full disk, a copy interrupted) or edited.
pub fn check_whole(text: &str) -> Result<(), String> {
    if text.is_empty() || text.ends_with('\n') {
        return Ok(());
    }
    Err(
        "truncated: its last line is cut short (pktlab writes run files whole; \
         move it away and --resume runs it again)"
            .into(),
    )
}

/// `major.minor.patch` of a version text, if it is one.
fn version_triple(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.').map(|n| n.parse::<u64>().ok());
    let t = (it.next()??, it.next()??, it.next()??);
    it.next().is_none().then_some(t)
}

/// Refuses a file from a newer pktlab than this one: its format may have
/// fields this one does not know, and guessing would give wrong numbers.
/// `theirs` is the `pktlab_version` the file records; a newer patch
/// release keeps the format and is read.
pub fn check_version(theirs: &str) -> Result<(), String> {
    check_version_against(theirs, env!("CARGO_PKG_VERSION"))
}

fn check_version_against(theirs: &str, ours: &str) -> Result<(), String> {
    let Some(t) = version_triple(theirs) else {
        return Err(format!("pktlab_version '{theirs}' is not a version"));
    };
    let o = version_triple(ours).expect("our own version parses");
    if (t.0, t.1) > (o.0, o.1) {
        return Err(format!(
            "written by pktlab {theirs}, newer than this pktlab {ours}: read it with that version"
        ));
    }
    Ok(())
}

/// Reads a whole run file.
pub fn read_run(path: &Path) -> Result<RunRecord, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| CampaignError::file(path, e))?;
    check_whole(&text).map_err(|e| bad(path, e))?;
    let run = RunRecord::parse(&text).map_err(|e| bad(path, e))?;
    check_version(&run.header.pktlab_version).map_err(|e| bad(path, e))?;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::tests::record;

    #[test]
    fn stamps() {
        // Checked with `date -u -d @N +%Y%m%d-%H%M%S`.
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_700_000_000), "20231114-221320");
        assert_eq!(utc_stamp(4_102_444_799), "20991231-235959");
    }

    /// The fixture folder pktlab 0.1.0 wrote (`tests/fixtures/`).
    fn release_folder() -> ResultsDir {
        ResultsDir {
            path: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/bench-folder"),
        }
    }

    #[test]
    fn a_folder_of_the_release_reads_whole() {
        let dir = release_folder();
        let runs = dir.runs().unwrap();
        let keys: Vec<(&str, usize)> = runs
            .iter()
            .map(|r| (r.header.config.as_str(), r.header.iteration))
            .collect();
        assert_eq!(
            keys,
            [
                ("forwarding", 1),
                ("forwarding", 2),
                ("nft-stateless", 1),
                ("nft-stateless", 2)
            ]
        );
        // Its .pps files hold each run's value, as BSDRP prints it.
        let pps = std::fs::read_to_string(dir.path.join("forwarding.inet4.pps")).unwrap();
        assert_eq!(pps, "394744.51\n416917.85\n");
        let first = &runs[0];
        assert!((first.result.forwarded_pps - 394_744.51).abs() < 0.01);
        // Lost frames: 928467 of 2146304 sent, all in the DUT's backlog.
        assert_eq!(
            (first.result.lost, first.result.tx.packets),
            (928_467, 2_146_304)
        );
        let drops = first.result.drops.as_ref().unwrap();
        assert_eq!((drops.dut, drops.unexplained), (928_467, 0));
        assert_eq!(
            first.header.traffic_profile.dst,
            "198.19.10.1:2000-198.19.10.100"
        );
        // 3 s runs: a second line each, and one more for the tail.
        assert!(first.seconds.len() >= 3, "{}", first.seconds.len());
        assert_eq!(dir.env().unwrap().lab, "built-in lab hsfx");
        // Written again, a record is the same bytes as read.
        let text = std::fs::read_to_string(dir.run_file("forwarding", "inet4", 1)).unwrap();
        assert_eq!(first.to_jsonl(), text);
    }

    #[test]
    fn a_run_written_reads_back_equal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(&tmp.path().join("r")).unwrap();
        let a = record("rps", "inet6", 2, 990.5, 1000.0);
        let b = record("forwarding", "inet6", 1, 1000.0, 1000.0);
        dir.write_run(&a).unwrap();
        dir.write_run(&b).unwrap();
        assert_eq!(dir.runs().unwrap(), [b, a]);
        // Not empty any more: a second create refuses it, resume needs the
        // campaign file.
        assert!(ResultsDir::create(&dir.path).unwrap_err().is_usage());
        let e = ResultsDir::open(&dir.path).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("not a results folder: it has no campaign.toml"),
            "{e}"
        );
        dir.write(CAMPAIGN_FILE, b"").unwrap();
        std::fs::write(dir.path.join(RUNS_DIR).join(".tmpabc"), "half").unwrap();
        assert!(dir.path.join(RUNS_DIR).is_dir(), "made with the first run");
        let again = ResultsDir::open(&dir.path).unwrap();
        assert!(!dir.path.join(RUNS_DIR).join(".tmpabc").exists());
        assert_eq!(again.runs().unwrap().len(), 2);
    }

    #[test]
    fn lines_append_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(&tmp.path().join("r")).unwrap();
        assert_eq!(dir.read_lines::<u32>("x.jsonl").unwrap(), Vec::<u32>::new());
        dir.append_line("x.jsonl", &7u32).unwrap();
        dir.append_line("x.jsonl", &9u32).unwrap();
        assert_eq!(dir.read_lines::<u32>("x.jsonl").unwrap(), [7, 9]);
        std::fs::write(dir.path.join("x.jsonl"), "7\nnot json\n").unwrap();
        let e = dir.read_lines::<u32>("x.jsonl").unwrap_err().to_string();
        assert!(
            e.ends_with("x.jsonl: line 2: expected ident at line 1 column 2"),
            "{e}"
        );
        assert_eq!(dir.read_json::<u32>("none.json").unwrap(), None);
        dir.write_json("n.json", &[1, 2]).unwrap();
        assert_eq!(
            dir.read_json::<Vec<u8>>("n.json").unwrap(),
            Some(vec![1, 2])
        );
    }

    #[test]
    fn file_names() {
        assert_eq!(run_name("a", "inet6", 3), "a.inet6.3.jsonl");
    }

    #[test]
    fn newer_versions_are_refused() {
        assert_eq!(check_version_against("0.1.0", "0.1.0"), Ok(()));
        assert_eq!(check_version_against("0.1.7", "0.1.0"), Ok(()));
        assert_eq!(check_version_against("0.0.9", "0.1.0"), Ok(()));
        assert_eq!(
            check_version_against("0.2.0", "0.1.3"),
            Err(
                "written by pktlab 0.2.0, newer than this pktlab 0.1.3: read it with that version"
                    .into()
            )
        );
        assert!(check_version_against("1.0.0-rc1", "0.9.0").is_err());
        assert_eq!(
            check_version_against("next", "0.1.0"),
            Err("pktlab_version 'next' is not a version".into())
        );
    }

    #[test]
    fn truncated_and_newer_run_files_name_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let whole = record("f", "inet4", 1, 1000.0, 2000.0).to_jsonl();
        let p = tmp.path().join("f.inet4.1.jsonl");
        std::fs::write(&p, &whole[..whole.len() - 20]).unwrap();
        let e = read_run(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: truncated: its last line is cut short (pktlab writes run files whole; \
                 move it away and --resume runs it again)",
                p.display()
            )
        );
        std::fs::write(&p, whole.replace("\"0.1.0\"", "\"7.0.0\"")).unwrap();
        let e = read_run(&p).unwrap_err().to_string();
        assert!(e.ends_with(": written by pktlab 7.0.0, newer than this pktlab 0.1.0: read it with that version"), "{e}");
    }

    #[test]
    fn a_run_file_without_result_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.jsonl");
        std::fs::write(&p, "{\"type\":\"run\"}\n").unwrap();
        assert!(read_run(&p).is_err());
    }
}
