//! The program's per-CPU map values, as user space writes and reads them.

use super::template::MAX_SIZES;

/// `struct cpu_state` in crates/io/bpf/xdpgen.c: one CPU's generator state and counters.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CpuState {
    pub pos: u32,
    pub first: u32,
    pub step: u32,
    /// Odometer digits of `pos`: sport, saddr, dport, daddr.
    pub d: [u32; 4],
    /// Odometer digits of `first`.
    pub f: [u32; 4],
    pub cycle: u32,
    pub pat_pos: u32,
    pub ts_left: u32,
    /// RFC 4814 ports: the SplitMix64 state of the next draw.
    pub port_rng: u64,
    pub tai_minus_realtime: i64,
    pub ts_cache: u64,
    pub frames: u64,
    pub bytes: u64,
    pub aborted: u64,
    /// Frames redirected and not yet seen by a tracepoint: 0 between runs.
    pub pending: i64,
    pub size_frames: [u64; MAX_SIZES],
}

// SAFETY: integers only, with the C struct's explicit padding field: every
// bit pattern is valid.
unsafe impl aya::Pod for CpuState {}

/// `struct tx_report` in crates/io/bpf/xdpgen.c: what happened to one CPU's frames
/// after the program let them go, from the kernel's XDP tracepoints.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct TxReport {
    /// Frames the TX driver took (`xdp_devmap_xmit` sent).
    pub xmit_sent: u64,
    /// Frames the TX driver refused, e.g. a full veth ring (`drops`).
    pub xmit_drops: u64,
    /// `ndo_xdp_xmit` calls (bulks of up to 16 frames).
    pub xmit_calls: u64,
    /// Redirects that failed before reaching the driver (`xdp_redirect_err`).
    pub redirect_errs: u64,
    /// The last error code seen (a negative errno), 0 if none.
    pub last_err: i64,
}

// SAFETY: integers only, no padding.
unsafe impl aya::Pod for TxReport {}

impl TxReport {
    /// Frames that did not go out.
    pub fn lost(&self) -> u64 {
        self.xmit_drops + self.redirect_errs
    }

    /// The sum of several CPUs' reports.
    pub fn sum<'a>(reports: impl IntoIterator<Item = &'a TxReport>) -> TxReport {
        let mut t = TxReport::default();
        for r in reports {
            t.xmit_sent += r.xmit_sent;
            t.xmit_drops += r.xmit_drops;
            t.xmit_calls += r.xmit_calls;
            t.redirect_errs += r.redirect_errs;
            if r.last_err != 0 {
                t.last_err = r.last_err;
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes crates/io/bpf/xdpgen.c's structs have (checked against the object's
    /// BTF by the loader at run time too: a mismatch fails the map update).
    #[test]
    fn sizes_match_the_c_structs() {
        assert_eq!(
            std::mem::size_of::<CpuState>(),
            4 * 16 + 8 * 6 + 8 * MAX_SIZES
        );
        assert_eq!(std::mem::size_of::<TxReport>(), 40);
        assert_eq!(
            std::mem::size_of::<super::super::template::Cfg>(),
            4 * 24 + 8 * MAX_SIZES + super::super::template::MAX_HDR
        );
    }

    #[test]
    fn lost_and_sum() {
        let a = TxReport {
            xmit_sent: 10,
            xmit_drops: 2,
            xmit_calls: 1,
            redirect_errs: 1,
            last_err: -95,
        };
        let b = TxReport {
            xmit_sent: 5,
            ..Default::default()
        };
        let s = TxReport::sum([&a, &b]);
        assert_eq!((s.xmit_sent, s.lost(), s.last_err), (15, 3, -95));
    }
}
