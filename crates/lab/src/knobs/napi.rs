//! Threaded NAPI on the DUT's ports: each NAPI instance polled by a
//! kernel thread of its own (`/sys/class/net/IF/threaded`) instead of in
//! the softirq of the CPU that scheduled it, pinned to the DUT's CPUs
//! when a CPU plan gives them.
//!
//! A veth has NAPI instances only while GRO is on or an XDP program is
//! attached: the `threaded-napi` configuration turns GRO on first, and a
//! port left without NAPI is an error here (its thread would be created
//! unpinned later).

use std::collections::BTreeSet;

use crate::LabError;

/// Turns threaded NAPI on or off on every port of `ifaces` (in the calling
/// process's namespace, whose `/sys` must be mounted: `ip netns exec`
/// does), then pins each port's NAPI threads to `pin` when given.
pub fn set_threaded(ifaces: &[&str], on: bool, pin: Option<&[usize]>) -> Result<(), LabError> {
    for &iface in ifaces {
        let path = format!("/sys/class/net/{iface}/threaded");
        let value = if on { "1" } else { "0" };
        // A port already so is left alone: the kernel refuses even "0" on a
        // veth without NAPI, and kernels before 5.12 have no file (nothing
        // to turn off).
        let now = std::fs::read_to_string(&path).ok();
        if !on && now.as_deref().is_none_or(|v| v.trim() == "0") {
            continue;
        }
        if now.as_deref().map(str::trim) != Some(value) {
            std::fs::write(&path, value).map_err(|e| LabError::Knob {
                knob: format!("threaded NAPI on {iface}"),
                why: format!("the kernel refused {value}: {}", pktlab_io::os_message(&e)),
            })?;
        }
        if !on {
            continue;
        }
        let Some(cpus) = pin else { continue };
        let pids = pktlab_io::napi::threads(iface).map_err(|err| LabError::Io {
            ns: "the DUT's".into(),
            err,
        })?;
        let Some(pids) = pids else {
            // The kernel does not list NAPI threads (before Linux 6.8):
            // they cannot be found to pin.
            return Err(LabError::Knob {
                knob: format!("threaded NAPI on {iface}"),
                why: "this kernel does not list NAPI threads, so they cannot be pinned to the \
                      DUT's CPUs (Linux 6.8 or later)"
                    .into(),
            });
        };
        if pids.is_empty() {
            return Err(LabError::Knob {
                knob: format!("threaded NAPI on {iface}"),
                why: "it has no NAPI instance (a veth has one only with GRO on or an XDP program)"
                    .into(),
            });
        }
        for pid in pids {
            pin_thread(pid, cpus)?;
        }
    }
    Ok(())
}

/// Pins thread `pid` to `cpus`.
fn pin_thread(pid: u32, cpus: &[usize]) -> Result<(), LabError> {
    let cpus: BTreeSet<usize> = cpus
        .iter()
        .copied()
        .filter(|&c| c < libc::CPU_SETSIZE as usize)
        .collect();
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET only writes
    // bits below CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in &cpus {
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
        return Err(LabError::Sys {
            what: format!(
                "cannot pin NAPI thread {pid} to CPUs {}",
                pktlab_engine::affinity::format_cpu_list(&cpus.into_iter().collect::<Vec<_>>())
            ),
            err: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}
