//! AF_PACKET TPACKET_V3 RX ring.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::iface::Iface;
use crate::port::{RxFrame, RxPort};
use crate::sys::{self, Mmap};
use crate::IoError;

/// Geometry of a TPACKET_V3 RX ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxRingConfig {
    /// Bytes per block, a multiple of the page size (default 1 MiB). The
    /// kernel fills one block at a time with variable-length frames and hands
    /// it over when it is full or when `block_timeout_ms` has passed.
    pub block_size: usize,
    /// Number of blocks (default 64).
    pub blocks: usize,
    /// Nominal frame size, a multiple of 16 of at least 80 (default 2048).
    /// TPACKET_V3 packs frames by their real length, so this only has to
    /// satisfy the kernel's checks; frames up to nearly `block_size` fit.
    pub frame_size: usize,
    /// How long a partly filled block waits before it is handed over
    /// (default 10 ms); 0 lets the kernel choose from the link speed.
    pub block_timeout_ms: u32,
}

impl Default for RxRingConfig {
    fn default() -> Self {
        RxRingConfig {
            block_size: 1 << 20,
            blocks: 64,
            frame_size: 2048,
            block_timeout_ms: 10,
        }
    }
}

/// Largest ring we accept: 16 GiB.
const MAX_RING_BYTES: usize = 16 << 30;
/// Offset of the sockaddr_ll that follows each tpacket3_hdr.
const SLL_OFF: usize =
    std::mem::size_of::<libc::tpacket3_hdr>().next_multiple_of(libc::TPACKET_ALIGNMENT);

/// A TPACKET_V3 mmap RX ring bound to one interface.
///
/// Frames this host sends on the interface are not delivered
/// (PACKET_IGNORE_OUTGOING, and a check of each frame's packet type on
/// kernels without it). A VLAN tag that the kernel stripped into the frame's
/// metadata (VLAN offload, veth) is put back, so `data` holds the frame as it
/// was on the wire.
pub struct AfPacketRx {
    // Field order matters: the ring is unmapped before the socket is closed.
    ring: Mmap,
    fd: OwnedFd,
    iface: Iface,
    block_size: usize,
    nblocks: usize,
    cur: usize,
    drops: u64,
    fanout_group: Option<u16>,
    /// Frame with its VLAN tag re-inserted.
    scratch: Vec<u8>,
}

impl AfPacketRx {
    /// Opens an RX ring on `iface` (in the calling thread's network
    /// namespace). With `fanout_group`, joins that PACKET_FANOUT_HASH group:
    /// every socket of the group on the interface gets a share of the
    /// flows, and a flow always goes to the same socket.
    pub fn open(
        iface: &str,
        cfg: &RxRingConfig,
        fanout_group: Option<u16>,
    ) -> Result<Self, IoError> {
        validate(cfg)?;
        let info = super::socket::usable_iface(iface)?;
        let sock = super::socket::packet_socket()?;
        let fd = sock.as_raw_fd();

        let version = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
        sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
            .map_err(|e| super::socket::feature_error("TPACKET_V3", iface, e))?;
        // Kernels before 4.20 lack it; frames are then filtered by packet
        // type while walking the ring.
        let one: libc::c_int = 1;
        let _ = sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one);

        let per_block = cfg.block_size / cfg.frame_size;
        let geometry = format!("{} blocks of {} bytes", cfg.blocks, cfg.block_size);
        let req = libc::tpacket_req3 {
            tp_block_size: cfg.block_size as u32,
            tp_block_nr: cfg.blocks as u32,
            tp_frame_size: cfg.frame_size as u32,
            tp_frame_nr: (per_block * cfg.blocks) as u32,
            tp_retire_blk_tov: cfg.block_timeout_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| super::socket::ring_error("PACKET_RX_RING", iface, geometry.clone(), e))?;
        let ring = Mmap::ring(fd, cfg.block_size * cfg.blocks, 0)
            .map_err(|e| IoError::sys(format!("mapping the RX ring of {geometry}"), iface, e))?;

        // The socket was opened with protocol 0 so that it saw nothing
        // before this bind to one interface starts the capture.
        sys::bind_packet(fd, info.index, libc::ETH_P_ALL as u16).map_err(|e| {
            match e.raw_os_error() {
                Some(libc::ENODEV) | Some(libc::ENXIO) => {
                    IoError::NoSuchInterface(iface.to_string())
                }
                Some(libc::ENETDOWN) => IoError::InterfaceDown(iface.to_string()),
                _ => IoError::sys("binding an AF_PACKET socket", iface, e),
            }
        })?;

        if let Some(id) = fanout_group {
            let arg = (id as u32 | (libc::PACKET_FANOUT_HASH << 16)) as libc::c_int;
            sys::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg).map_err(|e| {
                match e.raw_os_error() {
                    Some(libc::EINVAL) | Some(libc::EALREADY) => IoError::Other(format!(
                        "cannot join fanout group {id} on {iface}: the group is in use with another interface or mode"
                    )),
                    Some(libc::ENOPROTOOPT) => IoError::Unsupported("PACKET_FANOUT"),
                    _ => IoError::sys(format!("joining fanout group {id}"), iface, e),
                }
            })?;
        }

        Ok(AfPacketRx {
            ring,
            fd: sock,
            iface: info,
            block_size: cfg.block_size,
            nblocks: cfg.blocks,
            cur: 0,
            drops: 0,
            fanout_group,
            scratch: Vec::new(),
        })
    }

    /// The interface this port receives on.
    pub fn iface(&self) -> &Iface {
        &self.iface
    }

    /// The fanout group this socket joined, if any.
    pub fn fanout_group(&self) -> Option<u16> {
        self.fanout_group
    }

    /// The status word of block `b`.
    #[inline(always)]
    fn block_status(&self, b: usize) -> &AtomicU32 {
        debug_assert!(b < self.nblocks);
        // SAFETY: block b starts at b * block_size inside the mapping
        // (page-aligned) with a tpacket_block_desc whose hdr.bh1.block_status
        // is a u32 shared with the kernel; it is only accessed atomically.
        unsafe {
            let desc = self.ring.ptr().add(b * self.block_size) as *mut libc::tpacket_block_desc;
            &*(std::ptr::addr_of_mut!((*desc).hdr.bh1.block_status) as *const AtomicU32)
        }
    }

    /// Delivers the frames of block `b`, which user space owns, to `on_frame`.
    fn walk_block<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        b: usize,
        on_frame: &mut F,
    ) -> Result<usize, IoError> {
        let bs = self.block_size;
        // SAFETY: block b lies inside the mapping; its status was seen as
        // TP_STATUS_USER with Acquire ordering, so the kernel has finished
        // writing it and will not touch it until we release it. Every read
        // below is bounds-checked against the block.
        let block: &[u8] = unsafe { std::slice::from_raw_parts(self.ring.ptr().add(b * bs), bs) };
        let corrupt = |what: &str| {
            IoError::Other(format!(
                "corrupt RX ring block {b} on {}: {what}",
                self.iface.name
            ))
        };
        // SAFETY: the block begins with a tpacket_block_desc (page-aligned).
        let (num, first) = unsafe {
            let desc = &*(block.as_ptr() as *const libc::tpacket_block_desc);
            (
                desc.hdr.bh1.num_pkts,
                desc.hdr.bh1.offset_to_first_pkt as usize,
            )
        };
        let hdr_len = std::mem::size_of::<libc::tpacket3_hdr>();
        let mut off = first;
        let mut delivered = 0;
        for k in 0..num {
            if !off.is_multiple_of(4)
                || off + SLL_OFF + std::mem::size_of::<libc::sockaddr_ll>() > bs
            {
                return Err(corrupt("frame header out of bounds"));
            }
            debug_assert!(hdr_len <= SLL_OFF);
            // SAFETY: in bounds (checked above) and 4-byte aligned, which is
            // tpacket3_hdr's alignment; the kernel wrote it before the block
            // was handed over.
            let h = unsafe { &*(block.as_ptr().add(off) as *const libc::tpacket3_hdr) };
            let mac = off + h.tp_mac as usize;
            let snap = h.tp_snaplen as usize;
            if mac + snap > bs {
                return Err(corrupt("frame data out of bounds"));
            }
            // sockaddr_ll.sll_pkttype is at byte 10 of the sockaddr_ll.
            let pkttype = block[off + SLL_OFF + 10];
            if pkttype != libc::PACKET_OUTGOING {
                let ts_ns = h.tp_sec as u64 * 1_000_000_000 + h.tp_nsec as u64;
                let data = &block[mac..mac + snap];
                if h.tp_status & libc::TP_STATUS_VLAN_VALID != 0 && snap >= 12 {
                    let tpid = if h.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                        h.hv1.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    let tci = h.hv1.tp_vlan_tci as u16;
                    self.scratch.clear();
                    self.scratch.extend_from_slice(&data[..12]);
                    self.scratch.extend_from_slice(&tpid.to_be_bytes());
                    self.scratch.extend_from_slice(&tci.to_be_bytes());
                    self.scratch.extend_from_slice(&data[12..]);
                    on_frame(&RxFrame {
                        data: &self.scratch,
                        wire_len: h.tp_len + 4,
                        ts_ns,
                    });
                } else {
                    on_frame(&RxFrame {
                        data,
                        wire_len: h.tp_len,
                        ts_ns,
                    });
                }
                delivered += 1;
            }
            if k + 1 < num {
                if h.tp_next_offset == 0 {
                    return Err(corrupt("zero next-frame offset"));
                }
                off += h.tp_next_offset as usize;
            }
        }
        Ok(delivered)
    }
}

fn validate(cfg: &RxRingConfig) -> Result<(), IoError> {
    let page = sys::page_size();
    let bad = |msg: String| Err(IoError::BadRing(msg));
    if cfg.block_size < page
        || !cfg.block_size.is_multiple_of(page)
        || cfg.block_size > u32::MAX as usize
    {
        return bad(format!(
            "RX block size {} is not a multiple of the page size ({page} bytes)",
            cfg.block_size
        ));
    }
    if cfg.blocks == 0 {
        return bad("RX ring of 0 blocks".to_string());
    }
    let min_frame = libc::TPACKET3_HDRLEN.next_multiple_of(libc::TPACKET_ALIGNMENT);
    if cfg.frame_size < min_frame
        || !cfg.frame_size.is_multiple_of(libc::TPACKET_ALIGNMENT)
        || cfg.frame_size > cfg.block_size
    {
        return bad(format!(
            "RX frame size {} is not a multiple of {} between {min_frame} and the block size {}",
            cfg.frame_size,
            libc::TPACKET_ALIGNMENT,
            cfg.block_size
        ));
    }
    let frames = (cfg.block_size / cfg.frame_size).checked_mul(cfg.blocks);
    let bytes = cfg.block_size.checked_mul(cfg.blocks);
    match (frames, bytes) {
        (Some(f), Some(b)) if f <= u32::MAX as usize && b <= MAX_RING_BYTES => Ok(()),
        _ => bad(format!(
            "RX ring of {} blocks of {} bytes is larger than {} GiB",
            cfg.blocks,
            cfg.block_size,
            MAX_RING_BYTES >> 30
        )),
    }
}

impl RxPort for AfPacketRx {
    fn backend(&self) -> String {
        "afpacket".to_string()
    }

    fn recv_batch<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        timeout: Duration,
        mut on_frame: F,
    ) -> Result<usize, IoError> {
        let mut deadline = None;
        loop {
            let b = self.cur;
            if self.block_status(b).load(Ordering::Acquire) & libc::TP_STATUS_USER != 0 {
                let n = self.walk_block(b, &mut on_frame);
                // Release: our reads of the block happen before the kernel
                // may see it free and refill it.
                self.block_status(b)
                    .store(libc::TP_STATUS_KERNEL, Ordering::Release);
                self.cur = if b + 1 == self.nblocks { 0 } else { b + 1 };
                let n = n?;
                if n > 0 {
                    return Ok(n);
                }
                continue; // only outgoing frames in it: try the next block
            }
            let now = Instant::now();
            let end = *deadline.get_or_insert(now + timeout);
            if now >= end {
                return Ok(0);
            }
            let rev = sys::poll_one(self.fd.as_raw_fd(), libc::POLLIN | libc::POLLERR, end - now)
                .map_err(|e| IoError::sys("waiting for frames", &self.iface.name, e))?;
            if rev & (libc::POLLERR | libc::POLLNVAL) != 0 {
                let e = sys::take_socket_error(self.fd.as_raw_fd());
                return Err(match e.raw_os_error() {
                    Some(libc::ENETDOWN) => IoError::InterfaceDown(self.iface.name.clone()),
                    Some(libc::ENODEV) | Some(libc::ENXIO) => {
                        IoError::NoSuchInterface(self.iface.name.clone())
                    }
                    _ => IoError::sys("receiving", &self.iface.name, e),
                });
            }
        }
    }

    fn drops(&mut self) -> Result<u64, IoError> {
        // SAFETY: tpacket_stats_v3 is three u32s; all-zero is valid.
        let mut st: libc::tpacket_stats_v3 = unsafe { std::mem::zeroed() };
        sys::getsockopt(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            &mut st,
        )
        .map_err(|e| IoError::sys("reading PACKET_STATISTICS", &self.iface.name, e))?;
        // Reading resets the kernel's counters: accumulate.
        self.drops += st.tp_drops as u64;
        Ok(self.drops)
    }
}

impl std::fmt::Debug for AfPacketRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacketRx")
            .field("iface", &self.iface.name)
            .field("blocks", &self.nblocks)
            .field("block_size", &self.block_size)
            .field("fanout_group", &self.fanout_group)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_geometry_is_a_usage_error() {
        let d = RxRingConfig::default();
        for cfg in [
            RxRingConfig { blocks: 0, ..d },
            RxRingConfig { block_size: 0, ..d },
            RxRingConfig {
                block_size: 1000,
                ..d
            },
            RxRingConfig {
                frame_size: 100,
                ..d
            },
            RxRingConfig {
                frame_size: 16,
                ..d
            },
            RxRingConfig {
                blocks: 1 << 30,
                ..d
            },
        ] {
            let e = AfPacketRx::open("lo", &cfg, None).unwrap_err();
            assert!(matches!(e, IoError::BadRing(_)), "{cfg:?}: {e}");
            assert!(e.is_usage());
        }
        assert!(validate(&d).is_ok());
    }

    #[test]
    fn sll_follows_the_aligned_header() {
        assert_eq!(SLL_OFF, 48);
        assert_eq!(
            SLL_OFF + std::mem::size_of::<libc::sockaddr_ll>(),
            libc::TPACKET3_HDRLEN
        );
    }
}
