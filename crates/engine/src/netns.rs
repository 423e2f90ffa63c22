//! Entering a named network namespace from a worker thread (the `setns`
//! itself lives in `pktlab_io::netns`).

use pktlab_io::netns::NetnsError;

use crate::EngineError;

/// Moves the calling thread into the named network namespace (`ip netns`
/// name). Sockets opened afterwards belong to it for their whole life.
pub fn enter(name: &str) -> Result<(), EngineError> {
    pktlab_io::netns::enter(name).map_err(|e| match e {
        NetnsError::BadName(_) => EngineError::BadPlan(e.to_string()),
        _ => EngineError::System(e.to_string()),
    })
}
