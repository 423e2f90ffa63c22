//! The XDP live-frame generator at the io level (root needed): its frames
//! byte for byte against the wire crate's FrameGen, starting from dirty
//! pages; every frame delivered to a veth peer and accounted for; the
//! delivery checks; nothing left behind.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::Netns;
use pktlab_io::afpacket::{AfPacketRx, RxRingConfig};
use pktlab_io::port::RxPort;
use pktlab_io::xdpgen::{builtin_object, Program, RunEnd, XdpGen, XdpGenConfig};
use pktlab_wire::{
    parse_test_frame, verify_checksums, Family, FlowOrder, FlowSet, FrameGen, FrameSpec, MacAddr,
    PortMode, TestPayload,
};

fn pin_thread(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
}

fn ncpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn spec(family: Family, sizes: &str, vlan: Option<u16>, order: FlowOrder) -> FrameSpec {
    FrameSpec {
        src_mac: MacAddr(common::MAC_A),
        dst_mac: MacAddr(common::MAC_B),
        vlan,
        ttl: 64,
        flows: FlowSet::lab(family),
        order,
        sizes: sizes.parse().unwrap(),
        ports: PortMode::Ranges,
    }
}

/// A namespace whose veth peer `b` has GRO on, so `a` takes redirected frames.
fn ready_ns() -> Netns {
    let ns = Netns::new();
    common_ethtool(&ns, &["-K", &ns.b, "gro", "on"]);
    ns
}

/// A second veth pair `qa<pid>` <-> `qb<pid>` in `ns` with two queues each,
/// up, GRO on the peer: for two generating threads.
fn two_queue_pair(ns: &Netns) -> (String, String) {
    let pid = std::process::id();
    let (a, b) = (format!("qa{pid}"), format!("qb{pid}"));
    ns.ip(&[
        "link",
        "add",
        &a,
        "numtxqueues",
        "2",
        "numrxqueues",
        "2",
        "type",
        "veth",
        "peer",
        "name",
        &b,
        "numtxqueues",
        "2",
        "numrxqueues",
        "2",
    ]);
    ns.ip(&["link", "set", &a, "up"]);
    ns.ip(&["link", "set", &b, "up"]);
    common_ethtool(ns, &["-K", &b, "gro", "on"]);
    (a, b)
}

fn common_ethtool(ns: &Netns, args: &[&str]) {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.name, "ethtool"])
        .args(args)
        .output()
        .expect("ethtool (apt-get install ethtool)");
    assert!(out.status.success(), "ethtool {args:?}: {:?}", out);
}

/// What a recycled page may hold: the previous frame (any size's fields),
/// rewritten by a forwarding DUT (its MACs, TTL 63), every header byte
/// wrong, the fill untouched (nothing on the way writes there).
fn dirty(template: &[u8], previous: &[u8], l3: usize, hdr_len: usize) -> Vec<u8> {
    let mut d = template.to_vec();
    let n = previous.len().min(d.len());
    d[..n].copy_from_slice(&previous[..n]);
    d[..12].copy_from_slice(&[2, 0x70, 0x6b, 0, 1, 4, 2, 0x70, 0x6b, 0, 1, 3]);
    d[l3 + 8] = 63;
    for b in d[l3..hdr_len].iter_mut() {
        *b ^= 0x5a;
    }
    d
}

/// The program's frames equal FrameGen's for the same spec, thread and
/// thread count, timestamp apart, whatever the page held before.
#[test]
fn frames_are_byte_exact_against_framegen_from_dirty_pages() {
    let ns = ready_ns();
    let (qa, _) = two_queue_pair(&ns);
    let ranges = PortMode::Ranges;
    let cases = [
        (
            Family::Inet4,
            "64",
            None,
            FlowOrder::Sequential,
            1u32,
            5000u32,
            ranges,
        ),
        (
            Family::Inet4,
            "imix",
            Some(7),
            FlowOrder::Sequential,
            2,
            3000,
            ranges,
        ),
        (
            Family::Inet6,
            "80",
            None,
            FlowOrder::Sequential,
            1,
            3000,
            ranges,
        ),
        (
            Family::Inet6,
            "84:7,594:4,1518:1",
            Some(4094),
            FlowOrder::Random { seed: 9 },
            2,
            3000,
            ranges,
        ),
        (
            Family::Inet4,
            "64,128",
            None,
            FlowOrder::Random { seed: 1 },
            1,
            4100,
            ranges,
        ),
        // RFC 4814 ports: the program draws the same ones as FrameGen.
        (
            Family::Inet4,
            "64",
            None,
            FlowOrder::Sequential,
            1,
            5000,
            PortMode::Rfc4814 { seed: 3 },
        ),
        (
            Family::Inet6,
            "84:7,594:4,1518:1",
            Some(9),
            FlowOrder::Random { seed: 4 },
            2,
            3000,
            PortMode::Rfc4814 { seed: 11 },
        ),
    ];
    let cpus = ncpus();
    for (family, sizes, vlan, order, threads, frames, ports) in cases {
        let mut s = spec(family, sizes, vlan, order);
        s.ports = ports;
        if family == Family::Inet6 && vlan.is_none() && sizes == "80" {
            // Ports and IPv6 addresses whose odometer digits carry across
            // 32-bit words.
            s.flows = FlowSet::new(
                "[2001:2::ffff:fffe]:1000-[2001:2::1:0:1]:1002"
                    .parse()
                    .unwrap(),
                "[2001:2:0:8000::1]:7-[2001:2:0:8000::3]:8".parse().unwrap(),
            )
            .unwrap();
        }
        let l3 = 14 + if vlan.is_some() { 4 } else { 0 };
        let hdr_len = l3 + if family == Family::Inet6 { 40 } else { 20 } + 8 + 14;
        for thread in 0..threads {
            // Thread t's state lives on CPU cpus_list[t]; run it from there.
            // Each thread needs a CPU of its own: fail, rather than skip
            // quietly, on a machine with fewer CPUs than the case's threads.
            assert!(
                threads as usize <= cpus,
                "{sizes}: {threads} threads need {threads} CPUs, this machine has {cpus}"
            );
            let cpus_list: Vec<usize> = (0..threads as usize).collect();
            let cfg = XdpGenConfig {
                cpus: cpus_list.clone(),
                ..Default::default()
            };
            ns.run(|| {
                pin_thread(cpus_list[thread as usize]);
                let iface = if threads == 1 { &ns.a } else { &qa };
                let g = XdpGen::open(&s, iface, &cfg).unwrap();
                let mut want_gen = FrameGen::try_new(&s, thread, threads).unwrap();
                let template = g.template().to_vec();
                let mut page = dirty(&template, &[], l3, hdr_len);
                for i in 0..frames {
                    let (verdict, got) = g.build_one(&page).unwrap();
                    assert_eq!(verdict, 4, "frame {i}: XDP_REDIRECT");
                    let l4 = hdr_len - 22;
                    let ts = TestPayload::parse(&got[l4 + 8..]).unwrap().ts40;
                    let mut want = vec![0u8; want_gen.max_len()];
                    let n = want_gen.write_next(&mut want, 0, ts);
                    if got != want[..n] {
                        let at = got.iter().zip(&want).position(|(a, b)| a != b);
                        panic!(
                            "{sizes} {order:?} {ports:?} thread {thread}/{threads} frame {i}: {} vs {n} bytes, first difference at {at:?}\n got  {:02x?}\n want {:02x?}",
                            got.len(),
                            &got[..got.len().min(96)],
                            &want[..n.min(96)]
                        );
                    }
                    page = dirty(&template, &got, l3, hdr_len);
                }
                let c = g.counters().unwrap();
                assert_eq!(c[thread as usize].frames, u64::from(frames));
                assert_eq!(c[thread as usize].aborted, 0);
            });
        }
    }
}

/// Drains `rx` until `want` test frames arrived or nothing came for a while.
fn receive(rx: &mut AfPacketRx, want: u64) -> HashMap<u32, Vec<u32>> {
    let mut streams: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut got = 0u64;
    let mut last = Instant::now();
    while got < want && last.elapsed() < Duration::from_secs(2) {
        let n = rx
            .recv_batch(Duration::from_millis(50), |f| {
                let t = parse_test_frame(f.data).expect("a test frame");
                verify_checksums(f.data).expect("good checksums");
                streams
                    .entry(t.payload.stream)
                    .or_default()
                    .push(t.payload.seq);
                got += 1;
            })
            .unwrap();
        if n > 0 {
            last = Instant::now();
        }
    }
    streams
}

/// Every frame reaches the peer once, in per-stream order; the counters
/// and the tracepoint accounting agree.
#[test]
fn every_frame_reaches_the_veth_peer_and_is_accounted_for() {
    let ns = ready_ns();
    let s = spec(Family::Inet4, "64", None, FlowOrder::Sequential);
    let total = 200_000u64;
    ns.run(|| {
        let mut rx = AfPacketRx::open(&ns.b, &RxRingConfig::default(), None).unwrap();
        pin_thread(0);
        let cfg = XdpGenConfig::default();
        let g = XdpGen::open(&s, &ns.a, &cfg).unwrap();
        assert_eq!(g.backend(), "xdp (live frames)");
        let mut sent = 0;
        let mut streams = HashMap::new();
        while sent < total {
            // Small chunks, received in between: the socket's ring never fills.
            assert_eq!(
                g.run(4096.min((total - sent) as u32)).unwrap(),
                RunEnd::Done
            );
            sent += 4096.min(total - sent);
            for (k, v) in receive(&mut rx, 4096.min(total)) {
                streams.entry(k).or_insert_with(Vec::new).extend(v);
            }
        }
        for (k, v) in receive(&mut rx, 1) {
            streams.entry(k).or_insert_with(Vec::new).extend(v);
        }
        assert_eq!(rx.drops().unwrap(), 0);
        let received: usize = streams.values().map(Vec::len).sum();
        assert_eq!(received as u64, total);
        assert_eq!(streams.len(), 2000);
        for (stream, seqs) in &streams {
            let want: Vec<u32> = (0..seqs.len() as u32).collect();
            assert_eq!(seqs, &want, "stream {stream}");
        }
        let c = g.counters().unwrap();
        assert_eq!(
            (c[0].frames, c[0].bytes, c[0].aborted, c[0].pending),
            (total, total * 64, 0, 0)
        );
        let r = g.tx_report().unwrap();
        assert_eq!((r.xmit_sent, r.lost(), r.last_err), (total, 0, 0));
        assert!(r.xmit_calls >= total / 16, "{r:?}");
    });
}

/// Without GRO or an XDP program on the peer, veth takes no redirected
/// frames: refused before anything is sent, naming the fix.
#[test]
fn a_veth_peer_without_napi_is_refused() {
    let ns = Netns::new();
    let s = spec(Family::Inet4, "64", None, FlowOrder::Sequential);
    ns.run(|| {
        let e = XdpGen::open(&s, &ns.a, &XdpGenConfig::default()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{} does not accept XDP-redirected frames (xdp-features 0x", ns.a)),
            "{msg}"
        );
        assert!(
            msg.ends_with(&format!(
                "lack ndo-xmit): turn GRO on on its veth peer {}: ethtool -K {} gro on, or attach an XDP program there",
                ns.b, ns.b
            )),
            "{msg}"
        );
        assert!(!e.is_usage());
    });
}

/// The other checks, each with one line: the veth's batch limit, threaded
/// NAPI on the peer, too few peer queues, jumbo frames, an interface down.
#[test]
fn delivery_checks() {
    let ns = ready_ns();
    let s = spec(Family::Inet4, "64", None, FlowOrder::Sequential);
    ns.run(|| {
        let batch = XdpGenConfig {
            batch: 192,
            ..Default::default()
        };
        let e = XdpGen::open(&s, &ns.a, &batch).unwrap_err();
        assert!(e.to_string().starts_with("batch 192 is too large for veth"), "{e}");
        assert!(e.is_usage());
        // Runs on a machine of one CPU too: the peer's queues are checked
        // before the CPUs' existence, so CPU 1 need not exist.
        let two = XdpGenConfig {
            cpus: vec![0, 1],
            ..Default::default()
        };
        let e = XdpGen::open(&s, &ns.a, &two).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "-p 2 needs 2 receive queues on {}'s veth peer {}, which has 1: use -p 1, or veths with 2 queues (pktlab lab up --queues 2)",
                ns.a, ns.b
            )
        );
        let same = XdpGenConfig {
            cpus: vec![0, 0],
            ..Default::default()
        };
        let e = XdpGen::open(&s, &ns.a, &same).unwrap_err();
        assert!(e.to_string().contains("share CPU 0"), "{e}");
        let jumbo = spec(Family::Inet4, "4000", None, FlowOrder::Sequential);
        let e = XdpGen::open(&jumbo, &ns.a, &XdpGenConfig::default()).unwrap_err();
        assert!(e.to_string().starts_with("frames of 4000 bytes are too large for XDP live frames"), "{e}");
    });
    ns.ip(&["link", "set", &ns.b, "mtu", "1000"]);
    ns.run(|| {
        let big = spec(Family::Inet4, "1518", None, FlowOrder::Sequential);
        let e = XdpGen::open(&big, &ns.a, &XdpGenConfig::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "frames of 1518 bytes do not fit the MTU 1000 of {}'s veth peer {}: use frames of at most 1018 bytes or raise its MTU",
                ns.a, ns.b
            )
        );
    });
    let threaded = format!("echo 1 > /sys/class/net/{}/threaded", ns.b);
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.name, "sh", "-c", &threaded])
        .status()
        .unwrap();
    assert!(out.success());
    ns.run(|| {
        let e = XdpGen::open(&s, &ns.a, &XdpGenConfig::default()).unwrap_err();
        assert!(e.to_string().contains("polls in threaded NAPI mode"), "{e}");
        assert!(!e.is_usage());
    });
    ns.ip(&["link", "set", &ns.a, "down"]);
    ns.run(|| {
        let e = XdpGen::open(&s, &ns.a, &XdpGenConfig::default()).unwrap_err();
        assert_eq!(e.to_string(), format!("interface {} is down", ns.a));
    });
}

/// The largest frame live frames take is what the checks allow.
#[test]
fn the_live_frame_size_limit_is_the_kernels() {
    let ns = ready_ns();
    ns.ip(&["link", "set", &ns.a, "mtu", "9000"]);
    ns.ip(&["link", "set", &ns.b, "mtu", "9000"]);
    let max = pktlab_io::xdpgen::delivery::MAX_LIVE_FRAME_LEN + 4;
    ns.run(|| {
        pin_thread(0);
        let ok = spec(Family::Inet4, &max.to_string(), None, FlowOrder::Sequential);
        let g = XdpGen::open(&ok, &ns.a, &XdpGenConfig::default()).unwrap();
        assert_eq!(g.run(64).unwrap(), RunEnd::Done);
        assert_eq!(g.tx_report().unwrap().xmit_sent, 64);
        let over = spec(
            Family::Inet4,
            &(max + 1).to_string(),
            None,
            FlowOrder::Sequential,
        );
        let e = XdpGen::open(&over, &ns.a, &XdpGenConfig::default()).unwrap_err();
        assert!(
            e.to_string().contains("too large for XDP live frames"),
            "{e}"
        );
    });
}

/// The probe program redirects the template as it is.
#[test]
fn the_probe_sends_the_template() {
    let ns = ready_ns();
    let s = spec(Family::Inet4, "64", None, FlowOrder::Sequential);
    ns.run(|| {
        pin_thread(0);
        let cfg = XdpGenConfig {
            program: Program::Probe,
            ..Default::default()
        };
        let g = XdpGen::open(&s, &ns.a, &cfg).unwrap();
        let before = pktlab_io::iface::read_counters(&ns.b).unwrap();
        assert_eq!(g.run(1000).unwrap(), RunEnd::Done);
        let after = pktlab_io::iface::read_counters(&ns.b).unwrap();
        assert_eq!(after.delta(&before).rx_packets, 1000);
        // It keeps no state: nothing counted, nothing accounted.
        assert_eq!(g.counters().unwrap()[0].frames, 0);
        assert_eq!(g.tx_report().unwrap().xmit_sent, 0);
    });
}

/// The programs, their links and the anchor go with the generator.
#[test]
fn nothing_is_left_after_drop() {
    let ns = ready_ns();
    let s = spec(Family::Inet4, "64", None, FlowOrder::Sequential);
    // Asked one by one: listing every program races with other tests'.
    let loaded = |id: &u32| {
        std::process::Command::new("bpftool")
            .args(["prog", "show", "id", &id.to_string()])
            .output()
            .expect("bpftool (apt-get install bpftool)")
            .status
            .success()
    };
    let ids = ns.run(|| {
        pin_thread(0);
        let g = XdpGen::open(&s, &ns.a, &XdpGenConfig::default()).unwrap();
        g.run(100).unwrap();
        let ids = g.program_ids().unwrap();
        assert_eq!(ids.len(), 3);
        assert!(ids.iter().all(loaded), "{ids:?}");
        ids
    });
    // Programs are freed after an RCU grace period.
    let deadline = Instant::now() + Duration::from_secs(5);
    while ids.iter().any(loaded) {
        assert!(Instant::now() < deadline, "still loaded: {ids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn embedded_object_is_the_committed_file() {
    let file = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/xdpgen.o")).unwrap();
    assert_eq!(builtin_object(), &file[..]);
}
