//! The receiver's NAPI on the tester's CPUs.
//!
//! A veth runs its peer's NAPI on the CPU that transmitted into it
//! (`veth_xmit` schedules it there). r0's NAPI, which runs an XDP
//! receiver's program (`recv --io xdp` and `--io afxdp`), would therefore
//! be polled on the DUT's CPU, which transmits on d1: the receiver's work
//! would count as the DUT's. (Frames for an AF_PACKET receiver do not go
//! through r0's NAPI: RPS takes them to the tester's CPUs.)
//!
//! In threaded mode (`/sys/class/net/r0/threaded`) each NAPI instance is
//! polled by a kernel thread of its own, `napi/r0-<id>`, which the plan
//! pins to the tester's CPUs. GRO on r0 keeps the NAPI instances, and so
//! their threads, for the lab's whole life: without it veth adds them only
//! while an XDP program is attached, and each new thread would start
//! unpinned. The threads run at the lowest real-time priority (SCHED_FIFO
//! 1): d1 drops a frame when r0's 256-frame ring is full, so the thread
//! must drain it as soon as d1 fills it, not when the scheduler next gets
//! round to it on a CPU the generator keeps busy (as an ordinary thread it
//! let d1 drop most frames at 300,000 frames a second).
//!
//! In shared mode none of this is set: r0 keeps the kernel's defaults.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use pktlab_engine::affinity::format_cpu_list;

use super::cpus::CpuPlan;
use super::plan::{IfRole, LabPlan};
use crate::{netns, LabError};

/// The receiver's port.
const PORT: IfRole = IfRole::Rcv;

/// The SCHED_FIFO priority of r0's NAPI threads: the lowest real-time
/// one, above every ordinary thread (the generator's among them).
pub const PRIORITY: i32 = 1;

/// One NAPI kernel thread, as read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NapiThread {
    pub pid: u32,
    /// Its name, `napi/r0-<id>`.
    pub name: String,
    /// The CPUs it may run on.
    pub cpus: Vec<usize>,
    /// Its SCHED_FIFO priority; None under another policy.
    pub fifo: Option<i32>,
}

/// r0's NAPI, as read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RcvNapi {
    /// GRO on r0 (None: could not be read).
    pub gro: Option<bool>,
    /// The threads of r0's NAPI instances (empty: not threaded); None when
    /// the kernel does not list them (before Linux 6.8).
    pub threads: Option<Vec<NapiThread>>,
}

impl RcvNapi {
    /// True when r0's NAPI is what `wanted` asks for: in isolated mode,
    /// GRO on and every instance in a thread of its own on exactly the
    /// tester's CPUs at SCHED_FIFO [`PRIORITY`] (on a kernel that does not
    /// list the threads, GRO on is all that can be checked); in shared
    /// mode, no thread.
    pub fn matches(&self, wanted: &CpuPlan) -> bool {
        if wanted.is_shared() {
            return self.threads.as_ref().is_none_or(|t| t.is_empty());
        }
        let pinned = |t: &NapiThread| t.cpus == wanted.tester_cpus && t.fifo == Some(PRIORITY);
        self.gro == Some(true)
            && self
                .threads
                .as_ref()
                .is_none_or(|t| !t.is_empty() && t.iter().all(pinned))
    }

    /// One phrase for the lab's status: `r0's NAPI in thread napi/r0-8193
    /// (pid 512) on CPUs 0 at SCHED_FIFO 1`.
    pub fn describe(&self) -> String {
        let Some(threads) = &self.threads else {
            return "r0's NAPI threads unknown (the kernel does not list them)".into();
        };
        if threads.is_empty() {
            return "r0's NAPI on the CPU that sends to it".into();
        }
        let each: Vec<String> = threads
            .iter()
            .map(|t| {
                let policy = match t.fifo {
                    Some(p) => format!("SCHED_FIFO {p}"),
                    None => "an ordinary priority".into(),
                };
                format!(
                    "{} (pid {}) on CPUs {} at {policy}",
                    t.name,
                    t.pid,
                    format_cpu_list(&t.cpus)
                )
            })
            .collect();
        let s = if threads.len() == 1 { "" } else { "s" };
        format!("r0's NAPI in thread{s} {}", each.join(", "))
    }
}

/// Puts r0's NAPI where `cpus` wants it (see the module's notes).
pub fn apply(plan: &LabPlan, cpus: &CpuPlan) -> Result<(), LabError> {
    apply_port(plan, PORT, cpus)
}

/// Puts the NAPI of the lab port `role` where `cpus` wants it, as r0's
/// (traffic both ways runs an XDP receiver on g0 too).
pub(super) fn apply_port(plan: &LabPlan, role: IfRole, cpus: &CpuPlan) -> Result<(), LabError> {
    let port = plan.iface(role);
    let ns = port.ns.as_str();
    let threaded = format!("/sys/class/net/{}/threaded", port.name);
    if cpus.is_shared() {
        let threads = netns::within(ns, || pktlab_io::napi::threads(port.name))?
            .map_err(|err| io_error(ns, err))?;
        if threads.is_some_and(|t| !t.is_empty()) {
            netns::run_in(ns, &["sh", "-c", &format!("echo 0 > {threaded}")])?;
        }
        set_gro(ns, port.name, false)?;
        return Ok(());
    }
    set_gro(ns, port.name, true)?;
    // sysfs shows the namespace it was mounted in: `ip netns exec` mounts
    // the namespace's own.
    netns::run_in(ns, &["sh", "-c", &format!("echo 1 > {threaded}")])?;
    let Some(pids) = netns::within(ns, || pktlab_io::napi::threads(port.name))?
        .map_err(|err| io_error(ns, err))?
    else {
        // The kernel does not list the threads: they cannot be pinned, and
        // the status says so.
        return Ok(());
    };
    if pids.is_empty() {
        return Err(LabError::Output {
            command: format!("echo 1 > {threaded}"),
            why: format!("{} has no NAPI thread after it", port.name),
        });
    }
    for pid in pids {
        pin(pid, &cpus.tester_cpus)?;
    }
    Ok(())
}

/// Reads r0's GRO and NAPI threads.
pub fn observe(plan: &LabPlan) -> Result<RcvNapi, LabError> {
    let port = plan.iface(PORT);
    let ns = port.ns.as_str();
    let gro = netns::within(ns, || pktlab_io::ethtool::gro(port.name))?
        .ok()
        .flatten();
    let pids = netns::within(ns, || pktlab_io::napi::threads(port.name))?
        .map_err(|err| io_error(ns, err))?;
    let threads = match pids {
        Some(pids) => Some(
            pids.into_iter()
                .map(thread)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    Ok(RcvNapi { gro, threads })
}

pub(super) fn set_gro(ns: &str, iface: &str, on: bool) -> Result<(), LabError> {
    let done = netns::within(ns, || pktlab_io::ethtool::set_gro(iface, on))?
        .map_err(|err| io_error(ns, err))?;
    if done {
        return Ok(());
    }
    Err(LabError::Output {
        command: format!("ethtool -K {iface} gro {}", if on { "on" } else { "off" }),
        why: "the driver cannot change GRO".into(),
    })
}

fn io_error(ns: &str, err: pktlab_io::IoError) -> LabError {
    LabError::Io {
        ns: ns.to_string(),
        err,
    }
}

fn sys_error(what: String) -> LabError {
    LabError::Sys {
        what,
        err: std::io::Error::last_os_error(),
    }
}

/// Pins thread `pid` to `cpus` at SCHED_FIFO [`PRIORITY`].
fn pin(pid: u32, cpus: &[usize]) -> Result<(), LabError> {
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET only writes
    // bits of `set` for CPUs below CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe {
        libc::sched_setaffinity(
            pid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        )
    };
    if rc != 0 {
        return Err(sys_error(format!(
            "cannot pin NAPI thread {pid} to CPUs {}",
            format_cpu_list(cpus)
        )));
    }
    let param = libc::sched_param {
        sched_priority: PRIORITY,
    };
    // SAFETY: `param` is a valid sched_param.
    if unsafe { libc::sched_setscheduler(pid as libc::pid_t, libc::SCHED_FIFO, &param) } != 0 {
        return Err(sys_error(format!(
            "cannot give NAPI thread {pid} SCHED_FIFO priority {PRIORITY}"
        )));
    }
    Ok(())
}

/// Thread `pid`'s name, CPUs and policy.
fn thread(pid: u32) -> Result<NapiThread, LabError> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map_err(|err| LabError::Sys {
            what: format!("cannot read the name of NAPI thread {pid}"),
            err,
        })?
        .trim_end()
        .to_string();
    // SAFETY: an all-zero cpu_set_t is valid; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc = unsafe {
        libc::sched_getaffinity(
            pid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        )
    };
    if rc != 0 {
        return Err(sys_error(format!(
            "cannot read the CPUs of NAPI thread {pid}"
        )));
    }
    let cpus: BTreeSet<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    // SAFETY: plain system calls on a pid; `param` is writable.
    let policy = unsafe { libc::sched_getscheduler(pid as libc::pid_t) };
    let mut param = libc::sched_param { sched_priority: 0 };
    let rc = unsafe { libc::sched_getparam(pid as libc::pid_t, &mut param) };
    if policy < 0 || rc != 0 {
        return Err(sys_error(format!(
            "cannot read the scheduling policy of NAPI thread {pid}"
        )));
    }
    Ok(NapiThread {
        pid,
        name,
        cpus: cpus.into_iter().collect(),
        fifo: (policy == libc::SCHED_FIFO).then_some(param.sched_priority),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(cpus: &[usize], fifo: Option<i32>) -> NapiThread {
        NapiThread {
            pid: 512,
            name: "napi/r0-8193".into(),
            cpus: cpus.to_vec(),
            fifo,
        }
    }

    #[test]
    fn pinned_threads_match_the_isolated_plan_only() {
        let plan = CpuPlan::default_for(&[0, 1, 2]);
        let napi = |gro, threads| RcvNapi {
            gro: Some(gro),
            threads,
        };
        let good = napi(true, Some(vec![thread(&[0, 1], Some(1))]));
        assert!(good.matches(&plan));
        assert_eq!(
            good.describe(),
            "r0's NAPI in thread napi/r0-8193 (pid 512) on CPUs 0-1 at SCHED_FIFO 1"
        );
        // On the DUT's CPU too, at an ordinary priority, without GRO, or
        // not threaded: not the plan.
        assert!(!napi(true, Some(vec![thread(&[0, 1, 2], Some(1))])).matches(&plan));
        assert!(!napi(true, Some(vec![thread(&[0, 1], None)])).matches(&plan));
        assert!(!napi(false, Some(vec![thread(&[0, 1], Some(1))])).matches(&plan));
        let none = napi(true, Some(vec![]));
        assert!(!none.matches(&plan));
        assert_eq!(none.describe(), "r0's NAPI on the CPU that sends to it");
        // One queue of two pinned is not enough.
        let half = napi(
            true,
            Some(vec![thread(&[0, 1], Some(1)), thread(&[0, 1, 2], None)]),
        );
        assert!(!half.matches(&plan));
        // A kernel that lists no threads: GRO is all there is to check.
        let unknown = napi(true, None);
        assert!(unknown.matches(&plan));
        assert!(unknown.describe().contains("unknown"));
        // Shared mode: no thread.
        let shared = CpuPlan::shared(&[0, 1, 2]);
        assert!(none.matches(&shared));
        assert!(!good.matches(&shared));
    }
}
