//! Comparisons of results folders, from their `.pps` files: between the
//! configurations of one folder, or of the same configuration and traffic
//! between folders (before and after a kernel change, as in the netbenches
//! READMEs).

use std::path::{Path, PathBuf};

use pktlab_stats::ministat::{parse_values, Dataset, ParseOptions};

use crate::folder::{ResultsDir, RUNS_DIR};
use crate::records::RunRecord;
use crate::summary::{parse_pps_name, pps_name, pps_text, CampaignSummary};
use crate::CampaignError;
use pktlab_loss::drops::{Drops, LossSum};

/// The `.pps` files of one results folder.
#[derive(Clone, Debug, PartialEq)]
pub struct Folder {
    pub path: PathBuf,
    /// Configurations in campaign order (from `summary.json`), else sorted.
    pub configs: Vec<String>,
    pub traffics: Vec<String>,
    /// (config, traffic, values).
    pub sets: Vec<(String, String, Vec<f64>)>,
    /// The run files (none in a BSDRP folder).
    pub runs: Vec<RunRecord>,
}

impl Folder {
    pub fn values(&self, config: &str, traffic: &str) -> Option<&[f64]> {
        self.sets
            .iter()
            .find(|(c, t, _)| c == config && t == traffic)
            .map(|(_, _, v)| v.as_slice())
    }

    /// Where the lost frames of `config`'s runs of `traffic` went, summed
    /// over the runs; None when no run recorded it.
    pub fn losses(&self, config: &str, traffic: &str) -> Option<LossSum> {
        let drops: Vec<&Drops> = self
            .runs
            .iter()
            .filter(|r| r.header.config == config && r.header.traffic == traffic)
            .filter_map(|r| r.result.drops.as_ref())
            .collect();
        (!drops.is_empty()).then(|| LossSum::of(drops))
    }
}

/// One ministat comparison to print: a title and its data sets, the first
/// being the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub title: String,
    pub datasets: Vec<Dataset>,
    /// Where each data set's lost frames went (its name, the sum over its
    /// runs), for those whose runs recorded it.
    pub losses: Vec<(String, LossSum)>,
}

fn bad(path: &Path, why: String) -> CampaignError {
    CampaignError::Results {
        path: path.to_path_buf(),
        why,
    }
}

/// In a pktlab folder the `.pps` files are written from the run files:
/// one that says otherwise was edited (or is older than the last run), and
/// comparing it would give numbers the runs do not support. A BSDRP
/// folder has no `runs/` and is taken as it is.
fn check_against_runs(
    runs: Option<&[RunRecord]>,
    path: &Path,
    config: &str,
    traffic: &str,
    data: &[u8],
) -> Result<(), String> {
    let Some(runs) = runs else {
        return Ok(());
    };
    let values: Vec<f64> = runs
        .iter()
        .filter(|r| r.header.config == config && r.header.traffic == traffic)
        .map(|r| r.result.forwarded_pps)
        .collect();
    if pps_text(&values).as_bytes() == data {
        return Ok(());
    }
    Err(format!(
        "does not match the {} run files of {config}.{traffic} in {RUNS_DIR}/ (edited by hand?); \
         pktlab bench --resume {} writes it again from them",
        values.len(),
        path.display()
    ))
}

/// Reads every `<config>.<traffic>.pps` of `path`.
pub fn load(path: &Path) -> Result<Folder, CampaignError> {
    let entries = std::fs::read_dir(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad(path, "no such results folder".into()),
        std::io::ErrorKind::NotADirectory => bad(path, "not a folder".into()),
        _ => CampaignError::file(path, e),
    })?;
    // A damaged run file is named by its own error.
    let runs = if path.join(RUNS_DIR).is_dir() {
        let dir = ResultsDir {
            path: path.to_path_buf(),
        };
        Some(dir.runs()?)
    } else {
        None
    };
    let mut sets = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((config, traffic)) = parse_pps_name(&name) else {
            continue;
        };
        let data = std::fs::read(entry.path()).map_err(|e| CampaignError::file(entry.path(), e))?;
        check_against_runs(runs.as_deref(), path, config, traffic, &data)
            .map_err(|why| bad(&entry.path(), why))?;
        let values = parse_values(&name, &data, &ParseOptions::default())
            .map_err(|e| bad(&entry.path(), e.to_string()))?;
        sets.push((config.to_string(), traffic.to_string(), values));
    }
    if sets.is_empty() {
        return Err(bad(
            path,
            "no .pps files: not a pktlab or BSDRP results folder".into(),
        ));
    }
    sets.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut configs: Vec<String> = Vec::new();
    let mut traffics: Vec<String> = Vec::new();
    // The campaign's own order, when summary.json says it.
    let dir = ResultsDir {
        path: path.to_path_buf(),
    };
    if let Ok(Some(summary)) = CampaignSummary::read(&dir) {
        configs = summary.configs;
        traffics = summary.traffics;
    }
    for (c, t, _) in &sets {
        if !configs.contains(c) {
            configs.push(c.clone());
        }
        if !traffics.contains(t) {
            traffics.push(t.clone());
        }
    }
    configs.retain(|c| sets.iter().any(|s| &s.0 == c));
    traffics.retain(|t| sets.iter().any(|s| &s.1 == t));
    Ok(Folder {
        path: path.to_path_buf(),
        configs,
        traffics,
        sets,
        runs: runs.unwrap_or_default(),
    })
}

/// Within one folder: for each traffic profile, every configuration
/// against the first.
pub fn between_configs(f: &Folder) -> Vec<Block> {
    f.traffics
        .iter()
        .map(|t| Block {
            title: format!("Forwarded packets per second, traffic {t}:"),
            datasets: f
                .configs
                .iter()
                .filter_map(|c| {
                    f.values(c, t).map(|v| Dataset {
                        name: pps_name(c, t),
                        values: v.to_vec(),
                    })
                })
                .collect(),
            losses: f
                .configs
                .iter()
                .filter(|c| f.values(c, t).is_some())
                .filter_map(|c| f.losses(c, t).map(|l| (c.clone(), l)))
                .collect(),
        })
        .collect()
}

/// Between folders: for each configuration and traffic of the first folder
/// that at least one other folder has too, the first folder's runs against
/// the others'. An error when they have nothing in common.
pub fn between_folders(folders: &[Folder]) -> Result<Vec<Block>, CampaignError> {
    let (first, others) = folders.split_first().expect("at least one folder");
    let mut blocks = Vec::new();
    for c in &first.configs {
        for t in &first.traffics {
            let Some(base) = first.values(c, t) else {
                continue;
            };
            let mut datasets = vec![Dataset {
                name: first.path.join(pps_name(c, t)).display().to_string(),
                values: base.to_vec(),
            }];
            let mut losses = Vec::new();
            let mut loss_of = |f: &Folder| {
                if let Some(l) = f.losses(c, t) {
                    losses.push((f.path.display().to_string(), l));
                }
            };
            loss_of(first);
            for o in others {
                if let Some(v) = o.values(c, t) {
                    datasets.push(Dataset {
                        name: o.path.join(pps_name(c, t)).display().to_string(),
                        values: v.to_vec(),
                    });
                    loss_of(o);
                }
            }
            if datasets.len() > 1 {
                blocks.push(Block {
                    title: format!("Forwarded packets per second, configuration {c}, traffic {t}:"),
                    datasets,
                    losses,
                });
            }
        }
    }
    if blocks.is_empty() {
        return Err(bad(
            &first.path,
            "no configuration and traffic in common with the other folders".into(),
        ));
    }
    Ok(blocks)
}

/// What `pktlab compare` compares: the configurations of one folder (each
/// against the first), or the same configuration and traffic across
/// folders (the first the baseline); only `config` and `traffic` when
/// given. Nothing to compare is bad input.
pub fn blocks(
    dirs: &[PathBuf],
    config: Option<&str>,
    traffic: Option<&str>,
) -> Result<Vec<Block>, CampaignError> {
    let mut folders = Vec::new();
    for d in dirs {
        let mut f = load(d)?;
        if let Some(c) = config {
            f.configs.retain(|x| x == c);
        }
        if let Some(t) = traffic {
            f.traffics.retain(|x| x == t);
        }
        folders.push(f);
    }
    let blocks: Vec<Block> = match folders.as_slice() {
        [one] => between_configs(one),
        _ => between_folders(&folders)?,
    };
    let blocks: Vec<Block> = blocks
        .into_iter()
        .filter(|b| !b.datasets.is_empty())
        .collect();
    if blocks.is_empty() {
        return Err(CampaignError::Usage(format!(
            "nothing to compare in {}{}{}",
            dirs[0].display(),
            config
                .map(|c| format!(" for configuration {c}"))
                .unwrap_or_default(),
            traffic
                .map(|t| format!(" for traffic {t}"))
                .unwrap_or_default(),
        )));
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)], summary: Option<&str>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).unwrap();
        }
        if let Some(s) = summary {
            std::fs::write(d.path().join(crate::summary::SUMMARY_FILE), s).unwrap();
        }
        d
    }

    /// The `summary.json` of a campaign of `configs` (in that order) with
    /// no finished run.
    fn summary_of(configs: &[&str]) -> String {
        let text: String = configs
            .iter()
            .map(|c| format!("[[config]]\nname = \"{c}\"\n"))
            .collect();
        let file = crate::file::CampaignFile::parse(&text).unwrap();
        let c = crate::plan::Plan::from_file(&file, 2).unwrap();
        serde_json::to_string_pretty(&crate::summary::CampaignSummary::new(&c, &[])).unwrap()
    }

    #[test]
    fn one_folder_in_campaign_order() {
        let summary = summary_of(&["rps", "forwarding"]);
        let d = folder(
            &[
                ("rps.inet4.pps", "3\n4\n5\n"),
                ("forwarding.inet4.pps", "1\n2\n3\n"),
                ("notes.txt", "x"),
            ],
            Some(&summary),
        );
        let f = load(d.path()).unwrap();
        assert_eq!(f.configs, ["rps", "forwarding"]);
        let b = between_configs(&f);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].datasets[0].name, "rps.inet4.pps");
        assert_eq!(b[0].datasets[1].values, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn folders_pair_the_same_cells() {
        let a = folder(
            &[
                ("fwd.inet4.pps", "1\n2\n3\n"),
                ("fwd.inet6.pps", "1\n1\n1\n"),
            ],
            None,
        );
        let b = folder(&[("fwd.inet4.pps", "4\n5\n6\n")], None);
        let c = folder(&[("other.inet4.pps", "4\n5\n6\n")], None);
        let (fa, fb, fc) = (
            load(a.path()).unwrap(),
            load(b.path()).unwrap(),
            load(c.path()).unwrap(),
        );
        let blocks = between_folders(&[fa.clone(), fb]).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].datasets[1].values, [4.0, 5.0, 6.0]);
        assert!(blocks[0].title.contains("configuration fwd, traffic inet4"));
        let e = between_folders(&[fa, fc]).unwrap_err();
        assert!(e.is_usage());
    }

    #[test]
    fn bad_folders() {
        let e = load(Path::new("/nonexistent/pktlab")).unwrap_err();
        assert_eq!(e.to_string(), "/nonexistent/pktlab: no such results folder");
        let d = folder(&[("a.b.pps", "1\nx\n")], None);
        let e = load(d.path()).unwrap_err();
        assert!(e.is_usage());
        let d = folder(&[], None);
        assert!(load(d.path())
            .unwrap_err()
            .to_string()
            .ends_with("no .pps files: not a pktlab or BSDRP results folder"));
    }
}
