//! AF_XDP transmit port.

use std::time::{Duration, Instant};

use super::socket::{Direction, UmemPlan, XskSocket};
use super::{XdpConfig, XdpMode};
use crate::iface::Iface;
use crate::port::TxPort;
use crate::IoError;

/// Smallest frame the kernel accepts on an Ethernet device (its header).
const ETH_HLEN: usize = 14;
/// Longest wait of `send_batch` when no chunk is free.
const FULL_WAIT: Duration = Duration::from_millis(1);
/// Longest wait of `flush`.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// An AF_XDP socket bound to one TX queue, with its own UMEM.
///
/// Each UMEM chunk is one transmit slot of [`TxPort::slot_size`] (the
/// configured frame size) bytes. A chunk is free again once the kernel has
/// returned it on the completion ring; the most recently freed chunks are
/// reused first, so a generator that patches frames in place touches few,
/// cache-warm chunks.
pub struct AfXdpTx {
    sock: XskSocket,
    /// Chunks owned by user space, ready to be written.
    free: Vec<u32>,
    /// Length of the frame each chunk last held (0: never sent).
    chunk_lens: Vec<u32>,
    tx_errors: u64,
    /// Largest frame the interface's MTU allows (without a VLAN tag).
    max_len: usize,
    kicks: u64,
}

impl AfXdpTx {
    /// Opens an AF_XDP socket on TX queue `queue` of `iface` (in the calling
    /// thread's network namespace). Where a receiver of this process holds
    /// that queue, the port sends through the receiver's socket instead
    /// (the kernel binds one socket per queue; see `duplex.rs`), with its
    /// ring sizes and mode.
    pub fn open(iface: &str, queue: u32, cfg: &XdpConfig) -> Result<Self, IoError> {
        cfg.validate()?;
        let info = super::config::usable_iface(iface)?;
        if let Some(sock) = super::duplex::take(&info, queue)? {
            return Ok(Self::with_socket(sock));
        }
        let sock = XskSocket::open(
            &info,
            queue,
            cfg,
            Direction::Tx,
            UmemPlan::Own { sockets: 1 },
        )?;
        Ok(Self::with_socket(sock))
    }

    /// Opens one AF_XDP socket per queue of `queues` on `iface`, all sharing
    /// one UMEM (XDP_SHARED_UMEM; each socket uses its own chunks and has its
    /// own completion ring, so the ports stay independent and may go to
    /// different threads). The first socket decides the mode of all.
    ///
    /// [`AfXdpTx::open`] (one UMEM per socket) is the default: on veth both
    /// ran at the same speed (see the module documentation); this exists for
    /// that comparison and for zero-copy NICs, where it may differ.
    pub fn open_shared_umem(
        iface: &str,
        queues: &[u32],
        cfg: &XdpConfig,
    ) -> Result<Vec<Self>, IoError> {
        cfg.validate()?;
        let info = super::config::usable_iface(iface)?;
        let Some((&q0, rest)) = queues.split_first() else {
            return Ok(Vec::new());
        };
        let owner = XskSocket::open(
            &info,
            q0,
            cfg,
            Direction::Tx,
            UmemPlan::Own {
                sockets: queues.len() as u32,
            },
        )?;
        let mut others = Vec::with_capacity(rest.len());
        for (i, &q) in rest.iter().enumerate() {
            let plan = UmemPlan::Shared {
                owner: &owner,
                index: i as u32 + 1,
            };
            others.push(XskSocket::open(&info, q, cfg, Direction::Tx, plan)?);
        }
        let mut ports = vec![Self::with_socket(owner)];
        ports.extend(others.into_iter().map(Self::with_socket));
        Ok(ports)
    }

    fn with_socket(sock: XskSocket) -> Self {
        let (first, frames) = (sock.umem.first, sock.umem.frames);
        AfXdpTx {
            // Popped from the end: the first chunk is used first.
            free: (first..first + frames).rev().collect(),
            chunk_lens: vec![0; frames as usize],
            tx_errors: 0,
            max_len: sock.iface.mtu as usize + ETH_HLEN,
            kicks: 0,
            sock,
        }
    }

    /// The mode the socket runs in (copy or zero-copy).
    pub fn mode(&self) -> XdpMode {
        XdpMode {
            zerocopy: self.sock.zerocopy,
            attach: None,
        }
    }

    /// The interface this port sends on.
    pub fn iface(&self) -> &Iface {
        &self.sock.iface
    }

    /// The queue this port sends on.
    pub fn queue(&self) -> u32 {
        self.sock.queue
    }

    /// Wake-up system calls made so far: after a batch only when the kernel
    /// asked for one (always, in copy mode), more while waiting for free
    /// chunks and in `flush`.
    pub fn kicks(&self) -> u64 {
        self.kicks
    }

    /// The copy-mode budget of descriptors per `sendto`, when this kernel
    /// let us raise it to the batch size (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+).
    pub fn tx_budget(&self) -> Option<u32> {
        self.sock.tx_budget
    }

    /// Chunks given to the kernel and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.sock.umem.frames as usize - self.free.len()
    }

    /// Takes completed chunks back from the completion ring.
    #[inline(always)]
    fn reclaim(&mut self) {
        let n = self.sock.comp.available(u32::MAX);
        if n == 0 {
            return;
        }
        let shift = self.sock.umem.frame_size.trailing_zeros();
        let (first, frames) = (self.sock.umem.first, self.sock.umem.frames);
        for i in 0..n {
            // SAFETY: i < n, the number of entries available.
            let addr = unsafe { self.sock.comp.read(i) };
            let chunk = (addr >> shift) as u32;
            if chunk.wrapping_sub(first) < frames {
                self.free.push(chunk);
            }
        }
        self.sock.comp.release(n);
    }

    /// Tells the kernel to send, when it asked to be told (or always
    /// without need_wakeup).
    #[inline(always)]
    fn kick_if_needed(&mut self) -> Result<(), IoError> {
        let tx = self.sock.tx.as_ref().expect("TX socket has a TX ring");
        if self.sock.need_wakeup && !tx.needs_wakeup() {
            return Ok(());
        }
        self.kicks += 1;
        match super::sys::kick_tx(self.sock.raw_fd()) {
            Ok(()) => Ok(()),
            Err(e) => match e.raw_os_error() {
                // Transient: the kernel's per-call budget ran out, the
                // completion ring or the driver is full, a signal. The
                // descriptors stay queued and go with the next kick.
                Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS)
                | Some(libc::EINTR) => Ok(()),
                Some(libc::ENETDOWN) => Err(IoError::InterfaceDown(self.sock.iface.name.clone())),
                Some(libc::ENXIO) | Some(libc::ENODEV) => {
                    Err(IoError::NoSuchInterface(self.sock.iface.name.clone()))
                }
                _ => Err(IoError::sys("sending", &self.sock.iface.name, e)),
            },
        }
    }

    /// Whether the kernel would send a frame of `len` bytes starting with `data`.
    #[inline(always)]
    fn frame_ok(&self, data: &[u8], len: usize) -> bool {
        if !(ETH_HLEN..=data.len()).contains(&len) {
            return false;
        }
        let mut max = self.max_len;
        if data[12] == 0x81 && data[13] == 0x00 {
            max += 4; // one 802.1Q tag is allowed on top of the MTU
        }
        len <= max
    }
}

impl TxPort for AfXdpTx {
    fn backend(&self) -> String {
        format!("afxdp ({})", self.mode())
    }

    fn slot_size(&self) -> usize {
        self.sock.umem.frame_size
    }

    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        mut fill: F,
    ) -> Result<usize, IoError> {
        let want = n.min(u32::MAX as usize) as u32;
        if want == 0 {
            return Ok(0);
        }
        self.reclaim();
        let mut deadline = None;
        let k = loop {
            let ring_free = self.sock.tx.as_mut().expect("TX ring").free(want);
            let k = want.min(ring_free).min(self.free.len() as u32);
            if k > 0 {
                break k;
            }
            // Everything is in flight: make the kernel send (copy mode
            // transmits inside the system call), then take completions.
            self.kick_if_needed()?;
            self.reclaim();
            if !self.free.is_empty() {
                continue;
            }
            let now = Instant::now();
            if now >= *deadline.get_or_insert(now + FULL_WAIT) {
                return Ok(0);
            }
            std::thread::yield_now();
        };

        let frame_size = self.sock.umem.frame_size as u64;
        let mut written = 0u32;
        for i in 0..k as usize {
            let chunk = self.free.pop().expect("k <= free.len()");
            let idx = (chunk - self.sock.umem.first) as usize;
            let prev = self.chunk_lens[idx] as usize;
            // SAFETY: the chunk came from the free list, so user space owns
            // it and nothing else references it.
            let slot = unsafe { self.sock.umem.chunk_mut(chunk) };
            let len = fill(i, slot, prev);
            if !self.frame_ok(slot, len) {
                // Dropped here: the kernel would skip an invalid descriptor
                // without ever completing its chunk. What the slot holds
                // now is unknown, so it counts as never used.
                self.tx_errors += 1;
                self.chunk_lens[idx] = 0;
                self.free.push(chunk);
                continue;
            }
            self.chunk_lens[idx] = len as u32;
            let desc = libc::xdp_desc {
                addr: chunk as u64 * frame_size,
                len: len as u32,
                options: 0,
            };
            // SAFETY: written < k <= the free entries the ring reported.
            unsafe { self.sock.tx.as_mut().expect("TX ring").write(written, desc) };
            written += 1;
        }
        if written > 0 {
            self.sock.tx.as_mut().expect("TX ring").submit(written);
            self.kick_if_needed()?;
        }
        Ok(k as usize)
    }

    fn flush(&mut self) -> Result<(), IoError> {
        let start = Instant::now();
        loop {
            self.reclaim();
            if self.in_flight() == 0 {
                return Ok(());
            }
            if start.elapsed() > FLUSH_TIMEOUT {
                return Err(IoError::Other(format!(
                    "{} frames still queued on {} queue {} after {} s",
                    self.in_flight(),
                    self.sock.iface.name,
                    self.sock.queue,
                    FLUSH_TIMEOUT.as_secs()
                )));
            }
            // A kick even without need_wakeup's request: copy mode may stop
            // at its per-call budget with descriptors left in the ring.
            self.kicks += 1;
            let _ = super::sys::kick_tx(self.sock.raw_fd());
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn tx_errors(&self) -> u64 {
        self.tx_errors
    }
}

impl std::fmt::Debug for AfXdpTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfXdpTx")
            .field("iface", &self.sock.iface.name)
            .field("queue", &self.sock.queue)
            .field("mode", &self.mode())
            .finish()
    }
}
