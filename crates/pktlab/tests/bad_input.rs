//! Bad input gets one line on stderr naming the problem, and exit code 2
//! (usage) or 1 (runtime); never a panic. The checks hold with --io null.

mod common;

use std::process::Command;

use common::{finish, pktlab, Run, PKTLAB};

fn one_line_error(r: &Run, code: i32, needle: &str) {
    assert_eq!(r.code, code, "stdout {:?} stderr {:?}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{:?}", r.stderr);
    assert!(r.stderr.starts_with("pktlab: "), "{:?}", r.stderr);
    assert!(r.stderr.contains(needle), "{:?} lacks {needle:?}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["-d", "300.1.1.1"], "300.1.1.1"),
        (&["-l", "20"], "20"),
        (&["-l", "60"], "FCS"),
        (&["-R", "fast"], "fast"),
        (&["-d", "8.8.8.8"], "--allow-public"),
        (&["-s", "198.18.10.1", "-d", "2001:2::1"], "IPv"),
        (&["-D", "01:02:03"], "01:02:03"),
        (&["--vlan", "4095"], "4095"),
        (&["-n", "0"], "count"),
        (&["-t", "0s"], "duration"),
        (&["-R", "50%"], "--link-speed"),
        (&["--cpus", "3-1"], "3-1"),
        (&["--flows", "sideways"], "sideways"),
        (&["--io", "dpdk"], "dpdk"),
        (&["-p", "0"], "invalid thread count 0: use 1 to 1024"),
        (&["-p", "1025"], "invalid thread count 1025: use 1 to 1024"),
    ];
    for (args, needle) in cases {
        for io in ["null", "afpacket"] {
            let mut all = vec!["gen", "--io", io];
            if io == "afpacket" {
                all.extend(["-i", "lo"]);
            }
            all.extend_from_slice(args);
            if args.contains(&"--io") {
                all = [&["gen"][..], args].concat();
            }
            one_line_error(&pktlab(&all), 2, needle);
        }
    }
}

#[test]
fn recv_thread_count_is_checked_before_opening_anything() {
    for (n, needle) in [
        ("0", "invalid thread count 0: use 1 to 1024"),
        ("1025", "invalid thread count 1025: use 1 to 1024"),
    ] {
        let r = pktlab(&["recv", "--io", "afpacket", "-i", "lo", "-p", n]);
        one_line_error(&r, 2, needle);
    }
}

#[test]
fn missing_things_are_named() {
    one_line_error(&pktlab(&["gen", "-i", "nosuchif"]), 2, "nosuchif");
    one_line_error(
        &pktlab(&["gen", "--io", "null", "-i", "nosuchif"]),
        2,
        "nosuchif",
    );
    one_line_error(&pktlab(&["recv", "-i", "nosuchif"]), 2, "nosuchif");
    one_line_error(
        &pktlab(&["gen", "--io", "pcap:/nonexistent/dir/x.pcap", "-n", "1"]),
        2,
        "/nonexistent/dir/x.pcap",
    );
    one_line_error(
        &pktlab(&["recv", "--io", "pcap:/nonexistent/dir/x.pcap"]),
        2,
        "/nonexistent/dir/x.pcap",
    );
    one_line_error(&pktlab(&["gen"]), 2, "-i");
    one_line_error(&pktlab(&["bench", "--duration", "1s"]), 2, "1s");
    one_line_error(&pktlab(&["bench", "--traffic", "inet5"]), 2, "inet5");
}

#[test]
fn without_root_the_socket_error_says_so() {
    // A copy that user nobody may run (the build tree may not be readable).
    let dir = std::env::temp_dir().join(format!("pktlab-nonroot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("pktlab");
    std::fs::copy(PKTLAB, &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_nobody = |args: &[&str]| {
        finish(
            Command::new("setpriv")
                .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
                .arg(&bin)
                .args(args)
                .output()
                .expect("setpriv (util-linux)"),
        )
    };
    let r = as_nobody(&["gen", "-i", "lo", "-D", "02:00:00:00:00:02", "-n", "1"]);
    one_line_error(&r, 1, "root");
    let r = as_nobody(&["recv", "-i", "lo", "-n", "1"]);
    one_line_error(&r, 1, "root");
    // Generating into null needs no privilege at all.
    let r = as_nobody(&["gen", "--io", "null", "-n", "10", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}
