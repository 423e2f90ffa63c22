//! pktlab io layer: packet ports (AF_PACKET, AF_XDP, pcap, null) and interface facts.
//!
//! A port moves frames in batches: [`port::TxPort::send_batch`] asks a closure
//! to write each frame straight into a transmit slot, and
//! [`port::RxPort::recv_batch`] hands each received frame to a closure. The
//! traits are generic rather than object-safe so that the engine is
//! monomorphised per backend and the per-frame closure inlines.
//!
//! Backends:
//! - [`afpacket`]: Linux AF_PACKET sockets with mmap rings (TPACKET_V2 for
//!   transmit, TPACKET_V3 for receive, optional fanout);
//! - [`afxdp`]: Linux AF_XDP sockets, one per thread and queue, with an
//!   embedded XDP program for receive (attached through a bpf_link);
//! - [`pcap`]: classic pcap files (nanosecond timestamps on write);
//! - [`null`]: a sink that drops every frame, to measure generation cost;
//! - [`xdpgen`]: not a port but a generator: an XDP program that builds
//!   each frame in the kernel and redirects it to the interface
//!   (BPF_PROG_RUN with live frames), for `--io xdp`;
//! - [`xdprecv`]: not a port but a receiver: an XDP program that checks,
//!   counts and times every frame in the kernel and drops it, for
//!   `recv --io xdp`; user space reads its maps.
//!
//! Everything that touches an interface works in the network namespace of the
//! *calling thread*, so a thread that called `setns(CLONE_NEWNET)` sees that
//! namespace's interfaces.
//!
//! # Testing
//!
//! `cargo test -p pktlab-io` needs root (network namespaces, AF_PACKET),
//! `ip` (iproute2) and `tshark` (Debian: `apt-get install -y tshark`): the
//! pcap test checks the written file with tshark and fails without it. The
//! AF_PACKET tests only send inside namespaces named `pktio-<pid>-<n>` that
//! they create and delete. A manual TX rate check:
//! `cargo test -p pktlab-io --release --test afpacket -- --ignored --nocapture`.
//! The AF_XDP tests also need clang and llvm (the check that the committed
//! XDP object matches `crates/io/bpf/xsk_redirect.c`); the AF_XDP speed measurements
//! (AF_XDP vs AF_PACKET vs trafgen, and the receiver against the interface
//! counters) are ignored tests:
//! `cargo test -p pktlab-io --release --test afxdp -- --ignored speed --nocapture`.
//! The XDP live-frame generator's tests (`tests/xdpgen.rs`) also need
//! `ethtool` (GRO on the veth peer) and `bpftool` (that nothing stays
//! loaded); its speed is measured by `bench/xdpgen`, not by a test.

pub(crate) mod error;
pub use error::{os_message, IoError};

pub mod afpacket;
pub mod afxdp;
pub mod clock;
pub mod droptrace;
pub mod ethtool;
pub mod fastpath;
pub mod iface;
pub mod loader;
pub mod napi;
mod netlink;
pub mod netns;
pub mod null;
pub mod pcap;
pub mod port;
pub mod qdisc;
mod sys;
pub mod xdpdrops;
pub mod xdpgen;
pub mod xdprecv;

#[cfg(test)]
mod tests {
    fn assert_send<T: Send>() {}

    #[test]
    fn ports_can_move_to_worker_threads() {
        assert_send::<crate::afpacket::AfPacketTx>();
        assert_send::<crate::afpacket::AfPacketRx>();
        assert_send::<crate::afxdp::AfXdpTx>();
        assert_send::<crate::afxdp::AfXdpRx>();
        assert_send::<crate::pcap::PcapTx>();
        assert_send::<crate::pcap::PcapRx>();
        assert_send::<crate::null::NullTx>();
        assert_send::<crate::IoError>();
    }
}
