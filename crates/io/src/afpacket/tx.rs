//! AF_PACKET TPACKET_V2 TX ring.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::iface::Iface;
use crate::port::TxPort;
use crate::sys::{self, Mmap};
use crate::IoError;

/// Geometry of a TX ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRingConfig {
    /// Largest frame, in bytes without FCS (1514 for a standard Ethernet
    /// MTU, 9014 for jumbo frames). A ring slot is this plus the 32-byte
    /// tpacket2 header area, rounded up to a power of two.
    pub slot_size: usize,
    /// Number of slots (default 4096). Rounded up so that slots fill whole
    /// memory pages.
    pub slots: usize,
}

impl Default for TxRingConfig {
    fn default() -> Self {
        TxRingConfig {
            slot_size: 1514,
            slots: 4096,
        }
    }
}

/// Smallest frame the kernel accepts on an Ethernet device (its header).
const ETH_HLEN: usize = 14;
/// Largest slot_size we accept (a 64 KiB IP packet plus its Ethernet header).
const MAX_SLOT_SIZE: usize = 65536 + ETH_HLEN;
/// Largest number of slots we accept.
const MAX_SLOTS: usize = 1 << 22;
/// Where frame data starts in a TPACKET_V2 TX slot when PACKET_TX_HAS_OFF is
/// off: `TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)` (32 bytes).
const DATA_OFF: usize = libc::TPACKET2_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>();
/// Size of the struct virtio_net_hdr that precedes each frame with PACKET_VNET_HDR.
const VNET_HDR_LEN: usize = 10;
/// Frames up to this length are copied whole into the socket buffer (see
/// [`AfPacketTx`]); longer ones keep the kernel's zero-copy page fragments.
const COPY_MAX: usize = 2048;
/// Longest wait of `send_batch` when the ring is full.
const FULL_WAIT: Duration = Duration::from_millis(1);
/// Longest wait of `flush`.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// A TPACKET_V2 mmap TX ring bound to one interface.
///
/// The socket is bound with protocol 0, so it receives nothing.
///
/// Each slot starts with a virtio_net_hdr (PACKET_VNET_HDR) whose `hdr_len`
/// is the frame's length, for frames up to 2048 bytes. That makes the
/// kernel copy the frame into the socket buffer instead of attaching the
/// ring page as a zero-copy fragment, which a veth pair (and any path that
/// must orphan zero-copy fragments) would otherwise copy again into a newly
/// allocated page for every frame: on a veth pair this raises the rate of
/// 64-byte frames by about 40%. Without PACKET_VNET_HDR (very old kernels)
/// the ring works as a plain TPACKET_V2 ring. Frames the
/// kernel would refuse (shorter than 14 bytes, longer than the slot or than
/// MTU + 14, or + 18 when VLAN-tagged) are refused here instead and counted
/// in [`TxPort::tx_errors`]; with `PACKET_LOSS` on, the kernel itself would
/// drop them silently.
pub struct AfPacketTx {
    // Field order matters: the ring is unmapped before the socket is closed.
    ring: Mmap,
    fd: OwnedFd,
    iface: Iface,
    frame_size: usize,
    nslots: usize,
    head: usize,
    slot_size: usize,
    /// Offset of the frame in a slot: DATA_OFF, plus VNET_HDR_LEN with `vnet`.
    data_off: usize,
    vnet: bool,
    qdisc_bypass: bool,
    tx_errors: u64,
    /// Length of the frame each slot last held, handed to `fill` so that a
    /// generator patches the slot instead of rewriting it whole.
    slot_lens: Vec<u32>,
}

impl AfPacketTx {
    /// Opens a TX ring on `iface` (in the calling thread's network namespace).
    pub fn open(iface: &str, cfg: &TxRingConfig) -> Result<Self, IoError> {
        if cfg.slot_size < ETH_HLEN || cfg.slot_size > MAX_SLOT_SIZE {
            return Err(IoError::BadRing(format!(
                "TX slot size {} is not between {ETH_HLEN} and {MAX_SLOT_SIZE} bytes",
                cfg.slot_size
            )));
        }
        if cfg.slots == 0 || cfg.slots > MAX_SLOTS {
            return Err(IoError::BadRing(format!(
                "TX ring of {} slots is not between 1 and {MAX_SLOTS} slots",
                cfg.slots
            )));
        }
        let info = super::socket::usable_iface(iface)?;
        let sock = super::socket::packet_socket()?;
        let fd = sock.as_raw_fd();

        let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
        sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
            .map_err(|e| super::socket::feature_error("TPACKET_V2", iface, e))?;
        // PACKET_LOSS must be set before the ring exists. With it, the kernel
        // skips a malformed frame instead of stopping the ring at it.
        let one: libc::c_int = 1;
        sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_LOSS, &one)
            .map_err(|e| super::socket::feature_error("PACKET_LOSS", iface, e))?;
        // Bypassing the qdisc is an optimisation only: keep going without it.
        let qdisc_bypass =
            sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one).is_ok();

        // Must be set before the ring exists, like PACKET_LOSS.
        let vnet = sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VNET_HDR, &one).is_ok();
        let data_off = DATA_OFF + if vnet { VNET_HDR_LEN } else { 0 };
        let frame_size =
            (libc::TPACKET2_HDRLEN.next_multiple_of(libc::TPACKET_ALIGNMENT) + data_off - DATA_OFF
                + cfg.slot_size)
                .next_power_of_two();
        let block_size = frame_size.max(sys::page_size());
        let per_block = block_size / frame_size;
        let blocks = cfg.slots.div_ceil(per_block);
        let nslots = blocks * per_block;
        let geometry = format!("{nslots} slots of {frame_size} bytes");
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: nslots as u32,
        };
        sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_TX_RING, &req)
            .map_err(|e| super::socket::ring_error("PACKET_TX_RING", iface, geometry.clone(), e))?;

        // Frames in flight are charged to the send buffer until the driver
        // frees them: let the whole ring be in flight (root may exceed
        // wmem_max with SO_SNDBUFFORCE; otherwise take what we get).
        let sndbuf = (nslots * frame_size).min(i32::MAX as usize) as libc::c_int;
        if sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sndbuf).is_err() {
            let _ = sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &sndbuf);
        }

        let ring = Mmap::ring(fd, block_size * blocks, 0)
            .map_err(|e| IoError::sys(format!("mapping the TX ring of {geometry}"), iface, e))?;

        sys::bind_packet(fd, info.index, 0).map_err(|e| match e.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) => IoError::NoSuchInterface(iface.to_string()),
            Some(libc::ENETDOWN) => IoError::InterfaceDown(iface.to_string()),
            _ => IoError::sys("binding an AF_PACKET socket", iface, e),
        })?;

        Ok(AfPacketTx {
            ring,
            fd: sock,
            iface: info,
            frame_size,
            nslots,
            head: 0,
            slot_size: cfg.slot_size,
            data_off,
            vnet,
            qdisc_bypass,
            tx_errors: 0,
            slot_lens: vec![0; nslots],
        })
    }

    /// True when the kernel accepted PACKET_QDISC_BYPASS (frames skip the
    /// interface's qdisc and packet taps such as tcpdump).
    pub fn qdisc_bypass(&self) -> bool {
        self.qdisc_bypass
    }

    /// Turns PACKET_QDISC_BYPASS on or off; returns the new state.
    pub fn set_qdisc_bypass(&mut self, on: bool) -> Result<bool, IoError> {
        let v: libc::c_int = on.into();
        sys::setsockopt(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            &v,
        )
        .map_err(|e| super::socket::feature_error("PACKET_QDISC_BYPASS", &self.iface.name, e))?;
        self.qdisc_bypass = on;
        Ok(on)
    }

    /// The interface this port sends on.
    pub fn iface(&self) -> &Iface {
        &self.iface
    }

    /// Number of slots in the ring (the configured count rounded up).
    pub fn slots(&self) -> usize {
        self.nslots
    }

    /// The status word of slot `i`.
    #[inline(always)]
    fn status(&self, i: usize) -> &AtomicU32 {
        debug_assert!(i < self.nslots);
        // SAFETY: slot i starts at i * frame_size inside the mapping (the
        // blocks are contiguous and each holds a whole number of slots), is
        // 16-byte aligned, and begins with tpacket2_hdr.tp_status, a u32 the
        // kernel also accesses concurrently: it must only be touched
        // atomically, which AtomicU32 guarantees.
        unsafe { &*(self.ring.ptr().add(i * self.frame_size) as *const AtomicU32) }
    }

    /// The data area of slot `i`, `slot_size` bytes long.
    ///
    /// # Safety
    /// The slot's status must be TP_STATUS_AVAILABLE or WRONG_FORMAT (owned by
    /// user space), and no other reference to this slot may be alive.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot_data(&self, i: usize) -> &mut [u8] {
        // SAFETY: the data area lies inside slot i (data_off + slot_size <=
        // frame_size by construction), and the kernel does not touch a slot
        // that user space owns; the caller guarantees exclusivity.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ring.ptr().add(i * self.frame_size + self.data_off),
                self.slot_size,
            )
        }
    }

    /// Sets `tp_len` of slot `i` for a frame of `len` bytes, and its
    /// virtio_net_hdr when PACKET_VNET_HDR is on.
    #[inline(always)]
    fn set_len(&self, i: usize, len: usize) {
        // SAFETY: the tpacket2_hdr (tp_len is its u32 at offset 4) and the
        // virtio_net_hdr right after it lie inside slot i, which user space
        // owns until its status is released (Release store), which publishes
        // these writes to the kernel.
        unsafe {
            let slot = self.ring.ptr().add(i * self.frame_size);
            let hdr = slot as *mut libc::tpacket2_hdr;
            if self.vnet {
                // struct virtio_net_hdr { u8 flags; u8 gso_type; u16 hdr_len;
                // u16 gso_size; u16 csum_start; u16 csum_offset; }, in native
                // byte order (legacy virtio). No checksum offload, no GSO;
                // hdr_len = bytes the kernel copies into the skb's linear area.
                let copy = if len <= COPY_MAX { len as u16 } else { 0 };
                let mut v = [0u8; VNET_HDR_LEN];
                v[2..4].copy_from_slice(&copy.to_ne_bytes());
                std::ptr::copy_nonoverlapping(v.as_ptr(), slot.add(DATA_OFF), VNET_HDR_LEN);
                std::ptr::addr_of_mut!((*hdr).tp_len).write((len + VNET_HDR_LEN) as u32);
            } else {
                std::ptr::addr_of_mut!((*hdr).tp_len).write(len as u32);
            }
        }
    }

    /// Whether the kernel would send a frame of `len` bytes starting with `data`.
    #[inline(always)]
    fn frame_ok(&self, data: &[u8], len: usize) -> bool {
        if !(ETH_HLEN..=data.len()).contains(&len) {
            return false;
        }
        let mut max = self.iface.mtu as usize + ETH_HLEN;
        if data[12] == 0x81 && data[13] == 0x00 {
            max += 4; // one 802.1Q tag is allowed on top of the MTU
        }
        len <= max
    }

    /// Tells the kernel to send every slot marked TP_STATUS_SEND_REQUEST.
    fn kick(&self) -> Result<(), IoError> {
        // SAFETY: a zero-length sendto with no buffer and no address is the
        // documented way to flush a TX ring.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if rc >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // Transient: send buffer full, driver busy, signal. Slots stay
            // requested and go with the next kick.
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => Ok(()),
            Some(libc::ENETDOWN) => Err(IoError::InterfaceDown(self.iface.name.clone())),
            Some(libc::ENXIO) | Some(libc::ENODEV) => {
                Err(IoError::NoSuchInterface(self.iface.name.clone()))
            }
            _ => Err(IoError::sys("sending", &self.iface.name, e)),
        }
    }

    fn wait_writable(&self, timeout: Duration) -> Result<(), IoError> {
        sys::poll_one(self.fd.as_raw_fd(), libc::POLLOUT, timeout)
            .map(|_| ())
            .map_err(|e| IoError::sys("waiting for TX ring space", &self.iface.name, e))
    }
}

/// The status bits that say who owns a TX slot (the others are timestamp flags).
const OWNER_BITS: u32 =
    libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_SENDING | libc::TP_STATUS_WRONG_FORMAT;

/// True when a slot with status `st` belongs to user space: free, or
/// refused by the kernel (TP_STATUS_WRONG_FORMAT, only without PACKET_LOSS).
#[inline(always)]
fn user_owned(st: u32) -> bool {
    let st = st & OWNER_BITS;
    st == libc::TP_STATUS_AVAILABLE || st & libc::TP_STATUS_WRONG_FORMAT != 0
}

/// True when the kernel refused the slot's frame.
#[inline(always)]
fn refused(st: u32) -> bool {
    st & libc::TP_STATUS_WRONG_FORMAT != 0
}

impl TxPort for AfPacketTx {
    fn backend(&self) -> String {
        "afpacket".to_string()
    }

    fn slot_size(&self) -> usize {
        self.slot_size
    }

    #[inline]
    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        mut fill: F,
    ) -> Result<usize, IoError> {
        let mut queued = 0;
        let mut pending = false;
        let mut waited = false;
        while queued < n {
            let i = self.head;
            let st = self.status(i).load(Ordering::Acquire);
            if user_owned(st) {
                if refused(st) {
                    // The kernel refused this slot's previous frame.
                    self.tx_errors += 1;
                    self.status(i)
                        .store(libc::TP_STATUS_AVAILABLE, Ordering::Relaxed);
                }
                // SAFETY: the Acquire load saw the slot owned by user space,
                // and `&mut self` makes this the only reference to it.
                let data = unsafe { self.slot_data(i) };
                let len = fill(queued, data, self.slot_lens[i] as usize);
                queued += 1;
                let ok = self.frame_ok(data, len);
                self.slot_lens[i] = len.min(self.slot_size) as u32;
                if ok {
                    self.set_len(i, len);
                    // Release: the frame bytes and tp_len are visible to the
                    // kernel before it can see SEND_REQUEST.
                    self.status(i)
                        .store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
                    self.head = if i + 1 == self.nslots { 0 } else { i + 1 };
                    pending = true;
                } else {
                    // Refused here; the slot stays free for the next frame.
                    self.tx_errors += 1;
                }
            } else {
                // Ring full: the kernel still owns the next slot.
                self.kick()?;
                pending = false;
                if user_owned(self.status(i).load(Ordering::Acquire)) {
                    continue; // the kick freed it (veth sends synchronously)
                }
                if waited {
                    break;
                }
                self.wait_writable(FULL_WAIT)?;
                waited = true;
            }
        }
        if pending {
            self.kick()?;
        }
        Ok(queued)
    }

    fn flush(&mut self) -> Result<(), IoError> {
        let deadline = Instant::now() + FLUSH_TIMEOUT;
        loop {
            self.kick()?;
            let mut busy = false;
            for i in 0..self.nslots {
                let st = self.status(i).load(Ordering::Acquire);
                if refused(st) {
                    self.tx_errors += 1;
                    self.status(i)
                        .store(libc::TP_STATUS_AVAILABLE, Ordering::Relaxed);
                } else if !user_owned(st) {
                    busy = true;
                }
            }
            if !busy {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(IoError::Other(format!(
                    "timed out after {} s waiting for the kernel to send the frames queued on {}",
                    FLUSH_TIMEOUT.as_secs(),
                    self.iface.name
                )));
            }
            self.wait_writable(FULL_WAIT)?;
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn tx_errors(&self) -> u64 {
        self.tx_errors
    }
}

impl std::fmt::Debug for AfPacketTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacketTx")
            .field("iface", &self.iface.name)
            .field("slots", &self.nslots)
            .field("frame_size", &self.frame_size)
            .field("slot_size", &self.slot_size)
            .field("qdisc_bypass", &self.qdisc_bypass)
            .field("vnet_hdr", &self.vnet)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_offset_is_32() {
        assert_eq!(DATA_OFF, 32);
    }

    #[test]
    fn bad_sizes_are_usage_errors() {
        for cfg in [
            TxRingConfig {
                slot_size: 10,
                slots: 16,
            },
            TxRingConfig {
                slot_size: 1514,
                slots: 0,
            },
        ] {
            let e = AfPacketTx::open("lo", &cfg).unwrap_err();
            assert!(matches!(e, IoError::BadRing(_)), "{e}");
            assert!(e.is_usage());
        }
    }
}
