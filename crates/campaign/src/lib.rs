//! pktlab campaign layer: campaigns of runs on one lab, and their results
//! folder.
//!
//! A campaign runs every DUT configuration with every traffic profile N
//! times, interleaved, into a results folder that can be resumed, and
//! compares the configurations with ministat (BSDRP's bench-lab).
//!
//! - [`file`]: the campaign file as written; [`flags`]: the same with the
//!   command line's settings; [`plan`]: checked, ready to run;
//! - [`campaign`]: one campaign from its opening to its end
//!   ([`Campaign`]); [`lab`]: its lab; [`lock`]: one campaign per lab;
//!   [`order`]: which run comes when;
//! - [`method`]: how a run gets its value from trials; [`runs`]: one trial
//!   per run at a fixed rate;
//! - [`sink`]: where the results go after each run;
//! - [`folder`], [`records`], [`atomic`]: the results folder and its
//!   records;
//! - [`summary`], [`compare`]: what the runs add up to.

pub mod atomic;
pub mod campaign;
pub mod compare;
mod error;
pub mod file;
pub mod flags;
pub mod folder;
pub mod keys;
pub mod lab;
pub mod lock;
pub mod method;
pub mod order;
pub mod plan;
pub mod records;
pub mod runs;
pub mod sink;
pub mod summary;

pub use campaign::Campaign;
pub use error::CampaignError;
