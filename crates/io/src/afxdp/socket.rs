//! One AF_XDP socket with its own UMEM: creation, ring setup and bind, with
//! every failure mapped to a one-line [`IoError`].

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use super::ring::{ConsRing, ProdRing};
use super::sys;
use super::{XdpConfig, ZeroCopy};
use crate::iface::Iface;
use crate::sys::Mmap;
use crate::IoError;

/// Which rings a socket uses for frames.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Direction {
    /// Receives; also carries a TX ring and [`XdpConfig::tx_ring_size`]
    /// spare UMEM chunks after its own, for a sender of this process on
    /// the same queue (`duplex.rs`).
    Rx,
    Tx,
}

/// Where a socket's UMEM comes from.
#[derive(Clone, Copy)]
pub(super) enum UmemPlan<'a> {
    /// Its own UMEM, registered by this socket, large enough for `sockets`
    /// shares; this socket uses the first share.
    Own { sockets: u32 },
    /// Share number `index` of `owner`'s UMEM (XDP_SHARED_UMEM).
    Shared { owner: &'a XskSocket, index: u32 },
}

/// A socket's share of a UMEM area: chunks `first .. first + frames` of
/// `frame_size` bytes. The area may be shared by several sockets, each
/// using its own chunks only.
pub(super) struct Umem {
    area: Arc<Mmap>,
    pub(super) frame_size: usize,
    pub(super) first: u32,
    pub(super) frames: u32,
}

impl Umem {
    /// The whole chunk `chunk`.
    ///
    /// # Safety
    /// The chunk must be owned by user space (not in a ring the kernel
    /// reads or writes), and no other reference to it may be alive.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn chunk_mut(&self, chunk: u32) -> &mut [u8] {
        debug_assert!((self.first..self.first + self.frames).contains(&chunk));
        // SAFETY: the chunk is one of this socket's share, which lies inside
        // the area; the caller guarantees exclusive ownership.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.area.ptr().add(chunk as usize * self.frame_size),
                self.frame_size,
            )
        }
    }

    /// `len` bytes at UMEM address `addr`, or `None` when they do not lie
    /// inside the area.
    ///
    /// # Safety
    /// The bytes must be owned by user space (a received descriptor not yet
    /// returned to the fill ring).
    #[inline(always)]
    pub(super) unsafe fn bytes(&self, addr: u64, len: u32) -> Option<&[u8]> {
        let end = addr.checked_add(len as u64)?;
        if end > self.area.len() as u64 {
            return None;
        }
        // SAFETY: in bounds (checked above); the caller guarantees the
        // kernel does not write these bytes while they are borrowed.
        Some(unsafe {
            std::slice::from_raw_parts(self.area.ptr().add(addr as usize), len as usize)
        })
    }
}

/// A bound AF_XDP socket.
///
/// Field order matters: the rings and the UMEM are unmapped before the
/// socket is closed.
pub(super) struct XskSocket {
    pub(super) rx: Option<ConsRing<libc::xdp_desc>>,
    pub(super) tx: Option<ProdRing<libc::xdp_desc>>,
    pub(super) fill: ProdRing<u64>,
    pub(super) comp: ConsRing<u64>,
    pub(super) umem: Umem,
    pub(super) fd: OwnedFd,
    pub(super) zerocopy: bool,
    pub(super) need_wakeup: bool,
    /// XDP_MAX_TX_SKB_BUDGET was raised to the batch size (copy-mode TX).
    pub(super) tx_budget: Option<u32>,
    pub(super) iface: Iface,
    pub(super) queue: u32,
}

/// The smallest ring the socket gets for the direction it does not use (the
/// kernel requires both a fill and a completion ring on every UMEM).
const UNUSED_RING: u32 = 64;

/// How long a busy queue is tried again (see [`XskSocket::open`]).
const BUSY_RETRY: std::time::Duration = std::time::Duration::from_millis(300);

impl XskSocket {
    /// Opens a socket on `queue` of `iface`, with the UMEM `plan` says.
    ///
    /// The kernel releases a closed socket's hold on its queue from a work
    /// queue, a little after `close`: a queue found busy is tried again for
    /// up to [`BUSY_RETRY`], so that a port can be reopened right after the
    /// previous one on the same queue was dropped.
    pub(super) fn open(
        iface: &Iface,
        queue: u32,
        cfg: &XdpConfig,
        dir: Direction,
        plan: UmemPlan<'_>,
    ) -> Result<XskSocket, IoError> {
        let start = std::time::Instant::now();
        loop {
            match Self::open_once(iface, queue, cfg, dir, plan) {
                Err(IoError::QueueBusy { .. }) if start.elapsed() < BUSY_RETRY => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                r => return r,
            }
        }
    }

    fn open_once(
        iface: &Iface,
        queue: u32,
        cfg: &XdpConfig,
        dir: Direction,
        plan: UmemPlan<'_>,
    ) -> Result<XskSocket, IoError> {
        let name = iface.name.as_str();
        if let Some(count) = sys::queue_count(name)? {
            if queue >= count {
                return Err(IoError::NoSuchQueue {
                    iface: name.to_string(),
                    queue,
                    count,
                });
            }
        }

        let fd = crate::sys::socket(libc::AF_XDP, libc::SOCK_RAW, 0)
            .map_err(|e| socket_error(name, e))?;
        let raw = fd.as_raw_fd();

        let (fill_size, comp_size, frames) = ring_plan(cfg, dir);
        // A receiver's sender (`duplex.rs`) gets the chunks after its own.
        let sender_frames = match dir {
            Direction::Rx => cfg.tx_ring_size,
            Direction::Tx => 0,
        };
        let (area, first) = match plan {
            UmemPlan::Own { sockets } => {
                let chunks = (frames + sender_frames) as usize * sockets as usize;
                let area = register_umem(raw, name, cfg, chunks)?;
                (area, 0)
            }
            UmemPlan::Shared { owner, index } => (owner.umem.area.clone(), index * frames),
        };

        set_ring_sizes(raw, name, cfg, dir, fill_size, comp_size)?;
        let (fill, comp, rx, tx) = map_rings(raw, name, cfg, dir, fill_size, comp_size)?;

        // Copy mode turns at most XDP_MAX_TX_SKB_BUDGET descriptors into
        // frames per sendto (32 by default); raise it to the batch so that a
        // batch needs one system call. Kernels before 6.17 lack the option.
        // A receiver's socket has a TX ring too.
        let tx_budget =
            Some(cfg.batch as u32).filter(|b| sys_opt(raw, sys::XDP_MAX_TX_SKB_BUDGET, b).is_ok());

        bind(raw, iface, queue, cfg, plan)?;

        let mut opts = libc::xdp_options { flags: 0 };
        sys::getsockopt_len(raw, libc::SOL_XDP, libc::XDP_OPTIONS, &mut opts)
            .map_err(|e| IoError::sys("reading the AF_XDP socket options", name, e))?;

        Ok(XskSocket {
            rx,
            tx,
            fill,
            comp,
            umem: Umem {
                area,
                frame_size: cfg.frame_size,
                first,
                frames,
            },
            fd,
            zerocopy: opts.flags & libc::XDP_OPTIONS_ZEROCOPY != 0,
            need_wakeup: cfg.need_wakeup,
            tx_budget,
            iface: iface.clone(),
            queue,
        })
    }

    /// A second handle on a receiver's socket for a sender on its queue:
    /// a new descriptor of the same socket, its TX and completion rings
    /// mapped again, and the UMEM's chunks after the receiver's.
    pub(super) fn sender_of(rx: &XskSocket, cfg: &XdpConfig) -> Result<XskSocket, IoError> {
        let name = rx.iface.name.as_str();
        let fd = rx
            .fd
            .try_clone()
            .map_err(|e| IoError::sys("sharing an AF_XDP socket", name, e))?;
        let (fill_size, comp_size, _) = ring_plan(cfg, Direction::Rx);
        let (fill, comp, _, tx) = map_rings(
            fd.as_raw_fd(),
            name,
            cfg,
            Direction::Tx,
            fill_size,
            comp_size,
        )?;
        Ok(XskSocket {
            rx: None,
            tx,
            fill,
            comp,
            umem: Umem {
                area: rx.umem.area.clone(),
                frame_size: rx.umem.frame_size,
                first: rx.umem.first + rx.umem.frames,
                frames: cfg.tx_ring_size,
            },
            fd,
            zerocopy: rx.zerocopy,
            need_wakeup: rx.need_wakeup,
            tx_budget: rx.tx_budget,
            iface: rx.iface.clone(),
            queue: rx.queue,
        })
    }

    pub(super) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The socket's XDP_STATISTICS.
    pub(super) fn statistics(&self) -> Result<libc::xdp_statistics, IoError> {
        // SAFETY: xdp_statistics is plain old data; all-zero is valid.
        let mut st: libc::xdp_statistics = unsafe { std::mem::zeroed() };
        sys::getsockopt_len(self.raw_fd(), libc::SOL_XDP, libc::XDP_STATISTICS, &mut st)
            .map_err(|e| IoError::sys("reading XDP_STATISTICS", &self.iface.name, e))?;
        Ok(st)
    }
}

/// A socket's fill and completion ring sizes and its share of UMEM chunks.
fn ring_plan(cfg: &XdpConfig, dir: Direction) -> (u32, u32, u32) {
    match dir {
        Direction::Rx => (cfg.rx_ring_size, cfg.tx_ring_size, 2 * cfg.rx_ring_size),
        Direction::Tx => (UNUSED_RING, cfg.tx_ring_size, cfg.tx_ring_size),
    }
}

/// Allocates a UMEM area of `frames` chunks and registers it with `fd`.
fn register_umem(
    fd: RawFd,
    name: &str,
    cfg: &XdpConfig,
    frames: usize,
) -> Result<Arc<Mmap>, IoError> {
    let area_len = frames * cfg.frame_size;
    let area = Mmap::anonymous(area_len)
        .map_err(|e| IoError::sys(format!("allocating a UMEM of {area_len} bytes"), name, e))?;
    let reg = libc::xdp_umem_reg {
        addr: area.ptr() as u64,
        len: area_len as u64,
        chunk_size: cfg.frame_size as u32,
        headroom: 0,
        flags: 0,
        tx_metadata_len: 0,
    };
    sys_opt(fd, libc::XDP_UMEM_REG, &reg).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOPROTOOPT) => IoError::Unsupported("AF_XDP"),
        Some(libc::ENOMEM) | Some(libc::ENOBUFS) | Some(libc::EPERM) => IoError::sys(
            format!("registering a UMEM of {area_len} bytes (locked memory limit?)"),
            name,
            e,
        ),
        _ => IoError::sys(format!("registering a UMEM of {area_len} bytes"), name, e),
    })?;
    Ok(Arc::new(area))
}

/// Maps the error of `socket(AF_XDP)`.
fn socket_error(iface: &str, e: io::Error) -> IoError {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => IoError::NotPermitted {
            what: "opening an AF_XDP socket",
            caps: "CAP_NET_RAW",
        },
        // A kernel built without CONFIG_XDP_SOCKETS.
        Some(libc::EAFNOSUPPORT) | Some(libc::EPROTONOSUPPORT) => IoError::Unsupported("AF_XDP"),
        _ => IoError::sys("opening an AF_XDP socket", iface, e),
    }
}

fn sys_opt<T: Copy>(fd: RawFd, name: libc::c_int, val: &T) -> io::Result<()> {
    crate::sys::setsockopt(fd, libc::SOL_XDP, name, val)
}

/// Sets the sizes of the socket's rings: fill and completion, TX, and RX
/// for a receiver.
fn set_ring_sizes(
    raw: RawFd,
    name: &str,
    cfg: &XdpConfig,
    dir: Direction,
    fill_size: u32,
    comp_size: u32,
) -> Result<(), IoError> {
    let ring_err = |what: &str, size: u32, e: io::Error| match e.raw_os_error() {
        Some(libc::EINVAL) => IoError::BadRing(format!(
            "the kernel refused an AF_XDP {what} ring of {size} entries"
        )),
        _ => IoError::sys(format!("setting the {what} ring size to {size}"), name, e),
    };
    sys_opt(raw, libc::XDP_UMEM_FILL_RING, &fill_size)
        .map_err(|e| ring_err("fill", fill_size, e))?;
    sys_opt(raw, libc::XDP_UMEM_COMPLETION_RING, &comp_size)
        .map_err(|e| ring_err("completion", comp_size, e))?;
    if dir == Direction::Rx {
        sys_opt(raw, libc::XDP_RX_RING, &cfg.rx_ring_size)
            .map_err(|e| ring_err("RX", cfg.rx_ring_size, e))?;
    }
    // A receiver's too, for a sender on its queue (`duplex.rs`).
    sys_opt(raw, libc::XDP_TX_RING, &cfg.tx_ring_size)
        .map_err(|e| ring_err("TX", cfg.tx_ring_size, e))?;
    Ok(())
}

/// A socket's mapped rings: fill, completion, and RX or TX.
type Rings = (
    ProdRing<u64>,
    ConsRing<u64>,
    Option<ConsRing<libc::xdp_desc>>,
    Option<ProdRing<libc::xdp_desc>>,
);

/// Maps the socket's rings, once their sizes are set.
fn map_rings(
    raw: RawFd,
    name: &str,
    cfg: &XdpConfig,
    dir: Direction,
    fill_size: u32,
    comp_size: u32,
) -> Result<Rings, IoError> {
    // SAFETY: xdp_mmap_offsets is plain old data; all-zero is valid.
    let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
    let len = sys::getsockopt_len(raw, libc::SOL_XDP, libc::XDP_MMAP_OFFSETS, &mut off)
        .map_err(|e| IoError::sys("reading the AF_XDP ring offsets", name, e))?;
    if len != std::mem::size_of::<libc::xdp_mmap_offsets>() {
        // Before Linux 5.4 the offsets had no ring flags word.
        return Err(IoError::Unsupported(
            "AF_XDP need_wakeup (Linux 5.4 or later)",
        ));
    }
    let map_err =
        |what: &str, e: io::Error| IoError::sys(format!("mapping the AF_XDP {what} ring"), name, e);
    let fill = ProdRing::map(raw, &off.fr, fill_size, libc::XDP_UMEM_PGOFF_FILL_RING)
        .map_err(|e| map_err("fill", e))?;
    let comp = ConsRing::map(
        raw,
        &off.cr,
        comp_size,
        libc::XDP_UMEM_PGOFF_COMPLETION_RING,
    )
    .map_err(|e| map_err("completion", e))?;
    let (rx, tx) = match dir {
        Direction::Rx => (
            Some(
                ConsRing::map(
                    raw,
                    &off.rx,
                    cfg.rx_ring_size,
                    libc::XDP_PGOFF_RX_RING as u64,
                )
                .map_err(|e| map_err("RX", e))?,
            ),
            None,
        ),
        Direction::Tx => (
            None,
            Some(
                ProdRing::map(
                    raw,
                    &off.tx,
                    cfg.tx_ring_size,
                    libc::XDP_PGOFF_TX_RING as u64,
                )
                .map_err(|e| map_err("TX", e))?,
            ),
        ),
    };
    Ok((fill, comp, rx, tx))
}

/// Binds the socket to `queue` of `iface`, in the mode `cfg` asks for
/// (a socket sharing a UMEM takes its owner's).
fn bind(
    raw: RawFd,
    iface: &Iface,
    queue: u32,
    cfg: &XdpConfig,
    plan: UmemPlan<'_>,
) -> Result<(), IoError> {
    let name = iface.name.as_str();
    let mut flags = match cfg.zerocopy {
        // With neither flag the kernel tries zero-copy and falls back to copy.
        ZeroCopy::Auto => 0,
        ZeroCopy::On => libc::XDP_ZEROCOPY,
        ZeroCopy::Off => libc::XDP_COPY,
    };
    if cfg.need_wakeup {
        flags |= libc::XDP_USE_NEED_WAKEUP;
    }
    let mut shared_fd = 0;
    if let UmemPlan::Shared { owner, .. } = plan {
        // A socket sharing a UMEM takes its mode from the owner and may
        // set no other flag.
        flags = libc::XDP_SHARED_UMEM;
        shared_fd = owner.raw_fd() as u32;
    }
    sys::bind_xdp(raw, iface.index, queue, flags, shared_fd).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::EBUSY) => IoError::QueueBusy {
                iface: name.to_string(),
                queue,
            },
            Some(libc::EOPNOTSUPP) if cfg.zerocopy == ZeroCopy::On => {
                IoError::ZeroCopyUnavailable {
                    iface: name.to_string(),
                    queue,
                }
            }
            Some(libc::ENODEV) | Some(libc::ENXIO) => IoError::NoSuchInterface(name.to_string()),
            Some(libc::ENETDOWN) => IoError::InterfaceDown(name.to_string()),
            _ => IoError::sys(
                format!("binding an AF_XDP socket to queue {queue}"),
                name,
                e,
            ),
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_errors() {
        // EAFNOSUPPORT cannot be provoked on a kernel with AF_XDP: check the mapping.
        let e = socket_error("eth0", io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        assert_eq!(e.to_string(), "AF_XDP not supported by this kernel");
        assert!(!e.is_usage());
        let e = socket_error("eth0", io::Error::from_raw_os_error(libc::EPERM));
        assert_eq!(
            e.to_string(),
            "opening an AF_XDP socket needs root or CAP_NET_RAW"
        );
        let e = socket_error("eth0", io::Error::from_raw_os_error(libc::EMFILE));
        assert_eq!(
            e.to_string(),
            "opening an AF_XDP socket on eth0: Too many open files"
        );
        assert!(!e.is_usage());
    }
}
