//! The clock of the test payload's timestamps.

/// CLOCK_REALTIME in nanoseconds since the Unix epoch: the clock of the
/// test payload's TX timestamp, and of AF_PACKET's RX timestamps, so that
/// a sender and a receiver on the same host (or on hosts synchronised by
/// PTP) can compute one-way latency.
#[inline]
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_REALTIME always
    // exists, so the call cannot fail (it goes through the vDSO, no syscall).
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn realtime_matches_system_time() {
        let sys = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let ours = super::realtime_ns();
        assert!(ours.abs_diff(sys) < 1_000_000_000, "{ours} vs {sys}");
    }
}
