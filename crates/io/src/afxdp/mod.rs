//! Linux AF_XDP ports.
//!
//! - [`AfXdpTx`]: one AF_XDP socket on one TX queue, with its own UMEM.
//!   Frames are written straight into UMEM chunks and stay there: `fill`
//!   gets the length of the frame a chunk last held, so a generator patches
//!   headers in place. Descriptors are reserved and published a batch at a
//!   time, and the kernel is woken (one `sendto`) only when it sets the
//!   need_wakeup flag. No XDP program is needed to send.
//! - [`AfXdpRx`]: one AF_XDP socket on one RX queue, with its own UMEM. An
//!   XDP program (`crates/io/bpf/xsk_redirect.c`, embedded) redirects each queue to
//!   the socket bound to it through an XSKMAP; all RX sockets of the process
//!   on one interface share one program and one map.
//!   [`RxFrame::ts_ns`](crate::port::RxFrame) is CLOCK_REALTIME read once
//!   per batch, after the batch is taken from the ring: AF_XDP has no
//!   per-frame receive timestamp.
//! - A receiver and a sender of one process on the same queue (traffic
//!   both ways on one port) share the receiver's socket: the kernel binds
//!   one socket per queue, so every RX socket also carries a TX ring and
//!   spare UMEM chunks that an [`AfXdpTx`] opened on its queue takes
//!   (`duplex.rs`).
//! - [`loader`]: loading and attaching XDP programs through a bpf_link
//!   (detached when the process ends, however it ends), reusable by other
//!   backends.
//!
//! # Design choices
//!
//! - **Ring code**: a small module of our own over `libc` (`ring.rs`,
//!   `socket.rs`) rather than `xdpilone` (EUPL-1.2, a copyleft licence that
//!   would bind changes to its files) or `xsk-rs` (MIT, but it builds
//!   libxdp/libbpf C code through `libxdp-sys`). The kernel ABI is a few
//!   setsockopts, four mmaps and a bind, and owning the ring code lets the
//!   batch API match [`TxPort`](crate::port::TxPort) exactly.
//! - **One UMEM per socket** by default: each socket (one per thread and
//!   queue) owns its UMEM, so no chunk ever moves between threads and
//!   nothing needs a lock or outlives its port. [`AfXdpTx::open_shared_umem`]
//!   opens several TX sockets on one UMEM (XDP_SHARED_UMEM, each with its
//!   own chunks and completion ring) for comparison. Measured on a 2-queue
//!   veth, two threads on two CPUs pushing 64-byte frames into an XDP_DROP
//!   peer (`speed_umem_shared_vs_per_socket`, 8 interleaved rounds of 5 s):
//!   per-socket median 1.18 Mpps, shared 1.19 Mpps, ratio 1.01 with a
//!   run-to-run spread of about 30% on a machine shared with other work; a
//!   single socket also ran as fast with 64 UMEM chunks as with 4096. In
//!   copy mode 99% of the sending thread's time is in the kernel's
//!   per-frame skb path and 1% in user space: sharing, which only changes
//!   the memory footprint and the number of registrations, has nothing to
//!   speed up, so the simpler per-socket UMEM stays the default. (No
//!   zero-copy NIC was available to measure; the receiver uses a per-socket
//!   UMEM only.)
//! - **Zero-copy**: [`ZeroCopy::Auto`] binds with neither XDP_COPY nor
//!   XDP_ZEROCOPY, so the kernel tries zero-copy and falls back to copy
//!   mode; [`ZeroCopy::On`] where the driver has no zero-copy support (veth)
//!   is [`IoError::ZeroCopyUnavailable`], a usage error (exit code 2): the
//!   command line asked for something this interface cannot do.
//! - **Frags-aware programs**: both programs of `crates/io/bpf/xsk_redirect.c` are
//!   in section `xdp.frags` (aya loads them with BPF_F_XDP_HAS_FRAGS). veth
//!   refuses a program that is not frags-aware in native mode when its
//!   peer's MTU does not fit one page, so at the built-in lab's MTU 9000 it
//!   used to fall back to generic XDP. Native mode is now used there; a
//!   frame longer than a chunk (linear or in several buffers) is refused by
//!   the kernel's AF_XDP code (the socket is not bound with XDP_USE_SG) and
//!   counted in the socket's rx_dropped and the interface's rx_dropped.
//! - **bpffs** is never used: nothing is pinned, the program lives as long
//!   as its bpf_link's file descriptor.
//!
//! # Speed on veth
//!
//! veth has copy mode only: every frame sent becomes an skb in the kernel
//! (allocation, a copy from the UMEM, `__dev_direct_xmit`), and a veth peer
//! running native XDP copies it once more into a page-pool page
//! (`skb_pp_cow_data`) before its program sees it. In a perf profile of the
//! TX thread pushing 64-byte frames into an XDP_DROP peer, `sendto` is 98%
//! (skb allocation 13%, veth_xmit 14%, the peer's NAPI poll 43% of which
//! the page-pool copy 20%); the XDP_DROP program 0.1%; our `send_batch`
//! 1%. That per-frame skb work is what limits AF_XDP on veth to about
//! 1.2x AF_PACKET and 1.5x trafgen (see the speed tests in
//! `tests/afxdp.rs`, and `bench/peers` for `pktlab gen` itself, which is
//! as fast: building multi-flow frames is 3% of its time); zero-copy
//! drivers skip it. The copy-mode budget of
//! descriptors per `sendto` is raised to the batch size where the kernel
//! allows it (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+), one system call per
//! batch instead of one per 32 frames.
//!
//! Every port works in the network namespace of the thread that opens it;
//! once open it may be moved to and used from any thread.

/// The loader lives at the crate root (it serves every backend); this path
/// stays for callers that name it under `afxdp`.
pub use crate::loader;
mod config;
mod duplex;
mod redirect;
mod ring;
mod rx;
mod socket;
mod sys;
mod tx;

pub use config::{max_frame_size, XdpConfig, XdpMode, ZeroCopy, RX_HEADROOM};
pub use loader::{AttachMode, Attached};
pub use rx::{AfXdpRx, XdpStatistics};
pub use tx::AfXdpTx;

use crate::IoError;

/// How many queues of `iface` an AF_XDP socket may bind to (in the calling
/// thread's network namespace), `None` when the driver does not say.
pub fn queue_count(iface: &str) -> Result<Option<u32>, IoError> {
    sys::queue_count(iface)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        XdpConfig::default().validate().unwrap();
    }

    #[test]
    fn bad_settings_are_usage_errors_naming_the_value() {
        let d = XdpConfig::default();
        let cases = [
            (
                XdpConfig {
                    frame_size: 3000,
                    ..d
                },
                "AF_XDP frame size 3000 is not a power of two",
            ),
            (
                XdpConfig {
                    frame_size: 1024,
                    ..d
                },
                "AF_XDP frame size 1024 ",
            ),
            (
                XdpConfig {
                    rx_ring_size: 1000,
                    ..d
                },
                "AF_XDP RX ring size 1000 is not a power of two from 64 to 65536",
            ),
            (
                XdpConfig {
                    tx_ring_size: 32,
                    ..d
                },
                "AF_XDP TX ring size 32 ",
            ),
            (
                XdpConfig { batch: 0, ..d },
                "AF_XDP batch 0 is not between 1 and the ring size 2048",
            ),
            (XdpConfig { batch: 4096, ..d }, "AF_XDP batch 4096 "),
        ];
        for (cfg, want) in cases {
            let e = cfg.validate().unwrap_err();
            assert!(
                e.to_string().starts_with(&format!("bad ring size: {want}")),
                "{e}"
            );
            assert!(e.is_usage());
        }
    }

    #[test]
    fn mode_display() {
        let m = XdpMode {
            zerocopy: false,
            attach: None,
        };
        assert_eq!(m.to_string(), "copy");
        let m = XdpMode {
            zerocopy: true,
            attach: Some(Attached::Native),
        };
        assert_eq!(m.to_string(), "zero-copy, native XDP");
        let m = XdpMode {
            zerocopy: false,
            attach: Some(Attached::Generic),
        };
        assert_eq!(m.to_string(), "copy, generic XDP");
    }
}
