//! What the program says about itself, made from its command tree
//! (clap's) so that it never drifts from the options it really takes: man
//! pages, shell completions, the list of subcommands, and whether a
//! documented command line parses (for `scripts/check-docs`).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use pktlab_campaign::CampaignError;

/// A shell to complete for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The completion script of `shell` for `cmd`: hidden options (those a
/// command refuses) and hidden subcommands are not offered.
pub fn completions(shell: Shell, cmd: clap::Command) -> String {
    use clap_complete::shells;
    let mut cmd = visible_only(&cmd);
    let mut out = Vec::new();
    let name = cmd.get_name().to_string();
    match shell {
        Shell::Bash => clap_complete::generate(shells::Bash, &mut cmd, name, &mut out),
        Shell::Zsh => clap_complete::generate(shells::Zsh, &mut cmd, name, &mut out),
        Shell::Fish => clap_complete::generate(shells::Fish, &mut cmd, name, &mut out),
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `cmd` without its hidden options and subcommands, at every depth:
/// clap_complete offers every option, hidden or not.
fn visible_only(cmd: &clap::Command) -> clap::Command {
    // clap names are `&'static str` without its `string` feature; these
    // few names live until the command exits anyway.
    let name: &'static str = Box::leak(cmd.get_name().to_string().into_boxed_str());
    let mut out = clap::Command::new(name)
        .disable_help_flag(cmd.is_disable_help_flag_set())
        .disable_version_flag(cmd.is_disable_version_flag_set());
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(v) = cmd.get_version() {
        out = out.version(&*Box::leak(v.to_string().into_boxed_str()));
    }
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        out = out.arg(a.clone());
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out = out.subcommand(visible_only(sub));
    }
    out
}

/// Writes a man page for `cmd` and one for each of its subcommands, at
/// every depth (`pktlab-lab-up.1`), into the folder `dir`; the files
/// written.
pub fn write_man_pages(cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, CampaignError> {
    let mut cmd = cmd;
    cmd.build();
    let mut written = Vec::new();
    write_pages(&cmd, cmd.get_name(), dir, &mut written)?;
    Ok(written)
}

fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), CampaignError> {
    // clap names are `&'static str` without its `string` feature; these few
    // names live until the command exits anyway.
    let static_name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let page = cmd.clone().name(static_name);
    let path = dir.join(format!("{name}.1"));
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .map_err(|e| CampaignError::file(&path, e))?;
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

/// Every subcommand a user sees, at every depth, as its path of names
/// (`lab up`).
pub fn subcommand_paths(cmd: &clap::Command) -> Vec<String> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in visible_subcommands(cmd) {
            let path = format!("{prefix}{}", sub.get_name());
            out.push(path.clone());
            walk(sub, &format!("{path} "), out);
        }
    }
    let mut out = Vec::new();
    walk(cmd, "", &mut out);
    out
}

/// The command lines of `input` that do not parse, each as `WHERE: why`.
/// A line is `WHERE<TAB>pktlab<TAB>ARG<TAB>...`; `parse` says whether its
/// words (`pktlab` first) parse.
pub fn unparsed_lines(
    input: impl BufRead,
    parse: impl Fn(&[String]) -> Result<(), String>,
) -> std::io::Result<Vec<String>> {
    let mut failures = Vec::new();
    for line in input.lines() {
        let line = line?;
        let mut fields = line.split('\t');
        let place = fields.next().unwrap_or_default().to_string();
        let words: Vec<String> = fields.map(String::from).collect();
        if let Err(e) = parse(&words) {
            failures.push(format!("{place}: {e}"));
        }
    }
    Ok(failures)
}

/// What clap's parse of a command line says, as one line: nothing when
/// it parsed or asked for help or the version, else clap's error and its
/// tip without the usage lines.
pub fn parse_outcome(parsed: Result<(), clap::Error>) -> Result<(), String> {
    use clap::error::ErrorKind;
    match parsed {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => {
            let text = e.to_string();
            let kept: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("error:") || l.starts_with("tip:"))
                .collect();
            Err(kept.join("; ").replace("error: ", ""))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> clap::Command {
        clap::Command::new("pktlab")
            .subcommand(clap::Command::new("gen").arg(clap::Arg::new("duration").long("duration")))
            .subcommand(
                clap::Command::new("lab")
                    .subcommand(clap::Command::new("up"))
                    .subcommand(clap::Command::new("secret").hide(true)),
            )
    }

    fn parse(words: &[String]) -> Result<(), String> {
        parse_outcome(tree().try_get_matches_from(words).map(|_| ()))
    }

    #[test]
    fn a_misspelt_flag_is_reported_with_clap_s_tip() {
        let input = "a.md:3\tpktlab\tgen\t--duration\t5s\nb.md:7\tpktlab\tgen\t--duraton\t5s\nc.md:1\tpktlab\tgen\t--help\n";
        let failures = unparsed_lines(input.as_bytes(), parse).unwrap();
        assert_eq!(failures.len(), 1, "{failures:?}");
        let err = &failures[0];
        assert!(
            err.starts_with("b.md:7: unexpected argument '--duraton' found"),
            "{err}"
        );
        assert!(
            err.contains("tip: a similar argument exists: '--duration'"),
            "{err}"
        );
        assert!(!err.contains("Usage"), "{err}");
    }

    #[test]
    fn subcommands_a_user_sees_at_every_depth() {
        let mut cmd = tree();
        cmd.build();
        assert_eq!(subcommand_paths(&cmd), ["gen", "lab", "lab up"]);
    }

    #[test]
    fn a_man_page_per_subcommand() {
        let tmp = tempfile::tempdir().unwrap();
        let written = write_man_pages(tree(), tmp.path()).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "pktlab.1",
                "pktlab-gen.1",
                "pktlab-lab.1",
                "pktlab-lab-up.1"
            ]
        );
        let page = std::fs::read_to_string(tmp.path().join("pktlab-gen.1")).unwrap();
        assert!(page.contains("\\-\\-duration"), "{page}");
    }
}
