//! pktlab as an ordinary user (uid 65534) with only CAP_NET_RAW and
//! CAP_NET_ADMIN, and with no capability at all, through util-linux's
//! setpriv (needs root to set it up). What works works; everything else
//! fails with one line naming the capability it lacks, never a raw EPERM
//! or a backtrace. Frames only go to a veth pair in a namespace made here.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{finish, Run, VethNs, PKTLAB};

const NET_CAPS: &str = "+net_raw,+net_admin";

/// `pktlab args` in `ns` as uid/gid 65534 with capabilities `caps`
/// (`-all` for none), from folder `cwd`.
fn as_user(ns: &str, caps: &str, cwd: &Path, args: &[&str]) -> Run {
    let inh = format!("--inh-caps={caps}");
    let mut cmd = Command::new("ip");
    cmd.args([
        "netns",
        "exec",
        ns,
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
    ])
    .args(["--clear-groups", &inh]);
    if caps != "-all" {
        cmd.arg(format!("--ambient-caps={caps}"));
    }
    finish(
        cmd.arg(PKTLAB)
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap(),
    )
}

/// A folder the unprivileged user may write in.
fn open_folder() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

fn one_line(r: &Run, code: i32, line: &str) {
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (code, format!("{line}\n").as_str()),
        "{r:?}"
    );
}

#[test]
fn with_net_raw_and_net_admin_the_sockets_work_and_the_rest_names_its_need() {
    let v = VethNs::new();
    let tmp = open_folder();
    let mac = v.mac("vb");
    for io in ["afpacket", "afxdp"] {
        let r = as_user(
            &v.ns,
            NET_CAPS,
            tmp.path(),
            &[
                "gen", "--io", io, "-i", "va", "-n", "100", "-R", "10kpps", "-D", &mac, "--json",
            ],
        );
        assert_eq!(r.code, 0, "{io}: {r:?}");
        assert_eq!(
            common::u(&common::summary(&r.stdout), "packets"),
            100,
            "{io}"
        );
    }
    // AF_PACKET receiving needs no more.
    let r = as_user(
        &v.ns,
        NET_CAPS,
        tmp.path(),
        &["recv", "--io", "afpacket", "-i", "vb", "-t", "1", "--json"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        common::counts(&common::summary(&r.stdout)),
        (0, 0, 0, 0, 0, 0)
    );
    // An AF_XDP receiver attaches an XDP program: CAP_BPF too.
    one_line(
        &as_user(
            &v.ns,
            NET_CAPS,
            tmp.path(),
            &["recv", "--io", "afxdp", "-i", "vb", "-t", "1"],
        ),
        1,
        "pktlab: loading and attaching XDP programs needs root or CAP_BPF and CAP_NET_ADMIN",
    );
    // The built-in lab makes namespaces: root.
    let prefix = format!("np{}", std::process::id());
    let need =
        "the built-in lab needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)";
    one_line(
        &as_user(&v.ns, NET_CAPS, tmp.path(), &["lab", "up", "--prefix", &prefix]),
        1,
        "pktlab: bringing the lab up needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)",
    );
    for cmd in ["bench", "rfc2544"] {
        let r = as_user(
            &v.ns,
            NET_CAPS,
            tmp.path(),
            &[cmd, "--prefix", &prefix, "-o", "r"],
        );
        one_line(&r, 1, &format!("pktlab: {need}"));
        assert!(!tmp.path().join("r").exists(), "{cmd} left its folder");
    }
    assert!(!common::sh("ip netns list").contains(&prefix));
}

#[test]
fn without_capabilities_every_socket_names_net_raw() {
    let v = VethNs::new();
    let tmp = open_folder();
    let mac = v.mac("vb");
    let gen = |io: &str| {
        as_user(
            &v.ns,
            "-all",
            tmp.path(),
            &["gen", "--io", io, "-i", "va", "-n", "10", "-D", &mac],
        )
    };
    one_line(
        &gen("afpacket"),
        1,
        "pktlab: opening an AF_PACKET socket needs root or CAP_NET_RAW",
    );
    one_line(
        &gen("afxdp"),
        1,
        "pktlab: opening an AF_XDP socket needs root or CAP_NET_RAW",
    );
    one_line(
        &as_user(&v.ns, "-all", tmp.path(), &["recv", "-i", "vb", "-t", "1"]),
        1,
        "pktlab: opening an AF_PACKET socket needs root or CAP_NET_RAW",
    );
    let r = as_user(
        &v.ns,
        "-all",
        tmp.path(),
        &["pkt-gen", "-f", "tx", "-i", "va", "-n", "10"],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr.lines().last().unwrap(),
        "pkt-gen: opening an AF_PACKET socket needs root or CAP_NET_RAW"
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    // What needs no socket works for anyone.
    let r = as_user(
        &v.ns,
        "-all",
        tmp.path(),
        &["gen", "--io", "null", "-n", "1000", "--json"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(common::u(&common::summary(&r.stdout), "packets"), 1000);
    let r = as_user(&v.ns, "-all", tmp.path(), &["linerate", "10Gbps"]);
    assert_eq!(r.code, 0, "{r:?}");
}
