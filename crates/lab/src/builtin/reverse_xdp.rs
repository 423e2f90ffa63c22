//! What traffic both ways with the XDP backends needs on the way back,
//! for as long as a trial lasts. The forward direction has it from the
//! CPU plan: GRO on d0, so that g0 accepts the XDP live-frame generator's
//! frames, and r0's NAPI in threads on the tester's CPUs, where the
//! in-kernel receiver's and AF_XDP's programs run. The reverse direction
//! sends from r0 into d1 and receives on g0, so the XDP generator needs
//! GRO on d1 (a DUT port: the change is the DUT's, and only while the
//! trial runs), and a receiver with an XDP program needs g0's NAPI
//! threaded as r0's is (in isolated mode; shared mode threads neither),
//! else its work runs on the CPU that sends into g0, the DUT's. Both are
//! put back as they were found.

use super::cpus::CpuPlan;
use super::napi;
use super::plan::{IfRole, LabPlan};
use crate::{netns, LabError};

/// The reverse path's settings as found, to put back.
#[must_use = "restore() puts d1's GRO and g0's NAPI back"]
pub struct ReverseXdp<'a> {
    plan: &'a LabPlan,
    /// d1's GRO as found; None when it was left alone.
    d1_gro: Option<bool>,
    g0_gro: bool,
    g0_threaded: bool,
    restored: bool,
}

/// Whether `iface`'s NAPI runs in threads (`/sys/class/net/*/threaded`).
fn threaded(ns: &str, iface: &str) -> Result<bool, LabError> {
    let out = netns::run_in(ns, &["cat", &format!("/sys/class/net/{iface}/threaded")])?;
    Ok(out.trim() != "0")
}

fn gro(ns: &str, iface: &str) -> Result<bool, LabError> {
    let on = netns::within(ns, || pktlab_io::ethtool::gro(iface))?.map_err(|err| LabError::Io {
        ns: ns.to_string(),
        err,
    })?;
    Ok(on.unwrap_or(false))
}

/// Sets GRO on d1 (with `xdp_generator`: the XDP generator sends from r0)
/// and, in isolated mode (`cpus`), g0's NAPI on the tester's CPUs, until
/// [`ReverseXdp::restore`] (or the guard's drop, which cannot report a
/// failure) puts them back.
pub(super) fn set<'a>(
    plan: &'a LabPlan,
    cpus: Option<&CpuPlan>,
    xdp_generator: bool,
) -> Result<ReverseXdp<'a>, LabError> {
    let (d1, g0) = (plan.iface(IfRole::DutOut), plan.iface(IfRole::Gen));
    let d1_gro = match xdp_generator {
        true => Some(gro(&d1.ns, d1.name)?),
        false => None,
    };
    let mut guard = ReverseXdp {
        plan,
        d1_gro,
        g0_gro: gro(&g0.ns, g0.name)?,
        g0_threaded: threaded(&g0.ns, g0.name)?,
        restored: false,
    };
    let apply = || -> Result<(), LabError> {
        if xdp_generator {
            napi::set_gro(&d1.ns, d1.name, true)?;
        }
        match cpus.filter(|c| !c.is_shared()) {
            Some(cpus) => napi::apply_port(plan, IfRole::Gen, cpus),
            None => Ok(()),
        }
    };
    if let Err(e) = apply() {
        guard.restored = true;
        let _ = guard.put_back();
        return Err(e);
    }
    Ok(guard)
}

impl ReverseXdp<'_> {
    /// Puts d1's GRO and g0's NAPI back as they were found.
    pub fn restore(mut self) -> Result<(), LabError> {
        self.restored = true;
        self.put_back()
    }

    fn put_back(&self) -> Result<(), LabError> {
        let plan = self.plan;
        let (d1, g0) = (plan.iface(IfRole::DutOut), plan.iface(IfRole::Gen));
        if !self.g0_threaded && threaded(&g0.ns, g0.name)? {
            let file = format!("/sys/class/net/{}/threaded", g0.name);
            netns::run_in(&g0.ns, &["sh", "-c", &format!("echo 0 > {file}")])?;
        }
        napi::set_gro(&g0.ns, g0.name, self.g0_gro)?;
        match self.d1_gro {
            Some(on) => napi::set_gro(&d1.ns, d1.name, on),
            None => Ok(()),
        }
    }
}

impl Drop for ReverseXdp<'_> {
    fn drop(&mut self) {
        if !self.restored {
            let _ = self.put_back();
        }
    }
}
