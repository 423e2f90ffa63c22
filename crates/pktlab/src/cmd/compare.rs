//! `pktlab compare`: ministat comparisons of results folders.

use std::path::PathBuf;

use pktlab_campaign::compare::{self, Block};
use pktlab_stats::ministat::{self, RenderOptions};
use pktlab_stats::Confidence;

use crate::cmd::common;
use crate::error::usage;

/// Compare benchmark results with ministat: the configurations of one
/// results folder (each against the first), or the same configuration and
/// traffic across folders (the first folder being the baseline, as before
/// and after a kernel change).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Results folders of `pktlab bench` (or any folder of BSDRP-style
    /// <config>.<traffic>.pps files)
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this configuration
    #[arg(long = "config", value_name = "NAME")]
    pub config: Option<String>,
    /// Only this traffic profile
    #[arg(long = "traffic", value_name = "NAME")]
    pub traffic: Option<String>,
    /// Confidence level: 80, 90, 95, 98, 99 or 99.5
    #[arg(
        short = 'c',
        long = "confidence",
        value_name = "LEVEL",
        default_value = "95"
    )]
    pub confidence: String,
    /// One JSON object per comparison instead of text
    #[arg(long = "json")]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let confidence: Confidence = args.confidence.parse().map_err(|_| {
        usage(format!(
            "invalid confidence level '{}': use 80, 90, 95, 98, 99 or 99.5",
            args.confidence
        ))
    })?;
    let mut folders = Vec::new();
    for d in &args.dirs {
        let mut f = compare::load(d)?;
        if let Some(c) = &args.config {
            f.configs.retain(|x| x == c);
        }
        if let Some(t) = &args.traffic {
            f.traffics.retain(|x| x == t);
        }
        folders.push(f);
    }
    let blocks: Vec<Block> = if folders.len() == 1 {
        compare::between_configs(&folders[0])
    } else {
        compare::between_folders(&folders)?
    };
    let blocks: Vec<Block> = blocks
        .into_iter()
        .filter(|b| !b.datasets.is_empty())
        .collect();
    if blocks.is_empty() {
        return Err(usage(format!(
            "nothing to compare in {}{}{}",
            args.dirs[0].display(),
            args.config
                .as_deref()
                .map(|c| format!(" for configuration {c}"))
                .unwrap_or_default(),
            args.traffic
                .as_deref()
                .map(|t| format!(" for traffic {t}"))
                .unwrap_or_default(),
        )));
    }
    let mut text = String::new();
    for (i, b) in blocks.iter().enumerate() {
        if args.json {
            let analysis = ministat::analyze(&b.datasets, confidence);
            let mut v = serde_json::to_value(&analysis)?;
            v["title"] = serde_json::json!(b.title);
            v["drops"] = b
                .losses
                .iter()
                .map(|(name, sum)| {
                    let mut l = serde_json::to_value(sum)?;
                    l["name"] = serde_json::json!(name);
                    Ok(l)
                })
                .collect::<Result<Vec<_>, serde_json::Error>>()?
                .into();
            text += &format!("{v}\n");
        } else {
            if i > 0 {
                text.push('\n');
            }
            text += &format!("{}\n", b.title);
            let options = RenderOptions {
                confidence,
                ..RenderOptions::default()
            };
            text += &ministat::render(&b.datasets, &options);
            if !b.losses.is_empty() {
                text += "Where the lost frames went (summed over the runs):\n";
                for (name, sum) in &b.losses {
                    text += &format!("{}\n", pktlab_report::drops::loss_sum_text(name, sum));
                }
            }
        }
    }
    common::write_stdout(&text)
}
