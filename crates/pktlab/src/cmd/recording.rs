//! How a finished `bench`, `rfc2544` or `rfc9693` campaign goes into the
//! results history (`pktlab history` reads it back).

use std::path::Path;

use pktlab_history::{text, DbTarget, Recorder};

use crate::error::usage;

/// How a finished `bench`, `rfc2544` or `rfc9693` campaign goes into the history.
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
    /// $PKTLAB_HISTORY_DB, else $XDG_DATA_HOME/pktlab/history.sqlite, else
    /// ~/.local/share/pktlab/history.sqlite]
    #[arg(long = "db", value_name = "DB")]
    pub db: Option<String>,
}

/// The campaign's recorder into the history (one of its sinks), unless
/// `--no-history`. `--label` and `--db` are checked here, before the
/// campaign starts, so that a typo is not found after an hour of runs.
pub fn recorder(args: &RecordArgs) -> anyhow::Result<Option<Recorder>> {
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
        return Ok(None);
    }
    if let Some(l) = &args.label {
        pktlab_history::import::check_label(l)?;
    }
    let target = DbTarget::resolve(args.db.as_deref())?;
    Ok(Some(Recorder::new(target, args.label.clone())))
}

/// Says what the recorder did at the campaign's end: a failure is one
/// warning line and never fails the campaign, whose folder `dir` is whole
/// either way; `say`: a line on success.
pub fn say_recorded(recorder: Option<&Recorder>, dir: &Path, say: bool) {
    let Some(r) = recorder else { return };
    match r.outcome() {
        Some(Ok(done)) if say => println!(
            "{}",
            text::recorded_line(&done, &r.target().display())
        ),
        Some(Ok(_)) | None => {}
        Some(Err(e)) => eprintln!(
            "pktlab: warning: not recorded in the history: {e} (the results folder is whole: pktlab history import {} adds it later)",
            dir.display()
        ),
    }
}
