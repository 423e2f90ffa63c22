//! `pktlab report`: the HTML report of results folders, and their tidy CSVs.

use std::path::PathBuf;

use pktlab_report::export::tidy;
use pktlab_report::html::{self, Folder};

use crate::error::usage;

/// Write one self-contained HTML page (charts, tables, ministat) of a
/// results folder, DIR/report.html by default; several folders make one
/// page comparing them, the first being the baseline. --csv writes tidy
/// CSV files (runs, per-second samples, RFC 2544 trials and latency) into
/// DIR/csv/.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Results folders of `pktlab bench`, `pktlab rfc2544` or `pktlab
    /// rfc9693` (an rfc9693 folder alone)
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the page [default: DIR/report.html; with several
    /// folders, report.html in the current folder]
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write tidy CSV files into each folder's csv/ subfolder
    #[arg(long = "csv")]
    pub csv: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut folders = Vec::new();
    for d in &args.dirs {
        folders.push(Folder::load(d).map_err(|e| usage(e.to_string()))?);
    }
    if let Some(why) = html::refusal(&folders, args.csv) {
        return Err(usage(why));
    }
    let target = html::write_page(&folders, args.output.as_deref())?;
    println!("Report: {}", target.display());
    for f in folders.iter().filter(|_| args.csv) {
        tidy::write_files(f, |path| println!("CSV: {}", path.display()))?;
    }
    for f in &folders {
        for m in &f.missing {
            eprintln!("note: {}: {m}", f.path.display());
        }
    }
    Ok(())
}
