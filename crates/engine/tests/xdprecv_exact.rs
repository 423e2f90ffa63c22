//! The `recv --io xdp` program (crates/io/bpf/xdprecv.c) against the
//! user-space receiver's own code, frame by frame through BPF_PROG_RUN (no
//! interface needed; root needed to load BPF):
//!
//! - sequence checking gives exactly crates/engine/src/seq.rs's counts for
//!   random sequences (gaps, reordering beyond the window, duplicates,
//!   the 2^32 wrap), stream ids beyond the limit are untracked;
//! - frame recognition gives exactly crates/wire/src/parse.rs's verdict for
//!   IPv4 and IPv6, 0 to 3 VLAN tags, truncated and damaged frames;
//! - latency is measured against CLOCK_REALTIME and lands in the right
//!   bucket.

use std::collections::BTreeMap;

use pktlab_engine::seq::{SeqCounts, StreamState};
use pktlab_io::xdprecv::{CpuStats, Timing, XdpRecv, XdpRecvConfig};
use pktlab_wire::parse::parse_test_frame;
use pktlab_wire::payload::TestPayload;
use proptest::prelude::*;

/// A test frame built by hand: Ethernet, `vlans` 802.1Q tags, IPv4 or
/// IPv6, UDP 2000 → 3000, the test payload, `pad` bytes of fill.
fn frame(v6: bool, vlans: usize, p: TestPayload, pad: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    for i in 0..vlans {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 10 + i as u8]);
    }
    let udp_len = 8 + 14 + pad;
    if v6 {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[17, 64]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        f.extend_from_slice(&((20 + udp_len) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1]);
    }
    f.extend_from_slice(&[0x07, 0xd0, 0x0b, 0xb8]);
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    let mut payload = [0u8; 14];
    p.write(&mut payload);
    f.extend_from_slice(&payload);
    f.extend(std::iter::repeat_n(0xa5, pad));
    f
}

fn load(streams: u32, pass: bool) -> XdpRecv {
    let cfg = XdpRecvConfig {
        streams,
        pass,
        ..XdpRecvConfig::default()
    };
    XdpRecv::load(&cfg, "BPF_PROG_RUN").expect("loading the xdprecv program (root needed)")
}

fn sum(stats: &[CpuStats]) -> CpuStats {
    let mut t = CpuStats::default();
    for s in stats {
        t.packets += s.packets;
        t.bytes += s.bytes;
        t.foreign += s.foreign;
        t.untracked += s.untracked;
        t.lat_count += s.lat_count;
        t.busy += s.busy;
        t.bad_stamps += s.bad_stamps;
    }
    t
}

fn program_streams(rx: &XdpRecv) -> BTreeMap<u32, SeqCounts> {
    let mut m = BTreeMap::new();
    rx.for_each_stream(|id, s| {
        m.insert(
            id,
            SeqCounts {
                received: s.received,
                lost: s.lost,
                out_of_order: s.out_of_order,
                duplicates: s.duplicates,
            },
        );
    })
    .unwrap();
    m
}

fn realtime_ns() -> u64 {
    pktlab_io::clock::realtime_ns()
}

/// Sequence numbers that hit every rule: small steps, gaps and late frames
/// inside and beyond the 128-number window, anything at all.
fn seq_strategy() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..40, 3 => 0u32..400, 1 => any::<u32>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sequence_counts_are_exactly_the_user_space_checker_s(
        frames in prop::collection::vec((0u32..5, seq_strategy()), 1..300),
        base in prop_oneof![Just(0u32), Just(u32::MAX - 20), any::<u32>()],
        v6 in any::<bool>(),
    ) {
        // Streams 0..3 have state; stream 4 is beyond the limit.
        let mut rx = load(4, false);
        let mut want: BTreeMap<u32, StreamState> = BTreeMap::new();
        let mut untracked = 0;
        for &(stream, seq) in &frames {
            let seq = seq.wrapping_add(base);
            let f = frame(v6, 0, TestPayload::new(stream, seq, realtime_ns()), 0);
            prop_assert_eq!(rx.run_once(&f).unwrap(), 1, "XDP_DROP");
            if stream < 4 {
                want.entry(stream).or_default().observe(seq);
            } else {
                untracked += 1;
            }
        }
        let want: BTreeMap<u32, SeqCounts> = want.into_iter().map(|(k, s)| (k, s.counts())).collect();
        prop_assert_eq!(program_streams(&rx), want);
        let t = sum(&rx.cpu_stats().unwrap());
        prop_assert_eq!((t.packets, t.foreign, t.untracked), (frames.len() as u64, 0, untracked));
        prop_assert_eq!(t.lat_count, frames.len() as u64);
    }

    /// The program for one-buffer frames counts exactly what the
    /// multi-buffer one counts, bytes included.
    #[test]
    fn the_linear_program_counts_as_the_multi_buffer_one(
        cases in prop::collection::vec((any::<bool>(), 0usize..3, 0usize..1400, 0u32..6, 0u32..50), 1..40),
    ) {
        let mut frags = load(4, false);
        let mut linear = load(4, false);
        linear.run_linear_program();
        prop_assert!(linear.runs_linear_program() && !frags.runs_linear_program());
        for &(v6, vlans, pad, stream, seq) in &cases {
            let f = frame(v6, vlans, TestPayload::new(stream, seq, 0), pad);
            prop_assert_eq!(frags.run_once(&f).unwrap(), linear.run_once(&f).unwrap());
        }
        let (a, b) = (sum(&frags.cpu_stats().unwrap()), sum(&linear.cpu_stats().unwrap()));
        prop_assert_eq!((a.packets, a.bytes, a.foreign, a.untracked), (b.packets, b.bytes, b.foreign, b.untracked));
        let bytes: u64 = cases.iter().map(|&(v6, vlans, pad, _, _)| frame(v6, vlans, TestPayload::new(0, 0, 0), pad).len() as u64 + 4).sum();
        prop_assert_eq!(b.bytes, bytes);
        prop_assert_eq!(program_streams(&frags), program_streams(&linear));
    }

    #[test]
    fn recognition_is_exactly_the_user_space_parser_s(
        cases in prop::collection::vec(
            (any::<bool>(), 0usize..4, 0usize..40, any::<u16>(), any::<u8>(), 0usize..120, any::<bool>()),
            1..40,
        ),
    ) {
        let mut rx = load(16, false);
        let (mut packets, mut bytes, mut foreign, mut untracked) = (0u64, 0u64, 0u64, 0u64);
        let mut want: BTreeMap<u32, u64> = BTreeMap::new();
        for (i, &(v6, vlans, pad, at, value, cut, damage)) in cases.iter().enumerate() {
            let mut f = frame(v6, vlans, TestPayload::new(i as u32 % 20, 0, 0), pad);
            if damage {
                let at = usize::from(at) % f.len();
                f[at] = value;
            }
            // Cut anywhere from the Ethernet header's end on (BPF_PROG_RUN
            // takes no frame shorter than that).
            let keep = f.len() - cut.min(f.len() - 14);
            f.truncate(keep);
            rx.run_once(&f).unwrap();
            packets += 1;
            bytes += f.len() as u64 + 4;
            match parse_test_frame(&f) {
                None => foreign += 1,
                Some(t) if t.payload.stream < 16 => *want.entry(t.payload.stream).or_default() += 1,
                Some(_) => untracked += 1,
            }
        }
        let t = sum(&rx.cpu_stats().unwrap());
        prop_assert_eq!((t.packets, t.bytes, t.foreign, t.untracked), (packets, bytes, foreign, untracked));
        let got: BTreeMap<u32, u64> = program_streams(&rx).into_iter().map(|(k, c)| (k, c.received)).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn hostile_frames_by_hand() {
    let mut rx = load(8, false);
    let good = frame(false, 1, TestPayload::new(3, 0, 0), 0);
    assert!(parse_test_frame(&good).is_some());
    // Wrong magic.
    let mut bad_magic = good.clone();
    bad_magic[18 + 20 + 8] = 0x51;
    // The payload cut one byte short.
    let short = good[..good.len() - 1].to_vec();
    // A UDP length that leaves no room for the payload.
    let mut udp_short = good.clone();
    udp_short[18 + 20 + 4..18 + 20 + 6].copy_from_slice(&21u16.to_be_bytes());
    // An IPv4 fragment (more fragments set).
    let mut fragment = good.clone();
    fragment[18 + 6] = 0x20;
    // A stream id beyond the limit, and the largest one.
    let beyond = frame(false, 0, TestPayload::new(8, 0, 0), 0);
    let largest = frame(true, 2, TestPayload::new((1 << 24) - 1, 7, 0), 0);
    for f in [&bad_magic, &short, &udp_short, &fragment] {
        assert!(parse_test_frame(f).is_none());
        rx.run_once(f).unwrap();
    }
    for f in [&beyond, &largest, &good] {
        rx.run_once(f).unwrap();
    }
    let t = sum(&rx.cpu_stats().unwrap());
    assert_eq!((t.packets, t.foreign, t.untracked), (7, 4, 2));
    let streams = program_streams(&rx);
    assert_eq!(streams.keys().copied().collect::<Vec<_>>(), [3]);
    assert_eq!(streams[&3].received, 1);
}

/// `recv -n 5`: the program counts the first five frames, foreign ones
/// included, and nothing after them, on any CPU; later frames still get
/// the run's verdict.
#[test]
fn a_count_stops_the_program_counting_exactly() {
    let cfg = XdpRecvConfig {
        streams: 4,
        count: Some(5),
        ..XdpRecvConfig::default()
    };
    let mut rx = XdpRecv::load(&cfg, "BPF_PROG_RUN").expect("loading the xdprecv program");
    let arp = [0xffu8; 42];
    for i in 0..9u32 {
        let f = frame(false, 0, TestPayload::new(1, i, realtime_ns()), 0);
        let f: &[u8] = if i == 2 { &arp } else { &f };
        assert_eq!(rx.run_once(f).unwrap(), 1, "frame {i}: XDP_DROP");
    }
    let t = sum(&rx.cpu_stats().unwrap());
    assert_eq!(
        (t.packets, t.foreign, t.lat_count, t.bad_stamps),
        (5, 1, 4, 0)
    );
    // Numbers 0, 1, 3 and 4 arrived, 2 was the ARP frame's turn: one lost.
    let streams = program_streams(&rx);
    assert_eq!(
        (streams[&1].received, streams[&1].lost),
        (4, 1),
        "{streams:?}"
    );
}

/// `--latency off`: frames are counted and checked, none is timed; the
/// CPU's first frame still dates the start.
#[test]
fn untimed_frames_are_checked_but_not_timed() {
    let cfg = XdpRecvConfig {
        streams: 4,
        timing: Timing::Off,
        ..XdpRecvConfig::default()
    };
    let mut rx = XdpRecv::load(&cfg, "BPF_PROG_RUN").expect("loading the xdprecv program");
    let before = realtime_ns();
    for i in [0u32, 1, 3] {
        rx.run_once(&frame(
            false,
            0,
            TestPayload::new(2, i, realtime_ns() - 5000),
            0,
        ))
        .unwrap();
    }
    let after = realtime_ns();
    let stats = rx.cpu_stats().unwrap();
    let t = sum(&stats);
    assert_eq!((t.packets, t.lat_count), (3, 0));
    assert_eq!(rx.histogram().unwrap().total(), 0);
    let cpu = stats.iter().find(|s| s.packets > 0).unwrap();
    assert!((before..=after).contains(&cpu.first_ns), "{cpu:?}");
    assert_eq!((cpu.last_ns, cpu.lat_max), (0, 0));
    let streams = program_streams(&rx);
    assert_eq!((streams[&2].received, streams[&2].lost), (3, 1));
}

/// `--latency 1/N`: every frame is counted and checked, one test frame in
/// N on the CPU is timed: its 1st, N+1th, ... test frames; foreign frames
/// do not count. Pinned to one CPU so that the countdown is one.
#[test]
fn one_test_frame_in_n_is_timed() {
    let cpu = *pktlab_engine::affinity::allowed_cpus()
        .first()
        .expect("a usable CPU");
    pktlab_engine::affinity::pin_current_thread(cpu).unwrap();
    let cfg = XdpRecvConfig {
        streams: 4,
        timing: Timing::OneIn(4),
        ..XdpRecvConfig::default()
    };
    let mut rx = XdpRecv::load(&cfg, "BPF_PROG_RUN").expect("loading the xdprecv program");
    let mut arp = frame(false, 0, TestPayload::new(0, 0, 0), 0);
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    // A foreign frame first: it loads the program (milliseconds) before
    // any stamp is taken, and it is not counted down.
    rx.run_once(&arp).unwrap();
    // Test frames 0 to 9 of stream 1, frame i stamped i + 1 ms ago; a
    // foreign frame after every third. The timed ones are 0, 4 and 8.
    let mut stamped = Vec::new();
    for i in 0..10u32 {
        let ts = realtime_ns() - u64::from(i + 1) * 1_000_000;
        stamped.push(ts);
        rx.run_once(&frame(false, 0, TestPayload::new(1, i, ts), 0))
            .unwrap();
        if i % 3 == 2 {
            rx.run_once(&arp).unwrap();
        }
    }
    let stats = rx.cpu_stats().unwrap();
    let c = stats[cpu];
    assert_eq!((c.packets, c.foreign, c.lat_count), (14, 4, 3), "{c:?}");
    // Frames 0, 4 and 8 were stamped 1, 5 and 9 ms ago, each latency a
    // little more (the time to run the program): 1, 9 and 15 ms (frames
    // 1, 5, 9 would sum to 18 ms).
    assert!((1_000_000..1_500_000).contains(&c.lat_min), "{c:?}");
    assert!((9_000_000..9_500_000).contains(&c.lat_max), "{c:?}");
    assert!((15_000_000..15_500_000).contains(&c.lat_sum), "{c:?}");
    assert_eq!(c.last_ns, 0, "only every frame timed dates the last one");
    // Frame 9 was the first after 8: frames 10 and 11 would be skipped
    // too, 12 timed.
    assert_eq!(c.until_timed, 2);
    assert_eq!(rx.histogram().unwrap().total(), 3);
    let streams = program_streams(&rx);
    assert_eq!((streams[&1].received, streams[&1].lost), (10, 0));
    assert_eq!(rx.timing().one_in(), Some(4));
}

/// Every frame gives its stream back: the `busy` word is 0 between frames
/// and no frame was left unchecked.
#[test]
fn streams_are_given_back_after_every_frame() {
    let mut rx = load(4, false);
    for i in 0..50u32 {
        rx.run_once(&frame(i % 2 == 0, 0, TestPayload::new(i % 3, i, 0), 0))
            .unwrap();
    }
    let mut seen = 0;
    rx.for_each_stream(|id, s| {
        assert_eq!(s.busy, 0, "stream {id}");
        seen += s.received;
    })
    .unwrap();
    assert_eq!(seen, 50);
    assert_eq!(sum(&rx.cpu_stats().unwrap()).busy, 0);
}

#[test]
fn pass_passes_and_drop_drops() {
    let f = frame(false, 0, TestPayload::new(0, 0, 0), 0);
    assert_eq!(load(1, false).run_once(&f).unwrap(), 1); // XDP_DROP
    assert_eq!(load(1, true).run_once(&f).unwrap(), 2); // XDP_PASS
                                                        // Foreign frames follow the same verdict.
    let arp = [0xffu8; 42];
    assert_eq!(load(1, true).run_once(&arp).unwrap(), 2);
}

/// Frames stamped 50 µs, 3 ms and 9 s before now: min, max and the
/// quantiles fall between the true latency and it plus the time the test
/// took (at most a few seconds on a loaded machine), quantiles within
/// 1/128 above.
#[test]
fn latency_against_the_realtime_clock() {
    let mut rx = load(4, false);
    // 9 s: within the 10 s a stamp may be older than the first frame.
    let ages = [50_000u64, 3_000_000, 9_000_000_000];
    let begin = realtime_ns();
    for (k, &age) in ages.iter().enumerate() {
        let n = if k == 0 { 98 } else { 1 };
        for i in 0..n {
            let f = frame(false, 0, TestPayload::new(0, i, realtime_ns() - age), 0);
            rx.run_once(&f).unwrap();
        }
    }
    let slack = realtime_ns() - begin;
    let stats = rx.cpu_stats().unwrap();
    let min = stats
        .iter()
        .filter(|s| s.lat_count > 0)
        .map(|s| s.lat_min)
        .min()
        .unwrap();
    let max = stats.iter().map(|s| s.lat_max).max().unwrap();
    assert!(
        (50_000..=50_000 + slack).contains(&min),
        "min {min}, slack {slack}"
    );
    assert!(
        (9_000_000_000..=9_000_000_000 + slack).contains(&max),
        "max {max}"
    );
    let h = rx.histogram().unwrap();
    assert_eq!(h.total(), 100);
    let within =
        |v: u64, age: u64| v >= age && v as f64 <= (age + slack) as f64 * (1.0 + 1.0 / 128.0);
    let p50 = h.value_at_quantile(0.5).unwrap();
    assert!(within(p50, 50_000), "p50 {p50}");
    let p99 = h.value_at_quantile(0.99).unwrap();
    assert!(within(p99, 3_000_000), "p99 {p99}");
    let p100 = h.value_at_quantile(1.0).unwrap();
    assert!(within(p100, 9_000_000_000), "p100 {p100}");
}

/// Stamps from the future, or older than the run by more than 10 s, are
/// counted and checked but not timed (crates/wire/src/payload.rs's
/// believable_latency, which the program mirrors). Whichever CPU runs a
/// frame, its first frame came after `begin`: a 60 s or 300 s age is more
/// than 10 s plus the test's length, and a 1 ms one always believed.
#[test]
fn stamps_from_the_future_or_before_the_run_are_not_timed() {
    let mut rx = load(4, false);
    let begin = realtime_ns();
    // (age in ns, negative: in the future; frames)
    let ages: [(i64, u32); 4] = [
        (1_000_000, 3),
        (60_000_000_000, 2),
        (-1_000_000_000, 4),
        (300_000_000_000, 1),
    ];
    let mut seq = 0;
    for (age, n) in ages {
        for _ in 0..n {
            let stamp = (realtime_ns() as i64 - age) as u64;
            let f = frame(false, 0, TestPayload::new(3, seq, stamp), 0);
            rx.run_once(&f).unwrap();
            seq += 1;
        }
    }
    let slack = realtime_ns() - begin;
    assert!(slack < 50_000_000_000, "the test took {slack} ns");
    let t = sum(&rx.cpu_stats().unwrap());
    assert_eq!((t.packets, t.foreign, t.untracked), (10, 0, 0));
    assert_eq!((t.lat_count, t.bad_stamps), (3, 7));
    let max = rx
        .cpu_stats()
        .unwrap()
        .iter()
        .map(|s| s.lat_max)
        .max()
        .unwrap();
    assert!((1_000_000..=1_000_000 + slack).contains(&max), "max {max}");
    assert_eq!(rx.histogram().unwrap().total(), 3);
    // All ten checked in order: nothing lost.
    let streams = program_streams(&rx);
    assert_eq!(streams[&3].received, 10);
    assert_eq!(streams[&3].lost, 0);
}

/// The stream states are read in batches of 4096 entries: ids on both
/// sides of a batch's edge and the last one all come back, in order.
#[test]
fn streams_are_read_across_batches() {
    let mut rx = load(10_000, false);
    let ids = [0u32, 4095, 4096, 8191, 8192, 9999];
    for (k, &id) in ids.iter().enumerate() {
        for seq in 0..=k as u32 {
            rx.run_once(&frame(false, 0, TestPayload::new(id, seq, 0), 0))
                .unwrap();
        }
    }
    let got: Vec<(u32, u64)> = program_streams(&rx)
        .into_iter()
        .map(|(id, c)| (id, c.received))
        .collect();
    assert_eq!(
        got,
        [
            (0, 1),
            (4095, 2),
            (4096, 3),
            (8191, 4),
            (8192, 5),
            (9999, 6)
        ]
    );
}
