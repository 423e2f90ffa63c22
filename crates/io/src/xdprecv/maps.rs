//! The program's map values and settings, as user space reads and writes
//! them: mirrors of the structs in crates/io/bpf/xdprecv.c.

/// `struct cfg`: set before load, constant for the verifier.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// CLOCK_TAI − CLOCK_REALTIME in ns (whole seconds).
    pub tai_minus_realtime: i64,
    /// 1: pass frames on to the stack; 0: drop them.
    pub pass: u32,
    /// Which test frames are timed ([`super::Timing::cfg_value`]): 1 every
    /// one; 0 none (`--latency off`), the clock is read only for a CPU's
    /// first frame; N one in N per CPU (`--latency 1/N`). Unless 1,
    /// `last_ns` stays 0.
    pub time_every: u32,
    /// Frames to count, on all CPUs together (`recv -n`); 0: every one.
    pub limit: u64,
}

// SAFETY: integers only, no padding.
unsafe impl aya::Pod for Cfg {}

/// `struct cpu_stats`: one CPU's counts.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct CpuStats {
    /// Every frame, test or foreign.
    pub packets: u64,
    /// Their bytes, with the FCS.
    pub bytes: u64,
    /// Frames without a test payload.
    pub foreign: u64,
    /// Test frames of a stream id beyond the streams map.
    pub untracked: u64,
    /// CLOCK_REALTIME ns of this CPU's first and last frame (0: none).
    pub first_ns: u64,
    pub last_ns: u64,
    /// Latency samples (every test frame), their sum, min and max in ns.
    pub lat_count: u64,
    pub lat_sum: u64,
    pub lat_min: u64,
    pub lat_max: u64,
    /// Test frames not checked: their stream was held by another CPU
    /// for the program's whole wait (never seen in practice; said).
    pub busy: u64,
    /// Test frames whose stamp is from the future or from before the run
    /// (crates/wire/src/payload.rs's believable_latency): not timed.
    pub bad_stamps: u64,
    /// With one frame in N timed: the CPU's test frames left before its
    /// next timed one (the program's own countdown).
    pub until_timed: u64,
}

// SAFETY: integers only, no padding.
unsafe impl aya::Pod for CpuStats {}

/// `struct stream`: one stream's sequence state, with the state of
/// crates/engine/src/seq.rs's `StreamState` and the same counts.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Stream {
    /// 1 while a CPU checks a frame of the stream (0 when read with the
    /// program detached).
    pub busy: u32,
    pub next: u32,
    pub win_lo: u64,
    pub win_hi: u64,
    pub received: u64,
    pub lost: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    /// A hash of the 5-tuple of the stream's first frame (never 0 once
    /// the stream has a frame).
    pub key_hash: u64,
}

// SAFETY: integers only, with `busy`'s 4 bytes before `next`: no padding.
unsafe impl aya::Pod for Stream {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes of crates/io/bpf/xdprecv.c's structs (the kernel refuses a
    /// map read into a buffer of another size, too).
    #[test]
    fn sizes_match_the_c_structs() {
        assert_eq!(std::mem::size_of::<Cfg>(), 24);
        assert_eq!(std::mem::size_of::<CpuStats>(), 13 * 8);
        assert_eq!(std::mem::size_of::<Stream>(), 8 + 8 * 7);
    }
}
