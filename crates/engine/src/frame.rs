//! Frames as the engine sees them: what writes them into port slots, and
//! the bytes around them that sizes and rates count.

/// Writes frames into port slots: the wire layer's generator, seen from the
/// engine. A trait so that the engine's tests can use simple sources.
pub trait FrameSource: Send {
    /// Longest frame (bytes without FCS) this source writes.
    fn max_len(&self) -> usize;
    /// Writes the next frame into `buf`, which still holds `prev_len` bytes
    /// of the frame this source last wrote there; returns its length (bytes
    /// without FCS). `ts_ns` is the CLOCK_REALTIME transmit timestamp.
    fn write_next(&mut self, buf: &mut [u8], prev_len: usize, ts_ns: u64) -> usize;
}

impl FrameSource for pktlab_wire::frame::FrameGen {
    fn max_len(&self) -> usize {
        pktlab_wire::frame::FrameGen::max_len(self)
    }

    #[inline(always)]
    fn write_next(&mut self, buf: &mut [u8], prev_len: usize, ts_ns: u64) -> usize {
        pktlab_wire::frame::FrameGen::write_next(self, buf, prev_len, ts_ns)
    }
}

/// Bytes an Ethernet frame occupies on the wire besides the frame itself:
/// preamble, SFD and the inter-frame gap (README.md, "Conventions").
pub const L1_OVERHEAD: u64 = pktlab_wire::rate::L1_OVERHEAD as u64;
/// The FCS, which ports neither send nor capture but frame sizes include.
pub const FCS_LEN: u64 = pktlab_wire::size::FCS_LEN as u64;
