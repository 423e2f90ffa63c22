//! The drop tracer: `crates/io/bpf/droptrace.c` on the BTF-typed tracepoint
//! `skb:kfree_skb`, counting the test frames (or, on request, all frames)
//! the kernel drops, per network namespace, interface, drop reason and
//! dropping location, in a per-CPU hash that user space reads when it
//! wants (no per-frame events).
//!
//! [`DropTracer::start_with`] loads and attaches it (the program goes when
//! the tracer is dropped, or the process ends), optionally leaving the
//! backlog's refusals to the kernel's counters ([`TraceOptions`]);
//! [`DropTracer::watch`] narrows it to some namespaces;
//! [`DropTracer::read`] sums the per-CPU counts; [`Places::name`] turns the
//! keys into names: the namespace's `ip netns` name, the interface's name,
//! the reason from the kernel's BTF ([`btf`]) and the function from
//! `/proc/kallsyms` ([`kallsyms`]).

pub mod btf;
mod counts;
pub mod kallsyms;
mod names;

use std::collections::BTreeMap;

use aya::maps::{Array, PerCpuArray, PerCpuHashMap};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};

use crate::loader::{find_os_error, Aligned};
use crate::IoError;

pub use counts::{DropCounts, DropKey};
pub use names::{netns_inode, NamedDrop, NetnsNames, Places, HOST};

static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/droptrace.o"));

/// The drop reason of the frames a CPU's backlog refused
/// (`enqueue_to_backlog`): softnet's `dropped` of the CPU whose backlog it
/// was and the receiving interface's rx_dropped count every one of them.
pub const BACKLOG_REASON: &str = "CPU_BACKLOG";

/// The most namespaces [`DropTracer::watch`] takes. Mirrors `MAX_WATCHED`
/// in `crates/io/bpf/droptrace.c`.
pub const MAX_WATCHED: usize = 8;

/// What the tracer counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Every dropped frame, not only test frames.
    pub all: bool,
    /// Skip the backlog's refusals ([`BACKLOG_REASON`]) at once: the
    /// kernel's counters count them exactly, and at full load they are the
    /// most frequent drop by far (half of what a saturated DUT receives).
    pub backlog_counted: bool,
}

/// The `watched` map's value. Mirrors `struct watch` in
/// `crates/io/bpf/droptrace.c`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Watched {
    n: u32,
    netns: [u32; MAX_WATCHED],
}

// SAFETY: repr(C), only u32s, no padding.
unsafe impl aya::Pod for Watched {}

/// The loaded and attached drop tracer.
pub struct DropTracer {
    ebpf: Ebpf,
    /// The reasons left to the kernel's counters (names).
    counted: Vec<String>,
}

/// `COUNTED_REASON`'s value for no reason.
const NO_REASON: u32 = u32::MAX;

impl DropTracer {
    /// Loads the tracer and attaches it to `skb:kfree_skb`. `all` counts
    /// every dropped frame, not only test frames. Needs root or CAP_BPF and
    /// CAP_PERFMON, and the kernel's BTF.
    pub fn start(all: bool) -> Result<DropTracer, IoError> {
        DropTracer::start_with(TraceOptions {
            all,
            backlog_counted: false,
        })
    }

    /// [`DropTracer::start`] with `options`. A kernel without drop reasons
    /// (before Linux 5.17) cannot tell a backlog's refusal from another
    /// drop: there the tracer counts them all ([`DropTracer::counted`] is
    /// empty).
    pub fn start_with(options: TraceOptions) -> Result<DropTracer, IoError> {
        let btf = Btf::from_sys_fs()
            .map_err(|_| IoError::Unsupported("kernel BTF (/sys/kernel/btf/vmlinux)"))?;
        let count_all: u32 = options.all.into();
        let reasons = btf::drop_reasons().unwrap_or_default();
        // The reason argument came with the enum (Linux 5.17).
        let has_reason: u32 = (!reasons.is_empty()).into();
        let backlog = options
            .backlog_counted
            .then(|| reasons.iter().find(|(_, n)| *n == BACKLOG_REASON))
            .flatten()
            .map(|(&v, _)| v);
        let counted_reason = backlog.unwrap_or(NO_REASON);
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .override_global("COUNT_ALL", &count_all, true)
            .override_global("HAS_REASON", &has_reason, true)
            .override_global("COUNTED_REASON", &counted_reason, true)
            .load(&OBJECT.0)
            .map_err(|e| trace_error("loading the drop tracer", &e))?;
        let prog: &mut BtfTracePoint = ebpf
            .program_mut("drop_count")
            .ok_or_else(|| IoError::Other("no program drop_count in the drop tracer".into()))?
            .try_into()
            .map_err(|e| trace_error("loading the drop tracer", &e))?;
        prog.load("kfree_skb", &btf)
            .map_err(|e| trace_error("loading the drop tracer", &e))?;
        prog.attach()
            .map_err(|e| trace_error("attaching the drop tracer to skb:kfree_skb", &e))?;
        let counted = backlog
            .map(|_| BACKLOG_REASON.to_string())
            .into_iter()
            .collect();
        Ok(DropTracer { ebpf, counted })
    }

    /// The drop reasons the tracer skips, leaving them to the kernel's
    /// counters (empty: it counts every reason).
    pub fn counted(&self) -> &[String] {
        &self.counted
    }

    /// Counts only the drops in the network namespaces of these inodes
    /// (at most [`MAX_WATCHED`]; none: every namespace, as at the start).
    /// A drop elsewhere costs the tracer three loads and a compare.
    pub fn watch(&mut self, netns: &[u32]) -> Result<(), IoError> {
        if netns.len() > MAX_WATCHED {
            return Err(IoError::Other(format!(
                "the drop tracer watches at most {MAX_WATCHED} namespaces, not {}",
                netns.len()
            )));
        }
        let mut value = Watched {
            n: netns.len() as u32,
            ..Watched::default()
        };
        value.netns[..netns.len()].copy_from_slice(netns);
        let map = self
            .ebpf
            .map_mut("watched")
            .ok_or_else(|| IoError::Other("no map watched in the drop tracer".into()))?;
        let mut watched: Array<_, Watched> =
            Array::try_from(map).map_err(|e| trace_error("setting the drop tracer", &e))?;
        watched
            .set(0, value, 0)
            .map_err(|e| trace_error("setting the drop tracer", &e))
    }

    /// The counts so far, summed over CPUs.
    pub fn read(&self) -> Result<DropCounts, IoError> {
        let map = self
            .ebpf
            .map("drops")
            .ok_or_else(|| IoError::Other("no map drops in the drop tracer".into()))?;
        let drops: PerCpuHashMap<_, DropKey, u64> =
            PerCpuHashMap::try_from(map).map_err(|e| trace_error("reading the drop tracer", &e))?;
        let mut frames = BTreeMap::new();
        for entry in drops.iter() {
            let (key, per_cpu) = entry.map_err(|e| trace_error("reading the drop tracer", &e))?;
            let n: u64 = per_cpu.iter().sum();
            if n > 0 {
                *frames.entry(key).or_insert(0) += n;
            }
        }
        let map = self
            .ebpf
            .map("overflow")
            .ok_or_else(|| IoError::Other("no map overflow in the drop tracer".into()))?;
        let overflow: PerCpuArray<_, u64> =
            PerCpuArray::try_from(map).map_err(|e| trace_error("reading the drop tracer", &e))?;
        let overflow = overflow
            .get(&0, 0)
            .map_err(|e| trace_error("reading the drop tracer", &e))?
            .iter()
            .sum();
        Ok(DropCounts {
            frames,
            overflow,
            missed: self.recursion_misses()?,
        })
    }

    /// The program's `recursion_misses` from the kernel's `bpf_prog_info`
    /// (Linux 5.12 on; 0 before). aya 0.14's `ProgramInfo` keeps that
    /// field private, hence the `BPF_OBJ_GET_INFO_BY_FD` call here.
    fn recursion_misses(&self) -> Result<u64, IoError> {
        use std::os::fd::{AsFd, AsRawFd};
        let prog = self
            .ebpf
            .program("drop_count")
            .ok_or_else(|| IoError::Other("no program drop_count in the drop tracer".into()))?;
        let fd = prog
            .fd()
            .map_err(|e| trace_error("reading the drop tracer", &e))?;
        // SAFETY: bpf_prog_info is plain integers and pointers-as-u64: all
        // zeroes is its empty value.
        let mut info: aya_obj::generated::bpf_prog_info = unsafe { std::mem::zeroed() };
        #[repr(C)]
        struct InfoByFd {
            bpf_fd: u32,
            info_len: u32,
            info: u64,
        }
        let mut attr = InfoByFd {
            bpf_fd: fd.as_fd().as_raw_fd() as u32,
            info_len: std::mem::size_of_val(&info) as u32,
            info: std::ptr::addr_of_mut!(info) as u64,
        };
        // SAFETY: the attribute is the kernel's layout for this command and
        // points at a live, writable bpf_prog_info of the length it gives.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                aya_obj::generated::bpf_cmd::BPF_OBJ_GET_INFO_BY_FD as libc::c_long,
                std::ptr::addr_of_mut!(attr),
                std::mem::size_of::<InfoByFd>(),
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            return Err(IoError::Other(format!(
                "reading the drop tracer's statistics: {}",
                crate::error::os_message(&err)
            )));
        }
        Ok(info.recursion_misses)
    }
}

/// One line for an aya error: no permission, no support, or the system's
/// text.
fn trace_error(op: &str, e: &(dyn std::error::Error + 'static)) -> IoError {
    match find_os_error(e).and_then(|io| io.raw_os_error().map(|c| (io, c))) {
        Some((_, libc::EPERM | libc::EACCES)) => IoError::NotPermitted {
            what: "the drop tracer (BPF on skb:kfree_skb)",
            caps: "CAP_BPF and CAP_PERFMON",
        },
        Some((_, libc::ENOSYS)) => IoError::Unsupported("BPF"),
        Some((io, _)) => IoError::Other(format!("{op}: {}", crate::error::os_message(io))),
        None => IoError::Other(format!(
            "{op}: {}",
            e.to_string().lines().next().unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_keeps_only_what_grew() {
        let a = DropKey::new(1, 2, 3, 4);
        let b = DropKey::new(1, 2, 5, 4);
        let c = DropKey::new(9, 2, 5, 4);
        let before = DropCounts {
            frames: [(a, 10), (b, 7)].into(),
            overflow: 1,
            missed: 2,
        };
        let after = DropCounts {
            frames: [(a, 15), (b, 7), (c, 2)].into(),
            overflow: 4,
            missed: 2,
        };
        let d = after.since(&before);
        assert_eq!(d.frames, [(a, 5), (c, 2)].into());
        assert_eq!(d.overflow, 3);
        assert_eq!(d.missed, 0);
        assert_eq!(d.total(), 10);
    }

    #[test]
    fn the_key_has_the_c_layout() {
        assert_eq!(std::mem::size_of::<DropKey>(), 24);
        assert_eq!(std::mem::offset_of!(DropKey, location), 16);
    }

    #[test]
    fn the_watch_list_has_the_c_layout() {
        // struct watch: a count, then MAX_WATCHED inodes.
        assert_eq!(std::mem::size_of::<Watched>(), 4 + 4 * 8);
        assert_eq!(std::mem::offset_of!(Watched, netns), 4);
    }
}
