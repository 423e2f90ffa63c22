//! pcap ports: write, read back, and check with tshark.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{now_ns, udp_frame, MAC_A, MAC_B};
use pktlab_io::pcap::{PcapRx, PcapTx};
use pktlab_io::port::{RxPort, TxPort};
use pktlab_io::IoError;

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("pktio-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn frames(n: u32) -> Vec<Vec<u8>> {
    let sizes = [60usize, 64, 128, 1514, 9014];
    (0..n)
        .map(|i| {
            udp_frame(
                MAC_A,
                MAC_B,
                1000 + i as u16,
                i,
                sizes[i as usize % sizes.len()],
            )
        })
        .collect()
}

fn write(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut tx = PcapTx::create(path, 9014).unwrap();
    assert_eq!(tx.slot_size(), 9014);
    let mut done = 0;
    while done < frames.len() {
        let want = 64.min(frames.len() - done);
        done += tx
            .send_batch(want, |i, slot, _| {
                let f = &frames[done + i];
                slot[..f.len()].copy_from_slice(f);
                f.len()
            })
            .unwrap();
    }
    tx.flush().unwrap();
    assert_eq!(tx.tx_errors(), 0);
}

fn read_all(path: &std::path::Path) -> Vec<(Vec<u8>, u32, u64)> {
    let mut rx = PcapRx::open(path).unwrap();
    let mut got = Vec::new();
    while !rx.at_eof() {
        rx.recv_batch(Duration::ZERO, |f| {
            got.push((f.data.to_vec(), f.wire_len, f.ts_ns))
        })
        .unwrap();
    }
    assert_eq!(
        rx.recv_batch(Duration::ZERO, |_| panic!("frame after EOF"))
            .unwrap(),
        0
    );
    assert!(rx.at_eof());
    got
}

#[test]
fn pcap_round_trip_and_tshark() {
    const N: u32 = 3000;
    let dir = TempDir::new("rt");
    let path = dir.0.join("out.pcap");
    let frames = frames(N);
    let t0 = now_ns();
    write(&path, &frames);
    let t1 = now_ns();

    let got = read_all(&path);
    assert_eq!(got.len(), N as usize);
    let mut last = 0;
    for (i, (data, wire_len, ts)) in got.iter().enumerate() {
        assert_eq!(data, &frames[i], "frame {i}");
        assert_eq!(*wire_len as usize, frames[i].len());
        assert!(
            *ts >= t0 && *ts <= t1,
            "frame {i}: ts {ts} outside the write"
        );
        assert!(*ts >= last);
        last = *ts;
    }

    // tshark must be installed (Debian: apt-get install tshark).
    let out = Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "-T",
            "fields",
            "-e",
            "frame.len",
        ])
        .output()
        .expect("running tshark (apt-get install tshark)");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lens: Vec<usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(lens.len(), N as usize, "tshark frame count");
    assert_eq!(lens, frames.iter().map(Vec::len).collect::<Vec<_>>());
}

#[test]
fn pcap_reads_microsecond_big_endian_truncated_captures() {
    use pcap_file::pcap::{PcapHeader, PcapWriter, RawPcapPacket};
    let dir = TempDir::new("us");
    let path = dir.0.join("us.pcap");
    let header = PcapHeader {
        snaplen: 96,
        endianness: pcap_file::Endianness::Big,
        ts_resolution: pcap_file::TsResolution::MicroSecond,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(&path).unwrap(), header).unwrap();
    let f = udp_frame(MAC_A, MAC_B, 1, 1, 1514);
    w.write_raw_packet(&RawPcapPacket {
        ts_sec: 1_700_000_000,
        ts_frac: 123_456,
        incl_len: 96,
        orig_len: 1514,
        data: f[..96].into(),
    })
    .unwrap();
    drop(w);
    let got = read_all(&path);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, &f[..96]);
    assert_eq!(got[0].1, 1514);
    assert_eq!(got[0].2, 1_700_000_000_123_456_000);
}

#[test]
fn pcap_errors_name_the_path() {
    let e = PcapTx::create("/nonexistent/dir/x.pcap".as_ref(), 1514).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot create pcap file /nonexistent/dir/x.pcap: No such file or directory"
    );
    assert!(e.is_usage());
    let e = PcapRx::open("/nonexistent/dir/x.pcap".as_ref()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot open pcap file /nonexistent/dir/x.pcap: No such file or directory"
    );
    assert!(e.is_usage());

    let dir = TempDir::new("err");
    let p = dir.0.join("ng.pcapng");
    std::fs::write(&p, [0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]).unwrap();
    let e = PcapRx::open(&p).unwrap_err();
    assert!(
        matches!(e, IoError::PcapFormat { .. }) && e.is_usage(),
        "{e}"
    );
    assert!(e.to_string().contains("pcapng"), "{e}");
    let p = dir.0.join("junk.pcap");
    std::fs::write(&p, b"this is not a pcap file at all").unwrap();
    let e = PcapRx::open(&p).unwrap_err();
    assert!(e.to_string().contains("junk.pcap"), "{e}");
    assert!(e.is_usage());

    // A file cut in the middle of a record.
    let p = dir.0.join("cut.pcap");
    write(&p, &frames(3));
    let len = std::fs::metadata(&p).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(len - 10).unwrap();
    let mut rx = PcapRx::open(&p).unwrap();
    let mut n = 0;
    assert_eq!(rx.recv_batch(Duration::ZERO, |_| n += 1).unwrap(), 2);
    assert_eq!(n, 2);
    assert!(!rx.at_eof());
    let e = rx.recv_batch(Duration::ZERO, |_| n += 1).unwrap_err();
    assert_eq!(n, 2);
    assert!(e.to_string().contains("truncated"), "{e}");
    assert!(rx.at_eof());
}
