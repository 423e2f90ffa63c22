//! Fuzz harnesses for the parsers of untrusted bytes in this crate: the
//! receiver's frame parser and the command-line value parsers (ranges,
//! sizes, rates, link speeds, durations, counts, MACs). Seeds in
//! `fuzz/corpus/frame/` and `fuzz/corpus/params/`; `bench/fuzz` runs the
//! same harnesses with millions of cases.

#[path = "../../../fuzz/harness.rs"]
mod harness;

use std::str::FromStr;

use pktlab_wire::payload::STREAM_MASK;
use pktlab_wire::{
    parse_count, parse_duration, parse_link_speed, parse_rate, parse_test_frame, verify_checksums,
    EndpointRange, MacAddr, SizeMix, MAGIC, PAYLOAD_LEN,
};
use proptest::prelude::*;

/// What the parser must hold for any input: no panic, and a recognised
/// frame's fields come from inside the frame.
fn check_frame(bytes: &[u8]) {
    let _ = verify_checksums(bytes);
    if let Some(t) = parse_test_frame(bytes) {
        assert_eq!(t.frame_len, bytes.len());
        assert!(t.payload.stream <= STREAM_MASK);
        // Ethernet (14) + IPv4 (20) + UDP (8) + the payload is the least.
        assert!(bytes.len() >= 14 + 20 + 8 + PAYLOAD_LEN, "{bytes:02x?}");
        let magic = MAGIC.to_be_bytes();
        assert!(bytes.windows(2).any(|w| w == magic));
    }
}

/// Every value parser on one text: errors are fine, panics are not, and
/// what parses prints back to something that parses to the same value.
fn check_params(text: &str) {
    if let Ok(mac) = MacAddr::from_str(text) {
        assert_eq!(MacAddr::from_str(&mac.to_string()).unwrap(), mac);
    }
    if let Ok(range) = EndpointRange::from_str(text) {
        let again = EndpointRange::from_str(&range.to_string()).unwrap();
        assert_eq!(again.to_string(), range.to_string());
        assert!(range.count() >= 1);
    }
    if let Ok(mix) = SizeMix::from_str(text) {
        assert!(!mix.pattern().is_empty());
        assert!(mix.min() <= mix.max());
        let again = SizeMix::from_str(&mix.to_string()).unwrap();
        assert_eq!(again.pattern(), mix.pattern());
    }
    if let Ok(rate) = parse_rate(text) {
        for size in [64.0, 1518.0] {
            if let Ok(pps) = rate.to_pps(size, Some(1e10)) {
                assert!(pps.is_finite() && pps >= 0.0, "{text}: {pps}");
            }
        }
    }
    if let Ok(bps) = parse_link_speed(text) {
        assert!(bps.is_finite() && bps > 0.0, "{text}: {bps}");
    }
    let _ = parse_duration(text);
    let _ = parse_count(text);
}

#[test]
fn frame_seeds_parse_as_written() {
    // Seeds made by hand (see fuzz/README.md): stream and sequence number
    // of each test frame, None for the frames that are not test frames.
    let expect: &[(&str, Option<(u32, u32)>)] = &[
        ("arp.bin", None),
        ("ipv4-1518.bin", Some((0xabcdef, 0xffff_fff0))),
        ("ipv4-options.bin", Some((2, 0))),
        ("ipv4-tcp.bin", None),
        ("ipv4.bin", Some((1, 7))),
        ("ipv6.bin", Some((3, 0x7fff_ffff))),
        ("qinq-ipv6.bin", Some((5, 2))),
        ("vlan.bin", Some((4, 1))),
        ("wrong-magic.bin", None),
    ];
    let dir = harness::corpus_dir("frame");
    for (name, want) in expect {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let got = parse_test_frame(&bytes).map(|t| (t.payload.stream, t.payload.seq));
        assert_eq!(got, *want, "{name}");
    }
}

#[test]
fn frames_truncated_at_every_offset() {
    for seed in harness::corpus("frame") {
        for cut in 0..=seed.len() {
            check_frame(&seed[..cut]);
        }
    }
}

#[test]
fn regressions() {
    // An IPv4 header whose IHL (15 words) runs past a short frame.
    let mut f = std::fs::read(harness::corpus_dir("frame").join("ipv4.bin")).unwrap();
    f[14] = 0x4f;
    check_frame(&f[..40]);
    check_params("");
    check_params("[");
    check_params("[]:");
    check_params("1.1.1.1:65535-0");
    check_params("*");
    check_params("0%");
    check_params("1e308Gbps");
}

proptest! {
    #![proptest_config(harness::config())]

    #[test]
    fn fuzz_frame_parser(bytes in harness::inputs(harness::corpus("frame"))) {
        check_frame(&bytes);
    }

    #[test]
    fn fuzz_value_parsers(text in harness::text_inputs(harness::corpus("params"))) {
        check_params(&text);
        check_params(text.trim());
    }
}
