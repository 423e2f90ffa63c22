//! Running a campaign: apply a configuration, run a trial, record it,
//! revert when the next run needs another configuration; skip what a
//! previous, interrupted invocation already finished.

use pktlab_engine::StopSignal;
use pktlab_lab::dut::DutConfig;
use pktlab_loss::tracer::Tracer;

use crate::export::{Exporter, Finished};
use crate::method::{Method, TrialDone};
use crate::order::RunKey;
use crate::plan::{Campaign, OnError};
use crate::records::{EnvConfig, EnvRecord, RunHeader, RunRecord, RunResult};
use crate::results::{self, ResultsDir};
use crate::summary::{self, CampaignSummary};
use crate::CampaignError;
use pktlab_trial::target::Target;
use pktlab_trial::trial::{TrialEvent, TrialResult, Trials};

/// Progress of a campaign, for the display.
#[derive(Debug)]
pub enum CampaignEvent<'a> {
    /// Runs found finished in the folder, which will not run again.
    Resuming {
        finished: usize,
        planned: usize,
    },
    Applying {
        config: &'a str,
    },
    Reverting {
        config: &'a str,
    },
    RunStarting {
        /// Position among the runs this invocation does (from 1).
        index: usize,
        of: usize,
        key: RunKey,
        config: &'a str,
        traffic: &'a str,
    },
    Trial(TrialEvent),
    /// A run failed and the campaign goes on (`on_error = "skip"`).
    RunFailed {
        index: usize,
        of: usize,
        key: RunKey,
        config: &'a str,
        traffic: &'a str,
        error: String,
    },
    RunDone {
        index: usize,
        of: usize,
        key: RunKey,
        config: &'a str,
        traffic: &'a str,
        result: &'a TrialResult,
    },
}

/// How a campaign ended (errors aside).
#[derive(Debug)]
pub struct CampaignOutcome {
    pub planned: usize,
    /// Runs finished before this invocation.
    pub already: usize,
    /// Runs this invocation finished.
    pub ran: usize,
    /// Runs that failed and were skipped (`on_error = "skip"`).
    pub failed: usize,
    /// Ctrl-C stopped it; the run in progress was discarded.
    pub interrupted: bool,
    pub summary: CampaignSummary,
}

/// `env.json`: the host, the lab's NIC drivers, the DUT (when remote),
/// pktlab's version and every configuration's exact text.
pub fn env_record(campaign: &Campaign, target: &Target) -> EnvRecord {
    EnvRecord {
        clocks: target.clocks(),
        cpu_plan: target.cpus.clone(),
        pktlab_version: env!("CARGO_PKG_VERSION").into(),
        created_at: results::unix_now(),
        host: pktlab_lab::envinfo::host_facts(),
        lab: target.describe(),
        virtual_lab: target.is_virtual(),
        nics: target.nic_facts(),
        interrupts: target.interrupts_note(),
        dut_uname: target.dut_uname(),
        configs: campaign
            .configs
            .iter()
            .map(|c| EnvConfig {
                name: c.name.clone(),
                text: c.text(),
                config: c.clone(),
            })
            .collect(),
    }
}

/// A run that failed (a host lost in the middle, say) names itself, so
/// that the line says which run `--resume` will do again.
fn failed_run(
    e: CampaignError,
    index: usize,
    of: usize,
    config: &DutConfig,
    traffic: &pktlab_trial::traffic::Traffic,
    key: &RunKey,
) -> CampaignError {
    if e.is_usage() {
        return e;
    }
    CampaignError::Failed(format!(
        "run {index} of {of} ({} {} #{}) failed: {e}",
        config.name, traffic.name, key.iteration
    ))
}

/// Rewrites the `.pps` files and every exporter's file from the finished
/// runs in `dir`.
pub fn write_aggregates(
    campaign: &Campaign,
    dir: &ResultsDir,
    exporters: &[&dyn Exporter],
) -> Result<CampaignSummary, CampaignError> {
    let runs = dir.runs()?;
    let s = CampaignSummary::new(campaign, &runs);
    for cell in s.cells.iter().filter(|c| !c.values.is_empty()) {
        let path = dir.pps_file(&cell.config, &cell.traffic);
        crate::atomic::write_atomic(&path, summary::pps_text(&cell.values).as_bytes())?;
    }
    let finished = Finished {
        campaign,
        dir: &dir.path,
        runs: &runs,
        summary: &s,
    };
    for e in exporters {
        if let Some(text) = e.render(&finished) {
            dir.write(e.file_name(), text.as_bytes())?;
        }
    }
    Ok(s)
}

/// Runs every planned run of `campaign` that `dir` does not hold yet, in
/// plan order. Ctrl-C (`stop`) ends it after reverting; an error reverts
/// the applied configuration too.
#[allow(clippy::too_many_arguments)] // Until the campaign owns its lab and tracer.
pub fn run_campaign(
    campaign: &Campaign,
    target: &Target,
    dir: &ResultsDir,
    method: &dyn Method,
    exporters: &[&dyn Exporter],
    stop: &StopSignal,
    tracer: &Tracer,
    mut on_event: impl FnMut(CampaignEvent<'_>),
) -> Result<CampaignOutcome, CampaignError> {
    let plan = campaign.plan();
    let trials = Trials::for_target(target, campaign.run.io, &campaign.run.trial, stop, tracer);
    let done = dir.runs()?;
    let is_done = |k: &RunKey| {
        let (c, t) = (
            &campaign.configs[k.config].name,
            &campaign.traffics[k.traffic].name,
        );
        done.iter()
            .any(|r| &r.config == c && &r.traffic == t && r.iteration == k.iteration)
    };
    let todo: Vec<RunKey> = plan.iter().copied().filter(|k| !is_done(k)).collect();
    let already = plan.len() - todo.len();
    if already > 0 {
        on_event(CampaignEvent::Resuming {
            finished: already,
            planned: plan.len(),
        });
    }
    let baseline = target.dut.state()?;
    let host = pktlab_lab::envinfo::host_facts();
    let mut applied: Option<&DutConfig> = None;
    let mut ran = 0;

    let mut failed = 0;

    let result = (|| -> Result<(), CampaignError> {
        for (i, key) in todo.iter().enumerate() {
            if stop.is_set() {
                break;
            }
            let config = &campaign.configs[key.config];
            let traffic = &campaign.traffics[key.traffic];
            let label = format!("{}.{}.{}", config.name, traffic.name, key.iteration);
            let one = (|| -> Result<bool, CampaignError> {
                // A run on a broken lab would measure the breakage.
                lab_whole(
                    target,
                    &format!("run {label} not started: the lab is broken"),
                )?;
                if applied.map(|a| &a.name) != Some(&config.name) {
                    if let Some(prev) = applied.take() {
                        on_event(CampaignEvent::Reverting { config: &prev.name });
                        target.dut.revert(prev, &baseline)?;
                    }
                    on_event(CampaignEvent::Applying {
                        config: &config.name,
                    });
                    target.dut.apply(config)?;
                    applied = Some(config);
                }
                on_event(CampaignEvent::RunStarting {
                    index: i + 1,
                    of: todo.len(),
                    key: *key,
                    config: &config.name,
                    traffic: &traffic.name,
                });
                let started_at = results::unix_now();
                let header = RunHeader {
                    campaign: campaign.name.clone(),
                    config: config.name.clone(),
                    traffic: traffic.name.clone(),
                    iteration: key.iteration,
                    started_at,
                    pktlab_version: env!("CARGO_PKG_VERSION").into(),
                    kernel: host.kernel.clone(),
                    cpu_model: host.cpu_model.clone(),
                    cpus: host.cpus,
                    lab: target.describe(),
                    virtual_lab: target.is_virtual(),
                    io: campaign.run.io,
                    traffic_profile: traffic.clone(),
                    settings: campaign.run.trial.clone(),
                    config_text: config.text(),
                    interrupts: target.interrupts_note(),
                    cpu_plan: target.cpus.clone(),
                    generator: None,
                };
                let record_of = |trial: TrialResult, seconds: Vec<_>| RunRecord {
                    header: RunHeader {
                        generator: Some(trial.tx.backend.clone()),
                        ..header.clone()
                    },
                    seconds,
                    result: RunResult {
                        requested_pps: trial.intended_pps,
                        trial,
                        finished_at: results::unix_now(),
                    },
                };
                let mut record = |done: TrialDone<'_>| {
                    if method.keeps_trial_files() {
                        let r = done.result.clone();
                        let seconds = r.seconds.clone();
                        dir.write_trial(done.index, &record_of(r, seconds))?;
                    }
                    Ok(())
                };
                method.begin_run(&config.name, &traffic.name, key.iteration);
                let value = method
                    .run(&trials, traffic, &mut record, &mut |e| {
                        on_event(CampaignEvent::Trial(e))
                    })
                    .map_err(|e| failed_run(e, i + 1, todo.len(), config, traffic, key));
                // A lab that broke during the run explains its failure (or
                // its figures) better than the trial's own error: either
                // way the run is not kept.
                if !stop.is_set() {
                    lab_whole(
                        target,
                        &format!("run {label} failed: the lab broke during it"),
                    )?;
                }
                let Some(trial) = value? else {
                    return Ok(false); // Cut short: its figures are partial, so it is not kept.
                };
                let seconds = trial.seconds.clone();
                let record = record_of(trial, seconds);
                dir.write_run(&record)?;
                let trial = &record.result.trial;
                ran += 1;
                write_aggregates(campaign, dir, exporters)?;
                on_event(CampaignEvent::RunDone {
                    index: i + 1,
                    of: todo.len(),
                    key: *key,
                    config: &config.name,
                    traffic: &traffic.name,
                    result: trial,
                });
                Ok(true)
            })();
            match one {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) if stop.is_set() || campaign.run.on_error == OnError::Stop => return Err(e),
                Err(e) => {
                    failed += 1;
                    on_event(CampaignEvent::RunFailed {
                        index: i + 1,
                        of: todo.len(),
                        key: *key,
                        config: &config.name,
                        traffic: &traffic.name,
                        error: e.to_string(),
                    });
                }
            }
        }
        Ok(())
    })();

    // A terminal's Ctrl-C also reaches the DUT commands in flight: a
    // command killed by it is the interruption, not a failure.
    let result = match result {
        Err(_) if stop.is_set() => Ok(()),
        r => r,
    };
    // Whatever happened, leave the DUT as it was found.
    let reverted = match applied {
        Some(c) => {
            on_event(CampaignEvent::Reverting { config: &c.name });
            target.dut.revert(c, &baseline)
        }
        None => Ok(()),
    };
    let summary = write_aggregates(campaign, dir, exporters);
    match (result, reverted) {
        (Err(e), Ok(())) => return Err(e),
        // On a broken lab the revert fails for the same reason: the
        // fault is what to read.
        (Err(e @ CampaignError::LabFault(_)), Err(_)) => {
            return Err(CampaignError::LabFault(format!(
                "{e} (and the DUT's configuration could not be reverted)"
            )));
        }
        (Err(e), Err(r)) => {
            return Err(CampaignError::Failed(format!("{e} (and then {r})")));
        }
        (Ok(()), Err(r)) => return Err(r.into()),
        (Ok(()), Ok(())) => {}
    }
    Ok(CampaignOutcome {
        planned: plan.len(),
        already,
        ran,
        failed,
        interrupted: stop.is_set(),
        summary: summary?,
    })
}

/// Fails with `what` and the lab's faults when it has any.
fn lab_whole(target: &Target, what: &str) -> Result<(), CampaignError> {
    let faults = target.faults().unwrap_or_else(|e| vec![e.to_string()]);
    if faults.is_empty() {
        return Ok(());
    }
    // The first few: a sysctl turned off carries its per-interface copies.
    const SHOWN: usize = 3;
    let mut text = faults[..faults.len().min(SHOWN)].join("; ");
    if faults.len() > SHOWN {
        text += &format!(" (and {} more)", faults.len() - SHOWN);
    }
    Err(CampaignError::LabFault(format!("{what}: {text}")))
}
