//! pktlab campaign layer: campaigns of runs on one lab, and their results
//! folder.
//!
//! A campaign runs every DUT configuration with every traffic profile N
//! times, interleaved, into a results folder that can be resumed, and
//! compares the configurations with ministat (BSDRP's bench-lab).
//!
//! - [`file`]: the campaign file as written; [`plan`]: the same, checked;
//! - [`order`]: which run comes when; [`lock`]: one campaign per lab;
//! - [`method`]: how a run gets its value from trials;
//! - [`runner`]: running it all;
//! - [`records`], [`results`], [`atomic`]: the results folder;
//! - [`summary`], [`compare`]: what the runs add up to;
//! - [`export`]: the hook of the files made for people.

pub mod atomic;
pub mod compare;
mod error;
pub mod export;
pub mod file;
pub mod lock;
pub mod method;
pub mod order;
pub mod plan;
pub mod records;
pub mod results;
pub mod runner;
pub mod summary;

pub use error::CampaignError;
