//! The fast paths' own counters (`struct fwd_stats` in
//! `crates/io/bpf/fastpath.h`), read from a program already attached to
//! an interface, by any process.

use aya::maps::{Map, MapData, MapInfo, PerCpuArray};
use aya::programs::ProgramInfo;
use serde::{Deserialize, Serialize};

use crate::IoError;

/// Results of `bpf_fib_lookup` the counters keep apart (0 to 14); the
/// last slot counts lookups that failed with an error.
pub const FIB_RESULTS: usize = 16;

/// The kernel's names of `bpf_fib_lookup`'s results (`BPF_FIB_LKUP_RET_*`).
pub const FIB_RESULT_NAMES: [&str; 10] = [
    "success",
    "blackhole",
    "unreachable",
    "prohibit",
    "not_fwded",
    "fwd_disabled",
    "unsupp_lwt",
    "no_neigh",
    "frag_needed",
    "no_src_addr",
];

/// Counts of one fast-path program, summed over CPUs. Mirrors `struct
/// fwd_stats` in `crates/io/bpf/fastpath.h`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FwdStatsRaw {
    pub frames: u64,
    pub forwarded: u64,
    pub to_stack: u64,
    pub not_ip: u64,
    pub ttl_expired: u64,
    pub malformed: u64,
    pub no_port: u64,
    pub redirect_failed: u64,
    pub steered: u64,
    pub steer_failed: u64,
    pub fib: [u64; FIB_RESULTS],
}

// SAFETY: repr(C), only u64s: no padding, every bit pattern valid.
unsafe impl aya::Pod for FwdStatsRaw {}

/// What a fast path did with the frames it saw, summed over CPUs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FastPathStats {
    /// Frames the router saw.
    pub frames: u64,
    /// Frames it handed to the redirect (forwarded without the stack).
    pub forwarded: u64,
    /// Frames it left to the kernel's stack, and why.
    pub to_stack: u64,
    pub not_ip: u64,
    pub ttl_expired: u64,
    pub malformed: u64,
    pub no_port: u64,
    /// Frames whose redirect the helper refused (dropped).
    pub redirect_failed: u64,
    /// Frames the steering program queued for a forwarding CPU, and those
    /// it could not queue (dropped).
    pub steered: u64,
    pub steer_failed: u64,
    /// `bpf_fib_lookup`'s answers by name (`success`, `no_neigh`, ...;
    /// `error` for a failed lookup), only those that occurred.
    pub fib: Vec<(String, u64)>,
}

impl FastPathStats {
    fn from_raw(r: &FwdStatsRaw) -> FastPathStats {
        let fib = r
            .fib
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let name = match FIB_RESULT_NAMES.get(i) {
                    Some(s) => s.to_string(),
                    None if i == FIB_RESULTS - 1 => "error".to_string(),
                    None => format!("result_{i}"),
                };
                (name, n)
            })
            .collect();
        FastPathStats {
            frames: r.frames,
            forwarded: r.forwarded,
            to_stack: r.to_stack,
            not_ip: r.not_ip,
            ttl_expired: r.ttl_expired,
            malformed: r.malformed,
            no_port: r.no_port,
            redirect_failed: r.redirect_failed,
            steered: r.steered,
            steer_failed: r.steer_failed,
            fib,
        }
    }

    /// The count of FIB answer `name` (0 when it did not occur).
    pub fn fib_count(&self, name: &str) -> u64 {
        self.fib
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, c)| *c)
    }
}

/// Sums per-CPU raw counts.
fn sum(per_cpu: &[FwdStatsRaw]) -> FwdStatsRaw {
    let mut t = FwdStatsRaw::default();
    for c in per_cpu {
        t.frames += c.frames;
        t.forwarded += c.forwarded;
        t.to_stack += c.to_stack;
        t.not_ip += c.not_ip;
        t.ttl_expired += c.ttl_expired;
        t.malformed += c.malformed;
        t.no_port += c.no_port;
        t.redirect_failed += c.redirect_failed;
        t.steered += c.steered;
        t.steer_failed += c.steer_failed;
        for (a, b) in t.fib.iter_mut().zip(c.fib.iter()) {
            *a += b;
        }
    }
    t
}

/// The program of id `id`, as the kernel describes it.
pub(crate) fn program_info(id: u32) -> Result<Option<ProgramInfo>, IoError> {
    for p in aya::programs::loaded_programs() {
        let p = p.map_err(|e| crate::loader::bpf_error("listing BPF programs", "-", &e))?;
        if p.id() == id {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// The counters of the `stats` map of program `id` (attached on `iface`),
/// summed over CPUs.
pub(crate) fn read_program_stats(id: u32, iface: &str) -> Result<FastPathStats, IoError> {
    let err = |e: &(dyn std::error::Error + 'static)| {
        crate::loader::bpf_error("reading the fast path's counters", iface, e)
    };
    let prog = program_info(id)?.ok_or_else(|| IoError::Xdp {
        op: "reading the fast path's counters".into(),
        iface: iface.to_string(),
        reason: format!("program {id} is gone"),
    })?;
    // Keep the program open while its maps are found.
    let _fd = prog.fd().map_err(|e| err(&e))?;
    let ids = prog.map_ids().map_err(|e| err(&e))?.unwrap_or_default();
    for map_id in ids {
        let info = MapInfo::from_id(map_id).map_err(|e| err(&e))?;
        if info.name_as_str() != Some("stats") {
            continue;
        }
        let data = MapData::from_id(map_id).map_err(|e| err(&e))?;
        let map: PerCpuArray<MapData, FwdStatsRaw> =
            PerCpuArray::try_from(Map::PerCpuArray(data)).map_err(|e| err(&e))?;
        let per_cpu = map.get(&0, 0).map_err(|e| err(&e))?;
        return Ok(FastPathStats::from_raw(&sum(&per_cpu)));
    }
    Err(IoError::Xdp {
        op: "reading the fast path's counters".into(),
        iface: iface.to_string(),
        reason: format!("program {id} has no map named stats"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_layout_matches_the_program() {
        // 10 counters and 16 FIB results, 8 bytes each: fastpath.h's struct.
        assert_eq!(std::mem::size_of::<FwdStatsRaw>(), (10 + 16) * 8);
    }

    #[test]
    fn per_cpu_counts_add_up_and_fib_results_are_named() {
        let mut a = FwdStatsRaw {
            frames: 10,
            forwarded: 7,
            to_stack: 3,
            not_ip: 1,
            ttl_expired: 2,
            ..FwdStatsRaw::default()
        };
        a.fib[0] = 7;
        a.fib[7] = 1;
        let mut b = FwdStatsRaw {
            frames: 5,
            forwarded: 5,
            ..FwdStatsRaw::default()
        };
        b.fib[0] = 5;
        b.fib[FIB_RESULTS - 1] = 2;
        let s = FastPathStats::from_raw(&sum(&[a, b]));
        assert_eq!((s.frames, s.forwarded, s.to_stack), (15, 12, 3));
        assert_eq!((s.not_ip, s.ttl_expired), (1, 2));
        assert_eq!(
            s.fib,
            [
                ("success".to_string(), 12),
                ("no_neigh".to_string(), 1),
                ("error".to_string(), 2)
            ]
        );
        assert_eq!(s.fib_count("success"), 12);
        assert_eq!(s.fib_count("blackhole"), 0);
    }
}
