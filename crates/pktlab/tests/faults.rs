//! Faults during campaigns, injected for real (needs root): the lab locked
//! against a second campaign, a campaign killed with `kill -9`, the DUT
//! broken mid-run (namespace deleted, port down, forwarding off),
//! `on_error = "skip"`, damaged results folders, and the public-destination
//! refusal on every path that sends.
//!
//! Each test builds its own lab (`gl<pid>x<n>`, removed on drop); frames
//! only flow inside it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{pktlab, sh, Lab, Run, PKTLAB};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn spawn(args: &[&str]) -> Child {
    Command::new(PKTLAB)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Polls `ready` every 50 ms for at most `limit`.
fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every file name in `dir`, sorted (hidden temporary files included).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

/// The one line of stderr that starts with `start`, and that stderr holds
/// no panic.
fn line_starting<'a>(r: &'a Run, start: &str) -> &'a str {
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("RUST_BACKTRACE"),
        "{}",
        r.stderr
    );
    let found: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with(start)).collect();
    assert_eq!(found.len(), 1, "{start:?} in:\n{}", r.stderr);
    found[0]
}

/// A campaign of 2 runs of `secs` on `lab`, with the default backend.
fn short(lab: &Lab, secs: &str, out: &Path) -> Vec<String> {
    [
        "bench",
        "--prefix",
        &lab.prefix,
        "-N",
        "2",
        "-t",
        secs,
        "--warmup",
        "0s",
        "--tail",
        "0s",
        "-o",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

fn lock_file(lab: &Lab) -> PathBuf {
    PathBuf::from(format!("/run/pktlab/lab-{}.lock", lab.prefix))
}

#[test]
fn a_second_campaign_is_refused_and_a_killed_ones_lock_is_taken_over() {
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let args = short(&lab, "3s", &a);
    let mut first = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let pid = first.id();
    let lock = lock_file(&lab);
    let holder = || format!("pid {pid}\ndir {}\n", a.canonicalize().unwrap().display());
    wait_for("the first campaign's lock", Duration::from_secs(60), || {
        a.is_dir() && std::fs::read_to_string(&lock).ok() == Some(holder())
    });

    // A second campaign on the same lab: refused, naming the first, and
    // without leaving a folder behind.
    let b = tmp.path().join("b");
    let r = pktlab(&[
        "bench",
        "--prefix",
        &lab.prefix,
        "-N",
        "1",
        "-t",
        "2s",
        "-o",
        b.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr,
        format!(
            "pktlab: lab {} is in use by another campaign: pid {pid}, results folder {} (wait for it to end, or stop it)\n",
            lab.prefix,
            a.canonicalize().unwrap().display()
        )
    );
    assert!(!b.exists());
    // rfc2544 goes through the same lock.
    let r = pktlab(&[
        "rfc2544",
        "--prefix",
        &lab.prefix,
        "-o",
        b.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.starts_with(&format!(
            "pktlab: lab {} is in use by another campaign: pid {pid}, ",
            lab.prefix
        )),
        "{}",
        r.stderr
    );
    assert!(!b.exists());

    // kill -9 during the second run.
    let runs = a.join("runs");
    wait_for("the first run", Duration::from_secs(60), || {
        names(&runs) == ["forwarding.inet4.1.jsonl"]
    });
    let kept = read(runs.join("forwarding.inet4.1.jsonl"));
    std::thread::sleep(Duration::from_millis(1000));
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    // The kernel dropped the flock; the file still names the dead holder.
    assert_eq!(read(&lock), holder());
    // Nothing half-written, and no XDP program left on the lab's ports:
    // AF_XDP attaches through a bpf_link that dies with its process.
    assert_eq!(names(&runs), ["forwarding.inet4.1.jsonl"]);
    for (ns, port) in [("gen", "g0"), ("dut", "d0"), ("dut", "d1"), ("rcv", "r0")] {
        let link = sh(&format!("ip -n {} link show {port}", lab.ns(ns)));
        assert!(!link.contains("xdp"), "{port}: {link}");
    }

    // --resume takes the lock over, says so, and runs only the second run.
    let r = pktlab(&["bench", "--resume", a.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        line_starting(&r, &format!("pktlab: lab {}: took over", lab.prefix)),
        format!(
            "pktlab: lab {}: took over the lock left by pid {pid} (results folder {}), which ended without releasing it",
            lab.prefix,
            a.canonicalize().unwrap().display()
        )
    );
    assert!(
        r.stdout
            .contains("Resuming: 1 of 2 runs are already finished and will not run again."),
        "{}",
        r.stdout
    );
    assert_eq!(
        names(&runs),
        ["forwarding.inet4.1.jsonl", "forwarding.inet4.2.jsonl"]
    );
    assert_eq!(read(runs.join("forwarding.inet4.1.jsonl")), kept);
    assert_eq!(read(a.join("forwarding.inet4.pps")).lines().count(), 2);
    // Released cleanly this time: the next campaign finds it empty.
    assert_eq!(read(&lock), "");
    let _ = std::fs::remove_file(&lock);
}

/// Runs a 2-run campaign, breaks the lab with `inject` during the second
/// run, and checks that the run fails naming `fault` while the first stays.
fn fault_mid_campaign(inject: impl FnOnce(&Lab), fault: impl FnOnce(&Lab) -> String) {
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let args = short(&lab, "3s", &out);
    let child = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let runs = out.join("runs");
    wait_for("the first run", Duration::from_secs(60), || {
        names(&runs) == ["forwarding.inet4.1.jsonl"]
    });
    let kept = read(runs.join("forwarding.inet4.1.jsonl"));
    std::thread::sleep(Duration::from_millis(800));
    inject(&lab);
    let r = common::finish(child.wait_with_output().unwrap());
    assert_eq!(r.code, 1, "{r:?}");
    let line = line_starting(&r, "pktlab: run forwarding.inet4.2 ");
    // Broken during the run, or (on a slow machine) already before it.
    let during = "pktlab: run forwarding.inet4.2 failed: the lab broke during it: ";
    let before = "pktlab: run forwarding.inet4.2 not started: the lab is broken: ";
    assert!(
        line.starts_with(during) || line.starts_with(before),
        "{line}"
    );
    let fault = fault(&lab);
    assert!(line.contains(&fault), "want {fault:?} in {line}");
    // The finished run is intact and still counted.
    assert_eq!(names(&runs), ["forwarding.inet4.1.jsonl"]);
    assert_eq!(read(runs.join("forwarding.inet4.1.jsonl")), kept);
    let pps = read(out.join("forwarding.inet4.pps"));
    assert_eq!(pps.lines().count(), 1, "{pps}");
    let summary: serde_json::Value = serde_json::from_str(&read(out.join("summary.json"))).unwrap();
    assert_eq!(summary["complete"], false, "{summary}");
    let _ = std::fs::remove_file(lock_file(&lab));
}

#[test]
fn the_dut_namespace_deleted_mid_run_fails_the_run_naming_it() {
    fault_mid_campaign(
        |lab| {
            sh(&format!("ip netns del {}", lab.ns("dut")));
        },
        |lab| format!("namespace {} does not exist", lab.ns("dut")),
    );
}

#[test]
fn a_dut_port_set_down_mid_run_fails_the_run_naming_it() {
    fault_mid_campaign(
        |lab| {
            sh(&format!("ip -n {} link set d1 down", lab.ns("dut")));
        },
        |lab| format!("{}: d1 is down", lab.ns("dut")),
    );
}

#[test]
fn forwarding_turned_off_mid_run_fails_the_run_naming_it() {
    fault_mid_campaign(
        |lab| {
            sh(&format!(
                "ip netns exec {} sysctl -qw net.ipv4.ip_forward=0",
                lab.ns("dut")
            ));
        },
        |lab| format!("{}: net.ipv4.ip_forward is 0 (want 1)", lab.ns("dut")),
    );
}

#[test]
fn on_error_skip_goes_on_and_resume_never_runs_folder_values() {
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"skip\"\n[lab]\nprefix = \"{}\"\n[run]\niterations = 1\nduration = \"2s\"\n\
             warmup = \"0s\"\ntail = \"0s\"\norder = \"sequential\"\non_error = \"skip\"\n\
             [[config]]\nname = \"broken\"\napply = [\"echo cannot load module >&2; false\"]\n\
             [[config]]\nname = \"forwarding\"\n",
            lab.prefix
        ),
    )
    .unwrap();
    let out = tmp.path().join("r");
    let o = out.to_str().unwrap();
    let r = pktlab(&["bench", "-f", file.to_str().unwrap(), "-o", o]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        line_starting(&r, "pktlab: [1/2] broken"),
        format!(
            "pktlab: [1/2] broken inet4 #1 failed, skipped: applying configuration 'broken' failed: \
             `echo cannot load module >&2; false` failed in network namespace {}: cannot load module; \
             what it had applied was reverted",
            lab.ns("dut")
        )
    );
    assert_eq!(
        r.stderr.lines().last().unwrap(),
        format!("pktlab: 1 of 2 runs failed and were skipped; pktlab bench --resume {o} runs them again")
    );
    assert!(
        r.stdout.contains("[2/2] forwarding inet4 #1: forwarded "),
        "{}",
        r.stdout
    );
    assert_eq!(names(&out.join("runs")), ["forwarding.inet4.1.jsonl"]);

    // Values of the folder other than campaign.toml's commands never reach
    // a shell: plant command substitutions in env.json and a run file.
    let mark = tmp.path().join("MARK");
    let planted = format!("$(touch {})", mark.display());
    for f in [
        out.join("env.json"),
        out.join("runs/forwarding.inet4.1.jsonl"),
    ] {
        let text = read(&f);
        let spoiled = text
            .replace("\"text\": \"", &format!("\"text\": \"{planted}; "))
            .replace(
                "\"config_text\":\"",
                &format!("\"config_text\":\"{planted}; "),
            );
        assert_ne!(spoiled, text, "{}", f.display());
        std::fs::write(&f, spoiled).unwrap();
    }
    // The campaign is what runs: repaired there, the skipped run runs.
    let toml = out.join("campaign.toml");
    let fixed = read(&toml).replace("\"echo cannot load module >&2; false\"", "\"true\"");
    std::fs::write(&toml, fixed).unwrap();
    let r = pktlab(&["bench", "--resume", o]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains("Resuming: 1 of 2 runs are already finished"),
        "{}",
        r.stdout
    );
    assert_eq!(
        names(&out.join("runs")),
        ["broken.inet4.1.jsonl", "forwarding.inet4.1.jsonl"]
    );
    assert!(
        !mark.exists(),
        "a value of the results folder ran in a shell"
    );
    let _ = std::fs::remove_file(lock_file(&lab));
}

/// Copies folder `from` to `to`.
fn copy(from: &Path, to: &Path) {
    sh(&format!("cp -a {} {}", from.display(), to.display()));
}

#[test]
fn damaged_results_folders_are_recovered_or_named() {
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    let args = short(&lab, "2s", &good);
    let r = pktlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "{r:?}");
    let g = good.to_str().unwrap();
    let compared = pktlab(&["compare", g]);
    assert_eq!(compared.code, 0, "{compared:?}");
    let summary = read(good.join("summary.json"));
    let pps = read(good.join("forwarding.inet4.pps"));
    assert_eq!(pps.lines().count(), 2);
    let case = |name: &str| {
        let d = tmp.path().join(name);
        copy(&good, &d);
        d
    };
    let one_error = |r: &Run, code: i32, want: &str| {
        assert_eq!(r.code, code, "{r:?}");
        assert_eq!(r.stderr, format!("pktlab: {want}\n"));
    };

    // A truncated run file: every reader stops, naming it.
    let d = case("truncated");
    let run2 = d.join("runs/forwarding.inet4.2.jsonl");
    let text = read(&run2);
    std::fs::write(&run2, &text[..text.len() - 40]).unwrap();
    let want = format!(
        "{}: truncated: its last line is cut short (pktlab writes run files whole; \
         move it away and --resume runs it again)",
        run2.display()
    );
    let ds = d.to_str().unwrap();
    one_error(&pktlab(&["bench", "--resume", ds]), 2, &want);
    one_error(&pktlab(&["compare", ds]), 2, &want);
    one_error(&pktlab(&["report", ds]), 2, &want);

    // A file of a newer pktlab: refused, never guessed at.
    let d = case("newer");
    let run1 = d.join("runs/forwarding.inet4.1.jsonl");
    let field = format!("\"pktlab_version\":\"{VERSION}\"");
    let text = read(&run1);
    assert!(text.contains(&field));
    std::fs::write(
        &run1,
        text.replacen(&field, "\"pktlab_version\":\"99.0.0\"", 1),
    )
    .unwrap();
    let want = format!(
        "{}: written by pktlab 99.0.0, newer than this pktlab {VERSION}: read it with that version",
        run1.display()
    );
    let ds = d.to_str().unwrap();
    one_error(&pktlab(&["bench", "--resume", ds]), 2, &want);
    one_error(&pktlab(&["compare", ds]), 2, &want);
    one_error(&pktlab(&["report", ds]), 2, &want);
    let d = case("newer-env");
    let env = d.join("env.json");
    let text = read(&env);
    let pretty = format!("\"pktlab_version\": \"{VERSION}\"");
    assert!(text.contains(&pretty), "{text}");
    std::fs::write(
        &env,
        text.replace(&pretty, "\"pktlab_version\": \"0.99.0\""),
    )
    .unwrap();
    one_error(
        &pktlab(&["bench", "--resume", d.to_str().unwrap()]),
        2,
        &format!(
            "{}: written by pktlab 0.99.0, newer than this pktlab {VERSION}: read it with that version",
            env.display()
        ),
    );

    // A .pps edited by hand: compare refuses it; resume writes it again.
    let d = case("edited");
    let ds = d.to_str().unwrap();
    let pps_path = d.join("forwarding.inet4.pps");
    std::fs::write(&pps_path, "999999\n999999\n").unwrap();
    one_error(
        &pktlab(&["compare", ds]),
        2,
        &format!(
            "{}: does not match the 2 run files of forwarding.inet4 in runs/ (edited by hand?); \
             pktlab bench --resume {ds} writes it again from them",
            pps_path.display()
        ),
    );
    let r = pktlab(&["bench", "--resume", ds]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(read(&pps_path), pps);
    let again = pktlab(&["compare", ds]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.stdout, compared.stdout.replace(g, ds));

    // An empty or corrupt summary.json: a cache of the run files, so the
    // report computes it again and says so, and resume writes it again.
    for (name, bytes) in [("empty", ""), ("corrupt", "{\"cells\": [")] {
        let d = case(name);
        let ds = d.to_str().unwrap();
        std::fs::write(d.join("summary.json"), bytes).unwrap();
        let r = pktlab(&["report", ds]);
        assert_eq!(r.code, 0, "{r:?}");
        let note = line_starting(&r, &format!("note: {ds}: summary.json"));
        assert!(
            note.starts_with(&format!(
                "note: {ds}: summary.json is damaged ({ds}/summary.json: "
            )) && note.ends_with("): the summary was computed again from the run files."),
            "{note}"
        );
        let page = read(d.join("report.html"));
        assert!(
            page.contains("summary.json is damaged"),
            "the page says it too"
        );
        // compare reads the .pps files and the runs; no summary needed.
        let c = pktlab(&["compare", ds]);
        assert_eq!(c.code, 0, "{c:?}");
        assert_eq!(c.stdout, compared.stdout.replace(g, ds));
        let r = pktlab(&["bench", "--resume", ds]);
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(read(d.join("summary.json")), summary);
    }
    let _ = std::fs::remove_file(lock_file(&lab));
}

#[test]
fn public_destinations_are_refused_on_every_sending_path() {
    let tmp = tempfile::tempdir().unwrap();
    let allowed = "(use --allow-public to send there anyway)";
    for (dst, shown) in [
        ("8.8.8.8", "8.8.8.8"),
        ("2001:4860::8888", "2001:4860::8888"),
    ] {
        let d = if dst.contains(':') {
            format!("[{dst}]")
        } else {
            dst.to_string()
        };
        let want = format!(
            "destination {shown} is outside the benchmark, private and documentation ranges {allowed}"
        );
        for io in ["null", "afpacket"] {
            let mut args = vec!["gen", "--io", io, "-n", "1", "-d", &d];
            if io == "afpacket" {
                args.extend(["-i", "lo"]);
            }
            let r = pktlab(&args);
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (2, format!("pktlab: {want}\n").as_str())
            );
        }
        // pkt-gen prints its start-up lines first, as netmap's does.
        let mut args = vec!["pkt-gen", "-f", "tx", "-i", "lo", "-n", "1", "-d", &d];
        if dst.contains(':') {
            args.extend(["-6", "-l", "76", "-s", "[2001:2::1]"]);
        }
        let r = pktlab(&args);
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(r.stderr.lines().last().unwrap(), format!("pkt-gen: {want}"));
    }
    // Campaigns (bench and rfc2544) refuse before any lab is built.
    let prefix = format!("pub{}", std::process::id());
    for (dst, shown) in [
        ("8.8.8.8:2000", "8.8.8.8"),
        (
            "10.255.255.250-11.0.0.5",
            "11.0.0.0 (in range 10.255.255.250-11.0.0.5)",
        ),
    ] {
        let file = tmp.path().join("pub.toml");
        std::fs::write(
            &file,
            format!("[lab]\nprefix = \"{prefix}\"\n[[traffic]]\nname = \"far\"\ndst = \"{dst}\"\n"),
        )
        .unwrap();
        for cmd in ["bench", "rfc2544"] {
            let out = tmp.path().join(cmd);
            let r = pktlab(&[
                cmd,
                "-f",
                file.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ]);
            assert_eq!(r.code, 2, "{r:?}");
            assert_eq!(
                r.stderr,
                format!(
                    "pktlab: traffic profile 'far': destination {shown} is outside the benchmark, \
                     private and documentation ranges, where campaigns never send\n"
                )
            );
            assert!(!out.exists());
        }
    }
    let list = sh("ip netns list");
    assert!(!list.contains(&prefix), "{list}");
}

/// A tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        sh(&format!(
            "mount -t tmpfs -o size={size} pktlab-test {}",
            at.display()
        ));
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_the_campaign_and_keeps_what_was_written() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    // 64 KiB: the campaign, env.json and a run file fit; the run's
    // aggregates with report.html (about 50 KB) do not.
    let disk = Tmpfs::new(&tmp.path().join("disk"), "64k");
    let out = disk.0.join("r");
    let args = short(&lab, "2s", &out);
    let r = pktlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 1, "{r:?}");
    // The error's line (a warning line may come before it).
    let line = line_starting(&r, &format!("pktlab: {}", out.display()));
    assert!(line.ends_with(": No space left on device"), "{line}");
    assert!(
        line.starts_with(&format!("pktlab: {}", out.display())),
        "{line}"
    );
    // What was written is whole; no temporary file is left.
    let runs = names(&out.join("runs"));
    assert!(!runs.is_empty() && runs.len() <= 2, "{runs:?}");
    for n in &runs {
        assert!(!n.starts_with('.'), "{runs:?}");
        let text = read(out.join("runs").join(n));
        assert!(text.ends_with('\n'), "{n}");
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "result", "{n}");
    }
    for n in names(&out) {
        assert!(!n.starts_with('.'), "temporary file {n} left");
        if n.ends_with(".json") {
            let _: serde_json::Value =
                serde_json::from_str(&read(out.join(&n))).unwrap_or_else(|e| panic!("{n}: {e}"));
        }
    }
    // Results files get the mode of any new file (the umask's), not the
    // 0600 of a temporary one.
    let plain = disk.0.join("plain");
    std::fs::write(&plain, "").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out.join("runs").join(&runs[0])), mode(&plain));
    assert_eq!(mode(&out.join("env.json")), mode(&plain));
    let _ = std::fs::remove_file(lock_file(&lab));
}
