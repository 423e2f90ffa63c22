//! An interface's NAPI instances in threaded mode: their kernel threads,
//! as the kernel's "netdev" generic netlink family lists them (Linux 6.8
//! and later give each instance's thread pid).

use crate::IoError;

/// The pids of the kernel threads of interface `name`'s NAPI instances,
/// in the calling thread's network namespace: one per instance in
/// threaded mode, none otherwise; `None` when the kernel does not list
/// them.
pub fn threads(name: &str) -> Result<Option<Vec<u32>>, IoError> {
    let index = crate::iface::lookup(name)?.index;
    crate::xdpgen::napi_pids(index).map_err(|e| IoError::sys("listing the NAPI instances", name, e))
}
