//! `pktlab completions SHELL` and `pktlab man DIR`: shell completions and
//! man pages generated from the clap definitions, so they never drift from
//! the options the binary really takes. And the hidden `pktlab docs ...`,
//! which gives `scripts/check-docs` what only the program knows: whether a
//! command line parses, the subcommands, the campaign file's keys.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::{os_message, usage};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
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
pub fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    use clap_complete::shells;
    let mut out = Vec::new();
    let name = cmd.get_name().to_string();
    match args.shell {
        Shell::Bash => clap_complete::generate(shells::Bash, &mut cmd, name, &mut out),
        Shell::Zsh => clap_complete::generate(shells::Zsh, &mut cmd, name, &mut out),
        Shell::Fish => clap_complete::generate(shells::Fish, &mut cmd, name, &mut out),
    }
    crate::cmd::common::write_stdout(&String::from_utf8_lossy(&out))
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
    let mut cmd = cmd;
    cmd.build();
    let mut written = Vec::new();
    write_pages(&cmd, cmd.get_name(), &args.dir, &mut written)?;
    let list: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    crate::cmd::common::write_stdout(&list)
}

fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    // clap names are `&'static str` without its `string` feature; these few
    // names live until the command exits anyway.
    let static_name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let page = cmd.clone().name(static_name);
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    let path = dir.join(format!("{name}.1"));
    pktlab_campaign::atomic::write_atomic(&path, &roff)?;
    written.push(path);
    for sub in visible_subcommands(cmd) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

/// The subcommands a user sees: not `help`, not the hidden ones.
fn visible_subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
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
        DocsWhat::CheckArgs => check_args(std::io::stdin().lock(), parse),
        DocsWhat::Subcommands => {
            let mut paths = Vec::new();
            subcommand_paths(&cmd, "", &mut paths);
            crate::cmd::common::write_stdout(&lines(&paths))
        }
        DocsWhat::CampaignKeys => {
            let keys = pktlab_campaign::keys::campaign_keys().map_err(|e| anyhow::anyhow!(e))?;
            crate::cmd::common::write_stdout(&lines(&keys))
        }
        DocsWhat::CheckCampaign { files } => check_campaigns(&files),
    }
}

fn lines(items: &[String]) -> String {
    items.iter().map(|l| format!("{l}\n")).collect()
}

fn check_args(
    input: impl BufRead,
    parse: impl Fn(&[String]) -> Result<(), clap::Error>,
) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    for line in input.lines() {
        let line = line?;
        let mut fields = line.split('\t');
        let place = fields.next().unwrap_or_default().to_string();
        let words: Vec<String> = fields.map(String::from).collect();
        if let Err(e) = parse_command_line(&words, &parse) {
            failures.push(format!("{place}: {e}"));
        }
    }
    crate::cmd::common::write_stdout(&lines(&failures))?;
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
    use clap::error::ErrorKind;
    use clap::Parser;
    let parsed = match words.get(1).map(String::as_str) {
        Some(DOCS) => DocsCli::try_parse_from(&words[1..]).map(|_| ()),
        _ => parse(words),
    };
    match parsed {
        Ok(()) => {}
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {}
        Err(e) => return Err(clap_one_line(&e)),
    }
    if words.get(1).map(String::as_str) == Some(pktlab_pktgen::NAME) {
        // Any CPU count a documented -c may name.
        pktlab_pktgen::options::parse(&words[2..], usize::from(u16::MAX))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// clap's error and its tip, without the usage lines.
fn clap_one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("error:") || l.starts_with("tip:"))
        .collect();
    kept.join("; ").replace("error: ", "")
}

fn subcommand_paths(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in visible_subcommands(cmd) {
        let path = format!("{prefix}{}", sub.get_name());
        out.push(path.clone());
        subcommand_paths(sub, &format!("{path} "), out);
    }
}

fn check_campaigns(files: &[PathBuf]) -> anyhow::Result<()> {
    let failures = pktlab_campaign::keys::check_files(files)?;
    crate::cmd::common::write_stdout(&lines(&failures))?;
    match failures.len() {
        0 => Ok(()),
        _ => Err(crate::error::Exit(1).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with_clap(cmd: clap::Command) -> impl Fn(&[String]) -> Result<(), clap::Error> {
        move |words| cmd.clone().try_get_matches_from(words).map(|_| ())
    }

    #[test]
    fn a_misspelt_flag_is_reported_with_clap_s_tip() {
        let cmd = clap::Command::new("pktlab")
            .subcommand(clap::Command::new("gen").arg(clap::Arg::new("duration").long("duration")));
        let parse = parse_with_clap(cmd);
        let input = "a.md:3\tpktlab\tgen\t--duration\t5s\nb.md:7\tpktlab\tgen\t--duraton\t5s\n";
        let words = |l: &str| l.split('\t').skip(1).map(String::from).collect::<Vec<_>>();
        let lines: Vec<&str> = input.lines().collect();
        assert_eq!(parse_command_line(&words(lines[0]), &parse), Ok(()));
        let err = parse_command_line(&words(lines[1]), &parse).unwrap_err();
        assert!(
            err.starts_with("unexpected argument '--duraton' found"),
            "{err}"
        );
        assert!(
            err.contains("tip: a similar argument exists: '--duration'"),
            "{err}"
        );
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
