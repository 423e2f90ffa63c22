//! `pktlab recv --io xdp` (the in-kernel receiver) on veth pairs in
//! namespaces the tests create (root needed).
//!
//! The exact comparisons run `recv --io xdp --pass` and `recv --io
//! afpacket` on the same interface at the same time: the XDP program
//! checks each frame and passes it on, the AF_PACKET receiver sees it next,
//! so both count the very same frames.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{counts, ok_in, one_at_a_time, pktlab_in, summary, u, Lab, Receiver, VethNs};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(90);

// Every test that counts exactly runs alone (common::one_at_a_time): the
// million frames at full speed beside the built-in lab's DUT made it drop
// 938 of 10000 frames on a 2-core CI machine.

/// Receivers that stop 2 s after the last frame.
const IDLE: [&str; 4] = ["-W", "2", "-t", "80"];

fn xdp_and_afpacket(v: &VethNs, extra: &[&str]) -> (Receiver, Receiver) {
    let mut xdp = vec!["-i", "vb", "--io", "xdp", "--pass"];
    xdp.extend_from_slice(&IDLE);
    xdp.extend_from_slice(extra);
    let x = Receiver::start(&v.ns, &xdp);
    assert!(
        x.ready["backend"].as_str().unwrap().starts_with("xdp ("),
        "{}",
        x.ready
    );
    let mut afp = vec!["-i", "vb", "--io", "afpacket"];
    afp.extend_from_slice(&IDLE);
    (x, Receiver::start(&v.ns, &afp))
}

/// Both summaries count the same: packets, bytes, flows, streams, lost,
/// out of order, duplicates, foreign.
fn assert_same(x: &Value, a: &Value) {
    assert_eq!(counts(x), counts(a), "xdp {x}\nafpacket {a}");
    assert_eq!(u(x, "bytes"), u(a, "bytes"));
    assert_eq!(u(x, "streams"), u(a, "streams"));
}

fn gen(v: &VethNs, extra: &[&str]) {
    let mac = v.mac("vb");
    let mut args = vec!["gen", "-i", "va", "-D", &mac, "-q"];
    args.extend_from_slice(extra);
    ok_in(&v.ns, &args);
}

#[test]
fn same_counts_as_afpacket_on_the_same_traffic() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let (x, a) = xdp_and_afpacket(&v, &["--interval", "500ms"]);
    gen(&v, &["-n", "40000", "-R", "50kpps"]);
    let (lines, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    assert_eq!(counts(&xs), (40000, 2000, 0, 0, 0, 0));
    assert_same(&xs, &as_);
    assert_eq!(u(&xs, "bytes"), 40000 * 64);
    assert_eq!(u(&xs, "streams"), 2000);
    assert_eq!(u(&xs, "untracked"), 0);
    assert_eq!(u(&xs["iface"], "rx_packets"), 40000);
    assert!(xs["backend"].as_str().unwrap().starts_with("xdp ("));
    // The intervals add up to the total.
    let sum: u64 = lines
        .iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| u(l, "packets"))
        .sum();
    assert_eq!(sum, 40000);
    // Latency on a veth pair: every test frame, above zero and far below a
    // second even on a busy machine, in order.
    let lat = &xs["latency_ns"];
    assert_eq!(u(lat, "count"), 40000);
    let (min, p50, p99, p999, max) = (
        u(lat, "min"),
        u(lat, "p50"),
        u(lat, "p99"),
        u(lat, "p999"),
        u(lat, "max"),
    );
    assert!(min > 0 && max < 1_000_000_000, "{lat}");
    assert!(
        min <= p50 && p50 <= p99 && p99 <= p999 && p999 <= max,
        "{lat}"
    );
    // The same frames timed by AF_PACKET: the medians agree within 1 ms.
    let ap50 = u(&as_["latency_ns"], "p50");
    assert!(
        p50.abs_diff(ap50) < 1_000_000,
        "xdp p50 {p50}, afpacket p50 {ap50}"
    );
}

/// `-n 25000` while 40000 frames come: the program counts exactly the
/// first 25000 (frame i is stream i % 2000, number i / 2000, so every
/// stream got its first 12 or 13 numbers: nothing lost), the intervals
/// add up to them, and the run ends on its own.
#[test]
fn a_count_is_exact() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let x = Receiver::start(
        &v.ns,
        &[
            "-i",
            "vb",
            "--io",
            "xdp",
            "-n",
            "25000",
            "-t",
            "80",
            "--interval",
            "200ms",
        ],
    );
    gen(&v, &["-n", "40000", "-R", "50kpps"]);
    let (lines, xs) = x.wait(WAIT);
    assert_eq!(counts(&xs), (25000, 2000, 0, 0, 0, 0), "{xs}");
    assert_eq!(u(&xs, "streams"), 2000);
    assert_eq!(u(&xs["latency_ns"], "count"), 25000);
    let sum: u64 = lines
        .iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| u(l, "packets"))
        .sum();
    assert_eq!(sum, 25000);
    assert!(!xs["interrupted"].as_bool().unwrap(), "{xs}");
}

/// 20000 frames at 40 kpps into `recv --io xdp --latency <latency>` and
/// AF_PACKET beside it; returns both summaries once checked: the same
/// exact counts, and the run dated by the counters. The idle timeout (`-W
/// 2`, watching the counters) ended the run, not its `-t 80`: 0.5 s of
/// frames and 2 s of silence, with room for a slow machine. The run's
/// duration is the program's first frame to the last look that saw the
/// count grow: at least 0.5 s at 40 kpps (a busy machine may stretch it,
/// both receivers alike), and AF_PACKET's (per-frame stamps) within 0.1 s.
fn dated_by_the_counters(latency: &str) -> (Value, Value) {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let (x, a) = xdp_and_afpacket(&v, &["--latency", latency]);
    let sent = Instant::now();
    gen(&v, &["-n", "20000", "-R", "40kpps"]);
    let (_, xs) = x.wait(WAIT);
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    let (_, as_) = a.wait(WAIT);
    assert_eq!(counts(&xs), (20000, 2000, 0, 0, 0, 0));
    assert_same(&xs, &as_);
    let seconds = xs["seconds"].as_f64().unwrap();
    let stamped = as_["seconds"].as_f64().unwrap();
    assert!(seconds >= 0.45, "{seconds} s, AF_PACKET {stamped} s");
    assert!(
        (seconds - stamped).abs() < 0.1,
        "{seconds} s, AF_PACKET {stamped} s"
    );
    (xs, as_)
}

/// `--latency off`: the same exact counts with no frame timed.
#[test]
fn untimed_counts_exactly_without_latency() {
    let (xs, _) = dated_by_the_counters("off");
    assert!(xs["latency_ns"].is_null(), "{xs}");
}

/// `--latency 1/8`: the same exact counts, one test frame in 8 timed on
/// each CPU (ceil of its frames / 8: 2500 plus at most one per CPU).
#[test]
fn sampled_latency_counts_exactly_and_times_one_frame_in_n() {
    let (xs, as_) = dated_by_the_counters("1/8");
    let l = &xs["latency_ns"];
    assert_eq!(u(l, "one_in"), 8, "{xs}");
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let timed = u(l, "count");
    assert!((2500..=2500 + cpus).contains(&timed), "{timed} timed");
    assert_eq!(u(&as_["latency_ns"], "count"), 20000);
    assert!(as_["latency_ns"].get("one_in").is_none(), "{as_}");
    // A veth hop takes microseconds, not nothing and not a second.
    assert!(u(l, "min") > 0 && u(l, "max") < 1_000_000_000, "{l}");
}

/// The program the receiver attached to vb, by its name.
fn attached_program(v: &VethNs) -> String {
    let link = v.exec("ip -d link show vb");
    let at = link.find("prog/xdp id ").expect("an XDP program on vb");
    link[at..]
        .split_whitespace()
        .skip_while(|w| *w != "name")
        .nth(1)
        .unwrap()
        .to_string()
}

/// At MTU 1500 the program for one-buffer frames runs; at MTU 9000 the
/// multi-buffer one, and 9018-byte frames are counted as AF_PACKET counts
/// them, bytes included.
#[test]
fn jumbo_frames_take_the_multi_buffer_program() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let x = Receiver::start(&v.ns, &["-i", "vb", "--io", "xdp", "-t", "30"]);
    assert_eq!(attached_program(&v), "xdprecv_linear");
    drop(x);
    let v = VethNs::new();
    v.exec("ip link set va mtu 9000");
    v.exec("ip link set vb mtu 9000");
    let (x, a) = xdp_and_afpacket(&v, &[]);
    assert_eq!(attached_program(&v), "xdprecv");
    gen(
        &v,
        &[
            "--io", "afpacket", "-l", "9018", "-n", "2000", "-R", "5kpps",
        ],
    );
    let (_, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    assert_eq!(counts(&xs), (2000, 2000, 0, 0, 0, 0), "{xs}");
    assert_same(&xs, &as_);
    assert_eq!(u(&xs, "bytes"), 2000 * 9018);
}

/// The generator at full speed (`gen --io xdp`) into the XDP receiver:
/// a million frames in 2000 streams, every one counted and in order.
#[test]
fn a_million_frames_from_the_xdp_generator_exactly() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let mut args = vec!["-i", "vb", "--io", "xdp"];
    args.extend_from_slice(&IDLE);
    let x = Receiver::start(&v.ns, &args);
    let mac = v.mac("vb");
    let out = ok_in(
        &v.ns,
        &[
            "gen", "-i", "va", "--io", "xdp", "-D", &mac, "-n", "1000000", "--json",
        ],
    );
    assert_eq!(u(&summary(&out), "packets"), 1_000_000);
    let (_, xs) = x.wait(WAIT);
    assert_eq!(counts(&xs), (1_000_000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&xs, "streams"), 2000);
    assert_eq!(u(&xs, "bytes"), 64_000_000);
    assert_eq!(u(&xs["iface"], "rx_packets"), 1_000_000);
    assert_eq!(u(&xs["latency_ns"], "count"), 1_000_000);
}

/// The DUT of the built-in lab drops every frame numbered 2 and duplicates
/// every frame numbered 3 (nft matching the test payload): both receivers
/// on r0 find exactly 2000 lost and 2000 duplicates.
#[test]
fn loss_and_duplicates_made_in_the_dut_same_as_afpacket() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    let rules = "table ip pktlabxdp {\n\
        chain forward_test {\n\
          type filter hook forward priority 0;\n\
          udp dport 2000 @th,104,32 2 counter drop\n\
          udp dport 2000 @th,104,32 3 counter dup to 198.19.0.208 device \"d1\"\n\
        }\n\
      }\n";
    let path = std::env::temp_dir().join(format!("pktlab-xdprecv-{}.nft", std::process::id()));
    std::fs::write(&path, rules).unwrap();
    common::sh(&format!("ip netns exec {dut} nft -f {}", path.display()));
    std::fs::remove_file(&path).unwrap();
    let rcv = lab.ns("rcv");
    let mut xargs = vec!["-i", "r0", "--io", "xdp", "--pass"];
    xargs.extend_from_slice(&IDLE);
    let x = Receiver::start(&rcv, &xargs);
    let mut aargs = vec!["-i", "r0", "--io", "afpacket"];
    aargs.extend_from_slice(&IDLE);
    let a = Receiver::start(&rcv, &aargs);
    // 5 frames per flow (sequence numbers 0..4) over 2000 flows.
    let before = lab.refused();
    ok_in(
        &lab.ns("gen"),
        &["gen", "-i", "g0", "-n", "10000", "-R", "20kpps", "-q"],
    );
    let (_, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    let refused = lab.refused().since(&before);
    if refused.total() == 0 {
        assert_eq!(counts(&xs), (10000, 2000, 2000, 0, 2000, 0));
        assert_same(&xs, &as_);
    } else {
        // A loaded host: a lab backlog refused frames too, so the counts
        // are only bounded. d0's refusals come before nft (a refused frame
        // 3 is also one duplicate fewer); r0's come after the XDP program
        // passed the frame up, so AF_PACKET misses what XDP counted.
        let (x, a) = (counts(&xs).0, counts(&as_).0);
        assert!(
            x <= 10000 && x + 2 * refused.dut + refused.rcv >= 10000,
            "{x} received with {refused:?}: {xs}"
        );
        assert!(
            a <= x && x - a <= refused.rcv,
            "xdp {x}, afpacket {a} with {refused:?}"
        );
    }
}

#[test]
fn ipv6_imix_and_vlan_same_as_afpacket() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let (x, a) = xdp_and_afpacket(&v, &[]);
    gen(
        &v,
        &[
            "-6",
            "-l",
            "84:7,594:4,1518:1",
            "-n",
            "12000",
            "-R",
            "40kpps",
        ],
    );
    let (_, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    assert_eq!(counts(&xs), (12000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&xs, "bytes"), 1000 * (7 * 84 + 4 * 594 + 1518));
    assert_same(&xs, &as_);

    let (x, a) = xdp_and_afpacket(&v, &[]);
    gen(&v, &["--vlan", "100", "-n", "10000", "-R", "40kpps"]);
    let (_, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    assert_eq!(counts(&xs), (10000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&xs, "bytes"), 10000 * 64);
    assert_same(&xs, &as_);
}

/// Frames written by `gen --io pcap`: frame i is flow i % 2000 with
/// sequence number i / 2000.
fn pcap_frames(v: &VethNs, n: usize) -> Vec<Vec<u8>> {
    use pcap_file::pcap::PcapReader;
    let file = std::env::temp_dir().join(format!("pktlab-xdprecv-{}.pcap", std::process::id()));
    let io = format!("pcap:{}", file.display());
    let count = n.to_string();
    let r = common::pktlab(&["gen", "--io", &io, "-n", &count, "-D", &v.mac("vb"), "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut reader = PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut frames = Vec::new();
    while let Some(p) = reader.next_packet() {
        frames.push(p.unwrap().data.into_owned());
    }
    std::fs::remove_file(&file).unwrap();
    assert_eq!(frames.len(), n);
    frames
}

/// Sends `frames` into va from a thread in the namespace, on `cpu` if given.
fn replay(ns: &str, frames: &[&[u8]], cpu: Option<usize>) {
    use pktlab_io::afpacket::{AfPacketTx, TxRingConfig};
    use pktlab_io::port::TxPort;
    pktlab_engine::netns::enter(ns).unwrap();
    if let Some(c) = cpu {
        pktlab_engine::affinity::pin_current_thread(c).unwrap();
    }
    let mut tx = AfPacketTx::open("va", &TxRingConfig::default()).unwrap();
    let mut next = 0;
    while next < frames.len() {
        let want = (frames.len() - next).min(32);
        next += tx
            .send_batch(want, |i, slot, _| {
                let f = frames[next + i];
                slot[..f.len()].copy_from_slice(f);
                f.len()
            })
            .unwrap();
    }
    tx.flush().unwrap();
}

/// Two dropped, one sent twice, two swapped, one frame of a stream beyond
/// the limit and three foreign ones: the XDP receiver finds exactly the
/// damage AF_PACKET and AF_XDP find, and the values counted by hand.
#[test]
fn planted_loss_reorder_duplicates_and_hostile_frames() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let frames = pcap_frames(&v, 6000);
    let mut bad_magic = frames[7].clone();
    bad_magic[14 + 20 + 8] ^= 0xff;
    let truncated = frames[8][..14 + 20 + 8 + 13].to_vec();
    let mut beyond = frames[9].clone();
    beyond[14 + 20 + 8 + 2] = 0xff; // stream id 0xff0009, above any limit
    let arp = {
        let mut f = vec![0xffu8; 6];
        f.extend_from_slice(&frames[0][6..12]);
        f.extend_from_slice(&[0x08, 0x06]);
        f.extend_from_slice(&[0u8; 46]);
        f
    };
    let mut sent: Vec<&[u8]> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        match i {
            10 | 2500 => {}                   // lost: flow 10 seq 0, flow 500 seq 1
            3000 => sent.push(&frames[5000]), // flow 1000: seq 2 before seq 1
            5000 => sent.push(&frames[3000]),
            100 => sent.extend([&f[..], &f[..]]), // flow 100 seq 0, twice
            _ => sent.push(f),
        }
    }
    sent.extend([&bad_magic[..], &truncated[..], &arp[..], &beyond[..]]);
    let (x, a) = xdp_and_afpacket(&v, &[]);
    let ns = v.ns.clone();
    std::thread::scope(|s| {
        s.spawn(|| replay(&ns, &sent, None));
    });
    let (_, xs) = x.wait(WAIT);
    let (_, as_) = a.wait(WAIT);
    // 5999 test frames + the one beyond the limit; 3 foreign.
    assert_eq!(counts(&xs), (6003, 2000, 2, 1, 1, 3));
    assert_eq!(u(&xs, "untracked"), 1);
    assert_eq!(u(&xs, "streams"), 2000);
    // AF_PACKET tracks stream ids below 2^20 (crates/engine/src/seq.rs's
    // MAX_STREAMS): 0xff0009 is untracked there too.
    assert_eq!(counts(&as_), (6003, 2000, 2, 1, 1, 3));
    assert_eq!(u(&as_, "streams"), 2000);
    assert_eq!(u(&as_, "untracked"), 1);
    // The same frames again into the AF_XDP receiver (it cannot share the
    // interface's XDP hook with the program), in slices of 500 so that
    // its ring never overflows, each once the receiver has counted the
    // ones before: the very same counts.
    let mut args = vec!["-i", "vb", "--io", "afxdp", "--interval", "100ms"];
    args.extend_from_slice(&IDLE);
    let mut f = Receiver::start(&v.ns, &args);
    let mut replayed = 0u64;
    for slice in sent.chunks(500) {
        std::thread::scope(|s| {
            s.spawn(|| replay(&ns, slice, None));
        });
        replayed += slice.len() as u64;
        f.wait_counted(
            "a slice of 500 frames",
            Duration::from_secs(20),
            |frames, _| frames >= replayed,
        );
    }
    let (_, fs) = f.wait(WAIT);
    assert!(fs["backend"].as_str().unwrap().starts_with("afxdp"), "{fs}");
    assert_eq!(u(&fs, "ring_drops"), 0, "{fs}");
    assert_eq!(counts(&fs), (6003, 2000, 2, 1, 1, 3), "{fs}");
    assert_eq!((u(&fs, "streams"), u(&fs, "untracked")), (2000, 1));
}

/// Given the generator's ranges (20 sources x 50 destinations), the
/// program keeps state for exactly their 1000 streams; `--streams` still
/// overrides it; every stream of that traffic is checked.
#[test]
fn the_stream_state_is_sized_from_the_ranges() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let ranges = [
        "-s",
        "198.18.10.1:2000-198.18.10.20",
        "-d",
        "198.19.10.1:2000-198.19.10.50",
    ];
    let mut args = vec!["recv", "-i", "vb", "--io", "xdp", "-t", "1", "--json"];
    args.extend(ranges);
    let r = pktlab_in(&v.ns, &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("xdp: state for 1000 streams (--streams)"),
        "{}",
        r.stderr
    );
    args.extend(["--streams", "300"]);
    let r = pktlab_in(&v.ns, &args);
    assert!(
        r.stderr.contains("xdp: state for 300 streams (--streams)"),
        "{}",
        r.stderr
    );
    let mut rx = vec!["-i", "vb", "--io", "xdp"];
    rx.extend_from_slice(&IDLE);
    rx.extend(ranges);
    let x = Receiver::start(&v.ns, &rx);
    let mut g = vec!["-n", "3000", "-R", "30kpps"];
    g.extend(ranges);
    gen(&v, &g);
    let (_, xs) = x.wait(WAIT);
    assert_eq!(counts(&xs), (3000, 1000, 0, 0, 0, 0), "{xs}");
    assert_eq!((u(&xs, "streams"), u(&xs, "untracked")), (1000, 0));
    assert_eq!(
        (u(&xs, "streams_expected"), u(&xs, "streams_missing")),
        (1000, 0)
    );
}

/// Streams beyond --streams are counted as untracked, never checked; the
/// memory line and the human text say so, and that one test frame in 4
/// was timed (`--latency 1/4`; untracked frames are timed too).
#[test]
fn streams_beyond_the_limit_are_untracked_in_text_too() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let mut child = Command::new("ip")
        .args(["netns", "exec", &v.ns, common::PKTLAB, "recv", "-i", "vb"])
        .args(["--io", "xdp", "--streams", "1000", "-W", "2", "-t", "80"])
        .args(["--latency", "1/4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The header line says it is attached.
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    std::io::BufRead::read_line(&mut out, &mut header).unwrap();
    assert!(header.starts_with("Receiving with xdp ("), "{header}");
    gen(&v, &["-n", "20000", "-R", "50kpps"]);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    // 1000 streams of 64 bytes, plus per CPU 104 bytes of counters and
    // 4352 buckets (34 powers of two of 128) of 8 bytes, plus the 8 bytes
    // of the -n count.
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    let ncpus = pktlab_engine::affinity::parse_cpu_list(cpus.trim())
        .unwrap()
        .len() as u64;
    let bytes = 1000 * 64 + ncpus * (104 + 4352 * 8) + 8;
    assert!(
        err.contains("xdp: state for 1000 streams (--streams)")
            && err.contains(&format!(
                "({bytes} bytes); one test frame in 4 is timed per CPU (--latency 1/4)\n"
            )),
        "{err}"
    );
    // 20000 test frames: 5000 timed, plus at most one per CPU.
    let at = text
        .find("\nLatency (1 test frame in 4 timed per CPU: ")
        .expect(&text)
        + 43;
    let timed: u64 = text[at..].split(')').next().unwrap().parse().expect(&text);
    assert!((5000..=5000 + ncpus).contains(&timed), "{text}");
    assert!(text[at..].contains("): min "), "{text}");
    assert!(
        text.contains(
            "Test traffic: 1000 flows in 1000 streams, 0 lost, 0 out of order, 0 duplicates; 0 foreign frames\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("Untracked: 10000 test frames of streams beyond the receiver's stream limit, counted but not checked\n"),
        "{text}"
    );
    assert!(
        text.contains("Received 20000 packets, 64.00 bytes on average"),
        "{text}"
    );
}

/// Two receive queues, each fed from its own CPU (XPS), one stream's
/// numbers split between them and sent at the same time: the program runs
/// on both CPUs and the stream's state, shared under its lock, loses and
/// duplicates nothing.
#[test]
fn one_stream_on_two_cpus_at_once() {
    let _serial = one_at_a_time();
    let cpus = pktlab_engine::affinity::allowed_cpus();
    assert!(
        cpus.len() >= 2,
        "needs two CPUs, this process may use {cpus:?}"
    );
    let v = VethNs::with_queues(2);
    for (q, c) in cpus[..2].iter().enumerate() {
        v.exec(&format!(
            "sh -c 'echo {:x} > /sys/class/net/va/queues/tx-{q}/xps_cpus'",
            1u64 << c
        ));
    }
    // 20000 frames of one flow, stream 0: sequence number i is frame i.
    let one = pcap_frames_one_flow(&v, 20000);
    let even: Vec<&[u8]> = one.iter().step_by(2).map(|f| &f[..]).collect();
    let odd: Vec<&[u8]> = one.iter().skip(1).step_by(2).map(|f| &f[..]).collect();
    let mut args = vec!["-i", "vb", "--io", "xdp"];
    args.extend_from_slice(&IDLE);
    let x = Receiver::start(&v.ns, &args);
    let ns = v.ns.clone();
    std::thread::scope(|s| {
        s.spawn(|| replay(&ns, &even, Some(cpus[0])));
        s.spawn(|| replay(&ns, &odd, Some(cpus[1])));
    });
    let (_, xs) = x.wait(WAIT);
    assert_eq!(u(&xs, "packets"), 20000);
    assert_eq!(u(&xs, "streams"), 1);
    // Every number arrived once: nothing lost, nothing twice, whatever the
    // interleaving (the late ones are out of order).
    assert_eq!((u(&xs, "lost"), u(&xs, "duplicates")), (0, 0), "{xs}");
    assert!(u(&xs, "out_of_order") <= 10000, "{xs}");
    // Both CPUs ran the program.
    let threads = xs["threads"].as_array().unwrap();
    let on = |c: usize| {
        threads
            .iter()
            .filter(|t| t["cpu"].as_u64() == Some(c as u64))
            .map(|t| u(t, "packets"))
            .sum::<u64>()
    };
    assert!(on(cpus[0]) > 0 && on(cpus[1]) > 0, "{xs}");
    assert_eq!(on(cpus[0]) + on(cpus[1]), 20000, "{xs}");
}

/// Two receive queues, each fed from its own CPU (XPS), 2000 streams
/// spread over both by stream parity: each CPU's program checks its own
/// streams (the fast path, a stream per queue) and the counts are exact,
/// 10000 frames per CPU.
#[test]
fn streams_spread_over_two_queues() {
    let _serial = one_at_a_time();
    let cpus = pktlab_engine::affinity::allowed_cpus();
    assert!(
        cpus.len() >= 2,
        "needs two CPUs, this process may use {cpus:?}"
    );
    let v = VethNs::with_queues(2);
    for (q, c) in cpus[..2].iter().enumerate() {
        v.exec(&format!(
            "sh -c 'echo {:x} > /sys/class/net/va/queues/tx-{q}/xps_cpus'",
            1u64 << c
        ));
    }
    // Frame i is stream i % 2000 with number i / 2000.
    let frames = pcap_frames(&v, 20000);
    let even: Vec<&[u8]> = frames.iter().step_by(2).map(|f| &f[..]).collect();
    let odd: Vec<&[u8]> = frames.iter().skip(1).step_by(2).map(|f| &f[..]).collect();
    let mut args = vec!["-i", "vb", "--io", "xdp"];
    args.extend_from_slice(&IDLE);
    let x = Receiver::start(&v.ns, &args);
    let ns = v.ns.clone();
    std::thread::scope(|s| {
        s.spawn(|| replay(&ns, &even, Some(cpus[0])));
        s.spawn(|| replay(&ns, &odd, Some(cpus[1])));
    });
    let (_, xs) = x.wait(WAIT);
    assert_eq!(counts(&xs), (20000, 2000, 0, 0, 0, 0), "{xs}");
    assert_eq!(u(&xs, "streams"), 2000);
    let threads = xs["threads"].as_array().unwrap();
    let on = |c: usize| {
        threads
            .iter()
            .filter(|t| t["cpu"].as_u64() == Some(c as u64))
            .map(|t| u(t, "packets"))
            .sum::<u64>()
    };
    assert_eq!((on(cpus[0]), on(cpus[1])), (10000, 10000), "{xs}");
}

/// `n` frames of a single flow (stream 0), sequence numbers 0 to n - 1.
fn pcap_frames_one_flow(v: &VethNs, n: usize) -> Vec<Vec<u8>> {
    use pcap_file::pcap::PcapReader;
    let file = std::env::temp_dir().join(format!("pktlab-xdprecv1-{}.pcap", std::process::id()));
    let io = format!("pcap:{}", file.display());
    let count = n.to_string();
    let mac = v.mac("vb");
    let r = common::pktlab(&[
        "gen",
        "--io",
        &io,
        "-n",
        &count,
        "-D",
        &mac,
        "-s",
        "198.18.10.1:2000",
        "-d",
        "198.19.10.1:2000",
        "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut reader = PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut frames = Vec::new();
    while let Some(p) = reader.next_packet() {
        frames.push(p.unwrap().data.into_owned());
    }
    std::fs::remove_file(&file).unwrap();
    assert_eq!(frames.len(), n);
    frames
}

fn xdp_attached(v: &VethNs, iface: &str) -> bool {
    v.ip(&format!("link show {iface}")).contains("prog/xdp")
}

#[test]
fn nothing_stays_attached_after_exit_ctrl_c_or_kill_9() {
    let v = VethNs::new();
    for signal in [None, Some("INT"), Some("KILL")] {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &v.ns, common::PKTLAB, "recv", "-i", "vb"])
            .args(["--io", "xdp", "--json", "-t", "3"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        std::io::BufRead::read_line(&mut out, &mut ready).unwrap();
        assert!(ready.contains(r#""type":"ready""#), "{ready}");
        assert!(xdp_attached(&v, "vb"), "attached while it runs");
        if let Some(sig) = signal {
            common::sh(&format!("kill -{sig} {}", child.id()));
        }
        let status = child.wait().unwrap();
        match signal {
            Some("KILL") => assert!(!status.success()),
            _ => assert!(status.success(), "{signal:?}: {status:?}"),
        }
        assert!(!xdp_attached(&v, "vb"), "still attached after {signal:?}");
    }
}

#[test]
fn bad_settings_are_usage_errors() {
    let v = VethNs::new();
    for (args, want) in [
        (
            vec!["--streams", "0"],
            "pktlab: invalid stream count 0: give 1 to 16777216 (stream ids are 24 bits)\n",
        ),
        (
            vec!["--streams", "16777217"],
            "pktlab: invalid stream count 16777217: give 1 to 16777216 (stream ids are 24 bits)\n",
        ),
    ] {
        let mut a = vec!["recv", "-i", "vb", "--io", "xdp", "-n", "1"];
        a.extend_from_slice(&args);
        let r = pktlab_in(&v.ns, &a);
        assert_eq!((r.code, r.stderr.as_str()), (2, want), "{args:?}");
    }
    let r = pktlab_in(
        &v.ns,
        &["recv", "-i", "vb", "--io", "afpacket", "--pass", "-n", "1"],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "pktlab: --pass applies to --io xdp only\n")
    );
    let r = pktlab_in(
        &v.ns,
        &["recv", "-i", "vb", "--io", "xdp", "--latency", "maybe"],
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "pktlab: invalid latency 'maybe': use on, off or 1/N with N from 1 to 1048576\n"
        )
    );
    // 1/N: N from 1 to 2^20, digits only.
    for bad in ["1/0", "1/", "2/4", "1/+4", "1/1048577", "1/4x", "1/-4"] {
        let r = pktlab_in(
            &v.ns,
            &["recv", "-i", "vb", "--io", "xdp", "--latency", bad],
        );
        assert_eq!(
            (r.code, r.stderr),
            (2, format!("pktlab: invalid latency '{bad}': use on, off or 1/N with N from 1 to 1048576\n")),
        );
    }
    for (io, latency) in [("afxdp", "off"), ("afpacket", "1/16")] {
        let r = pktlab_in(
            &v.ns,
            &["recv", "-i", "vb", "--io", io, "--latency", latency],
        );
        assert_eq!(
            (r.code, r.stderr),
            (2, format!("pktlab: --latency {latency} applies to --io xdp only (the other receivers time frames per batch or per frame at no cost worth saving)\n"))
        );
    }
    // A summary still comes from a run that saw nothing.
    let r = pktlab_in(
        &v.ns,
        &["recv", "-i", "vb", "--io", "xdp", "-t", "300ms", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = summary(&r.stdout);
    assert_eq!(counts(&s), (0, 0, 0, 0, 0, 0));
    assert!(s["latency_ns"].is_null());
}
