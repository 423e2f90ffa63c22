//! Hostile traffic at the receiver (issue 16, part 1): while `pktlab gen`
//! sends test traffic, a second sender (an AF_PACKET socket of this test)
//! injects random bytes, test frames truncated at every offset, the right
//! magic with wrong lengths, stream ids across the whole 24-bit space and
//! sequence numbers near 2^32. The test streams' counts stay exact, the
//! garbage is counted as foreign or untracked, nothing panics, and the
//! receiver's memory stays within the bound it printed at start.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{counts, ok_in, summary, u, Receiver, VethNs};
use pktlab_io::afpacket::{AfPacketTx, TxRingConfig};
use pktlab_io::port::TxPort;
use rand::{RngExt, SeedableRng};

const WAIT: Duration = Duration::from_secs(120);
/// Test frames `gen` sends (2000 flows, 10 per flow).
const TEST_FRAMES: u64 = 20_000;
/// Stream ids from here up are not tracked (`max_streams` of the ready line).
const MAX_STREAMS: u32 = 1 << 20;

/// A TX stamp a minute ahead of the clock (mod 2^40): a hostile frame's
/// stamp that must not be taken for a latency (it would be 17 minutes).
fn future_stamp() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    (now + 60_000_000_000) & ((1 << 40) - 1)
}

/// A 60-byte IPv4/UDP test frame to `dst`, from port 9999 (a 5-tuple gen
/// never uses): Ethernet 14, IPv4 20 (total length 42), UDP 8 (length 22),
/// the 14-byte payload at 42 (magic "PL", stream, sequence number, time),
/// 4 bytes of padding.
fn ipv4_frame(dst: [u8; 6], stream: u32, seq: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend(dst);
    f.extend([0x02, 0, 0, 0, 0, 0x99, 0x08, 0x00]);
    f.extend([0x45, 0, 0, 42, 0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend([198, 18, 10, 1, 198, 19, 10, 1]);
    f.extend(9999u16.to_be_bytes());
    f.extend(2000u16.to_be_bytes());
    f.extend([0, 22, 0, 0]);
    f.extend([0x50, 0x4c]);
    f.extend(&stream.to_be_bytes()[1..]);
    f.extend(seq.to_be_bytes());
    f.extend(&future_stamp().to_be_bytes()[3..]);
    f.extend([0; 4]);
    assert_eq!(f.len(), 60);
    f
}

/// A 76-byte IPv6/UDP test frame: Ethernet 14, IPv6 40 (payload length
/// 22), UDP 8, the payload at 62, no padding.
fn ipv6_frame(dst: [u8; 6], stream: u32, seq: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(76);
    f.extend(dst);
    f.extend([0x02, 0, 0, 0, 0, 0x99, 0x86, 0xdd]);
    f.extend([0x60, 0, 0, 0, 0, 22, 17, 64]);
    f.extend([0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend([0x20, 0x01, 0, 2, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend(9999u16.to_be_bytes());
    f.extend(2000u16.to_be_bytes());
    f.extend([0, 22, 0, 0]);
    f.extend([0x50, 0x4c]);
    f.extend(&stream.to_be_bytes()[1..]);
    f.extend(seq.to_be_bytes());
    f.extend(&future_stamp().to_be_bytes()[3..]);
    assert_eq!(f.len(), 76);
    f
}

/// The hostile frames and what the receiver must make of them, by the
/// rules of `parse_test_frame` (crates/wire/src/parse.rs) and the stream
/// table (crates/engine/src/seq.rs).
#[derive(Default)]
struct Garbage {
    frames: Vec<Vec<u8>>,
    /// How many of the frames before each one are foreign.
    foreign_before: Vec<u64>,
    foreign: u64,
    untracked: u64,
    /// Hostile streams below MAX_STREAMS, one frame each (or in order).
    tracked_streams: u64,
    tracked_frames: u64,
}

impl Garbage {
    fn push(&mut self, f: Vec<u8>) {
        self.frames.push(f);
        self.foreign_before.push(self.foreign);
    }

    /// How many of the first `n` frames are foreign.
    fn foreign_in_first(&self, n: usize) -> u64 {
        self.foreign_before.get(n).copied().unwrap_or(self.foreign)
    }

    fn build(dst: [u8; 6]) -> Garbage {
        let mut g = Garbage::default();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(16);
        let untracked_id = 0xff_ff00;
        for round in 0..20u32 {
            // Random bytes after the destination MAC, 14 to 1514 bytes (a
            // random frame is a test frame with odds below 2^-40).
            for _ in 0..100 {
                let len = rng.random_range(14..=1514);
                let mut f = dst.to_vec();
                f.extend((6..len).map(|_| rng.random::<u8>()));
                g.push(f);
                g.foreign += 1;
            }
            // Truncated at every offset from the end of the Ethernet
            // header: a frame keeps its test payload from 56 bytes (IPv4)
            // and 76 (IPv6) on, and is foreign below.
            let v4 = ipv4_frame(dst, untracked_id, round);
            for cut in 14..=v4.len() {
                g.push(v4[..cut].to_vec());
                if cut >= 56 {
                    g.untracked += 1;
                } else {
                    g.foreign += 1;
                }
            }
            let v6 = ipv6_frame(dst, untracked_id, round);
            for cut in 14..=v6.len() {
                g.push(v6[..cut].to_vec());
                if cut >= 76 {
                    g.untracked += 1;
                } else {
                    g.foreign += 1;
                }
            }
            // The right magic with wrong lengths. Too short for the payload
            // (IPv4 total length 41 or 0, UDP length 21 or 0, IPv6 payload
            // length 21, IHL 15 past the frame's end, IHL 4): foreign.
            // Longer than the frame (65535): a capture cut short, still a
            // test frame.
            let mut set = |at: usize, bytes: &[u8], test: bool, ipv6: bool| {
                let mut f = if ipv6 { v6.clone() } else { v4.clone() };
                f[at..at + bytes.len()].copy_from_slice(bytes);
                g.push(f);
                if test {
                    g.untracked += 1;
                } else {
                    g.foreign += 1;
                }
            };
            set(16, &[0, 41], false, false);
            set(16, &[0, 0], false, false);
            set(16, &[0xff, 0xff], true, false);
            set(38, &[0, 21], false, false);
            set(38, &[0, 0], false, false);
            set(38, &[0xff, 0xff], true, false);
            set(14, &[0x4f], false, false);
            set(14, &[0x44], false, false);
            set(18, &[0, 21], false, true);
            set(18, &[0xff, 0xff], true, true);
        }
        // Stream ids across the 24-bit space, numbered near 2^32: ids
        // below MAX_STREAMS start a stream each (nothing lost: a first
        // number of 2^31 or more starts the stream there), the others are
        // untracked.
        for i in 0..4096u32 {
            let stream = i * 4096 + 4095;
            g.push(ipv4_frame(dst, stream, u32::MAX - i));
            if stream < MAX_STREAMS {
                g.tracked_streams += 1;
                g.tracked_frames += 1;
            } else {
                g.untracked += 1;
            }
        }
        // One hostile stream (5000: gen's are 0-1999) wrapping at 2^32 in
        // order: nothing lost.
        for seq in [u32::MAX - 2, u32::MAX - 1, u32::MAX, 0, 1] {
            g.push(ipv6_frame(dst, 5000, seq));
            g.tracked_frames += 1;
        }
        g.tracked_streams += 1;
        g
    }
}

fn vm_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mac_bytes(text: &str) -> [u8; 6] {
    let mut m = [0u8; 6];
    for (d, p) in m.iter_mut().zip(text.split(':')) {
        *d = u8::from_str_radix(p, 16).unwrap();
    }
    m
}

#[test]
fn hostile_frames_beside_test_traffic() {
    let v = VethNs::new();
    let dst = v.mac("vb");
    let garbage = Garbage::build(mac_bytes(&dst));
    let mut rx = Receiver::start(
        &v.ns,
        &["-i", "vb", "-W", "3", "-t", "100", "--interval", "100ms"],
    );
    // The bound the receiver printed at start.
    assert_eq!(u(&rx.ready, "max_streams"), MAX_STREAMS as u64);
    let bound = u(&rx.ready, "checker_max_bytes");
    assert_eq!(bound, 85_131_264);
    let pid = rx.pid();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.starts_with("Name:\tpktlab\n"), "{status}");
    let rss_ready = vm_rss(pid).unwrap();
    let rss_max = AtomicU64::new(rss_ready);
    let ns = v.ns.clone();
    let mut injected_per_s = 0.0;
    let rx_progress = &mut rx;
    std::thread::scope(|s| {
        // VmRSS until the receiver exits (an exited process, not yet
        // reaped, has none): its last state is in the max.
        s.spawn(|| {
            while let Some(r) = vm_rss(pid) {
                rss_max.fetch_max(r, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let sender = s.spawn(|| {
            let out = ok_in(
                &v.ns,
                &[
                    "gen", "-i", "va", "-D", &dst, "-n", "20000", "-R", "10kpps", "--json",
                ],
            );
            let tx = summary(&out);
            assert_eq!(u(&tx, "packets"), TEST_FRAMES);
            assert_eq!(u(&tx, "flows"), 2000);
        });
        let injector = s.spawn(|| {
            pktlab_engine::netns::enter(&ns).unwrap();
            let mut tx = AfPacketTx::open("va", &TxRingConfig::default()).unwrap();
            let start = Instant::now();
            // 32 frames at a time, and at most 8 such batches not yet
            // counted by the receiver (its foreign frames tell how far it
            // got): at most 256 in the kernel's backlog (1000) and the
            // receiver's ring, so every frame is accounted for.
            for (i, chunk) in garbage.frames.chunks(32).enumerate() {
                let settled = garbage.foreign_in_first(i.saturating_sub(8) * 32);
                rx_progress
                    .wait_counted("the hostile frames", WAIT, |_, foreign| foreign >= settled);
                let mut next = 0;
                while next < chunk.len() {
                    next += tx
                        .send_batch(chunk.len() - next, |i, slot, _| {
                            let f = &chunk[next + i];
                            slot[..f.len()].copy_from_slice(f);
                            f.len()
                        })
                        .unwrap();
                }
                tx.flush().unwrap();
            }
            garbage.frames.len() as f64 / start.elapsed().as_secs_f64()
        });
        injected_per_s = injector.join().unwrap();
        sender.join().unwrap();
    });
    let (_, s) = rx.wait(WAIT);
    let rss_max = rss_max.load(Ordering::Relaxed);
    let grown = rss_max.saturating_sub(rss_ready);
    eprintln!(
        "hostile: {} garbage frames at {injected_per_s:.0}/s beside {TEST_FRAMES} test frames; \
         VmRSS {} MiB at ready, {} MiB at most (bound {} MiB)",
        garbage.frames.len(),
        rss_ready >> 20,
        rss_max >> 20,
        bound >> 20
    );
    let total = TEST_FRAMES + garbage.frames.len() as u64;
    assert_eq!(u(&s, "ring_drops"), 0, "{s}");
    // Test streams exact: nothing lost, late or twice, over gen's 2000
    // streams and the hostile ones (two 5-tuples from port 9999: IPv4 and
    // IPv6).
    assert_eq!(
        counts(&s),
        (total, 2000 + 2, 0, 0, 0, garbage.foreign),
        "{s}"
    );
    assert_eq!(u(&s, "untracked"), garbage.untracked, "{s}");
    assert_eq!(u(&s, "streams"), 2000 + garbage.tracked_streams, "{s}");
    assert_eq!(
        u(&s, "packets") - u(&s, "foreign") - u(&s, "untracked"),
        TEST_FRAMES + garbage.tracked_frames
    );
    assert_eq!(u(&s["iface"], "rx_packets"), total);
    // The hostile tracked frames' stamps are a minute ahead: counted and
    // checked, never timed; gen's frames are all timed, and a veth takes
    // far less than a second.
    assert_eq!(u(&s, "bad_stamps"), garbage.tracked_frames, "{s}");
    assert_eq!(u(&s["latency_ns"], "count"), TEST_FRAMES, "{s}");
    assert!(u(&s["latency_ns"], "max") < 1_000_000_000, "{s}");
    // Memory: the highest tracked id (1048575) grew the table to its full
    // size (64 MiB of streams, 8 MiB of hashes), and no more than the
    // bound, whatever ids up to 2^24 arrived (the table used to grow to
    // 2^24 entries: 1 GiB).
    assert!(grown >= 72 << 20, "VmRSS grew by {grown} bytes only");
    assert!(grown <= bound + (16 << 20), "VmRSS grew by {grown} bytes");
}
