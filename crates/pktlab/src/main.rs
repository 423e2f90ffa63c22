//! The `pktlab` binary: subcommands only, no logic. Every subcommand lives in
//! `cmd/` and returns `anyhow::Result<()>`; `error::exit_code` maps failures to
//! exit codes (2 for bad usage or input, 1 for runtime failures).

mod cmd;
mod error;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "pktlab",
    version,
    about = "Measure how fast a router or firewall forwards packets"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // gen, recv, bench and knob take their help from their Args' doc comments.
    Gen(cmd::gen::Args),
    Recv(cmd::recv::Args),
    /// Build, inspect or remove the built-in namespace lab
    Lab(cmd::lab::Args),
    Bench(cmd::bench::Args),
    Rfc2544(Box<cmd::rfc2544::Args>),
    Rfc9693(Box<cmd::rfc9693::Args>),
    /// Compare results folders with ministat
    Compare(cmd::compare::Args),
    /// Write the HTML report (and tidy CSVs) of results folders
    Report(cmd::report::Args),
    /// The results history: every campaign in a database, trends, regressions
    History(cmd::history::Args),
    /// Ethernet line rates of a link, or a measured rate against one
    Linerate(cmd::linerate::Args),
    /// Per-second interface counters with drops (like netstat -iw 1)
    Ifstat(cmd::ifstat::Args),
    /// Where the kernel drops test frames: place and reason (skb:kfree_skb)
    Drops(cmd::drops::Args),
    /// Compare data sets like FreeBSD's ministat(1)
    Ministat(cmd::ministat::Args),
    /// Extract per-run pps values from netmap pkt-gen logs (like BSDRP)
    #[command(name = "pktgen-log")]
    PktgenLog(cmd::pktgen_log::Args),
    /// netmap's pkt-gen command line and output (also as a `pkt-gen` link)
    #[command(
        name = "pkt-gen",
        disable_help_flag = true,
        after_help = pktlab_pktgen::options::USAGE
    )]
    PktGen {
        /// pkt-gen's options (`pktlab pkt-gen -h` lists them)
        #[arg(
            allow_hyphen_values = true,
            trailing_var_arg = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Run a job for a controller on another host (started over ssh)
    Worker(cmd::worker::Args),
    Knob(cmd::knob::Args),
    /// Print shell completions (bash, zsh, fish)
    Completions(cmd::docs::CompletionsArgs),
    /// Write the man pages of pktlab and its subcommands into a directory
    Man(cmd::docs::ManArgs),
}

fn main() {
    // Called through a `pkt-gen` link: pkt-gen's command line, no subcommand.
    if let Some(args) = pktlab_pktgen::options::args_if_called_as_pkt_gen(std::env::args_os()) {
        finish(
            pktlab_pktgen::NAME,
            pktlab_pktgen::run(args).map_err(Into::into),
        );
    }
    // The documentation's checks (scripts/check-docs): not a user's command.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == cmd::docs::DOCS)
    {
        let words = std::env::args().skip(1).collect();
        let parse = |words: &[String]| command().try_get_matches_from(words).map(|_| ());
        finish("pktlab", cmd::docs::docs(words, command(), parse));
    }
    let cli = match command().try_get_matches() {
        Ok(m) => match pktlab_report::help::refusal(&m) {
            Some(why) => finish("pktlab", Err(error::usage(why))),
            None => Cli::from_arg_matches(&m).expect("matches of Cli's own command"),
        },
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Gen(a) => cmd::gen::run(a),
        Command::Recv(a) => cmd::recv::run(a),
        Command::Lab(a) => cmd::lab::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Rfc2544(a) => cmd::rfc2544::run(*a),
        Command::Rfc9693(a) => cmd::rfc9693::run(*a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::History(a) => cmd::history::run(a),
        Command::Linerate(a) => cmd::linerate::run(a),
        Command::Ifstat(a) => cmd::ifstat::run(a),
        Command::Drops(a) => cmd::drops::run(a),
        Command::Ministat(a) => cmd::ministat::run(a),
        Command::PktgenLog(a) => cmd::pktgen_log::run(a),
        Command::Worker(a) => cmd::worker::run(a),
        Command::Knob(a) => cmd::knob::run(a),
        Command::Completions(a) => cmd::docs::completions(a, command()),
        Command::Man(a) => cmd::docs::man(a, command()),
        Command::PktGen { args } => {
            finish(
                pktlab_pktgen::NAME,
                pktlab_pktgen::run(args).map_err(Into::into),
            );
        }
    };
    finish("pktlab", result)
}

/// The command tree, each command showing the shared options as it takes them.
fn command() -> clap::Command {
    pktlab_report::help::tailor(Cli::command())
}

/// Reports a failure in one line, prefixed with the name the program was
/// called by, and exits with its code.
fn finish(name: &str, result: anyhow::Result<()>) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if let Err(err) = result {
        // An `Exit` error has already been reported by the subcommand.
        if err.downcast_ref::<error::Exit>().is_none() {
            eprintln!("{name}: {}", error::one_line(&err));
        }
        std::process::exit(error::exit_code(&err));
    }
    std::process::exit(0)
}
