//! Times the generator and receiver hot paths and prints ns per frame.
//!
//! `cargo bench -p pktlab-wire --bench write_next` (release profile). Each
//! case runs 5 rounds of about 0.5 s and reports the median and the best
//! round. This is a measurement, not a test: it asserts nothing about speed.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pktlab_wire::range::Family;
use pktlab_wire::{parse_test_frame, FlowOrder, FlowSet, FrameGen, FrameSpec};

const ROUNDS: usize = 5;
const ROUND_TIME: Duration = Duration::from_millis(500);
/// Slots in the simulated TX ring (AF_PACKET's default ring is a few hundred frames).
const RING_SLOTS: usize = 512;

fn spec(family: Family, sizes: &str, order: FlowOrder) -> FrameSpec {
    FrameSpec {
        src_mac: "02:00:00:00:00:01".parse().unwrap(),
        dst_mac: "02:00:00:00:00:02".parse().unwrap(),
        vlan: None,
        ttl: 64,
        flows: FlowSet::lab(family),
        order,
        sizes: sizes.parse().unwrap(),
        ports: pktlab_wire::PortMode::Ranges,
    }
}

/// Runs `batch` (which handles `per_batch` frames) for ROUNDS rounds; returns
/// (median, best) nanoseconds per frame.
fn time(per_batch: u64, mut batch: impl FnMut()) -> (f64, f64) {
    for _ in 0..100 {
        batch(); // warm up caches and branch predictors
    }
    let mut results: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            let mut frames = 0u64;
            while start.elapsed() < ROUND_TIME {
                for _ in 0..64 {
                    batch();
                }
                frames += 64 * per_batch;
            }
            start.elapsed().as_nanos() as f64 / frames as f64
        })
        .collect();
    results.sort_by(f64::total_cmp);
    (results[ROUNDS / 2], results[0])
}

fn report(name: &str, (median, best): (f64, f64)) {
    println!(
        "{name:<52} {median:6.2} ns/frame (best {best:6.2})  {:6.1} Mframes/s",
        1e3 / median
    );
}

/// write_next into a ring of reused slots, each patched in place.
fn bench_ring(name: &str, spec: &FrameSpec) {
    let mut generator = FrameGen::new(spec, 0, 1);
    let mut ring = vec![0u8; RING_SLOTS * 2048.max(generator.max_len())];
    let slot_size = ring.len() / RING_SLOTS;
    let mut prev = vec![0usize; RING_SLOTS];
    let mut ts = 1_700_000_000_000_000_000u64;
    let result = time(RING_SLOTS as u64, || {
        for (slot, prev) in ring.chunks_exact_mut(slot_size).zip(prev.iter_mut()) {
            ts += 67;
            *prev = generator.write_next(black_box(slot), *prev, ts);
        }
    });
    report(name, result);
}

fn main() {
    println!("pktlab-wire hot paths, {ROUNDS} rounds of {ROUND_TIME:?}, median (best):");
    let v4_64 = spec(Family::Inet4, "64", FlowOrder::Sequential);

    // The headline figure: 64-byte IPv4 frames over the lab's 2000 flows,
    // written into one reused buffer.
    let mut generator = FrameGen::new(&v4_64, 0, 1);
    let mut buf = vec![0u8; generator.max_len()];
    let mut prev = 0;
    let mut ts = 1_700_000_000_000_000_000u64;
    let result = time(1000, || {
        for _ in 0..1000 {
            ts += 67;
            prev = generator.write_next(black_box(&mut buf), prev, ts);
        }
    });
    report("write_next IPv4 64 B, 2000 flows, one buffer", result);

    bench_ring("write_next IPv4 64 B, 2000 flows, 512-slot ring", &v4_64);
    bench_ring(
        "write_next IPv4 64 B, 2000 flows random, 512-slot ring",
        &spec(Family::Inet4, "64", FlowOrder::Random { seed: 1 }),
    );
    bench_ring(
        "write_next IPv6 80 B, 2000 flows, 512-slot ring",
        &spec(Family::Inet6, "80", FlowOrder::Sequential),
    );
    bench_ring(
        "write_next IPv4 IMIX, 2000 flows, 512-slot ring",
        &spec(Family::Inet4, "imix", FlowOrder::Sequential),
    );

    // A fresh (zeroed, prev_len 0) buffer every time: the whole frame is copied.
    let mut generator = FrameGen::new(&spec(Family::Inet4, "1518", FlowOrder::Sequential), 0, 1);
    let mut buf = vec![0u8; generator.max_len()];
    let result = time(1000, || {
        for i in 0..1000 {
            generator.write_next(black_box(&mut buf), 0, i);
        }
    });
    report("write_next IPv4 1518 B, prev_len 0 (full copy)", result);

    // The receiver: parse a ring of 64-byte frames.
    let mut generator = FrameGen::new(&v4_64, 0, 1);
    let frames: Vec<Vec<u8>> = (0..RING_SLOTS)
        .map(|i| {
            let mut f = vec![0u8; generator.max_len()];
            let len = generator.write_next(&mut f, 0, i as u64);
            f.truncate(len);
            f
        })
        .collect();
    let result = time(RING_SLOTS as u64, || {
        for f in &frames {
            black_box(parse_test_frame(black_box(f)));
        }
    });
    report("parse_test_frame IPv4 64 B", result);
}
