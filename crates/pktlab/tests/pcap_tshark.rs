//! `pktlab gen --io pcap:FILE` decoded by an independent dissector:
//! tshark (Debian package tshark, installed by scripts/deps).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use common::pktlab;

struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!("pktlab-{}-{name}", std::process::id())))
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs tshark with checksum validation on and returns one row of the
/// requested fields per frame.
fn tshark(file: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-r", file, "-n"])
        .args([
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ])
        .args(["-T", "fields", "-E", "separator=/t"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark (apt-get install tshark)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn ipv4_imix_pcap_has_exact_sizes_valid_checksums_and_2000_flows() {
    let f = TempFile::new("v4.pcap");
    let io = format!("pcap:{}", f.path());
    let r = pktlab(&["gen", "--io", &io, "-n", "4800", "-l", "imix", "-q"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = tshark(
        f.path(),
        &[
            "frame.len",
            "ip.checksum.status",
            "udp.checksum.status",
            "ip.src",
            "ip.dst",
            "udp.srcport",
            "udp.dstport",
            "ip.ttl",
        ],
    );
    assert_eq!(rows.len(), 4800);
    // Simple IMIX, 7:4:1 exactly; the pcap holds frames without the FCS.
    let mut sizes: BTreeMap<u32, u32> = BTreeMap::new();
    for r in &rows {
        *sizes.entry(r[0].parse().unwrap()).or_default() += 1;
    }
    assert_eq!(
        sizes,
        BTreeMap::from([(60, 2800), (590, 1600), (1514, 400)])
    );
    // 1 = Good: tshark recomputed both checksums of every frame.
    assert!(rows.iter().all(|r| r[1] == "1" && r[2] == "1"), "{rows:?}");
    let flows: BTreeSet<&[String]> = rows.iter().map(|r| &r[3..7]).collect();
    assert_eq!(flows.len(), 2000);
    assert!(rows.iter().all(|r| r[7] == "64"));
    // The first frames follow the odometer: source address first.
    assert_eq!(
        rows[0][3..7],
        ["198.18.10.1", "198.19.10.1", "2000", "2000"]
    );
    assert_eq!(
        rows[1][3..7],
        ["198.18.10.2", "198.19.10.1", "2000", "2000"]
    );
    assert_eq!(
        rows[20][3..7],
        ["198.18.10.1", "198.19.10.2", "2000", "2000"]
    );
}

#[test]
fn ipv6_vlan_pcap_decodes() {
    let f = TempFile::new("v6.pcap");
    let io = format!("pcap:{}", f.path());
    let r = pktlab(&[
        "gen", "--io", &io, "-n", "2000", "-6", "--vlan", "42", "--ttl", "9", "-q",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = tshark(
        f.path(),
        &[
            "frame.len",
            "vlan.id",
            "udp.checksum.status",
            "ipv6.src",
            "ipv6.dst",
            "ipv6.hlim",
        ],
    );
    assert_eq!(rows.len(), 2000);
    // The smallest IPv6 frame with a VLAN tag: 84 bytes with the FCS.
    assert!(
        rows.iter()
            .all(|r| r[0] == "80" && r[1] == "42" && r[2] == "1" && r[5] == "9"),
        "{:?}",
        &rows[0]
    );
    let flows: BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|r| (r[3].as_str(), r[4].as_str()))
        .collect();
    assert_eq!(flows.len(), 2000);
    assert_eq!(rows[0][3], "2001:2::1");
    assert_eq!(rows[0][4], "2001:2:0:8000::1");
}
