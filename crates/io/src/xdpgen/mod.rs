//! The XDP live-frame generator (`--io xdp`): frames are built by an XDP
//! program in the kernel and redirected to the TX interface, with no copy
//! from user space and no socket.
//!
//! [`XdpGen::open`] checks the [delivery contract](delivery), loads
//! `crates/io/bpf/xdpgen.o` (embedded) with the frames' configuration as constants,
//! seeds one state per generating CPU, attaches the two tracing programs
//! that count what happened to the frames after the redirect, and keeps the
//! program attached to a private [`anchor`]. Each thread, pinned to its
//! CPU, then calls [`XdpGen::run`]: one BPF_PROG_RUN with
//! `BPF_F_TEST_XDP_LIVE_FRAMES` and `repeat = n`, which builds and sends
//! `n` frames of that CPU's share of the flows in batches of `batch`
//! (each batch flushed to the driver, and a veth peer's NAPI run, before
//! the next). [`XdpGen::counters`] and [`XdpGen::tx_report`] read the
//! program's counters back from its maps.
//!
//! The frames are byte for byte those of the wire crate's `FrameGen` for
//! the same spec, thread and thread count (apart from the timestamp): the
//! same flows in the same order (odometer, or the seeded permutation
//! through a flow table), per-stream sequence numbers, sizes and IMIX in
//! the same pattern. The program stamps CLOCK_REALTIME once per 16 frames
//! (the devmap's bulk, handed to the driver in one piece).
//!
//! Everything here works in the network namespace of the calling thread,
//! like the other ports. Nothing outlives the [`XdpGen`] or the process:
//! programs, maps, links and the anchor's namespace are file descriptors.

pub mod anchor;
pub mod delivery;
pub mod maps;
mod netdev;
mod netlink;
pub mod template;

use aya::maps::{Array, DevMap, PerCpuArray, PerCpuValues};
use aya::programs::{BtfTracePoint, TestRun, TestRunAttrs, TestRunOptions, Xdp};
use aya::Btf;
use pktlab_wire::{rfc4814, FrameSpec};

use crate::loader::{bpf_error, find_os_error, Aligned, XdpObject};
use crate::IoError;
use anchor::Anchor;
use delivery::{Demand, Peer, TxFacts};
pub use maps::{CpuState, TxReport};
pub(crate) use netlink::napi_pids;
use template::Templates;

static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/xdpgen.o"));

/// The XDP object built from `crates/io/bpf/xdpgen.c` (see `crates/io/bpf/build.sh`).
pub fn builtin_object() -> &'static [u8] {
    &OBJECT.0
}

/// Which program the threads run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Program {
    /// `xdpgen`: every frame built (flows, sequence numbers, timestamps).
    #[default]
    Generator,
    /// `xdp_probe`: the template redirected as it is, every frame the
    /// same. The technique's speed limit, for benchmarks only.
    Probe,
}

impl Program {
    fn name(self) -> &'static str {
        match self {
            Program::Generator => "xdpgen",
            Program::Probe => "xdp_probe",
        }
    }
}

/// How to run the generator.
#[derive(Clone, Debug)]
pub struct XdpGenConfig {
    /// The CPU of each generating thread, distinct: thread i must call
    /// [`XdpGen::run`] from a thread pinned to `cpus[i]`.
    pub cpus: Vec<usize>,
    /// Frames per live-frames batch (flushed to the driver together).
    pub batch: u32,
    /// Read the clock every this many frames (1: every frame).
    pub ts_every: u32,
    pub program: Program,
}

impl Default for XdpGenConfig {
    fn default() -> Self {
        XdpGenConfig {
            cpus: vec![0],
            batch: 64,
            ts_every: 16,
            program: Program::Generator,
        }
    }
}

/// How a [`XdpGen::run`] call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every frame asked for was built and handed on.
    Done,
    /// A signal cut the call short; the counters say how far it got.
    Interrupted,
}

/// A loaded generator for one interface.
pub struct XdpGen {
    // Drop order: the anchor's link before the object (either order is
    // safe: each holds its own references).
    _anchor: Anchor,
    obj: XdpObject,
    data_in: Vec<u8>,
    cfg: XdpGenConfig,
    iface: String,
    nsizes: usize,
    facts: TxFacts,
}

impl std::fmt::Debug for XdpGen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpGen")
            .field("iface", &self.iface)
            .field("cpus", &self.cfg.cpus)
            .finish()
    }
}

/// The number of possible CPUs (the length of per-CPU map values).
fn possible_cpus() -> Result<usize, IoError> {
    aya::util::nr_cpus().map_err(|(what, e)| IoError::Other(format!("{what}: {e}")))
}

/// CLOCK_TAI − CLOCK_REALTIME in ns. The kernel keeps TAI as REALTIME plus
/// a whole number of seconds (its tai_offset, 0 until NTP sets it), so the
/// measured difference rounded to whole seconds is exact.
pub(crate) fn tai_minus_realtime_ns() -> i64 {
    let now = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec to write; both clocks exist.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    };
    let r1 = now(libc::CLOCK_REALTIME);
    let t = now(libc::CLOCK_TAI);
    let r2 = now(libc::CLOCK_REALTIME);
    let d = t - (r1 + (r2 - r1) / 2);
    (d as f64 / 1e9).round() as i64 * 1_000_000_000
}

impl XdpGen {
    /// Checks that `iface` can deliver `spec`'s frames, then loads the
    /// generator for the threads of `cfg`.
    pub fn open(spec: &FrameSpec, iface: &str, cfg: &XdpGenConfig) -> Result<XdpGen, IoError> {
        let tx = crate::iface::lookup(iface)?;
        if !crate::iface::is_up(iface)? {
            return Err(IoError::InterfaceDown(iface.to_string()));
        }
        let threads = cfg.cpus.len() as u32;
        spec.validate_threads(threads)
            .map_err(|e| IoError::XdpSetting(e.to_string()))?;
        if let Some((i, c)) = cfg
            .cpus
            .iter()
            .enumerate()
            .find(|(i, c)| cfg.cpus[..*i].contains(c))
        {
            return Err(IoError::XdpSetting(format!(
                "--io xdp needs one CPU per thread, but thread {i} would share CPU {c}: give --cpus with {threads} distinct CPUs"
            )));
        }
        let mut t = template::build(spec, tx.index)?;
        let facts = delivery::gather(&tx)?;
        delivery::check(
            &facts,
            &Demand {
                cpus: &cfg.cpus,
                batch: cfg.batch,
                max_len: t.data_in.len(),
                vlan: spec.vlan.is_some(),
            },
        )?;
        if let Peer::Unknown(why) = &facts.peer {
            eprintln!(
                "warning: {why}: pktlab cannot check it (GRO, threaded NAPI, queues); every frame lost on the way is still counted"
            );
        }
        let ncpus = possible_cpus()?;
        if let Some(c) = cfg.cpus.iter().find(|&&c| c >= ncpus) {
            return Err(IoError::XdpSetting(format!("CPU {c} does not exist")));
        }
        t.cfg.ts_every = cfg.ts_every;
        let table_len = t.flow_table.as_ref().map_or(1, |v| v.len() as u32);
        let mut obj = XdpObject::load_configured(
            builtin_object(),
            &[("flow_table", table_len)],
            Some(("CFG", &t.cfg)),
            iface,
        )?;
        fill_maps(&mut obj, &t, &cfg.cpus, ncpus, iface)?;
        attach_tracepoints(&mut obj, iface)?;
        let program = cfg.program.name();
        let anchor = anchor::attach(&mut obj, program)?;
        Ok(XdpGen {
            _anchor: anchor,
            obj,
            data_in: t.data_in,
            cfg: cfg.clone(),
            iface: iface.to_string(),
            nsizes: t.cfg.nsizes as usize,
            facts,
        })
    }

    /// The backend's name in reports.
    pub fn backend(&self) -> String {
        match self.cfg.program {
            Program::Generator => "xdp (live frames)".to_string(),
            Program::Probe => "xdp (live frames, probe)".to_string(),
        }
    }

    /// What the delivery checks found out about the interface.
    pub fn facts(&self) -> &TxFacts {
        &self.facts
    }

    /// The kernel's ids of the loaded programs: the generator (or probe)
    /// and the two tracepoint counters. They go when this is dropped.
    pub fn program_ids(&self) -> Result<Vec<u32>, IoError> {
        let mut ids = Vec::new();
        for name in [self.cfg.program.name(), "tx_xmit", "tx_redirect_err"] {
            let prog =
                self.obj.ebpf().program(name).ok_or_else(|| {
                    IoError::Other(format!("no program {name} in the XDP object"))
                })?;
            let info = prog
                .info()
                .map_err(|e| bpf_error("reading a program's id", &self.iface, &e))?;
            ids.push(info.id());
        }
        Ok(ids)
    }

    /// Distinct frame sizes (the length of [`CpuState::size_frames`] in use).
    pub fn sizes(&self) -> usize {
        self.nsizes
    }

    fn program(&self) -> Result<&Xdp, IoError> {
        let name = self.cfg.program.name();
        self.obj
            .ebpf()
            .program(name)
            .ok_or_else(|| IoError::Other(format!("no program {name} in the XDP object")))?
            .try_into()
            .map_err(|e| bpf_error("finding the XDP program", &self.iface, &e))
    }

    /// Builds and sends `n` frames from the calling thread, which must be
    /// pinned to one of the configured CPUs (its state is that CPU's).
    pub fn run(&self, n: u32) -> Result<RunEnd, IoError> {
        let opts = TestRunOptions {
            data_in: Some(&self.data_in),
            repeat: n.max(1),
            attrs: TestRunAttrs::new().xdp_live_frames(self.cfg.batch),
            ..TestRunOptions::new()
        };
        match self.program()?.test_run(opts) {
            Ok(_) => Ok(RunEnd::Done),
            Err(e) => match find_os_error(&e).and_then(|io| io.raw_os_error()) {
                Some(libc::EINTR) => Ok(RunEnd::Interrupted),
                Some(libc::EOPNOTSUPP) | Some(524) => Err(
                    IoError::Unsupported("BPF_PROG_RUN with XDP live frames (Linux 5.18 or later)"),
                ),
                Some(libc::EINVAL) => Err(IoError::XdpDelivery(format!(
                    "the kernel refused to run the XDP generator on {} (EINVAL): frames of {} bytes may be too large for its live-frames pages; try smaller frames",
                    self.iface,
                    self.data_in.len() + 4
                ))),
                _ => Err(bpf_error("running the XDP generator (BPF_PROG_RUN)", &self.iface, &e)),
            },
        }
    }

    /// Runs the program once WITHOUT live frames on `page` (what a recycled
    /// page holds, at least as long as the largest frame) and returns the
    /// program's verdict and the frame it built; nothing is sent. For
    /// checks: from a thread pinned to a configured CPU, it builds that
    /// CPU's next frame exactly as a live run would.
    pub fn build_one(&self, page: &[u8]) -> Result<(u32, Vec<u8>), IoError> {
        let mut out = vec![0u8; page.len().max(self.data_in.len())];
        let r = self
            .program()?
            .test_run(TestRunOptions {
                data_in: Some(page),
                data_out: Some(&mut out),
                repeat: 1,
                ..TestRunOptions::new()
            })
            .map_err(|e| bpf_error("running the XDP generator once", &self.iface, &e))?;
        out.truncate(r.data_size_out as usize);
        Ok((r.return_value, out))
    }

    /// The frame every page starts as (the largest size's template).
    pub fn template(&self) -> &[u8] {
        &self.data_in
    }

    /// Each configured CPU's state and counters, in `cpus` order.
    pub fn counters(&self) -> Result<Vec<CpuState>, IoError> {
        let map = self
            .obj
            .ebpf()
            .map("state")
            .ok_or_else(|| IoError::Other("no state map in the XDP object".into()))?;
        let m: PerCpuArray<_, CpuState> = PerCpuArray::try_from(map)
            .map_err(|e| bpf_error("reading the counters", &self.iface, &e))?;
        let v = m
            .get(&0, 0)
            .map_err(|e| bpf_error("reading the counters", &self.iface, &e))?;
        Ok(self.cfg.cpus.iter().map(|&c| v[c]).collect())
    }

    /// What happened to the frames after the redirect, summed over CPUs.
    pub fn tx_report(&self) -> Result<TxReport, IoError> {
        Ok(TxReport::sum(self.all_tx_reports()?.iter()))
    }

    /// [`XdpGen::tx_report`] of each configured CPU, in `cpus` order.
    pub fn tx_reports(&self) -> Result<Vec<TxReport>, IoError> {
        let all = self.all_tx_reports()?;
        Ok(self.cfg.cpus.iter().map(|&c| all[c]).collect())
    }

    fn all_tx_reports(&self) -> Result<Vec<TxReport>, IoError> {
        let map = self
            .obj
            .ebpf()
            .map("tx_report")
            .ok_or_else(|| IoError::Other("no tx_report map in the XDP object".into()))?;
        let m: PerCpuArray<_, TxReport> = PerCpuArray::try_from(map)
            .map_err(|e| bpf_error("reading the TX report", &self.iface, &e))?;
        let v = m
            .get(&0, 0)
            .map_err(|e| bpf_error("reading the TX report", &self.iface, &e))?;
        Ok(v.iter().copied().collect())
    }
}

/// Writes the TX port, the size pattern, the flow table and each CPU's
/// starting state (thread i of T starts at position i and steps by T, as
/// the wire crate's `FlowCursor`).
fn fill_maps(
    obj: &mut XdpObject,
    t: &Templates,
    cpus: &[usize],
    ncpus: usize,
    iface: &str,
) -> Result<(), IoError> {
    fn err<'a, E: std::error::Error + 'static>(
        op: &'static str,
        iface: &'a str,
    ) -> impl Fn(E) -> IoError + 'a {
        move |e: E| bpf_error(op, iface, &e)
    }
    let ebpf = obj.ebpf_mut();
    let missing = |name: &str| IoError::Other(format!("no map {name} in the XDP object"));
    let mut port: DevMap<_> = ebpf
        .map_mut("tx_port")
        .ok_or_else(|| missing("tx_port"))?
        .try_into()
        .map_err(err("opening the TX port map", iface))?;
    // The devmap resolves the ifindex in the calling thread's namespace.
    port.set(0, t.cfg.tx_ifindex, None, 0)
        .map_err(err("setting the TX port", iface))?;
    let mut pattern: Array<_, u32> = ebpf
        .map_mut("pattern")
        .ok_or_else(|| missing("pattern"))?
        .try_into()
        .map_err(err("opening the size pattern map", iface))?;
    for (i, &s) in t.pattern.iter().enumerate() {
        pattern
            .set(i as u32, s, 0)
            .map_err(err("writing the size pattern", iface))?;
    }
    if let Some(table) = &t.flow_table {
        let mut m: Array<_, u32> = ebpf
            .map_mut("flow_table")
            .ok_or_else(|| missing("flow_table"))?
            .try_into()
            .map_err(err("opening the flow table", iface))?;
        for (i, &f) in table.iter().enumerate() {
            m.set(i as u32, f, 0)
                .map_err(err("writing the flow table", iface))?;
        }
    }
    let tai = tai_minus_realtime_ns();
    let step = cpus.len() as u32;
    let mut state: PerCpuArray<_, CpuState> = ebpf
        .map_mut("state")
        .ok_or_else(|| missing("state"))?
        .try_into()
        .map_err(err("opening the state map", iface))?;
    let mut values = vec![CpuState::default(); ncpus];
    for (thread, &cpu) in cpus.iter().enumerate() {
        let first = thread as u32;
        let d = template::digits(&t.cfg, first);
        values[cpu] = CpuState {
            pos: first,
            first,
            step,
            d,
            f: d,
            tai_minus_realtime: tai,
            port_rng: t
                .rfc4814_seed
                .map_or(0, |seed| rfc4814::thread_state(seed, first)),
            ..Default::default()
        };
    }
    let values = PerCpuValues::try_from(values).map_err(|e| IoError::Other(e.to_string()))?;
    state
        .set(0, values, 0)
        .map_err(err("seeding the per-CPU state", iface))
}

/// Loads and attaches the two tracing programs (BTF tracepoints: no
/// tracefs needed, so `ip netns exec`'s fresh /sys is no obstacle).
fn attach_tracepoints(obj: &mut XdpObject, iface: &str) -> Result<(), IoError> {
    let btf = Btf::from_sys_fs()
        .map_err(|_| IoError::Unsupported("kernel BTF (/sys/kernel/btf/vmlinux)"))?;
    for (program, event) in [
        ("tx_xmit", "xdp_devmap_xmit"),
        ("tx_redirect_err", "xdp_redirect_err"),
    ] {
        let op = format!("attaching the {event} counter");
        let tp: &mut BtfTracePoint = obj
            .ebpf_mut()
            .program_mut(program)
            .ok_or_else(|| IoError::Other(format!("no program {program} in the XDP object")))?
            .try_into()
            .map_err(|e| bpf_error(&op, iface, &e))?;
        tp.load(event, &btf)
            .map_err(|e| bpf_error(&op, iface, &e))?;
        tp.attach().map_err(|e| bpf_error(&op, iface, &e))?;
    }
    Ok(())
}
