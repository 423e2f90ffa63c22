//! Running a campaign: apply a configuration, run a trial, record it,
//! revert when the next run needs another configuration; skip what a
//! previous, interrupted invocation already finished.

use serde_json::{json, Value};

use pktlab_engine::StopSignal;
use pktlab_lab::dut::DutConfig;

use super::order::RunKey;
use super::results::{self, ResultsDir};
use super::summary::{self, CampaignSummary};
use super::Campaign;
use crate::target::Target;
use crate::trial::{run_trial, TrialEvent, TrialResult};
use crate::BenchError;

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
    /// Ctrl-C stopped it; the run in progress was discarded.
    pub interrupted: bool,
    pub summary: CampaignSummary,
}

/// `env.json`: the host, the lab's NIC drivers, the DUT (when remote),
/// pktlab's version and every configuration's exact text.
pub fn env_json(campaign: &Campaign, target: &Target) -> Value {
    json!({
        "pktlab_version": env!("CARGO_PKG_VERSION"),
        "created_at": results::unix_now(),
        "host": pktlab_lab::envinfo::host_facts(),
        "lab": target.describe(),
        "virtual_lab": target.is_virtual(),
        "nics": target.nic_facts(),
        "interrupts": target.interrupts_note(),
        "dut_uname": target.dut_uname(),
        "configs": campaign.configs.iter().map(|c| json!({"name": c.name, "text": c.text(), "config": c})).collect::<Vec<_>>(),
    })
}

/// Rewrites the `.pps` files, `summary.json`, `ministat.txt` and
/// `sweep.txt` from the finished runs in `dir`.
pub fn write_aggregates(
    campaign: &Campaign,
    dir: &ResultsDir,
) -> Result<CampaignSummary, BenchError> {
    let runs = dir.runs()?;
    let s = CampaignSummary::new(campaign, &runs);
    for cell in s.cells.iter().filter(|c| !c.values.is_empty()) {
        let path = dir.pps_file(&cell.config, &cell.traffic);
        crate::atomic::write_atomic(&path, summary::pps_text(&cell.values).as_bytes())?;
    }
    let json = serde_json::to_string_pretty(&s).expect("serialisable") + "\n";
    dir.write(results::SUMMARY_FILE, json.as_bytes())?;
    dir.write(
        results::MINISTAT_FILE,
        summary::ministat_text(campaign, &s.cells).as_bytes(),
    )?;
    if !campaign.sweeps.is_empty() {
        dir.write(
            results::SWEEP_FILE,
            summary::sweep_text(&s.sweeps).as_bytes(),
        )?;
    }
    Ok(s)
}

/// Runs every planned run of `campaign` that `dir` does not hold yet, in
/// plan order. Ctrl-C (`stop`) ends it after reverting; an error reverts
/// the applied configuration too.
pub fn run_campaign(
    campaign: &Campaign,
    target: &Target,
    dir: &ResultsDir,
    stop: &StopSignal,
    mut on_event: impl FnMut(CampaignEvent<'_>),
) -> Result<CampaignOutcome, BenchError> {
    let plan = campaign.plan();
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

    let result = (|| -> Result<(), BenchError> {
        for (i, key) in todo.iter().enumerate() {
            if stop.is_set() {
                break;
            }
            let config = &campaign.configs[key.config];
            let traffic = &campaign.traffics[key.traffic];
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
            let trial = run_trial(target, traffic, &campaign.run.trial, stop, |e| {
                on_event(CampaignEvent::Trial(e))
            });
            if stop.is_set() {
                break; // Cut short: its figures are partial, so it is not kept.
            }
            let trial = trial?;
            let mut lines = vec![json!({
                "type": "run",
                "campaign": campaign.name,
                "config": config.name,
                "traffic": traffic.name,
                "iteration": key.iteration,
                "started_at": started_at,
                "pktlab_version": env!("CARGO_PKG_VERSION"),
                "kernel": host.kernel,
                "cpu_model": host.cpu_model,
                "cpus": host.cpus,
                "lab": target.describe(),
                "virtual_lab": target.is_virtual(),
                "traffic_profile": traffic,
                "settings": campaign.run.trial,
                "config_text": config.text(),
                "interrupts": target.interrupts_note(),
            })];
            for s in &trial.seconds {
                let mut v = serde_json::to_value(s).expect("serialisable");
                v["type"] = json!("second");
                lines.push(v);
            }
            let mut end = serde_json::to_value(&trial).expect("serialisable");
            end["type"] = json!("result");
            end["requested_pps"] = json!(traffic.rate_pps);
            end["finished_at"] = json!(results::unix_now());
            lines.push(end);
            dir.write_run(&config.name, &traffic.name, key.iteration, &lines)?;
            ran += 1;
            write_aggregates(campaign, dir)?;
            on_event(CampaignEvent::RunDone {
                index: i + 1,
                of: todo.len(),
                key: *key,
                config: &config.name,
                traffic: &traffic.name,
                result: &trial,
            });
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
    let summary = write_aggregates(campaign, dir);
    match (result, reverted) {
        (Err(e), Ok(())) => return Err(e),
        (Err(e), Err(r)) => {
            return Err(BenchError::Trial(format!("{e} (and then {r})")));
        }
        (Ok(()), Err(r)) => return Err(r.into()),
        (Ok(()), Ok(())) => {}
    }
    Ok(CampaignOutcome {
        planned: plan.len(),
        already,
        ran,
        interrupted: stop.is_set(),
        summary: summary?,
    })
}
