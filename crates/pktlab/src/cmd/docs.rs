//! `pktlab completions SHELL` and `pktlab man DIR`: shell completions and
//! man pages generated from the clap definitions, so they never drift from
//! the options the binary really takes. And the hidden `pktlab docs ...`,
//! which gives `scripts/check-docs` what only the program knows: whether a
//! command line parses, the subcommands, the campaign file's keys.

use std::path::PathBuf;

use pktlab_report::{facts, manual};

use crate::cmd::common::write_stdout;
use crate::error::{os_message, usage};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    shell: manual::Shell,
}

#[derive(clap::Args)]
#[command(
    after_help = "Writes pktlab.1 and one pktlab-SUBCOMMAND.1 per subcommand (pktlab-lab-up.1 \
for nested ones). Install them with, for example: pktlab man /usr/local/share/man/man1 && mandb"
)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// Prints the completion script of `shell` for `cmd` on stdout.
pub fn completions(args: CompletionsArgs, cmd: clap::Command) -> anyhow::Result<()> {
    write_stdout(&manual::completions(args.shell, cmd))
}

/// Writes a man page for `cmd` and one for each of its subcommands, at
/// every depth, into `args.dir`; prints the files written.
pub fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir).map_err(|e| {
        usage(format!(
            "cannot create {}: {}",
            args.dir.display(),
            os_message(&e)
        ))
    })?;
    let written = manual::write_man_pages(cmd, &args.dir)?;
    write_stdout(&lines(written.iter().map(|p| p.display())))
}

/// `pktlab docs WHAT`, for scripts/check-docs, not for users: `main`
/// dispatches it before clap reads the command line, so it stays out of
/// the help, the man pages and the completions.
#[derive(clap::Parser)]
#[command(
    name = "pktlab-docs",
    bin_name = "pktlab docs",
    about = "Checks of the documentation (scripts/check-docs)"
)]
struct DocsCli {
    #[command(subcommand)]
    what: DocsWhat,
}

/// The word after `pktlab` that calls [`docs`].
pub const DOCS: &str = "docs";

#[derive(clap::Subcommand)]
enum DocsWhat {
    /// Parse command lines read on stdin, without running them: one per
    /// line, `WHERE<TAB>pktlab<TAB>ARG<TAB>...`; prints `WHERE: error` for
    /// each one that does not parse and exits 1 if any did not
    CheckArgs,
    /// Print every subcommand a user sees, one path a line (`lab up`)
    Subcommands,
    /// Print every key of a campaign file, derived from the types it is read
    /// into: `TABLE<TAB>KEY<TAB>TYPE<TAB>required|optional`
    CampaignKeys,
    /// Parse campaign files (TOML) as `bench -f` does; prints `FILE: error`
    /// for each one that does not parse and exits 1 if any did not
    CheckCampaign {
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
    },
    /// Print every option a user sees and clap's own default of it:
    /// `COMMAND<TAB>FLAGS<TAB>DEFAULT`
    Options,
    /// Print every file a campaign's results folder may hold
    ResultsFiles,
    /// Read command lines as check-args does and print `WHERE<TAB>IO`:
    /// the I/O backend each would use, or `-`
    Io,
}

/// Runs `pktlab docs ...` (`words` without the program's name). `cmd` and
/// `parse` are the program's own command tree and parser.
pub fn docs(
    words: Vec<String>,
    cmd: clap::Command,
    parse: impl Fn(&[String]) -> Result<(), clap::Error>,
) -> anyhow::Result<()> {
    use clap::Parser;
    let args = match DocsCli::try_parse_from(&words) {
        Ok(args) => args,
        Err(e) => {
            // Help on stdout (exit 0), usage errors on stderr (exit 2), as main.
            let _ = e.print();
            return Err(crate::error::Exit(if e.use_stderr() { 2 } else { 0 }).into());
        }
    };
    match args.what {
        DocsWhat::CheckArgs => {
            let failures = manual::unparsed_lines(std::io::stdin().lock(), |words| {
                parse_command_line(words, &parse)
            })?;
            say_failures(&failures)
        }
        DocsWhat::Subcommands => write_stdout(&lines(manual::subcommand_paths(&cmd))),
        DocsWhat::CampaignKeys => {
            let keys = pktlab_campaign::keys::campaign_keys().map_err(|e| anyhow::anyhow!(e))?;
            write_stdout(&lines(keys))
        }
        DocsWhat::CheckCampaign { files } => {
            say_failures(&pktlab_campaign::keys::check_files(&files)?)
        }
        DocsWhat::Options => write_stdout(&lines(facts::options(&cmd))),
        DocsWhat::ResultsFiles => write_stdout(&lines(facts::results_files())),
        DocsWhat::Io => write_stdout(&lines(facts::io_lines(std::io::stdin().lock(), |w| {
            cmd.clone().try_get_matches_from(w).ok()
        })?)),
    }
}

fn lines<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items.into_iter().map(|l| format!("{l}\n")).collect()
}

/// Prints the failures, one a line; exit code 1 when there is one.
fn say_failures(failures: &[String]) -> anyhow::Result<()> {
    write_stdout(&lines(failures))?;
    match failures.len() {
        0 => Ok(()),
        _ => Err(crate::error::Exit(1).into()),
    }
}

/// Whether `words` (`pktlab` first) parse; help and version requests do.
/// `pkt-gen`'s options are read by its own parser, as it would run them.
fn parse_command_line(
    words: &[String],
    parse: &impl Fn(&[String]) -> Result<(), clap::Error>,
) -> Result<(), String> {
    use clap::Parser;
    manual::parse_outcome(match words.get(1).map(String::as_str) {
        Some(DOCS) => DocsCli::try_parse_from(&words[1..]).map(|_| ()),
        _ => parse(words),
    })?;
    if words.get(1).map(String::as_str) == Some(pktlab_pktgen::NAME) {
        // Any CPU count a documented -c may name.
        pktlab_pktgen::options::parse(&words[2..], usize::from(u16::MAX))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with_clap(cmd: clap::Command) -> impl Fn(&[String]) -> Result<(), clap::Error> {
        move |words| cmd.clone().try_get_matches_from(words).map(|_| ())
    }

    #[test]
    fn pkt_gen_options_go_through_pkt_gen_s_parser() {
        let cmd = clap::Command::new("pktlab").subcommand(
            clap::Command::new("pkt-gen").arg(
                clap::Arg::new("args")
                    .num_args(0..)
                    .allow_hyphen_values(true)
                    .trailing_var_arg(true),
            ),
        );
        let parse = parse_with_clap(cmd);
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            parse_command_line(&words("pktlab pkt-gen -f tx -i g0 -l 60"), &parse),
            Ok(())
        );
        let err =
            parse_command_line(&words("pktlab pkt-gen -f tx -i g0 -l 6o"), &parse).unwrap_err();
        assert!(err.contains("invalid -l '6o'"), "{err}");
    }
}
