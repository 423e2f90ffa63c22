//! AF_PACKET ports on a veth pair inside a private network namespace.
//! Needs root (or CAP_NET_ADMIN + CAP_NET_RAW + CAP_SYS_ADMIN), `ip` and `tc`.
//! Also the interface facts read there: ethtool statistics, root qdiscs.

mod common;

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{now_ns, send_frames, udp_frame, Netns, MAC_A, MAC_B};
use pktlab_io::afpacket::{AfPacketRx, AfPacketTx, RxRingConfig, TxRingConfig};
use pktlab_io::iface::{self, IfCounters};
use pktlab_io::port::{RxPort, TxPort};
use pktlab_io::IoError;
use pktlab_io::{ethtool, qdisc};

/// 16 blocks of 256 KiB: 4 MiB, enough to hold every frame a test sends.
fn small_rx() -> RxRingConfig {
    RxRingConfig {
        block_size: 256 << 10,
        blocks: 16,
        frame_size: 2048,
        block_timeout_ms: 5,
    }
}

/// Sends `frames` in batches of at most `batch`, pausing 1 ms between
/// batches, and calls `between` after each batch (to drain receivers).
fn send_all(tx: &mut AfPacketTx, frames: &[Vec<u8>], batch: usize, between: impl FnMut()) {
    send_frames(tx, frames, batch, Duration::from_millis(1), between);
}

/// Receives until `want` frames arrived or 5 s passed, then 100 ms more to
/// catch extras.
fn recv_until(rx: &mut AfPacketRx, got: &mut Vec<(Vec<u8>, u32, u64)>, want: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < want && Instant::now() < deadline {
        rx.recv_batch(Duration::from_millis(50), |f| {
            got.push((f.data.to_vec(), f.wire_len, f.ts_ns))
        })
        .unwrap();
    }
    let extra_until = Instant::now() + Duration::from_millis(100);
    while Instant::now() < extra_until {
        rx.recv_batch(Duration::from_millis(20), |f| {
            got.push((f.data.to_vec(), f.wire_len, f.ts_ns))
        })
        .unwrap();
    }
}

#[test]
fn tx_ring_to_rx_ring_exactly_10000_frames() {
    let ns = Netns::new();
    ns.run(|| {
        let sizes = [60usize, 124, 508, 1514, 61];
        let frames: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| {
                udp_frame(
                    MAC_A,
                    MAC_B,
                    1000 + (i % 50) as u16,
                    i,
                    sizes[i as usize % sizes.len()],
                )
            })
            .collect();
        let total_bytes: u64 = frames.iter().map(|f| f.len() as u64).sum();

        let mut rx = AfPacketRx::open(&ns.b, &small_rx(), None).unwrap();
        let mut tx = AfPacketTx::open(
            &ns.a,
            &TxRingConfig {
                slot_size: 1514,
                slots: 256,
            },
        )
        .unwrap();
        assert_eq!(tx.slot_size(), 1514);
        assert!(tx.slots() >= 256);

        let a0 = iface::read_counters(&ns.a).unwrap();
        let b0 = iface::read_counters(&ns.b).unwrap();
        let t0 = now_ns();

        let mut got = Vec::new();
        send_all(&mut tx, &frames, 100, || {
            rx.recv_batch(Duration::ZERO, |f| {
                got.push((f.data.to_vec(), f.wire_len, f.ts_ns))
            })
            .unwrap();
        });
        recv_until(&mut rx, &mut got, frames.len());
        let t1 = now_ns();

        assert_eq!(tx.tx_errors(), 0);
        assert_eq!(rx.drops().unwrap(), 0);
        assert_eq!(got.len(), frames.len(), "received frame count");
        for (i, (data, wire_len, ts)) in got.iter().enumerate() {
            assert_eq!(data, &frames[i], "frame {i} differs");
            assert_eq!(*wire_len as usize, frames[i].len());
            // Kernel receive timestamps are CLOCK_REALTIME and taken during the test.
            assert!(
                *ts >= t0 - 2_000_000_000 && *ts <= t1 + 2_000_000_000,
                "frame {i} ts {ts} not in [{t0}, {t1}]"
            );
        }

        let da = iface::read_counters(&ns.a).unwrap().delta(&a0);
        let db = iface::read_counters(&ns.b).unwrap().delta(&b0);
        assert_eq!(da.tx_packets, 10_000, "{da:?}");
        assert_eq!(da.tx_bytes, total_bytes);
        assert_eq!(db.rx_packets, 10_000, "{db:?}");
        assert_eq!(db.rx_bytes, total_bytes);
        assert_eq!(db.tx_packets, 0, "B must stay silent: {db:?}");
        assert_eq!(da.rx_packets, 0);
        assert_eq!(da.tx_dropped + db.rx_dropped, 0);
    });
}

#[test]
fn tx_refuses_bad_lengths_and_counts_them() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx = AfPacketRx::open(&ns.b, &small_rx(), None).unwrap();
        let mut tx = AfPacketTx::open(
            &ns.a,
            &TxRingConfig {
                slot_size: 9014,
                slots: 64,
            },
        )
        .unwrap();
        let good = udp_frame(MAC_A, MAC_B, 1, 7, 60);
        // 0 bytes, 10 bytes (< Ethernet header), 1515 bytes (> MTU 1500 + 14), then a good one.
        let lens = [0usize, 10, 1515, 60];
        let n = tx
            .send_batch(lens.len(), |i, slot, _| {
                slot[..60].copy_from_slice(&good);
                lens[i]
            })
            .unwrap();
        assert_eq!(n, 4);
        tx.flush().unwrap();
        assert_eq!(tx.tx_errors(), 3);
        let mut got = Vec::new();
        recv_until(&mut rx, &mut got, 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, good);
    });
}

#[test]
fn rx_ignores_outgoing_frames() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx_a = AfPacketRx::open(&ns.a, &small_rx(), None).unwrap();
        let mut rx_b = AfPacketRx::open(&ns.b, &small_rx(), None).unwrap();
        // A plain ETH_P_ALL socket without PACKET_IGNORE_OUTGOING shows that
        // the frames do pass A's packet taps.
        let control = control_socket(&ns.a);
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        // Through the qdisc path, so that packet taps on A see the frames.
        assert!(!tx.set_qdisc_bypass(false).unwrap());
        let frames: Vec<Vec<u8>> = (0..100)
            .map(|i| udp_frame(MAC_A, MAC_B, 1, i, 60))
            .collect();
        send_all(&mut tx, &frames, 20, || {});

        let mut got_b = Vec::new();
        recv_until(&mut rx_b, &mut got_b, 100);
        assert_eq!(got_b.len(), 100);
        let mut got_a = Vec::new();
        recv_until(&mut rx_a, &mut got_a, 1); // waits 5 s, must stay empty
        assert_eq!(got_a.len(), 0, "RX on A saw A's own transmissions");
        assert_eq!(count_control(&control), 100, "control socket on A");
    });
}

fn control_socket(ifname: &str) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    let idx = iface::lookup(ifname).unwrap().index;
    // SAFETY: test-only raw socket setup with valid arguments.
    unsafe {
        let fd = libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK,
            (libc::ETH_P_ALL as u16).to_be() as i32,
        );
        assert!(fd >= 0);
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = idx as i32;
        let rc = libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        );
        assert_eq!(rc, 0);
        std::os::fd::OwnedFd::from_raw_fd(fd)
    }
}

fn count_control(fd: &std::os::fd::OwnedFd) -> usize {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 2048];
    let mut n = 0;
    // SAFETY: recv into a valid buffer on a non-blocking socket.
    while unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) } > 0 {
        n += 1;
    }
    n
}

#[test]
fn fanout_splits_flows_exactly() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx1 = AfPacketRx::open(&ns.b, &small_rx(), Some(7)).unwrap();
        let mut rx2 = AfPacketRx::open(&ns.b, &small_rx(), Some(7)).unwrap();
        assert_eq!(rx1.fanout_group(), Some(7));
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        const FLOWS: u32 = 1000;
        let frames: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| udp_frame(MAC_A, MAC_B, 10_000 + (i % FLOWS) as u16, i, 60))
            .collect();
        let (mut g1, mut g2) = (Vec::new(), Vec::new());
        send_all(&mut tx, &frames, 100, || {
            rx1.recv_batch(Duration::ZERO, |f| {
                g1.push((f.data.to_vec(), f.wire_len, f.ts_ns))
            })
            .unwrap();
            rx2.recv_batch(Duration::ZERO, |f| {
                g2.push((f.data.to_vec(), f.wire_len, f.ts_ns))
            })
            .unwrap();
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        while g1.len() + g2.len() < frames.len() && Instant::now() < deadline {
            rx1.recv_batch(Duration::from_millis(20), |f| {
                g1.push((f.data.to_vec(), f.wire_len, f.ts_ns))
            })
            .unwrap();
            rx2.recv_batch(Duration::from_millis(20), |f| {
                g2.push((f.data.to_vec(), f.wire_len, f.ts_ns))
            })
            .unwrap();
        }
        recv_until(&mut rx1, &mut g1, 0);
        recv_until(&mut rx2, &mut g2, 0);
        assert_eq!(g1.len() + g2.len(), 10_000, "sum over the group");
        assert!(
            !g1.is_empty() && !g2.is_empty(),
            "split {} / {}",
            g1.len(),
            g2.len()
        );
        assert_eq!(rx1.drops().unwrap() + rx2.drops().unwrap(), 0);
        // Each flow (UDP source port) goes to one socket only, and every
        // sequence number arrives once.
        let mut owner: HashMap<u16, u8> = HashMap::new();
        let mut seen = vec![false; frames.len()];
        for (who, g) in [(1u8, &g1), (2u8, &g2)] {
            for (data, _, _) in g.iter() {
                let sport = u16::from_be_bytes([data[34], data[35]]);
                assert_eq!(
                    *owner.entry(sport).or_insert(who),
                    who,
                    "flow {sport} split"
                );
                let seq = u32::from_be_bytes(data[42..46].try_into().unwrap()) as usize;
                assert!(!seen[seq], "seq {seq} twice");
                seen[seq] = true;
                assert_eq!(data, &frames[seq]);
            }
        }
        assert_eq!(owner.len(), FLOWS as usize);
    });
}

#[test]
fn vlan_tag_is_restored_on_receive() {
    let ns = Netns::new();
    ns.run(|| {
        let mut rx = AfPacketRx::open(&ns.b, &small_rx(), None).unwrap();
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        let mut frame = Vec::new();
        etherparse::PacketBuilder::ethernet2(MAC_A, MAC_B)
            .single_vlan(etherparse::VlanId::try_new(100).unwrap())
            .ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
            .udp(1, 2)
            .write(&mut frame, &[0xab; 18])
            .unwrap();
        assert_eq!(&frame[12..14], &[0x81, 0x00]);
        send_all(&mut tx, std::slice::from_ref(&frame), 1, || {});
        let mut got = Vec::new();
        recv_until(&mut rx, &mut got, 1);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, frame);
        assert_eq!(got[0].1 as usize, frame.len());
    });
}

#[test]
fn counters_and_lookup_follow_the_threads_netns() {
    let ns = Netns::new();
    let (ia, c) = ns.run(|| {
        (
            iface::lookup(&ns.a).unwrap(),
            iface::read_counters(&ns.b).unwrap(),
        )
    });
    assert_eq!(ia.mac, MAC_A);
    assert_eq!(ia.mtu, 1500);
    assert!(ia.index > 0);
    // Nothing has been sent on the fresh pair: IPv6 is off and there are
    // no addresses, so the kernel sent nothing either.
    assert_eq!(c, IfCounters::default());
    // The host namespace has no such interface.
    assert!(matches!(
        iface::lookup(&ns.a),
        Err(IoError::NoSuchInterface(_))
    ));
    assert!(matches!(
        iface::read_counters(&ns.a),
        Err(IoError::NoSuchInterface(_))
    ));
}

#[test]
fn down_interface_and_missing_interface() {
    let ns = Netns::new();
    ns.ip(&["link", "set", &ns.a, "down"]);
    ns.run(|| {
        let e = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap_err();
        assert!(matches!(e, IoError::InterfaceDown(_)), "{e}");
        assert_eq!(e.to_string(), format!("interface {} is down", ns.a));
        assert!(!e.is_usage());
        let e = AfPacketRx::open("nosuchif0", &small_rx(), None).unwrap_err();
        assert_eq!(e.to_string(), "no such interface: nosuchif0");
        assert!(e.is_usage());
        let e = AfPacketTx::open("nosuchif0", &TxRingConfig::default()).unwrap_err();
        assert!(matches!(e, IoError::NoSuchInterface(_)));
    });
}

/// Manual rate check: `cargo test -p pktlab-io --release --test afpacket -- --ignored --nocapture`.
#[test]
#[ignore = "manual performance check"]
fn tx_rate_64_byte_frames() {
    let ns = Netns::new();
    ns.run(|| {
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        println!("qdisc bypass: {}", tx.qdisc_bypass());
        let frame = udp_frame(MAC_A, MAC_B, 1, 0, 60);
        for with_rx in [false, true] {
            let rx = with_rx.then(|| AfPacketRx::open(&ns.b, &RxRingConfig::default(), None).unwrap());
            let b0 = iface::read_counters(&ns.b).unwrap();
            let start = Instant::now();
            let mut sent = 0u64;
            while start.elapsed() < Duration::from_secs(2) {
                sent += tx
                    .send_batch(256, |_, slot, _| {
                        slot[..60].copy_from_slice(&frame);
                        60
                    })
                    .unwrap() as u64;
            }
            tx.flush().unwrap();
            let secs = start.elapsed().as_secs_f64();
            let db = iface::read_counters(&ns.b).unwrap().delta(&b0);
            println!(
                "rx ring on B: {with_rx}: queued {:.3} Mpps, B rx_packets {:.3} Mpps, B rx_dropped {}",
                sent as f64 / secs / 1e6,
                db.rx_packets as f64 / secs / 1e6,
                db.rx_dropped
            );
            drop(rx);
        }
    });
}

#[test]
fn jumbo_frames_round_trip() {
    let ns = Netns::new();
    ns.ip(&["link", "set", &ns.a, "mtu", "9000"]);
    ns.ip(&["link", "set", &ns.b, "mtu", "9000"]);
    ns.run(|| {
        assert_eq!(iface::lookup(&ns.a).unwrap().mtu, 9000);
        let mut rx = AfPacketRx::open(&ns.b, &small_rx(), None).unwrap();
        let mut tx = AfPacketTx::open(
            &ns.a,
            &TxRingConfig {
                slot_size: 9014,
                slots: 64,
            },
        )
        .unwrap();
        // Around the 2048-byte switch from copied to zero-copy frames.
        let frames: Vec<Vec<u8>> = [2047usize, 2048, 2049, 4000, 9014, 60]
            .iter()
            .enumerate()
            .map(|(i, &len)| udp_frame(MAC_A, MAC_B, 1, i as u32, len))
            .collect();
        send_all(&mut tx, &frames, 3, || {});
        let mut got = Vec::new();
        recv_until(&mut rx, &mut got, frames.len());
        assert_eq!(tx.tx_errors(), 0);
        assert_eq!(got.len(), frames.len());
        for (i, (data, wire_len, _)) in got.iter().enumerate() {
            assert_eq!(data, &frames[i], "frame {i}");
            assert_eq!(*wire_len as usize, frames[i].len());
        }
    });
}

#[test]
fn unprivileged_thread_gets_permission_error() {
    assert!(iface::is_root());
    std::thread::spawn(|| {
        // The raw system call changes the credentials of this thread only
        // (glibc's setresuid would change every thread of the test process);
        // leaving uid 0 clears the effective capabilities.
        // SAFETY: plain system call; this thread ends right after the test.
        let rc = unsafe { libc::syscall(libc::SYS_setresuid, 65534, 65534, 65534) };
        assert_eq!(rc, 0);
        assert!(!iface::is_root());
        let e = AfPacketRx::open("lo", &small_rx(), None).unwrap_err();
        assert!(matches!(e, IoError::PermissionDenied), "{e}");
        assert_eq!(
            e.to_string(),
            "opening an AF_PACKET socket needs root or CAP_NET_RAW"
        );
        assert!(!e.is_usage());
        let e = AfPacketTx::open("lo", &TxRingConfig::default()).unwrap_err();
        assert!(matches!(e, IoError::PermissionDenied), "{e}");
    })
    .join()
    .unwrap();
}

/// The counters read through netlink in the namespace count exactly the
/// frames sent: 300 frames of 100 bytes out of A, into B.
#[test]
fn counters_count_the_frames_actually_sent() {
    let ns = Netns::new();
    let frames: Vec<Vec<u8>> = (0..300)
        .map(|i| udp_frame(MAC_A, MAC_B, 1000, i, 100))
        .collect();
    let (a0, b0, a1, b1) = ns.run(|| {
        let a0 = iface::read_counters(&ns.a).unwrap();
        let b0 = iface::read_counters(&ns.b).unwrap();
        let mut tx = AfPacketTx::open(&ns.a, &TxRingConfig::default()).unwrap();
        send_all(&mut tx, &frames, 32, || {});
        drop(tx);
        (
            a0,
            b0,
            iface::read_counters(&ns.a).unwrap(),
            iface::read_counters(&ns.b).unwrap(),
        )
    });
    let (a, b) = (a1.delta(&a0), b1.delta(&b0));
    // veth counts the frame without FCS: 300 x 100 bytes.
    assert_eq!((a.tx_packets, a.tx_bytes), (300, 30_000), "{a:?}");
    assert_eq!((b.rx_packets, b.rx_bytes), (300, 30_000), "{b:?}");
    assert_eq!((a.rx_packets, b.tx_packets), (0, 0), "{a:?} {b:?}");
    assert_eq!((a.tx_errors, a.tx_dropped, b.rx_errors), (0, 0, 0));
}

#[test]
fn ethtool_statistics_and_the_root_qdisc_of_a_veth() {
    let ns = Netns::new();
    ns.run(|| {
        let b = iface::lookup(&ns.b).unwrap();
        // veth's `ethtool -S` starts with its peer's index, then per-queue
        // counters, none of which moved on a pair that sent nothing.
        let stats = ethtool::stats(&ns.a).unwrap().expect("veth has statistics");
        assert_eq!(stats[0], ("peer_ifindex".to_string(), u64::from(b.index)));
        assert!(stats.iter().skip(1).all(|(_, v)| *v == 0), "{stats:?}");
        let drops = ethtool::drop_stats(&ns.a).unwrap();
        assert!(
            drops.iter().any(|(n, _)| n == "rx_queue_0_drops"),
            "{drops:?}"
        );
        assert!(drops.iter().all(|(n, _)| n.contains("drop")), "{drops:?}");
        // A fresh veth is noqueue: no root qdisc to read.
        assert_eq!(qdisc::read_roots(&[&ns.a]).unwrap(), [None]);
    });
    let out = Command::new("tc")
        .args([
            "-n", &ns.name, "qdisc", "add", "dev", &ns.a, "root", "pfifo", "limit", "5",
        ])
        .output()
        .expect("running tc (apt-get install iproute2)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let roots = ns.run(|| qdisc::read_roots(&[&ns.a, &ns.b]).unwrap());
    assert_eq!(
        roots,
        [
            Some(qdisc::QdiscCounters {
                kind: "pfifo".into(),
                drops: 0,
                overlimits: 0
            }),
            None
        ]
    );
}
