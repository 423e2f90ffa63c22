//! `pktlab compare`: ministat comparisons of results folders.

use std::path::PathBuf;

use pktlab_campaign::compare;
use pktlab_report::compare as out;
use pktlab_stats::Confidence;

use crate::cmd::common;

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
    let confidence = Confidence::parse_level(&args.confidence)?;
    let blocks = compare::blocks(&args.dirs, args.config.as_deref(), args.traffic.as_deref())?;
    common::write_stdout(&out::blocks_output(&blocks, confidence, args.json))
}
