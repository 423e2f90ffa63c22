//! `pktlab completions SHELL` and `pktlab man DIR`: shell completions and
//! man pages generated from the clap definitions, so they never drift from
//! the options the binary really takes.

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
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}
