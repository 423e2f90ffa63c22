//! AFL++ target: the pcap reader (crates/io/src/pcap.rs), through a file
//! as `recv --io pcap:FILE` reads it.
use std::time::Duration;

use pktlab_io::pcap::PcapRx;
use pktlab_io::port::RxPort;

fn main() {
    let path = std::env::temp_dir().join(format!("pktlab-afl-{}.pcap", std::process::id()));
    afl::fuzz!(|bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        if let Ok(mut rx) = PcapRx::open(&path) {
            for _ in 0..=bytes.len() / 16 + 1 {
                match rx.recv_batch(Duration::ZERO, |_| {}) {
                    Ok(_) if rx.at_eof() => break,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
    });
}
