//! A BSDRP/netbenches folder of `<label>.<config>.pps` files as history
//! records: each file holds one value per line (a run's forwarded pps),
//! each label becomes one record with every configuration's runs. Other
//! files (the `bench.*` logs beside them) are counted and left alone.

use std::collections::BTreeMap;
use std::path::Path;

use super::identity::{check_label, sha256_hex};
use crate::order;
use crate::record::{CampaignRecord, RunRecord, Source};
use crate::HistoryError;

/// How to read the folder.
#[derive(Clone, Debug, Default)]
pub struct PpsOptions {
    /// The traffic and frame size the runs had (netbenches' file names do
    /// not say); empty when unknown.
    pub traffic: String,
    pub size: String,
    /// The labels in order (`--order FILE`); None: natural order.
    pub order: Option<Vec<String>>,
}

/// What the folder holds.
#[derive(Clone, Debug)]
pub struct PpsFolder {
    /// One record per label, in label order.
    pub records: Vec<CampaignRecord>,
    /// `.pps` files read.
    pub files: usize,
    /// Other entries, left alone.
    pub ignored: usize,
}

/// `<label>.<config>.pps` split at its last inner dot (a label may hold
/// dots, as `11.0-RELEASE` does; configuration names do not).
pub fn parse_name(name: &str) -> Option<(&str, &str)> {
    let stem = name.strip_suffix(".pps")?;
    let (label, config) = stem.rsplit_once('.')?;
    (!label.is_empty() && !config.is_empty()).then_some((label, config))
}

/// The values of one `.pps` file's text: one per line, blank lines and
/// `#` comments skipped (as ministat reads them).
pub fn parse_values(path: &Path, text: &str) -> Result<Vec<f64>, HistoryError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => out.push(v),
            _ => {
                return Err(HistoryError::Usage(format!(
                    "{} line {}: '{}' is not a packet rate (one value per line, in pps)",
                    path.display(),
                    i + 1,
                    t.escape_default()
                )))
            }
        }
    }
    if out.is_empty() {
        return Err(HistoryError::Usage(format!(
            "{}: no value in it",
            path.display()
        )));
    }
    Ok(out)
}

/// One label's files: configuration → (file bytes, values).
type LabelFiles = BTreeMap<String, (Vec<u8>, Vec<f64>)>;

/// Reads folder `dir`.
pub fn read_pps_folder(dir: &Path, options: &PpsOptions) -> Result<PpsFolder, HistoryError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        let why = crate::error::os_text(&e);
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                HistoryError::Usage(format!("{}: {why}", dir.display()))
            }
            _ => HistoryError::File {
                path: dir.to_path_buf(),
                why,
            },
        }
    })?;
    let mut labels: BTreeMap<String, LabelFiles> = BTreeMap::new();
    let (mut files, mut ignored) = (0, 0);
    for entry in entries {
        let entry = entry.map_err(|e| HistoryError::File {
            path: dir.to_path_buf(),
            why: crate::error::os_text(&e),
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Some((label, config)) = parse_name(&name).filter(|_| path.is_file()) else {
            ignored += 1;
            continue;
        };
        check_label(label).map_err(|e| HistoryError::Usage(format!("{}: {e}", path.display())))?;
        let bytes = std::fs::read(&path).map_err(|e| HistoryError::File {
            path: path.clone(),
            why: crate::error::os_text(&e),
        })?;
        let values = parse_values(&path, &String::from_utf8_lossy(&bytes))?;
        labels
            .entry(label.to_string())
            .or_default()
            .insert(config.to_string(), (bytes, values));
        files += 1;
    }
    if files == 0 {
        return Err(HistoryError::Usage(format!(
            "{}: no <label>.<config>.pps file in it",
            dir.display()
        )));
    }
    let mut names: Vec<String> = labels.keys().cloned().collect();
    match &options.order {
        Some(list) => {
            if let Some(missing) = names.iter().find(|l| !list.contains(l)) {
                return Err(HistoryError::Usage(format!(
                    "label '{missing}' (of {}) is not in the order file",
                    dir.display()
                )));
            }
            names.sort_by_key(|l| list.iter().position(|x| x == l));
        }
        None => names.sort_by(|a, b| order::natural(a, b)),
    }
    let folder = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let name = folder.file_name().map_or_else(
        || folder.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let records = names
        .iter()
        .map(|label| record(label, &labels[label], options, &name, &folder))
        .collect();
    Ok(PpsFolder {
        records,
        files,
        ignored,
    })
}

fn record(
    label: &str,
    files: &LabelFiles,
    options: &PpsOptions,
    name: &str,
    folder: &Path,
) -> CampaignRecord {
    let mut parts: Vec<&[u8]> = vec![
        b"pps",
        label.as_bytes(),
        options.traffic.as_bytes(),
        options.size.as_bytes(),
    ];
    for (config, (bytes, _)) in files {
        parts.push(config.as_bytes());
        parts.push(bytes);
    }
    let runs = files
        .iter()
        .flat_map(|(config, (_, values))| {
            values.iter().enumerate().map(move |(i, &v)| RunRecord {
                config: config.clone(),
                traffic: options.traffic.clone(),
                size: options.size.clone(),
                iteration: i as i64 + 1,
                started_at: None,
                forwarded_pps: Some(v),
                offered_pps: None,
                loss_ratio: None,
                goals: Vec::new(),
                latencies: Vec::new(),
                stateful: Vec::new(),
            })
        })
        .collect();
    CampaignRecord {
        identity: format!("pps-{}", sha256_hex(&parts)),
        source: Source::Pps,
        name: name.to_string(),
        label: label.to_string(),
        started_at: None,
        host: None,
        kernel: None,
        kernel_build: None,
        os: None,
        cpu_model: None,
        cpus: None,
        dut: None,
        dut_uname: None,
        virtual_lab: None,
        pktlab_version: None,
        results_dir: folder.display().to_string(),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            parse_name("293069.fastforwarding.pps"),
            Some(("293069", "fastforwarding"))
        );
        assert_eq!(
            parse_name("11.0-RELEASE.pf.pps"),
            Some(("11.0-RELEASE", "pf"))
        );
        assert_eq!(parse_name("forwarding.pps"), None);
        assert_eq!(parse_name(".x.pps"), None);
        assert_eq!(parse_name("bench.293069.fastforwarding.1.sender"), None);
    }

    #[test]
    fn values_and_bad_lines() {
        let p = Path::new("r1.ff.pps");
        assert_eq!(
            parse_values(p, "778787\n\n# x\n 776867.5 \n").unwrap(),
            [778787.0, 776867.5]
        );
        let e = parse_values(p, "1\n2\nabc\n").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "r1.ff.pps line 3: 'abc' is not a packet rate (one value per line, in pps)"
        );
        assert!(parse_values(p, "-5\n").is_err());
        assert!(parse_values(p, "nan\n").is_err());
        assert!(parse_values(p, "\n")
            .unwrap_err()
            .to_string()
            .contains("no value"));
    }

    #[test]
    fn a_folder_by_label_naturally_or_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("r10.ff.pps"), "100\n102\n").unwrap();
        std::fs::write(d.join("r9.ff.pps"), "90\n").unwrap();
        std::fs::write(d.join("r9.pf.pps"), "50\n51\n52\n").unwrap();
        std::fs::write(d.join("bench.r9.ff.1.sender"), "log").unwrap();
        std::fs::write(d.join("r9.ff.info"), "info").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let f = read_pps_folder(d, &PpsOptions::default()).unwrap();
        assert_eq!((f.files, f.ignored), (3, 3));
        let labels: Vec<&str> = f.records.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["r9", "r10"]);
        let r9 = &f.records[0];
        assert_eq!(r9.runs.len(), 4);
        assert_eq!(
            r9.runs
                .iter()
                .map(|r| (r.config.as_str(), r.iteration, r.forwarded_pps.unwrap()))
                .collect::<Vec<_>>(),
            [
                ("ff", 1, 90.0),
                ("pf", 1, 50.0),
                ("pf", 2, 51.0),
                ("pf", 3, 52.0)
            ]
        );
        // The same files give the same identity; another value another.
        let again = read_pps_folder(d, &PpsOptions::default()).unwrap();
        assert_eq!(again.records[0].identity, r9.identity);
        assert_ne!(f.records[1].identity, r9.identity);
        let ordered = PpsOptions {
            order: Some(vec!["r10".into(), "r9".into()]),
            ..PpsOptions::default()
        };
        let f = read_pps_folder(d, &ordered).unwrap();
        assert_eq!(f.records[0].label, "r10");
        let short = PpsOptions {
            order: Some(vec!["r10".into()]),
            ..PpsOptions::default()
        };
        let e = read_pps_folder(d, &short).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("label 'r9'"), "{e}");
        std::fs::write(d.join("r11.ff.pps"), "1\nx\n").unwrap();
        assert!(read_pps_folder(d, &PpsOptions::default())
            .unwrap_err()
            .is_usage());
        let e = read_pps_folder(&d.join("nowhere"), &PpsOptions::default()).unwrap_err();
        assert!(
            e.is_usage()
                && e.to_string()
                    .ends_with("nowhere: No such file or directory"),
            "{e}"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(read_pps_folder(empty.path(), &PpsOptions::default())
            .unwrap_err()
            .to_string()
            .contains("no <label>.<config>.pps file"));
    }
}
