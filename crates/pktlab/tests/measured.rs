//! Measured values checked from both sides, in the text people read as well
//! as in `--json`: latency replayed from a pcap file written here by hand
//! with chosen capture times and TX stamps, loss counted in the text, and
//! the pacer's achieved rate neither above nor below the requested one.
//!
//! The pcap tests need no namespace: `recv --io pcap:FILE` reads a file.

mod common;

use common::{pktlab, summary, u};
use serde_json::Value;

/// A 64-byte test frame (60 bytes without FCS): Ethernet / IPv4 / UDP from
/// 198.18.0.1:(1000 + stream) to 198.19.0.1:2000, whose UDP payload starts
/// with the test payload, written byte by byte from the layout in
/// crates/wire/src/payload.rs.
fn frame(stream: u32, seq: u32, ts40: u64) -> Vec<u8> {
    let mut payload = vec![0u8; 18];
    payload[0..2].copy_from_slice(&[0x50, 0x4c]);
    payload[2..5].copy_from_slice(&stream.to_be_bytes()[1..]);
    payload[5..9].copy_from_slice(&seq.to_be_bytes());
    payload[9..14].copy_from_slice(&ts40.to_be_bytes()[3..]);
    let mut out = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
        .udp(1000 + stream as u16, 2000)
        .write(&mut out, &payload)
        .unwrap();
    assert_eq!(out.len(), 60);
    out
}

/// One record: captured at `cap_ns` (Unix nanoseconds), stream, sequence
/// number, TX stamp (mod 2^40).
struct Rec {
    cap_ns: u64,
    stream: u32,
    seq: u32,
    ts40: u64,
}

/// A classic pcap file with nanosecond timestamps, written by hand: the
/// 24-byte global header (magic 0xa1b23c4d little-endian, version 2.4,
/// snap length 65535, LINKTYPE_ETHERNET) and a 16-byte header per record.
fn write_pcap(path: &std::path::Path, recs: &[Rec]) {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for r in recs {
        let f = frame(r.stream, r.seq, r.ts40);
        b.extend_from_slice(&((r.cap_ns / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((r.cap_ns % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&f);
    }
    std::fs::write(path, b).unwrap();
}

const TS40: u64 = 1 << 40;

/// A capture start 0.5 ms before a multiple of 2^40 ns (in 2027), so the
/// TX stamps wrap in the middle of the file.
const T0: u64 = 1_637_090 * TS40 - 500_000;

/// 100 frames over 4 streams, 10 us apart, frame i with a latency of
/// 201 + 6 i ns: 201, 207, ..., 795.
fn latency_records() -> Vec<Rec> {
    (0..100u64)
        .map(|i| {
            let cap_ns = T0 + i * 10_000;
            let latency = 201 + 6 * i;
            Rec {
                cap_ns,
                stream: i as u32 % 4,
                seq: i as u32 / 4,
                ts40: (cap_ns - latency) % TS40,
            }
        })
        .collect()
}

/// 4 streams of sequence numbers 0..2999 each, with 1000..1999 left out of
/// every one: 8000 frames, 4000 lost, 1 us apart, 5 us of latency each.
fn loss_records() -> Vec<Rec> {
    let mut recs = Vec::new();
    for seq in (0..3000u32).filter(|s| !(1000..2000).contains(s)) {
        for stream in 0..4 {
            let cap_ns = T0 + recs.len() as u64 * 1000;
            recs.push(Rec {
                cap_ns,
                stream,
                seq,
                ts40: (cap_ns - 5000) % TS40,
            });
        }
    }
    assert_eq!(recs.len(), 8000);
    recs
}

/// `recv --io pcap:FILE` on `recs`, once with --json and once with text:
/// (the JSON summary, the text).
fn replay(tag: &str, recs: &[Rec]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{tag}.pcap"));
    write_pcap(&path, recs);
    let io = format!("pcap:{}", path.display());
    let json = pktlab(&["recv", "--io", &io, "--json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let text = pktlab(&["recv", "--io", &io]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    (summary(&json.stdout), text.stdout)
}

/// The one line of `text` starting with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    let found: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(found.len(), 1, "one {prefix:?} line in:\n{text}");
    found[0]
}

/// The latency percentiles are the chosen values exactly (below 2048 ns
/// the receiver's histogram is exact to the nanosecond), across the 2^40
/// wrap of the TX stamps, in the JSON and in the text.
#[test]
fn latency_from_known_stamps_is_exact() {
    let (s, text) = replay("latency", &latency_records());
    assert_eq!(
        common::counts(&s),
        (100, 4, 0, 0, 0, 0),
        "packets, flows, lost, out of order, duplicates, foreign"
    );
    let lat = &s["latency_ns"];
    // By hand: 100 values 201 + 6 i; the p-th percentile is the
    // ceil(p * 100)-th smallest.
    assert_eq!(u(lat, "count"), 100);
    assert_eq!(u(lat, "min"), 201);
    assert_eq!(u(lat, "p50"), 201 + 6 * 49);
    assert_eq!(u(lat, "p90"), 201 + 6 * 89);
    assert_eq!(u(lat, "p99"), 201 + 6 * 98);
    assert_eq!(u(lat, "p999"), 795);
    assert_eq!(u(lat, "max"), 795);
    let avg = lat["avg"].as_f64().unwrap();
    assert!((avg - 498.0).abs() < 1e-6, "avg {avg}");
    assert_eq!(
        line(&text, "Latency:"),
        "Latency: min 201 ns avg 498 ns p50 495 ns p99 789 ns p99.9 795 ns max 795 ns"
    );
}

/// 4000 frames missing from the middle of their streams: "4000 lost" and
/// "0 duplicates" in the text, the same in the JSON.
#[test]
fn lost_frames_are_counted_in_the_text() {
    let (s, text) = replay("loss", &loss_records());
    assert_eq!(common::counts(&s), (8000, 4, 4000, 0, 0, 0));
    assert_eq!(
        line(&text, "Test traffic:"),
        "Test traffic: 4 flows in 4 streams, 4000 lost, 0 out of order, 0 duplicates; 0 foreign frames"
    );
    let lat = &s["latency_ns"];
    // 5000 ns lies in the histogram's 4 ns buckets (4096..8191): the
    // minimum is the bucket's lowest value, 5000, the maximum its highest.
    assert_eq!((u(lat, "min"), u(lat, "max")), (5000, 5003));
    assert_eq!(
        line(&text, "Latency:"),
        "Latency: min 5.0 us avg 5.0 us p50 5.0 us p99 5.0 us p99.9 5.0 us max 5.0 us"
    );
}

/// A capture whose clock stepped back: its last record is stamped before
/// its first. The run's span is from the earliest stamp to the latest, in
/// whatever order they come: records at T0 + 1, 2 and 3 ms, then T0, span
/// 3 ms, so 4 frames in 0.003 s are 1333.33 pps (by hand), never 0 s or a
/// wrapped subtraction's 584 years.
#[test]
fn a_capture_stamped_backwards_spans_its_earliest_to_its_latest_stamp() {
    let recs: Vec<Rec> = [1_000_000u64, 2_000_000, 3_000_000, 0]
        .iter()
        .enumerate()
        .map(|(i, &at)| Rec {
            cap_ns: T0 + at,
            stream: 0,
            seq: i as u32,
            ts40: (T0 + at - 5000) % TS40,
        })
        .collect();
    let (s, text) = replay("backwards", &recs);
    assert_eq!(common::counts(&s), (4, 1, 0, 0, 0, 0), "{s}");
    let seconds = s["seconds"].as_f64().unwrap();
    assert!((seconds - 0.003).abs() < 1e-12, "{s}");
    let pps = s["pps"].as_f64().unwrap();
    assert!((pps - 4.0 / 0.003).abs() < 1e-6, "{s}");
    assert_eq!(
        line(&text, "Received "),
        "Received 4 packets, 64.00 bytes on average, in 0.00 seconds."
    );
    // Every frame 5 us after its own stamp, the backwards one included.
    assert_eq!(u(&s["latency_ns"], "count"), 4, "{s}");
}

/// Number before `unit` in a pkt-gen rate such as `8.08 Mpps`, in units.
fn rate_value(text: &str, unit: &str) -> f64 {
    let at = text
        .find(unit)
        .unwrap_or_else(|| panic!("{unit} in {text}"));
    let head = &text[..at];
    let (num, prefix) = match head.chars().last().unwrap() {
        'K' => (&head[..head.len() - 1], 1e3),
        'M' => (&head[..head.len() - 1], 1e6),
        'G' => (&head[..head.len() - 1], 1e9),
        _ => (head, 1.0),
    };
    let num = num.trim_end().rsplit(' ').next().unwrap();
    num.parse::<f64>().unwrap() * prefix
}

/// The text summary of a replay states the numbers of the JSON summary of
/// the same file (a pcap replay is deterministic: its times are the
/// capture times).
#[test]
fn recv_text_states_the_json_numbers() {
    let (s, text) = replay("both", &loss_records());
    let f = |k: &str| s[k].as_f64().unwrap();
    // 8000 frames 1 us apart: 7.999 ms from the first to the last.
    assert!((f("seconds") - 0.007999).abs() < 1e-9, "{s}");
    assert_eq!(
        line(&text, "Received "),
        format!(
            "Received 8000 packets, 64.00 bytes on average, in {:.2} seconds.",
            f("seconds")
        )
    );
    let speed = line(&text, "Speed:");
    let pps = rate_value(speed, "pps");
    // Two decimals of a Mpps figure: within 5 kpps.
    assert!(
        (pps - f("pps")).abs() <= 5e3 + 1e-6,
        "{speed} vs {}",
        f("pps")
    );
    let l2 = rate_value(speed.split("Bandwidth:").nth(1).unwrap(), "bps");
    assert!(
        (l2 - f("l2_bps")).abs() <= 5e6,
        "{speed} vs {}",
        f("l2_bps")
    );
    // 8000 frames of 64 bytes with the FCS in 7.999 ms, by hand.
    assert_eq!(u(&s, "bytes"), 8000 * 64);
    assert!((f("l2_bps") - 8000.0 * 512.0 / 0.007999).abs() < 1.0, "{s}");
}

/// `gen --io null -R 2kpps -t 3 --batch 4096`: what was sent keeps to
/// the requested rate from both sides, tightly enough that a pacer 2 %
/// fast or 2 % slow fails, on a quiet machine or a busy one. A batch of
/// 4096 lets the pacer keep 4098 frames (2 s) of debt, so a thread that
/// the machine stalls catches up afterwards: the count follows the clock.
/// Above: no frame goes before it is due, so the count is at most 2000 x
/// the run's seconds. Below: the interval lines (every 100 ms) count what
/// was sent by each one's time; at the best of those after the first
/// second, at least 99 % of what was due (a pacer 2 % slow sends at most
/// 98 %, plus a frame, by every one of them).
#[test]
fn pacer_meets_the_requested_rate_from_both_sides() {
    let json = pktlab(&[
        "gen",
        "--io",
        "null",
        "-R",
        "2kpps",
        "-t",
        "3",
        "--batch",
        "4096",
        "--interval",
        "100ms",
        "--json",
    ]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let s = summary(&json.stdout);
    let (packets, seconds) = (u(&s, "packets") as f64, s["seconds"].as_f64().unwrap());
    let pps = s["pps"].as_f64().unwrap();
    assert!((3.0..3.2).contains(&seconds), "{seconds} s");
    assert!((pps - packets / seconds).abs() < 1.0, "{s}");
    assert!(
        packets <= 2_000.0 * seconds + 1.0,
        "{packets} packets in {seconds} s at 2 kpps: ahead of the clock"
    );
    let mut sent = 0u64;
    let mut best: f64 = 0.0;
    for line in json.stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] != "interval" {
            continue;
        }
        sent += u(&v, "packets");
        let elapsed = v["elapsed"].as_f64().unwrap();
        if elapsed >= 1.0 {
            best = best.max(sent as f64 / (2_000.0 * elapsed));
        }
    }
    assert_eq!(sent as f64, packets, "the intervals add up to the total");
    assert!(
        best >= 0.99,
        "at best {best:.4} of the frames due by an interval's end were sent:\n{}",
        json.stdout
    );
}

/// The same run in text: the summary's count, its achieved share of the
/// request and the interval lines agree with each other and with the
/// request (a count-limited run: -n 4000 at 2 kpps takes 2 s).
#[test]
fn gen_text_states_its_numbers() {
    let args = [
        "gen", "--io", "null", "-R", "2kpps", "-n", "4000", "-l", "128",
    ];
    let r = pktlab(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = r.stdout;
    let sent = line(&text, "Sent ");
    let secs: f64 = sent
        .strip_prefix("Sent 4000 packets, 128 bytes each, in ")
        .and_then(|t| t.strip_suffix(" seconds."))
        .unwrap_or_else(|| panic!("{sent}"))
        .parse()
        .unwrap();
    // 4000 frames at 2 kpps: the last is due at 2 s and never goes
    // earlier (a pacer 2 % fast takes 1.96 s); a busy machine may take a
    // little longer.
    assert!((2.0..=2.23).contains(&secs), "{sent}");
    let speed = line(&text, "Speed:");
    let pps = rate_value(speed, "pps");
    // The summary's rate is its count over its time (to the 2 decimals of
    // the seconds shown).
    assert!(
        (pps - 4000.0 / secs).abs() < 4000.0 / secs * 0.01,
        "{speed}"
    );
    let l2 = rate_value(speed.split("Bandwidth:").nth(1).unwrap(), "bps");
    // L2 counts the 128 bytes of each frame, FCS included.
    assert!((l2 - pps * 128.0 * 8.0).abs() < 0.01 * l2, "{speed}");
    let req = line(&text, "Requested ");
    let pct: f64 = req
        .strip_prefix("Requested 2.00 Kpps: achieved ")
        .and_then(|t| t.strip_suffix('%'))
        .unwrap_or_else(|| panic!("{req}"))
        .parse()
        .unwrap();
    assert!((90.0..=100.0).contains(&pct), "{req}");
    assert!((pct - pps / 20.0).abs() < 0.6, "{req} vs {speed}");
    // The interval lines add up to the total.
    let total: u64 = text
        .lines()
        .filter(|l| l.contains(" tx ") && l.contains(" pkts "))
        .map(|l| {
            let at = l.find('(').unwrap();
            l[at + 1..]
                .split(' ')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, 4000, "{text}");
    // The JSON of the same command says the same counts.
    let json = pktlab(&[&args[..], &["--json"]].concat());
    assert_eq!(json.code, 0, "{}", json.stderr);
    let s = summary(&json.stdout);
    assert_eq!((u(&s, "packets"), u(&s, "bytes")), (4000, 4000 * 128));
}
