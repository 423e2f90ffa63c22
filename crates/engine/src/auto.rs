//! `--io auto`: AF_XDP where it works for the whole run, AF_PACKET
//! otherwise.
//!
//! Every thread decides the same way from the same facts: AF_XDP needs one
//! socket per queue, so a generator uses it only when every thread has a
//! TX queue of its own, and a receiver only when its threads cover every
//! RX queue (frames on a queue without a socket would never be counted).
//! An AF_XDP socket that fails to open (no privileges for XDP, an old
//! kernel, a queue in use, an XDP program already attached) falls back to
//! AF_PACKET; a missing or down interface fails either way.

use std::time::Duration;

use pktlab_io::afpacket::{AfPacketRx, AfPacketTx, RxRingConfig, TxRingConfig};
use pktlab_io::afxdp::{self, AfXdpRx, AfXdpTx, XdpConfig};
use pktlab_io::port::{RxFrame, RxPort, TxPort};
use pktlab_io::IoError;

/// A TX port of either kind; one `match` per batch, never per frame.
// One per thread, kept inline: boxing would put an indirection on the hot path.
#[allow(clippy::large_enum_variant)]
pub enum AutoTx {
    Xdp(AfXdpTx),
    Packet(AfPacketTx),
}

/// An RX port of either kind.
#[allow(clippy::large_enum_variant)]
pub enum AutoRx {
    Xdp(AfXdpRx),
    Packet(AfPacketRx),
}

/// True when an error would hit AF_PACKET as well: no point falling back.
fn fatal(e: &IoError) -> bool {
    matches!(e, IoError::NoSuchInterface(_) | IoError::InterfaceDown(_))
}

impl AutoTx {
    /// Thread `thread` of `threads` opens its port on `iface`.
    pub fn open(
        iface: &str,
        thread: usize,
        threads: usize,
        xdp: &XdpConfig,
        ring: &TxRingConfig,
    ) -> Result<AutoTx, IoError> {
        let queues = afxdp::queue_count(iface)?.unwrap_or(1) as usize;
        if threads <= queues {
            match AfXdpTx::open(iface, thread as u32, xdp) {
                Ok(p) => return Ok(AutoTx::Xdp(p)),
                Err(e) if fatal(&e) => return Err(e),
                Err(_) => {}
            }
        }
        AfPacketTx::open(iface, ring).map(AutoTx::Packet)
    }
}

impl AutoRx {
    /// Thread `thread` of `threads` opens its port on `iface`; `fanout` is
    /// the AF_PACKET fanout group when there are several threads.
    pub fn open(
        iface: &str,
        thread: usize,
        threads: usize,
        xdp: &XdpConfig,
        ring: &RxRingConfig,
        fanout: Option<u16>,
    ) -> Result<AutoRx, IoError> {
        let queues = afxdp::queue_count(iface)?.unwrap_or(1) as usize;
        if threads == queues {
            match AfXdpRx::open(iface, thread as u32, xdp) {
                Ok(p) => return Ok(AutoRx::Xdp(p)),
                Err(e) if fatal(&e) => return Err(e),
                Err(_) => {}
            }
        }
        AfPacketRx::open(iface, ring, fanout).map(AutoRx::Packet)
    }
}

impl TxPort for AutoTx {
    fn backend(&self) -> String {
        match self {
            AutoTx::Xdp(p) => p.backend(),
            AutoTx::Packet(p) => p.backend(),
        }
    }

    fn slot_size(&self) -> usize {
        match self {
            AutoTx::Xdp(p) => p.slot_size(),
            AutoTx::Packet(p) => p.slot_size(),
        }
    }

    #[inline]
    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        fill: F,
    ) -> Result<usize, IoError> {
        match self {
            AutoTx::Xdp(p) => p.send_batch(n, fill),
            AutoTx::Packet(p) => p.send_batch(n, fill),
        }
    }

    fn flush(&mut self) -> Result<(), IoError> {
        match self {
            AutoTx::Xdp(p) => p.flush(),
            AutoTx::Packet(p) => p.flush(),
        }
    }

    fn tx_errors(&self) -> u64 {
        match self {
            AutoTx::Xdp(p) => p.tx_errors(),
            AutoTx::Packet(p) => p.tx_errors(),
        }
    }
}

impl RxPort for AutoRx {
    fn backend(&self) -> String {
        match self {
            AutoRx::Xdp(p) => p.backend(),
            AutoRx::Packet(p) => p.backend(),
        }
    }

    #[inline]
    fn recv_batch<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        timeout: Duration,
        on_frame: F,
    ) -> Result<usize, IoError> {
        match self {
            AutoRx::Xdp(p) => p.recv_batch(timeout, on_frame),
            AutoRx::Packet(p) => p.recv_batch(timeout, on_frame),
        }
    }

    fn drops(&mut self) -> Result<u64, IoError> {
        match self {
            AutoRx::Xdp(p) => p.drops(),
            AutoRx::Packet(p) => p.drops(),
        }
    }
}
