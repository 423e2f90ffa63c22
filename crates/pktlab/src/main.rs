//! The `pktlab` binary: subcommands only, no logic. Every subcommand lives in
//! `cmd/` and returns `anyhow::Result<()>`; `error::exit_code` maps failures to
//! exit codes (2 for bad usage or input, 1 for runtime failures).

mod cmd;
mod error;

use clap::{Parser, Subcommand};

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
    // gen, recv and bench take their help from their Args' doc comments.
    Gen(cmd::gen::Args),
    Recv(cmd::recv::Args),
    /// Build, inspect or remove the built-in namespace lab
    Lab(cmd::lab::Args),
    Bench(cmd::bench::Args),
    Rfc2544(cmd::rfc2544::Args),
    /// Compare results folders with ministat
    Compare(cmd::compare::Args),
    /// Ethernet line rates of a link, or a measured rate against one
    Linerate(cmd::linerate::Args),
    /// Per-second interface counters with drops (like netstat -iw 1)
    Ifstat(cmd::ifstat::Args),
    /// Compare data sets like FreeBSD's ministat(1)
    Ministat(cmd::ministat::Args),
    /// Extract per-run pps values from netmap pkt-gen logs (like BSDRP)
    #[command(name = "pktgen-log")]
    PktgenLog(cmd::pktgen_log::Args),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
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
        Command::Rfc2544(a) => cmd::rfc2544::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Linerate(a) => cmd::linerate::run(a),
        Command::Ifstat(a) => cmd::ifstat::run(a),
        Command::Ministat(a) => cmd::ministat::run(a),
        Command::PktgenLog(a) => cmd::pktgen_log::run(a),
    };
    if let Err(err) = result {
        // An `Exit` error has already been reported by the subcommand.
        if err.downcast_ref::<error::Exit>().is_none() {
            eprintln!("pktlab: {}", error::one_line(&err));
        }
        std::process::exit(error::exit_code(&err));
    }
}
