//! One campaign on one lab, from its opening to its end: [`Campaign`].
//!
//! Opening claims the results folder, takes the lab's lock, brings the lab
//! up, records the campaign and its environment and starts the drop
//! tracer; a campaign that cannot start leaves no empty folder behind.
//! Running applies each configuration, has the method run each planned run
//! the folder does not hold yet, reverts, and hands the method's results to
//! the sinks after each run and at the end. Events tell the caller what
//! happens ([`OpenEvent`], [`Event`]).

use std::path::PathBuf;

use pktlab_engine::StopSignal;
use pktlab_lab::dut::DutConfig;
use pktlab_lab::envinfo::HostFacts;
use pktlab_lab::UpOutcome;
use pktlab_loss::drops::DropTrace;
use pktlab_loss::tracer::Tracer;
use pktlab_remote::endpoint::BenchIo;
use pktlab_trial::target::{LabKind, Target};
use pktlab_trial::trial::{TrialEvent, Trials};

use crate::folder::{unix_now, ResultsDir, CAMPAIGN_FILE};
use crate::lab::lab_target;
use crate::lock::{lock_keys, LabLock};
use crate::method::{Method, RunContext, RunId};
use crate::order::RunKey;
use crate::plan::{OnError, Plan};
use crate::records::{EnvConfig, EnvRecord, RunHeader};
use crate::sink::{Finished, Sink, Stage};
use crate::CampaignError;

/// Where a campaign's results go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Folder {
    /// A new folder: this one, or `results/<name>-<timestamp>`.
    New(Option<PathBuf>),
    /// The folder of a campaign to carry on.
    Resume(PathBuf),
}

/// Everything a campaign is opened from.
#[derive(Clone, Debug)]
pub struct Spec {
    pub plan: Plan,
    pub folder: Folder,
    /// `campaign.toml`'s text, for a new folder (a resumed one has it).
    pub saved_text: Option<String>,
    /// The drop tracer's mode when not the plan's own (`--drop-trace`).
    pub drop_trace: Option<DropTrace>,
}

/// What happens while a campaign opens.
#[derive(Debug)]
pub enum OpenEvent<'a> {
    /// A lock left by a campaign that ended without releasing it.
    LockTakenOver {
        what: &'a str,
        pid: u32,
        dir: &'a str,
    },
    /// The built-in lab was built or repaired (it outlives the campaign).
    LabUp { prefix: &'a str, outcome: UpOutcome },
    /// The drop tracer could not start: counters only.
    DropTraceOff { why: &'a str },
}

/// Progress of a campaign's runs. `R` is what a finished run gives
/// ([`Method::Run`]).
#[derive(Debug)]
pub enum Event<'a, R> {
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
    RunStarting(RunLabel<'a>),
    Trial(TrialEvent),
    /// A run failed and the campaign goes on (`on_error = "skip"`).
    RunFailed {
        run: RunLabel<'a>,
        error: String,
    },
    RunDone {
        run: RunLabel<'a>,
        result: &'a R,
    },
}

/// Which run, among the runs this invocation does.
#[derive(Clone, Copy, Debug)]
pub struct RunLabel<'a> {
    /// From 1.
    pub index: usize,
    pub of: usize,
    pub key: RunKey,
    pub config: &'a str,
    pub traffic: &'a str,
}

/// How a campaign ended (errors aside).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub planned: usize,
    /// Runs finished before this invocation.
    pub already: usize,
    /// Runs this invocation finished.
    pub ran: usize,
    /// Runs that failed and were skipped (`on_error = "skip"`).
    pub failed: usize,
    /// Ctrl-C stopped it; the run in progress was discarded.
    pub interrupted: bool,
}

/// An open campaign: its folder claimed, its lab locked and up.
pub struct Campaign {
    plan: Plan,
    folder: ResultsDir,
    target: Target,
    env: EnvRecord,
    /// `env.json`'s text, as read when the campaign opened.
    env_text: String,
    tracer: Tracer,
    _lock: LabLock,
}

impl Campaign {
    /// Opens the campaign of `spec` for `method`.
    pub fn open<M: Method>(
        spec: Spec,
        method: &mut M,
        mut on_event: impl FnMut(OpenEvent<'_>),
    ) -> Result<Campaign, CampaignError> {
        let (folder, created) = claim_folder(&spec)?;
        let opened = prepare(spec, &folder, created, method, &mut on_event);
        if opened.is_err() && created {
            // Nothing was measured: leave no empty folder behind.
            folder.remove_if_empty();
        }
        opened
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn folder(&self) -> &ResultsDir {
        &self.folder
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn env(&self) -> &EnvRecord {
        &self.env
    }

    /// Runs every planned run that `method` has not finished yet, in plan
    /// order, handing its results to `sinks` after each run and at the
    /// end. Ctrl-C (`stop`) ends it after reverting; an error reverts the
    /// applied configuration too.
    pub fn run<M: Method>(
        &self,
        method: &mut M,
        sinks: &[&dyn Sink<M::Results>],
        stop: &StopSignal,
        mut on_event: impl FnMut(Event<'_, M::Run>),
    ) -> Result<Outcome, CampaignError> {
        let planned = self.plan.plan();
        let todo: Vec<RunKey> = planned
            .iter()
            .copied()
            .filter(|k| !method.is_finished(&self.run_id(*k)))
            .collect();
        let already = planned.len() - todo.len();
        if already > 0 {
            on_event(Event::Resuming {
                finished: already,
                planned: planned.len(),
            });
        }
        let mut state = RunState {
            baseline: self.target.dut.state()?,
            applied: None,
            ran: 0,
            failed: 0,
        };
        let result = self.run_all(&todo, method, sinks, stop, &mut state, &mut on_event);
        // A terminal's Ctrl-C also reaches the DUT commands in flight: a
        // command killed by it is the interruption, not a failure.
        let result = match result {
            Err(_) if stop.is_set() => Ok(()),
            r => r,
        };
        // Whatever happened, leave the DUT as it was found.
        let reverted = match state.applied {
            Some(c) => {
                on_event(Event::Reverting { config: &c.name });
                self.target.dut.revert(c, &state.baseline)
            }
            None => Ok(()),
        };
        let handed = self.hand(method, sinks, Stage::End);
        ended(result, reverted)?;
        handed?;
        Ok(Outcome {
            planned: planned.len(),
            already,
            ran: state.ran,
            failed: state.failed,
            interrupted: stop.is_set(),
        })
    }

    fn run_id(&self, key: RunKey) -> RunId<'_> {
        RunId {
            key,
            config: &self.plan.configs[key.config],
            traffic: &self.plan.traffics[key.traffic],
        }
    }

    /// The runs of `todo` one by one, until the end, Ctrl-C or an error
    /// that stops the campaign.
    fn run_all<'s, M: Method>(
        &'s self,
        todo: &[RunKey],
        method: &mut M,
        sinks: &[&dyn Sink<M::Results>],
        stop: &StopSignal,
        state: &mut RunState<'s>,
        on_event: &mut impl FnMut(Event<'_, M::Run>),
    ) -> Result<(), CampaignError> {
        let trials = Trials::for_target(
            &self.target,
            self.plan.run.io,
            &self.plan.run.trial,
            stop,
            &self.tracer,
        );
        let host = pktlab_lab::envinfo::host_facts();
        for (i, key) in todo.iter().enumerate() {
            if stop.is_set() {
                break;
            }
            let run = self.run_id(*key);
            let label = RunLabel {
                index: i + 1,
                of: todo.len(),
                key: *key,
                config: &run.config.name,
                traffic: &run.traffic.name,
            };
            let one = self.one_run(&run, label, method, trials, &host, state, on_event);
            match one {
                Ok(true) => self.hand(method, sinks, Stage::AfterRun)?,
                Ok(false) => break,
                Err(e) if stop.is_set() || self.plan.run.on_error == OnError::Stop => {
                    return Err(e)
                }
                Err(e) => {
                    state.failed += 1;
                    on_event(Event::RunFailed {
                        run: label,
                        error: e.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// One run: the lab checked, its configuration applied, the method's
    /// run, the lab checked again. False when Ctrl-C cut it short.
    #[allow(clippy::too_many_arguments)] // The run's parts, each its own.
    fn one_run<'s, M: Method>(
        &'s self,
        run: &RunId<'s>,
        label: RunLabel<'_>,
        method: &mut M,
        trials: Trials<'_>,
        host: &HostFacts,
        state: &mut RunState<'s>,
        on_event: &mut impl FnMut(Event<'_, M::Run>),
    ) -> Result<bool, CampaignError> {
        let name = run.label();
        // A run on a broken lab would measure the breakage.
        lab_whole(
            &self.target,
            &format!("run {name} not started: the lab is broken"),
        )?;
        self.switch_config(run.config, state, on_event)?;
        on_event(Event::RunStarting(label));
        let broke = || {
            lab_whole(
                &self.target,
                &format!("run {name} failed: the lab broke during it"),
            )
        };
        let cx = RunContext {
            plan: &self.plan,
            folder: &self.folder,
            header: self.header(run, host),
            trials,
            lab_whole: &broke,
        };
        let stop = trials.stop;
        let done = method
            .run(run, cx, &mut |e| on_event(Event::Trial(e)))
            .map_err(|e| failed_run(e, &label, run));
        // A lab that broke during the run explains its failure (or its
        // figures) better than the run's own error.
        if !stop.is_set() {
            broke()?;
        }
        let Some(result) = done? else {
            return Ok(false); // Cut short: its figures are partial, so it is not kept.
        };
        state.ran += 1;
        on_event(Event::RunDone { run: label, result });
        Ok(true)
    }

    /// Reverts the configuration applied, if another, and applies `config`.
    fn switch_config<'s, R>(
        &'s self,
        config: &'s DutConfig,
        state: &mut RunState<'s>,
        on_event: &mut impl FnMut(Event<'_, R>),
    ) -> Result<(), CampaignError> {
        if state.applied.map(|a| &a.name) == Some(&config.name) {
            return Ok(());
        }
        if let Some(prev) = state.applied.take() {
            on_event(Event::Reverting { config: &prev.name });
            self.target.dut.revert(prev, &state.baseline)?;
        }
        on_event(Event::Applying {
            config: &config.name,
        });
        self.target.dut.apply(config)?;
        state.applied = Some(config);
        Ok(())
    }

    /// A run's header as its file records it.
    fn header(&self, run: &RunId<'_>, host: &HostFacts) -> RunHeader {
        RunHeader {
            campaign: self.plan.name.clone(),
            config: run.config.name.clone(),
            traffic: run.traffic.name.clone(),
            iteration: run.key.iteration,
            started_at: unix_now(),
            pktlab_version: env!("CARGO_PKG_VERSION").into(),
            kernel: host.kernel.clone(),
            cpu_model: host.cpu_model.clone(),
            cpus: host.cpus,
            lab: self.target.describe(),
            virtual_lab: self.target.is_virtual(),
            io: self.plan.run.io,
            traffic_profile: run.traffic.clone(),
            settings: self.plan.run.trial.clone(),
            config_text: run.config.text(),
            interrupts: self.target.interrupts_note(),
            cpu_plan: self.target.cpus.clone(),
            generator: None,
        }
    }

    /// Hands the method's results to every sink.
    fn hand<M: Method>(
        &self,
        method: &M,
        sinks: &[&dyn Sink<M::Results>],
        stage: Stage,
    ) -> Result<(), CampaignError> {
        let finished = Finished {
            plan: &self.plan,
            env: &self.env,
            env_text: &self.env_text,
            folder: &self.folder,
            results: method.results(),
            stage,
        };
        for s in sinks {
            s.take(&finished)?;
        }
        Ok(())
    }
}

/// What the runs so far changed.
struct RunState<'a> {
    /// The DUT's state before the first configuration was applied.
    baseline: String,
    /// The configuration applied on the DUT.
    applied: Option<&'a DutConfig>,
    ran: usize,
    failed: usize,
}

/// The folder of `spec`, and whether it was made now.
fn claim_folder(spec: &Spec) -> Result<(ResultsDir, bool), CampaignError> {
    match &spec.folder {
        Folder::Resume(d) => Ok((ResultsDir::open(d)?, false)),
        Folder::New(Some(d)) => {
            if std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some()) {
                return Err(CampaignError::Usage(format!(
                    "results folder {} already exists and is not empty (use --resume {0} to carry it on)",
                    d.display()
                )));
            }
            Ok((ResultsDir::create(d)?, true))
        }
        Folder::New(None) => {
            let d = ResultsDir::claim_default(&spec.plan.name, unix_now())?;
            Ok((ResultsDir::create(&d)?, true))
        }
    }
}

/// The lock, the lab, the campaign's files, the tracer and the method's
/// files: everything before the first run.
fn prepare<M: Method>(
    spec: Spec,
    folder: &ResultsDir,
    created: bool,
    method: &mut M,
    on_event: &mut impl FnMut(OpenEvent<'_>),
) -> Result<Campaign, CampaignError> {
    let Spec {
        mut plan,
        saved_text,
        drop_trace,
        ..
    } = spec;
    // Said before the lock, whose folder a user without root may not
    // write either.
    if plan.is_builtin() && !pktlab_lab::runner::is_root() {
        return Err(CampaignError::Failed(
            "the built-in lab needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
                .into(),
        ));
    }
    // Before the lab is touched: setting it up resets the DUT, which would
    // disturb a campaign already running on it.
    let lock = LabLock::acquire(&lock_keys(&plan.lab), &folder.path)?;
    for (what, old) in &lock.taken_over {
        on_event(OpenEvent::LockTakenOver {
            what,
            pid: old.pid,
            dir: &old.dir,
        });
    }
    let (mut target, up) = lab_target(&plan)?;
    if let Some(outcome) = up {
        let prefix = plan
            .lab
            .builtin_spec()
            .map(|s| s.prefix)
            .unwrap_or_default();
        on_event(OpenEvent::LabUp {
            prefix: &prefix,
            outcome,
        });
    }
    let has_env = folder.has_env();
    if has_env {
        plan.adopt_sweep_reverts(&recorded_configs(&folder.env()?));
    } else {
        plan.read_sweep_reverts(|line| target.dut.runner.run(line))?;
    }
    let probes = plan.sweep_probes();
    if !probes.is_empty() {
        // The swept knob is part of the DUT's state, whose return every
        // revert proves.
        let lines = target.dut.state_probe.iter().cloned().chain(probes);
        target.dut.state_probe = Some(lines.collect::<Vec<_>>().join("; "));
    }
    if plan.run.on_error == OnError::Stop {
        try_configs(&plan, &target)?;
    }
    if let Some(text) = saved_text {
        folder.write(CAMPAIGN_FILE, text.as_bytes())?;
    }
    if !has_env {
        folder.write_env(&env_record(&plan, &target))?;
    }
    let (env, env_text) = folder.env_and_text()?;
    let (tracer, off) = Tracer::start_for_trials(drop_trace.unwrap_or(plan.run.drop_trace))?;
    if let Some(why) = off {
        on_event(OpenEvent::DropTraceOff { why: &why });
    }
    method.open(&plan, folder, created)?;
    Ok(Campaign {
        plan,
        folder: folder.clone(),
        target,
        env,
        env_text,
        tracer,
        _lock: lock,
    })
}

/// Applies and reverts every configuration once before the first run,
/// so that one the DUT refuses (a qdisc or a BPF helper its kernel lacks)
/// stops the campaign before it has spent any time, rather than at its
/// first run, maybe an hour in. A configuration that reboots the DUT is
/// left to its run. With `on_error = "skip"` the campaign skips such runs
/// instead, so it is not called.
fn try_configs(plan: &Plan, target: &Target) -> Result<(), CampaignError> {
    let baseline = target.dut.state()?;
    for config in plan.configs.iter().filter(|c| c.reboot.is_none()) {
        target
            .dut
            .apply(config)
            .and_then(|()| target.dut.revert(config, &baseline))
            .map_err(|e| {
                CampaignError::Failed(format!(
                    "{e} (tried before the first run: nothing was measured; leave it out of the campaign)"
                ))
            })?;
    }
    Ok(())
}

/// The configurations `env.json` recorded.
fn recorded_configs(env: &EnvRecord) -> Vec<DutConfig> {
    env.configs.iter().map(|c| c.config.clone()).collect()
}

/// What every trial of traffic both ways with the XDP backends changes on
/// the built-in lab (`pktlab_lab::BuiltinLab::reverse_xdp`).
pub fn reverse_path_note(plan: &Plan, target: &Target) -> Option<String> {
    let both_ways = plan.traffics.iter().any(|t| t.reverse.is_some());
    if !both_ways || !matches!(target.kind, LabKind::Builtin(_)) {
        return None;
    }
    let napi = "in isolated mode, puts g0's NAPI in threads on the tester's CPUs (for the \
                receiver's XDP program on g0)";
    match plan.run.io {
        BenchIo::Afpacket => None,
        BenchIo::Xdp => Some(format!(
            "traffic both ways with --io xdp: each trial turns GRO on on the DUT's d1 (for the \
             XDP generator on r0) and, {napi}, and puts both back after it"
        )),
        io => Some(format!(
            "traffic both ways with --io {}: each trial, {napi}, and puts it back after it",
            io.name()
        )),
    }
}

/// `env.json`: the host, the lab's NIC drivers, the DUT (when remote),
/// pktlab's version and every configuration's exact text.
pub fn env_record(plan: &Plan, target: &Target) -> EnvRecord {
    EnvRecord {
        clocks: target.clocks(),
        cpu_plan: target.cpus.clone(),
        pktlab_version: env!("CARGO_PKG_VERSION").into(),
        created_at: unix_now(),
        host: pktlab_lab::envinfo::host_facts(),
        lab: target.describe(),
        virtual_lab: target.is_virtual(),
        nics: target.nic_facts(),
        interrupts: target.interrupts_note(),
        dut_uname: target.dut_uname(),
        reverse_path: reverse_path_note(plan, target),
        configs: plan
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
fn failed_run(e: CampaignError, label: &RunLabel<'_>, run: &RunId<'_>) -> CampaignError {
    if e.is_usage() {
        return e;
    }
    CampaignError::Failed(format!(
        "run {} of {} ({} {} #{}) failed: {e}",
        label.index, label.of, run.config.name, run.traffic.name, run.key.iteration
    ))
}

/// The campaign's error, if any, with the revert's.
fn ended(
    result: Result<(), CampaignError>,
    reverted: Result<(), pktlab_lab::dut::DutError>,
) -> Result<(), CampaignError> {
    match (result, reverted) {
        (Err(e), Ok(())) => Err(e),
        // On a broken lab the revert fails for the same reason: the
        // fault is what to read.
        (Err(e @ CampaignError::LabFault(_)), Err(_)) => Err(CampaignError::LabFault(format!(
            "{e} (and the DUT's configuration could not be reverted)"
        ))),
        (Err(e), Err(r)) => Err(CampaignError::Failed(format!("{e} (and then {r})"))),
        (Ok(()), Err(r)) => Err(r.into()),
        (Ok(()), Ok(())) => Ok(()),
    }
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
