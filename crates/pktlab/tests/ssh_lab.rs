//! Labs of several machines over OpenSSH, with real sshd: every "host" is a
//! network namespace running its own `/usr/sbin/sshd` (keys made for the
//! test) on a management bridge in 198.18.255.0/24, inside a controller
//! namespace where `pktlab bench` runs. The test links (generator -> DUT ->
//! receiver) are separate veths. Root and openssh-server needed
//! (scripts/deps installs it).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{one_at_a_time, sh, PKTLAB};

static NEXT: AtomicU32 = AtomicU32::new(0);
const TAG: &str = "ssl";

/// Deletes namespaces of earlier runs of this test whose process is gone.
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
                kill_all_in(&name);
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
            }
        }
    }
}

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

/// The command lines of the processes in `ns`.
fn commands_in(ns: &str) -> Vec<String> {
    pids_in(ns)
        .into_iter()
        .filter_map(|p| std::fs::read(format!("/proc/{p}/cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .collect()
}

fn kill_all_in(ns: &str) {
    for p in pids_in(ns) {
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
}

/// One sshd host of the test.
struct Host {
    /// `a`, `b`, ...: names its namespace, keys and alias (`hosta`).
    name: String,
    ns: String,
    addr: String,
    sshd: Option<Child>,
}

/// A controller namespace with a management bridge, and hosts on it.
struct Lab {
    ctl: String,
    dir: tempfile::TempDir,
    hosts: Vec<Host>,
}

impl Lab {
    /// Hosts named `names`, each with its sshd running; those in
    /// `with_pktlab` find this pktlab on their PATH, the others do not.
    fn new(names: &[&str], with_pktlab: &[&str]) -> Lab {
        sweep();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let base = format!(
            "{TAG}{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let ctl = format!("{base}m");
        sh(&format!("ip netns add {ctl}"));
        let mut lab = Lab {
            ctl: ctl.clone(),
            dir,
            hosts: Vec::new(),
        };
        sh(&format!(
            "ip -n {ctl} link add name br0 type bridge && ip -n {ctl} addr add 198.18.255.1/24 dev br0 && \
             ip netns exec {ctl} sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && \
             ip -n {ctl} link set br0 up && ip -n {ctl} link set lo up"
        ));
        sh(&format!("ssh-keygen -q -t ed25519 -N '' -f {d}/id"));
        sh(&format!("ssh-keygen -q -t ed25519 -N '' -f {d}/id_other"));
        sh(&format!("cp {d}/id.pub {d}/authorized_keys"));
        std::fs::create_dir_all(format!("{d}/bin")).unwrap();
        std::os::unix::fs::symlink(PKTLAB, format!("{d}/bin/pktlab")).unwrap();
        let mut config = String::new();
        let mut known = String::new();
        for (i, name) in names.iter().enumerate() {
            let ns = format!("{base}{name}");
            let addr = format!("198.18.255.{}", 11 + i);
            sh(&format!("ip netns add {ns}"));
            // Registered before anything else can fail, so Drop cleans it.
            lab.hosts.push(Host {
                name: name.to_string(),
                ns: ns.clone(),
                addr: addr.clone(),
                sshd: None,
            });
            sh(&format!(
                "ip netns exec {ns} sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && \
                 ip netns exec {ns} sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && \
                 ip -n {ctl} link add name m{name} type veth peer name mgmt netns {ns} && \
                 ip -n {ctl} link set dev m{name} master br0 && ip -n {ctl} link set dev m{name} up && \
                 ip -n {ns} addr add {addr}/24 dev mgmt && ip -n {ns} link set mgmt up && \
                 ip -n {ns} link set lo up"
            ));
            sh(&format!(
                "ssh-keygen -q -t ed25519 -N '' -f {d}/host_{name}"
            ));
            // A host without this pktlab may get another one in
            // `old_NAME` (see `Lab::give_old_pktlab`).
            let path = if with_pktlab.contains(name) {
                format!("{d}/bin:/usr/sbin:/usr/bin:/sbin:/bin")
            } else {
                format!("{d}/old_{name}:/usr/sbin:/usr/bin:/sbin:/bin")
            };
            std::fs::write(
                format!("{d}/sshd_{name}"),
                format!(
                    "ListenAddress {addr}\nPort 22\nHostKey {d}/host_{name}\nPidFile none\n\
                     AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin yes\n\
                     PubkeyAuthentication yes\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
                     SetEnv PATH={path} XDG_CACHE_HOME={d}/cache_{name}\n"
                ),
            )
            .unwrap();
            let key = std::fs::read_to_string(format!("{d}/host_{name}.pub")).unwrap();
            known += &format!("{addr} {key}");
            config += &format!("Host host{name}\n  HostName {addr}\n");
        }
        config += &format!(
            "Host *\n  User root\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
             StrictHostKeyChecking yes\n  LogLevel ERROR\n"
        );
        std::fs::write(format!("{d}/ssh_config"), config).unwrap();
        std::fs::write(format!("{d}/known_hosts"), known).unwrap();
        for i in 0..lab.hosts.len() {
            lab.start_sshd(i);
        }
        lab
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Puts on host `name`'s PATH a pktlab of this version that predates
    /// the worker's protocol check (no `worker --protocol`).
    fn give_old_pktlab(&self, name: &str) {
        let dir = self.path().join(format!("old_{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("pktlab");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncase \"$1\" in --version) echo 'pktlab {}' ;; \
                 *) echo \"pktlab: unexpected argument '$*'\" >&2; exit 2 ;; esac\n",
                env!("CARGO_PKG_VERSION")
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn host(&self, name: &str) -> &Host {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    fn ns(&self, name: &str) -> String {
        self.host(name).ns.clone()
    }

    fn start_sshd(&mut self, i: usize) {
        let d = self.path().display().to_string();
        let h = &self.hosts[i];
        let log = std::fs::File::create(format!("{d}/sshd_{}.log", h.name)).unwrap();
        // Every host gets a home of its own, as a machine of its own would:
        // bash reads ~/.bashrc for ssh commands, and this machine's may do
        // slow or locking work (pyenv's rehash waits up to 60 s for a lock
        // that a session killed by a test leaves behind). The bind mount
        // stays in the mount namespace `ip netns exec` makes for sshd.
        let home = format!("{d}/home_{}", h.name);
        std::fs::create_dir_all(&home).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &h.ns, "sh", "-c"])
            .arg("mount --bind \"$0\" /root && exec /usr/sbin/sshd -D -e -f \"$1\"")
            .arg(&home)
            .arg(format!("{d}/sshd_{}", h.name))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let (ns, addr) = (h.ns.clone(), h.addr.clone());
        self.hosts[i].sshd = Some(child);
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let out = sh(&format!("ip netns exec {ns} ss -ltnH"));
            if out.contains(&format!("{addr}:22")) {
                break;
            }
            assert!(Instant::now() < end, "sshd in {ns} does not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills everything in host `name`'s namespace: its sshd, its sessions
    /// and their workers.
    fn kill_host(&mut self, name: &str) {
        let i = self.hosts.iter().position(|h| h.name == name).unwrap();
        kill_all_in(&self.hosts[i].ns.clone());
        if let Some(mut c) = self.hosts[i].sshd.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn restart_sshd(&mut self, name: &str) {
        let i = self.hosts.iter().position(|h| h.name == name).unwrap();
        self.start_sshd(i);
    }

    /// `pktlab bench ARGS` in the controller namespace.
    fn bench(&self, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl, PKTLAB, "bench"])
            .args(args)
            .output()
            .unwrap()
    }

    /// `pktlab rfc2544 ARGS` in the controller namespace.
    fn rfc2544(&self, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl, PKTLAB, "rfc2544"])
            .args(args)
            .output()
            .unwrap()
    }

    /// `pktlab ARGS` in the controller namespace.
    fn pktlab(&self, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl, PKTLAB])
            .args(args)
            .output()
            .unwrap()
    }

    fn spawn_bench(&self, args: &[&str]) -> Child {
        Command::new("ip")
            .args(["netns", "exec", &self.ctl, PKTLAB, "bench"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Cables generator host `gen` (g0) to DUT host `dut` (d0), and the
    /// DUT (d1) to receiver host `rcv` (r0); the DUT routes the lab's
    /// destinations to a static next hop with r0's MAC, as the built-in
    /// lab does. Returns d0's MAC.
    fn cable(&self, gen: &str, dut: &str, rcv: &str) -> String {
        let (g, d, r) = (self.ns(gen), self.ns(dut), self.ns(rcv));
        sh(&format!(
            "ip -n {g} link add name g0 type veth peer name d0 netns {d} && \
             ip -n {d} link add name d1 type veth peer name r0 netns {r}"
        ));
        for (ns, ifs) in [(&g, vec!["g0"]), (&d, vec!["d0", "d1"]), (&r, vec!["r0"])] {
            for i in ifs {
                sh(&format!("ip -n {ns} link set {i} up"));
            }
        }
        let r0 = mac(&r, "r0");
        sh(&format!(
            "ip netns exec {d} sh -c 'sysctl -qw net.ipv4.ip_forward=1 && \
             sysctl -qw net.ipv4.conf.all.rp_filter=0 && sysctl -qw net.ipv4.conf.d0.rp_filter=0 && \
             sysctl -qw net.ipv4.conf.all.send_redirects=0 && \
             ip addr add 198.18.0.203/24 dev d0 && ip addr add 198.19.0.203/24 dev d1 && \
             ip route add 198.19.10.0/24 via 198.19.0.208 dev d1 && \
             ip neigh replace 198.19.0.208 lladdr {r0} dev d1 nud permanent'"
        ));
        mac(&d, "d0")
    }

    /// Writes a campaign file beside the ssh config.
    fn campaign(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for h in &mut self.hosts {
            kill_all_in(&h.ns);
            if let Some(mut c) = h.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            let _ = Command::new("ip").args(["netns", "del", &h.ns]).status();
        }
        kill_all_in(&self.ctl);
        let _ = Command::new("ip")
            .args(["netns", "del", &self.ctl])
            .status();
    }
}

fn mac(ns: &str, iface: &str) -> String {
    sh(&format!(
        "ip netns exec {ns} cat /sys/class/net/{iface}/address"
    ))
    .trim()
    .to_string()
}

/// An interface's packet counter (`rx_packets`, `tx_packets`).
fn counter(ns: &str, iface: &str, which: &str) -> u64 {
    sh(&format!(
        "ip netns exec {ns} cat /sys/class/net/{iface}/statistics/{which}"
    ))
    .trim()
    .parse()
    .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn three_host_campaign(d0_mac: &str, iterations: usize, duration: &str) -> String {
    format!(
        "name = \"three\"\n[lab]\nkind = \"interfaces\"\n\
         gen_host = \"hosta\"\ngen_iface = \"g0\"\n\
         rcv_host = \"hostc\"\nrcv_iface = \"r0\"\n\
         dut_in_mac = \"{d0_mac}\"\ndut = \"ssh hostb\"\ndut_ifaces = [\"d0\", \"d1\"]\n\
         ssh_config = \"ssh_config\"\n\
         [run]\niterations = {iterations}\nduration = \"{duration}\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
         [[traffic]]\nname = \"inet4\"\nrate = \"5kpps\"\n"
    )
}

#[test]
fn generator_dut_and_receiver_on_three_hosts_count_exactly() {
    // The tests' hosts share names (hosta, hostc) and ports (g0), which a
    // campaign locks under its host's name: one test at a time.
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &["a"]);
    // C has a pktlab of this version without the worker's protocol check:
    // it is not used, this one is copied over.
    lab.give_old_pktlab("c");
    let d0 = lab.cable("a", "b", "c");
    let file = lab.campaign("three.toml", &three_host_campaign(&d0, 1, "3s"));
    let out_dir = lab.path().join("r");
    let (b, c) = (lab.ns("b"), lab.ns("c"));
    let d0_rx = counter(&b, "d0", "rx_packets");
    let d1_tx = counter(&b, "d1", "tx_packets");
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let lines = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines.len(), 2, "{}", text(&out));
    let run = &lines[0];
    assert_eq!(run["type"], "run");
    let tx = run["tx"]["packets"].as_u64().unwrap();
    let rx = run["rx"]["packets"].as_u64().unwrap();
    // 3 s at 5 kpps: 15000 frames; a starved generator on a busy 2-CPU
    // machine sends fewer, never more.
    assert!((7_500..=15_100).contains(&tx), "{tx} frames sent: {run}");
    // Every frame the generator on A sent went through B and was counted
    // on C, in sequence.
    assert_eq!(rx, tx, "{run}");
    assert_eq!(run["lost"], 0);
    for key in ["lost", "out_of_order", "duplicates", "foreign"] {
        assert_eq!(run["rx"][key], 0, "{key}: {run}");
    }
    assert_eq!(run["rx"]["flows"], 2000);
    // The DUT's own counters agree, read on its host.
    assert_eq!(counter(&b, "d0", "rx_packets") - d0_rx, tx);
    assert_eq!(counter(&b, "d1", "tx_packets") - d1_tx, tx);
    assert_eq!(counter(&c, "r0", "rx_packets"), tx);
    // The remote ports' own counters come in the workers' summaries.
    assert_eq!(run["tx"]["iface"]["tx_packets"].as_u64(), Some(tx));
    assert_eq!(run["rx"]["iface"]["rx_packets"].as_u64(), Some(tx));
    let pps = run["forwarded_pps"].as_f64().unwrap();
    assert!((2_500.0..=5_300.0).contains(&pps), "{pps}");
    remote_counters_add_up(&out_dir.join("runs/default.inet4.1.jsonl"), tx);
    // The receiver on C measured one-way latency against A's clock: with
    // no chrony or PTP in these hosts, the run says it is not comparable.
    assert!(
        run["rx"]["latency_ns"]["min"].as_u64().unwrap() > 0,
        "{run}"
    );
    assert_eq!(
        run["latency_note"],
        "not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)"
    );
    let summary = &lines[1];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["runs_finished"], 1);
    // The human header names the hosts.
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(env["lab"], "g0 on hosta -> DUT (hostb) -> r0 on hostc");
    assert!(env["dut_uname"].as_str().unwrap().starts_with("Linux "));
    // Every host's ports are veth: none raises interrupts, and the record
    // says so for each of them.
    assert_eq!(
        env["interrupts"],
        "no interrupts for g0 on hosta, r0 on hostc, d0 on hostb, d1 on hostb: virtual interfaces (veth) have no device and raise none"
    );
    // The hosts' clocks, as chrony reports them: here, none runs.
    assert_eq!(
        env["clocks"]["hosts"],
        serde_json::json!([
            {"host": "hosta", "offset_s": null, "error_s": null},
            {"host": "hostc", "offset_s": null, "error_s": null}
        ])
    );
    assert_eq!(
        env["clocks"]["latency"],
        "one-way latency between hosta and hostc is not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)"
    );
    // A had this pktlab on its PATH: nothing was copied there. C had an
    // older build of the same version and B none: this very binary went
    // into their caches.
    let version = env!("CARGO_PKG_VERSION");
    assert!(!lab.path().join("cache_a").exists());
    for h in ["b", "c"] {
        let copy = lab
            .path()
            .join(format!("cache_{h}/pktlab/{version}/pktlab"));
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read(PKTLAB).unwrap()
        );
    }
    // The campaign saved for --resume names the ssh config by its full path.
    let saved = std::fs::read_to_string(out_dir.join("campaign.toml")).unwrap();
    let cfg = std::fs::canonicalize(lab.path().join("ssh_config")).unwrap();
    assert!(
        saved.contains(&format!("ssh_config = \"{}\"", cfg.display())),
        "{saved}"
    );
    // No worker is left on any host.
    for h in ["a", "b", "c"] {
        let left: Vec<String> = commands_in(&lab.ns(h))
            .into_iter()
            .filter(|c| c.contains("pktlab"))
            .collect();
        assert!(left.is_empty(), "{h}: {left:?}");
    }
}

#[test]
fn two_generators_on_two_hosts_add_up_and_every_stream_is_checked() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c", "d"], &["a", "d"]);
    let d0 = lab.cable("a", "b", "c");
    // D's port reaches the DUT on d2, which answers to d0's MAC too: the
    // frames of both generators go to dut_in_mac.
    let (a, b, c, d) = (lab.ns("a"), lab.ns("b"), lab.ns("c"), lab.ns("d"));
    sh(&format!(
        "ip -n {d} link add name g0 type veth peer name d2 netns {b} && \
         ip -n {b} link set dev d2 address {d0} && ip -n {b} link set dev d2 up && \
         ip -n {d} link set dev g0 up && ip netns exec {b} sysctl -qw net.ipv4.conf.d2.rp_filter=0"
    ));
    let file = lab.campaign(
        "two.toml",
        &format!(
            "name = \"two\"\n[lab]\nkind = \"interfaces\"\n\
             rcv_host = \"hostc\"\nrcv_iface = \"r0\"\n\
             dut_in_mac = \"{d0}\"\ndut = \"ssh hostb\"\nssh_config = \"ssh_config\"\n\
             [[lab.generator]]\nhost = \"hosta\"\niface = \"g0\"\n\
             [[lab.generator]]\nhost = \"hostd\"\niface = \"g0\"\n\
             [run]\niterations = 1\nduration = \"3s\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
             [[traffic]]\nname = \"inet4\"\nrate = \"5kpps\"\n"
        ),
    );
    let out_dir = lab.path().join("r");
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let lines = json_lines(&String::from_utf8_lossy(&out.stdout));
    let run = &lines[0];
    let tx = run["tx"]["packets"].as_u64().unwrap();
    let (from_a, from_d) = (
        counter(&a, "g0", "tx_packets"),
        counter(&d, "g0", "tx_packets"),
    );
    // The offered load is the sum of both generators' (2.5 kpps each).
    assert_eq!(tx, from_a + from_d, "{run}");
    for part in [from_a, from_d] {
        assert!((3_750..=7_550).contains(&part), "{from_a} + {from_d}");
    }
    assert_eq!(run["tx"]["threads"].as_array().unwrap().len(), 2);
    assert_eq!(counter(&b, "d0", "rx_packets"), from_a);
    assert_eq!(counter(&b, "d2", "rx_packets"), from_d);
    // Each generator sent its own half of the 2000 flows: the receiver
    // sees all 2000 streams, each in sequence.
    assert_eq!(run["rx"]["packets"].as_u64(), Some(tx), "{run}");
    assert_eq!(counter(&c, "r0", "rx_packets"), tx);
    assert_eq!(run["rx"]["flows"], 2000);
    for key in ["lost", "out_of_order", "duplicates", "foreign"] {
        assert_eq!(run["rx"][key], 0, "{key}: {run}");
    }
    let offered = run["offered_pps"].as_f64().unwrap();
    assert!((2_500.0..=5_300.0).contains(&offered), "{offered}");
    // Each generator's port was counted on its own host.
    let totals = &run["lab_counters"];
    assert_eq!(
        iface_counter(totals, "hosta", "gen", "g0", "tx_packets"),
        Some(from_a),
        "{totals}"
    );
    assert_eq!(
        iface_counter(totals, "hostd", "gen2", "g0", "tx_packets"),
        Some(from_d),
        "{totals}"
    );
    assert_eq!(
        iface_counter(totals, "hostc", "rcv", "r0", "rx_packets"),
        Some(tx),
        "{totals}"
    );
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(
        env["lab"],
        "g0 on hosta + g0 on hostd -> DUT (hostb) -> r0 on hostc"
    );
}

#[test]
fn traffic_both_ways_between_two_hosts_counts_each_direction_exactly() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &["a"]);
    let d0 = lab.cable("a", "b", "c");
    let (a, b, c) = (lab.ns("a"), lab.ns("b"), lab.ns("c"));
    // The DUT routes the reverse stream's destinations (the forward
    // sources, 198.18.10.x) back out of d0 to g0, as it routes the
    // forward ones to r0.
    let g0 = mac(&a, "g0");
    sh(&format!(
        "ip netns exec {b} sh -c 'sysctl -qw net.ipv4.conf.d1.rp_filter=0 && \
         ip route add 198.18.10.0/24 via 198.18.0.208 dev d0 && \
         ip neigh replace 198.18.0.208 lladdr {g0} dev d0 nud permanent'"
    ));
    let d1 = mac(&b, "d1");
    let file = lab.campaign(
        "both.toml",
        &format!(
            "{}direction = \"both\"\n",
            three_host_campaign(&d0, 1, "3s").replace(
                "dut_in_mac = ",
                &format!("dut_out_mac = \"{d1}\"\ndut_in_mac = ")
            )
        ),
    );
    let out_dir = lab.path().join("r");
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(", both ways:\n"), "{stdout}");
    let record = std::fs::read_to_string(out_dir.join("runs/default.inet4.1.jsonl")).unwrap();
    let run = json_lines(&record).pop().unwrap();
    assert_eq!(run["type"], "result");
    let ways = run["directions"].as_array().expect("both directions");
    let count = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"));
    let mut sent = Vec::new();
    for (way, name) in ways.iter().zip(["forward", "reverse"]) {
        assert_eq!(way["name"], name, "{run}");
        let tx = count(&way["tx"]["packets"]);
        // 3 s at 5 kpps each way: 15000 frames; a starved generator on a
        // busy 2-CPU machine sends fewer, never more.
        assert!((7_500..=15_100).contains(&tx), "{name}: {tx} frames sent");
        // Every frame of each direction crossed B and was counted on the
        // other host, in sequence, each of its 2000 streams.
        assert_eq!(count(&way["rx"]["packets"]), tx, "{name}: {way}");
        assert_eq!(count(&way["lost"]), 0, "{name}: {way}");
        for key in ["lost", "out_of_order", "duplicates", "foreign"] {
            assert_eq!(way["rx"][key], 0, "{name} {key}: {way}");
        }
        assert_eq!(way["rx"]["streams"], 2000, "{name}: {way}");
        sent.push(tx);
    }
    let (forward, reverse) = (sent[0], sent[1]);
    // The total is their sum.
    assert_eq!(count(&run["tx"]["packets"]), forward + reverse, "{run}");
    assert_eq!(count(&run["rx"]["packets"]), forward + reverse, "{run}");
    assert_eq!(count(&run["lost"]), 0, "{run}");
    // The hosts' own counters agree: the forward stream left A on g0,
    // crossed B from d0 to d1 and reached r0 on C; the reverse one went
    // the other way, sent from C's r0 by the generator that ran beside
    // the forward receiver.
    assert_eq!(counter(&a, "g0", "tx_packets"), forward);
    assert_eq!(counter(&b, "d0", "rx_packets"), forward);
    assert_eq!(counter(&b, "d1", "tx_packets"), forward);
    assert_eq!(counter(&c, "r0", "rx_packets"), forward);
    assert_eq!(counter(&c, "r0", "tx_packets"), reverse);
    assert_eq!(counter(&b, "d1", "rx_packets"), reverse);
    assert_eq!(counter(&b, "d0", "tx_packets"), reverse);
    assert_eq!(counter(&a, "g0", "rx_packets"), reverse);
    // The text says each direction's figures and their sum.
    for (name, tx) in [
        ("forward", forward),
        ("reverse", reverse),
        ("total", forward + reverse),
    ] {
        let line = format!("  {name}: ");
        let said = stdout
            .lines()
            .find(|l| l.starts_with(&line))
            .unwrap_or_else(|| panic!("no {name} line: {stdout}"));
        assert!(
            said.contains(&format!(", sent {tx}, received {tx}, lost 0 (0.00%)")),
            "{said}"
        );
    }
    // No worker is left on any host.
    for h in ["a", "b", "c"] {
        let left: Vec<String> = commands_in(&lab.ns(h))
            .into_iter()
            .filter(|c| c.contains("pktlab"))
            .collect();
        assert!(left.is_empty(), "{h}: {left:?}");
    }
    // AF_XDP both ways needs a port's generator and receiver in one
    // process: over ssh they are two workers, and the campaign says so.
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        lab.path().join("afxdp").to_str().unwrap(),
        "--io",
        "afxdp",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).ends_with(
            "pktlab: traffic profile 'inet4' goes both ways: AF_XDP cannot send and receive \
             on one port from two worker processes (the kernel binds one AF_XDP socket per \
             queue): use afpacket over ssh\n"
        ),
        "{}",
        text(&out)
    );
}

/// The counter of `which` of interface (`host`, `role`, `iface`) in a list
/// of interface counters of a run file.
#[test]
fn a_remote_duts_nft_drops_are_traced_on_its_host() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &["a", "b", "c"]);
    let d0 = lab.cable("a", "b", "c");
    // The DUT on B drops each stream's frame with sequence number 2 (the
    // payload's 32-bit sequence is 13 bytes into the UDP header): 3 s at
    // 5 kpps over 2000 streams gets every stream past it, so exactly 2000
    // frames are lost, all on B.
    let b = lab.ns("b");
    sh(&format!(
        "ip netns exec {b} nft 'add table ip sshdrops; \
         add chain ip sshdrops forward_test {{ type filter hook forward priority 0; }}; \
         add rule ip sshdrops forward_test udp dport 2000 @th,104,32 2 drop'"
    ));
    let file = lab.campaign("drops.toml", &three_host_campaign(&d0, 1, "3s"));
    let out_dir = lab.path().join("r");
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let lines =
        json_lines(&std::fs::read_to_string(out_dir.join("runs/default.inet4.1.jsonl")).unwrap());
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    let sent = result["tx"]["packets"].as_u64().unwrap();
    assert!((7_500..=15_100).contains(&sent), "{sent} frames sent");
    assert_eq!(
        result["rx"]["packets"].as_u64(),
        Some(sent - 2000),
        "{result}"
    );
    let d = &result["drops"];
    assert_eq!(d["lost"], 2000, "{d}");
    // Every host's tracer ran; B's saw nft's drops in its own namespace
    // (which it calls host). The controller's tracer sees the same kernel
    // here, but B's namespace is no place of this host's lab: nothing is
    // counted twice. The tracer may miss a few under load.
    assert_eq!(d["traced"], true, "{d}");
    let traced = d["places"][0]["frames"].as_u64().unwrap();
    common::assert_traced(traced, 2000, &d.to_string());
    assert_eq!(
        d["places"][0],
        serde_json::json!({"side": "dut", "host": "hostb", "netns": "host", "iface": "d0",
            "layer": "kernel", "reason": "NETFILTER_DROP", "location": "nft_do_chain",
            "frames": traced}),
        "{d}"
    );
    assert_eq!(
        d["dut"].as_u64().unwrap() + d["unexplained"].as_u64().unwrap(),
        2000,
        "{d}"
    );
    assert_eq!(d["tester"], 0, "{d}");
    assert_eq!(d["tester_limited"], false, "{d}");
    if traced == 2000 {
        assert_eq!(d["places"].as_array().unwrap().len(), 1, "{d}");
        // The line people read names the DUT's host (2000 of at most
        // 15100 is above 10 %: a whole percent).
        let want = format!(
            "lost 2000 ({:.0}%): DUT hostb:nft_do_chain NETFILTER_DROP 2000 (100%)",
            2000.0 * 100.0 / sent as f64
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.lines().any(|l| l == want), "{want} not in {stdout}");
    }
}

fn iface_counter(list: &Value, host: &str, role: &str, iface: &str, which: &str) -> Option<u64> {
    list.as_array()
        .unwrap()
        .iter()
        .find(|c| c["host"] == host && c["role"] == role && c["iface"] == iface)
        .map(|c| c[which].as_u64().unwrap())
}

/// The run file of a three-host run that sent `tx` frames: every host's
/// lab interfaces were counted on that host, per second and in total, and
/// the DUT's CPUs too.
fn remote_counters_add_up(run_file: &Path, tx: u64) {
    let lines = json_lines(&std::fs::read_to_string(run_file).unwrap());
    let seconds: Vec<&Value> = lines.iter().filter(|l| l["type"] == "second").collect();
    let result = lines.iter().find(|l| l["type"] == "result").unwrap();
    let totals = &result["lab_counters"];
    let ports = [
        ("hosta", "gen", "g0", "tx_packets"),
        ("hostb", "dut_in", "d0", "rx_packets"),
        ("hostb", "dut_out", "d1", "tx_packets"),
        ("hostc", "rcv", "r0", "rx_packets"),
    ];
    for (host, role, iface, which) in ports {
        // The frames the generator sent, each counted once on each port.
        let total = iface_counter(totals, host, role, iface, which);
        assert_eq!(total, Some(tx), "{host} {iface} {which}: {totals}");
        let per_second: Vec<u64> = seconds
            .iter()
            .filter_map(|s| iface_counter(&s["ifaces"], host, role, iface, which))
            .collect();
        // A 3 s run sampled every second, from the receiver's start to
        // after the drain: 3 to 8 samples, adding up to the total.
        assert!(
            (3..=8).contains(&per_second.len()),
            "{host} {iface}: {per_second:?}"
        );
        assert_eq!(
            per_second.iter().sum::<u64>(),
            tx,
            "{host} {iface}: {per_second:?}"
        );
        // Nothing but the test frames crossed the port, and nothing broke.
        let other = if which == "tx_packets" {
            "rx_packets"
        } else {
            "tx_packets"
        };
        assert_eq!(
            iface_counter(totals, host, role, iface, other),
            Some(0),
            "{totals}"
        );
        for bad in ["rx_errors", "tx_errors", "rx_dropped", "tx_dropped"] {
            assert_eq!(
                iface_counter(totals, host, role, iface, bad),
                Some(0),
                "{bad}: {totals}"
            );
        }
    }
    // The generator's and receiver's hosts have no CPU figures of their
    // own in the record; the DUT's host has its per-CPU load each second.
    let cpus = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    let dut_seconds: Vec<Value> = seconds
        .iter()
        .flat_map(|s| s["hosts"].as_array().cloned().unwrap_or_default())
        .collect();
    // Every CPU in each whole second (the short last one may miss a CPU
    // whose counters did not tick).
    let whole = dut_seconds
        .iter()
        .filter(|h| h["cpus"].as_array().unwrap().len() == cpus)
        .count();
    assert!(whole >= 3, "{dut_seconds:?}");
    for h in &dut_seconds {
        assert_eq!(h["host"], "hostb");
        assert_eq!(h["role"], "dut");
        let loads = h["cpus"].as_array().unwrap();
        assert!(loads.len() <= cpus, "{h}");
        for l in loads {
            let sum: f64 = ["user", "system", "irq", "softirq", "steal", "idle"]
                .iter()
                .map(|k| l[*k].as_f64().unwrap())
                .sum();
            // Percentages of one interval, each rounded to 0.01.
            assert!((99.9..=100.1).contains(&sum), "{l}");
        }
        // veth raises no interrupts.
        assert_eq!(h["interrupts"], serde_json::json!([]));
    }
}

/// Runs a bench that must fail before any traffic: exit 1, one line;
/// `pktlab lab check` says the same.
fn fails_before_traffic(lab: &Lab, file: &Path, gen_ns: &str) -> String {
    let before = counter(gen_ns, "g0", "tx_packets");
    let check = lab.pktlab(&["lab", "check", "-f", file.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let check_err = String::from_utf8_lossy(&check.stderr).into_owned();
    assert_eq!(check_err.lines().count(), 1, "{check_err}");
    let out_dir = lab.path().join("never");
    let out = lab.bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(counter(gen_ns, "g0", "tx_packets"), before);
    assert!(!out_dir.exists());
    assert_eq!(check_err, err);
    err
}

#[test]
fn wrong_host_key_refused_login_and_unknown_interface_stop_before_traffic() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &["a", "c"]);
    let d0 = lab.cable("a", "b", "c");
    let a = lab.ns("a");
    let d = lab.path().display().to_string();
    let good = three_host_campaign(&d0, 1, "2s");

    // All is well: the check says what it found, and sends nothing.
    let file = lab.campaign("good.toml", &good);
    let before = counter(&a, "g0", "tx_packets");
    let out = lab.pktlab(&["lab", "check", "-f", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 9, "{stdout}");
    assert_eq!(lines[0], "lab g0 on hosta -> DUT (hostb) -> r0 on hostc");
    assert_eq!(
        lines[1],
        format!(
            "  generator: g0 on hosta (pktlab: pktlab): MAC {}, MTU 1500, up",
            mac(&a, "g0")
        )
    );
    assert_eq!(
        lines[2],
        format!(
            "  receiver: r0 on hostc (pktlab: pktlab): MAC {}, MTU 1500, up",
            mac(&lab.ns("c"), "r0")
        )
    );
    assert_eq!(lines[3], "  DUT: commands run on hostb");
    assert!(lines[4].starts_with("  DUT: Linux "), "{stdout}");
    // The DUT sends the first and the last destination towards C.
    assert_eq!(
        lines[5],
        "  DUT route: 198.19.10.1 out of d1 via 198.19.0.208"
    );
    assert_eq!(
        lines[6],
        "  DUT route: 198.19.10.100 out of d1 via 198.19.0.208"
    );
    // No chrony on these hosts: latency across them is not comparable.
    assert_eq!(
        lines[7],
        "  clocks: one-way latency between hosta and hostc is not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)"
    );
    assert_eq!(lines[8], "lab OK: no test traffic was sent");
    assert_eq!(counter(&a, "g0", "tx_packets"), before);

    // C presents A's host key.
    let known = std::fs::read_to_string(format!("{d}/known_hosts")).unwrap();
    let a_key = std::fs::read_to_string(format!("{d}/host_a.pub")).unwrap();
    let swapped: String = known
        .lines()
        .map(|l| {
            if l.starts_with("198.18.255.13 ") {
                format!("198.18.255.13 {a_key}")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(format!("{d}/known_hosts_wrong"), swapped).unwrap();
    let cfg = std::fs::read_to_string(format!("{d}/ssh_config")).unwrap();
    std::fs::write(
        format!("{d}/ssh_config_wrong_key"),
        cfg.replace("/known_hosts\n", "/known_hosts_wrong\n"),
    )
    .unwrap();
    let file = lab.campaign(
        "wrong_key.toml",
        &good.replace(
            "ssh_config = \"ssh_config\"",
            "ssh_config = \"ssh_config_wrong_key\"",
        ),
    );
    let err = fails_before_traffic(&lab, &file, &a);
    assert!(err.starts_with("pktlab: host hostc: "), "{err}");
    assert!(err.contains("Host key verification failed"), "{err}");

    // A key the hosts do not accept.
    std::fs::write(
        format!("{d}/ssh_config_other_key"),
        cfg.replace("/id\n", "/id_other\n"),
    )
    .unwrap();
    let file = lab.campaign(
        "other_key.toml",
        &good.replace(
            "ssh_config = \"ssh_config\"",
            "ssh_config = \"ssh_config_other_key\"",
        ),
    );
    let err = fails_before_traffic(&lab, &file, &a);
    assert!(err.starts_with("pktlab: host hosta: "), "{err}");
    assert!(err.contains("Permission denied"), "{err}");

    // An interface C does not have.
    let file = lab.campaign(
        "no_iface.toml",
        &good.replace("rcv_iface = \"r0\"", "rcv_iface = \"r9\""),
    );
    let err = fails_before_traffic(&lab, &file, &a);
    assert!(err.starts_with("pktlab: host hostc: "), "{err}");
    assert!(err.contains("r9"), "{err}");
}

#[test]
fn lab_check_names_each_destination_the_dut_does_not_route_towards_the_receiver() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &["a", "c"]);
    let d0 = lab.cable("a", "b", "c");
    let (a, b) = (lab.ns("a"), lab.ns("b"));
    let file = lab.campaign("three.toml", &three_host_campaign(&d0, 1, "2s"));
    // The DUT lost the route of the lab's destinations; a narrower one
    // sends the upper part of them out of its management port.
    sh(&format!(
        "ip -n {b} route del 198.19.10.0/24 && \
         ip -n {b} route add 198.19.10.64/26 via 198.18.255.1 dev mgmt"
    ));
    let before = counter(&a, "g0", "tx_packets");
    let out = lab.pktlab(&["lab", "check", "-f", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let problems: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  problem: "))
        .collect();
    assert_eq!(
        problems,
        [
            "  problem: the DUT (on hostb) has no route to 198.19.10.1: RTNETLINK answers: Network is unreachable",
            "  problem: the DUT (on hostb) sends 198.19.10.100 out of mgmt, not d1 (its port towards the receiver)",
        ],
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("lab NOT OK: 2 problems; no test traffic was sent")
    );
    assert_eq!(counter(&a, "g0", "tx_packets"), before);
    // Routed again: the check passes.
    sh(&format!(
        "ip -n {b} route del 198.19.10.64/26 && \
         ip -n {b} route add 198.19.10.0/24 via 198.19.0.208 dev d1"
    ));
    let out = lab.pktlab(&["lab", "check", "-f", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("lab OK: no test traffic was sent\n"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_host_lost_in_run_2_of_3_fails_that_run_and_resume_completes() {
    let _serial = one_at_a_time();
    let mut lab = Lab::new(&["a", "b", "c"], &["a"]);
    let d0 = lab.cable("a", "b", "c");
    let file = lab.campaign("three.toml", &three_host_campaign(&d0, 3, "3s"));
    let out_dir = lab.path().join("r");
    let mut child = lab.spawn_bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["type"], "run");
    assert_eq!(first["iteration"], 1);
    // Run 2 is under way: its workers are on A and C.
    let end = Instant::now() + Duration::from_secs(30);
    while !commands_in(&lab.ns("c"))
        .iter()
        .any(|c| c.contains("worker --stdio"))
    {
        assert!(Instant::now() < end, "run 2 never started on C");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    lab.kill_host("c");
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.starts_with("pktlab: "), "{err}");
    assert!(err.contains("run 2 of 3"), "{err}");
    assert!(err.contains("host hostc: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let runs: Vec<String> = std::fs::read_dir(out_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runs, ["default.inet4.1.jsonl"]);
    // Nothing is left sending on A.
    let end = Instant::now() + Duration::from_secs(10);
    while commands_in(&lab.ns("a"))
        .iter()
        .any(|c| c.contains("pktlab"))
    {
        assert!(Instant::now() < end, "a worker stayed on A");
        std::thread::sleep(Duration::from_millis(50));
    }

    lab.restart_sshd("c");
    let out = lab.bench(&["--resume", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Resuming: 1 of 3 runs are already finished"),
        "{stdout}"
    );
    // Each of the two runs says what its cross-host latency is worth.
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  latency: median "))
        .collect();
    assert_eq!(notes.len(), 2, "{stdout}");
    for n in notes {
        assert!(
            n.ends_with(" µs, not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)"),
            "{n}"
        );
    }
    let mut runs: Vec<String> = std::fs::read_dir(out_dir.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    assert_eq!(
        runs,
        [
            "default.inet4.1.jsonl",
            "default.inet4.2.jsonl",
            "default.inet4.3.jsonl"
        ]
    );
}

#[test]
fn ctrl_c_leaves_no_pktlab_on_any_host() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &[]);
    let d0 = lab.cable("a", "b", "c");
    let file = lab.campaign("long.toml", &three_host_campaign(&d0, 1, "20s"));
    let out_dir = lab.path().join("r");
    let mut child = lab.spawn_bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    let end = Instant::now() + Duration::from_secs(30);
    let running = |h: &str| {
        commands_in(&lab.ns(h))
            .iter()
            .any(|c| c.contains("worker --stdio"))
    };
    while !(running("a") && running("c")) {
        assert!(Instant::now() < end, "the workers never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    sh(&format!("kill -INT {}", child.id()));
    let status = child.wait().unwrap();
    // Stopped well before the run's 20 s.
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(out.contains("Interrupted: 0 of 1 runs finished"), "{out}");
    // The human text says what the clocks allow before the first run.
    assert!(
        out.lines().any(|l| l == "Clocks: one-way latency between hosta and hostc is not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)"),
        "{out}"
    );
    for h in ["a", "b", "c"] {
        let left: Vec<String> = commands_in(&lab.ns(h))
            .into_iter()
            .filter(|c| c.contains("pktlab"))
            .collect();
        assert!(left.is_empty(), "{h}: {left:?}");
    }
    // Nor a connection of the controller's.
    let end = Instant::now() + Duration::from_secs(5);
    while commands_in(&lab.ctl).iter().any(|c| c.starts_with("ssh")) {
        assert!(Instant::now() < end, "{:?}", commands_in(&lab.ctl));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn rfc2544_latency_across_hosts_says_what_the_clocks_allow() {
    let _serial = one_at_a_time();
    let lab = Lab::new(&["a", "b", "c"], &[]);
    let d0 = lab.cable("a", "b", "c");
    let file = lab.campaign("three.toml", &three_host_campaign(&d0, 1, "1s"));
    let out_dir = lab.path().join("r");
    let out = lab.rfc2544(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--max-rate",
        "5k",
        "--duration-sum",
        "1s",
        "--width",
        "5",
        "--goal",
        "0",
        "--tests",
        "latency",
        "--latency-loads",
        "50",
        "--latency-trials",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // No chrony or PTP in these hosts: the lab's note before the first
    // trial, as bench prints it...
    let unknown = "the clocks' error is unknown (no synchronised chrony or PTP on hosta and hostc)";
    assert!(
        stdout.lines().any(|l| l
            == format!(
                "Clocks: one-way latency between hosta and hostc is not comparable: {unknown}"
            )),
        "{stdout}"
    );
    // ... and the latency table's own, under where its timestamps come from.
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l.starts_with("  (0 % of PDR is the search's lowest load. Timestamps: two hosts: ")
        })
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        lines[at + 1],
        format!("  Clocks: not comparable: {unknown}"),
        "{stdout}"
    );
    // The latency test's record says the same: the load's result and its
    // trial.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("rfc2544.json")).unwrap())
            .unwrap();
    let l = &report["latency"][0];
    assert_eq!(report["latency"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(
        l["latency_note"],
        format!("not comparable: {unknown}"),
        "{l}"
    );
    assert!(
        l["clock"].as_str().unwrap().starts_with("two hosts: "),
        "{l}"
    );
    let trials = json_lines(&std::fs::read_to_string(out_dir.join("trials.jsonl")).unwrap());
    let latency: Vec<&Value> = trials.iter().filter(|t| t["test"] == "latency").collect();
    assert_eq!(latency.len(), 1, "{trials:?}");
    // Every frame the receiver on C got has its latency in the histogram
    // the worker sent back.
    let rx = latency[0]["rx"].as_u64().unwrap();
    assert!(rx > 0, "{trials:?}");
    assert_eq!(l["frames"].as_u64(), Some(rx), "{l}");
    assert_eq!(latency[0]["latency_note"], l["latency_note"]);
    // env.json keeps the hosts' clocks as read.
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(
        env["clocks"]["hosts"],
        serde_json::json!([
            {"host": "hosta", "offset_s": null, "error_s": null},
            {"host": "hostc", "offset_s": null, "error_s": null}
        ])
    );
}
