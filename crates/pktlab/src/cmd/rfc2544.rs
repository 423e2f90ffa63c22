//! `pktlab rfc2544`: throughput by a multiple-loss-ratio search (FD.io
//! CSIT's MLRsearch), on the campaign machinery of `pktlab bench`.

use pktlab_campaign::campaign::{Campaign, Event, Outcome};
use pktlab_campaign::method::Method;
use pktlab_engine::StopSignal;
use pktlab_history::Recorder;
use pktlab_report::rfc2544 as out;
use pktlab_search::mlr::flags::SearchFlags;
use pktlab_search::mlr::{Mlr, MlrSettings};
use pktlab_trial::trial::TrialEvent;

use crate::cmd::campaigns::{self, CampaignArgs, Display};
use crate::cmd::common::{self, print_json};
use crate::cmd::recording;

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
    pub bench: CampaignArgs,
}

impl Args {
    fn search_flags(&self) -> SearchFlags {
        SearchFlags {
            tests: self.tests.clone(),
            latency_loads: self.latency_loads.clone(),
            latency_trials: self.latency_trials,
            b2b_trials: self.b2b_trials,
            b2b_trial: self.b2b_trial.clone(),
            trial_warmup: self.trial_warmup.clone(),
            goals: self.goals.clone(),
            width: self.width.clone(),
            initial_trial: self.initial_trial.clone(),
            final_trial: self.final_trial.clone(),
            duration_sum: self.duration_sum.clone(),
            preceding_targets: self.preceding_targets,
            strict: self.strict,
            max_rate: self.max_rate.clone(),
            repeat: self.repeat,
        }
    }
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    let flags = args.search_flags();
    flags.check(args.bench.resume.is_some())?;
    let recorder = recording::recorder(&args.bench.history)?;
    if args.bench.resume.is_none() {
        args.bench.iterations = Some(flags.searches());
    }
    let spec = args.bench.spec("rfc2544")?;
    let settings = match &args.bench.resume {
        Some(d) => MlrSettings::to_resume(d)?,
        None => flags.settings(spec.plan.link_bps)?,
    };
    common::install_signals()?;
    let mut method = Mlr::new(settings.clone());
    let o = &args.bench.output;
    let campaign = Campaign::open(spec, &mut method, |e| campaigns::open_event(o, e))?;
    say_what_runs(&campaign, &settings, o);
    let runs = campaign.plan().plan().len() as u64;
    // Ticks are the receiver's 100 ms intervals.
    let total = (runs as f64 * settings.guessed_seconds() * 10.0) as u64;
    let mut show = Display::new(o);
    show.bar(total);
    let mut label = String::new();
    let mut trials_seen = 0usize;
    let link_bps = campaign.plan().link_bps;
    let mut sinks = pktlab_report::export::search_exporters(!args.bench.no_report);
    if let Some(r) = &recorder {
        sinks.push(r);
    }
    let stop = StopSignal::new();
    let outcome = campaign.run(&mut method, &sinks, &stop, |e| {
        let search = |r: &pktlab_campaign::campaign::RunLabel<'_>| {
            format!(
                "search {}/{} {} {} #{}",
                r.index, r.of, r.config, r.traffic, r.key.iteration
            )
        };
        let Some(e) = show.common(
            e,
            "searches are finished; the others go on from their recorded trials.",
            search,
        ) else {
            return;
        };
        match e {
            Event::RunStarting(r) => {
                label = search(&r);
                show.bar(total).message(label.clone());
            }
            Event::Trial(TrialEvent::Started) => {
                trials_seen += 1;
                show.bar(total)
                    .message(format!("{label} trial {trials_seen}"));
            }
            // Where the trial's lost frames went, as bench says after a run.
            Event::Trial(TrialEvent::Finished {
                intended_pps,
                sent,
                drops,
                directions,
            }) if show.text() => show.println(out::trial_drops_text(
                trials_seen,
                intended_pps,
                sent,
                &drops,
                &directions,
            )),
            Event::RunDone { result, .. } => {
                for t in &result.throughput {
                    if o.json {
                        print_json(&out::throughput_json(t));
                    } else if !o.quiet {
                        show.println(out::throughput_text(t, link_bps).trim_end().to_string());
                    }
                }
            }
            _ => {}
        }
    });
    show.finish();
    // A campaign stopped by an error is recorded as far as it went.
    let outcome = outcome.inspect_err(|_| {
        recording::say_recorded(recorder.as_ref(), &campaign.folder().path, false)
    })?;
    closing(&campaign, &method, outcome, &args.bench, recorder.as_ref())
}

/// The tests and the lab, before the first search.
fn say_what_runs(c: &Campaign, settings: &MlrSettings, o: &common::Output) {
    if o.json || o.quiet {
        return;
    }
    println!(
        "rfc2544 {}: {} on {}, results in {}",
        settings.test_names().join(", "),
        c.plan().name,
        c.target().describe(),
        c.folder().path.display()
    );
    if let Some(line) = campaigns::clocks_line(c) {
        println!("{line}");
    }
}

/// The results, and the exit code: 130 after Ctrl-C, 1 when searches
/// failed.
fn closing(
    c: &Campaign,
    method: &Mlr,
    outcome: Outcome,
    args: &CampaignArgs,
    recorder: Option<&Recorder>,
) -> anyhow::Result<()> {
    let (o, s) = (&args.output, method.results());
    let dir = c.folder().path.display().to_string();
    let trials = s.trials.len();
    let link_bps = c.plan().link_bps;
    common::write_stdout(&out::closing_output(
        &s.report,
        link_bps,
        &dir,
        trials,
        outcome.interrupted,
        o.json,
    ))?;
    recording::say_recorded(recorder, &c.folder().path, !o.json && !o.quiet);
    campaigns::exit(&outcome, "searches", "rfc2544", &dir)
}
