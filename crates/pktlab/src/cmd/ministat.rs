//! `pktlab ministat`: FreeBSD's ministat(1). The command, the statistics
//! and the text come from `pktlab_stats::ministat`; this module hands it
//! the options and the terminal's width, and prints what it says.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;

use pktlab_stats::ministat::command::{self, Command, Shown};

use crate::cmd::common;
use crate::error::Exit;

#[derive(clap::Args)]
#[command(
    args_override_self = true,
    after_help = "Compares up to 7 data sets with Student's t test, like FreeBSD's ministat(1).\n\
                  The first data set is the baseline of every comparison."
)]
pub struct Args {
    /// Statistics and comparisons only: no plot
    #[arg(short = 'A')]
    no_plot: bool,

    /// Column of the data to use, starting at 1
    #[arg(short = 'C', value_name = "COLUMN", allow_hyphen_values = true)]
    column: Option<String>,

    /// Confidence level: 80, 90, 95, 98, 99 or 99.5 [default: 95]
    #[arg(short = 'c', value_name = "CONFIDENCE", allow_hyphen_values = true)]
    confidence: Option<String>,

    /// Field delimiter characters [default: space and tab]
    #[arg(short = 'd', value_name = "DELIMITERS", allow_hyphen_values = true)]
    delimiters: Option<OsString>,

    /// Statistics only: no plot and no comparisons
    #[arg(short = 'n')]
    stats_only: bool,

    /// Legend and plot only: no table and no comparisons (pktlab's addition)
    #[arg(short = 'P')]
    plot_only: bool,

    /// Leave out the data set names and the table header
    #[arg(short = 'q')]
    quiet: bool,

    /// One average/median/stddev bar per data set
    #[arg(short = 's')]
    separate_bars: bool,

    /// Plot width in characters [default: 74, or the terminal's width]
    #[arg(short = 'w', value_name = "WIDTH", allow_hyphen_values = true)]
    width: Option<String>,

    /// One JSON document with every data set's statistics and the comparisons
    #[arg(long)]
    json: bool,

    /// Data files, one value per line; none or `-` reads standard input
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let command = Command {
        no_plot: args.no_plot,
        column: args.column,
        confidence: args.confidence,
        delimiters: args.delimiters.map(|d| d.as_bytes().to_vec()),
        stats_only: args.stats_only,
        plot_only: args.plot_only,
        quiet: args.quiet,
        separate_bars: args.separate_bars,
        width: args.width,
        json: args.json,
        files: args.files,
    };
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal().then(|| {
        let columns = std::env::var("COLUMNS").ok();
        command::terminal_width(columns.as_deref(), || {
            terminal_size::terminal_size_of(&stdout).map(|(w, _)| w.0)
        })
    });
    match command::run(&command, terminal.flatten()) {
        Ok(Shown::Text(text)) => common::write_stdout(&text),
        Ok(Shown::Analysis(a)) => common::write_stdout(&(serde_json::to_string_pretty(&a)? + "\n")),
        Err(complaint) => {
            // ministat's lines on stderr, and its exit code.
            eprintln!("{complaint}");
            Err(Exit(2).into())
        }
    }
}
