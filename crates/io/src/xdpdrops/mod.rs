//! Frames dropped by XDP: `crates/io/bpf/xdpdrops.c` on the xdp
//! tracepoints (exceptions, refused redirects, transmits and XDP_TX that a
//! device refused, a CPUMAP's full queues). An XDP frame has no skb, so
//! these drops never reach `skb:kfree_skb` and the drop tracer
//! ([`crate::droptrace`]) cannot see them.
//!
//! [`XdpDropTracer::start`] loads and attaches it (it goes when the tracer
//! is dropped, or the process ends); [`XdpDropTracer::read`] sums the
//! per-CPU counts; [`XdpDropCounts::since`] the counts of one interval;
//! [`name`] turns the keys into places: namespace (`ip netns` name),
//! interface, the other port, cause, error.
//!
//! The events carry no frame: every frame counts, not only test frames.
//! What XDP programs drop on purpose (XDP_DROP) fires no event; the fast
//! paths of [`crate::fastpath`] never do, and count the rest themselves.

mod counts;
mod names;

use std::collections::BTreeMap;

use aya::maps::{PerCpuArray, PerCpuHashMap};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};

use crate::loader::{find_os_error, Aligned};
use crate::IoError;

pub use counts::{XdpDropCause, XdpDropCounts, XdpDropKey};
pub use names::{errno_name, name, name_with, NamedXdpDrop};

static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/xdpdrops.o"));

/// The tracepoints, with the event each program of the object attaches to.
const EVENTS: [(&str, &str, bool); 7] = [
    // (program, tracepoint, required)
    ("xdp_exception", "xdp_exception", true),
    ("xdp_redirect_err", "xdp_redirect_err", true),
    ("xdp_redirect_map_err", "xdp_redirect_map_err", false),
    ("xdp_devmap_xmit", "xdp_devmap_xmit", true),
    ("xdp_bulk_tx", "xdp_bulk_tx", false),
    ("xdp_cpumap_enqueue", "xdp_cpumap_enqueue", false),
    ("xdp_cpumap_kthread", "xdp_cpumap_kthread", false),
];

/// The loaded and attached tracer.
pub struct XdpDropTracer {
    ebpf: Ebpf,
}

impl XdpDropTracer {
    /// Loads the tracer and attaches it to the xdp tracepoints this kernel
    /// has (those that older kernels lack are skipped). Needs root or
    /// CAP_BPF and CAP_PERFMON, and the kernel's BTF.
    pub fn start() -> Result<XdpDropTracer, IoError> {
        let btf = Btf::from_sys_fs()
            .map_err(|_| IoError::Unsupported("kernel BTF (/sys/kernel/btf/vmlinux)"))?;
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .load(&OBJECT.0)
            .map_err(|e| trace_error("loading the XDP drop tracer", &e))?;
        for (program, event, required) in EVENTS {
            if !required && !has_event(&btf, event) {
                continue;
            }
            let prog: &mut BtfTracePoint = ebpf
                .program_mut(program)
                .ok_or_else(|| {
                    IoError::Other(format!("no program {program} in the XDP drop tracer"))
                })?
                .try_into()
                .map_err(|e| trace_error("loading the XDP drop tracer", &e))?;
            prog.load(event, &btf)
                .map_err(|e| trace_error(&format!("loading the tracer of xdp:{event}"), &e))?;
            prog.attach()
                .map_err(|e| trace_error(&format!("attaching to xdp:{event}"), &e))?;
        }
        Ok(XdpDropTracer { ebpf })
    }

    /// The counts so far, summed over CPUs.
    pub fn read(&self) -> Result<XdpDropCounts, IoError> {
        let err =
            |e: &(dyn std::error::Error + 'static)| trace_error("reading the XDP drop tracer", e);
        let map = self
            .ebpf
            .map("drops")
            .ok_or_else(|| IoError::Other("no map drops in the XDP drop tracer".into()))?;
        let drops: PerCpuHashMap<_, XdpDropKey, u64> =
            PerCpuHashMap::try_from(map).map_err(|e| err(&e))?;
        let mut frames = BTreeMap::new();
        for entry in drops.iter() {
            let (key, per_cpu) = entry.map_err(|e| err(&e))?;
            let n: u64 = per_cpu.iter().sum();
            if n > 0 {
                *frames.entry(key).or_insert(0) += n;
            }
        }
        let map = self
            .ebpf
            .map("overflow")
            .ok_or_else(|| IoError::Other("no map overflow in the XDP drop tracer".into()))?;
        let overflow: PerCpuArray<_, u64> = PerCpuArray::try_from(map).map_err(|e| err(&e))?;
        let overflow = overflow.get(&0, 0).map_err(|e| err(&e))?.iter().sum();
        Ok(XdpDropCounts { frames, overflow })
    }
}

/// Whether the kernel has tracepoint xdp:`event` (its BTF has the
/// `btf_trace_<event>` typedef that tp_btf programs attach through).
fn has_event(btf: &Btf, event: &str) -> bool {
    btf.id_by_type_name_kind(
        &format!("btf_trace_{event}"),
        aya_obj::btf::BtfKind::Typedef,
    )
    .is_ok()
}

fn trace_error(op: &str, e: &(dyn std::error::Error + 'static)) -> IoError {
    match find_os_error(e) {
        Some(io) if matches!(io.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) => {
            IoError::NotPermitted {
                what: "tracing XDP drops",
                caps: "CAP_BPF and CAP_PERFMON",
            }
        }
        Some(io) => IoError::Other(format!("{op}: {}", crate::os_message(io))),
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
    fn key_layout_matches_the_program() {
        assert_eq!(std::mem::size_of::<XdpDropKey>(), 24);
    }

    #[test]
    fn causes_round_trip_and_unknown_ones_are_none() {
        for v in 1..=6 {
            let c = XdpDropCause::from_raw(v).unwrap();
            assert!(!c.name().is_empty());
        }
        assert_eq!(XdpDropCause::from_raw(0), None);
        assert_eq!(XdpDropCause::from_raw(7), None);
    }

    #[test]
    fn intervals_subtract_per_key() {
        let k = |cause, n| {
            (
                XdpDropKey {
                    netns: 1,
                    ifindex: 2,
                    cause,
                    ..XdpDropKey::default()
                },
                n,
            )
        };
        let before = XdpDropCounts {
            frames: [k(2, 10), k(3, 5)].into_iter().collect(),
            overflow: 1,
        };
        let after = XdpDropCounts {
            frames: [k(2, 10), k(3, 9), k(4, 2)].into_iter().collect(),
            overflow: 1,
        };
        let d = after.since(&before);
        assert_eq!(d.frames, [k(3, 4), k(4, 2)].into_iter().collect());
        assert_eq!(d.total(), 6);
    }
}
