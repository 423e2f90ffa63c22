//! `pktlab worker --stdio` spoken to directly, as a controller does over
//! ssh: the job, `ready`, `start`, interval lines and a summary; and every
//! way it stops on its own. Frames go over a veth pair in a namespace the
//! test creates (root needed).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::{VethNs, PKTLAB};

struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: BufReader<ChildStdout>,
}

impl Worker {
    fn start(ns: &str) -> Worker {
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns, PKTLAB, "worker", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Worker {
            stdin: child.stdin.take(),
            lines: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).unwrap();
        serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    /// Reads lines until the summary; returns the number of intervals
    /// and the summary.
    fn until_summary(&mut self, kind: &str) -> (usize, Value) {
        let mut intervals = 0;
        loop {
            let v = self.next();
            if v["type"] == kind {
                return (intervals, v);
            }
            if v["type"] == "started" || v["type"] == "listening" {
                continue;
            }
            assert!(v["type"].as_str().unwrap().ends_with("interval"), "{v}");
            intervals += 1;
        }
    }

    /// Waits (at most 10 s) for the exit code and the standard error.
    fn exit(mut self) -> (i32, String) {
        let end = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < end, "the worker did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut err).unwrap();
        (status.code().unwrap_or(-1), err)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn gen_job(v: &VethNs, duration: f64, deadline: f64) -> Value {
    let dst: Vec<u8> = v
        .mac("vb")
        .split(':')
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    json!({
        "version": 4,
        "deadline_secs": deadline,
        "task": {
            "role": "gen", "io": "afpacket", "iface": "va",
            "src_mac": [2, 0, 0, 0, 0, 1], "dst_mac": dst,
            "vlan": null, "ttl": 64,
            "src": "198.18.10.1:2000-198.18.10.20:2000",
            "dst": "198.19.10.1:2000-198.19.10.100:2000",
            "random_seed": null, "sizes": "64", "threads": 1, "count": null,
            "duration_secs": duration, "rate_pps": 2000.0, "batch": 32,
            "interval_secs": 0.25, "cpus": [], "netns": null
        }
    })
}

fn start_now(w: &mut Worker, ready: &Value) {
    let at = ready["clock_unix_ns"].as_u64().unwrap();
    w.send(&json!({"type": "start", "at_unix_ns": at}));
}

#[test]
fn a_receiver_and_a_generator_job_count_the_same_frames() {
    let v = VethNs::new();
    let mut rx = Worker::start(&v.ns);
    rx.send(&json!({
        "version": 4, "deadline_secs": 30.0,
        "task": {"role": "recv", "io": "afpacket", "iface": "vb", "threads": 1,
                 "count": null, "duration_secs": null, "idle_secs": null,
                 "interval_secs": 0.25, "cpus": [], "netns": null}
    }));
    let ready = rx.next();
    assert_eq!(ready["type"], "ready");
    assert_eq!(ready["version"], 4);
    assert_eq!(ready["pktlab"], env!("CARGO_PKG_VERSION"));
    // Its clock is this host's.
    let now = pktlab_io::clock::realtime_ns();
    assert!(ready["clock_unix_ns"].as_u64().unwrap().abs_diff(now) < 5_000_000_000);
    start_now(&mut rx, &ready);
    assert_eq!(rx.next()["type"], "listening");

    let mut tx = Worker::start(&v.ns);
    tx.send(&gen_job(&v, 1.0, 20.0));
    let ready = tx.next();
    start_now(&mut tx, &ready);
    assert_eq!(tx.next()["type"], "started");
    let (intervals, sent) = tx.until_summary("tx_summary");
    let packets = sent["packets"].as_u64().unwrap();
    // 1 s at 2 kpps: 2000 frames at most, fewer on a starved machine.
    assert!((1_000..=2_032).contains(&packets), "{sent}");
    assert!((2..=6).contains(&intervals), "{intervals}");
    assert_eq!(tx.exit().0, 0);

    // The receiver's intervals (every 0.25 s) count every frame sent
    // before it is stopped, so that the summary has them all.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut counted = 0;
    while counted < packets {
        let v = rx.next();
        assert_eq!(v["type"], "rx_interval", "{v}");
        counted += v["packets"].as_u64().unwrap();
        assert!(
            Instant::now() < deadline,
            "the receiver counted {counted} of {packets} frames within 10 s"
        );
    }
    rx.send(&json!({"type": "stop"}));
    let (_, got) = rx.until_summary("rx_summary");
    assert_eq!(got["packets"].as_u64(), Some(packets), "{got}");
    assert_eq!(got["lost"], 0);
    assert_eq!(got["foreign"], 0);
    // Every frame's latency comes along as histogram buckets, which the
    // controller keeps for rfc2544's latency test.
    let timed: u64 = got["latency_buckets"]
        .as_array()
        .unwrap_or_else(|| panic!("{got}"))
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(timed, packets, "{got}");
    assert_eq!(rx.exit().0, 0);
}

#[test]
fn the_end_of_input_stops_a_running_generator() {
    let v = VethNs::new();
    let mut w = Worker::start(&v.ns);
    w.send(&gen_job(&v, 60.0, 90.0));
    let ready = w.next();
    start_now(&mut w, &ready);
    assert_eq!(w.next()["type"], "started");
    assert_eq!(w.next()["type"], "tx_interval");
    let cut = Instant::now();
    // What a killed ssh does to the remote worker.
    w.stdin.take();
    let (_, summary) = w.until_summary("tx_summary");
    assert!(cut.elapsed() < Duration::from_secs(5));
    assert!(summary["seconds"].as_f64().unwrap() < 10.0, "{summary}");
    assert_eq!(w.exit().0, 0);
}

#[test]
fn the_deadline_and_sighup_stop_a_generator_whatever_the_controller_does() {
    let v = VethNs::new();
    // A 60 s run with a 1 s deadline: the worker's own limit wins.
    let mut w = Worker::start(&v.ns);
    w.send(&gen_job(&v, 60.0, 1.0));
    let ready = w.next();
    start_now(&mut w, &ready);
    let (_, summary) = w.until_summary("tx_summary");
    let secs = summary["seconds"].as_f64().unwrap();
    assert!((0.5..5.0).contains(&secs), "{summary}");
    assert_eq!(w.exit().0, 0);

    let mut w = Worker::start(&v.ns);
    w.send(&gen_job(&v, 60.0, 90.0));
    let ready = w.next();
    start_now(&mut w, &ready);
    assert_eq!(w.next()["type"], "started");
    let hup = Instant::now();
    common::sh(&format!("kill -HUP {}", w.child.id()));
    let (_, summary) = w.until_summary("tx_summary");
    assert!(hup.elapsed() < Duration::from_secs(5));
    assert!(summary["seconds"].as_f64().unwrap() < 10.0, "{summary}");
    assert_eq!(w.exit().0, 0);
}

#[test]
fn another_protocol_version_or_a_bad_job_is_one_error_line_and_exit_1() {
    let v = VethNs::new();
    let mut w = Worker::start(&v.ns);
    // A controller of version 1 (before the observe task).
    w.send(&json!({"version": 1, "task": {"role": "gen"}, "deadline_secs": 1}));
    let e = w.next();
    assert_eq!(e["type"], "error");
    let msg = format!(
        "protocol version 1 from the controller, but this worker (pktlab {}) speaks version 4: use the same pktlab version on every host",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(e["message"], msg.as_str());
    let (code, err) = w.exit();
    assert_eq!(code, 1);
    assert_eq!(err, format!("pktlab worker: {msg}\n"));

    // A destination outside the test ranges is refused before `ready`.
    let mut w = Worker::start(&v.ns);
    let mut job = gen_job(&v, 1.0, 5.0);
    job["task"]["dst"] = json!("8.8.8.8:53");
    w.send(&job);
    let e = w.next();
    assert_eq!(e["type"], "error");
    assert!(e["message"].as_str().unwrap().contains("8.8.8.8"), "{e}");
    assert_eq!(w.exit().0, 1);

    // Without --stdio: a usage error.
    let out = Command::new(PKTLAB).arg("worker").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pktlab: pktlab worker needs --stdio: it is started by pktlab bench over ssh\n"
    );
}

#[test]
fn an_observer_counts_a_generators_frames_per_interval_and_in_total() {
    let v = VethNs::new();
    let mut obs = Worker::start(&v.ns);
    obs.send(&json!({
        "version": 4, "deadline_secs": 30.0,
        "task": {"role": "observe", "cpus": true, "interval_secs": 0.25,
                 "ports": [{"role": "gen", "iface": "va", "netns": null},
                           {"role": "rcv", "iface": "vb", "netns": null}]}
    }));
    let ready = obs.next();
    assert_eq!(ready["type"], "ready");
    start_now(&mut obs, &ready);
    // Its first reading is taken: every frame from here on is counted.
    assert_eq!(obs.next()["type"], "observing");

    let mut tx = Worker::start(&v.ns);
    tx.send(&gen_job(&v, 1.0, 20.0));
    let ready = tx.next();
    start_now(&mut tx, &ready);
    let (_, sent) = tx.until_summary("tx_summary");
    let packets = sent["packets"].as_u64().unwrap();
    assert!((1_000..=2_032).contains(&packets), "{sent}");
    assert_eq!(tx.exit().0, 0);

    obs.send(&json!({"type": "stop"}));
    let mut seconds = Vec::new();
    let observed = loop {
        let line = obs.next();
        match line["type"].as_str().unwrap() {
            "second" => seconds.push(line),
            "observed" => break line,
            other => panic!("unexpected {other}: {line}"),
        }
    };
    let totals = observed["totals"].clone();
    assert_eq!(obs.exit().0, 0);
    let total = |iface: &str, which: &str| {
        totals
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["iface"] == iface)
            .unwrap()[which]
            .as_u64()
            .unwrap()
    };
    // va sent each frame and vb received it, nothing else.
    assert_eq!(total("va", "tx_packets"), packets, "{totals}");
    assert_eq!(total("vb", "rx_packets"), packets, "{totals}");
    assert_eq!(total("va", "rx_packets"), 0, "{totals}");
    assert_eq!(total("vb", "tx_packets"), 0, "{totals}");
    // 64-byte frames are 60 bytes without the FCS the counters leave out.
    assert_eq!(total("va", "tx_bytes"), packets * 60, "{totals}");
    // Quarter seconds numbered from 1, adding up to the totals.
    let ts: Vec<u64> = seconds.iter().map(|s| s["t"].as_u64().unwrap()).collect();
    assert_eq!(ts, (1..=ts.len() as u64).collect::<Vec<_>>());
    assert!(ts.len() >= 4, "{ts:?}");
    let summed: u64 = seconds
        .iter()
        .map(|s| {
            s["ifaces"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["iface"] == "vb" && c["role"] == "rcv")
                .unwrap()["rx_packets"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(summed, packets);
    // The host's CPUs, each a whole interval's percentages.
    let cpus = seconds[0]["cpus"].as_array().unwrap();
    assert!(!cpus.is_empty(), "{}", seconds[0]);
    // Its drop tracer (auto: the job does not say): nothing forwards in
    // this namespace, so its IP stack dropped every test frame vb took,
    // once each, in the worker's own namespace, which it calls `host`.
    assert!(observed["drop_trace_off"].is_null(), "{observed}");
    let places = observed["drops"]["places"].as_array().unwrap();
    assert!(!places.is_empty(), "{observed}");
    for p in places {
        assert_eq!(p["netns"], "host", "{observed}");
        assert_eq!(p["iface"], "vb", "{observed}");
    }
    let dropped: u64 = places.iter().map(|p| p["frames"].as_u64().unwrap()).sum();
    let missed = observed["drops"]["missed"].as_u64().unwrap();
    assert!(
        dropped <= packets && dropped + missed >= packets,
        "{packets} sent: {observed}"
    );
}

#[test]
fn an_observer_off_traces_nothing_and_one_outside_its_ports_namespaces_sees_no_drop() {
    // Frames dropped in another namespace are not this host's lab's.
    let v = VethNs::new();
    let other = VethNs::new();
    let mut obs = Worker::start(&v.ns);
    obs.send(&json!({
        "version": 4, "deadline_secs": 30.0,
        "task": {"role": "observe", "cpus": false, "interval_secs": 0.25,
                 "drop_trace": "auto",
                 "ports": [{"role": "dut_in", "iface": "vb", "netns": null}]}
    }));
    let ready = obs.next();
    start_now(&mut obs, &ready);
    assert_eq!(obs.next()["type"], "observing");
    let mut off = Worker::start(&v.ns);
    off.send(&json!({
        "version": 4, "deadline_secs": 30.0,
        "task": {"role": "observe", "cpus": false, "interval_secs": 0.25,
                 "drop_trace": "off",
                 "ports": [{"role": "dut_in", "iface": "vb", "netns": null}]}
    }));
    let ready = off.next();
    start_now(&mut off, &ready);
    assert_eq!(off.next()["type"], "observing");

    let mut tx = Worker::start(&other.ns);
    tx.send(&gen_job(&other, 0.5, 20.0));
    let ready = tx.next();
    start_now(&mut tx, &ready);
    let (_, sent) = tx.until_summary("tx_summary");
    assert!(sent["packets"].as_u64().unwrap() >= 500, "{sent}");
    assert_eq!(tx.exit().0, 0);

    for (mut w, traced) in [(obs, true), (off, false)] {
        w.send(&json!({"type": "stop"}));
        let observed = loop {
            let line = w.next();
            if line["type"] == "observed" {
                break line;
            }
            assert_eq!(line["type"], "second", "{line}");
        };
        if traced {
            assert_eq!(observed["drops"]["places"], json!([]), "{observed}");
        } else {
            assert!(observed["drops"].is_null(), "{observed}");
        }
        assert!(observed["drop_trace_off"].is_null(), "{observed}");
        assert_eq!(w.exit().0, 0);
    }
}

#[test]
fn an_observer_names_an_interface_it_cannot_find_before_ready() {
    let v = VethNs::new();
    let mut obs = Worker::start(&v.ns);
    obs.send(&json!({
        "version": 4, "deadline_secs": 5.0,
        "task": {"role": "observe", "cpus": false, "interval_secs": 1.0,
                 "ports": [{"role": "dut_in", "iface": "nosuch9", "netns": null}]}
    }));
    let e = obs.next();
    assert_eq!(e["type"], "error");
    assert!(e["message"].as_str().unwrap().contains("nosuch9"), "{e}");
    let (code, err) = obs.exit();
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
}
