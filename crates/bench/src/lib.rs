//! pktlab bench layer: trials on a lab and series of them.
//!
//! A *trial* starts the receiver in the lab's receiver namespace, waits
//! until it is ready, runs the generator in the generator namespace for
//! the trial's duration, lets the last frames drain, and stops the
//! receiver. Its *value* is the median of the receiver's per-second
//! samples of test frames, leaving out the first and the last second
//! (BSDRP's bench-lab trims a warm-up and a tail the same way).
//! A *series* repeats trials and summarises their values with ministat's
//! statistics.

mod error;
pub mod samples;
pub mod series;
pub mod traffic;
pub mod trial;

pub use error::BenchError;
