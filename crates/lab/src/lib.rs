//! pktlab lab layer: network namespaces, veth pairs and the built-in
//! forwarding lab.

mod error;
pub mod neigh;
pub mod netns;
pub mod runner;

pub use error::LabError;

/// Most queues a lab veth pair may have.
pub const MAX_QUEUES: u16 = 64;
