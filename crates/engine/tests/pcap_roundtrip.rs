//! Generator → pcap file → receiver, with frames dropped, duplicated,
//! reordered and added on purpose between the two: the receiver's per
//! stream accounting must find exactly what was done. No root needed.

use std::path::{Path, PathBuf};

use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pktlab_engine::backend::IoSpec;
use pktlab_engine::gen::{run_gen, GenConfig};
use pktlab_engine::recv::{run_recv, RecvConfig};
use pktlab_engine::rx::{RxPlan, RxSummary};
use pktlab_engine::tx::TxPlan;
use pktlab_engine::StopSignal;
use pktlab_wire::flow::{FlowOrder, FlowSet};
use pktlab_wire::frame::FrameSpec;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::range::Family;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("pktlab-engine-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spec(family: Family, sizes: &str) -> FrameSpec {
    FrameSpec {
        src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
        vlan: None,
        ttl: 64,
        flows: FlowSet::lab(family),
        order: FlowOrder::Sequential,
        sizes: sizes.parse().unwrap(),
        ports: pktlab_wire::PortMode::Ranges,
    }
}

fn generate(path: &Path, frames: FrameSpec, count: u64) {
    let cfg = GenConfig {
        io: IoSpec::Pcap(path.to_path_buf()),
        iface: None,
        frames,
        plan: TxPlan {
            count: Some(count),
            ..TxPlan::default()
        },
        xdp: Default::default(),
    };
    let s = run_gen(&cfg, &StopSignal::new(), |_| {}).unwrap();
    assert_eq!(s.packets, count);
}

fn receive(path: &Path) -> RxSummary {
    let cfg = RecvConfig {
        io: IoSpec::Pcap(path.to_path_buf()),
        iface: None,
        plan: RxPlan::default(),
        xdp: Default::default(),
        xdp_recv: Default::default(),
    };
    run_recv(&cfg, &StopSignal::new(), |_| {}).unwrap()
}

fn read_all(path: &Path) -> Vec<PcapPacket<'static>> {
    let mut r = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().into_owned());
    }
    out
}

fn write_all(path: &Path, packets: &[PcapPacket<'_>]) {
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for p in packets {
        w.write_packet(p).unwrap();
    }
}

#[test]
fn clean_run_is_exact() {
    let dir = TempDir::new("clean");
    let path = dir.0.join("clean.pcap");
    generate(&path, spec(Family::Inet4, "64"), 6000);
    let s = receive(&path);
    assert_eq!(s.packets, 6000);
    assert_eq!(s.bytes, 6000 * 64);
    assert_eq!(s.flows, 2000);
    assert_eq!(s.streams, 2000);
    assert_eq!(
        (s.lost, s.out_of_order, s.duplicates, s.foreign),
        (0, 0, 0, 0)
    );
    let lat = s.latency_ns.expect("latency measured");
    assert_eq!(lat.count, 6000);
    assert!(lat.min <= lat.p50 && lat.p50 <= lat.p99 && lat.p99 <= lat.max);
}

#[test]
fn ipv6_and_imix_are_exact() {
    let dir = TempDir::new("v6");
    let path = dir.0.join("v6.pcap");
    // 84:7,594:4,1518:1 repeats every 12 frames; 2400 frames = 200 cycles.
    generate(&path, spec(Family::Inet6, "84:7,594:4,1518:1"), 2400);
    let s = receive(&path);
    assert_eq!(s.packets, 2400);
    assert_eq!(s.bytes, 200 * (7 * 84 + 4 * 594 + 1518));
    assert_eq!(s.flows, 2000);
    assert_eq!(
        (s.lost, s.out_of_order, s.duplicates, s.foreign),
        (0, 0, 0, 0)
    );
}

#[test]
fn damage_is_found_exactly() {
    let dir = TempDir::new("damage");
    let clean = dir.0.join("clean.pcap");
    let damaged = dir.0.join("damaged.pcap");
    generate(&clean, spec(Family::Inet4, "64"), 6000);
    let frames = read_all(&clean);
    // Frame i is flow i % 2000 with sequence number i / 2000.
    let mut out: Vec<PcapPacket<'static>> = Vec::new();
    for (i, p) in frames.iter().enumerate() {
        match i {
            10 | 2500 => continue,                  // lost: flow 10 seq 0, flow 500 seq 1
            3000 => out.push(frames[5000].clone()), // flow 1000: seq 2 before 1
            5000 => out.push(frames[3000].clone()),
            100 => {
                out.push(p.clone()); // flow 100 seq 0, twice
                out.push(p.clone());
            }
            _ => out.push(p.clone()),
        }
    }
    // A foreign frame: an ARP request.
    let mut arp = vec![0xffu8; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
    arp.resize(60, 0);
    out.push(PcapPacket::new_owned(frames[0].timestamp, 60, arp));
    write_all(&damaged, &out);

    let s = receive(&damaged);
    assert_eq!(s.packets, 6000 - 2 + 1 + 1);
    assert_eq!(s.lost, 2);
    assert_eq!(s.out_of_order, 1);
    assert_eq!(s.duplicates, 1);
    assert_eq!(s.foreign, 1);
    assert_eq!(s.flows, 2000);
}

#[test]
fn random_order_covers_every_flow() {
    let dir = TempDir::new("random");
    let path = dir.0.join("random.pcap");
    let mut frames = spec(Family::Inet4, "64");
    frames.order = FlowOrder::Random { seed: 7 };
    generate(&path, frames, 4000);
    let s = receive(&path);
    assert_eq!(s.packets, 4000);
    assert_eq!(s.flows, 2000);
    assert_eq!((s.lost, s.out_of_order, s.duplicates), (0, 0, 0));
}

#[test]
fn count_stops_the_receiver_exactly() {
    let dir = TempDir::new("count");
    let path = dir.0.join("count.pcap");
    generate(&path, spec(Family::Inet4, "64"), 3000);
    let cfg = RecvConfig {
        io: IoSpec::Pcap(path.clone()),
        iface: None,
        plan: RxPlan {
            count: Some(1234),
            ..RxPlan::default()
        },
        xdp: Default::default(),
        xdp_recv: Default::default(),
    };
    let s = run_recv(&cfg, &StopSignal::new(), |_| {}).unwrap();
    assert_eq!(s.packets, 1234);
}
