//! Test helpers: a private network namespace holding one veth pair, and
//! frame builders.
//!
//! Every packet the tests send stays inside a namespace created here. The
//! namespace (and with it the veth pair) is deleted on drop, also when the
//! test panics; namespaces left behind by a killed test run (named
//! `pktio-<pid>-<n>` with a dead pid) are swept when the next one is created.

#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

pub const MAC_A: [u8; 6] = [0x02, 0x70, 0x6b, 0x74, 0x00, 0x0a];
pub const MAC_B: [u8; 6] = [0x02, 0x70, 0x6b, 0x74, 0x00, 0x0b];

/// A network namespace `pktio-<pid>-<n>` with a veth pair `a` <-> `b`, both
/// up, IPv6 off (so the kernel sends nothing on its own) and no addresses.
pub struct Netns {
    pub name: String,
    /// Veth end A (MAC_A); the names are unique on the host too.
    pub a: String,
    /// Veth end B (MAC_B).
    pub b: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("running ip (apt-get install iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

fn mac_str(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Deletes `pktio-<pid>-*` namespaces whose test process is gone.
fn sweep_stale() {
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix("pktio-") else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

impl Netns {
    pub fn new() -> Netns {
        sweep_stale();
        let pid = std::process::id();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let ns = Netns {
            name: format!("pktio-{pid}-{n}"),
            a: format!("pa{pid}_{n}"),
            b: format!("pb{pid}_{n}"),
        };
        assert!(ns.a.len() < 16);
        ip(&["netns", "add", &ns.name]);
        // From here on, Drop deletes the namespace whatever happens.
        ns.run(|| {
            for f in ["all", "default"] {
                std::fs::write(format!("/proc/sys/net/ipv6/conf/{f}/disable_ipv6"), "1")
                    .expect("disabling IPv6 in the test namespace");
            }
            std::fs::write("/proc/sys/net/ipv4/ip_forward", "0").unwrap();
        });
        ip(&[
            "link",
            "add",
            &ns.a,
            "address",
            &mac_str(MAC_A),
            "netns",
            &ns.name,
            "type",
            "veth",
            "peer",
            "name",
            &ns.b,
            "address",
            &mac_str(MAC_B),
            "netns",
            &ns.name,
        ]);
        for dev in [&ns.a, &ns.b, "lo"] {
            ip(&["-n", &ns.name, "link", "set", dev, "up"]);
        }
        ns
    }

    /// Runs `f` on a new thread that has joined this namespace, and returns
    /// its result (re-raising its panic).
    pub fn run<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        let path = format!("/var/run/netns/{}", self.name);
        std::thread::scope(|s| {
            s.spawn(|| {
                let file = std::fs::File::open(&path).expect("opening the netns file");
                // SAFETY: setns on a valid namespace fd; it only changes this
                // (short-lived, test-owned) thread's network namespace.
                let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
                f()
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    pub fn ip(&self, args: &[&str]) {
        let mut v = vec!["-n", &self.name];
        v.extend_from_slice(args);
        ip(&v);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// An Ethernet/IPv4/UDP frame from 198.18.0.1:`sport` to 198.19.0.1:2000,
/// `len` bytes long (without FCS, >= 46), whose payload starts with `seq`.
pub fn udp_frame(src: [u8; 6], dst: [u8; 6], sport: u16, seq: u32, len: usize) -> Vec<u8> {
    assert!(len >= 14 + 20 + 8 + 4);
    let mut payload = vec![0u8; len - 42];
    payload[..4].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in payload.iter_mut().enumerate().skip(4) {
        *b = (i as u32 ^ seq) as u8;
    }
    let mut out = Vec::with_capacity(len);
    etherparse::PacketBuilder::ethernet2(src, dst)
        .ipv4([198, 18, 0, 1], [198, 19, 0, 1], 64)
        .udp(sport, 2000)
        .write(&mut out, &payload)
        .unwrap();
    assert_eq!(out.len(), len);
    out
}

/// Sends every frame of `frames` (each slot gets one whole frame), at most
/// `batch` frames per batch, sleeping `pause` and calling `between` (to
/// drain receivers) after each batch.
pub fn send_frames<T: pktlab_io::port::TxPort>(
    tx: &mut T,
    frames: &[Vec<u8>],
    batch: usize,
    pause: std::time::Duration,
    mut between: impl FnMut(),
) {
    let mut next = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while next < frames.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "sending stalled at {next}"
        );
        let n = (frames.len() - next).min(batch);
        let sent = tx
            .send_batch(n, |i, slot, _| {
                let f = &frames[next + i];
                slot[..f.len()].copy_from_slice(f);
                f.len()
            })
            .unwrap();
        next += sent;
        between();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    tx.flush().unwrap();
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}
