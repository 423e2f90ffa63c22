//! Applying a [`CpuPlan`] to the lab's veths, and reading it back.
//!
//! RPS (`queues/rx-N/rps_cpus`) moves a port's receive work, the DUT's
//! routing and forwarding included, to the CPUs of its mask; XPS
//! (`queues/tx-N/xps_cpus`, with more than one queue) picks transmit
//! queues by CPU. The DUT's ports
//! get the DUT CPUs, the generator's and receiver's ports the tester CPUs;
//! in shared mode every mask is 0, the kernel's default. GRO on d0 lets the
//! generator's port accept XDP-redirected frames, which the XDP live-frame
//! generator (`--io xdp`) needs. In isolated mode r0's NAPI, where an XDP
//! receiver's program runs, is polled by threads pinned to the tester's
//! CPUs ([`super::napi`]).
//!
//! sysfs shows the network namespace it was mounted in, not the calling
//! thread's, so the masks are written and read through `ip netns exec`,
//! which mounts the namespace's own `/sys`. GRO goes through an ethtool
//! ioctl on a socket opened inside the namespace.

use std::fmt;

use serde::{Deserialize, Serialize};

use pktlab_engine::affinity::format_cpu_list;

use crate::{netns, LabError};

use super::cpus::{parse_mask, CpuMode, CpuPlan};
use super::napi::{self, RcvNapi};
use super::plan::{IfRole, LabPlan, NsRole};

/// The port whose GRO must be on: the peer of the generator's g0.
pub const GRO_PORT: IfRole = IfRole::DutIn;

/// One lab interface's masks as read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfSteering {
    pub ns: String,
    pub iface: String,
    /// `rps_cpus` of each RX queue, in queue order.
    pub rps: Vec<String>,
    /// `xps_cpus` of each TX queue, in queue order.
    pub xps: Vec<String>,
}

/// The lab's CPU steering as read back from its namespaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuStatus {
    /// The plan the masks amount to; `None` when they match no plan (set
    /// by hand, or by a DUT configuration such as `rps`).
    pub plan: Option<CpuPlan>,
    /// GRO on d0 (`None`: could not be read).
    pub gro_d0: Option<bool>,
    pub ifaces: Vec<IfSteering>,
    /// r0's NAPI: its GRO and threads (`None`: not read).
    #[serde(default)]
    pub rcv_napi: Option<RcvNapi>,
}

fn wants_dut_cpus(role: IfRole) -> bool {
    role.ns_role() == NsRole::Dut
}

/// The shell lines that write `cpus`'s masks on `ns`'s lab ports.
fn mask_script(plan: &LabPlan, ns: NsRole, cpus: &CpuPlan) -> String {
    let mut lines = Vec::new();
    for &role in &plan.ns(ns).ifaces {
        let mask = if wants_dut_cpus(role) {
            cpus.dut_mask()
        } else {
            cpus.tester_mask()
        };
        let dir = format!("/sys/class/net/{}/queues", role.name());
        lines.push(format!(
            "for f in {dir}/rx-*/rps_cpus; do echo {mask} > \"$f\" || exit 1; done"
        ));
        // XPS picks among transmit queues: with one there is no choice,
        // and the kernel refuses the mask of a single-queue device.
        if plan.queues > 1 {
            lines.push(format!(
                "for f in {dir}/tx-*/xps_cpus; do echo {mask} > \"$f\" || exit 1; done"
            ));
        }
    }
    lines.join("; ")
}

/// Writes `cpus`'s RPS and XPS masks on every lab port, turns GRO on on
/// d0 and puts r0's NAPI where the plan wants it. Every namespace must
/// exist.
pub fn apply(plan: &LabPlan, cpus: &CpuPlan) -> Result<(), LabError> {
    for ns in NsRole::ALL {
        let script = mask_script(plan, ns, cpus);
        netns::run_in(&plan.ns(ns).name, &["sh", "-c", &script])?;
    }
    let port = plan.iface(GRO_PORT);
    let done = netns::within(&port.ns, || pktlab_io::ethtool::set_gro(port.name, true))?.map_err(
        |err| LabError::Io {
            ns: port.ns.clone(),
            err,
        },
    )?;
    if !done {
        return Err(LabError::Output {
            command: format!("ethtool -K {} gro on", port.name),
            why: "the driver cannot turn GRO on".into(),
        });
    }
    napi::apply(plan, cpus)
}

/// Reads every lab port's masks, d0's GRO and r0's NAPI. Every namespace
/// must exist.
pub fn observe(plan: &LabPlan) -> Result<CpuStatus, LabError> {
    let mut ifaces = Vec::new();
    for ns in NsRole::ALL {
        let ns_plan = plan.ns(ns);
        let files: Vec<String> = ns_plan
            .ifaces
            .iter()
            .map(|r| format!("/sys/class/net/{}/queues/*/[rx]ps_cpus", r.name()))
            .collect();
        // `grep -H` prints path:value; a file the driver cannot read is
        // left out rather than failing the whole read.
        let script = format!("grep -H . {} 2>/dev/null; true", files.join(" "));
        let out = netns::run_in(&ns_plan.name, &["sh", "-c", &script])?;
        for &role in &ns_plan.ifaces {
            ifaces.push(parse_masks(&ns_plan.name, role.name(), &out));
        }
    }
    let port = plan.iface(GRO_PORT);
    let gro_d0 = netns::within(&port.ns, || pktlab_io::ethtool::gro(port.name))?
        .ok()
        .flatten();
    Ok(CpuStatus {
        plan: plan_of(&ifaces),
        gro_d0,
        ifaces,
        rcv_napi: Some(napi::observe(plan)?),
    })
}

/// One interface's masks out of `grep -H` output, in queue order.
fn parse_masks(ns: &str, iface: &str, grep: &str) -> IfSteering {
    let prefix = format!("/sys/class/net/{iface}/queues/");
    let mut rps: Vec<(u32, String)> = Vec::new();
    let mut xps: Vec<(u32, String)> = Vec::new();
    for line in grep.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let Some((file, value)) = rest.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        let queue = |q: &str| q.parse::<u32>().ok();
        if let Some(q) = file
            .strip_prefix("rx-")
            .and_then(|f| f.strip_suffix("/rps_cpus"))
            .and_then(queue)
        {
            rps.push((q, value));
        } else if let Some(q) = file
            .strip_prefix("tx-")
            .and_then(|f| f.strip_suffix("/xps_cpus"))
            .and_then(queue)
        {
            xps.push((q, value));
        }
    }
    rps.sort();
    xps.sort();
    IfSteering {
        ns: ns.to_string(),
        iface: iface.to_string(),
        rps: rps.into_iter().map(|(_, v)| v).collect(),
        xps: xps.into_iter().map(|(_, v)| v).collect(),
    }
}

/// The CPU set every mask of `ifaces` names, when they all name the same.
fn common_set<'a>(ifaces: impl Iterator<Item = &'a IfSteering>) -> Option<Vec<usize>> {
    let mut set: Option<Vec<usize>> = None;
    for i in ifaces {
        if i.rps.is_empty() {
            return None;
        }
        for m in i.rps.iter().chain(&i.xps) {
            let cpus = parse_mask(m)?;
            match &set {
                None => set = Some(cpus),
                Some(s) if *s == cpus => {}
                Some(_) => return None,
            }
        }
    }
    set
}

/// The plan that `ifaces`' masks amount to: every mask 0 is shared mode
/// (over the online CPUs), the DUT's ports on one set and the others on
/// another, disjoint one is isolated.
fn plan_of(ifaces: &[IfSteering]) -> Option<CpuPlan> {
    let is_dut = |i: &&IfSteering| i.iface == "d0" || i.iface == "d1";
    let dut = common_set(ifaces.iter().filter(is_dut))?;
    let tester = common_set(ifaces.iter().filter(|i| !is_dut(i)))?;
    if dut.is_empty() && tester.is_empty() {
        let online = super::cpus::online_cpus().unwrap_or_default();
        return Some(CpuPlan::shared(&online));
    }
    let disjoint = dut.iter().all(|c| !tester.contains(c));
    (!dut.is_empty() && !tester.is_empty() && disjoint).then_some(CpuPlan {
        mode: CpuMode::Isolated,
        dut_cpus: dut,
        tester_cpus: tester,
    })
}

impl CpuStatus {
    /// True when the masks, GRO and r0's NAPI are what `wanted` asks for.
    /// Shared plans match whatever CPUs they list: shared mode sets no
    /// mask.
    pub fn matches(&self, wanted: &CpuPlan) -> bool {
        let plan_ok = match (&self.plan, wanted.mode) {
            (Some(p), CpuMode::Shared) => p.is_shared(),
            (Some(p), CpuMode::Isolated) => p == wanted,
            (None, _) => false,
        };
        let napi_ok = self.rcv_napi.as_ref().is_some_and(|n| n.matches(wanted));
        plan_ok && self.gro_d0 == Some(true) && napi_ok
    }
}

impl fmt::Display for CpuStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.ifaces.iter().any(|i| !i.xps.is_empty()) {
            "RPS/XPS"
        } else {
            "RPS"
        };
        match &self.plan {
            Some(p) if p.is_shared() => write!(
                f,
                "CPU plan: shared (no RPS/XPS masks): generator, DUT and receiver share CPUs {}",
                format_cpu_list(&p.tester_cpus)
            )?,
            Some(p) => write!(
                f,
                "CPU plan: isolated: DUT CPUs {} ({how} on d0 d1), tester CPUs {} ({how} on g0 r0)",
                format_cpu_list(&p.dut_cpus),
                format_cpu_list(&p.tester_cpus)
            )?,
            None => {
                let masks: Vec<String> = self
                    .ifaces
                    .iter()
                    .map(|i| {
                        format!(
                            "{} rps {} xps {}",
                            i.iface,
                            i.rps.join(","),
                            i.xps.join(",")
                        )
                    })
                    .collect();
                write!(
                    f,
                    "CPU plan: none (masks set by hand: {})",
                    masks.join("; ")
                )?
            }
        }
        let gro = match self.gro_d0 {
            Some(true) => "on",
            Some(false) => "off",
            None => "unknown",
        };
        write!(f, "; GRO on d0 {gro}")?;
        match &self.rcv_napi {
            Some(n) => writeln!(f, "; {}", n.describe()),
            None => writeln!(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steer(iface: &str, rps: &[&str], xps: &[&str]) -> IfSteering {
        IfSteering {
            ns: if iface.starts_with('d') {
                "lab-dut"
            } else {
                "lab-end"
            }
            .into(),
            iface: iface.into(),
            rps: rps.iter().map(|s| s.to_string()).collect(),
            xps: xps.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn scripts_write_each_side_its_mask() {
        let plan = LabPlan::new("t", 2);
        let cpus = CpuPlan::default_for(&[0, 1, 2, 3]);
        let one_queue = mask_script(&LabPlan::new("t", 1), NsRole::Dut, &cpus);
        assert!(!one_queue.contains("xps_cpus"), "{one_queue}");
        let dut = mask_script(&plan, NsRole::Dut, &cpus);
        assert_eq!(
            dut,
            "for f in /sys/class/net/d0/queues/rx-*/rps_cpus; do echo 8 > \"$f\" || exit 1; done; \
             for f in /sys/class/net/d0/queues/tx-*/xps_cpus; do echo 8 > \"$f\" || exit 1; done; \
             for f in /sys/class/net/d1/queues/rx-*/rps_cpus; do echo 8 > \"$f\" || exit 1; done; \
             for f in /sys/class/net/d1/queues/tx-*/xps_cpus; do echo 8 > \"$f\" || exit 1; done"
        );
        let rcv = mask_script(&plan, NsRole::Rcv, &cpus);
        assert!(
            rcv.contains("/r0/queues/rx-*/rps_cpus; do echo 7 >"),
            "{rcv}"
        );
        let shared = mask_script(&plan, NsRole::Gen, &CpuPlan::shared(&[0]));
        assert!(
            shared.contains("/g0/queues/tx-*/xps_cpus; do echo 0 >"),
            "{shared}"
        );
    }

    #[test]
    fn masks_read_back() {
        let grep = "/sys/class/net/d0/queues/rx-1/rps_cpus:2\n\
                    /sys/class/net/d0/queues/rx-0/rps_cpus:2\n\
                    /sys/class/net/d0/queues/tx-0/xps_cpus:2\n\
                    /sys/class/net/d1/queues/rx-0/rps_cpus:3\n";
        let d0 = parse_masks("lab-dut", "d0", grep);
        assert_eq!(d0, steer("d0", &["2", "2"], &["2"]));
        assert_eq!(d0.ns, "lab-dut");
        assert_eq!(parse_masks("lab-dut", "d1", grep), steer("d1", &["3"], &[]));
        assert_eq!(parse_masks("lab-end", "g0", grep), steer("g0", &[], &[]));
    }

    #[test]
    fn masks_amount_to_a_plan() {
        let isolated = [
            steer("g0", &["1"], &["1"]),
            steer("d0", &["2"], &["2"]),
            steer("d1", &["2"], &["00000002"]),
            steer("r0", &["1"], &["1"]),
        ];
        let p = plan_of(&isolated).unwrap();
        assert_eq!((p.dut_cpus, p.tester_cpus), (vec![1], vec![0]));
        let shared = [
            steer("g0", &["0"], &["0"]),
            steer("d0", &["0"], &["0"]),
            steer("d1", &["0"], &["0"]),
            steer("r0", &["0"], &["0"]),
        ];
        assert!(plan_of(&shared).unwrap().is_shared());
        // The `rps` DUT configuration (every CPU on the DUT's ports) and
        // overlapping sets are no plan.
        let mut rps = isolated.clone();
        rps[1] = steer("d0", &["3"], &["2"]);
        assert_eq!(plan_of(&rps), None);
        let mut overlap = isolated.clone();
        overlap[0] = steer("g0", &["3"], &["3"]);
        overlap[3] = steer("r0", &["3"], &["3"]);
        assert_eq!(plan_of(&overlap), None);

        let pinned = RcvNapi {
            gro: Some(true),
            threads: Some(vec![napi::NapiThread {
                pid: 512,
                name: "napi/r0-8193".into(),
                cpus: vec![0],
                fifo: Some(napi::PRIORITY),
            }]),
        };
        let status = CpuStatus {
            plan: plan_of(&isolated),
            gro_d0: Some(true),
            ifaces: isolated.to_vec(),
            rcv_napi: Some(pinned.clone()),
        };
        assert!(status.matches(&CpuPlan::default_for(&[0, 1])));
        assert!(!status.matches(&CpuPlan::default_for(&[0, 1, 2])));
        assert!(!status.matches(&CpuPlan::shared(&[0, 1])));
        assert_eq!(
            status.to_string(),
            "CPU plan: isolated: DUT CPUs 1 (RPS/XPS on d0 d1), tester CPUs 0 (RPS/XPS on g0 r0); \
             GRO on d0 on; r0's NAPI in thread napi/r0-8193 (pid 512) on CPUs 0 at SCHED_FIFO 1\n"
        );
        let no_gro = CpuStatus {
            gro_d0: Some(false),
            ..status.clone()
        };
        assert!(!no_gro.matches(&CpuPlan::default_for(&[0, 1])));
        // r0's NAPI left on the CPU that sends to it (the DUT's): not the
        // isolated plan.
        let unpinned = CpuStatus {
            rcv_napi: Some(RcvNapi {
                threads: Some(Vec::new()),
                ..pinned
            }),
            ..status
        };
        assert!(!unpinned.matches(&CpuPlan::default_for(&[0, 1])));
    }
}
