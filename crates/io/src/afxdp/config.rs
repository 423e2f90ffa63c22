//! An AF_XDP port's settings (`XdpConfig`), the mode it ended up in
//! (`XdpMode`), and the interface check the TX and RX sides share.

use std::fmt;

use crate::loader::{AttachMode, Attached};
use crate::IoError;

/// Whether to use zero-copy mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZeroCopy {
    /// Zero-copy where the driver supports it, copy mode otherwise.
    #[default]
    Auto,
    /// Zero-copy or an error.
    On,
    /// Copy mode.
    Off,
}

/// Settings of an AF_XDP socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XdpConfig {
    /// Zero-copy or copy mode (default [`ZeroCopy::Auto`]).
    pub zerocopy: ZeroCopy,
    /// UMEM chunk size: a power of two from 2048 to the page size (default
    /// 2048). A TX frame may fill the whole chunk; a received frame gets
    /// the chunk less 256 bytes of kernel headroom (1792 bytes by default;
    /// longer frames are dropped and counted in [`RxPort::drops`](crate::port::RxPort::drops)).
    pub frame_size: usize,
    /// Entries of the RX and fill rings, a power of two (default 16384). An
    /// RX socket's UMEM has twice as many chunks (64 MiB by default, pinned
    /// memory: without CAP_IPC_LOCK it counts against RLIMIT_MEMLOCK). The
    /// ring absorbs the time the receiving thread is not running (up to
    /// 55 ms at 300 kpps): on a loaded 2-CPU virtual machine whose host
    /// steals time from its CPUs, receiving a 200-320 kpps trafgen stream on
    /// a veth, a ring of 2048 lost 0.2-0.6% of the frames in 4 of 4 runs,
    /// 4096 lost 0.13-0.31% in 3 of 9 runs; 8192 lost 0.09% and 0.45% in 2
    /// of 16 runs made interleaved with 16384, which lost none in 16, and
    /// 1.3% in 1 of about 30 `bench/peers` rounds (fill ring empty: the
    /// thread was off its CPU for longer than the ring lasts).
    pub rx_ring_size: u32,
    /// Entries of the TX and completion rings, a power of two (default
    /// 2048); a TX socket's UMEM has as many chunks.
    pub tx_ring_size: u32,
    /// Most frames one `recv_batch` delivers, and (copy mode, where the
    /// kernel allows it) how many descriptors one wake-up `sendto` turns
    /// into frames (default 256). `send_batch` queues as many frames as it
    /// is asked for while ring entries and UMEM chunks are free.
    pub batch: usize,
    /// Ask the kernel to say when it needs a wake-up call (default true);
    /// without it every batch makes a system call.
    pub need_wakeup: bool,
    /// How the RX program is attached (default [`AttachMode::Auto`]).
    pub attach: AttachMode,
}

impl Default for XdpConfig {
    fn default() -> Self {
        XdpConfig {
            zerocopy: ZeroCopy::Auto,
            frame_size: 2048,
            rx_ring_size: 16384,
            tx_ring_size: 2048,
            batch: 256,
            need_wakeup: true,
            attach: AttachMode::Auto,
        }
    }
}

/// Bytes the kernel keeps free at the start of every RX chunk
/// (XDP_PACKET_HEADROOM): a received frame gets the chunk less these.
pub const RX_HEADROOM: usize = 256;

/// The largest UMEM chunk: the page size.
pub fn max_frame_size() -> usize {
    crate::sys::page_size()
}

impl XdpConfig {
    /// The longest frame (without FCS) an RX socket with these settings
    /// receives; the kernel drops longer ones.
    pub fn rx_frame_capacity(&self) -> usize {
        self.frame_size.saturating_sub(RX_HEADROOM)
    }
}

/// Largest ring we accept.
const MAX_RING: u32 = 1 << 16;
/// Smallest ring we accept.
const MIN_RING: u32 = 64;

impl XdpConfig {
    /// Refuses settings the kernel would refuse, with one clear line.
    pub(super) fn validate(&self) -> Result<(), IoError> {
        let page = crate::sys::page_size();
        if !self.frame_size.is_power_of_two() || self.frame_size < 2048 || self.frame_size > page {
            return Err(IoError::BadRing(format!(
                "AF_XDP frame size {} is not a power of two from 2048 to {page}",
                self.frame_size
            )));
        }
        for (what, n) in [("RX", self.rx_ring_size), ("TX", self.tx_ring_size)] {
            if !n.is_power_of_two() || !(MIN_RING..=MAX_RING).contains(&n) {
                return Err(IoError::BadRing(format!(
                    "AF_XDP {what} ring size {n} is not a power of two from {MIN_RING} to {MAX_RING}"
                )));
            }
        }
        let max_batch = self.rx_ring_size.min(self.tx_ring_size) as usize;
        if self.batch == 0 || self.batch > max_batch {
            return Err(IoError::BadRing(format!(
                "AF_XDP batch {} is not between 1 and the ring size {max_batch}",
                self.batch
            )));
        }
        Ok(())
    }
}

/// The mode a socket actually runs in, for the user to see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XdpMode {
    /// True in zero-copy mode, false in copy mode.
    pub zerocopy: bool,
    /// How the RX redirect program is attached; `None` for TX sockets.
    pub attach: Option<Attached>,
}

impl fmt::Display for XdpMode {
    /// `copy`, `zero-copy`, `copy, generic XDP`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.zerocopy { "zero-copy" } else { "copy" })?;
        if let Some(a) = self.attach {
            write!(f, ", {a}")?;
        }
        Ok(())
    }
}

/// Looks the interface up and refuses one that is down.
pub(super) fn usable_iface(name: &str) -> Result<crate::iface::Iface, IoError> {
    let iface = crate::iface::lookup(name)?;
    if !crate::iface::is_up(name)? {
        return Err(IoError::InterfaceDown(name.to_string()));
    }
    Ok(iface)
}
