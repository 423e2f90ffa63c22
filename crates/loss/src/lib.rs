//! pktlab loss layer: what a trial measures besides its two ends, and
//! where its lost frames went.
//!
//! - [`monitor`]: every lab interface's counters, the per-CPU load and the
//!   NICs' interrupts, read around a trial and once per second during it;
//! - [`tracer`]: the drop tracer, started in the mode asked for, and its
//!   window around each trial;
//! - [`drops`]: the reconciliation of its kernel events with those
//!   counters into DUT-side places, tester-side places and what is left
//!   unexplained;
//! - [`both`]: the same for traffic both ways, per direction and in total.
//! - [`watch`]: the drop tracer on its own, interval by interval
//!   (`pktlab drops`).

pub mod both;
pub mod drops;
mod error;
pub mod monitor;
pub mod tracer;
pub mod watch;

pub use error::LossError;
