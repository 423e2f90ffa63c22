//! What the XDP drop tracer counts: why a frame was dropped, its map's
//! key, and the counts read from it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Why XDP dropped frames. Mirrors the `CAUSE_*` of
/// `crates/io/bpf/xdpdrops.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum XdpDropCause {
    /// `xdp:xdp_exception`: XDP_ABORTED, an unknown action, or an XDP_TX
    /// the driver could not do.
    Exception,
    /// `xdp:xdp_redirect_err`: a redirect the kernel could not queue.
    RedirectError,
    /// `xdp:xdp_devmap_xmit`: redirected frames the target device refused
    /// (a full ring).
    XmitRefused,
    /// `xdp:xdp_bulk_tx`: XDP_TX frames the device refused.
    XdpTxRefused,
    /// `xdp:xdp_cpumap_enqueue`: a CPUMAP queue was full.
    CpuQueueFull,
    /// `xdp:xdp_cpumap_kthread`: no memory for an skb on that CPU.
    CpuAlloc,
}

impl XdpDropCause {
    pub(super) fn from_raw(v: u32) -> Option<XdpDropCause> {
        Some(match v {
            1 => XdpDropCause::Exception,
            2 => XdpDropCause::RedirectError,
            3 => XdpDropCause::XmitRefused,
            4 => XdpDropCause::XdpTxRefused,
            5 => XdpDropCause::CpuQueueFull,
            6 => XdpDropCause::CpuAlloc,
            _ => return None,
        })
    }

    /// Its name in text and JSON: `exception`, `redirect_error`, ...
    pub fn name(self) -> &'static str {
        match self {
            XdpDropCause::Exception => "exception",
            XdpDropCause::RedirectError => "redirect_error",
            XdpDropCause::XmitRefused => "xmit_refused",
            XdpDropCause::XdpTxRefused => "xdp_tx_refused",
            XdpDropCause::CpuQueueFull => "cpu_queue_full",
            XdpDropCause::CpuAlloc => "cpu_alloc",
        }
    }
}

/// The key of one count. Mirrors `struct xdp_drop_key` in
/// `crates/io/bpf/xdpdrops.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct XdpDropKey {
    /// Inode of the place's network namespace (0: none, a CPUMAP).
    pub netns: u32,
    /// The place: the device that refused, or whose program failed.
    pub ifindex: u32,
    /// The other port (redirect target, or the transmit's source); for a
    /// CPUMAP, the map's id.
    pub peer: u32,
    /// [`XdpDropCause`] as a number.
    pub cause: u32,
    /// The error, a negative errno (0: none given).
    pub err: i32,
    /// An exception's XDP action, a redirect's map type, a CPUMAP's CPU.
    pub detail: u32,
}

// SAFETY: repr(C), six 4-byte integers: no padding, any bit pattern valid.
unsafe impl aya::Pod for XdpDropKey {}

impl XdpDropKey {
    /// The cause, if the number is one the program writes.
    pub fn cause(&self) -> Option<XdpDropCause> {
        XdpDropCause::from_raw(self.cause)
    }
}

/// Cumulative counts since the tracer started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XdpDropCounts {
    pub frames: BTreeMap<XdpDropKey, u64>,
    /// Frames counted while the map was full (not in `frames`).
    pub overflow: u64,
}

impl XdpDropCounts {
    /// The counts that grew since `before`.
    pub fn since(&self, before: &XdpDropCounts) -> XdpDropCounts {
        let frames = self
            .frames
            .iter()
            .filter_map(|(k, &n)| {
                let d = n.saturating_sub(before.frames.get(k).copied().unwrap_or(0));
                (d > 0).then_some((*k, d))
            })
            .collect();
        XdpDropCounts {
            frames,
            overflow: self.overflow.saturating_sub(before.overflow),
        }
    }

    /// All frames counted.
    pub fn total(&self) -> u64 {
        self.frames.values().sum::<u64>() + self.overflow
    }
}
