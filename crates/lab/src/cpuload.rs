//! Per-CPU load from `/proc/stat`, split the way `top -SH` shows it in the
//! seeds: user, system, interrupts, softirq (where Linux forwards packets)
//! and idle.
//!
//! `/proc/stat` is not per network namespace: on the built-in lab the
//! generator, the DUT and the receiver share these CPUs, so every figure is
//! the whole host's.

use serde::{Deserialize, Serialize};

use crate::LabError;

/// Cumulative time of one CPU, in clock ticks (USER_HZ), as `/proc/stat`
/// gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    fn delta(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// Every `cpuN` line of a `/proc/stat` text, as (N, times), in file order.
/// The aggregate `cpu` line and lines of other kinds are left out. Guest
/// time is already part of user and nice, so it is not added again.
pub fn parse_proc_stat(text: &str) -> Vec<(usize, CpuTimes)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let cpu: usize = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = words.map_while(|w| w.parse().ok()).collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            (v.len() >= 4).then(|| {
                (
                    cpu,
                    CpuTimes {
                        user: at(0),
                        nice: at(1),
                        system: at(2),
                        idle: at(3),
                        iowait: at(4),
                        irq: at(5),
                        softirq: at(6),
                        steal: at(7),
                    },
                )
            })
        })
        .collect()
}

/// The per-CPU times now.
pub fn read_cpu_times() -> Result<Vec<(usize, CpuTimes)>, LabError> {
    let text = std::fs::read_to_string("/proc/stat").map_err(|err| LabError::Sys {
        what: "cannot read /proc/stat".into(),
        err,
    })?;
    Ok(parse_proc_stat(&text))
}

/// One CPU's use over an interval, in percent of that interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuLoad {
    pub cpu: usize,
    /// User and nice time.
    pub user: f64,
    pub system: f64,
    /// Hard interrupt handlers.
    pub irq: f64,
    /// Softirqs: NAPI polling, forwarding, RPS.
    pub softirq: f64,
    /// Time taken by the hypervisor (a virtual machine's lost time).
    pub steal: f64,
    /// Idle and I/O wait.
    pub idle: f64,
}

/// Each CPU's load between two readings. A CPU present in only one of
/// them (taken offline meanwhile) is left out, and so is a CPU whose
/// counters did not move.
pub fn load_between(before: &[(usize, CpuTimes)], after: &[(usize, CpuTimes)]) -> Vec<CpuLoad> {
    after
        .iter()
        .filter_map(|(cpu, a)| {
            let (_, b) = before.iter().find(|(c, _)| c == cpu)?;
            let d = a.delta(b);
            let total = d.total();
            if total == 0 {
                return None;
            }
            let pct = |x: u64| round2(x as f64 * 100.0 / total as f64);
            Some(CpuLoad {
                cpu: *cpu,
                user: pct(d.user + d.nice),
                system: pct(d.system),
                irq: pct(d.irq),
                softirq: pct(d.softirq),
                steal: pct(d.steal),
                idle: pct(d.idle + d.iowait),
            })
        })
        .collect()
}

/// Two decimals are more than the tick resolution gives.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// How many CPUs `/proc/stat` lists (the online ones).
pub fn cpu_count() -> Result<usize, LabError> {
    Ok(read_cpu_times()?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The head of a real /proc/stat (Linux 6.1, 2 CPUs), then the same one
    // second later.
    const BEFORE: &str = "cpu  236792 20028 34731 196480 3316 0 3893 1207 0 0
cpu0 115292 9727 17802 101472 376 0 2859 600 0 0
cpu1 121500 10300 16929 95008 2940 0 1034 607 0 0
intr 1773842 0 0 0
ctxt 987654
btime 1700000000
";
    const AFTER: &str = "cpu  236892 20028 34831 196480 3316 0 3893 1207 0 0
cpu0 115302 9727 17822 101492 376 0 2909 600 0 0
cpu1 121500 10300 16929 95008 2940 0 1034 607 0 0
";

    #[test]
    fn parses_per_cpu_lines_only() {
        let v = parse_proc_stat(BEFORE);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, 0);
        assert_eq!(
            v[1].1,
            CpuTimes {
                user: 121500,
                nice: 10300,
                system: 16929,
                idle: 95008,
                iowait: 2940,
                irq: 0,
                softirq: 1034,
                steal: 607,
            }
        );
        // Old kernels print only four fields.
        let old = parse_proc_stat("cpu3 1 2 3 4\ncpuX 1 2 3 4\ncpu4 1 2\n");
        assert_eq!(old.len(), 1);
        assert_eq!(old[0].0, 3);
        assert_eq!(old[0].1.idle, 4);
        assert_eq!(old[0].1.softirq, 0);
    }

    #[test]
    fn load_in_percent_of_the_interval() {
        let b = parse_proc_stat(BEFORE);
        let a = parse_proc_stat(AFTER);
        let load = load_between(&b, &a);
        // cpu0 moved by user 10, system 20, idle 20, softirq 50: 100 ticks.
        // cpu1 did not move and is left out.
        assert_eq!(
            load,
            vec![CpuLoad {
                cpu: 0,
                user: 10.0,
                system: 20.0,
                irq: 0.0,
                softirq: 50.0,
                steal: 0.0,
                idle: 20.0,
            }]
        );
    }

    #[test]
    fn reads_this_host() {
        let v = read_cpu_times().unwrap();
        assert!(!v.is_empty());
        // The C library counts the online CPUs its own way (glibc reads
        // /sys/devices/system/cpu/online).
        // SAFETY: sysconf has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        assert!(online > 0);
        assert_eq!(cpu_count().unwrap(), online as usize);
    }
}
