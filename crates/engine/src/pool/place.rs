//! Where a worker thread runs: its network namespace and its CPU.

use crate::EngineError;

/// Enters the namespace and pins the calling thread to `cpus[i % len]`
/// (not pinned when `cpus` is empty). Returns the CPU it was pinned to.
pub(crate) fn place_thread(
    netns: Option<&str>,
    cpus: &[usize],
    i: usize,
) -> Result<Option<usize>, EngineError> {
    if let Some(ns) = netns {
        crate::netns::enter(ns)?;
    }
    let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
    if let Some(cpu) = cpu {
        crate::affinity::pin_current_thread(cpu)?;
    }
    Ok(cpu)
}

/// Runs `f` on a short-lived thread that entered `netns` first, for work
/// that must happen inside the namespace but outside the workers (loading
/// a program where the interface is, reading its counters).
pub(crate) fn in_netns<T: Send>(
    netns: Option<&str>,
    side: &'static str,
    f: impl FnOnce() -> Result<T, EngineError> + Send,
) -> Result<T, EngineError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            place_thread(netns, &[], 0)?;
            f()
        })
        .join()
        .map_err(|_| EngineError::WorkerPanicked(side))?
    })
}
