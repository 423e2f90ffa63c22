//! `pktlab worker --stdio`: runs one generator or receiver job for a
//! controller on another host (`pktlab bench` over ssh). Not for people:
//! its input and output are the JSON lines of
//! `pktlab_remote::worker::protocol`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Parser;

use crate::error::{usage, Exit};

/// Run a generator or receiver job sent as JSON lines on standard input
/// (what `pktlab bench` starts on a lab's other hosts over ssh).
///
/// The job's first line names the protocol version; the worker answers
/// `ready` with its clock, starts at the time the controller sends, writes
/// one line per interval and a summary. It stops on `stop`, at the end of
/// its input, on SIGTERM, SIGINT or SIGHUP, and at the job's deadline.
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Speak the protocol on standard input and output
    #[arg(long = "stdio")]
    pub stdio: bool,
    /// Print the protocol version this worker speaks (`protocol N`) and exit
    #[arg(long = "protocol", conflicts_with = "stdio")]
    pub protocol: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.protocol {
        return crate::cmd::common::write_stdout(&format!(
            "{}\n",
            pktlab_remote::ssh::host::protocol_line()
        ));
    }
    if !args.stdio {
        return Err(usage(
            "pktlab worker needs --stdio: it is started by pktlab bench over ssh",
        ));
    }
    pktlab_engine::stop::install_signal_handlers()?;
    let hangup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, hangup.clone())?;
    let input = std::io::BufReader::new(std::io::stdin());
    match pktlab_remote::worker::serve::serve(input, std::io::stdout(), hangup) {
        Ok(()) => Ok(()),
        Err(e) => {
            eprintln!("pktlab worker: {e}");
            Err(Exit(1).into())
        }
    }
}
