//! Thin, safe wrappers over the few system calls the ports use.
//!
//! All `unsafe` that is not about walking ring memory lives here, in small
//! functions with a SAFETY note each.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::time::Duration;

use crate::IoError;

/// `socket(2)`, returning an owned (close-on-drop) descriptor.
pub(crate) fn socket(domain: i32, ty: i32, proto: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain system call with integer arguments.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(2)` with a plain-old-data value.
pub(crate) fn setsockopt<T: Copy>(fd: RawFd, level: i32, name: i32, val: &T) -> io::Result<()> {
    // SAFETY: `val` points to `size_of::<T>()` readable bytes for the call's duration.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `getsockopt(2)` into a plain-old-data value (all-zero bit patterns valid).
pub(crate) fn getsockopt<T: Copy>(fd: RawFd, level: i32, name: i32, val: &mut T) -> io::Result<()> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `val` points to `len` writable bytes; the kernel writes at most `len`.
    let rc = unsafe { libc::getsockopt(fd, level, name, (val as *mut T).cast(), &mut len) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `bind(2)` an AF_PACKET socket to `ifindex` with `protocol` (host order).
pub(crate) fn bind_packet(fd: RawFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    bind(fd, &sll)
}

/// `bind(2)` to `addr`, a `sockaddr_*` struct of its family.
pub(crate) fn bind<A>(fd: RawFd, addr: &A) -> io::Result<()> {
    // SAFETY: `addr` is a whole sockaddr of the length we pass.
    let rc = unsafe {
        libc::bind(
            fd,
            (addr as *const A).cast(),
            std::mem::size_of::<A>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `poll(2)` on one descriptor. Returns the revents (0 on timeout); EINTR is a timeout.
pub(crate) fn poll_one(fd: RawFd, events: i16, timeout: Duration) -> io::Result<i16> {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // Round up so that a 100 µs timeout still waits instead of spinning.
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
    // SAFETY: `pfd` is one valid pollfd.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINTR) {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(if rc == 0 { 0 } else { pfd.revents })
}

/// The pending socket error (SO_ERROR), which reading clears.
pub(crate) fn take_socket_error(fd: RawFd) -> io::Error {
    let mut v: libc::c_int = 0;
    match getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut v) {
        Ok(()) if v != 0 => io::Error::from_raw_os_error(v),
        Ok(()) => io::Error::other("socket reported an error condition"),
        Err(e) => e,
    }
}

/// An interface name as a C string, or `NoSuchInterface` when it cannot be one.
pub(crate) fn ifname_c(name: &str) -> Result<CString, IoError> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(IoError::NoSuchInterface(name.to_string()));
    }
    CString::new(name).map_err(|_| IoError::NoSuchInterface(name.to_string()))
}

/// The interface index of `name` in the calling thread's network namespace.
pub(crate) fn if_index(name: &str) -> Result<u32, IoError> {
    let c = ifname_c(name)?;
    // SAFETY: `c` is a valid NUL-terminated string. glibc's if_nametoindex
    // opens a socket, so it works in the calling thread's netns.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) | Some(0) | None => {
                Err(IoError::NoSuchInterface(name.to_string()))
            }
            _ => Err(IoError::sys("looking up the interface", name, e)),
        };
    }
    Ok(idx)
}

/// An `ifreq` named `name`, for the SIOCGIF* ioctls.
pub(crate) fn ifreq(name: &str) -> Result<libc::ifreq, IoError> {
    let c = ifname_c(name)?;
    // SAFETY: ifreq is plain old data (a name and a union of PODs); all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(c.as_bytes()) {
        *d = *s as libc::c_char;
    }
    Ok(ifr)
}

/// Runs one SIOCGIF* `ioctl` on `sock` for `ifr`.
pub(crate) fn ifreq_ioctl(
    sock: &OwnedFd,
    req: libc::c_ulong,
    ifr: &mut libc::ifreq,
) -> io::Result<()> {
    // SAFETY: every SIOCGIF* request reads and writes one `struct ifreq`,
    // which `ifr` is.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), req as _, ifr as *mut libc::ifreq) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The system page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// A memory mapping (a packet or AF_XDP socket's ring, or an AF_XDP UMEM
/// area), unmapped on drop.
pub(crate) struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mmap {
    /// Anonymous, zeroed, pre-faulted memory for a UMEM area.
    pub(crate) fn anonymous(len: usize) -> io::Result<Mmap> {
        // SAFETY: a fresh private mapping at an address the kernel chooses;
        // it aliases nothing in this process.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        Self::from_mmap(p, len)
    }

    /// Maps `len` bytes of `fd`'s ring(s), read-write, shared with the
    /// kernel, at offset `pgoff` (0 for a packet socket; XDP_PGOFF_RX_RING,
    /// ... for an AF_XDP socket's rings).
    pub(crate) fn ring(fd: RawFd, len: usize, pgoff: u64) -> io::Result<Mmap> {
        // SAFETY: a fresh shared mapping of the socket's ring at an address
        // the kernel chooses; it aliases nothing else in this process.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        Self::from_mmap(p, len)
    }

    fn from_mmap(p: *mut libc::c_void, len: usize) -> io::Result<Mmap> {
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast()).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Mmap { ptr, len })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made by `anonymous` or `ring`; every
        // pointer into it is owned by the same socket (or port) and dropped
        // with it.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

// SAFETY: a mapping is owned by one socket (or port); moving it to another thread moves
// that exclusive ownership (the kernel side is thread-agnostic).
unsafe impl Send for Mmap {}
// SAFETY: `&Mmap` only hands out the base pointer; every access through it
// is an unsafe block whose caller owns the bytes it touches (the sockets
// sharing a UMEM area use disjoint chunks).
unsafe impl Sync for Mmap {}
