//! RFC 4814 pseudorandom ports as `FrameGen` writes them, decoded and
//! checked by an independent parser (etherparse): every port inside RFC
//! 4814's ranges, both checksums recomputed from scratch, streams that are
//! address pairs with consecutive sequence numbers, repeatable seeds and
//! an even spread.

use std::collections::HashMap;
use std::net::IpAddr;

use etherparse::{NetHeaders, PacketHeaders, PayloadSlice, TransportHeader};
use pktlab_wire::range::Family;
use pktlab_wire::{FlowOrder, FlowSet, FrameGen, FrameSpec, PortMode, TestPayload};

fn spec(flows: FlowSet, vlan: Option<u16>, sizes: &str, seed: u64) -> FrameSpec {
    FrameSpec {
        src_mac: "02:70:6b:74:00:0a".parse().unwrap(),
        dst_mac: "02:70:6b:74:00:0b".parse().unwrap(),
        vlan,
        ttl: 64,
        flows,
        order: FlowOrder::Sequential,
        sizes: sizes.parse().unwrap(),
        ports: PortMode::Rfc4814 { seed },
    }
}

fn ip(bytes: &[u8]) -> IpAddr {
    match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).unwrap()),
        _ => IpAddr::from(<[u8; 16]>::try_from(bytes).unwrap()),
    }
}

/// One frame as etherparse reads it: (source, destination, source port,
/// destination port, test payload), after checking both checksums.
fn decode(frame: &[u8], what: &str) -> (IpAddr, IpAddr, u16, u16, TestPayload) {
    let h = PacketHeaders::from_ethernet_slice(frame).unwrap_or_else(|e| panic!("{what}: {e}"));
    let TransportHeader::Udp(udp) = h.transport.clone().unwrap() else {
        panic!("{what}: not UDP")
    };
    let PayloadSlice::Udp(payload) = h.payload else {
        panic!("{what}: no UDP payload")
    };
    let (src, dst) = match h.net.clone().unwrap() {
        NetHeaders::Ipv4(h, _) => {
            assert_eq!(h.header_checksum, h.calc_header_checksum(), "{what}: IPv4");
            let want = udp.calc_checksum_ipv4(&h, payload).unwrap();
            assert_eq!(udp.checksum, want, "{what}: UDP checksum");
            (ip(&h.source), ip(&h.destination))
        }
        NetHeaders::Ipv6(h, _) => {
            let want = udp.calc_checksum_ipv6(&h, payload).unwrap();
            assert_eq!(udp.checksum, want, "{what}: UDP checksum");
            (ip(&h.source), ip(&h.destination))
        }
        NetHeaders::Arp(_) => panic!("{what}: ARP"),
    };
    assert_ne!(udp.checksum, 0, "{what}");
    let payload = TestPayload::parse(payload).unwrap_or_else(|| panic!("{what}: no payload"));
    (src, dst, udp.source_port, udp.destination_port, payload)
}

/// The ports of `frames` frames of thread `t` of `n`.
fn ports(spec: &FrameSpec, t: u32, n: u32, frames: usize) -> Vec<(u16, u16)> {
    let mut g = FrameGen::new(spec, t, n);
    let mut buf = vec![0u8; g.max_len()];
    (0..frames)
        .map(|i| {
            let len = g.write_next(&mut buf, 0, 0);
            let (_, _, sport, dport, _) = decode(&buf[..len], &format!("frame {i}"));
            (sport, dport)
        })
        .collect()
}

/// The first ports of seed 1, threads 0 and 1, and of seed 7, computed by
/// a separate Python rewrite of SplitMix64 (Sebastiano Vigna's
/// splitmix64.c) and the multiply-shift documented in
/// crates/wire/src/rfc4814.rs.
#[test]
fn first_ports_match_an_independent_rewrite() {
    let s = spec(FlowSet::lab(Family::Inet4), None, "64", 1);
    let want = [(24776, 22315), (61895, 11794), (3943, 9695), (51178, 28262)];
    assert_eq!(ports(&s, 0, 2, 4), want);
    let want = [(31148, 37365), (3238, 25669), (3989, 4729), (37385, 47761)];
    assert_eq!(ports(&s, 1, 2, 4), want);
    let s = spec(FlowSet::lab(Family::Inet6), None, "80", 7);
    assert_eq!(ports(&s, 0, 1, 2), [(47569, 24321), (42937, 9899)]);
}

#[test]
fn every_frame_in_range_with_valid_checksums_and_per_pair_sequences() {
    let cases = [
        ("ipv4 lab 64", FlowSet::lab(Family::Inet4), None, "64", 1),
        (
            "ipv4 vlan imix",
            FlowSet::lab(Family::Inet4),
            Some(7),
            "imix",
            3,
        ),
        ("ipv6 lab 80", FlowSet::lab(Family::Inet6), None, "80", 2),
        (
            "ipv6 vlan mix",
            FlowSet::lab(Family::Inet6),
            Some(4094),
            "84:7,594:4,1518:1",
            2,
        ),
    ];
    for (name, flows, vlan, sizes, nthreads) in cases {
        // The lab's ranges: 20 source × 100 destination addresses, one port each.
        assert_eq!(flows.count(), 2000, "{name}");
        let s = spec(flows.clone(), vlan, sizes, 42);
        let mut owner: HashMap<u32, u32> = HashMap::new();
        for t in 0..nthreads {
            let mut g = FrameGen::new(&s, t, nthreads);
            let mut buf = vec![0u8; g.max_len()];
            let mut prev = 0;
            let mut next_seq: HashMap<u32, u32> = HashMap::new();
            for i in 0..6000 {
                let ts = 1_700_000_000_000_000_000 + i as u64 * 991;
                prev = g.write_next(&mut buf, prev, ts);
                let what = format!("{name} thread {t} frame {i}");
                let (src, dst, sport, dport, p) = decode(&buf[..prev], &what);
                assert!(
                    (1024..=65535).contains(&sport),
                    "{what}: source port {sport}"
                );
                assert!(
                    (1..=49151).contains(&dport),
                    "{what}: destination port {dport}"
                );
                // The stream id names the address pair, whatever the ports.
                let pair = flows.flow(p.stream);
                assert_eq!((src, dst), (pair.src, pair.dst), "{what}");
                let seq = next_seq.entry(p.stream).or_insert(0);
                assert_eq!(p.seq, *seq, "{what}: sequence of stream {}", p.stream);
                *seq += 1;
                assert_eq!(*owner.entry(p.stream).or_insert(t), t, "{what}: shared");
            }
            // Sequential order: each of the thread's pairs in turn, 6000 frames.
            let owned = (2000 - t).div_ceil(nthreads);
            assert_eq!(next_seq.len() as u32, owned, "{name} thread {t}");
            let total: u32 = next_seq.values().sum();
            assert_eq!(total, 6000, "{name}");
        }
        assert_eq!(owner.len(), 2000, "{name}: every address pair");
    }
}

#[test]
fn the_same_seed_repeats_other_threads_and_seeds_differ() {
    let flows = FlowSet::lab(Family::Inet4);
    let a = spec(flows.clone(), None, "64", 5);
    let first = ports(&a, 0, 2, 500);
    assert_eq!(first, ports(&a, 0, 2, 500), "same seed, same thread");
    let other_thread = ports(&a, 1, 2, 500);
    let other_seed = ports(&spec(flows, None, "64", 6), 0, 2, 500);
    // Pseudorandom sequences that differ agree on a frame's port pair by
    // chance only (about 1 in 3 × 10⁹): none of 500 should.
    for other in [&other_thread, &other_seed] {
        let same = first
            .iter()
            .zip(other.iter())
            .filter(|(x, y)| x == y)
            .count();
        assert_eq!(same, 0);
    }
}

/// 100,000 frames into 16 equal buckets of each range. Each bucket holds
/// 1/16 of the range (the destination buckets 3071 or 3072 ports of
/// 49151), so it expects 6250 frames with a standard deviation of
/// √(100000 × 1/16 × 15/16) ≈ 76.5; ±400 is more than 5 of them. Ports
/// that missed part of a range, or crowded, would leave buckets far off.
#[test]
fn ports_spread_evenly_over_both_ranges() {
    let s = spec(FlowSet::lab(Family::Inet4), None, "64", 1);
    let mut g = FrameGen::new(&s, 0, 1);
    let mut buf = vec![0u8; g.max_len()];
    let (mut src, mut dst) = ([0u32; 16], [0u32; 16]);
    for _ in 0..100_000 {
        let len = g.write_next(&mut buf, 0, 0);
        let f = &buf[..len];
        // IPv4 without VLAN: the UDP header starts at 34.
        let sport = u32::from(u16::from_be_bytes([f[34], f[35]]));
        let dport = u32::from(u16::from_be_bytes([f[36], f[37]]));
        src[((sport - 1024) * 16 / 64512) as usize] += 1;
        dst[((dport - 1) * 16 / 49151) as usize] += 1;
    }
    for (name, buckets) in [("source", src), ("destination", dst)] {
        for (i, &n) in buckets.iter().enumerate() {
            assert!(
                (5850..=6650).contains(&n),
                "{name} bucket {i}: {n} frames ({buckets:?})"
            );
        }
    }
}

#[test]
fn port_ranges_are_refused() {
    let flows = FlowSet::new(
        "198.18.10.1:1000-198.18.10.2:1009".parse().unwrap(),
        "198.19.10.1".parse().unwrap(),
    )
    .unwrap();
    let s = spec(flows, None, "64", 1);
    assert_eq!(
        s.validate().unwrap_err().to_string(),
        "the source range '198.18.10.1:1000-198.18.10.2:1009' has 10 ports, but RFC 4814 ports are drawn per frame: give one port or none"
    );
    let flows = FlowSet::new(
        "198.18.10.1".parse().unwrap(),
        "198.19.10.1:1-198.19.10.1:2".parse().unwrap(),
    )
    .unwrap();
    let e = spec(flows, None, "64", 1).validate().unwrap_err();
    assert!(
        e.to_string()
            .starts_with("the destination range '198.19.10.1:1-198.19.10.1:2' has 2 ports"),
        "{e}"
    );
}
