//! `pktlab gen --io xdp`, the XDP live-frame generator, into `pktlab recv
//! --io afpacket` on veth pairs and through the built-in lab, in namespaces
//! the tests create (root needed).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{counts, ok_in, one_at_a_time, pktlab_in, sh, summary, u, Lab, Receiver, VethNs};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(120);

/// A veth pair whose receiving end `vb` has GRO on: `va` takes redirected
/// frames.
fn ready(queues: u32) -> VethNs {
    let v = VethNs::with_queues(queues);
    v.exec("ethtool -K vb gro on");
    v
}

/// What `bpftool KIND show id ID` says, `None` once the object is gone.
/// (Listing every object instead races with other tests' objects coming
/// and going.)
fn bpf_object(kind: &str, id: &str) -> Option<String> {
    let out = Command::new("bpftool")
        .args([kind, "show", "id", id])
        .output()
        .expect("bpftool (apt-get install bpftool)");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits until none of the programs and links is loaded (they go after an
/// RCU grace period).
fn assert_unloaded(progs: &[String], links: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<&String> = progs
            .iter()
            .filter(|i| bpf_object("prog", i).is_some())
            .chain(links.iter().filter(|i| bpf_object("link", i).is_some()))
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "still loaded: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The generator's side is exact. The receiver's AF_PACKET ring may
/// overflow now and then when other tests share the 2 CPUs, so it must
/// count every frame at most once and lose at most 1 %.
#[test]
fn one_million_frames_at_200kpps_arrive_at_most_once() {
    let _serial = one_at_a_time();
    let v = ready(1);
    let rx = Receiver::start(
        &v.ns,
        &["-i", "vb", "--io", "afpacket", "-W", "2", "-t", "100"],
    );
    let started = Instant::now();
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "--io",
            "xdp",
            "-D",
            &v.mac("vb"),
            "-n",
            "1000000",
            "-R",
            "200kpps",
            "--json",
        ],
    );
    let tx = summary(&out);
    // The command, XDP loading included, takes at least the 5 s of pacing.
    assert!(started.elapsed() >= Duration::from_millis(4900));
    assert_eq!(tx["backend"], "xdp (live frames)");
    assert_eq!(tx["threads"][0]["backend"], "xdp (live frames)");
    assert_eq!(u(&tx, "packets"), 1_000_000);
    assert_eq!(u(&tx, "bytes"), 64_000_000);
    assert_eq!(u(&tx, "tx_errors"), 0);
    assert_eq!(u(&tx["iface"], "tx_packets"), 1_000_000);
    // Paced: 1M frames at 200 kpps cannot take less than ~5 s.
    assert!(tx["seconds"].as_f64().unwrap() > 4.9, "{tx}");
    let (lines, s) = rx.wait(WAIT);
    let got = u(&s, "packets");
    assert!((990_000..=1_000_000).contains(&got), "{s}");
    // Nothing twice, nothing reordered, nothing foreign; a frame lost in
    // the middle of its stream shows as a gap, one at its end cannot.
    assert_eq!(
        (
            u(&s, "flows"),
            u(&s, "out_of_order"),
            u(&s, "duplicates"),
            u(&s, "foreign")
        ),
        (2000, 0, 0, 0),
        "{s}"
    );
    assert!(got + u(&s, "lost") <= 1_000_000, "{s}");
    assert_eq!(u(&s, "streams"), 2000);
    assert_eq!(u(&s, "bytes"), 64 * got);
    // The program's TX stamp is CLOCK_REALTIME: latency is measured.
    assert_eq!(u(&s["latency_ns"], "count"), got);
    // The generator's intervals add up to its total.
    let gen_lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sum: u64 = gen_lines
        .iter()
        .filter(|l| l["type"] == "interval")
        .map(|l| u(l, "packets"))
        .sum();
    assert_eq!(sum, 1_000_000);
    assert!(lines.len() > 2);
}

#[test]
fn ipv6_imix_on_two_threads_is_exact() {
    let _serial = one_at_a_time();
    let v = ready(2);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        cpus >= 2,
        "two XDP threads need two CPUs, this machine has {cpus}"
    );
    let rx = Receiver::start(
        &v.ns,
        &["-i", "vb", "--io", "afpacket", "-n", "24000", "-t", "60"],
    );
    let out = ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "--io",
            "xdp",
            "-6",
            "-D",
            &v.mac("vb"),
            "-l",
            "84:7,594:4,1518:1",
            "-n",
            "24000",
            "-p",
            "2",
            "-R",
            "40kpps",
            "--json",
        ],
    );
    let tx = summary(&out);
    let cycle = 7 * 84 + 4 * 594 + 1518;
    assert_eq!(u(&tx, "packets"), 24000);
    assert_eq!(u(&tx, "bytes"), 2000 * cycle);
    let threads = tx["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(
        (u(&threads[0], "packets"), u(&threads[1], "packets")),
        (12000, 12000)
    );
    assert_ne!(threads[0]["cpu"], threads[1]["cpu"]);
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (24000, 2000, 0, 0, 0, 0));
    assert_eq!(u(&s, "bytes"), 2000 * cycle);
}

/// The mix is exact frame by frame at the receiver: a capture there counts
/// 7:4:1 exactly, and the frames parse as IPv4 UDP in a VLAN.
#[test]
fn imix_with_a_vlan_tag_is_exact_at_the_receiver() {
    let _serial = one_at_a_time();
    use pcap_file::pcap::PcapReader;
    let v = ready(1);
    let file = std::env::temp_dir().join(format!("pktlab-xdpgen-{}.pcap", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut tcpdump = Reaped(Some(
        Command::new("ip")
            .args([
                "netns", "exec", &v.ns, "tcpdump", "-i", "vb", "-B", "65536", "-U", "-w",
            ])
            .arg(&file)
            .args(["-c", "12000", "--immediate-mode"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("tcpdump (apt-get install tcpdump)"),
    ));
    // tcpdump says "listening on vb" once its capture is active. The pipe
    // stays open until the end: tcpdump writes its statistics there on exit.
    let mut tcpdump_err =
        std::io::BufReader::new(tcpdump.0.as_mut().unwrap().stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("listening on vb") {
        let mut l = String::new();
        let n = std::io::BufRead::read_line(&mut tcpdump_err, &mut l).unwrap();
        assert!(n > 0, "tcpdump stopped before capturing: {said}");
        said += &l;
    }
    ok_in(
        &v.ns,
        &[
            "gen",
            "-i",
            "va",
            "--io",
            "xdp",
            "--vlan",
            "42",
            "-l",
            "imix",
            "-D",
            &v.mac("vb"),
            "-n",
            "12000",
            "-R",
            "10kpps",
            "-q",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while tcpdump.0.as_mut().unwrap().try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "tcpdump did not see 12000 frames"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut reader = PcapReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let mut sizes = std::collections::BTreeMap::new();
    let mut vlans = 0;
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        let f = etherparse::SlicedPacket::from_ethernet(&p.data).unwrap();
        let ids = f.vlan_ids();
        if ids.len() == 1 {
            assert_eq!(ids[0].value(), 42);
            vlans += 1;
        }
        assert!(matches!(
            f.transport,
            Some(etherparse::TransportSlice::Udp(_))
        ));
        *sizes.entry(p.orig_len + 4).or_insert(0u32) += 1;
    }
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        [(64, 7000), (594, 4000), (1518, 1000)]
    );
    // veth hands the tag to the capture in the skb; libpcap puts it back.
    assert_eq!(vlans, 12000);
}

#[test]
fn through_the_lab_every_frame_is_forwarded() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    // The generator's veth peer is the DUT's d0: it needs GRO (or an XDP
    // program) to take redirected frames.
    sh(&format!(
        "ip netns exec {} ethtool -K d0 gro on",
        lab.ns("dut")
    ));
    let rx = Receiver::start(
        &lab.ns("rcv"),
        &["-i", "r0", "--io", "afpacket", "-n", "100000", "-t", "60"],
    );
    let out = ok_in(
        &lab.ns("gen"),
        &[
            "gen", "-i", "g0", "--io", "xdp", "-n", "100000", "-R", "50kpps", "--json",
        ],
    );
    let tx = summary(&out);
    assert_eq!((u(&tx, "packets"), u(&tx, "tx_errors")), (100_000, 0));
    let (_, s) = rx.wait(WAIT);
    assert_eq!(counts(&s), (100_000, 2000, 0, 0, 0, 0));
}

#[test]
fn a_lab_dut_without_gro_is_refused_with_the_command_that_fixes_it() {
    let _serial = one_at_a_time();
    let lab = Lab::up();
    let dut = lab.ns("dut");
    sh(&format!("ip netns exec {dut} ethtool -K d0 gro off"));
    let r = pktlab_in(
        &lab.ns("gen"),
        &["gen", "-i", "g0", "--io", "xdp", "-n", "10"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let line = r.stderr.trim_end();
    assert!(
        line.starts_with("pktlab: g0 does not accept XDP-redirected frames (xdp-features 0x"),
        "{line}"
    );
    assert!(
        line.ends_with(&format!(
            "lack ndo-xmit): turn GRO on on its veth peer d0 (namespace {dut}): ip netns exec {dut} ethtool -K d0 gro on, or attach an XDP program there"
        )),
        "{line}"
    );
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(r.stdout.is_empty(), "nothing was sent: {}", r.stdout);
}

#[test]
fn settings_that_cannot_deliver_are_usage_errors() {
    let _serial = one_at_a_time();
    let v = ready(1);
    let mac = v.mac("vb");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--batch", "256"],
            "pktlab: batch 256 is too large for veth va: its peer's 256-slot ring overflows above 128 frames per flush; use --batch 128 or less (64 is best)\n",
        ),
        (
            &["-p", "2", "--cpus", "0,1"],
            "pktlab: -p 2 needs 2 receive queues on va's veth peer vb, which has 1: use -p 1, or veths with 2 queues (pktlab lab up --queues 2)\n",
        ),
        (
            &["-l", "9018"],
            "pktlab: frames of 9018 bytes are too large for XDP live frames (at most 3412 bytes): use --io afxdp or afpacket for jumbo frames\n",
        ),
        (
            &["-p", "2", "--cpus", "0"],
            "pktlab: --io xdp runs each of its 2 threads on a CPU of its own, but --cpus lists 1: use fewer threads (-p) or more CPUs (--cpus)\n",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["gen", "-i", "va", "--io", "xdp", "-D", &mac, "-n", "10"];
        args.extend_from_slice(extra);
        let r = pktlab_in(&v.ns, &args);
        if extra.contains(&"0,1") {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert!(
                cpus >= 2,
                "--cpus 0,1 needs two CPUs, this machine has {cpus}"
            );
        }
        assert_eq!((r.code, r.stderr.as_str()), (2, want), "{extra:?}");
    }
    // recv --io xdp is the in-kernel receiver (tests/xdp_recv.rs); -p
    // does not apply to it.
    let r = pktlab_in(
        &v.ns,
        &["recv", "-i", "vb", "--io", "xdp", "-p", "2", "-n", "1"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "pktlab: --io xdp checks frames in the kernel on every CPU that receives them: leave -p at 1\n"
    );
}

#[test]
fn auto_never_picks_xdp() {
    let _serial = one_at_a_time();
    let v = ready(1);
    let rx = Receiver::start(
        &v.ns,
        &["-i", "vb", "--io", "afpacket", "-n", "100", "-t", "30"],
    );
    let out = ok_in(
        &v.ns,
        &["gen", "-i", "va", "-D", &v.mac("vb"), "-n", "100", "--json"],
    );
    let backend = summary(&out)["backend"].as_str().unwrap().to_string();
    assert!(!backend.starts_with("xdp"), "{backend}");
    rx.wait(WAIT);
}

/// Kills and reaps a child process when dropped, also when a test fails.
struct Reaped(Option<std::process::Child>);

impl Reaped {
    fn id(&self) -> u32 {
        self.0.as_ref().map_or(0, |c| c.id())
    }

    fn wait(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The BPF program and link ids process `pid` holds file descriptors of.
fn held_by(pid: u32) -> (Vec<String>, Vec<String>) {
    let (mut progs, mut links) = (Vec::new(), Vec::new());
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return (progs, links);
    };
    for e in dir.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for l in text.lines() {
            if let Some(id) = l.strip_prefix("prog_id:") {
                progs.push(id.trim().to_string());
            } else if let Some(id) = l.strip_prefix("link_id:") {
                links.push(id.trim().to_string());
            }
        }
    }
    progs.sort();
    progs.dedup();
    (progs, links)
}

/// The program, its counters and its anchor are gone after a normal exit
/// and after Ctrl-C.
#[test]
fn nothing_is_left_after_exit_and_after_ctrl_c() {
    let _serial = one_at_a_time();
    let v = ready(1);
    let mac = v.mac("vb");
    for ctrl_c in [false, true] {
        let child = Reaped(Some(
            Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &v.ns,
                    common::PKTLAB,
                    "gen",
                    "-i",
                    "va",
                    "--io",
                    "xdp",
                    "-D",
                ])
                .arg(&mac)
                .args(["-R", "10kpps", "--json"])
                .args(if ctrl_c { &[][..] } else { &["-t", "2"][..] })
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        ));
        // `ip netns exec` execs pktlab: the child's pid is pktlab's. Wait
        // for its three programs and three links (the two counters, and
        // the generator attached to the anchor).
        let deadline = Instant::now() + Duration::from_secs(20);
        let (progs, links) = loop {
            let (p, l) = held_by(child.id());
            if p.len() == 3 && l.len() == 3 {
                break (p, l);
            }
            assert!(
                Instant::now() < deadline,
                "the generator never loaded: {p:?} {l:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let shown: Vec<String> = links
            .iter()
            .map(|id| bpf_object("link", id).unwrap_or_else(|| panic!("link {id} is not loaded")))
            .collect();
        assert!(
            shown
                .iter()
                .any(|l| l.contains(": xdp ")
                    && progs.iter().any(|p| l.contains(&format!("prog {p}")))),
            "the anchor attachment: {shown:?}"
        );
        // The anchor's namespace is not the test's: nothing new here.
        assert!(!v.ip("link show").contains("xg0"));
        if ctrl_c {
            std::thread::sleep(Duration::from_millis(500));
            sh(&format!("kill -INT {}", child.id()));
        }
        let out = child.wait();
        assert!(out.status.success(), "{:?}", out.status);
        let s = summary(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(s["interrupted"], ctrl_c);
        assert!(u(&s, "packets") > 0);
        assert_eq!(u(&s["iface"], "tx_packets"), u(&s, "packets"));
        assert_unloaded(&progs, &links);
    }
}
