//! `pktlab pktgen-log`: the value of each run from netmap pkt-gen logs, as
//! BSDRP's bench scripts compute it, so existing result folders
//! (`RAW/bench.CFG.PKTGEN.N.receiver`) can be re-analysed.

use std::path::PathBuf;

use pktlab_stats::pktgen::{self, Trim};

use crate::cmd::common;
use crate::error::{os_message, usage};

#[derive(clap::Args)]
#[command(
    after_help = "For each log, as BSDRP's bench-lab-ministat.sh: drop the first --trim-head \
and the last --trim-tail lines of the file, keep the `main_thread [N] R pps` lines whose \
rate R starts with 1-9, print ministat's median of at least 3 rates (8 significant digits, \
as BSDRP's .pps files). --trim samples drops per-second samples instead of lines, then the \
zero samples. With several logs each line is \"FILE VALUE\": the value is the last field."
)]
pub struct Args {
    /// pkt-gen output files (receiver or sender, with or without -N)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,

    /// What --trim-head and --trim-tail count: lines of the file (BSDRP) or
    /// per-second samples
    #[arg(long, value_enum, value_name = "UNIT", default_value_t = TrimUnit::Lines)]
    trim: TrimUnit,

    /// Lines (or samples) to drop at the start (warm-up)
    #[arg(long, value_name = "N", default_value_t = Trim::default().head)]
    trim_head: usize,

    /// Lines (or samples) to drop at the end
    #[arg(long, value_name = "N", default_value_t = Trim::default().tail)]
    trim_tail: usize,

    /// Print every per-second pps value of the log instead of the run value
    #[arg(long)]
    all: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TrimUnit {
    /// Lines of the log file, header lines included (BSDRP's scripts)
    Lines,
    /// Per-second samples; zero samples are dropped after the trim
    Samples,
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
            Ok((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    let (out, warnings) = pktgen::logs_text(&logs, trim, args.trim == TrimUnit::Samples, args.all);
    for w in warnings {
        eprintln!("pktlab: warning: {w}");
    }
    common::write_stdout(&out)
}
