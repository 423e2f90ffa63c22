//! The lab a campaign's plan asks for, as trials run on it
//! ([`pktlab_trial::target::Target`]).

use std::time::Duration;

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
