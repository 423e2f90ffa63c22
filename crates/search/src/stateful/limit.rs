//! `--conntrack-max`: the DUT's connection table limit for a run. On
//! Linux `nf_conntrack_max` is host-wide, so the run sets it with the
//! host knobs' lines (`pktlab_lab::dut::host_sysctl_lines`), which save
//! the old value first and put it back when the run ends, and after a
//! campaign killed with SIGKILL at the next `lab up`, `lab down` or
//! campaign (`pktlab_lab::knobs::host`).

use pktlab_campaign::CampaignError;
use pktlab_lab::dut::{host_sysctl_lines, Dut};

/// The host sysctl `--conntrack-max` sets.
pub const KEY: &str = "net.netfilter.nf_conntrack_max";

/// The one line said before the campaign changes it.
pub fn notice(limit: u64) -> String {
    pktlab_lab::knobs::host::host_notice(KEY, &limit.to_string())
}

/// The limit set for a run; restored by [`HostLimit::restore`], or when
/// dropped (an error or Ctrl-C cut the run short).
pub struct HostLimit<'a> {
    dut: &'a Dut,
    restore: Option<String>,
}

impl<'a> HostLimit<'a> {
    /// Sets the limit where the DUT's lines run; `None` changes nothing.
    pub fn set(dut: &'a Dut, limit: Option<u64>) -> Result<HostLimit<'a>, CampaignError> {
        let Some(limit) = limit else {
            return Ok(HostLimit { dut, restore: None });
        };
        let (set, restore) = host_sysctl_lines(KEY, limit);
        dut.runner.run(&set).map_err(failed)?;
        Ok(HostLimit {
            dut,
            restore: Some(restore),
        })
    }

    /// Puts the old value back.
    pub fn restore(mut self) -> Result<(), CampaignError> {
        match self.restore.take() {
            Some(line) => self.dut.runner.run(&line).map(drop).map_err(failed),
            None => Ok(()),
        }
    }
}

impl Drop for HostLimit<'_> {
    fn drop(&mut self) {
        // The run already failed or stopped: a failure here leaves the
        // saved value for the next `lab down` or campaign to restore.
        if let Some(line) = self.restore.take() {
            let _ = self.dut.runner.run(&line);
        }
    }
}

fn failed(e: pktlab_lab::dut::DutError) -> CampaignError {
    CampaignError::Trial(Box::new(pktlab_trial::TrialError::Failed(format!(
        "--conntrack-max: {e}"
    ))))
}
