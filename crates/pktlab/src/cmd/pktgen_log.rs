//! `pktlab pktgen-log`: the value of each run from netmap pkt-gen logs, as
//! BSDRP's bench scripts compute it, so existing result folders
//! (`RAW/bench.CFG.PKTGEN.N.receiver`) can be re-analysed.

use std::path::PathBuf;

use pktlab_stats::pktgen::{self, Trim};

use crate::cmd::common;
use crate::error::{os_message, usage};

#[derive(clap::Args)]
#[command(
    after_help = "For each log: drop the first --trim-head and the last --trim-tail \
per-second samples, drop the zero samples, print the median (8 significant digits, \
as BSDRP's .pps files). With several logs each line is \"FILE VALUE\": the value is \
the last field."
)]
pub struct Args {
    /// pkt-gen output files (receiver or sender, with or without -N)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,

    /// Per-second samples to drop at the start (warm-up)
    #[arg(long, value_name = "N", default_value_t = Trim::default().head)]
    trim_head: usize,

    /// Per-second samples to drop at the end
    #[arg(long, value_name = "N", default_value_t = Trim::default().tail)]
    trim_tail: usize,

    /// Print every per-second pps value of the log instead of the run value
    #[arg(long)]
    all: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let trim = Trim {
        head: args.trim_head,
        tail: args.trim_tail,
    };
    // Read every log before printing, so a missing file fails the command
    // without a partial result.
    let logs = args
        .files
        .iter()
        .map(|path| {
            let bytes = std::fs::read(path).map_err(|err| {
                usage(format!(
                    "cannot read {}: {}",
                    path.display(),
                    os_message(&err)
                ))
            })?;
            Ok((path, pktgen::pps_samples(&String::from_utf8_lossy(&bytes))))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    let with_names = logs.len() > 1;
    let mut out = String::new();
    for (path, samples) in &logs {
        let prefix = if with_names {
            format!("{} ", path.display())
        } else {
            String::new()
        };
        if args.all {
            for pps in samples {
                out.push_str(&format!("{prefix}{pps}\n"));
            }
            continue;
        }
        match pktgen::run_value(samples, trim) {
            Some(value) => {
                out.push_str(&format!("{prefix}{}\n", pktgen::format_run_value(value)));
            }
            None => eprintln!(
                "pktlab: warning: {}: no non-zero pps sample left ({} per-second samples, \
                 first {} and last {} dropped)",
                path.display(),
                samples.len(),
                trim.head,
                trim.tail
            ),
        }
    }
    common::write_stdout(&out)
}
