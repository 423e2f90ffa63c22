//! What the DUT configurations of Linux's fast paths and knobs do on the
//! DUT (`crates/lab/src/dut.rs` writes their command lines; the hidden
//! `pktlab knob` subcommand runs these functions there):
//!
//! - [`host`]: host-wide sysctls, saved before a change and always
//!   restored, even after a campaign killed with SIGKILL;
//! - [`napi`]: threaded NAPI on the DUT's ports, pinned to its CPUs;
//! - [`state`]: the attached programs and host sysctls, for the DUT's
//!   state probe.
//!
//! The fast paths themselves (`xdp-forward`, `tc-forward`) are in
//! `pktlab_io::fastpath`.

pub mod host;
pub mod napi;
pub mod state;

pub use host::{restore_saved_host_sysctls, HOST_KNOBS};

use std::time::Duration;

use pktlab_io::xdpdrops::{NamedXdpDrop, XdpDropTracer};

use crate::LabError;

/// The frames XDP drops on this host during `how_long`, in all and by
/// place (`pktlab knob xdp-drops`).
pub fn xdp_drops_during(how_long: Duration) -> Result<(u64, Vec<NamedXdpDrop>), LabError> {
    let failed = |e: pktlab_io::IoError| LabError::Knob {
        knob: "xdp-drops".into(),
        why: e.to_string(),
    };
    let tracer = XdpDropTracer::start().map_err(failed)?;
    let before = tracer.read().map_err(failed)?;
    std::thread::sleep(how_long);
    let grew = tracer.read().map_err(failed)?.since(&before);
    Ok((grew.total(), pktlab_io::xdpdrops::name(&grew)))
}

/// A built-in configuration name of the form `KNOB-VALUE` that sets a host
/// sysctl (`netdev_max_backlog-2000`): its full key and value. None for a
/// name that is not of that form; Err for a known knob with a value that
/// is not a non-negative integer.
pub fn parse_host_config(name: &str) -> Option<Result<(&'static str, u64), String>> {
    let (short, value) = name.rsplit_once('-')?;
    let key = host::host_knob(short)?;
    Some(value.parse::<u64>().map(|v| (key, v)).map_err(|_| {
        format!("the value of {short} must be a non-negative integer, as in {short}-1000")
    }))
}

/// Restores the host sysctls of killed campaigns, saying so on stderr in
/// one line each; a failure is a warning (the lab itself is fine). What
/// the built-in lab's `up` and `down` call.
pub fn restore_at_lab_change() {
    match restore_saved_host_sysctls() {
        Ok(restored) => {
            for r in restored {
                eprintln!(
                    "pktlab: restored host sysctl {} to {} (a DUT configuration set it to {} and was not reverted)",
                    r.key, r.value, r.was
                );
            }
        }
        Err(e) => eprintln!("pktlab: warning: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_configuration_names() {
        assert_eq!(
            parse_host_config("netdev_max_backlog-2000"),
            Some(Ok(("net.core.netdev_max_backlog", 2000)))
        );
        assert_eq!(
            parse_host_config("netdev_budget_usecs-4000"),
            Some(Ok(("net.core.netdev_budget_usecs", 4000)))
        );
        assert_eq!(
            parse_host_config("nf_conntrack_max-65536"),
            Some(Ok(("net.netfilter.nf_conntrack_max", 65536)))
        );
        assert_eq!(parse_host_config("forwarding"), None);
        assert_eq!(parse_host_config("gro-off"), None);
        assert_eq!(
            parse_host_config("dev_weight-x"),
            Some(Err(
                "the value of dev_weight must be a non-negative integer, as in dev_weight-1000"
                    .into()
            ))
        );
    }
}
