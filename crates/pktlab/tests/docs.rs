//! `pktlab completions SHELL` and `pktlab man DIR`: every subcommand is in
//! the completions of each shell, and every man page renders.

mod common;

use std::process::Command;

use common::pktlab;

/// Every subcommand of pktlab, written out by hand.
const SUBCOMMANDS: [&str; 19] = [
    "gen",
    "recv",
    "lab",
    "bench",
    "rfc2544",
    "rfc9693",
    "compare",
    "report",
    "history",
    "linerate",
    "ifstat",
    "drops",
    "ministat",
    "pktgen-log",
    "pkt-gen",
    "worker",
    "knob",
    "completions",
    "man",
];

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let r = pktlab(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains("pktlab"), "{shell}");
        for sub in SUBCOMMANDS {
            assert!(r.stdout.contains(sub), "{shell} completions lack {sub}");
        }
        // Options of a subcommand are completed too.
        assert!(r.stdout.contains("trim-head"), "{shell}");
    }
    // bash parses its script.
    let r = pktlab(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("pktlab.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let check = Command::new("bash")
        .args(["-n"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn unknown_shell_is_a_usage_error() {
    let r = pktlab(&["completions", "tcsh"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
}

#[test]
fn man_pages_for_every_subcommand_render() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let r = pktlab(&["man", out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut pages = vec!["pktlab".to_string()];
    pages.extend(SUBCOMMANDS.iter().map(|s| format!("pktlab-{s}")));
    pages.extend(
        [
            "pktlab-lab-up",
            "pktlab-lab-down",
            "pktlab-lab-status",
            "pktlab-lab-check",
            "pktlab-history-import",
            "pktlab-history-import-pps",
            "pktlab-history-trend",
            "pktlab-history-report",
            "pktlab-history-compare",
            "pktlab-history-list",
            "pktlab-knob-xdp-forward",
            "pktlab-knob-tc-forward",
            "pktlab-knob-napi-threads",
            "pktlab-knob-stats",
            "pktlab-knob-xdp-drops",
        ]
        .map(String::from),
    );
    let listed: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(listed.len(), pages.len(), "{}", r.stdout);
    for page in &pages {
        let path = out.join(format!("{page}.1"));
        assert!(
            listed.contains(&path.to_str().unwrap()),
            "{page} not listed"
        );
        // groff with every warning on: a page that renders cleanly.
        let render = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
            .arg(&path)
            .output()
            .expect("groff (scripts/deps installs it)");
        let stderr = String::from_utf8_lossy(&render.stderr);
        assert!(
            render.status.success() && stderr.is_empty(),
            "{page}: {stderr}"
        );
        let text = String::from_utf8_lossy(&render.stdout);
        assert!(text.contains("NAME"), "{page}: {text}");
        assert!(text.contains(page.as_str()), "{page}: {text}");
        assert!(text.contains("SYNOPSIS"), "{page}: {text}");
    }
    let pkt_gen = std::fs::read_to_string(out.join("pktlab-pkt-gen.1")).unwrap();
    for option in ["\\-W", "\\-N", "\\-B", "tx|rx"] {
        assert!(pkt_gen.contains(option), "pkt-gen page lacks {option}");
    }
    let log = std::fs::read_to_string(out.join("pktlab-pktgen-log.1")).unwrap();
    assert!(log.contains("trim\\-head"), "{log}");
}

#[test]
fn man_into_an_unwritable_place_is_one_line() {
    let r = pktlab(&["man", "/proc/version/x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("pktlab: cannot create /proc/version/x"),
        "{}",
        r.stderr
    );
}
