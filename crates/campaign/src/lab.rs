//! The lab a campaign's plan asks for, as trials run on it
//! ([`pktlab_trial::target::Target`]).

use std::time::Duration;

use pktlab_lab::dutroute::{self, Routed};
use pktlab_lab::UpOutcome;
use pktlab_trial::target::Target;

use crate::plan::{LabChoice, Plan};
use crate::CampaignError;

/// The lab of `plan`, up: the built-in lab is built (or repaired) and its
/// DUT reset, saying what `up` did; a lab of interfaces is checked, its
/// hosts reached over ssh.
pub fn lab_target(plan: &Plan) -> Result<(Target, Option<UpOutcome>), CampaignError> {
    match &plan.lab {
        LabChoice::Builtin { .. } => {
            let spec = plan.lab.builtin_spec().expect("a built-in lab");
            let (target, outcome) = Target::builtin(spec)?;
            Ok((target, Some(outcome)))
        }
        LabChoice::Interfaces {
            lab,
            state_probe,
            hosts,
        } => {
            let generators: Vec<_> = hosts
                .generators
                .iter()
                .map(|g| (g.host.clone(), g.port.clone()))
                .collect();
            let target = Target::interfaces_on_hosts(
                lab.clone(),
                state_probe.clone(),
                hosts.gen_host.as_deref(),
                hosts.rcv_host.as_deref(),
                hosts.ssh_config.as_deref(),
                &generators,
                run_limit(plan),
            )?;
            Ok((target, None))
        }
    }
}

/// The longest a trial of `plan` lasts: the receiver's start, the run,
/// the drain.
pub fn run_limit(plan: &Plan) -> Duration {
    plan.run.trial.duration + pktlab_trial::trial::DRAIN + Duration::from_secs(30)
}

/// What `pktlab lab check` found on a lab of interfaces: every host
/// reached, every port probed, the DUT's routes towards the traffic's
/// destinations. No test traffic is sent.
#[derive(Clone, Debug)]
pub struct LabCheck {
    /// The lab, described.
    pub lab: String,
    /// One line per port.
    pub ports: Vec<String>,
    /// How commands reach the DUT.
    pub dut_runner: String,
    /// The DUT's `uname`, when it answered.
    pub dut_uname: Option<String>,
    /// The route of each first and last destination address.
    pub routes: Vec<(std::net::IpAddr, Routed)>,
    /// How far one-way latency can be trusted across the hosts.
    pub clocks: Option<String>,
}

impl LabCheck {
    /// The problems found with the DUT's routes.
    pub fn problems(&self) -> usize {
        self.routes
            .iter()
            .filter(|(_, r)| matches!(r, Routed::Problem(_)))
            .count()
    }
}

/// Checks the lab of interfaces of `plan`: the first host or port that
/// fails is the error, one line naming it.
pub fn check(plan: &Plan) -> Result<LabCheck, CampaignError> {
    let LabChoice::Interfaces { lab, .. } = &plan.lab else {
        return Err(CampaignError::Usage(
            "pktlab lab check is for kind = \"interfaces\" labs: `pktlab lab status` shows the built-in one".into(),
        ));
    };
    let (target, _) = lab_target(plan)?;
    let ports = target.port_lines()?;
    target.dut.runner.run("true")?;
    let mut ranges = Vec::new();
    for t in &plan.traffics {
        let r: pktlab_wire::range::EndpointRange = t.dst.parse()?;
        ranges.push((r.addrs.start(), r.addrs.end()));
    }
    let want = lab.dut_ifaces.get(1).map(String::as_str);
    let routes = dutroute::ends(&ranges)
        .into_iter()
        .map(|addr| (addr, dutroute::route_of(&target.dut.runner, addr, want)))
        .collect();
    Ok(LabCheck {
        lab: target.describe(),
        ports,
        dut_runner: target.dut.runner.describe(),
        dut_uname: target.dut_uname(),
        routes,
        clocks: target.clocks().map(|c| c.latency),
    })
}
