//! RFC 9693's stateful tests as a campaign method ([`Stateful`]): the
//! Initiator opens connections from the DUT's inside port in a
//! preliminary phase, the Responder answers them from the outside port,
//! and a stateful DUT passes an answer only for a connection it holds.
//!
//! - [`connections`]: the N connections of a trial, both ways;
//! - [`responder`]: where the answers go under source NAT;
//! - [`phases`]: one trial (table emptied, preliminary phase,
//!   validation);
//! - [`searches`]: the connection tracking table capacity and the maximum
//!   connection establishment rate, by [`crate::Search`];
//! - [`throughput`]: throughput over established connections, the
//!   connections' own traffic both ways at once;
//! - [`teardown`]: the connection tear-down rate;
//! - [`limit`]: the DUT's connection table limit a run sets
//!   (`--conntrack-max`);
//! - [`settings`] and [`flags`], [`results`] (`rfc9693.json`), [`method`].

pub mod connections;
pub mod flags;
pub mod limit;
pub mod method;
pub mod phases;
pub mod responder;
pub mod results;
pub mod searches;
pub mod settings;
pub mod teardown;
pub mod throughput;

pub use method::Stateful;
pub use results::{StatefulReport, StatefulRun};
pub use settings::{StatefulSettings, Test};
