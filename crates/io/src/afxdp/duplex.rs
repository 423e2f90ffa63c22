//! A receiver and a sender of this process on one queue. The kernel lets
//! one AF_XDP socket bind a queue (a second one is EBUSY), but a socket
//! may have an RX and a TX ring at once: every receiver's socket carries a
//! TX ring and spare UMEM chunks, offers itself here while it is open, and
//! a TX port opened on its queue (traffic both ways: the reverse
//! generator on the forward receiver's port) sends through it. The
//! receiver's thread uses the fill and RX rings only, the sender's the TX
//! and completion rings only, so neither ring has two users.

use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::socket::XskSocket;
use super::XdpConfig;
use crate::iface::Iface;
use crate::IoError;

/// Where a queue is: network namespace (its inode), interface index,
/// queue.
type Key = (u64, u32, u32);

/// A receiver's socket that a sender may use.
struct Offer {
    key: Key,
    id: u64,
    /// The sender's handle, made when the receiver opened.
    sender: XskSocket,
}

static OFFERS: Mutex<Vec<Offer>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The calling thread's network namespace.
fn netns() -> Result<u64, IoError> {
    std::fs::metadata("/proc/thread-self/ns/net")
        .map(|m| m.ino())
        .map_err(|e| {
            IoError::sys(
                "reading the network namespace",
                "/proc/thread-self/ns/net",
                e,
            )
        })
}

/// A receiver's offer, withdrawn when dropped (before its socket closes).
pub(super) struct Offered {
    id: u64,
}

impl Drop for Offered {
    fn drop(&mut self) {
        let mut offers = OFFERS.lock().unwrap_or_else(|e| e.into_inner());
        offers.retain(|o| o.id != self.id);
    }
}

/// Offers receiver socket `rx` (opened with `cfg`) to a sender of this
/// process on its queue.
pub(super) fn offer(rx: &XskSocket, cfg: &XdpConfig) -> Result<Offered, IoError> {
    let sender = XskSocket::sender_of(rx, cfg)?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let key = (netns()?, rx.iface.index, rx.queue);
    let mut offers = OFFERS.lock().unwrap_or_else(|e| e.into_inner());
    offers.push(Offer { key, id, sender });
    Ok(Offered { id })
}

/// The sender's socket of a receiver of this process on `queue` of
/// `iface` (in the calling thread's namespace), taken: one sender per
/// receiver. None when no receiver of this process holds the queue.
pub(super) fn take(iface: &Iface, queue: u32) -> Result<Option<XskSocket>, IoError> {
    let key = (netns()?, iface.index, queue);
    let mut offers = OFFERS.lock().unwrap_or_else(|e| e.into_inner());
    Ok(offers
        .iter()
        .position(|o| o.key == key)
        .map(|i| offers.swap_remove(i).sender))
}
