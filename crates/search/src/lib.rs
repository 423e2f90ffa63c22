//! A multiple-loss-ratio throughput search, after FD.io CSIT's MLRsearch
//! (IETF draft-ietf-bmwg-mlrsearch), as a pure state machine: it asks for
//! trials at loads and durations it chooses ([`Search::next_trial`]), is
//! told what each one measured ([`Search::add`]) and reports bounds per
//! goal ([`Search::results`]). Running trials is the caller's business, so
//! the logic is tested against simulated DUTs and a resumed search is
//! simply fed the trials already recorded.
//!
//! - [`goal`]: what a goal asks (loss ratio, exceed ratio, width,
//!   durations) and its coarser preceding targets;
//! - [`load`]: the trials at one load and its classification for a target
//!   (upper bound, lower bound or undecided);
//! - [`grid`]: the loads a search chooses from, one final width apart;
//! - `select`: which load a target wants next;
//! - [`state`]: the search itself: its trials, and the results;
//! - [`stateful`]: RFC 9693's stateful tests, on the same search.

mod error;
pub mod goal;
pub mod grid;
pub mod load;
pub mod mlr;
mod select;
pub mod state;
pub mod stateful;

pub use error::SearchError;

pub use goal::{Goal, Target};
pub use load::{Class, Measurement};
pub use state::{Bound, GoalResult, Search, SearchConfig, TrialRequest};
