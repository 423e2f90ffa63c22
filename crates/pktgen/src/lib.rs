//! `pktlab pkt-gen ARGS`, or the binary called as `pkt-gen`: netmap's
//! pkt-gen command line and output on pktlab's engine, so that scripts
//! written for pkt-gen (BSDRP's bench-lab, equilibrium) run unchanged.
//!
//! Diagnostics and the per-interval `main_thread` lines go to stderr, the
//! startup lines and the closing summary to stdout, as pkt-gen prints them.
//! Ctrl-C stops with the summary; SIGTERM ends the process at once, as it
//! ends pkt-gen, which has no handler for it.
//!
//! [`options`] reads the command line ([`getopt`] is libc's `getopt` as
//! pkt-gen calls it), [`run`](run()) turns it into the engine's options and runs
//! the generator or the receiver, [`output`] prints what pkt-gen prints.

mod error;
mod getopt;
pub mod options;
pub mod output;
mod run;

pub use error::PktgenError;
pub use options::NAME;
pub use run::run;
