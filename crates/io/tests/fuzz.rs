//! Fuzz harness for the pcap reader (`--io pcap:FILE`): any file must
//! open, or fail with one line naming it, and read to its end without a
//! panic. Seeds in `fuzz/corpus/pcap/`; `bench/fuzz` runs millions.

#[path = "../../../fuzz/harness.rs"]
mod harness;

use std::time::Duration;

use pktlab_io::pcap::PcapRx;
use pktlab_io::port::RxPort;
use proptest::prelude::*;

/// Reads `bytes` as a pcap file; returns the frames read before the end
/// or the first error.
fn read_all(bytes: &[u8]) -> usize {
    let path = harness::scratch_file("fuzz.pcap", bytes);
    let mut rx = match PcapRx::open(&path) {
        Ok(rx) => rx,
        Err(e) => {
            let text = e.to_string();
            assert!(!text.contains('\n') && text.contains("fuzz.pcap"), "{text}");
            return 0;
        }
    };
    let mut frames = 0;
    // A record is at least its 16-byte header: no file holds more.
    for _ in 0..=bytes.len() / 16 + 1 {
        let got = rx.recv_batch(Duration::ZERO, |f| {
            assert!(f.data.len() <= f.wire_len as usize || f.wire_len == 0);
            frames += 1;
        });
        match got {
            Ok(_) if rx.at_eof() => return frames,
            Ok(_) => {}
            Err(e) => {
                let text = e.to_string();
                assert!(!text.contains('\n'), "{text}");
                return frames;
            }
        }
    }
    panic!(
        "no end after {frames} frames of a {}-byte file",
        bytes.len()
    );
}

#[test]
fn seeds_read_to_the_end() {
    let dir = harness::corpus_dir("pcap");
    for (name, frames) in [
        ("big-endian.pcap", 2),
        ("header-only.pcap", 0),
        ("micro.pcap", 4),
        ("nano.pcap", 4),
        ("one-jumbo.pcap", 1),
        ("snaplen-64.pcap", 3),
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(read_all(&bytes), frames, "{name}");
    }
}

#[test]
fn truncated_at_every_offset() {
    for seed in harness::corpus("pcap") {
        for cut in 0..=seed.len().min(600) {
            read_all(&seed[..cut]);
        }
    }
}

proptest! {
    #![proptest_config(harness::config())]

    #[test]
    fn fuzz_pcap_reader(bytes in harness::inputs(harness::corpus("pcap"))) {
        read_all(&bytes);
    }
}
