//! The in-kernel receiver (`recv --io xdp`): the XDP program of
//! crates/io/bpf/xdprecv.c checks every frame where the driver hands it
//! over and drops it (or passes it on); user space only reads its maps.
//!
//! The program is attached through a bpf_link ([`crate::loader`]), so it
//! is gone when the [`XdpRecv`] is detached or dropped, and when the
//! process ends however it ends.

mod batch;
mod hist;
mod maps;

use std::sync::Mutex;

use aya::maps::PerCpuArray;
use aya::programs::{TestRun, TestRunOptions, Xdp};

pub use hist::{bucket_of, bucket_range, LatencyHistogram, BUCKETS, SUB_BITS};
pub use maps::{Cfg, CpuStats, Stream};

use crate::loader::{bpf_error, Aligned, AttachMode, Attached, XdpAttachment, XdpObject};
use crate::IoError;

static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/xdprecv.o"));

/// Streams tracked when `--streams` is not given: a stream id is the
/// generator's flow index, and 65536 covers the flow counts of the built-in
/// lab and of every example campaign, in 4 MiB of state.
pub const DEFAULT_STREAMS: u32 = 1 << 16;
/// Stream ids are 24 bits (crates/wire/src/payload.rs).
pub const MAX_STREAMS: u32 = 1 << 24;

/// The program for every frame size: multi-buffer frames measured by
/// bpf_xdp_get_buff_len.
const FRAGS: &str = "xdprecv";
/// The same for interfaces whose frames are one buffer each: it measures
/// them without a helper call.
const LINEAR: &str = "xdprecv_linear";
/// Below this MTU a frame fits one buffer with every driver pktlab knows
/// (veth: 4096-byte pages less headroom and shared info, about 3500).
const LINEAR_MAX_MTU: u32 = 3000;

/// How to run the receiver program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XdpRecvConfig {
    /// Stream ids below this have state; frames of others are untracked.
    pub streams: u32,
    /// Pass frames on to the kernel's stack rather than drop them.
    pub pass: bool,
    pub mode: AttachMode,
    /// Count only the first this many frames (`recv -n`): the program
    /// stops counting at exactly this many, whatever the CPUs.
    pub count: Option<u64>,
    /// Which test frames are timed (`--latency`).
    pub timing: Timing,
}

/// Which test frames the program times (`recv --io xdp --latency`). The
/// clock read is the dearest step of the program, so the choice is between
/// latency from every frame and the receiver's speed (README, "`recv --io
/// xdp`").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Every test frame (`on`, the default).
    Every,
    /// One test frame in N on each CPU, N ≥ 2 (`1/N`): its first, its
    /// N+1th, ... The quantiles describe that sample.
    OneIn(u32),
    /// None (`off`): no latency, the last frame dated by user space to
    /// within a look.
    Off,
}

impl Timing {
    /// The largest N of `1/N`.
    pub const MAX_ONE_IN: u32 = 1 << 20;

    /// The program's `time_every` setting: 1, N or 0.
    pub fn cfg_value(self) -> u32 {
        match self {
            Timing::Every => 1,
            Timing::OneIn(n) => n,
            Timing::Off => 0,
        }
    }

    /// Whether the program dates every frame (`last_ns`): only when it
    /// times every one; otherwise user space dates the last frame.
    pub fn dates_every_frame(self) -> bool {
        self == Timing::Every
    }

    /// N when one test frame in N is timed.
    pub fn one_in(self) -> Option<u32> {
        match self {
            Timing::OneIn(n) => Some(n),
            _ => None,
        }
    }
}

impl std::str::FromStr for Timing {
    type Err = String;

    /// `on`, `off` or `1/N` (`1/1` is `on`).
    fn from_str(s: &str) -> Result<Timing, String> {
        let bad = || {
            format!(
                "invalid latency '{s}': use on, off or 1/N with N from 1 to {}",
                Timing::MAX_ONE_IN
            )
        };
        match s {
            "on" => Ok(Timing::Every),
            "off" => Ok(Timing::Off),
            _ => {
                let n = s.strip_prefix("1/").ok_or_else(bad)?;
                // Digits only: Rust's parser would take "+16".
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                match n.parse::<u32>() {
                    Ok(1) => Ok(Timing::Every),
                    Ok(n) if (2..=Timing::MAX_ONE_IN).contains(&n) => Ok(Timing::OneIn(n)),
                    _ => Err(bad()),
                }
            }
        }
    }
}

impl Default for XdpRecvConfig {
    fn default() -> Self {
        XdpRecvConfig {
            streams: DEFAULT_STREAMS,
            pass: false,
            mode: AttachMode::Auto,
            count: None,
            timing: Timing::Every,
        }
    }
}

/// The receiver program, loaded and attached to one interface.
pub struct XdpRecv {
    obj: XdpObject,
    /// The program that runs: [`FRAGS`] or [`LINEAR`].
    program: &'static str,
    attachment: Mutex<Option<XdpAttachment>>,
    mode: Attached,
    pass: bool,
    timing: Timing,
    iface: String,
    streams: u32,
    ncpus: usize,
}

impl std::fmt::Debug for XdpRecv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpRecv")
            .field("iface", &self.iface)
            .field("streams", &self.streams)
            .finish()
    }
}

impl XdpRecv {
    /// Loads the program with state for `cfg.streams` streams and attaches
    /// it to `iface` (in the calling thread's namespace).
    pub fn open(iface: &str, cfg: &XdpRecvConfig) -> Result<XdpRecv, IoError> {
        let dev = crate::iface::lookup(iface)?;
        if !crate::iface::is_up(iface)? {
            return Err(IoError::InterfaceDown(iface.to_string()));
        }
        let mut r = XdpRecv::load(cfg, iface)?;
        // The linear program where no frame can span buffers, unless the
        // driver refuses it; the multi-buffer one for jumbo MTUs.
        let attachment = if dev.mtu <= LINEAR_MAX_MTU {
            match r.obj.attach(LINEAR, &dev, cfg.mode) {
                Ok(a) => {
                    r.program = LINEAR;
                    a
                }
                Err(_) => r.obj.attach(FRAGS, &dev, cfg.mode)?,
            }
        } else {
            r.obj.attach(FRAGS, &dev, cfg.mode)?
        };
        r.mode = attachment.mode();
        *r.attachment.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(attachment);
        Ok(r)
    }

    /// Loads the program without attaching it: frames reach it only
    /// through [`XdpRecv::run_once`]. `iface` only names it in errors.
    pub fn load(cfg: &XdpRecvConfig, iface: &str) -> Result<XdpRecv, IoError> {
        if cfg.streams == 0 || cfg.streams > MAX_STREAMS {
            return Err(IoError::XdpSetting(format!(
                "invalid stream count {}: give 1 to {MAX_STREAMS} (stream ids are 24 bits)",
                cfg.streams
            )));
        }
        let ncpus =
            aya::util::nr_cpus().map_err(|(what, e)| IoError::Other(format!("{what}: {e}")))?;
        let settings = Cfg {
            tai_minus_realtime: crate::xdpgen::tai_minus_realtime_ns(),
            pass: u32::from(cfg.pass),
            time_every: cfg.timing.cfg_value(),
            limit: cfg.count.unwrap_or(0),
        };
        let obj = XdpObject::load_configured(
            &OBJECT.0,
            &[("streams", cfg.streams)],
            Some(("CFG", &settings)),
            iface,
        )?;
        Ok(XdpRecv {
            obj,
            program: FRAGS,
            mode: Attached::Generic,
            attachment: Mutex::new(None),
            pass: cfg.pass,
            timing: cfg.timing,
            iface: iface.to_string(),
            streams: cfg.streams,
            ncpus,
        })
    }

    /// Makes [`XdpRecv::run_once`] run the linear program (for frames of
    /// one buffer) rather than the multi-buffer one.
    pub fn run_linear_program(&mut self) {
        self.program = LINEAR;
    }

    /// Whether the linear program runs (attached, or for `run_once`).
    pub fn runs_linear_program(&self) -> bool {
        self.program == LINEAR
    }

    /// Runs the program once on `frame` (BPF_PROG_RUN), on the calling
    /// thread's CPU; returns its verdict (XDP_DROP 1, XDP_PASS 2).
    pub fn run_once(&mut self, frame: &[u8]) -> Result<u32, IoError> {
        let iface = self.iface.clone();
        let prog: &mut Xdp = self
            .obj
            .ebpf_mut()
            .program_mut(self.program)
            .ok_or_else(|| missing("xdprecv program"))?
            .try_into()
            .map_err(|e| bpf_error("finding the xdprecv program", &iface, &e))?;
        if prog.fd().is_err() {
            prog.load()
                .map_err(|e| bpf_error("loading the xdprecv program", &iface, &e))?;
        }
        let r = prog
            .test_run(TestRunOptions {
                data_in: Some(frame),
                repeat: 1,
                ..TestRunOptions::new()
            })
            .map_err(|e| bpf_error("running the xdprecv program (BPF_PROG_RUN)", &iface, &e))?;
        Ok(r.return_value)
    }

    /// The backend's name in reports: `xdp (native XDP)`, with `pass`
    /// when frames go on to the stack.
    pub fn backend(&self) -> String {
        if self.pass {
            format!("xdp ({}, pass)", self.mode)
        } else {
            format!("xdp ({})", self.mode)
        }
    }

    /// Which test frames are timed.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Streams with state.
    pub fn stream_limit(&self) -> u32 {
        self.streams
    }

    /// The possible CPUs (the length of per-CPU values).
    pub fn cpus(&self) -> usize {
        self.ncpus
    }

    /// The bytes of the program's maps' values: the stream states, and per
    /// CPU the counters and the histogram, and the admitted frames' count.
    pub fn memory_bytes(&self) -> u64 {
        let stream = std::mem::size_of::<Stream>() as u64;
        let per_cpu = std::mem::size_of::<CpuStats>() as u64 + BUCKETS as u64 * 8;
        u64::from(self.streams) * stream + self.ncpus as u64 * per_cpu + 8
    }

    /// Detaches the program: no frame is counted after this, so what the
    /// maps hold next is final. Frames go to the kernel's stack again.
    pub fn detach(&self) {
        let mut a = self.attachment.lock().unwrap_or_else(|e| e.into_inner());
        a.take();
    }

    /// Each possible CPU's counters.
    pub fn cpu_stats(&self) -> Result<Vec<CpuStats>, IoError> {
        let err = |e: &aya::maps::MapError| bpf_error("reading the counters", &self.iface, e);
        let map = self
            .obj
            .ebpf()
            .map("stats")
            .ok_or_else(|| missing("stats"))?;
        let m: PerCpuArray<_, CpuStats> = PerCpuArray::try_from(map).map_err(|e| err(&e))?;
        let v = m.get(&0, 0).map_err(|e| err(&e))?;
        Ok(v.iter().copied().collect())
    }

    /// The latency histogram, summed over CPUs.
    pub fn histogram(&self) -> Result<LatencyHistogram, IoError> {
        let err = |e: &aya::maps::MapError| bpf_error("reading the histogram", &self.iface, e);
        let map = self.obj.ebpf().map("hist").ok_or_else(|| missing("hist"))?;
        let m: PerCpuArray<_, u64> = PerCpuArray::try_from(map).map_err(|e| err(&e))?;
        let mut counts = vec![0u64; BUCKETS];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = m.get(&(i as u32), 0).map_err(|e| err(&e))?.iter().sum();
        }
        Ok(LatencyHistogram { counts })
    }

    /// Calls `each(id, state)` for every stream that had a frame, in id
    /// order. Read with the program detached, the states are final.
    pub fn for_each_stream(&self, mut each: impl FnMut(u32, &Stream)) -> Result<(), IoError> {
        let map = self
            .obj
            .ebpf()
            .map("streams")
            .ok_or_else(|| missing("streams"))?;
        let aya::maps::Map::Array(data) = map else {
            return Err(missing("streams array"));
        };
        use std::os::fd::AsFd;
        batch::for_each(data.fd().as_fd(), self.streams, |id, s: &Stream| {
            if s.received > 0 {
                each(id, s);
            }
        })
        .map_err(|e| IoError::Xdp {
            op: "reading the streams (BPF_MAP_LOOKUP_BATCH)".into(),
            iface: self.iface.clone(),
            reason: crate::error::os_message(&e),
        })
    }
}

fn missing(name: &str) -> IoError {
    IoError::Other(format!("no {name} map in the xdprecv object"))
}

#[cfg(test)]
mod tests {
    use super::Timing;

    #[test]
    fn latency_settings() {
        for (text, timing, cfg) in [
            ("on", Timing::Every, 1),
            ("1/1", Timing::Every, 1),
            ("off", Timing::Off, 0),
            ("1/2", Timing::OneIn(2), 2),
            ("1/16", Timing::OneIn(16), 16),
            ("1/1048576", Timing::OneIn(1 << 20), 1 << 20),
        ] {
            let t: Timing = text.parse().unwrap();
            assert_eq!((t, t.cfg_value()), (timing, cfg), "{text}");
        }
        assert_eq!(Timing::OneIn(16).one_in(), Some(16));
        assert_eq!(Timing::Every.one_in(), None);
        assert_eq!(Timing::Off.one_in(), None);
        assert!(Timing::Every.dates_every_frame());
        assert!(!Timing::OneIn(2).dates_every_frame());
        assert!(!Timing::Off.dates_every_frame());
        for bad in [
            "",
            "ON",
            "1/0",
            "1/",
            "1/1048577",
            "2/4",
            "1/+4",
            "1/ 4",
            "1/4.0",
            "16",
        ] {
            assert_eq!(
                bad.parse::<Timing>(),
                Err(format!(
                    "invalid latency '{bad}': use on, off or 1/N with N from 1 to 1048576"
                )),
                "{bad}"
            );
        }
    }
}
