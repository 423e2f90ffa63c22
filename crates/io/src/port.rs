//! The two port traits: a batch of frames out, a batch of frames in.

use std::time::Duration;

use crate::IoError;

/// A sink of frames.
///
/// Generic methods (not object-safe on purpose): the engine is monomorphised
/// per backend so the per-frame closure inlines (hot path).
pub trait TxPort {
    /// The backend and the mode it runs in, for reports: `afpacket`,
    /// `afxdp (copy)`, `pcap`, `null`.
    fn backend(&self) -> String;

    /// Largest frame (bytes without FCS) a slot holds.
    fn slot_size(&self) -> usize;

    /// Queues up to `n` frames.
    ///
    /// Calls `fill(i, slot, prev_len)` for i = 0.. in order, once per frame
    /// that is really queued; `fill` writes the frame into `slot` (len >=
    /// `slot_size()`) and returns its length. `slot[..prev_len]` still holds
    /// the frame this port last sent from the same slot (`prev_len` is 0 for a
    /// slot never used), so a generator that writes frames from templates
    /// needs to rewrite only the bytes that differ: frames are patched in
    /// place in the ring or UMEM instead of copied whole. Returns how many were queued:
    /// fewer than `n` when the ring is full (it kicks the kernel and may wait
    /// briefly, but never blocks indefinitely: at most ~1 ms). Kicks the
    /// kernel to transmit what it queued.
    ///
    /// A frame whose returned length the port cannot send (0, shorter than
    /// an Ethernet header, longer than the slot or the interface's MTU) is
    /// still counted as queued, but it is dropped and counted in
    /// [`TxPort::tx_errors`].
    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        fill: F,
    ) -> Result<usize, IoError>;

    /// Waits until the kernel has taken (sent or dropped) every queued frame.
    fn flush(&mut self) -> Result<(), IoError>;

    /// Frames the port or the kernel refused (e.g. TP_STATUS_WRONG_FORMAT, bad
    /// length), cumulative.
    fn tx_errors(&self) -> u64 {
        0
    }
}

/// One received frame, borrowed from the port until `on_frame` returns.
#[derive(Clone, Copy, Debug)]
pub struct RxFrame<'a> {
    /// The captured bytes, from the destination MAC on, without FCS.
    pub data: &'a [u8],
    /// The frame's length on the wire (without FCS); larger than
    /// `data.len()` when the capture was truncated.
    pub wire_len: u32,
    /// CLOCK_REALTIME nanoseconds: the kernel's receive timestamp for
    /// AF_PACKET, the record's for pcap.
    pub ts_ns: u64,
}

/// A source of frames.
pub trait RxPort {
    /// The backend and the mode it runs in, for reports: `afpacket`,
    /// `afxdp (copy, native XDP)`, `pcap`.
    fn backend(&self) -> String;

    /// Waits up to `timeout` for frames, calls `on_frame` for each available
    /// one (a whole ring block / batch at a time), returns how many it
    /// delivered (0 on timeout). For pcap input, returns Ok(0) forever after
    /// EOF is reached and `at_eof()` becomes true.
    fn recv_batch<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        timeout: Duration,
        on_frame: F,
    ) -> Result<usize, IoError>;

    /// Frames the socket dropped because the ring was full (PACKET_STATISTICS
    /// tp_drops), cumulative since open.
    fn drops(&mut self) -> Result<u64, IoError> {
        Ok(0)
    }

    /// True once a finite source (a pcap file) has delivered its last frame.
    fn at_eof(&self) -> bool {
        false
    }
}
