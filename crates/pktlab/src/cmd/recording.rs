//! How a finished `bench` or `rfc2544` campaign goes into the results
//! history (`pktlab history` reads it back).

use std::path::Path;

use pktlab_history::{text, DbTarget};

use crate::error::usage;

/// How a finished `bench` or `rfc2544` campaign goes into the history.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RecordArgs {
    /// Do not add this campaign to the results history
    #[arg(long = "no-history")]
    pub no_history: bool,
    /// The campaign's label in the history: the kernel, firmware or
    /// ruleset under test [default: the DUT's kernel release]
    #[arg(long = "label", value_name = "LABEL")]
    pub label: Option<String>,
    /// History database: an SQLite file or a postgresql:// URL [default:
    /// $PKTLAB_HISTORY_DB, else ~/.local/share/pktlab/history.sqlite]
    #[arg(long = "db", value_name = "DB")]
    pub db: Option<String>,
}

/// Checks `--label` and `--db` before the campaign starts (`bench` and
/// `rfc2544` call it first), so that a typo is not found after an hour of
/// runs.
pub fn check_record_args(args: &RecordArgs) -> anyhow::Result<()> {
    if args.no_history {
        if let Some(flag) = [
            ("--label", args.label.is_some()),
            ("--db", args.db.is_some()),
        ]
        .iter()
        .find_map(|(f, set)| set.then_some(f))
        {
            return Err(usage(format!("{flag} cannot be used with --no-history")));
        }
        return Ok(());
    }
    if let Some(l) = &args.label {
        pktlab_history::import::check_label(l)?;
    }
    DbTarget::resolve(args.db.as_deref())?;
    Ok(())
}

/// Adds the campaign of results folder `dir` to the history, unless
/// `--no-history`. A failure is one warning line and never fails the
/// campaign, whose folder is whole either way; `say`: a line on success.
pub fn record_finished(args: &RecordArgs, dir: &Path, say: bool) {
    if args.no_history {
        return;
    }
    let done = DbTarget::resolve(args.db.as_deref()).and_then(|target| {
        pktlab_history::record_folder(&target, dir, args.label.as_deref()).map(|r| (r, target))
    });
    match done {
        Ok((r, target)) if say => println!("{}", text::recorded_line(&r, &target.display())),
        Ok(_) => {}
        Err(e) => eprintln!(
            "pktlab: warning: not recorded in the history: {e} (the results folder is whole: pktlab history import {} adds it later)",
            dir.display()
        ),
    }
}
