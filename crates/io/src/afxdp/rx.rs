//! AF_XDP receive port.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::duplex::{self, Offered};
use super::redirect::Redirect;
use super::socket::{Direction, UmemPlan, XskSocket};
use super::{XdpConfig, XdpMode};
use crate::iface::Iface;
use crate::port::{RxFrame, RxPort};
use crate::IoError;

/// An AF_XDP socket bound to one RX queue, with its own UMEM, fed by the
/// interface's `xsk_redirect` XDP program.
///
/// The UMEM has twice as many chunks as the fill ring has entries: the fill
/// ring starts full and the rest are handed to it as it empties. Chunks of
/// a batch go back to the fill ring as soon as the batch has been delivered.
pub struct AfXdpRx {
    /// This socket offered to a sender of this process on its queue
    /// (`duplex.rs`); withdrawn first.
    _offered: Offered,
    // Dropped next: the queue's map entry goes before the socket closes,
    // and the program is detached (if this was its last socket) before
    // the socket's memory is released.
    redirect: RxRedirect,
    sock: XskSocket,
    /// Chunks owned by user space and not in the fill ring.
    spare: Vec<u64>,
    /// Addresses of the batch being delivered, returned to the fill ring.
    done: Vec<u64>,
    batch: u32,
}

/// Counters the kernel keeps for an AF_XDP RX socket, cumulative since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XdpStatistics {
    /// Frames dropped: no chunk in the fill ring, or too long for a chunk.
    pub rx_dropped: u64,
    /// Frames dropped because the RX ring was full (user space too slow).
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty.
    pub fill_ring_empty: u64,
    /// Invalid descriptors in the fill ring (a bug if not 0).
    pub rx_invalid_descs: u64,
}

/// This socket's place in the shared redirect program's map.
struct RxRedirect {
    redirect: Arc<Redirect>,
    queue: u32,
}

impl Drop for RxRedirect {
    fn drop(&mut self) {
        self.redirect.remove(self.queue);
    }
}

impl AfXdpRx {
    /// Opens an AF_XDP socket on RX queue `queue` of `iface` (in the calling
    /// thread's network namespace) and redirects that queue to it, attaching
    /// the XDP program unless this process has attached it to `iface`
    /// already.
    pub fn open(iface: &str, queue: u32, cfg: &XdpConfig) -> Result<Self, IoError> {
        cfg.validate()?;
        let info = super::config::usable_iface(iface)?;
        let queues = super::sys::queue_count(iface)?;
        if let Some(count) = queues.filter(|&c| queue >= c) {
            return Err(IoError::NoSuchQueue {
                iface: iface.to_string(),
                queue,
                count,
            });
        }
        // The program first: a socket closed because attaching failed would
        // keep its queue busy for a moment (the kernel releases it later).
        let redirect = Redirect::acquire(&info, queues, cfg.attach)?;
        let sock = XskSocket::open(
            &info,
            queue,
            cfg,
            Direction::Rx,
            UmemPlan::Own { sockets: 1 },
        )?;
        let offered = duplex::offer(&sock, cfg)?;
        let mut rx = AfXdpRx {
            _offered: offered,
            redirect: RxRedirect {
                redirect: redirect.clone(),
                queue,
            },
            spare: (sock.umem.first as u64..(sock.umem.first + sock.umem.frames) as u64)
                .rev()
                .map(|c| c * sock.umem.frame_size as u64)
                .collect(),
            done: Vec::with_capacity(cfg.batch),
            batch: cfg.batch as u32,
            sock,
        };
        rx.refill();
        // Frames start arriving here as soon as the map entry exists.
        redirect.insert(queue, rx.sock.raw_fd())?;
        Ok(rx)
    }

    /// The mode the socket runs in: copy or zero-copy, native or generic XDP.
    pub fn mode(&self) -> XdpMode {
        XdpMode {
            zerocopy: self.sock.zerocopy,
            attach: Some(self.redirect.redirect.mode()),
        }
    }

    /// The warning printed when the interface refused native XDP and the
    /// program was attached in generic mode instead.
    pub fn attach_warning(&self) -> Option<&str> {
        self.redirect.redirect.warning()
    }

    /// The interface this port receives on.
    pub fn iface(&self) -> &Iface {
        &self.sock.iface
    }

    /// The queue this port receives on.
    pub fn queue(&self) -> u32 {
        self.sock.queue
    }

    /// The kernel's counters for this socket (XDP_STATISTICS).
    pub fn statistics(&self) -> Result<XdpStatistics, IoError> {
        let st = self.sock.statistics()?;
        Ok(XdpStatistics {
            rx_dropped: st.rx_dropped,
            rx_ring_full: st.rx_ring_full,
            fill_ring_empty: st.rx_fill_ring_empty_descs,
            rx_invalid_descs: st.rx_invalid_descs,
        })
    }

    /// Moves spare chunks into the fill ring, as many as fit.
    #[inline(always)]
    fn refill(&mut self) {
        if self.spare.is_empty() {
            return;
        }
        let k = self
            .sock
            .fill
            .free(self.spare.len() as u32)
            .min(self.spare.len() as u32);
        for i in 0..k {
            let addr = self.spare.pop().expect("k <= spare.len()");
            // SAFETY: i < k <= the free entries the ring reported.
            unsafe { self.sock.fill.write(i, addr) };
        }
        if k > 0 {
            self.sock.fill.submit(k);
        }
    }

    fn socket_error(&self) -> IoError {
        let e = crate::sys::take_socket_error(self.sock.raw_fd());
        match e.raw_os_error() {
            Some(libc::ENETDOWN) => IoError::InterfaceDown(self.sock.iface.name.clone()),
            Some(libc::ENODEV) | Some(libc::ENXIO) => {
                IoError::NoSuchInterface(self.sock.iface.name.clone())
            }
            _ => IoError::sys("receiving", &self.sock.iface.name, e),
        }
    }
}

impl RxPort for AfXdpRx {
    fn backend(&self) -> String {
        format!("afxdp ({})", self.mode())
    }

    fn recv_batch<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        timeout: Duration,
        mut on_frame: F,
    ) -> Result<usize, IoError> {
        let mut deadline = None;
        let n = loop {
            let rx = self.sock.rx.as_mut().expect("RX socket has an RX ring");
            let n = rx.available(self.batch);
            if n > 0 {
                break n;
            }
            // Zero-copy drivers stop filling their queue when the fill ring
            // ran dry; they say so with need_wakeup and want a recvfrom.
            if self.sock.need_wakeup && self.sock.fill.needs_wakeup() {
                super::sys::wake_rx(self.sock.raw_fd());
            }
            let now = Instant::now();
            let end = *deadline.get_or_insert(now + timeout);
            if now >= end {
                return Ok(0);
            }
            let rev =
                crate::sys::poll_one(self.sock.raw_fd(), libc::POLLIN | libc::POLLERR, end - now)
                    .map_err(|e| IoError::sys("waiting for frames", &self.sock.iface.name, e))?;
            if rev & (libc::POLLERR | libc::POLLNVAL) != 0 {
                return Err(self.socket_error());
            }
        };

        // One timestamp per batch: AF_XDP carries no per-frame timestamp.
        let ts_ns = crate::clock::realtime_ns();
        let chunk_mask = !(self.sock.umem.frame_size as u64 - 1);
        self.done.clear();
        let rx = self.sock.rx.as_ref().expect("RX ring");
        let mut delivered = 0;
        for i in 0..n {
            // SAFETY: i < n, the number of entries available.
            let d = unsafe { rx.read(i) };
            // SAFETY: the kernel handed this descriptor to user space; its
            // bytes are not rewritten before the chunk is back in the fill
            // ring, which happens after `on_frame` returns.
            if let Some(data) = unsafe { self.sock.umem.bytes(d.addr, d.len) } {
                on_frame(&RxFrame {
                    data,
                    wire_len: d.len,
                    ts_ns,
                });
                delivered += 1;
            }
            self.done.push(d.addr & chunk_mask);
        }
        self.sock.rx.as_mut().expect("RX ring").release(n);
        self.spare.append(&mut self.done);
        self.refill();
        Ok(delivered)
    }

    /// Frames the kernel dropped for this socket: no free chunk in the fill
    /// ring or too long for a chunk (XDP_STATISTICS rx_dropped), or RX ring
    /// full (rx_ring_full).
    fn drops(&mut self) -> Result<u64, IoError> {
        let st = self.sock.statistics()?;
        Ok(st.rx_dropped + st.rx_ring_full)
    }
}

impl std::fmt::Debug for AfXdpRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfXdpRx")
            .field("iface", &self.sock.iface.name)
            .field("queue", &self.sock.queue)
            .field("mode", &self.mode())
            .finish()
    }
}
