//! AF_XDP ports on veth pairs inside private network namespaces.
//!
//! Needs root, `ip` (iproute2) and, for the object check, clang/llvm-strip
//! (`scripts/deps` installs them). The speed measurement is an ignored test:
//! `cargo test -p pktlab-io --release --test afxdp -- --ignored speed --nocapture`.

mod common;

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{udp_frame, Netns, MAC_A, MAC_B};
use pktlab_io::afpacket::{AfPacketRx, AfPacketTx, RxRingConfig, TxRingConfig};
use pktlab_io::afxdp::loader::{builtin_object, XdpObject};
use pktlab_io::afxdp::{AfXdpRx, AfXdpTx, AttachMode, Attached, XdpConfig, XdpMode, ZeroCopy};
use pktlab_io::iface;
use pktlab_io::port::{RxPort, TxPort};
use pktlab_io::IoError;

/// Adds a veth pair `<prefix>a…` <-> `<prefix>b…` with `queues` TX and RX
/// queues on each end to `ns`, both up, and returns the two names.
fn veth_pair(ns: &Netns, prefix: &str, queues: u32) -> (String, String) {
    let suffix = &ns.a[2..]; // "<pid>_<n>", unique on the host
    let (a, b) = (format!("{prefix}a{suffix}"), format!("{prefix}b{suffix}"));
    assert!(a.len() < 16);
    let q = queues.to_string();
    ns.ip(&[
        "link",
        "add",
        &a,
        "numtxqueues",
        &q,
        "numrxqueues",
        &q,
        "type",
        "veth",
        "peer",
        "name",
        &b,
        "numtxqueues",
        &q,
        "numrxqueues",
        &q,
    ]);
    ns.ip(&["link", "set", &a, "up"]);
    ns.ip(&["link", "set", &b, "up"]);
    (a, b)
}

/// Sends every frame of `frames`, `chunk` frames per batch with no pause,
/// calling `between` after each batch.
fn send_frames<T: TxPort>(tx: &mut T, frames: &[Vec<u8>], chunk: usize, between: impl FnMut()) {
    common::send_frames(tx, frames, chunk, Duration::ZERO, between);
}

/// Receives until `got` holds `want` frames, then 100 ms more (to catch
/// extra frames), or 5 s have passed.
fn recv_into<R: RxPort>(rx: &mut R, got: &mut Vec<Vec<u8>>, want: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < want && Instant::now() < deadline {
        rx.recv_batch(Duration::from_millis(20), |f| {
            assert_eq!(f.wire_len as usize, f.data.len());
            got.push(f.data.to_vec())
        })
        .unwrap();
    }
    let quiet = Instant::now() + Duration::from_millis(100);
    while Instant::now() < quiet {
        rx.recv_batch(Duration::from_millis(20), |f| got.push(f.data.to_vec()))
            .unwrap();
    }
}

/// Whether `dev` in `ns` has an XDP program attached, per `ip -d link`.
fn has_xdp(ns: &str, dev: &str) -> bool {
    let out = Command::new("ip")
        .args(["-n", ns, "-d", "link", "show", "dev", dev])
        .output()
        .unwrap();
    assert!(out.status.success(), "ip link show {dev}");
    String::from_utf8_lossy(&out.stdout).contains("prog/xdp")
}

/// Waits up to 3 s for the XDP program to leave `dev` (the kernel releases a
/// bpf_link from a work queue once its last descriptor is closed).
fn xdp_gone(ns: &str, dev: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if !has_xdp(ns, dev) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn small() -> XdpConfig {
    XdpConfig {
        rx_ring_size: 1024,
        tx_ring_size: 512,
        batch: 64,
        ..XdpConfig::default()
    }
}

#[test]
fn two_queues_afxdp_to_afxdp_exact_counts_per_queue() {
    let ns = Netns::new();
    let (a, b) = veth_pair(&ns, "q", 2);
    ns.run(|| {
        let cfg = small();
        let mut rxs: Vec<AfXdpRx> = (0..2)
            .map(|q| AfXdpRx::open(&b, q, &cfg).unwrap())
            .collect();
        let mut txs: Vec<AfXdpTx> = (0..2)
            .map(|q| AfXdpTx::open(&a, q, &cfg).unwrap())
            .collect();
        for rx in &rxs {
            assert_eq!(
                rx.mode(),
                XdpMode {
                    zerocopy: false,
                    attach: Some(Attached::Native)
                }
            );
            assert_eq!(rx.attach_warning(), None);
        }
        assert!(has_xdp(&ns.name, &b));
        assert_eq!(txs[1].mode().to_string(), "copy");
        assert_eq!(txs[1].queue(), 1);
        assert_eq!(txs[1].slot_size(), 2048);

        // 5000 frames per queue, the source port names the queue, the
        // payload carries a sequence number and a pattern.
        const PER_QUEUE: usize = 5000;
        let frames: Vec<Vec<Vec<u8>>> = (0..2u16)
            .map(|q| {
                (0..PER_QUEUE as u32)
                    .map(|i| udp_frame(MAC_A, MAC_B, 1000 + q, i, 60 + (i as usize % 200)))
                    .collect()
            })
            .collect();
        let mut got = [Vec::new(), Vec::new()];
        // A modest rate: 100 frames per queue, then drain both receivers.
        for start in (0..PER_QUEUE).step_by(100) {
            for q in 0..2 {
                send_frames(&mut txs[q], &frames[q][start..start + 100], 100, || {});
            }
            for q in 0..2 {
                while rxs[q]
                    .recv_batch(Duration::ZERO, |f| got[q].push(f.data.to_vec()))
                    .unwrap()
                    > 0
                {}
            }
        }
        for q in 0..2 {
            recv_into(&mut rxs[q], &mut got[q], PER_QUEUE);
        }
        for q in 0..2 {
            assert_eq!(got[q].len(), PER_QUEUE, "queue {q}");
            assert_eq!(got[q], frames[q], "queue {q}: frames differ");
            assert_eq!(rxs[q].drops().unwrap(), 0);
            assert_eq!(txs[q].tx_errors(), 0);
            assert_eq!(txs[q].in_flight(), 0);
        }
        drop(rxs);
        assert!(xdp_gone(&ns.name, &b), "program left after drop");
    });
}

#[test]
fn a_sender_on_a_receivers_queue_sends_through_its_socket() {
    // Each end of a one-queue veth receives and sends at once, as a tester
    // port does for traffic both ways: the kernel binds one socket per
    // queue, so each sender goes through its receiver's socket.
    let ns = Netns::new();
    let (a, b) = veth_pair(&ns, "d", 1);
    ns.run(|| {
        let cfg = small();
        let mut rx_a = AfXdpRx::open(&a, 0, &cfg).unwrap();
        let mut rx_b = AfXdpRx::open(&b, 0, &cfg).unwrap();
        let mut tx_a = AfXdpTx::open(&a, 0, &cfg).unwrap();
        let mut tx_b = AfXdpTx::open(&b, 0, &cfg).unwrap();
        // The receiver's socket has one sender: a second one is refused.
        let e = AfXdpTx::open(&a, 0, &cfg).unwrap_err();
        assert!(matches!(e, IoError::QueueBusy { queue: 0, .. }), "{e}");
        assert_eq!((tx_a.queue(), tx_a.mode().to_string()), (0, "copy".into()));
        // 3000 frames from a to b (source port 1000), 2000 from b to a
        // (source port 2000), interleaved 100 at a time.
        let ab: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 1000, i, 60 + (i as usize % 100)))
            .collect();
        let ba: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| udp_frame(MAC_B, MAC_A, 2000, i, 60))
            .collect();
        let (mut at_b, mut at_a) = (Vec::new(), Vec::new());
        for k in 0..30 {
            send_frames(&mut tx_a, &ab[k * 100..(k + 1) * 100], 100, || {});
            if k < 20 {
                send_frames(&mut tx_b, &ba[k * 100..(k + 1) * 100], 100, || {});
            }
            for (rx, got) in [(&mut rx_b, &mut at_b), (&mut rx_a, &mut at_a)] {
                while rx
                    .recv_batch(Duration::ZERO, |f| got.push(f.data.to_vec()))
                    .unwrap()
                    > 0
                {}
            }
        }
        recv_into(&mut rx_b, &mut at_b, ab.len());
        recv_into(&mut rx_a, &mut at_a, ba.len());
        // Each side got exactly the other's frames, in order, and none of
        // its own.
        assert_eq!(at_b.len(), 3000);
        assert_eq!(at_b, ab, "a -> b frames differ");
        assert_eq!(at_a.len(), 2000);
        assert_eq!(at_a, ba, "b -> a frames differ");
        for tx in [&mut tx_a, &mut tx_b] {
            tx.flush().unwrap();
            assert_eq!((tx.tx_errors(), tx.in_flight()), (0, 0));
        }
        assert_eq!((rx_a.drops().unwrap(), rx_b.drops().unwrap()), (0, 0));
        // a's receiver closed, its sender keeps the socket and sends on.
        drop(rx_a);
        let more: Vec<Vec<u8>> = (3000..3010u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 1000, i, 60))
            .collect();
        send_frames(&mut tx_a, &more, 10, || {});
        let mut got = Vec::new();
        recv_into(&mut rx_b, &mut got, more.len());
        assert_eq!(got, more);
    });
}

#[test]
fn shared_umem_tx_on_two_queues() {
    let ns = Netns::new();
    let (a, b) = veth_pair(&ns, "s", 2);
    ns.run(|| {
        let cfg = small();
        let mut rxs: Vec<AfXdpRx> = (0..2)
            .map(|q| AfXdpRx::open(&b, q, &cfg).unwrap())
            .collect();
        let mut txs = AfXdpTx::open_shared_umem(&a, &[0, 1], &cfg).unwrap();
        assert_eq!(txs.len(), 2);
        assert_eq!(txs[1].queue(), 1);
        assert_eq!(txs[1].mode().to_string(), "copy");
        // Twice the ring per socket, so that chunks are reused: a chunk
        // handed out twice (overlapping shares) would corrupt frames.
        const PER_QUEUE: usize = 2 * 512;
        let frames: Vec<Vec<Vec<u8>>> = (0..2u16)
            .map(|q| {
                (0..PER_QUEUE as u32)
                    .map(|i| udp_frame(MAC_A, MAC_B, 2000 + q, i, 60 + (i as usize % 300)))
                    .collect()
            })
            .collect();
        let mut got = [Vec::new(), Vec::new()];
        for start in (0..PER_QUEUE).step_by(128) {
            // Both ports fill their chunks before either is sent.
            for (q, tx) in txs.iter_mut().enumerate() {
                let f = &frames[q][start..start + 128];
                let n = tx
                    .send_batch(128, |i, slot, _| {
                        slot[..f[i].len()].copy_from_slice(&f[i]);
                        f[i].len()
                    })
                    .unwrap();
                assert_eq!(n, 128);
            }
            for tx in txs.iter_mut() {
                tx.flush().unwrap();
            }
            for q in 0..2 {
                recv_into(&mut rxs[q], &mut got[q], start + 128);
            }
        }
        for q in 0..2 {
            assert_eq!(got[q].len(), PER_QUEUE, "queue {q}");
            assert_eq!(got[q], frames[q], "queue {q}: frames differ");
            assert_eq!(rxs[q].drops().unwrap(), 0);
        }
        // The second socket of a shared UMEM can be dropped before the first.
        let second = txs.pop().unwrap();
        drop(second);
        send_frames(&mut txs[0], &frames[0][..10], 10, || {});
        let mut more = Vec::new();
        recv_into(&mut rxs[0], &mut more, 10);
        assert_eq!(more, frames[0][..10]);
    });
}

#[test]
fn afxdp_tx_to_afpacket_rx() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx = AfPacketRx::open(
            &ns.b,
            &RxRingConfig {
                block_size: 1 << 16,
                blocks: 16,
                ..Default::default()
            },
            None,
        )
        .unwrap();
        let mut tx = AfXdpTx::open(&ns.a, 0, &small()).unwrap();
        let frames: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 7, i, [60, 1514, 128][i as usize % 3]))
            .collect();
        let mut got = Vec::new();
        let mut batches = 0u64;
        send_frames(&mut tx, &frames, 64, || {
            batches += 1;
            rx.recv_batch(Duration::ZERO, |f| got.push(f.data.to_vec()))
                .unwrap();
        });
        recv_into(&mut rx, &mut got, frames.len());
        assert_eq!(got.len(), frames.len());
        assert_eq!(got, frames);
        assert_eq!(rx.drops().unwrap(), 0);
        // 3000 frames in batches of 64: 47 calls, unless one found the
        // ring full and sent fewer.
        assert!(batches >= 47, "{batches} batches");
        // One sendto per batch at most: copy mode sends inside the call
        // (the whole batch, with the per-call budget raised to it), so the
        // chunks are back before the next batch and neither waiting for
        // them nor flush needs an extra kick. And at least one: copy mode
        // always asks for the wake-up.
        assert_eq!(tx.kicks(), batches, "kicks for {batches} batches");
    });
}

#[test]
fn afpacket_tx_to_afxdp_rx() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx = AfXdpRx::open(&ns.b, 0, &small()).unwrap();
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        let frames: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 9, i, [60, 1514, 777][i as usize % 3]))
            .collect();
        let mut got = Vec::new();
        let mut stamps = Vec::new();
        let t0 = common::now_ns();
        send_frames(&mut tx, &frames, 64, || {
            rx.recv_batch(Duration::ZERO, |f| {
                got.push(f.data.to_vec());
                stamps.push(f.ts_ns);
            })
            .unwrap();
        });
        recv_into(&mut rx, &mut got, frames.len());
        assert_eq!(got.len(), frames.len());
        assert_eq!(got, frames);
        assert_eq!(rx.drops().unwrap(), 0);
        let t1 = common::now_ns();
        assert!(stamps.iter().all(|&t| t >= t0 && t <= t1));
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]));
    });
}

#[test]
fn frames_longer_than_a_chunk_are_counted_as_drops() {
    let ns = Netns::new();
    ns.ip(&["link", "set", &ns.a, "mtu", "3000"]);
    ns.ip(&["link", "set", &ns.b, "mtu", "3000"]);
    ns.run(|| {
        // 2048-byte chunks hold received frames of up to 1792 bytes.
        let mut rx = AfXdpRx::open(&ns.b, 0, &small()).unwrap();
        assert_eq!(rx.mode().attach, Some(Attached::Native));
        let mut tx = AfPacketTx::open(
            &ns.a,
            &TxRingConfig {
                slot_size: 3014,
                slots: 64,
            },
        )
        .unwrap();
        let frames: Vec<Vec<u8>> = [1792usize, 1793, 2500, 60]
            .iter()
            .enumerate()
            .map(|(i, &len)| udp_frame(MAC_A, MAC_B, 1, i as u32, len))
            .collect();
        send_frames(&mut tx, &frames, 4, || {});
        let mut got = Vec::new();
        recv_into(&mut rx, &mut got, 2);
        assert_eq!(got, vec![frames[0].clone(), frames[3].clone()]);
        assert_eq!(rx.drops().unwrap(), 2);
    });
}

#[test]
fn tx_refuses_bad_lengths_and_patches_in_place() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx = AfXdpRx::open(&ns.b, 0, &small()).unwrap();
        let cfg = XdpConfig {
            tx_ring_size: 64,
            batch: 16,
            ..small()
        };
        let mut tx = AfXdpTx::open(&ns.a, 0, &cfg).unwrap();
        let base = udp_frame(MAC_A, MAC_B, 5, 0, 100);
        // Round 1: 16 slots, of which 3 get lengths the kernel would refuse.
        let bad = [3usize, 7, 11];
        let lens = |i: usize| match i {
            3 => 0,
            7 => 13,
            11 => 1515, // MTU 1500 + 14 + 1
            _ => 100,
        };
        let n = tx
            .send_batch(16, |i, slot, prev| {
                assert_eq!(prev, 0, "fresh chunk");
                slot[..100].copy_from_slice(&base);
                slot[42..46].copy_from_slice(&(i as u32).to_be_bytes());
                lens(i)
            })
            .unwrap();
        assert_eq!(n, 16);
        tx.flush().unwrap();
        assert_eq!(tx.tx_errors(), 3);
        let mut got = Vec::new();
        recv_into(&mut rx, &mut got, 13);
        assert_eq!(got.len(), 13);
        let seqs: Vec<u32> = got
            .iter()
            .map(|f| u32::from_be_bytes(f[42..46].try_into().unwrap()))
            .collect();
        let want: Vec<u32> = (0..16).filter(|i| !bad.contains(&(*i as usize))).collect();
        assert_eq!(seqs, want);

        // Round 2: every chunk that carried a frame reports its length and
        // still holds it; only the sequence number is rewritten.
        let mut prevs = Vec::new();
        let n = tx
            .send_batch(16, |i, slot, prev| {
                prevs.push(prev);
                if prev == 100 {
                    assert_eq!(&slot[..42], &base[..42]);
                } else {
                    slot[..100].copy_from_slice(&base);
                }
                slot[42..46].copy_from_slice(&(1000 + i as u32).to_be_bytes());
                100
            })
            .unwrap();
        assert_eq!(n, 16);
        assert_eq!(prevs.iter().filter(|&&p| p == 100).count(), 13);
        assert_eq!(prevs.iter().filter(|&&p| p == 0).count(), 3);
        tx.flush().unwrap();
        got.clear();
        recv_into(&mut rx, &mut got, 16);
        assert_eq!(got.len(), 16);
        for (i, f) in got.iter().enumerate() {
            assert_eq!(&f[..42], &base[..42]);
            assert_eq!(
                u32::from_be_bytes(f[42..46].try_into().unwrap()),
                1000 + i as u32
            );
            assert_eq!(&f[46..], &base[46..]);
        }
        assert_eq!(tx.tx_errors(), 3);
    });
}

#[test]
fn native_refused_falls_back_to_generic_with_a_warning() {
    let ns = Netns::new();
    // veth refuses native XDP on an end with fewer RX queues than its peer
    // has TX queues (its frames could arrive on a queue without XDP).
    let suffix = &ns.a[2..];
    let (a, b) = (format!("fa{suffix}"), format!("fb{suffix}"));
    ns.ip(&[
        "link",
        "add",
        &a,
        "numtxqueues",
        "2",
        "numrxqueues",
        "1",
        "type",
        "veth",
        "peer",
        "name",
        &b,
        "numtxqueues",
        "1",
        "numrxqueues",
        "1",
    ]);
    ns.ip(&["link", "set", &a, "up"]);
    ns.ip(&["link", "set", &b, "up"]);
    ns.run(|| {
        let native = AttachMode::Native;
        let e = AfXdpRx::open(&b, 0, &XdpConfig { attach: native, ..small() }).unwrap_err();
        assert!(matches!(e, IoError::Xdp { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!("attaching XDP in native mode on {b}: No space left on device")
        );
        assert!(!e.is_usage());
        assert!(!has_xdp(&ns.name, &b));

        let mut rx = AfXdpRx::open(&b, 0, &small()).unwrap();
        assert_eq!(rx.mode().attach, Some(Attached::Generic));
        assert_eq!(rx.mode().to_string(), "copy, generic XDP");
        assert_eq!(
            rx.attach_warning(),
            Some(
                format!(
                    "warning: {b} refused native XDP (No space left on device); using generic XDP, which is slower"
                )
                .as_str()
            )
        );
        let out = Command::new("ip")
            .args(["-d", "link", "show", "dev", &b])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("xdpgeneric"));

        let mut tx = AfXdpTx::open(&a, 0, &small()).unwrap();
        let frames: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 3, i, 60 + i as usize))
            .collect();
        let mut got = Vec::new();
        send_frames(&mut tx, &frames, 32, || {
            rx.recv_batch(Duration::ZERO, |f| got.push(f.data.to_vec()))
                .unwrap();
        });
        recv_into(&mut rx, &mut got, frames.len());
        assert_eq!(got.len(), frames.len());
        assert_eq!(got, frames);
        drop(rx);
        assert!(xdp_gone(&ns.name, &b));
    });
}

/// The built-in lab's veths have MTU 9000. veth accepts a program in native
/// mode there only when it is frags-aware (a frame may then span several
/// pages); ours are. Frames that fit a chunk reach the socket; longer ones,
/// linear or in several buffers, are dropped and counted, never lost
/// silently.
#[test]
fn frags_aware_program_is_native_at_mtu_9000() {
    let ns = Netns::new();
    ns.ip(&["link", "set", &ns.a, "mtu", "9000"]);
    ns.ip(&["link", "set", &ns.b, "mtu", "9000"]);
    ns.run(|| {
        let cfg = XdpConfig {
            attach: AttachMode::Native,
            ..small()
        };
        let mut rx = AfXdpRx::open(&ns.b, 0, &cfg).unwrap();
        assert_eq!(rx.mode().to_string(), "copy, native XDP");
        assert_eq!(rx.attach_warning(), None);
        let out = Command::new("ip")
            .args(["-d", "link", "show", "dev", &ns.b])
            .output()
            .unwrap();
        let link = String::from_utf8_lossy(&out.stdout);
        assert!(link.contains("prog/xdp"), "{link}");
        assert!(!link.contains("xdpgeneric"), "{link}");

        let mut tx = AfPacketTx::open(
            &ns.a,
            &TxRingConfig {
                slot_size: 9014,
                slots: 64,
            },
        )
        .unwrap();
        // 2048-byte chunks hold frames of up to 1792 bytes. 1793 and 3000
        // bytes fit one page but not a chunk; 9014 bytes (the MTU's
        // largest frame) spans several buffers.
        let lens = [60usize, 1792, 1793, 3000, 9014, 128, 9014, 1500];
        let frames: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| udp_frame(MAC_A, MAC_B, 4, i as u32, len))
            .collect();
        let before = iface::read_counters(&ns.b).unwrap();
        send_frames(&mut tx, &frames, 8, || {});
        let mut got = Vec::new();
        recv_into(&mut rx, &mut got, 4);
        let fitting: Vec<Vec<u8>> = frames.iter().filter(|f| f.len() <= 1792).cloned().collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got, fitting);
        let st = rx.statistics().unwrap();
        assert_eq!(st.rx_dropped, 4, "{st:?}");
        assert_eq!(st.rx_ring_full, 0);
        assert_eq!(rx.drops().unwrap(), 4);
        // The interface saw all eight; the four the socket refused are its
        // rx drops too.
        let d = iface::read_counters(&ns.b).unwrap().delta(&before);
        assert_eq!(d.rx_packets, 8, "{d:?}");
        assert_eq!(d.rx_dropped, 4, "{d:?}");
    });
}

/// The child side of the exit tests: opens an RX socket in the namespace
/// named by PKTLAB_AFXDP_CHILD_NETNS, says "ready", and receives until it is
/// killed. Fails when run without that variable (by `--ignored`).
#[test]
#[ignore = "helper process of xdp_program_is_detached_when_the_process_dies"]
fn child_holds_an_rx_socket() {
    let netns = std::env::var("PKTLAB_AFXDP_CHILD_NETNS").expect(
        "PKTLAB_AFXDP_CHILD_NETNS unset: this helper runs only as the child of xdp_program_is_detached_when_the_process_dies",
    );
    let dev = std::env::var("PKTLAB_AFXDP_CHILD_DEV").unwrap();
    let file = std::fs::File::open(format!("/var/run/netns/{netns}")).unwrap();
    // SAFETY: setns on a valid namespace fd; it changes this thread only.
    assert_eq!(
        unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) },
        0
    );
    let mut rx = AfXdpRx::open(&dev, 0, &small()).unwrap();
    println!("pktlab-afxdp-child ready {}", rx.mode());
    loop {
        rx.recv_batch(Duration::from_millis(100), |_| {}).unwrap();
    }
}

#[test]
fn xdp_program_is_detached_when_the_process_dies() {
    let ns = Netns::new();
    for signal in [libc::SIGINT, libc::SIGKILL] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_holds_an_rx_socket",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("PKTLAB_AFXDP_CHILD_NETNS", &ns.name)
            .env("PKTLAB_AFXDP_CHILD_DEV", &ns.b)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill the child whatever happens below.
        struct Reap(std::process::Child);
        impl Drop for Reap {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let stdout = child.stdout.take().unwrap();
        let mut child = Reap(child);
        let ready = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            // libtest prints "test <name> ... " before the test's own output.
            .find_map(|l| l.find("pktlab-afxdp-child").map(|i| l[i..].to_string()));
        assert_eq!(
            ready.as_deref(),
            Some("pktlab-afxdp-child ready copy, native XDP")
        );
        assert!(has_xdp(&ns.name, &ns.b), "child attached no program");
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(child.0.id() as i32, signal) }, 0);
        let status = child.0.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal));
        assert!(
            xdp_gone(&ns.name, &ns.b),
            "XDP program left after signal {signal}"
        );
    }
}

#[test]
fn bpffs_is_not_needed() {
    let ns = Netns::new();
    ns.run(|| {
        // A private mount namespace for this thread only, without bpffs.
        // SAFETY: unshare affects only the calling (test-owned) thread.
        assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNS) }, 0);
        let root = std::ffi::CString::new("/").unwrap();
        // SAFETY: valid C strings; makes our copy of the mounts private so
        // that nothing below propagates to the host.
        let rc = unsafe {
            libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0);
        let bpf_mounts = || {
            std::fs::read_to_string("/proc/thread-self/mountinfo")
                .unwrap()
                .lines()
                .filter(|l| l.contains(" - bpf "))
                .map(|l| l.split(' ').nth(4).unwrap().to_string())
                .collect::<Vec<_>>()
        };
        for m in bpf_mounts() {
            let p = std::ffi::CString::new(m).unwrap();
            // SAFETY: valid C string; detaches the mount in our private namespace.
            assert_eq!(unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) }, 0);
        }
        assert!(bpf_mounts().is_empty());

        let mut rx = AfXdpRx::open(&ns.b, 0, &small()).unwrap();
        let mut tx = AfXdpTx::open(&ns.a, 0, &small()).unwrap();
        let frames: Vec<Vec<u8>> = (0..500u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 1, i, 64))
            .collect();
        send_frames(&mut tx, &frames, 50, || {});
        let mut got = Vec::new();
        recv_into(&mut rx, &mut got, frames.len());
        assert_eq!(got, frames);
    });
}

#[test]
fn error_cases() {
    let ns = Netns::new();
    let (a, b) = veth_pair(&ns, "e", 2);
    ns.run(|| {
        let cfg = small();
        // A missing interface: usage error.
        let e = AfXdpRx::open("nosuchif0", 0, &cfg).unwrap_err();
        assert_eq!(e.to_string(), "no such interface: nosuchif0");
        assert!(e.is_usage());
        let e = AfXdpTx::open("nosuchif0", 0, &cfg).unwrap_err();
        assert!(e.is_usage());

        // A queue the interface does not have: usage error naming the count.
        let e = AfXdpTx::open(&a, 2, &cfg).unwrap_err();
        assert_eq!(e.to_string(), format!("no queue 2 on {a}: it has 2 queue(s), 0 to 1"));
        assert!(e.is_usage());
        let e = AfXdpRx::open(&b, 7, &cfg).unwrap_err();
        assert!(matches!(e, IoError::NoSuchQueue { queue: 7, count: 2, .. }), "{e}");

        // Zero-copy required on veth (copy mode only): usage error.
        let zc = XdpConfig {
            zerocopy: ZeroCopy::On,
            ..cfg
        };
        let e = AfXdpTx::open(&a, 0, &zc).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("zero-copy AF_XDP is not available on {a} queue 0: its driver has no zero-copy support (use zero-copy auto or off)")
        );
        assert!(e.is_usage());
        let e = AfXdpRx::open(&b, 1, &zc).unwrap_err();
        assert!(matches!(e, IoError::ZeroCopyUnavailable { queue: 1, .. }), "{e}");
        // Auto and Off give copy mode.
        for z in [ZeroCopy::Auto, ZeroCopy::Off] {
            let tx = AfXdpTx::open(&a, 0, &XdpConfig { zerocopy: z, ..cfg }).unwrap();
            assert!(!tx.mode().zerocopy);
        }

        // A busy queue: runtime error.
        let _rx = AfXdpRx::open(&b, 1, &cfg).unwrap();
        let e = AfXdpRx::open(&b, 1, &cfg).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("queue 1 of {b} is busy: another AF_XDP socket is bound to it")
        );
        assert!(!e.is_usage());
        let _tx = AfXdpTx::open(&a, 1, &cfg).unwrap();
        let e = AfXdpTx::open(&a, 1, &cfg).unwrap_err();
        assert!(matches!(e, IoError::QueueBusy { queue: 1, .. }), "{e}");

        // Another XDP program on the interface: runtime error.
        let mut obj = XdpObject::load(builtin_object(), &[], &a).unwrap();
        let att = obj
            .attach("xdp_drop", &iface::lookup(&a).unwrap(), AttachMode::Native)
            .unwrap();
        assert_eq!(att.mode(), Attached::Native);
        let e = AfXdpRx::open(&a, 0, &cfg).unwrap_err();
        assert_eq!(e.to_string(), format!("{a} already has another XDP program attached"));
        assert!(!e.is_usage());
        drop(att);
        assert!(xdp_gone(&ns.name, &a));

        // An interface that is down: runtime error.
        ns.ip(&["link", "set", &a, "down"]);
        let e = AfXdpTx::open(&a, 0, &cfg).unwrap_err();
        assert_eq!(e.to_string(), format!("interface {a} is down"));
        assert!(!e.is_usage());

        // Bad settings: usage error.
        let e = AfXdpRx::open(&b, 0, &XdpConfig { rx_ring_size: 100, ..cfg }).unwrap_err();
        assert!(e.is_usage());
    });
}

#[test]
fn missing_privileges_are_runtime_errors() {
    let ns = Netns::new();
    // aya probes kernel features once per process, on first use: let that
    // happen with privileges, so the unprivileged thread below does not
    // poison the probe for the other tests of this process.
    ns.run(|| {
        let _rx = AfXdpRx::open(&ns.b, 0, &small()).unwrap();
    });
    ns.run(|| {
        // Keep only CAP_NET_RAW (AF_XDP sockets) and CAP_IPC_LOCK (UMEM
        // pinning beyond RLIMIT_MEMLOCK): loading the XDP program must fail.
        set_thread_caps((1 << 13) | (1 << 14));
        let e = AfXdpRx::open(&ns.b, 0, &small()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "loading and attaching XDP programs needs root or CAP_BPF and CAP_NET_ADMIN"
        );
        assert!(!e.is_usage());
        // TX needs no program.
        AfXdpTx::open(&ns.a, 0, &small()).unwrap();
        // Without CAP_NET_RAW, no AF_XDP socket (RX fails at the program,
        // which it loads first).
        set_thread_caps(0);
        let e = AfXdpTx::open(&ns.a, 0, &small()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "opening an AF_XDP socket needs root or CAP_NET_RAW"
        );
        assert!(!e.is_usage());
        let e = AfXdpRx::open(&ns.b, 0, &small()).unwrap_err();
        assert!(matches!(e, IoError::NotPermitted { .. }), "{e}");
    });
}

/// Sets the calling thread's effective and permitted capabilities to `caps`
/// (bits of the first 32 capabilities) with the raw capset system call,
/// which changes this thread only.
fn set_thread_caps(caps: u32) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let hdr = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [
        Data {
            effective: caps,
            permitted: caps,
            inheritable: 0,
        },
        Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
    ];
    // SAFETY: header and two data structs as capset(2) version 3 expects.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &hdr as *const Header, data.as_ptr()) };
    assert_eq!(rc, 0, "capset: {}", std::io::Error::last_os_error());
}

#[test]
fn committed_bpf_object_matches_its_source() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/build.sh");
    let out = Command::new(script)
        .arg("--check")
        .output()
        .expect("running crates/io/bpf/build.sh (needs clang and llvm: scripts/deps)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // And the embedded copy is the committed file.
    let file = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/xsk_redirect.o")).unwrap();
    assert_eq!(builtin_object(), &file[..]);
}

/// Deletes a temporary file when dropped, also when the test panics.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Pins the calling thread to `cpu`.
fn pin_thread(cpu: usize) {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit inside `set`; sched_setaffinity(0, ..)
    // changes the calling thread only.
    let rc = unsafe {
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        rc,
        0,
        "pinning to CPU {cpu}: {}",
        std::io::Error::last_os_error()
    );
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The rate of frames `dev` counted as received between 1 s after `start`
/// (warm-up) and the end of `secs`, while `run` sends; `run` gets a flag to
/// stop at.
fn sink_rate(dev: &str, secs: f64, run: impl FnOnce(&std::sync::atomic::AtomicBool) + Send) -> f64 {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let sender = s.spawn(|| run(&stop));
        std::thread::sleep(Duration::from_secs(1));
        let c0 = iface::read_counters(dev).unwrap();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs - 1.0));
        let c1 = iface::read_counters(dev).unwrap();
        let dt = t0.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        sender.join().unwrap();
        c1.delta(&c0).rx_packets as f64 / dt
    })
}

/// Sends 64-byte frames (60 bytes + FCS) on `tx` until `stop`, rewriting
/// only the 4-byte sequence number of frames already in their slot.
fn blast<T: TxPort>(tx: &mut T, stop: &std::sync::atomic::AtomicBool, batch: usize) {
    let frame = udp_frame(MAC_A, MAC_B, 1, 0, 60);
    let mut seq = 0u32;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        tx.send_batch(batch, |_, slot, prev| {
            if prev != 60 {
                slot[..60].copy_from_slice(&frame);
            }
            slot[42..46].copy_from_slice(&seq.to_be_bytes());
            seq = seq.wrapping_add(1);
            60
        })
        .unwrap();
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The speed measurement (not a test: it asserts nothing about speed).
///
/// One thread on one CPU pushes 64-byte frames for PKTLAB_SPEED_SECS (5)
/// seconds into a veth whose peer drops them with an XDP_DROP program in
/// native mode; the rate is read from the peer's own rx counters after a
/// 1 s warm-up. AF_XDP, AF_PACKET (AfPacketTx) and trafgen run in turn,
/// interleaved, for PKTLAB_SPEED_ROUNDS (3) rounds, all on CPU
/// PKTLAB_SPEED_CPU (0; trafgen -P 1 pins its worker to CPU 0 itself).
/// PKTLAB_SPEED_TOOLS (a comma list) picks tools, PKTLAB_SPEED_BATCH (256)
/// the batch size, PKTLAB_SPEED_TX_RING (2048) the AF_XDP TX ring and UMEM
/// size in chunks.
///
/// `cargo test -p pktlab-io --release --test afxdp -- --ignored speed --nocapture`
#[test]
#[ignore = "speed measurement, run by hand"]
fn speed_afxdp_vs_afpacket_vs_trafgen() {
    let secs: f64 = env_or("PKTLAB_SPEED_SECS", 5.0);
    let rounds: usize = env_or("PKTLAB_SPEED_ROUNDS", 3);
    let cpu: usize = env_or("PKTLAB_SPEED_CPU", 0);
    let batch: usize = env_or("PKTLAB_SPEED_BATCH", 256);
    let ns = Netns::new();
    let frame = udp_frame(MAC_A, MAC_B, 1, 0, 60);
    let cfg_path = std::env::temp_dir().join(format!("pktlab-trafgen-{}.cfg", std::process::id()));
    let bytes: Vec<String> = frame.iter().map(|b| format!("0x{b:02x}")).collect();
    std::fs::write(&cfg_path, format!("{{ {} }}\n", bytes.join(", "))).unwrap();
    let _cfg_file = RemoveOnDrop(cfg_path.clone());

    let tools: String = env_or("PKTLAB_SPEED_TOOLS", "afxdp,afpacket,trafgen".to_string());
    let mut results: Vec<(&str, Vec<f64>)> = ["afxdp", "afpacket", "trafgen"]
        .into_iter()
        .filter(|t| tools.split(',').any(|x| x == *t))
        .map(|t| (t, vec![]))
        .collect();
    ns.run(|| {
        let mut obj = XdpObject::load(builtin_object(), &[], &ns.b).unwrap();
        let sink = obj
            .attach(
                "xdp_drop",
                &iface::lookup(&ns.b).unwrap(),
                AttachMode::Native,
            )
            .unwrap();
        assert_eq!(sink.mode(), Attached::Native);
        let xcfg = XdpConfig {
            batch,
            tx_ring_size: env_or("PKTLAB_SPEED_TX_RING", 2048),
            ..XdpConfig::default()
        };
        for round in 0..rounds {
            for (tool, rates) in results.iter_mut() {
                let rate = match *tool {
                    "afxdp" => {
                        let mut tx = AfXdpTx::open(&ns.a, 0, &xcfg).unwrap();
                        let r = sink_rate(&ns.b, secs, |stop| {
                            pin_thread(cpu);
                            blast(&mut tx, stop, batch)
                        });
                        if round == 0 {
                            println!(
                                "afxdp: mode {}, tx budget {:?}, {} kicks",
                                tx.mode(),
                                tx.tx_budget(),
                                tx.kicks()
                            );
                        }
                        r
                    }
                    "afpacket" => {
                        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
                        sink_rate(&ns.b, secs, |stop| {
                            pin_thread(cpu);
                            blast(&mut tx, stop, batch)
                        })
                    }
                    _ => sink_rate(&ns.b, secs, |stop| {
                        use std::os::unix::process::CommandExt;
                        // Its own process group: trafgen forks its worker,
                        // and both must get the signal.
                        let mut child = Command::new("trafgen")
                            .args(["-o", &ns.a, "-i"])
                            .arg(&cfg_path)
                            .args(["-P", "1", "-Q"])
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .process_group(0)
                            .spawn()
                            .expect("running trafgen (apt-get install netsniff-ng)");
                        let group = -(child.id() as i32);
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        // SAFETY: kill(2) on our own child's process group.
                        unsafe { libc::kill(group, libc::SIGINT) };
                        let deadline = Instant::now() + Duration::from_secs(5);
                        while child.try_wait().unwrap().is_none() {
                            if Instant::now() > deadline {
                                // SAFETY: as above.
                                unsafe { libc::kill(group, libc::SIGKILL) };
                            }
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }),
                };
                println!("round {round}: {tool:9} {:>10.0} pps", rate);
                rates.push(rate);
            }
        }
        drop(sink);
    });
    let med: Vec<(&str, f64)> = results.iter_mut().map(|(t, r)| (*t, median(r))).collect();
    for (t, m) in &med {
        println!("median {t:9} {m:>10.0} pps");
    }
    for (i, (a, ma)) in med.iter().enumerate() {
        for (b, mb) in &med[i + 1..] {
            println!("{a}/{b} {:.2}", ma / mb);
        }
    }
}

/// The receiver measurement (not a test): trafgen sends 64-byte frames as
/// fast as it can for PKTLAB_SPEED_SECS (5) seconds into a veth whose peer
/// has an AfXdpRx on its only queue, drained by one thread pinned to
/// PKTLAB_SPEED_RX_CPU (1), with PKTLAB_SPEED_RX_RING (the default, 16384) RX and fill
/// ring entries; prints how many frames the socket got against
/// how many the interface counted, and the socket's drops.
///
/// `cargo test -p pktlab-io --release --test afxdp -- --ignored speed_rx --nocapture`
#[test]
#[ignore = "speed measurement, run by hand"]
fn speed_rx_afxdp_against_interface_counters() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let secs: f64 = env_or("PKTLAB_SPEED_SECS", 5.0);
    let rx_cpu: usize = env_or("PKTLAB_SPEED_RX_CPU", 1);
    let ns = Netns::new();
    let frame = udp_frame(MAC_A, MAC_B, 1, 0, 60);
    let bytes: Vec<String> = frame.iter().map(|b| format!("0x{b:02x}")).collect();
    let cfg_path =
        std::env::temp_dir().join(format!("pktlab-trafgen-rx-{}.cfg", std::process::id()));
    std::fs::write(&cfg_path, format!("{{ {} }}\n", bytes.join(", "))).unwrap();
    let _cfg_file = RemoveOnDrop(cfg_path.clone());
    ns.run(|| {
        let cfg = XdpConfig {
            rx_ring_size: env_or("PKTLAB_SPEED_RX_RING", XdpConfig::default().rx_ring_size),
            ..XdpConfig::default()
        };
        let mut rx = AfXdpRx::open(&ns.b, 0, &cfg).unwrap();
        println!("afxdp rx: mode {}, ring {}", rx.mode(), cfg.rx_ring_size);
        let before = iface::read_counters(&ns.b).unwrap();
        let stop = AtomicBool::new(false);
        let got = std::thread::scope(|s| {
            let rx = &mut rx;
            let stop = &stop;
            let counter = s.spawn(move || {
                pin_thread(rx_cpu);
                let mut n = 0u64;
                loop {
                    let k = rx
                        .recv_batch(Duration::from_millis(10), |_| n += 1)
                        .unwrap();
                    if k == 0 && stop.load(Ordering::Relaxed) {
                        return n;
                    }
                }
            });
            let status = Command::new("timeout")
                .args([
                    "-s",
                    "INT",
                    &format!("{secs}"),
                    "trafgen",
                    "-o",
                    &ns.a,
                    "-i",
                ])
                .arg(&cfg_path)
                .args(["-P", "1", "-Q"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("running trafgen (apt-get install netsniff-ng)");
            assert!(status.code().is_some());
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Ordering::Relaxed);
            counter.join().unwrap()
        });
        let d = iface::read_counters(&ns.b).unwrap().delta(&before);
        let drops = rx.drops().unwrap();
        let st = rx.statistics().unwrap();
        assert_eq!(drops, st.rx_dropped + st.rx_ring_full);
        println!(
            "interface rx_packets {} ({:.0} pps), socket received {} ({:.3}%), socket drops {} ({st:?})",
            d.rx_packets,
            d.rx_packets as f64 / secs,
            got,
            100.0 * got as f64 / d.rx_packets as f64,
            drops
        );
    });
}

/// UMEM shared by two TX sockets or one per socket (not a test): two
/// threads, pinned to CPUs 0 and 1, each push 64-byte frames on their own
/// queue of a 2-queue veth whose peer drops them with XDP_DROP (native);
/// the peer's rx counters give the rate. PKTLAB_SPEED_ROUNDS (3) rounds,
/// interleaved, PKTLAB_SPEED_SECS (5) seconds each.
///
/// `cargo test -p pktlab-io --release --test afxdp -- --ignored speed_umem --nocapture`
#[test]
#[ignore = "speed measurement, run by hand"]
fn speed_umem_shared_vs_per_socket() {
    let secs: f64 = env_or("PKTLAB_SPEED_SECS", 5.0);
    let rounds: usize = env_or("PKTLAB_SPEED_ROUNDS", 3);
    let ns = Netns::new();
    let (a, b) = veth_pair(&ns, "u", 2);
    let mut results = [("per-socket", vec![]), ("shared", vec![])];
    ns.run(|| {
        let mut obj = XdpObject::load(builtin_object(), &[], &b).unwrap();
        let sink = obj
            .attach("xdp_drop", &iface::lookup(&b).unwrap(), AttachMode::Native)
            .unwrap();
        let cfg = XdpConfig::default();
        for round in 0..rounds {
            for (kind, rates) in results.iter_mut() {
                let mut txs = if *kind == "shared" {
                    AfXdpTx::open_shared_umem(&a, &[0, 1], &cfg).unwrap()
                } else {
                    vec![
                        AfXdpTx::open(&a, 0, &cfg).unwrap(),
                        AfXdpTx::open(&a, 1, &cfg).unwrap(),
                    ]
                };
                let rate = sink_rate(&b, secs, |stop| {
                    std::thread::scope(|s| {
                        for (cpu, tx) in txs.iter_mut().enumerate() {
                            s.spawn(move || {
                                pin_thread(cpu);
                                blast(tx, stop, cfg.batch)
                            });
                        }
                    })
                });
                println!("round {round}: {kind:10} {rate:>10.0} pps");
                rates.push(rate);
            }
        }
        drop(sink);
    });
    let m: Vec<f64> = results.iter_mut().map(|(_, r)| median(r)).collect();
    println!(
        "median per-socket {:.0} pps, shared {:.0} pps, shared/per-socket {:.3}",
        m[0],
        m[1],
        m[1] / m[0]
    );
}
