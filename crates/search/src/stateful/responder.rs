//! The lab seen from the Responder: the generator on the receiver's port,
//! sending through the DUT's outside port, and the receiver on the
//! generator's port.

use std::net::IpAddr;

use pktlab_lab::IfRole;
use pktlab_trial::target::{LabKind, Target};

use crate::SearchError;

/// `lab` reversed: its receiver's port sends, to the DUT's outside port's
/// MAC, and its generator's port receives. Only the built-in lab knows
/// the DUT's outside MAC.
pub fn responder_lab(lab: &Target) -> Result<Target, SearchError> {
    let LabKind::Builtin(builtin) = &lab.kind else {
        return Err(SearchError(
            "the stateful tests need the built-in lab: the Responder must address the DUT's \
             outside port, whose MAC only the built-in lab knows"
                .into(),
        ));
    };
    let mut reversed = lab.clone();
    reversed.gen = lab.rcv.clone();
    reversed.rcv = lab.gen.clone();
    reversed.src_mac = builtin.rcv_mac();
    reversed.dst_mac = builtin.dut_out_mac();
    reversed.gen_remote = lab.rcv_remote.clone();
    reversed.rcv_remote = lab.gen_remote.clone();
    reversed.generators = None;
    Ok(reversed)
}

/// The address a built-in configuration's source NAT gives the
/// Initiator's connections: the DUT's outside port's (`nat44` on the
/// built-in lab); None for every other configuration.
pub fn builtin_translation(lab: &Target, config: &str, builtin: bool) -> Option<IpAddr> {
    let is_builtin_lab = matches!(lab.kind, LabKind::Builtin(_));
    (is_builtin_lab && builtin && config == "nat44").then(|| IpAddr::V4(IfRole::DutOut.ipv4()))
}
