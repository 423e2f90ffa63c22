//! pktlab bench layer: trials on a lab, and campaigns of them.
//!
//! A *trial* starts the receiver in the lab's receiver namespace, waits
//! until it is ready, runs the generator for the trial's duration while a
//! thread samples every lab interface's counters, the per-CPU load and the
//! NICs' interrupts once per second, lets the last frames drain, and stops
//! the receiver. Its *value* is the median of the receiver's per-second
//! samples of test frames, leaving out a warm-up and a tail (BSDRP's
//! bench-lab trims the same way).
//!
//! A *campaign* ([`campaign`]) runs every DUT configuration with every
//! traffic profile N times, interleaved, into a results folder that can be
//! resumed, and compares the configurations with ministat.

pub mod atomic;
pub mod campaign;
pub mod drops;
pub mod endpoint;
mod error;
pub mod late;
pub mod method;
pub mod mlr;
pub mod monitor;
pub mod samples;
pub mod search;
pub mod ssh;
pub mod target;
pub mod traffic;
pub mod trial;
pub mod worker;

pub use error::BenchError;
