//! The results folder of a campaign:
//!
//! ```text
//! campaign.toml                        the campaign as run (resume reads it)
//! env.json                             kernel, CPU, NIC drivers, pktlab version
//! runs/<config>.<traffic>.<n>.jsonl    one file per finished run
//! <config>.<traffic>.pps               one value per iteration (BSDRP's format)
//! summary.json, ministat.txt, sweep.txt, runs.csv
//! trials/<config>.<traffic>.<n>.<k>.jsonl  each trial of a search method
//! ```
//!
//! A run file is written in one go, atomically, when its run has finished:
//! its existence means the run is done, and a run cut short by Ctrl-C
//! leaves nothing behind. That is what resume relies on.
//!
//! This module owns the folder: its layout, its file names, and writing and
//! reading its records (the types are in [`super::records`]).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;

use crate::atomic;
use crate::records::{
    EnvRecord, RunFigures, RunHeader, RunRecord, SummaryOrder, Typed, HEADER_TYPE, RESULT_TYPE,
};
use crate::CampaignError;

pub const CAMPAIGN_FILE: &str = "campaign.toml";
pub const ENV_FILE: &str = "env.json";
pub const SUMMARY_FILE: &str = "summary.json";
pub const MINISTAT_FILE: &str = "ministat.txt";
pub const SWEEP_FILE: &str = "sweep.txt";
pub const RUNS_CSV_FILE: &str = "runs.csv";
pub const RUNS_DIR: &str = "runs";
/// The trials of methods that run several per run (a search).
pub const TRIALS_DIR: &str = "trials";

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
    /// Where the run's lost frames went (None: not recorded).
    pub drops: Option<pktlab_loss::drops::Drops>,
}

/// `<config>.<traffic>.pps`: the name of a cell's values file, which is
/// also its ministat data set name (BSDRP's bench-lab names them so).
pub fn pps_name(config: &str, traffic: &str) -> String {
    format!("{config}.{traffic}.pps")
}

/// The configuration and traffic a `.pps` file name stands for.
pub fn parse_pps_name(name: &str) -> Option<(&str, &str)> {
    name.strip_suffix(".pps")?.split_once('.')
}

/// `<config>.<traffic>.<iteration>.jsonl`.
pub fn run_name(config: &str, traffic: &str, iteration: usize) -> String {
    format!("{config}.{traffic}.{iteration}.jsonl")
}

/// `<config>.<traffic>.<iteration>.<trial>.jsonl`.
pub fn trial_name(config: &str, traffic: &str, iteration: usize, trial: usize) -> String {
    format!("{config}.{traffic}.{iteration}.{trial}.jsonl")
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
                return Err(CampaignError::Results {
                    path: path.to_path_buf(),
                    why: "already exists and is not empty (use --resume to carry on a campaign)"
                        .into(),
                });
            }
        }
        let runs = path.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|e| CampaignError::file(&runs, e))?;
        Ok(ResultsDir {
            path: path.to_path_buf(),
        })
    }

    /// An existing folder, to resume: it must hold a campaign file. Files
    /// half-written by a killed process are removed.
    pub fn open(path: &Path) -> Result<ResultsDir, CampaignError> {
        let dir = ResultsDir {
            path: path.to_path_buf(),
        };
        if !dir.campaign_file().is_file() {
            return Err(CampaignError::Results {
                path: path.to_path_buf(),
                why: format!("not a results folder: it has no {CAMPAIGN_FILE}"),
            });
        }
        let runs = path.join(RUNS_DIR);
        std::fs::create_dir_all(&runs).map_err(|e| CampaignError::file(&runs, e))?;
        atomic::remove_leftovers(&runs)?;
        atomic::remove_leftovers(path)?;
        if dir.has_env() {
            let env = dir.env()?;
            check_version(&env.pktlab_version).map_err(|why| CampaignError::Results {
                path: path.join(ENV_FILE),
                why,
            })?;
        }
        // Every finished run must read: resume decides from them what to
        // run, so a damaged one stops it here, before the lab is touched.
        dir.runs()?;
        let trials = path.join(TRIALS_DIR);
        if trials.is_dir() {
            atomic::remove_leftovers(&trials)?;
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

    /// `trials/<config>.<traffic>.<iteration>.<trial>.jsonl`.
    pub fn trial_file(&self, run: &RunHeader, trial: usize) -> PathBuf {
        self.path
            .join(TRIALS_DIR)
            .join(trial_name(&run.config, &run.traffic, run.iteration, trial))
    }

    /// Writes one trial of a run atomically, in the run file's format.
    pub fn write_trial(&self, trial: usize, run: &RunRecord) -> Result<(), CampaignError> {
        let path = self.trial_file(&run.header, trial);
        let dir = self.path.join(TRIALS_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| CampaignError::file(&dir, e))?;
        atomic::write_atomic(&path, run.to_jsonl().as_bytes())
    }

    /// `<config>.<traffic>.pps`.
    pub fn pps_file(&self, config: &str, traffic: &str) -> PathBuf {
        self.path.join(pps_name(config, traffic))
    }

    /// Writes `name` in the folder atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), CampaignError> {
        atomic::write_atomic(&self.path.join(name), bytes)
    }

    /// Writes a finished run's file atomically.
    pub fn write_run(&self, run: &RunRecord) -> Result<(), CampaignError> {
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

    pub fn has_env(&self) -> bool {
        self.path.join(ENV_FILE).exists()
    }

    /// Every finished run, read from its file, sorted by config, traffic and
    /// iteration.
    pub fn runs(&self) -> Result<Vec<RunOutcome>, CampaignError> {
        let dir = self.path.join(RUNS_DIR);
        let entries = std::fs::read_dir(&dir).map_err(|e| CampaignError::file(&dir, e))?;
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
            (&a.config, &a.traffic, a.iteration).cmp(&(&b.config, &b.traffic, b.iteration))
        });
        Ok(out)
    }
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| CampaignError::file(path, e))?;
    serde_json::from_str(&text).map_err(|e| CampaignError::Results {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

/// `summary.json` of folder `path`, read as a `CampaignSummary` (or as a
/// part of one; generic so that the folder's owner does not import the
/// summary, which imports the folder's run records).
pub fn read_summary<T: DeserializeOwned>(path: &Path) -> Result<T, CampaignError> {
    read_json(&path.join(SUMMARY_FILE))
}

/// The campaign order `summary.json` of folder `path` gives; None when it
/// has no readable one (a BSDRP folder has only `.pps` files).
pub fn summary_order(path: &Path) -> Option<SummaryOrder> {
    read_json(&path.join(SUMMARY_FILE)).ok()
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

/// Reads a run file's header and result lines.
pub fn read_run(path: &Path) -> Result<RunOutcome, CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| CampaignError::file(path, e))?;
    let bad = |why: &str| CampaignError::Results {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    check_whole(&text).map_err(|e| bad(&e))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().ok_or_else(|| bad("empty run file"))?;
    let last = lines
        .next_back()
        .ok_or_else(|| bad("run file without a result line"))?;
    let h: Typed<RunHeader> =
        serde_json::from_str(first).map_err(|e| bad(&format!("bad first line: {e}")))?;
    let r: Typed<RunFigures> =
        serde_json::from_str(last).map_err(|e| bad(&format!("bad last line: {e}")))?;
    if h.kind != HEADER_TYPE || r.kind != RESULT_TYPE {
        return Err(bad(
            "a run file starts with a \"run\" line and ends with a \"result\" line",
        ));
    }
    let (h, r) = (h.record, r.record);
    check_version(&h.pktlab_version).map_err(|e| bad(&e))?;
    Ok(RunOutcome {
        config: h.config,
        traffic: h.traffic,
        iteration: h.iteration,
        started_at: h.started_at,
        forwarded_pps: r.forwarded_pps,
        offered_pps: r.offered_pps,
        loss_ratio: r.loss_ratio,
        drops: r.drops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        // Checked with `date -u -d @N +%Y%m%d-%H%M%S`.
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_700_000_000), "20231114-221320");
        assert_eq!(utc_stamp(4_102_444_799), "20991231-235959");
    }

    /// A run file as pktlab wrote it before its records were typed (keys
    /// in alphabetical order, no `io`), trimmed of nothing the reader needs.
    pub(crate) fn todays_run_file(iteration: usize, started_at: u64, fwd: f64, off: f64) -> String {
        let header = format!(
            r#"{{"campaign":"bench","config":"forwarding","config_text":"","cpu_model":"Test CPU","cpus":2,"interrupts":"veth has no interrupts","iteration":{iteration},"kernel":"6.1.0","lab":"built-in lab pktlab","pktlab_version":"0.1.0","settings":{{"duration":3.0,"interval":1.0,"trim_head":1,"trim_tail":1}},"started_at":{started_at},"traffic":"inet4","traffic_profile":{{"dst":"198.18.1.1:2000","name":"inet4","rate_pps":null,"sizes":"64","src":"198.18.0.1","threads":1}},"type":"run","virtual_lab":true}}"#
        );
        let second = r#"{"cpus":[{"cpu":0,"idle":50.0,"irq":0.0,"softirq":25.0,"steal":0.0,"system":20.0,"user":5.0}],"ifaces":[{"iface":"g0","ns":"pktlab-gen","role":"gen","rx_bytes":0,"rx_dropped":0,"rx_errors":0,"rx_fifo_errors":0,"rx_missed_errors":0,"rx_packets":0,"tx_bytes":6400,"tx_dropped":0,"tx_errors":0,"tx_packets":100}],"interrupts":[],"seconds":1.0,"t":1,"type":"second"}"#;
        let lost = (off - fwd) as u64 * 3;
        let result = format!(
            r#"{{"finished_at":{},"forwarded_pps":{fwd},"lab_counters":[],"lost":{lost},"loss_ratio":{},"offered_pps":{off},"requested_pps":null,"rx":{{}},"rx_samples":[{fwd}],"tx":{{}},"tx_samples":[{off}],"type":"result"}}"#,
            started_at + 4,
            1.0 - fwd / off
        );
        format!("{header}\n{second}\n{result}\n")
    }

    #[test]
    fn a_folder_in_todays_format_loads() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r");
        let dir = ResultsDir::create(&path).unwrap();
        let runs = path.join(RUNS_DIR);
        std::fs::write(
            runs.join("forwarding.inet4.2.jsonl"),
            todays_run_file(2, 17, 750.0, 1000.0),
        )
        .unwrap();
        std::fs::write(
            runs.join("forwarding.inet4.1.jsonl"),
            todays_run_file(1, 5, 1000.5, 2000.0),
        )
        .unwrap();
        let runs = dir.runs().unwrap();
        assert_eq!(
            runs,
            [
                RunOutcome {
                    config: "forwarding".into(),
                    traffic: "inet4".into(),
                    iteration: 1,
                    started_at: 5,
                    forwarded_pps: 1000.5,
                    offered_pps: 2000.0,
                    loss_ratio: 1.0 - 1000.5 / 2000.0,
                    drops: None,
                },
                RunOutcome {
                    config: "forwarding".into(),
                    traffic: "inet4".into(),
                    iteration: 2,
                    started_at: 17,
                    forwarded_pps: 750.0,
                    offered_pps: 1000.0,
                    loss_ratio: 0.25,
                    drops: None,
                }
            ]
        );
        // Every line is a typed record: the header (AF_PACKET, the only
        // backend before it was recorded) and the second too.
        let text = std::fs::read_to_string(dir.run_file("forwarding", "inet4", 2)).unwrap();
        let mut lines = text.lines();
        let h: Typed<RunHeader> = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(h.record.io, pktlab_remote::endpoint::BenchIo::Afpacket);
        assert_eq!(
            h.record.settings.duration,
            std::time::Duration::from_secs(3)
        );
        assert_eq!(h.record.traffic_profile.dst, "198.18.1.1:2000");
        let s: Typed<crate::records::Second> = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(s.kind, "second");
        assert_eq!(s.record.ifaces[0].counters.tx_packets, 100);
        assert_eq!(s.record.cpus[0].softirq, 25.0);
        let r: Typed<RunFigures> = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(r.record.lost, 750);
        assert_eq!(r.record.finished_at, Some(21));

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
        assert_eq!(dir.runs().unwrap().len(), 2);
    }

    #[test]
    fn file_names() {
        assert_eq!(pps_name("rps", "inet4-64"), "rps.inet4-64.pps");
        assert_eq!(
            parse_pps_name("rps.inet4-64.pps"),
            Some(("rps", "inet4-64"))
        );
        assert_eq!(parse_pps_name("rps.pps"), None);
        assert_eq!(parse_pps_name("rps.inet4.txt"), None);
        assert_eq!(run_name("a", "inet6", 3), "a.inet6.3.jsonl");
        assert_eq!(trial_name("a", "inet6", 3, 12), "a.inet6.3.12.jsonl");
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
        let whole = todays_run_file(1, 5, 1000.0, 2000.0);
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
