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
mod frame;
pub mod gen;
pub mod netns;
pub mod options;
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
pub use frame::{FrameSource, FCS_LEN, L1_OVERHEAD};
pub use stop::StopSignal;
