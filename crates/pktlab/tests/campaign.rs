//! `pktlab bench` campaigns on the built-in lab (needs root).
//!
//! Every test uses its own lab prefix `c<pid>x<n>`; a Drop guard deletes
//! its namespaces, also when the test fails, and namespaces of a killed
//! run (whose pid is gone) are swept when the next guard is made. Packets
//! only flow inside the labs' own namespaces.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::summary::CampaignSummary;
use pktlab_lab::dut::{builtin_config, BuiltinBase, BUILTIN_NAMES};
use pktlab_lab::{netns, BuiltinLab, LabSpec};
use pktlab_trial::target::Target;
use serde_json::Value;

const PKTLAB: &str = env!("CARGO_BIN_EXE_pktlab");

/// A unique lab prefix; its namespaces are deleted on drop.
struct Prefix(String);

impl Prefix {
    fn new() -> Prefix {
        static N: AtomicU32 = AtomicU32::new(0);
        sweep_stale();
        // The DUT's lines and state probe run this pktlab (`pktlab knob`),
        // which this test process is not. Set before any test probes.
        std::env::set_var(pktlab_lab::dut::PKTLAB_ENV, env!("CARGO_BIN_EXE_pktlab"));
        Prefix(format!(
            "c{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ))
    }

    fn ns(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.0)
    }

    fn lab(&self) -> BuiltinLab {
        BuiltinLab::new(LabSpec {
            prefix: self.0.clone(),
            queues: 1,
            cpus: None,
        })
        .unwrap()
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let p = format!("{}-", self.0);
        for n in netns::list().unwrap_or_default() {
            if n.starts_with(&p) {
                let _ = Command::new("ip").args(["netns", "del", &n]).status();
            }
        }
    }
}

/// Deletes `c<pid>x<n>-*` namespaces whose test process is gone.
fn sweep_stale() {
    for name in netns::list().unwrap_or_default() {
        let Some(rest) = name.strip_prefix('c') else {
            continue;
        };
        let Some((pid, _)) = rest.split_once('x') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn bench(args: &[&str]) -> Output {
    Command::new(PKTLAB)
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The DUT namespace's nftables ruleset.
fn ruleset(p: &Prefix) -> String {
    netns::run_in(&p.ns("dut"), &["nft", "list", "ruleset"]).unwrap()
}

fn campaign_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("campaign.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn two_configurations_three_iterations() {
    let p = Prefix::new();
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "name = \"two\"\n[lab]\nprefix = \"{}\"\n[run]\niterations = 3\nduration = \"2s\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
         [[config]]\nname = \"forwarding\"\n[[config]]\nname = \"nft-stateless\"\n",
        p.0
    );
    let file = campaign_file(tmp.path(), &toml);
    let out_dir = tmp.path().join("results");
    let out = bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches(": forwarded ").count(), 6, "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("share this host's"));

    // The folder's contents.
    assert_eq!(
        names_in(&out_dir),
        [
            "campaign.toml",
            "env.json",
            "forwarding.inet4.pps",
            "ministat.txt",
            "nft-stateless.inet4.pps",
            "report.html",
            "runs",
            "runs.csv",
            "summary.json"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("campaign.toml")).unwrap(),
        toml
    );
    let mut runs = names_in(&out_dir.join("runs"));
    runs.sort();
    assert_eq!(
        runs,
        [
            "forwarding.inet4.1.jsonl",
            "forwarding.inet4.2.jsonl",
            "forwarding.inet4.3.jsonl",
            "nft-stateless.inet4.1.jsonl",
            "nft-stateless.inet4.2.jsonl",
            "nft-stateless.inet4.3.jsonl"
        ]
    );
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    assert_eq!(
        env["host"]["kernel"],
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap()
            .trim()
    );
    assert_eq!(env["pktlab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(env["virtual_lab"], true);
    let nics = env["nics"].as_array().unwrap();
    assert_eq!(nics.len(), 4);
    assert!(nics.iter().all(|n| n["driver"] == "veth"), "{nics:?}");
    assert!(env["interrupts"].as_str().unwrap().contains("veth"));
    assert!(env["configs"][1]["text"]
        .as_str()
        .unwrap()
        .contains("notrack"));

    // Each run file: a run line, per-second lines, a result line.
    let cpus = pktlab_lab::cpuload::cpu_count().unwrap();
    let mut order = Vec::new();
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for name in &runs {
        let lines = json_lines(&out_dir.join("runs").join(name));
        let (head, last) = (&lines[0], lines.last().unwrap());
        let parts: Vec<&str> = name.split('.').collect();
        assert_eq!(head["type"], "run");
        assert_eq!(head["config"], parts[0]);
        assert_eq!(head["traffic"], "inet4");
        assert_eq!(head["iteration"].to_string(), parts[2]);
        assert!(head["config_text"].is_string());
        // The backend is recorded: on the built-in lab, the XDP live-frame
        // generator unless asked otherwise, run as the header says.
        assert_eq!(head["io"], "xdp");
        assert_eq!(head["generator"], "xdp (live frames)");
        assert_eq!(last["tx"]["backend"], "xdp (live frames)");
        // The CPU plan of this process's allowed CPUs, as in env.json.
        let plan = pktlab_lab::CpuPlan::for_this_process(None).unwrap();
        assert_eq!(head["cpu_plan"], serde_json::to_value(&plan).unwrap());
        assert_eq!(head["cpu_plan"], env["cpu_plan"]);
        // The generator's threads ran on tester CPUs (and unpinned in
        // shared mode).
        let tester = match plan.is_shared() {
            false => serde_json::to_value(&plan.tester_cpus).unwrap(),
            true => serde_json::json!([null]),
        };
        let tester = tester.as_array().unwrap();
        for thread in last["tx"]["threads"].as_array().unwrap() {
            assert!(tester.contains(&thread["cpu"]), "tx: {thread}");
        }
        // The in-kernel receiver has no thread of its own: its "threads"
        // are the CPUs that ran its program, those of r0's NAPI threads,
        // which the plan pins to the tester's CPUs (veth alone would poll
        // r0 on the CPU that sent into it: the DUT's). In shared mode the
        // kernel's default: any CPU.
        assert_eq!(last["rx"]["backend"], "xdp (native XDP)");
        let rx_threads = last["rx"]["threads"].as_array().unwrap();
        assert!(!rx_threads.is_empty(), "{last}");
        if !plan.is_shared() {
            for thread in rx_threads {
                assert!(tester.contains(&thread["cpu"]), "rx: {thread}");
            }
        }
        // Per-CPU softnet deltas, and the DUT CPUs' drops summed from them.
        let softnet = last["softnet"].as_array().unwrap();
        assert_eq!(softnet.len(), cpus, "{softnet:?}");
        let dut_drops: u64 = softnet
            .iter()
            .filter(|c| {
                plan.dut_cpus
                    .contains(&(c["cpu"].as_u64().unwrap() as usize))
            })
            .map(|c| c["dropped"].as_u64().unwrap())
            .sum();
        assert_eq!(last["dut_backlog_drops"].as_u64(), Some(dut_drops));
        assert_eq!(last["type"], "result");
        let seconds: Vec<&Value> = lines.iter().filter(|l| l["type"] == "second").collect();
        assert!(seconds.len() >= 2, "{name}: {} seconds", seconds.len());
        assert_eq!(lines.len(), seconds.len() + 2);
        for s in &seconds {
            assert_eq!(s["ifaces"].as_array().unwrap().len(), 4);
            assert_eq!(s["cpus"].as_array().unwrap().len(), cpus);
            assert_eq!(s["interrupts"].as_array().unwrap().len(), 0);
        }
        // The per-second counters add up to the run's: every frame the
        // generator sent left g0 during the sampled seconds, and g0 sent
        // nothing else.
        let g0 = |v: &Value| -> u64 {
            v.as_array()
                .unwrap()
                .iter()
                .find(|i| i["iface"] == "g0")
                .unwrap()["tx_packets"]
                .as_u64()
                .unwrap()
        };
        let per_second: u64 = seconds.iter().map(|s| g0(&s["ifaces"])).sum();
        let total = g0(&last["lab_counters"]);
        assert_eq!(per_second, total, "{name}");
        assert_eq!(total, last["tx"]["packets"].as_u64().unwrap(), "{name}");
        assert!(!last["rx_samples"].as_array().unwrap().is_empty());
        order.push((head["started_at"].as_u64().unwrap(), parts[0].to_string()));
        values
            .entry(parts[0].to_string())
            .or_default()
            .push(last["forwarded_pps"].as_f64().unwrap());
    }
    // Interleaved: A B A B A B (runs last at least 2 s, so start times differ).
    order.sort();
    let configs: Vec<&str> = order.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(
        configs,
        [
            "forwarding",
            "nft-stateless",
            "forwarding",
            "nft-stateless",
            "forwarding",
            "nft-stateless"
        ]
    );

    // The .pps files hold each run's value, BSDRP's way, and Debian's
    // ministat reads them.
    for (config, v) in &values {
        let pps = std::fs::read_to_string(out_dir.join(format!("{config}.inet4.pps"))).unwrap();
        let lines: Vec<f64> = pps.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(lines.len(), 3);
        for (a, b) in lines.iter().zip(v) {
            assert!((a - b).abs() <= b * 1e-7, "{a} vs {b}");
        }
    }
    let ministat = Command::new("ministat")
        .args(["forwarding.inet4.pps", "nft-stateless.inet4.pps"])
        .current_dir(&out_dir)
        .output()
        .expect("Debian's ministat (scripts/deps installs it)");
    assert!(ministat.status.success());
    let m = String::from_utf8(ministat.stdout).unwrap();
    let row = m.lines().find(|l| l.starts_with("x ")).unwrap_or("");
    let fields: Vec<&str> = m
        .lines()
        .find(|l| l.starts_with("x   "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(fields[1], "3", "{m}{row}");
    let min = values["forwarding"]
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let shown: f64 = fields[2].parse().unwrap();
    assert!((shown - min).abs() <= min * 1e-7, "{shown} vs {min}");

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["runs_planned"], 6);
    assert_eq!(summary["runs_finished"], 6);
    assert_eq!(summary["complete"], true);
    assert_eq!(
        summary["configs"],
        serde_json::json!(["forwarding", "nft-stateless"])
    );
    assert!(summary["comparisons"][0]["comparison"]["t"].is_number());
    let ministat_txt = std::fs::read_to_string(out_dir.join("ministat.txt")).unwrap();
    assert!(ministat_txt.starts_with(
        "Forwarded packets per second, traffic inet4:\nx forwarding.inet4.pps\n+ nft-stateless.inet4.pps\n"
    ));
    // The folder reads back through its own record types: six runs with
    // the values of the run files, the environment, and the summary.
    let folder = ResultsDir::open(&out_dir).unwrap();
    let typed = folder.runs().unwrap();
    assert_eq!(typed.len(), 6);
    for (i, r) in typed.iter().enumerate() {
        let (h, res) = (&r.header, &r.result);
        assert_eq!(h.config, ["forwarding", "nft-stateless"][i / 3]);
        assert_eq!((h.traffic.as_str(), h.iteration), ("inet4", i % 3 + 1));
        assert_eq!(res.forwarded_pps, values[&h.config][i % 3]);
        assert!(res.offered_pps > 0.0 && (0.0..=1.0).contains(&res.loss_ratio));
    }
    let env_typed = folder.env().unwrap();
    assert_eq!(env_typed.nics.len(), 4);
    assert_eq!(env_typed.configs[1].name, "nft-stateless");
    assert_eq!(env_typed.host.kernel, env["host"]["kernel"]);
    let summary_typed = CampaignSummary::read(&folder).unwrap().unwrap();
    assert_eq!(
        (summary_typed.runs_planned, summary_typed.runs_finished),
        (6, 6)
    );
    assert_eq!(summary_typed.cells[1].values, values["nft-stateless"]);

    // runs.csv: a header and a row per run with the run's own figures.
    let csv = std::fs::read_to_string(out_dir.join("runs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 7, "{csv}");
    assert_eq!(
        rows[0][..5],
        [
            "config",
            "traffic",
            "iteration",
            "started_at",
            "forwarded_pps"
        ]
    );
    for (i, config) in [
        "forwarding",
        "forwarding",
        "forwarding",
        "nft-stateless",
        "nft-stateless",
        "nft-stateless",
    ]
    .iter()
    .enumerate()
    {
        let row = &rows[i + 1];
        assert_eq!(
            row[..3],
            [*config, "inet4", &(i % 3 + 1).to_string()],
            "{csv}"
        );
        let fwd: f64 = row[4].parse().unwrap();
        assert_eq!(fwd, values[*config][i % 3], "{csv}");
    }
    // The DUT is back to forwarding.
    assert_eq!(ruleset(&p), "");
    assert!(p.lab().problems().unwrap().is_empty());
}

#[test]
fn interrupted_campaign_resumes_without_losing_or_repeating_runs() {
    let p = Prefix::new();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("r");
    let mut child = Command::new(PKTLAB)
        .args([
            "bench",
            "--prefix",
            &p.0,
            "--configs",
            "forwarding,nft-stateful",
            "-N",
            "2",
            "-t",
            "2s",
            "--warmup",
            "0s",
            "--tail",
            "0s",
            "-o",
        ])
        .arg(&out_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let runs_dir = out_dir.join("runs");
    let finished = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|r| {
                r.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".jsonl") && !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Bench's stdout, line by line as it comes, and all of it at the end.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            all += &line;
            all.push('\n');
            let _ = lines_tx.send(line);
        }
        all
    });
    let start = Instant::now();
    while finished(&runs_dir).len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(120), "no progress");
        assert!(child.try_wait().unwrap().is_none(), "bench ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Ctrl-C during the third run: once bench says it starts.
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .expect("bench did not start its third run");
        if line.starts_with("[3/4] ") {
            break;
        }
    }
    unsafe_kill_int(child.id());
    let out = child.wait_with_output().unwrap();
    let stdout = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{stdout}{}", text(&out));
    assert!(
        stdout.contains(&format!(
            "Interrupted: 2 of 4 runs finished; carry on with `pktlab bench --resume {}`",
            out_dir.display()
        )),
        "{stdout}"
    );
    let mut before = finished(&runs_dir);
    before.sort();
    assert_eq!(
        before,
        ["forwarding.inet4.1.jsonl", "nft-stateful.inet4.1.jsonl"]
    );
    // Nothing half-written, and the DUT reverted.
    assert!(names_in(&runs_dir).iter().all(|n| n.ends_with(".jsonl")));
    assert_eq!(ruleset(&p), "");
    let kept: Vec<String> = before
        .iter()
        .map(|n| std::fs::read_to_string(runs_dir.join(n)).unwrap())
        .collect();
    let pps = std::fs::read_to_string(out_dir.join("forwarding.inet4.pps")).unwrap();
    assert_eq!(pps.lines().count(), 1);

    let out = bench(&["--resume", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Resuming: 2 of 4 runs are already finished and will not run again."),
        "{stdout}"
    );
    assert_eq!(stdout.matches(": forwarded ").count(), 2, "{stdout}");
    assert!(stdout.contains("[1/2] forwarding inet4 #2"), "{stdout}");
    let mut after = finished(&runs_dir);
    after.sort();
    assert_eq!(
        after,
        [
            "forwarding.inet4.1.jsonl",
            "forwarding.inet4.2.jsonl",
            "nft-stateful.inet4.1.jsonl",
            "nft-stateful.inet4.2.jsonl"
        ]
    );
    for (n, text) in before.iter().zip(&kept) {
        assert_eq!(
            &std::fs::read_to_string(runs_dir.join(n)).unwrap(),
            text,
            "{n} changed"
        );
    }
    let pps = std::fs::read_to_string(out_dir.join("nft-stateful.inet4.pps")).unwrap();
    assert_eq!(pps.lines().count(), 2);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["complete"], true);
    // A finished campaign has nothing left to run.
    let out = bench(&["--resume", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches(": forwarded ")
            .count(),
        0
    );
    assert_eq!(ruleset(&p), "");
}

/// SIGINT, as Ctrl-C sends it.
fn unsafe_kill_int(pid: u32) {
    let st = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn failing_configuration_is_reported_and_reverted() {
    let p = Prefix::new();
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(
        tmp.path(),
        &format!(
            "[lab]\nprefix = \"{}\"\n[run]\niterations = 1\nduration = \"2s\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
             [[config]]\nname = \"forwarding\"\n[[config]]\nname = \"broken\"\n\
             apply = [\"sysctl -qw net.ipv4.conf.all.send_redirects=1\", \"echo cannot load module >&2; false\"]\n\
             revert = [\"sysctl -qw net.ipv4.conf.all.send_redirects=0\"]\n",
            p.0
        ),
    );
    let out_dir = tmp.path().join("r");
    let out = bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "pktlab: applying configuration 'broken' failed: `echo cannot load module >&2; false` failed \
             in network namespace {}: cannot load module; what it had applied was reverted \
             (tried before the first run: nothing was measured; leave it out of the campaign)",
            p.ns("dut")
        )),
        "{err}"
    );
    let value = netns::run_in(
        &p.ns("dut"),
        &["cat", "/proc/sys/net/ipv4/conf/all/send_redirects"],
    )
    .unwrap();
    assert_eq!(value.trim(), "0");
    assert!(p.lab().problems().unwrap().is_empty());
    // Refused before the first run, forwarding's included: no run, and no
    // folder left behind.
    assert!(!out_dir.exists(), "{}", out_dir.display());
}

#[test]
fn builtin_configurations_apply_and_revert_exactly() {
    let p = Prefix::new();
    let (target, _) = Target::builtin(LabSpec {
        prefix: p.0.clone(),
        queues: 1,
        cpus: None,
    })
    .unwrap();
    let before = target.dut.state().unwrap();
    assert!(
        before.contains("/sys/class/net/d0/queues/rx-0/rps_cpus 0"),
        "{before}"
    );
    let cpus = pktlab_lab::cpuload::cpu_count().unwrap();
    let dut_ns = p.ns("dut");
    let sh = |line: &str| netns::run_in(&dut_ns, &["sh", "-c", line]).unwrap();
    for name in BUILTIN_NAMES {
        let c = builtin_config(name, &["d0", "d1"], cpus, &BuiltinBase::default()).unwrap();
        if let Err(e) = target.dut.apply(&c) {
            // A kernel without fq_codel refuses it (tests/knobs.rs checks
            // how); nothing stays applied.
            let e = e.to_string();
            assert!(
                name == "fq_codel" && e.contains("Specified qdisc kind is unknown"),
                "{name}: {e}"
            );
            assert_eq!(target.dut.state().unwrap(), before, "{name}");
            continue;
        }
        let during = target.dut.state().unwrap();
        match name {
            "forwarding" | "gro-off" => assert_eq!(during, before, "{name}"),
            "nft-stateless" => assert!(sh("nft list ruleset").contains("notrack")),
            "nft-stateful" => {
                let rules = sh("nft list ruleset");
                assert!(
                    rules.contains("ct state established,related accept"),
                    "{rules}"
                );
                assert!(
                    rules.contains("iifname \"d0\" ct state new accept"),
                    "{rules}"
                );
            }
            "nat44" => {
                let rules = sh("nft list ruleset");
                assert!(
                    rules.contains("iifname \"d0\" ct state new accept"),
                    "{rules}"
                );
                assert!(rules.contains("oifname \"d1\" masquerade"), "{rules}");
            }
            "rps" => assert_eq!(
                sh("cat /sys/class/net/d0/queues/rx-0/rps_cpus")
                    .trim()
                    .trim_start_matches('0'),
                pktlab_lab::dut::cpu_mask(cpus)
            ),
            "gro-on" => assert!(sh("ethtool -k d0").contains("generic-receive-offload: on")),
            "redirects-on" => assert_eq!(
                sh("cat /proc/sys/net/ipv4/conf/d0/send_redirects").trim(),
                "1"
            ),
            "tc-forward" => assert!(during.contains("d0 tcx ingress: tc_fwd"), "{during}"),
            // No CPU plan: on the CPU that polls d0.
            "xdp-forward" => assert!(during.contains("d0 xdp: xdp_fwd (native)"), "{during}"),
            "threaded-napi" => assert!(during.contains("d1 threaded 1"), "{during}"),
            "fq_codel" | "pfifo" => assert!(
                sh("tc qdisc show dev d1").starts_with(&format!("qdisc {name} ")),
                "{during}"
            ),
            _ => unreachable!(),
        }
        if !matches!(name, "forwarding" | "gro-off") {
            assert_ne!(during, before, "{name} changed nothing the probe sees");
        }
        target.dut.revert(&c, &before).unwrap();
        assert!(p.lab().problems().unwrap().is_empty(), "{name}");
    }
}

#[test]
fn interfaces_lab_with_a_namespace_runner() {
    // The built-in lab's ports described as a lab of existing interfaces,
    // with the DUT's commands run in its namespace.
    let p = Prefix::new();
    let lab = p.lab();
    lab.up().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(
        tmp.path(),
        &format!(
            "[lab]\nkind = \"interfaces\"\ngen_iface = \"g0\"\ngen_netns = \"{}\"\nrcv_iface = \"r0\"\nrcv_netns = \"{}\"\n\
             dut_in_mac = \"{}\"\ndut = \"netns {}\"\ndut_ifaces = [\"d0\", \"d1\"]\n\
             state = \"cat /proc/sys/net/ipv4/conf/all/send_redirects\"\n\
             [run]\niterations = 1\nduration = \"2s\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
             [[config]]\nname = \"redirects\"\napply = [\"sysctl -qw net.ipv4.conf.all.send_redirects=1\"]\n\
             revert = [\"sysctl -qw net.ipv4.conf.all.send_redirects=0\"]\n",
            lab.gen_ns(),
            lab.rcv_ns(),
            pktlab_lab::mac::format_mac(lab.dut_in_mac()),
            lab.dut_ns()
        ),
    );
    let out_dir = tmp.path().join("r");
    let out = bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(lines[0]["config"], "redirects");
    assert!(lines[0]["forwarded_pps"].as_f64().unwrap() > 0.0);
    assert_eq!(lines[1]["type"], "summary");
    assert_eq!(lines[1]["virtual_lab"], false);
    let run = json_lines(&out_dir.join("runs/redirects.inet4.1.jsonl"));
    let ifaces: Vec<&str> = run[1]["ifaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["iface"].as_str().unwrap())
        .collect();
    // The DUT's ports, in its namespace on this host, are watched too.
    assert_eq!(ifaces, ["g0", "d0", "d1", "r0"]);
    let roles: Vec<&str> = run[1]["ifaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["gen", "dut_in", "dut_out", "rcv"]);
    let result = run.last().unwrap();
    let sent = result["tx"]["packets"].as_u64().unwrap();
    let count = |iface: &str, which: &str| {
        result["lab_counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["iface"] == iface)
            .unwrap()[which]
            .as_u64()
            .unwrap()
    };
    // Every frame sent went into d0 and out of d1 (a few of the lab's own
    // frames, such as IPv6 neighbour discovery, may add to them).
    for (iface, which) in [("d0", "rx_packets"), ("d1", "tx_packets")] {
        let n = count(iface, which);
        assert!(
            (sent..=sent + 10).contains(&n),
            "{iface} {which} {n} of {sent}"
        );
    }
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("env.json")).unwrap()).unwrap();
    let drivers: Vec<&str> = env["nics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["iface"].as_str().unwrap())
        .collect();
    assert_eq!(drivers, ["g0", "r0", "dut:d0", "dut:d1"]);
    assert_eq!(env["nics"][2]["driver"], "veth");
    let value = netns::run_in(
        lab.dut_ns(),
        &["cat", "/proc/sys/net/ipv4/conf/all/send_redirects"],
    )
    .unwrap();
    assert_eq!(value.trim(), "0");
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = campaign_file(tmp.path(), "[run]\niteratons = 3\n");
    let nonempty = tmp.path().to_str().unwrap();
    for (args, msg) in [
        (
            vec!["--configs", "forwarding,pf"],
            "pktlab: unknown configuration 'pf': the built-in ones are forwarding, nft-stateless, nft-stateful, nat44, rps, gro-off, gro-on, redirects-on, tc-forward, xdp-forward, threaded-napi, fq_codel, pfifo, and KNOB-VALUE for a host sysctl (netdev_budget, netdev_budget_usecs, dev_weight, netdev_max_backlog, nf_conntrack_max)\n".to_string(),
        ),
        (
            vec!["-f", bad.to_str().unwrap()],
            format!("pktlab: {}: line 2: unknown field `iteratons`", bad.display()),
        ),
        (
            vec!["--resume", "/nonexistent/pktlab-r"],
            "pktlab: cannot resume /nonexistent/pktlab-r: No such file or directory".to_string(),
        ),
        (
            vec!["--io", "dpdk"],
            "pktlab: invalid I/O backend 'dpdk': use afpacket, afxdp, xdp or auto\n".to_string(),
        ),
        (
            vec!["--order", "zigzag"],
            "pktlab: invalid order 'zigzag': use interleaved, sequential or random\n".to_string(),
        ),
        (
            vec!["-o", nonempty],
            format!("pktlab: results folder {nonempty} already exists and is not empty"),
        ),
        (
            vec!["--resume", nonempty, "-N", "3"],
            format!("pktlab: -N cannot be used with --resume: the campaign is the one saved in {nonempty}\n"),
        ),
    ] {
        let out = bench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(&msg), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// On a lab with a CPU plan, the configurations that change RPS or GRO
/// revert to the plan's masks and to GRO on d0, not to the kernel's
/// defaults: the state probe reads the same after each, and the plan still
/// reads back.
#[test]
fn builtin_configurations_revert_to_the_cpu_plan() {
    let p = Prefix::new();
    let plan = pktlab_lab::CpuPlan::for_this_process(None).unwrap();
    let (target, _) = Target::builtin(LabSpec {
        prefix: p.0.clone(),
        queues: 1,
        cpus: Some(plan.clone()),
    })
    .unwrap();
    let before = target.dut.state().unwrap();
    let mask = plan.dut_mask();
    assert!(
        before.contains(&format!("/sys/class/net/d0/queues/rx-0/rps_cpus {mask}")),
        "{before}"
    );
    assert!(
        before.contains("d0 generic-receive-offload: on"),
        "{before}"
    );
    assert!(
        before.contains("d1 generic-receive-offload: off"),
        "{before}"
    );
    let cpus = pktlab_lab::cpuload::cpu_count().unwrap();
    for name in ["rps", "gro-off", "gro-on"] {
        let c = builtin_config(name, &["d0", "d1"], cpus, &plan.builtin_base()).unwrap();
        target.dut.apply(&c).unwrap();
        assert_ne!(
            target.dut.state().unwrap(),
            before,
            "{name} changed nothing"
        );
        target.dut.revert(&c, &before).unwrap();
        assert_eq!(target.dut.state().unwrap(), before, "{name}");
        let status = p.lab().cpu_status().unwrap().unwrap();
        assert!(status.matches(&plan), "{name}: {status}");
    }
}

/// The lab lock on a lab of existing interfaces (the built-in lab's ports
/// named as such): while one campaign runs on g0 and r0, a second one on
/// the same ports is refused before it touches anything, naming the first;
/// once the first has ended, the ports are free again.
#[test]
fn a_second_campaign_on_the_same_interfaces_is_refused() {
    let p = Prefix::new();
    let lab = p.lab();
    lab.up().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let file = campaign_file(
        tmp.path(),
        &format!(
            "[lab]\nkind = \"interfaces\"\ngen_iface = \"g0\"\ngen_netns = \"{}\"\nrcv_iface = \"r0\"\nrcv_netns = \"{}\"\n\
             dut_in_mac = \"{}\"\ndut = \"netns {}\"\ndut_ifaces = [\"d0\", \"d1\"]\n\
             [run]\niterations = 2\nduration = \"3s\"\nwarmup = \"0s\"\ntail = \"0s\"\n\
             [[config]]\nname = \"forwarding\"\n",
            lab.gen_ns(),
            lab.rcv_ns(),
            pktlab_lab::mac::format_mac(lab.dut_in_mac()),
            lab.dut_ns()
        ),
    );
    let first_dir = tmp.path().join("first");
    let mut first = Command::new(PKTLAB)
        .args(["bench", "-q", "-f", file.to_str().unwrap(), "-o"])
        .arg(&first_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    let lock = PathBuf::from(format!("/run/pktlab/netns-{}-port-g0.lock", lab.gen_ns()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&format!("pid {pid}\n"))) {
        assert!(Instant::now() < deadline, "no lock at {}", lock.display());
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first campaign ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second_dir = tmp.path().join("second");
    let out = bench(&[
        "-f",
        file.to_str().unwrap(),
        "-o",
        second_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "pktlab: port g0 in namespace {} is in use by another campaign: pid {pid}, results folder {} (wait for it to end, or stop it)\n",
            lab.gen_ns(),
            first_dir.canonicalize().unwrap().display()
        )
    );
    assert!(!second_dir.exists());
    let done = first.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Free again: the same campaign, one short run, goes through.
    let out = bench(&[
        "-f",
        file.to_str().unwrap(),
        "-N",
        "1",
        "-t",
        "1s",
        "-o",
        second_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
}
