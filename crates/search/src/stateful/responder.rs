//! Where the Responder's answers go under source NAT.

use std::net::IpAddr;

use pktlab_lab::IfRole;
use pktlab_trial::target::{LabKind, Target};

/// The address a built-in configuration's source NAT gives the
/// Initiator's connections: the DUT's outside port's (`nat44` on the
/// built-in lab); None for every other configuration and lab, where
/// `--nat-address` says it.
pub fn builtin_translation(lab: &Target, config: &str, builtin: bool) -> Option<IpAddr> {
    let is_builtin_lab = matches!(lab.kind, LabKind::Builtin(_));
    (is_builtin_lab && builtin && config == "nat44").then(|| IpAddr::V4(IfRole::DutOut.ipv4()))
}
