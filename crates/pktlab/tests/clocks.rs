//! The clock parsers of crates/remote/src/ssh/clock.rs on the real
//! programs' output, made here: chronyd (a server and a client that never
//! steers the clock, `chronyd -x`) and ptp4l (a master and a slave with
//! software timestamps and `free_running 1`, so the system clock is never
//! steered either), each in its own network namespace on a veth pair the
//! test makes. Every daemon has its own configuration, pid file, command
//! socket and drift file in a temporary folder: nothing touches /etc or
//! /var/run. Root, chrony and linuxptp needed (scripts/deps installs
//! them).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use pktlab_remote::ssh::clock::{parse_time_status, parse_tracking, HostClock, CLOCK_SCRIPT};
use regex::Regex;

use common::sh;

static NEXT: AtomicU32 = AtomicU32::new(0);
const TAG: &str = "clk";
/// A busy 2-CPU machine may take long to schedule a daemon's first
/// exchanges; a synchronised daemon answers long before this.
const LIMIT: Duration = Duration::from_secs(60);

/// Pids of the processes in namespace `ns`.
fn pids_in(ns: &str) -> Vec<u32> {
    let out = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Deletes the namespaces (and stops the daemons in them) of earlier runs
/// of this test whose process is gone.
fn sweep() {
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(TAG) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(pid) = digits.parse::<u32>() {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                for p in pids_in(&name) {
                    let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
                }
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
            }
        }
    }
}

/// Two namespaces `<tag><pid>x<n>a` and `...b` joined by a veth pair, `va`
/// (198.19.77.1) in a and `vb` (198.19.77.2) in b, and the daemons the
/// test starts in them; all stopped and deleted on drop.
struct Pair {
    a: String,
    b: String,
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Pair {
    fn new() -> Pair {
        sweep();
        let base = format!(
            "{TAG}{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let pair = Pair {
            a: format!("{base}a"),
            b: format!("{base}b"),
            dir: tempfile::tempdir().unwrap(),
            daemons: Vec::new(),
        };
        // chronyd keeps its command socket only in a folder nobody else
        // may enter.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o700);
        std::fs::set_permissions(pair.dir.path(), mode).unwrap();
        // Made after `pair` exists, so that Drop cleans up whatever fails.
        let (a, b) = (&pair.a, &pair.b);
        sh(&format!("ip netns add {a} && ip netns add {b}"));
        sh(&format!(
            "ip -n {a} link add name va type veth peer name vb netns {b} && \
             ip -n {a} addr add 198.19.77.1/24 dev va && ip -n {b} addr add 198.19.77.2/24 dev vb && \
             ip -n {a} link set va up && ip -n {b} link set vb up && \
             ip -n {a} link set lo up && ip -n {b} link set lo up"
        ));
        pair
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to the folder's file `name`; returns its path.
    fn write(&self, name: &str, text: &str) -> String {
        let p = self.file(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// Starts `args` in namespace `ns`, its output to `<log>.log`.
    fn spawn(&mut self, ns: &str, log: &str, args: &[&str]) {
        let out = std::fs::File::create(self.file(&format!("{log}.log"))).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        self.daemons.push(child);
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(&format!("{name}.log"))).unwrap_or_default()
    }

    /// Runs `args` in namespace `ns`.
    fn run(&self, ns: &str, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// A chronyd that never steers the clock (`-x`), in the foreground,
    /// with `config` and its own command socket, pid and drift files;
    /// returns the socket's path.
    fn chronyd(&mut self, ns: &str, name: &str, config: &str) -> String {
        let sock = self.file(&format!("{name}.sock")).display().to_string();
        let pid = self.file(&format!("{name}.pid")).display().to_string();
        let drift = self.file(&format!("{name}.drift")).display().to_string();
        // No command port on UDP unless `config` asks for one.
        let udp = if config.contains("cmdport") {
            ""
        } else {
            "cmdport 0\n"
        };
        let conf = self.write(
            &format!("{name}.conf"),
            &format!("{config}bindcmdaddress {sock}\n{udp}pidfile {pid}\ndriftfile {drift}\n"),
        );
        self.spawn(
            ns,
            name,
            &["chronyd", "-x", "-d", "-u", "root", "-f", &conf],
        );
        sock
    }

    /// `chronyc -n tracking` through command socket `sock`: its stdout.
    fn tracking(&self, ns: &str, sock: &str) -> String {
        let out = self.run(ns, &["chronyc", "-h", sock, "-n", "tracking"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for d in &mut self.daemons {
            let _ = d.kill();
            let _ = d.wait();
        }
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// Calls `probe` every 100 ms until it gives a value; a test failure
/// naming `what` and the last text seen after [`LIMIT`].
fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let end = Instant::now() + LIMIT;
    loop {
        match probe() {
            Ok(v) => return v,
            Err(last) if Instant::now() > end => {
                panic!("{what}: not after {LIMIT:?}; last:\n{last}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A field of chronyc's tracking report, read by the test itself:
/// `Name : <number> seconds ...` as a number (and the word after).
fn seconds(text: &str, name: &str) -> (f64, String) {
    let re = Regex::new(&format!(r"(?m)^{name}\s*:\s*([0-9.]+) seconds ?(\w*)")).unwrap();
    let c = re
        .captures(text)
        .unwrap_or_else(|| panic!("no '{name}' in:\n{text}"));
    (c[1].parse().unwrap(), c[2].to_string())
}

fn leap_status(text: &str) -> String {
    let re = Regex::new(r"(?m)^Leap status\s*:\s*(.+)$").unwrap();
    re.captures(text)
        .map(|c| c[1].trim().to_string())
        .unwrap_or_default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

/// Checks the parsers on a synchronised client's `chronyc tracking` text
/// against its own fields, read here independently; returns the bound.
fn checked_tracking(text: &str) -> f64 {
    let (offset, side) = seconds(text, "System time");
    let signed = match side.as_str() {
        "fast" => offset,
        "slow" => -offset,
        other => panic!("System time is '{other}' of NTP time:\n{text}"),
    };
    let (delay, _) = seconds(text, "Root delay");
    let (dispersion, _) = seconds(text, "Root dispersion");
    assert!(text.contains("Stratum         : 2\n"), "{text}");
    let (o, e) = parse_tracking(text).unwrap_or_else(|| panic!("unparsed:\n{text}"));
    assert!(close(o, signed), "{o} vs {signed}:\n{text}");
    // chronyc(1)'s bound: |offset| + root dispersion + root delay / 2.
    let bound = offset + dispersion + delay / 2.0;
    assert!(close(e, bound), "{e} vs {bound}:\n{text}");
    // One kernel clock on both ends: the offset is tiny.
    assert!(offset < 0.01, "{text}");
    let host = HostClock::from_report("hostb", &format!("{text}--- pmc\n--- phc2sys\n"));
    assert_eq!(host.source.as_deref(), Some("chrony"));
    assert!(close(host.offset_s.unwrap(), signed), "{host:?}");
    assert!(close(host.error_s.unwrap(), bound), "{host:?}");
    bound
}

#[test]
fn chrony_client_synchronised_to_a_server_over_a_veth() {
    let mut p = Pair::new();
    let (a, b) = (p.a.clone(), p.b.clone());
    // A serves its own clock; B follows A, polling every 1/16 s.
    let server = p.chronyd(&a, "server", "local stratum 1\nallow 198.19.77.0/24\n");
    let client = p.chronyd(
        &b,
        "client",
        "server 198.19.77.1 iburst minpoll -4 maxpoll -4\nport 0\n",
    );
    let text = wait_for("chronyd on B synchronised to A", || {
        let t = p.tracking(&b, &client);
        let synced = leap_status(&t) == "Normal" && t.contains("(198.19.77.1)");
        if synced {
            Ok(t)
        } else {
            Err(format!("{t}{}", p.log("client")))
        }
    });
    // Just synchronised, chrony still doubts its estimate of the clock's
    // frequency: a large root dispersion, and the bound says so.
    let first = checked_tracking(&text);
    assert!(first < 2.0, "{first}:\n{text}");
    // Within a few polls the bound shrinks to the veth's microseconds.
    let text = wait_for("chronyd on B settled", || {
        let t = p.tracking(&b, &client);
        let settled = leap_status(&t) == "Normal" && seconds(&t, "Root dispersion").0 < 0.001;
        if settled {
            Ok(t)
        } else {
            Err(t)
        }
    });
    let bound = checked_tracking(&text);
    // Both namespaces read one kernel clock: a small offset, and a real
    // round trip over the veth behind the bound (not zero, not seconds).
    let (delay, _) = seconds(&text, "Root delay");
    assert!(delay > 0.0 && delay < 0.01, "{text}");
    assert!(bound > 0.0 && bound < 0.01, "{bound}:\n{text}");
    println!("settled:\n{text}bound {bound}; first bound {first}");

    // A serves its own clock (`local`): chrony calls it synchronised at
    // stratum 1 with nothing between it and its reference, so it is the
    // lab's reference and its bound is zero.
    let own = p.tracking(&a, &server);
    assert_eq!(leap_status(&own), "Normal", "{own}");
    assert!(own.contains("Stratum         : 1\n"), "{own}");
    assert_eq!(parse_tracking(&own), Some((0.0, 0.0)), "{own}");
}

#[test]
fn chrony_without_a_reachable_server_is_not_synchronised() {
    let mut p = Pair::new();
    let b = p.b.clone();
    // Nobody answers at .9: chronyd runs, and stays unsynchronised.
    let lone = p.chronyd(
        &b,
        "lone",
        "server 198.19.77.9 iburst minpoll -4 maxpoll -4\nport 0\n",
    );
    let text = wait_for("chronyd on B answering", || {
        let t = p.tracking(&b, &lone);
        if t.contains("Leap status") {
            Ok(t)
        } else {
            Err(format!("{t}{}", p.log("lone")))
        }
    });
    assert_eq!(leap_status(&text), "Not synchronised", "{text}");
    assert!(
        text.starts_with("Reference ID    : 00000000 ()\n"),
        "{text}"
    );
    assert_eq!(parse_tracking(&text), None, "{text}");
    let host = HostClock::from_report("hostb", &format!("{text}--- pmc\n--- phc2sys\n"));
    assert_eq!(
        (host.offset_s, host.error_s, host.source),
        (None, None, None)
    );
    // No daemon behind the socket at all: chronyc prints nothing on
    // stdout, and nothing is parsed.
    let none = p.file("none.sock").display().to_string();
    let out = p.run(&b, &["chronyc", "-h", &none, "-n", "tracking"]);
    assert!(!out.status.success());
    assert_eq!(parse_tracking(&String::from_utf8_lossy(&out.stdout)), None);
}

#[test]
fn the_clock_script_reads_a_synchronised_chronyd_by_its_default_address() {
    let mut p = Pair::new();
    let (a, b) = (p.a.clone(), p.b.clone());
    p.chronyd(&a, "server", "local stratum 1\nallow 198.19.77.0/24\n");
    // B's chronyd also answers commands on 127.0.0.1:323 of its own
    // namespace, where chronyc asks when no chronyd socket is in /run.
    let client = p.chronyd(
        &b,
        "client",
        "server 198.19.77.1 iburst minpoll -4 maxpoll -4\nport 0\nbindcmdaddress 127.0.0.1\ncmdport 323\n",
    );
    wait_for("chronyd on B synchronised to A", || {
        let t = p.tracking(&b, &client);
        if leap_status(&t) == "Normal" && t.contains("(198.19.77.1)") {
            Ok(())
        } else {
            Err(format!("{t}{}", p.log("client")))
        }
    });
    // The script as pktlab runs it on a host, in a mount namespace of its
    // own whose /run/chrony (if any) is an empty tmpfs: a chronyd of this
    // machine, if one runs, stays out of it.
    let script = format!(
        "mount -t tmpfs tmpfs /run/chrony 2>/dev/null; \
         [ -e /run/chrony/chronyd.sock ] && exit 9; {CLOCK_SCRIPT}"
    );
    let out = p.run(&b, &["unshare", "-m", "sh", "-c", &script]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    // The chrony section is the daemon's report, the PTP ones empty.
    let (chrony, rest) = text.split_once("--- pmc\n").unwrap();
    assert!(chrony.contains("(198.19.77.1)"), "{text}");
    assert_eq!(leap_status(chrony), "Normal", "{text}");
    // pmc prints what it sent, and nothing came back: no ptp4l here.
    assert_eq!(rest, "sending: GET TIME_STATUS_NP\n--- phc2sys\n", "{text}");
    let (offset, side) = seconds(chrony, "System time");
    let signed = if side == "slow" { -offset } else { offset };
    let bound =
        offset + seconds(chrony, "Root dispersion").0 + seconds(chrony, "Root delay").0 / 2.0;
    let host = HostClock::from_report("hostb", &text);
    assert_eq!(host.source.as_deref(), Some("chrony"), "{text}");
    assert!(close(host.offset_s.unwrap(), signed), "{host:?}\n{text}");
    assert!(close(host.error_s.unwrap(), bound), "{host:?}\n{text}");
}

/// ptp4l's configuration: software timestamps over Ethernet, the clock
/// never steered (`free_running`, and no leap second handed to the
/// kernel), its management socket at `uds`, plus `extra`.
fn ptp4l_config(uds: &str, extra: &str) -> String {
    format!(
        "[global]\nfree_running 1\nkernel_leap 0\ntime_stamping software\n\
         network_transport L2\nuds_address {uds}\nlogAnnounceInterval -2\n\
         announceReceiptTimeout 3\nlogSyncInterval -2\nlogMinDelayReqInterval -2\n{extra}"
    )
}

/// A field of pmc's answer, read by the test itself.
fn field(text: &str, name: &str) -> Option<String> {
    let re = Regex::new(&format!(r"(?m)^\s+{name}\s+(\S+)\s*$")).unwrap();
    re.captures(text).map(|c| c[1].to_string())
}

#[test]
fn ptp4l_slave_offset_from_its_master_through_pmc() {
    // veth timestamps in software only: what ptp4l -S needs.
    let mut p = Pair::new();
    let (a, b) = (p.a.clone(), p.b.clone());
    let caps = String::from_utf8_lossy(&p.run(&a, &["ethtool", "-T", "va"]).stdout).into_owned();
    for c in ["software-transmit", "software-receive"] {
        assert!(caps.contains(c), "veth lacks {c}:\n{caps}");
    }
    let m_uds = p.file("master.uds").display().to_string();
    let s_uds = p.file("slave.uds").display().to_string();
    let m = p.write("master.conf", &ptp4l_config(&m_uds, "priority1 100\n"));
    let s = p.write("slave.conf", &ptp4l_config(&s_uds, "slaveOnly 1\n"));
    p.spawn(&a, "master", &["ptp4l", "-S", "-i", "va", "-f", &m, "-m"]);
    p.spawn(&b, "slave", &["ptp4l", "-S", "-i", "vb", "-f", &s, "-m"]);
    let pmc = |ns: &str, uds: &str| {
        let out = p.run(
            ns,
            &["pmc", "-u", "-b", "0", "-s", uds, "GET TIME_STATUS_NP"],
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Until the slave has a grandmaster and has measured its offset (the
    // first answers with one still say 0).
    let text = wait_for("ptp4l on B following A", || {
        let t = pmc(&b, &s_uds);
        let gm = field(&t, "gmPresent").as_deref() == Some("true");
        if gm && field(&t, "master_offset").is_some_and(|o| o != "0") {
            Ok(t)
        } else {
            Err(format!("{t}{}", p.log("slave")))
        }
    });
    let ns: i64 = field(&text, "master_offset").unwrap().parse().unwrap();
    let parsed = parse_time_status(&text).unwrap_or_else(|| panic!("unparsed:\n{text}"));
    assert!(
        close(parsed, ns as f64 * 1e-9),
        "{parsed} vs {ns} ns:\n{text}"
    );
    // One kernel clock on both ends: software timestamps put the offset
    // within a few milliseconds at worst, not zero (it was waited for).
    assert!(ns != 0 && ns.abs() < 10_000_000, "{ns} ns:\n{text}");
    // The grandmaster is A's clock: its identity is the one A answers
    // with.
    let own = pmc(&a, &m_uds);
    let a_id = Regex::new(r"(?m)^\s+(\S+)-\d+ seq \d+ RESPONSE MANAGEMENT TIME_STATUS_NP")
        .unwrap()
        .captures(&own)
        .unwrap_or_else(|| panic!("{own}"))[1]
        .to_string();
    assert_eq!(field(&text, "gmIdentity"), Some(a_id), "{text}\n{own}");
    // A itself is the grandmaster: pmc says no grandmaster is present (it
    // is its own), as a lone ptp4l would; its error counts as unknown.
    assert_eq!(field(&own, "gmPresent").as_deref(), Some("false"), "{own}");
    assert_eq!(parse_time_status(&own), None, "{own}");
    // Without phc2sys's word the slave's system clock is not steered from
    // the NIC: ptp alone gives no system clock bound.
    let host = HostClock::from_report("hostb", &format!("--- pmc\n{text}--- phc2sys\n"));
    assert_eq!(
        (host.error_s, host.source.as_deref()),
        (None, None),
        "{host:?}"
    );
}
