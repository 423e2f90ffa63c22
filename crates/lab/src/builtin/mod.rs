//! The built-in lab: generator → DUT → receiver, three network namespaces
//! joined by two veth pairs (README.md, "The built-in lab").
//!
//! [`BuiltinLab::new`] only validates and computes names, MACs and
//! addresses; `up`, `down`, `status` and `counters` touch the system.

mod build;
mod check;
mod cpus;
mod napi;
mod plan;
mod reverse_xdp;
mod status;
mod steer;

use pktlab_io::iface::IfCounters;

use crate::observe::{self, NsObservation};
use crate::{netns, runner, LabError, MAX_QUEUES};

use check::Problem;
pub use check::Queues;
pub use cpus::{mask_cpus, mask_text, online_cpus, parse_mask, CpuMode, CpuPlan};
pub use napi::{NapiThread, RcvNapi};
pub use plan::{
    gen_side_nets, rcv_side_nets, IfRole, LabIface, NsRole, GEN_SIDE_NEXT_HOP4, GEN_SIDE_NEXT_HOP6,
    IPV4_PREFIX_LEN, IPV6_PREFIX_LEN, RCV_SIDE_NEXT_HOP4, RCV_SIDE_NEXT_HOP6,
};
pub use reverse_xdp::ReverseXdp;
pub use status::{IfStatus, LabIfCounters, LabState, LabStatus, NsStatus};
pub use steer::{CpuStatus, IfSteering};

use plan::LabPlan;

/// The default namespace prefix.
pub const DEFAULT_PREFIX: &str = "pktlab";

/// Longest lab prefix: namespace names stay short and readable.
pub const MAX_PREFIX_LEN: usize = 32;

/// What to build: the namespace prefix, the queues per veth and the CPU plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabSpec {
    /// Namespaces are `<prefix>-gen`, `<prefix>-dut`, `<prefix>-rcv`.
    pub prefix: String,
    /// TX and RX queues of every lab interface, 1 to [`MAX_QUEUES`].
    pub queues: u16,
    /// How `up` steers the DUT's and the tester's work to CPUs (RPS/XPS
    /// masks, GRO on d0); `None` leaves whatever steering there is.
    pub cpus: Option<CpuPlan>,
}

impl Default for LabSpec {
    fn default() -> LabSpec {
        LabSpec {
            prefix: DEFAULT_PREFIX.to_string(),
            queues: 1,
            cpus: None,
        }
    }
}

/// What [`BuiltinLab::up`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpOutcome {
    /// Nothing existed; the lab was built.
    Created,
    /// The lab was complete (and had the asked queue count); nothing changed.
    AlreadyUp,
    /// Part of the lab existed, or it differed from the spec. Addresses,
    /// routes, neighbours and sysctls are fixed in place (the namespaces,
    /// veths and ifindexes stay); anything else is removed and built again.
    Repaired,
    /// The lab was complete but its CPU steering was not the spec's plan;
    /// the plan's masks (and GRO on d0) were applied.
    CpusApplied,
}

/// The built-in lab for one [`LabSpec`].
#[derive(Clone, Debug)]
pub struct BuiltinLab {
    spec: LabSpec,
    plan: LabPlan,
}

impl BuiltinLab {
    /// Validates `spec` (exit-code-2 errors for a bad prefix or queue count)
    /// and works out names, MACs and addresses. No side effects.
    pub fn new(spec: LabSpec) -> Result<BuiltinLab, LabError> {
        netns::check_name("lab prefix", &spec.prefix, MAX_PREFIX_LEN)?;
        if spec.queues == 0 || spec.queues > MAX_QUEUES {
            return Err(LabError::BadQueues(spec.queues));
        }
        let plan = LabPlan::new(&spec.prefix, spec.queues);
        Ok(BuiltinLab { spec, plan })
    }

    pub fn spec(&self) -> &LabSpec {
        &self.spec
    }

    pub fn prefix(&self) -> &str {
        &self.spec.prefix
    }

    /// Builds the lab if needed. Idempotent: a complete lab with the spec's
    /// queue count is left alone ([`UpOutcome::AlreadyUp`]); a partial one,
    /// or one with another queue count, is repaired ([`UpOutcome::Repaired`]):
    /// in place when only its configuration differs (a sysctl changed by a
    /// DUT configuration that was not reverted, a deleted route), otherwise
    /// by removing and building it again. A build that fails half-way
    /// removes what it created before returning the error. Needs root.
    pub fn up(&self) -> Result<UpOutcome, LabError> {
        crate::knobs::restore_at_lab_change();
        let outcome = self.up_structure()?;
        let Some(cpus) = &self.spec.cpus else {
            return Ok(outcome);
        };
        if steer::observe(&self.plan)?.matches(cpus) {
            return Ok(outcome);
        }
        steer::apply(&self.plan, cpus)?;
        let now = steer::observe(&self.plan)?;
        if !now.matches(cpus) {
            return Err(LabError::Incomplete(format!(
                "the CPU plan ({cpus}) does not read back: {}",
                now.to_string().trim_end()
            )));
        }
        Ok(match outcome {
            UpOutcome::AlreadyUp => UpOutcome::CpusApplied,
            other => other,
        })
    }

    /// Applies the spec's CPU plan again (after something reset the DUT's
    /// masks or GRO); nothing when the spec has none.
    pub fn steer(&self) -> Result<(), LabError> {
        match &self.spec.cpus {
            Some(cpus) => steer::apply(&self.plan, cpus),
            None => Ok(()),
        }
    }

    /// Sets what traffic both ways with the XDP backends needs on the way
    /// back for one trial (GRO on d1 with `xdp_generator`, g0's NAPI in
    /// threads in isolated mode), until the guard puts it back
    /// (`reverse_xdp.rs`).
    pub fn reverse_xdp(&self, xdp_generator: bool) -> Result<ReverseXdp<'_>, LabError> {
        reverse_xdp::set(&self.plan, self.spec.cpus.as_ref(), xdp_generator)
    }

    /// The lab's CPU steering as read back; `None` unless all three
    /// namespaces exist. Needs root.
    pub fn cpu_status(&self) -> Result<Option<CpuStatus>, LabError> {
        if !self
            .plan
            .namespaces
            .iter()
            .all(|ns| netns::exists(&ns.name))
        {
            return Ok(None);
        }
        require_root("inspecting the lab")?;
        steer::observe(&self.plan).map(Some)
    }

    fn up_structure(&self) -> Result<UpOutcome, LabError> {
        require_root("bringing the lab up")?;
        let queues = Queues::Exactly(self.spec.queues);
        let observed = self.observe()?;
        if observed.iter().all(|o| !o.exists) {
            build::create(&self.plan)?;
            self.verify_new()?;
            return Ok(UpOutcome::Created);
        }
        let problems = self.problems_in(&observed, queues);
        if problems.is_empty() {
            return Ok(UpOutcome::AlreadyUp);
        }
        if problems.iter().all(|p| !p.rebuild) {
            // Namespaces and veths are right (so are MACs and ifindexes, and
            // programs running inside keep working): fix the rest in place.
            build::reconfigure(&self.plan)?;
            if self.problems_in(&self.observe()?, queues).is_empty() {
                return Ok(UpOutcome::Repaired);
            }
        }
        build::remove(&self.plan)?;
        build::create(&self.plan)?;
        self.verify_new()?;
        Ok(UpOutcome::Repaired)
    }

    /// Checks a lab `up` has just built; removes it if it is incomplete.
    fn verify_new(&self) -> Result<(), LabError> {
        let problems = self
            .observe()
            .map(|o| self.problems_in(&o, Queues::Exactly(self.spec.queues)));
        let error = match problems {
            Ok(p) if p.is_empty() => return Ok(()),
            Ok(p) => LabError::Incomplete(summarize(&texts(&p))),
            Err(e) => e,
        };
        match build::remove(&self.plan) {
            Ok(()) => Err(error),
            Err(cleanup) => Err(LabError::Cleanup {
                error: Box::new(error),
                cleanup: Box::new(cleanup),
            }),
        }
    }

    /// Removes the lab: its three namespaces, and with them the veths and
    /// everything configured in them. Fine when nothing exists. Needs root.
    pub fn down(&self) -> Result<(), LabError> {
        require_root("taking the lab down")?;
        crate::knobs::restore_at_lab_change();
        build::remove(&self.plan)
    }

    /// True when the lab is complete, with the spec's queue count. False
    /// when it cannot be checked (not root).
    pub fn is_up(&self) -> bool {
        runner::is_root()
            && self
                .problems_with(Queues::Exactly(self.spec.queues))
                .is_ok_and(|p| p.is_empty())
    }

    /// What is missing or wrong compared with a complete lab with the
    /// spec's queue count (empty when it is up; every namespace listed
    /// as missing when it is down).
    pub fn problems(&self) -> Result<Vec<String>, LabError> {
        self.problems_with(Queues::Exactly(self.spec.queues))
    }

    /// [`BuiltinLab::problems`] with a choice of how to judge queue counts.
    pub fn problems_with(&self, queues: Queues) -> Result<Vec<String>, LabError> {
        if self.any_exists() {
            require_root("inspecting the lab")?;
        }
        Ok(texts(&self.problems_in(&self.observe()?, queues)))
    }

    /// What broke in the lab that no DUT configuration does (a namespace
    /// or interface gone or down, forwarding turned off): a run on it
    /// measures the breakage, not the DUT. Needs root.
    pub fn faults(&self) -> Result<Vec<String>, LabError> {
        require_root("inspecting the lab")?;
        let observed = self.observe()?;
        Ok(self
            .problems_in(&observed, Queues::Any)
            .iter()
            .filter(|p| p.fault)
            .map(|p| p.text.clone())
            .collect())
    }

    /// Each namespace with its interfaces, MACs, state, addresses, counters,
    /// routes, neighbours and sysctls. The queue count is shown, not
    /// judged: a lab built with `--queues 4` is `up`. Needs root unless no
    /// namespace of the lab exists.
    pub fn status(&self) -> Result<LabStatus, LabError> {
        if self.any_exists() {
            require_root("inspecting the lab")?;
        }
        let observed = self.observe()?;
        let problems = if observed.iter().any(|o| o.exists) {
            texts(&self.problems_in(&observed, Queues::Any))
        } else {
            Vec::new()
        };
        let cpus = if observed.iter().all(|o| o.exists) {
            steer::observe(&self.plan).ok()
        } else {
            None
        };
        Ok(LabStatus::new(&self.plan, observed, problems, cpus))
    }

    /// Counters of every lab interface, read in its namespace: g0, d0, d1, r0.
    pub fn counters(&self) -> Result<Vec<LabIfCounters>, LabError> {
        let mut out = Vec::with_capacity(4);
        for ns in &self.plan.namespaces {
            self.require_ns(&ns.name)?;
            let names: Vec<&str> = ns.ifaces.iter().map(|r| r.name()).collect();
            let counters = observe::counters_in(&ns.name, &names)?;
            for (&role, counters) in ns.ifaces.iter().zip(counters) {
                out.push(LabIfCounters {
                    ns: ns.name.clone(),
                    iface: role.name().to_string(),
                    role,
                    counters,
                });
            }
        }
        Ok(out)
    }

    /// Counters of one lab interface (cheaper than [`BuiltinLab::counters`]
    /// when sampling one port every second).
    pub fn iface_counters(&self, role: IfRole) -> Result<IfCounters, LabError> {
        let iface = self.plan.iface(role);
        self.require_ns(&iface.ns)?;
        let mut c = observe::counters_in(&iface.ns, &[iface.name])?;
        Ok(c.remove(0))
    }

    /// Name, namespace, MAC and addresses of one lab interface.
    pub fn iface(&self, role: IfRole) -> &LabIface {
        self.plan.iface(role)
    }

    /// All four lab interfaces: g0, d0, d1, r0.
    pub fn ifaces(&self) -> &[LabIface] {
        &self.plan.ifaces
    }

    /// A namespace's name.
    pub fn ns(&self, role: NsRole) -> &str {
        &self.plan.ns(role).name
    }

    pub fn gen_ns(&self) -> &str {
        self.ns(NsRole::Gen)
    }
    pub fn dut_ns(&self) -> &str {
        self.ns(NsRole::Dut)
    }
    pub fn rcv_ns(&self) -> &str {
        self.ns(NsRole::Rcv)
    }
    /// `g0`, the generator's port.
    pub fn gen_if(&self) -> &str {
        IfRole::Gen.name()
    }
    /// `r0`, the receiver's port.
    pub fn rcv_if(&self) -> &str {
        IfRole::Rcv.name()
    }
    /// `d0`, the DUT's port facing the generator.
    pub fn dut_in_if(&self) -> &str {
        IfRole::DutIn.name()
    }
    /// `d1`, the DUT's port facing the receiver.
    pub fn dut_out_if(&self) -> &str {
        IfRole::DutOut.name()
    }
    /// g0's MAC: the source MAC of generated frames.
    pub fn gen_mac(&self) -> [u8; 6] {
        self.iface(IfRole::Gen).mac
    }
    /// d0's MAC: the destination MAC of generated frames.
    pub fn dut_in_mac(&self) -> [u8; 6] {
        self.iface(IfRole::DutIn).mac
    }
    /// d1's MAC: the source MAC of forwarded frames.
    pub fn dut_out_mac(&self) -> [u8; 6] {
        self.iface(IfRole::DutOut).mac
    }
    /// r0's MAC: the destination MAC of forwarded frames.
    pub fn rcv_mac(&self) -> [u8; 6] {
        self.iface(IfRole::Rcv).mac
    }

    fn any_exists(&self) -> bool {
        self.plan
            .namespaces
            .iter()
            .any(|ns| netns::exists(&ns.name))
    }

    fn require_ns(&self, name: &str) -> Result<(), LabError> {
        if netns::exists(name) {
            Ok(())
        } else {
            Err(LabError::NotUp {
                prefix: self.spec.prefix.clone(),
                why: format!("namespace {name} does not exist"),
            })
        }
    }

    fn observe(&self) -> Result<Vec<NsObservation>, LabError> {
        self.plan
            .namespaces
            .iter()
            .map(|ns| {
                let keys: Vec<String> = ns.sysctls().map(|s| s.key.clone()).collect();
                observe::observe(&ns.name, &keys)
            })
            .collect()
    }

    fn problems_in(&self, observed: &[NsObservation], queues: Queues) -> Vec<Problem> {
        check::problems(&self.plan, observed, queues)
    }
}

fn require_root(what: &str) -> Result<(), LabError> {
    if runner::is_root() {
        Ok(())
    } else {
        Err(LabError::NotRoot(format!(
            "{what} needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
        )))
    }
}

fn texts(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(|p| p.text.clone()).collect()
}

/// The first few problems on one line.
fn summarize(problems: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = problems[..problems.len().min(SHOWN)].join("; ");
    if problems.len() > SHOWN {
        s.push_str(&format!("; and {} more", problems.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests;
