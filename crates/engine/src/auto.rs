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
//!
//! A receiver must also get every frame the interface can carry: AF_XDP
//! drops a frame longer than its chunk less the kernel's headroom (1792
//! bytes with 2048-byte chunks), so on an interface with a larger MTU (the
//! built-in lab's 9000) it takes larger chunks when a page holds the
//! frame, and AF_PACKET otherwise.

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

/// An RX port of either kind; AF_PACKET with the reason when the MTU
/// ruled AF_XDP out.
#[allow(clippy::large_enum_variant)]
pub enum AutoRx {
    Xdp(AfXdpRx),
    Packet(AfPacketRx, Option<String>),
}

/// The longest frame (without FCS) an interface of MTU `mtu` receives:
/// the Ethernet header and one VLAN tag on top of the MTU.
pub fn largest_frame(mtu: u32) -> usize {
    mtu as usize + 14 + 4
}

/// The UMEM chunk size with which an AF_XDP receiver gets every frame of
/// an interface of MTU `mtu`: `configured` when the frame fits, else the
/// smallest larger power of two up to `page`; None when no chunk holds it.
pub fn rx_chunk_for(mtu: u32, configured: usize, page: usize) -> Option<usize> {
    let need = largest_frame(mtu) + afxdp::RX_HEADROOM;
    let mut size = configured.max(1);
    while size < need && size <= page {
        size *= 2;
    }
    (size >= need && size <= page).then_some(size)
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
        let mut why = None;
        if threads == queues {
            let mtu = pktlab_io::iface::lookup(iface)?.mtu;
            match rx_chunk_for(mtu, xdp.frame_size, afxdp::max_frame_size()) {
                Some(frame_size) => {
                    let xdp = XdpConfig { frame_size, ..*xdp };
                    match AfXdpRx::open(iface, thread as u32, &xdp) {
                        Ok(p) => return Ok(AutoRx::Xdp(p)),
                        Err(e) if fatal(&e) => return Err(e),
                        Err(_) => {}
                    }
                }
                None => {
                    why = Some(format!(
                        "MTU {mtu}: frames of up to {} bytes do not fit an AF_XDP chunk",
                        largest_frame(mtu)
                    ))
                }
            }
        }
        AfPacketRx::open(iface, ring, fanout).map(|p| AutoRx::Packet(p, why))
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
            AutoRx::Packet(p, None) => p.backend(),
            AutoRx::Packet(p, Some(why)) => format!("{} ({why})", p.backend()),
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
            AutoRx::Packet(p, _) => p.recv_batch(timeout, on_frame),
        }
    }

    fn drops(&mut self) -> Result<u64, IoError> {
        match self {
            AutoRx::Xdp(p) => p.drops(),
            AutoRx::Packet(p, _) => p.drops(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_the_largest_frame() {
        // 1500 + 18 + 256 headroom = 1774: the default 2048 holds it.
        assert_eq!(rx_chunk_for(1500, 2048, 4096), Some(2048));
        // 1774 + 256 = 2030 still fits; one byte more needs 4096.
        assert_eq!(rx_chunk_for(1774, 2048, 4096), Some(2048));
        assert_eq!(rx_chunk_for(1775, 2048, 4096), Some(4096));
        // 3822 + 18 + 256 = 4096 exactly.
        assert_eq!(rx_chunk_for(3822, 2048, 4096), Some(4096));
        // The built-in lab: 9018 + 256 bytes fit no page of 4096.
        assert_eq!(rx_chunk_for(9000, 2048, 4096), None);
        assert_eq!(rx_chunk_for(3823, 2048, 4096), None);
        // With 64 KiB pages a jumbo frame fits a 16 KiB chunk.
        assert_eq!(rx_chunk_for(9000, 2048, 65536), Some(16384));
        // A configured chunk larger than needed stays.
        assert_eq!(rx_chunk_for(1500, 4096, 4096), Some(4096));
    }

    #[test]
    fn largest_frame_by_hand() {
        assert_eq!(largest_frame(1500), 1518);
        assert_eq!(largest_frame(9000), 9018);
    }
}
