//! What the drop tracer counts: its map's key, and the counts read from
//! it.

use std::collections::BTreeMap;

/// The key of one count. Mirrors `struct drop_key` in
/// `crates/io/bpf/droptrace.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DropKey {
    /// Inode of the network namespace (0: unknown).
    pub netns: u32,
    /// The skb's device, else its input interface (0: none).
    pub ifindex: u32,
    /// `enum skb_drop_reason` (0 before Linux 5.17).
    pub reason: u32,
    pad: u32,
    /// The kernel text address that dropped the frame.
    pub location: u64,
}

impl DropKey {
    pub fn new(netns: u32, ifindex: u32, reason: u32, location: u64) -> DropKey {
        DropKey {
            netns,
            ifindex,
            reason,
            pad: 0,
            location,
        }
    }
}

// SAFETY: repr(C), only integers, no padding (4 × u32 then a u64).
unsafe impl aya::Pod for DropKey {}

/// Cumulative counts since the tracer started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    pub frames: BTreeMap<DropKey, u64>,
    /// Frames seen while the map was full (not in `frames`).
    pub overflow: u64,
    /// Drop events the kernel did not hand to the program because it was
    /// already running on that CPU (its `recursion_misses`): of any frame,
    /// so the test frames among them are unknown.
    pub missed: u64,
}

impl DropCounts {
    /// The counts that grew since `before`.
    pub fn since(&self, before: &DropCounts) -> DropCounts {
        let frames = self
            .frames
            .iter()
            .filter_map(|(k, &n)| {
                let d = n.saturating_sub(before.frames.get(k).copied().unwrap_or(0));
                (d > 0).then_some((*k, d))
            })
            .collect();
        DropCounts {
            frames,
            overflow: self.overflow.saturating_sub(before.overflow),
            missed: self.missed.saturating_sub(before.missed),
        }
    }

    /// All frames counted.
    pub fn total(&self) -> u64 {
        self.frames.values().sum::<u64>() + self.overflow
    }
}
