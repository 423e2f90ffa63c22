//! Entering a named network namespace from a worker thread.

use std::os::fd::AsRawFd;

use crate::EngineError;

/// Where `ip netns` keeps its named namespaces.
const NETNS_RUN_DIR: &str = "/var/run/netns";

/// Moves the calling thread into the named network namespace (`ip netns`
/// name). Sockets opened afterwards belong to it for their whole life.
pub fn enter(name: &str) -> Result<(), EngineError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(EngineError::BadPlan(format!(
            "invalid network namespace name '{name}'"
        )));
    }
    let path = std::path::Path::new(NETNS_RUN_DIR).join(name);
    let file = std::fs::File::open(&path).map_err(|e| {
        EngineError::System(if e.kind() == std::io::ErrorKind::NotFound {
            format!("network namespace {name} does not exist")
        } else {
            format!("cannot open {}: {e}", path.display())
        })
    })?;
    // SAFETY: the descriptor is open for the duration of the call; setns
    // only changes the calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(EngineError::System(format!(
            "cannot enter network namespace {name}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}
