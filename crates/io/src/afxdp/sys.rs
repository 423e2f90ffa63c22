//! The AF_XDP kernel ABI (`linux/if_xdp.h`) and the few system calls around
//! it, each in a small function with a SAFETY note.
//!
//! The structs and constants come from the `libc` crate; only what libc
//! lacks is defined here.

use std::io;
use std::os::fd::RawFd;

use crate::IoError;

/// `setsockopt(SOL_XDP, XDP_MAX_TX_SKB_BUDGET)` (Linux 6.17+, not yet in
/// libc): how many descriptors one copy-mode `sendto` may turn into frames
/// (the kernel's default is 32).
pub(super) const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;

/// `getsockopt(2)` into a plain-old-data value; returns the length the
/// kernel wrote (older kernels write shorter versions of some structs).
pub(super) fn getsockopt_len<T: Copy>(
    fd: RawFd,
    level: i32,
    name: i32,
    val: &mut T,
) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `val` points to `len` writable bytes; the kernel writes at most `len`.
    let rc = unsafe { libc::getsockopt(fd, level, name, (val as *mut T).cast(), &mut len) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(len as usize)
    }
}

/// `bind(2)` an AF_XDP socket to queue `queue` of interface `ifindex`
/// (`shared_fd`: the socket whose UMEM it shares, with XDP_SHARED_UMEM).
pub(super) fn bind_xdp(
    fd: RawFd,
    ifindex: u32,
    queue: u32,
    flags: u16,
    shared_fd: u32,
) -> io::Result<()> {
    let sxdp = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: flags,
        sxdp_ifindex: ifindex,
        sxdp_queue_id: queue,
        sxdp_shared_umem_fd: shared_fd,
    };
    crate::sys::bind(fd, &sxdp)
}

/// The zero-length `sendto` that makes the kernel process the TX ring.
pub(super) fn kick_tx(fd: RawFd) -> io::Result<()> {
    // SAFETY: no buffer, no address: the documented AF_XDP wake-up call.
    let rc = unsafe {
        libc::sendto(
            fd,
            std::ptr::null(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null(),
            0,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The zero-length `recvfrom` that wakes the driver to refill its RX queue
/// from the fill ring (zero-copy mode with need_wakeup).
pub(super) fn wake_rx(fd: RawFd) {
    // SAFETY: no buffer, no address: the documented AF_XDP wake-up call.
    // Its result does not matter: frames are read from the ring.
    unsafe {
        libc::recvfrom(
            fd,
            std::ptr::null_mut(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
}

/// The number of queues an AF_XDP socket may bind to on `name`: the larger of
/// its RX and TX queue counts (combined channels count for both), from
/// ETHTOOL_GCHANNELS. `None` when the driver does not report channels.
pub(super) fn queue_count(name: &str) -> Result<Option<u32>, IoError> {
    match crate::ethtool::channels(name) {
        Ok(c) => Ok(c
            .map(|c| c.rx_queues().max(c.tx_queues()))
            .filter(|&n| n > 0)),
        Err(e @ IoError::NoSuchInterface(_)) => Err(e),
        // No get_channels in the driver (lo, some virtual devices).
        Err(_) => Ok(None),
    }
}

/// Identifies the calling thread's network namespace (device and inode of
/// /proc/thread-self/ns/net).
pub(super) fn netns_id() -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata("/proc/thread-self/ns/net")?;
    Ok((m.dev(), m.ino()))
}
