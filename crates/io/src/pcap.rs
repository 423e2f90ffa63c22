//! Classic pcap files as ports.
//!
//! [`PcapTx`] writes LINKTYPE_ETHERNET records with **nanosecond**
//! timestamps (magic `0xa1b23c4d`, native byte order; tcpdump, tshark and
//! Wireshark read it) stamped with CLOCK_REALTIME when each frame is queued.
//! [`PcapRx`] reads classic pcap files of either resolution and byte order;
//! pcapng is not supported.
//!
//! The global header is written and parsed by the `pcap-file` crate. The
//! 16-byte record header is written here: pcap-file 2.0's `PcapWriter` owns
//! its writer without a way to flush it short of consuming it, and writes
//! each header field as a separate call; one 16-byte copy into a 1 MiB
//! `BufWriter` keeps the writer far above 1 Mpps of 60-byte frames.
//! Records are read with pcap-file's `next_raw_packet`, which (unlike
//! `next_packet`) accepts truncated captures whose original length exceeds
//! the snap length.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pcap_file::pcap::{PcapHeader, PcapReader};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use crate::port::{RxFrame, RxPort, TxPort};
use crate::IoError;

/// Bytes of output buffered before a write to the file.
const WRITE_BUFFER: usize = 1 << 20;
/// Records delivered per `recv_batch` call.
const READ_BATCH: usize = 1024;

/// A pcap file being written, as a transmit port.
pub struct PcapTx {
    out: BufWriter<File>,
    path: PathBuf,
    buf: Vec<u8>,
    /// Length of the frame left in `buf` by the last `fill`.
    last_len: usize,
    tx_errors: u64,
}

impl PcapTx {
    /// Creates (or truncates) `path` and writes the pcap global header.
    /// `slot_size` is the largest frame that will be written (bytes without FCS).
    pub fn create(path: &Path, slot_size: usize) -> Result<Self, IoError> {
        let file = File::create(path).map_err(|err| IoError::PcapCreate {
            path: path.to_path_buf(),
            err,
        })?;
        let mut out = BufWriter::with_capacity(WRITE_BUFFER, file);
        let header = PcapHeader {
            snaplen: slot_size.max(65535).min(u32::MAX as usize) as u32,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
            ..PcapHeader::default()
        };
        header
            .write_to(&mut out)
            .map_err(|e| write_err(path, pcap_io(e)))?;
        Ok(PcapTx {
            out,
            path: path.to_path_buf(),
            buf: vec![0; slot_size],
            last_len: 0,
            tx_errors: 0,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn write_err(path: &Path, err: std::io::Error) -> IoError {
    IoError::PcapWrite {
        path: path.to_path_buf(),
        err,
    }
}

fn pcap_io(e: PcapError) -> std::io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => std::io::Error::other(other.to_string()),
    }
}

impl TxPort for PcapTx {
    fn backend(&self) -> String {
        "pcap".to_string()
    }

    fn slot_size(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn send_batch<F: FnMut(usize, &mut [u8], usize) -> usize>(
        &mut self,
        n: usize,
        mut fill: F,
    ) -> Result<usize, IoError> {
        for i in 0..n {
            let len = fill(i, &mut self.buf, self.last_len);
            self.last_len = len.min(self.buf.len());
            if len == 0 || len > self.buf.len() {
                self.tx_errors += 1;
                continue;
            }
            let ts = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO);
            let mut rec = [0u8; 16];
            rec[0..4].copy_from_slice(&(ts.as_secs() as u32).to_ne_bytes());
            rec[4..8].copy_from_slice(&ts.subsec_nanos().to_ne_bytes());
            rec[8..12].copy_from_slice(&(len as u32).to_ne_bytes());
            rec[12..16].copy_from_slice(&(len as u32).to_ne_bytes());
            self.out
                .write_all(&rec)
                .and_then(|()| self.out.write_all(&self.buf[..len]))
                .map_err(|e| write_err(&self.path, e))?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), IoError> {
        self.out.flush().map_err(|e| write_err(&self.path, e))
    }

    fn tx_errors(&self) -> u64 {
        self.tx_errors
    }
}

impl std::fmt::Debug for PcapTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapTx")
            .field("path", &self.path)
            .field("slot_size", &self.buf.len())
            .finish()
    }
}

/// A pcap file being read, as a receive port.
pub struct PcapRx {
    reader: PcapReader<File>,
    path: PathBuf,
    nanos: bool,
    eof: bool,
    /// An error met after some frames of a batch were delivered; returned by
    /// the next call.
    pending: Option<IoError>,
}

impl PcapRx {
    /// Opens `path` and checks that it is a classic pcap file of Ethernet frames.
    pub fn open(path: &Path) -> Result<Self, IoError> {
        let open_err = |err| IoError::PcapOpen {
            path: path.to_path_buf(),
            err,
        };
        let bad = |reason: String| IoError::PcapFormat {
            path: path.to_path_buf(),
            reason,
        };
        let mut file = File::open(path).map_err(open_err)?;
        if file.metadata().map_err(open_err)?.is_dir() {
            return Err(open_err(std::io::Error::from_raw_os_error(libc::EISDIR)));
        }
        let mut magic = [0u8; 4];
        let got = file.read(&mut magic).map_err(open_err)?;
        if got == 4 && magic == [0x0a, 0x0d, 0x0d, 0x0a] {
            return Err(bad(
                "pcapng is not supported (convert it with: editcap -F pcap IN OUT)".into(),
            ));
        }
        file.rewind().map_err(open_err)?;
        let reader = PcapReader::new(file).map_err(|e| match e {
            PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                bad("too short for a pcap header".into())
            }
            PcapError::IoError(err) => IoError::PcapRead {
                path: path.to_path_buf(),
                err,
            },
            _ => bad("not a pcap file (wrong magic number)".into()),
        })?;
        let header = reader.header();
        if header.datalink != DataLink::ETHERNET {
            return Err(bad(format!(
                "link type {:?} is not Ethernet",
                header.datalink
            )));
        }
        Ok(PcapRx {
            nanos: header.ts_resolution == TsResolution::NanoSecond,
            reader,
            path: path.to_path_buf(),
            eof: false,
            pending: None,
        })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl RxPort for PcapRx {
    fn backend(&self) -> String {
        "pcap".to_string()
    }

    fn recv_batch<F: FnMut(&RxFrame<'_>)>(
        &mut self,
        _timeout: Duration,
        mut on_frame: F,
    ) -> Result<usize, IoError> {
        if let Some(e) = self.pending.take() {
            self.eof = true;
            return Err(e);
        }
        let mut n = 0;
        while n < READ_BATCH && !self.eof {
            match self.reader.next_raw_packet() {
                None => self.eof = true,
                Some(Ok(p)) => {
                    let frac = if self.nanos {
                        p.ts_frac as u64
                    } else {
                        p.ts_frac as u64 * 1000
                    };
                    on_frame(&RxFrame {
                        data: &p.data,
                        wire_len: p.orig_len.max(p.incl_len),
                        ts_ns: p.ts_sec as u64 * 1_000_000_000 + frac,
                    });
                    n += 1;
                }
                Some(Err(e)) => {
                    let err = match e {
                        PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                            IoError::PcapFormat {
                                path: self.path.clone(),
                                reason: "the last record is truncated".into(),
                            }
                        }
                        PcapError::IoError(err) => IoError::PcapRead {
                            path: self.path.clone(),
                            err,
                        },
                        other => IoError::PcapFormat {
                            path: self.path.clone(),
                            reason: other.to_string(),
                        },
                    };
                    if n > 0 {
                        // Deliver the count of this batch; the error comes next.
                        self.pending = Some(err);
                        return Ok(n);
                    }
                    self.eof = true;
                    return Err(err);
                }
            }
        }
        Ok(n)
    }

    /// True once the end of the file was reached, or a read error was returned.
    fn at_eof(&self) -> bool {
        self.eof
    }
}

impl std::fmt::Debug for PcapRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapRx")
            .field("path", &self.path)
            .field("eof", &self.eof)
            .finish()
    }
}
