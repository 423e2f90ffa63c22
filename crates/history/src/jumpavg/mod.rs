//! FD.io CSIT's `jumpavg`, in Rust: a series of runs split into groups of
//! one normal distribution each by minimum description length, and each
//! group marked as a regression or a progression against the one before.
//!
//! The figures agree with the `jumpavg` package (PyPI, 0.4.2) to the last
//! bit on the same input: `tests` beside each module hold values printed
//! by it. A run may be several samples (a label's runs, as CSIT passes a
//! build's trial results): it is then indivisible, and counts as its
//! samples' average and deviation.

pub mod bits;
pub mod classify;
pub mod lgamma;
pub mod stats;

pub use classify::{classify, unit_for, Classified, ClassifyError, Group, Kind, DEFAULT_SBPS};
pub use stats::AvgStdev;

#[cfg(test)]
mod tests;
