//! pktlab trial layer: the lab a campaign runs on, and one trial on it.
//!
//! A *trial* starts the receiver in the lab's receiver namespace, waits
//! until it is ready, runs the generator for the trial's duration while a
//! thread samples every lab interface's counters, the per-CPU load and the
//! NICs' interrupts once per second, lets the last frames drain, and stops
//! the receiver. Its *value* is the median of the receiver's per-second
//! samples of test frames, leaving out a warm-up and a tail (BSDRP's
//! bench-lab trims the same way).
//!
//! - [`target`]: the lab (built-in or interfaces, hosts over ssh);
//! - [`traffic`]: a traffic profile;
//! - `reverse`: [`target::Target::reversed`], the lab sent through from the
//!   receiver's side;
//! - [`trial`]: one trial and what it measured; [`ends`]: its ends at
//!   work; [`direction`]: each direction of traffic both ways;
//! - [`samples`], [`late`]: a run's value, and frames that came late.

pub mod direction;
pub mod ends;
mod error;
pub mod late;
mod reverse;
pub mod samples;
pub mod target;
pub mod traffic;
pub mod trial;

pub use error::TrialError;
