//! `pktlab gen` → `pktlab recv` over AF_PACKET on veth pairs and on the
//! built-in lab, in namespaces the tests create (root needed).

mod common;

use std::time::Duration;

use common::{counts, ok_in, one_at_a_time, summary, u, Lab, Receiver, VethNs};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn gen_to_recv_is_exact_at_a_modest_rate() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let rx = Receiver::start(&v.ns, &["-i", "vb", "-n", "20000", "-t", "50"]);
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "-D",
            &v.mac("vb"),
            "-n",
            "20000",
            "-R",
            "50kpps",
            "--json",
        ],
    );
    let tx = summary(&out);
    assert_eq!(u(&tx, "packets"), 20000);
    assert_eq!(u(&tx, "bytes"), 20000 * 64);
    assert_eq!(u(&tx, "flows"), 2000);
    assert_eq!(u(&tx["iface"], "tx_packets"), 20000);
    let (lines, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (20000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&s, "bytes"), 20000 * 64);
    assert_eq!(u(&s, "streams"), 2000);
    // The interface's own count agrees.
    assert_eq!(u(&s["iface"], "rx_packets"), 20000);
    assert_eq!(u(&s["iface"], "rx_dropped"), 0);
    // Sender and receiver share the clock: latency is measured.
    let lat = &s["latency_ns"];
    assert_eq!(u(lat, "count"), 20000);
    assert!(
        u(lat, "min") <= u(lat, "p50") && u(lat, "p99") <= u(lat, "max"),
        "{lat}"
    );
    // A veth pair in one namespace: above zero, and far below a second even
    // on a busy machine (the exact values are tested on a pcap replay in
    // tests/measured.rs).
    assert!(u(lat, "min") > 0, "{lat}");
    assert!(u(lat, "max") < 1_000_000_000, "{lat}");
    // The intervals add up to the total.
    let sum: u64 = lines
        .iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| u(l, "packets"))
        .sum();
    assert_eq!(sum, 20000);
}

#[test]
fn ipv6_imix_and_threads_are_exact() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    // IPv6 lab ranges, IMIX starting at the smallest IPv6 frame (84 with
    // the 594/1518 of Simple IMIX), 2 TX and 2 RX threads.
    let rx = Receiver::start(&v.ns, &["-i", "vb", "-n", "12000", "-p", "2", "-t", "50"]);
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "-6",
            "-D",
            &v.mac("vb"),
            "-l",
            "84:7,594:4,1518:1",
            "-n",
            "12000",
            "-p",
            "2",
            "-R",
            "40kpps",
            "--json",
        ],
    );
    let tx = summary(&out);
    assert_eq!(u(&tx, "packets"), 12000);
    let cycle = 7 * 84 + 4 * 594 + 1518;
    assert_eq!(u(&tx, "bytes"), 1000 * cycle);
    let threads = tx["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(u(&threads[0], "packets") + u(&threads[1], "packets"), 12000);
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (12000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&s, "bytes"), 1000 * cycle);
}

#[test]
fn seed_000_command_through_the_lab_gives_2000_flows() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let rx = Receiver::start(&lab.ns("rcv"), &["-i", "r0", "-n", "10000", "-t", "50"]);
    // BSDRP's pkt-gen command, translated: the DUT's MAC comes from the
    // generator namespace's route and neighbour tables.
    let out = ok_in(
        &lab.ns("gen"),
        &[
            "gen",
            "-i",
            "g0",
            "-n",
            "10000",
            "-d",
            "198.19.10.1:2000-198.19.10.100",
            "-s",
            "198.18.10.1:2000-198.18.10.20",
            "-l",
            "64",
            "-R",
            "20kpps",
            "--json",
        ],
    );
    assert_eq!(u(&summary(&out), "packets"), 10000);
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (10000, 2000, 0, 0, 0, 0));
}

/// The DUT drops every frame whose sequence number is 2 and duplicates every
/// frame whose sequence number is 3, by matching the test payload with nft:
/// the receiver must find exactly that many lost and duplicate frames.
#[test]
fn loss_and_duplicates_in_the_dut_are_found_per_stream() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    // The sequence number is at UDP payload offset 5: bit 64 + 40 of the
    // transport header.
    let rules = "table ip pktlabtest {\n\
        chain forward_test {\n\
          type filter hook forward priority 0;\n\
          udp dport 2000 @th,104,32 2 counter drop\n\
          udp dport 2000 @th,104,32 3 counter dup to 198.19.0.208 device \"d1\"\n\
        }\n\
      }\n";
    let path = std::env::temp_dir().join(format!("pktlab-test-{}.nft", std::process::id()));
    std::fs::write(&path, rules).unwrap();
    common::sh(&format!("ip netns exec {dut} nft -f {}", path.display()));
    std::fs::remove_file(&path).unwrap();

    // 5 frames per flow (sequence numbers 0..4) over 2000 flows.
    let rx = Receiver::start(&lab.ns("rcv"), &["-i", "r0", "-W", "2", "-t", "50"]);
    ok_in(
        &lab.ns("gen"),
        &["gen", "-i", "g0", "-n", "10000", "-R", "20kpps", "-q"],
    );
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (10000 - 2000 + 2000, 2000, 2000, 0, 2000, 0));
}

#[test]
fn interrupt_prints_the_summary_so_far() {
    let _serial = one_at_a_time();
    let v = VethNs::new();
    let mut child = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &v.ns,
            common::PKTLAB,
            "gen",
            "-i",
            "va",
            "-D",
        ])
        .arg(v.mac("vb"))
        .args(["-R", "10kpps", "--interval", "200ms", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first interval line says it is sending.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut lines, &mut first).unwrap();
    assert!(first.contains(r#""type":"interval""#), "{first}");
    // `ip netns exec` execs pktlab, so the child's pid is pktlab's.
    common::sh(&format!("kill -INT {}", child.id()));
    let mut stdout = first;
    std::io::Read::read_to_string(&mut lines, &mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let s = summary(&stdout);
    assert_eq!(s["interrupted"], true);
    let sent = u(&s, "packets");
    assert!(sent > 0);
    // Every frame sent was handed to the interface.
    assert_eq!(u(&s["iface"], "tx_packets"), sent);
}

/// Frames written by `gen --io pcap`, damaged on purpose (two dropped, one
/// sent twice, two swapped) and replayed through an AF_PACKET TX ring into a
/// veth: the receiver must report exactly that damage.
#[test]
fn replayed_damage_is_found_exactly() {
    let _serial = one_at_a_time();
    use pcap_file::pcap::PcapReader;
    use pktlab_io::afpacket::{AfPacketTx, TxRingConfig};
    use pktlab_io::port::TxPort;

    let v = VethNs::new();
    let file = std::env::temp_dir().join(format!("pktlab-replay-{}.pcap", std::process::id()));
    let io = format!("pcap:{}", file.display());
    let r = common::pktlab(&["gen", "--io", &io, "-n", "6000", "-D", &v.mac("vb"), "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut reader = PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    while let Some(p) = reader.next_packet() {
        frames.push(p.unwrap().data.into_owned());
    }
    std::fs::remove_file(&file).unwrap();
    assert_eq!(frames.len(), 6000);

    // Frame i is flow i % 2000 with sequence number i / 2000.
    let mut replay: Vec<&[u8]> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        match i {
            10 | 2500 => {}                     // lost: flow 10 seq 0, flow 500 seq 1
            3000 => replay.push(&frames[5000]), // flow 1000: seq 2 before seq 1
            5000 => replay.push(&frames[3000]),
            100 => replay.extend([&f[..], &f[..]]), // flow 100 seq 0, twice
            _ => replay.push(f),
        }
    }
    let rx = Receiver::start(&v.ns, &["-i", "vb", "-n", "5999", "-t", "50"]);
    let ns = v.ns.clone();
    std::thread::scope(|s| {
        s.spawn(|| {
            pktlab_engine::netns::enter(&ns).unwrap();
            let mut tx = AfPacketTx::open("va", &TxRingConfig::default()).unwrap();
            let mut next = 0;
            while next < replay.len() {
                let want = (replay.len() - next).min(64);
                next += tx
                    .send_batch(want, |i, slot, _| {
                        let f = replay[next + i];
                        slot[..f.len()].copy_from_slice(f);
                        f.len()
                    })
                    .unwrap();
            }
            tx.flush().unwrap();
        });
    });
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (5999, 2000, 2, 1, 1, 0));
}
