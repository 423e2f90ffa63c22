//! pktlab engine layer: TX and RX worker threads, rate pacing, counters,
//! per-interval reports and a clean stop on signals.
//!
//! The engine runs one worker thread per port, all of them in one worker
//! pool (`pool.rs`) whatever the side or backend. Each worker may enter a
//! network namespace and be pinned to a CPU *before* it opens its port, so
//! rings are allocated where they are used and sockets belong to the right
//! namespace. The calling thread samples the workers' counters once per
//! interval and hands the reports to the caller's callback; the workers
//! themselves never format or allocate per packet.
//!
//! - [`gen::run_gen`] and [`recv::run_recv`] pick the backend (`--io`);
//! - [`tx::run_tx`] drives [`TxPort`](pktlab_io::port::TxPort)s with
//!   [`FrameSource`]s (the wire layer's `FrameGen`), paced by [`pacer`];
//! - [`xdpgen::run_xdp_gen`] runs the same plans with the io layer's XDP
//!   live-frame generator (`--io xdp`): frames built in the kernel;
//! - [`rx::run_rx`] drains [`RxPort`](pktlab_io::port::RxPort)s and checks
//!   the test payload per stream ([`seq`]), latency and flows.

pub mod affinity;
pub mod auto;
pub mod backend;
pub use pktlab_io::clock;
mod error;
pub mod gen;
pub mod netns;
pub mod pacer;
mod pool;
mod rates;
pub mod recv;
pub mod rx;
pub mod seq;
pub mod stop;
pub mod tx;
pub mod xdpgen;
pub mod xdprecv;

pub use error::{EngineError, Undelivered};
pub use stop::StopSignal;

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
