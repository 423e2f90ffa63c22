//! RFC 2544's tests as a campaign method ([`Mlr`]): the throughput search
//! (after FD.io CSIT's MLRsearch, [`crate::Search`]), then frame loss,
//! latency and back-to-back frames.
//!
//! - [`settings`]: what every search of a campaign uses; [`flags`]: the
//!   same as the command line gives it;
//! - [`steps`]: which trial one search asks for next;
//! - [`frame_loss`], [`latency`], [`back_to_back`]: the tests after the
//!   search;
//! - [`method`]: the searches run over a campaign;
//! - [`record`]: `trials.jsonl`; [`summary`]: `rfc2544.json`;
//!   [`results`]: both in memory; [`sweep`]: a knob sweep's table.

pub mod back_to_back;
pub mod flags;
pub mod frame_loss;
pub mod latency;
pub mod method;
pub mod record;
pub mod results;
pub mod settings;
pub mod steps;
pub mod summary;
pub mod sweep;

pub use method::Mlr;
pub use results::Searches;
pub use settings::{MaxLoad, MlrSettings};
