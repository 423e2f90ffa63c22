//! Every frame `FrameGen` writes, decoded and checked by an independent
//! parser (etherparse): addresses, ports, lengths, TTL, VLAN, and the IPv4
//! header and UDP checksums recomputed from scratch.

use std::collections::HashMap;
use std::net::IpAddr;

use etherparse::{LinkExtHeader, NetHeaders, PacketHeaders, PayloadSlice, TransportHeader};
use pktlab_wire::frame::fill_byte;
use pktlab_wire::range::Family;
use pktlab_wire::{
    parse_test_frame, verify_checksums, FlowCursor, FlowOrder, FlowSet, FrameGen, FrameSpec,
    MacAddr, SizeMix, TestPayload,
};

struct Case {
    name: &'static str,
    flows: FlowSet,
    vlan: Option<u16>,
    ttl: u8,
    sizes: &'static str,
    order: FlowOrder,
    nthreads: u32,
}

fn flows(src: &str, dst: &str) -> FlowSet {
    FlowSet::new(src.parse().unwrap(), dst.parse().unwrap()).unwrap()
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "ipv4 lab 64",
            flows: FlowSet::lab(Family::Inet4),
            vlan: None,
            ttl: 64,
            sizes: "64",
            order: FlowOrder::Sequential,
            nthreads: 1,
        },
        Case {
            name: "ipv4 vlan imix 3 threads",
            flows: FlowSet::lab(Family::Inet4),
            vlan: Some(100),
            ttl: 1,
            sizes: "imix",
            order: FlowOrder::Sequential,
            nthreads: 3,
        },
        Case {
            name: "ipv4 many ports, random, jumbo",
            flows: flows(
                "10.0.0.1:1000-10.0.0.4:1009",
                "10.1.255.250:5000-10.2.0.5:5002",
            ),
            vlan: None,
            ttl: 255,
            sizes: "64:5,1024:2,9018:1",
            order: FlowOrder::Random { seed: 2026 },
            nthreads: 2,
        },
        Case {
            name: "ipv6 lab 80",
            flows: FlowSet::lab(Family::Inet6),
            vlan: None,
            ttl: 64,
            sizes: "80",
            order: FlowOrder::Sequential,
            nthreads: 1,
        },
        Case {
            name: "ipv6 vlan mix",
            flows: flows(
                "[2001:2::ffff:fffe]:7-[2001:2::1:0:2]:9",
                "[2001:2:0:8000::1]:65534-[2001:2:0:8000::3]:65535",
            ),
            vlan: Some(4094),
            ttl: 17,
            sizes: "84:7,594:4,1518:1",
            order: FlowOrder::Random { seed: 5 },
            nthreads: 2,
        },
        Case {
            name: "ipv6 genome",
            flows: FlowSet::lab(Family::Inet6),
            vlan: None,
            ttl: 64,
            sizes: "bcdefg",
            order: FlowOrder::Sequential,
            nthreads: 1,
        },
    ]
}

fn ip(bytes: &[u8]) -> IpAddr {
    match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).unwrap()),
        _ => IpAddr::from(<[u8; 16]>::try_from(bytes).unwrap()),
    }
}

#[test]
fn every_frame_decodes_and_checks_with_etherparse() {
    let src_mac: MacAddr = "02:70:6b:74:00:0a".parse().unwrap();
    let dst_mac: MacAddr = "02:70:6b:74:00:0b".parse().unwrap();
    for case in cases() {
        let sizes: SizeMix = case.sizes.parse().unwrap();
        let spec = FrameSpec {
            src_mac,
            dst_mac,
            vlan: case.vlan,
            ttl: case.ttl,
            flows: case.flows.clone(),
            order: case.order,
            sizes: sizes.clone(),
            ports: pktlab_wire::PortMode::Ranges,
        };
        let count = case.flows.count();
        let mut owner: HashMap<u32, u32> = HashMap::new();
        for t in 0..case.nthreads {
            let mut generator = FrameGen::new(&spec, t, case.nthreads);
            let mut cursor = FlowCursor::new(&case.flows, case.order, t, case.nthreads);
            let frames = (2 * generator.frames_per_cycle()).min(9000) as usize;
            let mut buf = vec![0u8; generator.max_len()];
            let mut prev = 0;
            let mut next_seq: HashMap<u32, u32> = HashMap::new();
            let mut size_counts: HashMap<usize, usize> = HashMap::new();
            for i in 0..frames {
                let ts = 1_700_000_000_000_000_000 + i as u64 * 997;
                let len = generator.write_next(&mut buf, prev, ts);
                prev = len;
                let frame = &buf[..len];
                let what = format!("{} thread {t} frame {i}", case.name);
                assert_eq!(
                    len,
                    usize::from(sizes.pattern()[i % sizes.pattern().len()]) - 4,
                    "{what}"
                );
                *size_counts.entry(len + 4).or_default() += 1;

                let headers = PacketHeaders::from_ethernet_slice(frame)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let eth = headers.link.clone().unwrap().ethernet2().unwrap();
                assert_eq!(
                    (MacAddr(eth.source), MacAddr(eth.destination)),
                    (src_mac, dst_mac),
                    "{what}"
                );
                match case.vlan {
                    Some(vid) => {
                        assert_eq!(headers.link_exts.len(), 1, "{what}");
                        let LinkExtHeader::Vlan(tag) = &headers.link_exts[0] else {
                            panic!("{what}: no VLAN")
                        };
                        assert_eq!((tag.vlan_id.value(), tag.pcp.value()), (vid, 0), "{what}");
                    }
                    None => assert!(headers.link_exts.is_empty(), "{what}"),
                }
                let l3 = if case.vlan.is_some() { 18 } else { 14 };

                let index = cursor.next();
                let want = case.flows.flow(index);
                let TransportHeader::Udp(udp) = headers.transport.clone().unwrap() else {
                    panic!("{what}: not UDP")
                };
                let PayloadSlice::Udp(payload) = headers.payload else {
                    panic!("{what}: no UDP payload")
                };
                match headers.net.clone().unwrap() {
                    NetHeaders::Ipv4(h, ext) => {
                        assert!(ext.is_empty());
                        assert_eq!(
                            (ip(&h.source), ip(&h.destination)),
                            (want.src, want.dst),
                            "{what}"
                        );
                        assert_eq!(h.time_to_live, case.ttl, "{what}");
                        assert_eq!(usize::from(h.total_len), len - l3, "{what}");
                        assert!(
                            h.dont_fragment && !h.more_fragments && h.identification == 0,
                            "{what}"
                        );
                        assert_eq!(h.fragment_offset.value(), 0);
                        assert_eq!(
                            h.header_checksum,
                            h.calc_header_checksum(),
                            "{what}: IPv4 checksum"
                        );
                        assert_eq!(
                            udp.checksum,
                            udp.calc_checksum_ipv4(&h, payload).unwrap(),
                            "{what}: UDP checksum"
                        );
                    }
                    NetHeaders::Ipv6(h, ext) => {
                        assert!(ext.is_empty());
                        assert_eq!(
                            (ip(&h.source), ip(&h.destination)),
                            (want.src, want.dst),
                            "{what}"
                        );
                        assert_eq!(h.hop_limit, case.ttl, "{what}");
                        assert_eq!((h.traffic_class, h.flow_label.value()), (0, 0), "{what}");
                        assert_eq!(usize::from(h.payload_length), len - l3 - 40, "{what}");
                        assert_eq!(
                            udp.checksum,
                            udp.calc_checksum_ipv6(&h, payload).unwrap(),
                            "{what}: UDP checksum"
                        );
                    }
                    NetHeaders::Arp(_) => panic!("{what}: ARP"),
                }
                assert_ne!(udp.checksum, 0, "{what}");
                assert_eq!(
                    (udp.source_port, udp.destination_port),
                    (want.sport, want.dport),
                    "{what}"
                );
                assert_eq!(usize::from(udp.length), 8 + payload.len(), "{what}");

                let seq = next_seq.entry(index).or_insert(0);
                let expected = TestPayload::new(index, *seq, ts);
                assert_eq!(TestPayload::parse(payload), Some(expected), "{what}");
                *seq += 1;
                let payload_start = len - payload.len();
                for (k, &b) in payload.iter().enumerate().skip(14) {
                    assert_eq!(b, fill_byte(payload_start + k), "{what}: fill at {k}");
                }

                assert_eq!(verify_checksums(frame), Ok(()), "{what}");
                let parsed = parse_test_frame(frame).unwrap();
                assert_eq!(parsed.payload, expected);
                assert_eq!(parsed.key.to_flow(), want);
                assert_eq!(parsed.frame_len, len);
            }
            // Exact mix: frames is a whole number of size cycles.
            if frames.is_multiple_of(sizes.pattern().len()) {
                let cycles = frames / sizes.pattern().len();
                for size in sizes.distinct() {
                    let per_cycle = sizes.pattern().iter().filter(|&&s| s == size).count();
                    assert_eq!(
                        size_counts[&usize::from(size)],
                        per_cycle * cycles,
                        "{} size {size}",
                        case.name
                    );
                }
            }
            // A thread sends exactly its own flows, each as often as the others (±1).
            assert!(frames >= generator.flows_owned() as usize);
            assert_eq!(
                next_seq.len() as u32,
                generator.flows_owned(),
                "{}",
                case.name
            );
            let (lo, hi) = (
                next_seq.values().min().unwrap(),
                next_seq.values().max().unwrap(),
            );
            assert!(hi - lo <= 1, "{}: {lo}..{hi} frames per flow", case.name);
            for flow in next_seq.keys() {
                assert_eq!(
                    *owner.entry(*flow).or_insert(t),
                    t,
                    "{}: flow {flow} shared",
                    case.name
                );
            }
        }
        // Together the threads sent every flow.
        assert_eq!(owner.len() as u32, count, "{}", case.name);
    }
}

#[test]
fn threads_never_share_a_flow() {
    let spec = FrameSpec {
        src_mac: "02:00:00:00:00:01".parse().unwrap(),
        dst_mac: "02:00:00:00:00:02".parse().unwrap(),
        vlan: None,
        ttl: 64,
        flows: FlowSet::lab(Family::Inet4),
        order: FlowOrder::Random { seed: 3 },
        sizes: "64".parse().unwrap(),
        ports: pktlab_wire::PortMode::Ranges,
    };
    let mut owner: HashMap<u32, u32> = HashMap::new();
    for t in 0..3 {
        let mut generator = FrameGen::new(&spec, t, 3);
        let mut buf = vec![0u8; generator.max_len()];
        let mut seqs: HashMap<u32, u32> = HashMap::new();
        for _ in 0..(2 * generator.flows_owned()) {
            let len = generator.write_next(&mut buf, 0, 0);
            let parsed = parse_test_frame(&buf[..len]).unwrap();
            let stream = parsed.payload.stream;
            assert_eq!(
                *owner.entry(stream).or_insert(t),
                t,
                "flow {stream} sent by two threads"
            );
            let seq = seqs.entry(stream).or_insert(0);
            assert_eq!(parsed.payload.seq, *seq);
            *seq += 1;
        }
        assert!(
            seqs.values().all(|&n| n == 2),
            "every owned flow twice in two cycles"
        );
    }
    assert_eq!(owner.len(), 2000);
}
