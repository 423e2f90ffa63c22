//! `pktlab rfc2544`: throughput by a multiple-loss-ratio search (FD.io
//! CSIT's MLRsearch), on the campaign machinery of `pktlab bench`.

use std::path::Path;

use pktlab_bench::campaign::results::{self, ResultsDir};
use pktlab_bench::campaign::runner::{self, CampaignEvent};
use pktlab_bench::campaign::Campaign;
use pktlab_bench::mlr::summary::{self, Report};
use pktlab_bench::mlr::{
    back_to_back, latency, record, MaxLoad, Mlr, MlrSettings, DEFAULT_B2B_TRIALS,
    DEFAULT_B2B_TRIAL_S, MIN_FRACTION, SETTINGS_FILE,
};
use pktlab_bench::search::goal::{self, Goal};
use pktlab_bench::trial::TrialEvent;
use pktlab_engine::StopSignal;
use pktlab_report::rfc2544 as out;
use pktlab_stats::Confidence;
use pktlab_wire::units::{self, Rate};

use crate::cmd::bench;
use crate::cmd::common::{self, print_json};
use crate::error::{usage, Exit};

/// The result file.
pub const REPORT_FILE: &str = "rfc2544.json";

/// Find the highest load the DUT forwards without loss (NDR) and with at
/// most 0.5 % loss (PDR), by FD.io CSIT's multiple-loss-ratio search.
///
/// One search serves every goal; each trial is a real run on the lab. A
/// result the generator could not exceed is reported as "at least". Takes
/// the lab, configurations, traffic, sizes, -f, -o and --resume of
/// `pktlab bench`; --repeat N interleaves N searches per configuration and
/// compares them with ministat. --tests adds RFC 2544's latency (at
/// fractions of the PDR, every frame in HDR histograms), frame loss rate
/// and back-to-back frames (with RFC 9004's buffer times). Every trial goes
/// to trials.jsonl, the results to rfc2544.json.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
// Its own argument group's name: the `bench::Args` it flattens is named
// `Args` too, and clap's debug assertions refuse two groups of one name.
#[group(id = "rfc2544")]
pub struct Args {
    /// Tests to run, a list of throughput, latency, frame-loss and
    /// back-to-back, or all (latency and back-to-back search the
    /// throughput first)
    #[arg(long = "tests", value_name = "LIST", default_value = "throughput")]
    pub tests: String,
    /// Latency loads in percent of the PDR (0: the search's lowest load)
    /// [default: 0,10,50,90]
    #[arg(long = "latency-loads", value_name = "LIST")]
    pub latency_loads: Option<String>,
    /// Latency trials at each load [default: 3]
    #[arg(long = "latency-trials", value_name = "N")]
    pub latency_trials: Option<usize>,
    /// Back-to-back searches averaged (RFC 2544's trials) [default: 50]
    #[arg(long = "b2b-trials", value_name = "N")]
    pub b2b_trials: Option<usize>,
    /// Length of each back-to-back burst's trial, idle time included
    /// [default: 2s]
    #[arg(long = "b2b-trial", value_name = "TIME")]
    pub b2b_trial: Option<String>,
    /// Traffic before each trial that is not counted [default: 0s]
    #[arg(long = "trial-warmup", value_name = "TIME")]
    pub trial_warmup: Option<String>,
    /// A goal: LOSS[:EXCEED] in percent, repeatable [default: 0 and 0.5]
    #[arg(long = "goal", value_name = "GOAL")]
    pub goals: Vec<String>,
    /// Relative width of the bounds, in percent [default: 0.5]
    #[arg(long = "width", value_name = "PERCENT")]
    pub width: Option<String>,
    /// Length of the first, coarsest trials [default: 1s]
    #[arg(long = "initial-trial", value_name = "TIME")]
    pub initial_trial: Option<String>,
    /// Length of the trials that decide the final bounds [default: 1s]
    #[arg(long = "final-trial", value_name = "TIME")]
    pub final_trial: Option<String>,
    /// Full-length trial time that decides a load [default: 21s]
    #[arg(long = "duration-sum", value_name = "TIME")]
    pub duration_sum: Option<String>,
    /// Coarser targets before the final one [default: 2]
    #[arg(long = "preceding-targets", value_name = "N")]
    pub preceding_targets: Option<u32>,
    /// RFC 2544 as written: 60 s final trials and no exceed ratio
    #[arg(long = "rfc2544-strict")]
    pub strict: bool,
    /// Highest load to try (frames per second) [default: the line rate
    /// of --link-speed, or else what the generator reaches]
    #[arg(long = "max-rate", value_name = "RATE")]
    pub max_rate: Option<String>,
    /// Searches per configuration and traffic, interleaved [default: 1]
    #[arg(long = "repeat", value_name = "N")]
    pub repeat: Option<usize>,
    #[command(flatten)]
    pub bench: bench::Args,
}

fn seconds(flag: &str, text: &Option<String>, default: f64) -> anyhow::Result<f64> {
    match text {
        None => Ok(default),
        Some(t) => {
            let d = units::parse_duration(t).map_err(|_| {
                usage(format!(
                    "invalid {flag} '{t}': use a duration such as 1s, 500ms or 1m"
                ))
            })?;
            if d.as_secs_f64() < 0.001 {
                return Err(usage(format!("invalid {flag} '{t}': use at least 1ms")));
            }
            Ok(d.as_secs_f64())
        }
    }
}

/// The tests `--tests` names (checked by [`check_flags`]), `all` expanded.
fn tests_of(list: &str) -> Vec<&str> {
    let mut tests: Vec<&str> = list.split(',').map(str::trim).collect();
    if tests.contains(&"all") {
        tests = vec!["throughput", "latency", "frame-loss", "back-to-back"];
    }
    tests
}

/// `--latency-loads 0,10,50,90`: fractions of the PDR.
fn latency_loads(text: &str) -> anyhow::Result<Vec<f64>> {
    let bad = || {
        usage(format!(
            "invalid --latency-loads '{text}': use percentages of the PDR from 0 to 100, such as 0,10,50,90"
        ))
    };
    let mut loads = Vec::new();
    for part in text.split(',') {
        let v: f64 = part
            .trim()
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&v) {
            return Err(bad());
        }
        loads.push(v / 100.0);
    }
    Ok(loads)
}

/// The search settings the flags describe.
fn settings_from_flags(args: &Args, link_bps: Option<f64>) -> anyhow::Result<MlrSettings> {
    let tests = tests_of(&args.tests);
    let mut goals: Vec<Goal> = if args.goals.is_empty() {
        goal::DEFAULT_GOALS
            .iter()
            .map(|&(l, e)| Goal::new(l, e))
            .collect()
    } else {
        args.goals
            .iter()
            .map(|g| Goal::parse(g))
            .collect::<Result<_, _>>()?
    };
    let width = match &args.width {
        None => goal::DEFAULT_WIDTH,
        Some(t) => {
            let v: f64 = t
                .trim_end_matches('%')
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v > 0.0 && *v < 100.0)
                .ok_or_else(|| {
                    usage(format!(
                        "invalid width '{t}': use a percentage above 0 and below 100, such as 0.5"
                    ))
                })?;
            v / 100.0
        }
    };
    let strict_final = if args.strict {
        60.0
    } else {
        goal::DEFAULT_FINAL_TRIAL
    };
    let initial = seconds(
        "--initial-trial",
        &args.initial_trial,
        goal::DEFAULT_INITIAL_TRIAL,
    )?;
    let final_trial = seconds("--final-trial", &args.final_trial, strict_final)?;
    let default_sum = if args.strict {
        final_trial
    } else {
        goal::DEFAULT_DURATION_SUM
    };
    let sum = seconds(
        "--duration-sum",
        &args.duration_sum,
        default_sum.max(final_trial),
    )?;
    for g in goals.iter_mut() {
        g.width = width;
        g.initial_trial_duration = initial;
        g.final_trial_duration = final_trial;
        g.duration_sum = sum;
        if let Some(p) = args.preceding_targets {
            g.preceding_targets = p;
        }
        if args.strict {
            g.exceed_ratio = 0.0;
        }
        g.check().map_err(|e| usage(e.to_string()))?;
    }
    let max = match &args.max_rate {
        Some(t) => match units::parse_rate(t)? {
            Rate::Pps(p) => MaxLoad::Pps(p),
            _ => {
                return Err(usage(format!(
                    "invalid --max-rate '{t}': give frames per second, such as 1.5M (or use --link-speed)"
                )))
            }
        },
        None => match link_bps {
            Some(bps) => MaxLoad::LinkBps(bps),
            None => MaxLoad::Calibrate,
        },
    };
    let latency = tests.contains(&"latency");
    let back_to_back = tests.contains(&"back-to-back");
    let warmup = match &args.trial_warmup {
        None => 0.0,
        Some(t) => units::parse_duration(t)
            .map_err(|_| {
                usage(format!(
                    "invalid --trial-warmup '{t}': use a duration such as 0s, 500ms or 1s"
                ))
            })?
            .as_secs_f64(),
    };
    Ok(MlrSettings {
        // Latency and back-to-back need the throughput.
        throughput: tests.contains(&"throughput") || latency || back_to_back,
        frame_loss: tests.contains(&"frame-loss"),
        latency,
        back_to_back,
        goals,
        max,
        min_fraction: MIN_FRACTION,
        latency_loads: match &args.latency_loads {
            Some(t) => latency_loads(t)?,
            None => latency::DEFAULT_LOADS.to_vec(),
        },
        latency_trials: args.latency_trials.unwrap_or(latency::DEFAULT_TRIALS),
        b2b_trials: args.b2b_trials.unwrap_or(DEFAULT_B2B_TRIALS),
        b2b_trial_s: seconds("--b2b-trial", &args.b2b_trial, DEFAULT_B2B_TRIAL_S)?,
        warmup_s: warmup,
    })
}

fn check_flags(args: &Args) -> anyhow::Result<()> {
    for test in args.tests.split(',').map(str::trim) {
        match test {
            "throughput" | "frame-loss" | "latency" | "back-to-back" | "all" => {}
            other => {
                return Err(usage(format!(
                "unknown test '{other}': use throughput, latency, frame-loss, back-to-back or all"
            )))
            }
        }
    }
    let b = &args.bench;
    for (flag, set) in [
        ("--rate", b.rate.is_some()),
        ("--duration", b.duration.is_some()),
        ("--warmup", b.warmup.is_some()),
        ("--tail", b.tail.is_some()),
        ("-N", b.iterations.is_some()),
    ] {
        if set {
            return Err(usage(format!(
                "{flag} does not apply to rfc2544: the search chooses loads and trial lengths (see --max-rate, --final-trial, --repeat)"
            )));
        }
    }
    if args.repeat == Some(0) {
        return Err(usage("invalid --repeat 0: use at least 1"));
    }
    for (flag, n) in [
        ("--latency-trials", args.latency_trials),
        ("--b2b-trials", args.b2b_trials),
    ] {
        if n == Some(0) {
            return Err(usage(format!("invalid {flag} 0: use at least 1")));
        }
    }
    let tests = tests_of(&args.tests);
    for (flag, set, test) in [
        ("--latency-loads", args.latency_loads.is_some(), "latency"),
        ("--latency-trials", args.latency_trials.is_some(), "latency"),
        ("--b2b-trials", args.b2b_trials.is_some(), "back-to-back"),
        ("--b2b-trial", args.b2b_trial.is_some(), "back-to-back"),
    ] {
        if set && !tests.contains(&test) {
            return Err(usage(format!(
                "{flag} applies to the {test} test: add --tests {test} (or all)"
            )));
        }
    }
    if b.resume.is_some() {
        let shaping = [
            ("--goal", !args.goals.is_empty()),
            ("--width", args.width.is_some()),
            ("--initial-trial", args.initial_trial.is_some()),
            ("--final-trial", args.final_trial.is_some()),
            ("--duration-sum", args.duration_sum.is_some()),
            ("--preceding-targets", args.preceding_targets.is_some()),
            ("--rfc2544-strict", args.strict),
            ("--max-rate", args.max_rate.is_some()),
            ("--repeat", args.repeat.is_some()),
            ("--latency-loads", args.latency_loads.is_some()),
            ("--latency-trials", args.latency_trials.is_some()),
            ("--b2b-trials", args.b2b_trials.is_some()),
            ("--b2b-trial", args.b2b_trial.is_some()),
            ("--trial-warmup", args.trial_warmup.is_some()),
        ];
        if let Some((flag, _)) = shaping.iter().find(|(_, s)| *s) {
            return Err(usage(format!(
                "{flag} cannot be used with --resume: the search settings are the ones saved in the folder"
            )));
        }
    }
    Ok(())
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    check_flags(&args)?;
    crate::cmd::history::check_record_args(&args.bench.history)?;
    let drop_trace = bench::drop_trace_flag(&args.bench)?;
    if args.bench.resume.is_none() {
        args.bench.iterations = Some(args.repeat.unwrap_or(1));
        // A campaign file names itself; flags alone make an "rfc2544".
        if args.bench.name.is_none() && args.bench.campaign.is_none() {
            args.bench.name = Some("rfc2544".into());
        }
    }
    let (file, saved_text) = bench::campaign_file(&args.bench)?;
    let cpus = pktlab_lab::cpuload::cpu_count()?;
    let campaign = Campaign::from_file(&file, cpus)?;
    pktlab_bench::drops::set_mode(drop_trace.unwrap_or(campaign.run.drop_trace));
    let settings = match &args.bench.resume {
        Some(d) => load_settings(d)?,
        None => settings_from_flags(&args, campaign.link_bps)?,
    };
    let dir = match (&args.bench.resume, &args.bench.output_dir) {
        (Some(d), _) => ResultsDir::open(d)?,
        (None, d) => {
            let path = match d {
                Some(d) => d.clone(),
                None => ResultsDir::claim_default(&campaign.name, results::unix_now())?,
            };
            bench::check_new_dir(&path)?;
            ResultsDir::create(&path)?
        }
    };
    let created = args.bench.resume.is_none();
    let prepared =
        bench::prepare(&args.bench, &campaign, &dir, saved_text.as_deref()).and_then(|t| {
            if created {
                let json = serde_json::to_string_pretty(&settings)?;
                dir.write(SETTINGS_FILE, json.as_bytes())?;
            }
            Ok(t)
        });
    let (target, _lock) = match prepared {
        Ok(t) => t,
        Err(e) => {
            if created {
                let _ = std::fs::remove_dir(dir.path.join(results::RUNS_DIR));
                let _ = std::fs::remove_dir(&dir.path);
            }
            return Err(e);
        }
    };
    execute(&args, &campaign, &settings, &target, &dir)
}

fn load_settings(dir: &Path) -> anyhow::Result<MlrSettings> {
    let path = dir.join(SETTINGS_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        usage(format!(
            "cannot resume {}: not an rfc2544 results folder ({}: {})",
            dir.display(),
            path.display(),
            crate::error::os_message(&e)
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))
}

/// A rough guess of a search's trial seconds, for the progress bar: each
/// goal's final bounds need about half their duration sum each, and the
/// coarser targets and the steps towards them a few more trials.
fn guessed_seconds(settings: &MlrSettings) -> f64 {
    let search: f64 = settings
        .goals
        .iter()
        .map(|g| g.duration_sum + 10.0 * g.initial_trial_duration)
        .sum();
    let final_trial = settings.goals[0].final_trial_duration;
    let latency = if settings.latency {
        (settings.latency_loads.len() * settings.latency_trials) as f64 * final_trial
    } else {
        0.0
    };
    // A burst search takes about a dozen bursts; the receiver's intervals
    // tick for the burst and the drain (about a second), not the idle rest.
    let b2b = if settings.back_to_back {
        settings.b2b_trials as f64 * 12.0
    } else {
        0.0
    };
    search + latency + b2b
}

fn execute(
    args: &Args,
    campaign: &Campaign,
    settings: &MlrSettings,
    target: &pktlab_bench::target::Target,
    dir: &ResultsDir,
) -> anyhow::Result<()> {
    let o = &args.bench.output;
    let text = !o.json;
    let dir_text = dir.path.display().to_string();
    if text && !o.quiet {
        let tests = [
            ("throughput", settings.throughput),
            ("latency", settings.latency),
            ("frame-loss", settings.frame_loss),
            ("back-to-back", settings.back_to_back),
        ];
        let names: Vec<&str> = tests.iter().filter(|t| t.1).map(|t| t.0).collect();
        println!(
            "rfc2544 {}: {} on {}, results in {dir_text}",
            names.join(", "),
            campaign.name,
            target.describe()
        );
        // Across hosts, one-way latency is only as good as the clocks (the
        // latency test's results say so again for each load), as bench
        // says it.
        if let Some(clocks) = dir.env().ok().and_then(|e| e.clocks) {
            println!("Clocks: {}", clocks.latency);
        }
    }
    let stop = StopSignal::new();
    let method = Mlr::new(settings.clone(), dir.path.clone());
    let runs = campaign.plan().len() as u64;
    // Ticks are the receiver's 100 ms intervals.
    let total = (runs as f64 * guessed_seconds(settings) * 10.0) as u64;
    let mut progress = common::Progress::new(text && !o.quiet, total);
    let mut label = String::new();
    let mut trials_seen = 0usize;
    // Each receiver warning once per campaign, not once per trial.
    let mut warned = std::collections::HashSet::new();
    let outcome = runner::run_campaign(campaign, target, dir, &method, &[], &stop, |e| match e {
        CampaignEvent::Resuming { finished, planned } if text && !o.quiet => {
            progress.println(format!(
                "Resuming: {finished} of {planned} searches are finished; the others go on from their recorded trials."
            ));
        }
        CampaignEvent::RunStarting {
            index,
            of,
            config,
            traffic,
            key,
        } => {
            label = format!("search {index}/{of} {config} {traffic} #{}", key.iteration);
            progress.message(label.clone());
        }
        CampaignEvent::Trial(TrialEvent::Started) => {
            trials_seen += 1;
            progress.message(format!("{label} trial {trials_seen}"));
        }
        CampaignEvent::Trial(TrialEvent::Forwarded(pps)) => progress.tick(pps),
        CampaignEvent::Trial(TrialEvent::Warning(w)) if warned.insert(w.clone()) => {
            progress.eprintln(format!("pktlab: warning: {w}"));
        }
        // Where the trial's lost frames went, as bench says after a run.
        CampaignEvent::Trial(TrialEvent::Finished {
            intended_pps,
            sent,
            drops,
        }) if text && !o.quiet => progress.println(out::trial_drops_text(
            trials_seen,
            intended_pps,
            sent,
            &drops,
        )),
        CampaignEvent::RunFailed {
            index,
            of,
            config,
            traffic,
            key,
            error,
        } => progress.eprintln(format!(
            "pktlab: search {index}/{of} {config} {traffic} #{} failed, skipped: {error}",
            key.iteration
        )),
        CampaignEvent::RunDone {
            config,
            traffic,
            key,
            ..
        } => {
            if let Ok(lines) = record::read(&dir.path) {
                let mine: Vec<_> = lines
                    .into_iter()
                    .filter(|l| l.of_run(config, traffic, key.iteration))
                    .collect();
                if let Ok(found) = summary::throughput(settings, &mine) {
                    for t in &found {
                        if o.json {
                            let mut v = serde_json::to_value(t).unwrap_or_default();
                            v["type"] = "throughput".into();
                            print_json(&v);
                        } else if !o.quiet {
                            progress.println(
                                out::throughput_text(t, campaign.link_bps)
                                    .trim_end()
                                    .to_string(),
                            );
                        }
                    }
                }
            }
        }
        _ => {}
    });
    progress.finish();
    let outcome = outcome?;
    let lines = record::read(&dir.path)?;
    let throughput = summary::throughput(settings, &lines)?;
    let back_to_back = back_to_back::summarize(
        &lines,
        settings.b2b_trial_s,
        settings.goals[0].width,
        &|c, t, i| summary::ndr_of(&throughput, c, t, i),
    );
    let report = Report {
        comparisons: summary::compare(&throughput, Confidence::P95),
        frame_loss: summary::frame_loss(&lines),
        latency: latency::summarize(&lines, &latency::read(&dir.path)?),
        back_to_back,
        throughput,
    };
    let json = serde_json::to_string_pretty(&report)?;
    dir.write(REPORT_FILE, json.as_bytes())?;
    if !args.bench.no_report {
        // The page reads rfc2544.json and trials.jsonl, so it comes last.
        let folder =
            pktlab_report::html::Folder::load(&dir.path).map_err(|e| anyhow::anyhow!("{e}"))?;
        let page = pktlab_report::html::render(std::slice::from_ref(&folder));
        dir.write(pktlab_report::html::REPORT_FILE, page.as_bytes())?;
    }
    if o.json {
        for f in &report.frame_loss {
            let mut v = serde_json::to_value(f)?;
            v["type"] = "frame_loss".into();
            print_json(&v);
        }
        for l in &report.latency {
            let mut v = serde_json::to_value(l)?;
            v["type"] = "latency".into();
            print_json(&v);
        }
        for b in &report.back_to_back {
            let mut v = serde_json::to_value(b)?;
            v["type"] = "back_to_back".into();
            print_json(&v);
        }
        for c in &report.comparisons {
            let mut v = serde_json::to_value(c)?;
            v["type"] = "comparison".into();
            print_json(&v);
        }
        print_json(&serde_json::json!({
            "type": "summary",
            "dir": dir_text,
            "searches": report.throughput.len(),
            "trials": lines.len(),
            "interrupted": outcome.interrupted,
        }));
    } else {
        println!(
            "Results ({} searches, {} trials):",
            report.throughput.len(),
            lines.len()
        );
        print!("{}", out::report_text(&report, campaign.link_bps));
        println!(
            "Trials in {dir_text}/{}, results in {dir_text}/{REPORT_FILE}.",
            record::TRIALS_FILE
        );
        if outcome.interrupted {
            println!("Interrupted: every finished trial is kept; pktlab rfc2544 --resume {dir_text} goes on.");
        }
    }
    crate::cmd::history::record_finished(&args.bench.history, &dir.path, text && !o.quiet);
    if outcome.interrupted {
        return Err(Exit(130).into());
    }
    if outcome.failed > 0 {
        return Err(anyhow::anyhow!(
            "{} of {} searches failed and were skipped; pktlab rfc2544 --resume {dir_text} runs them again",
            outcome.failed,
            outcome.planned
        ));
    }
    Ok(())
}
