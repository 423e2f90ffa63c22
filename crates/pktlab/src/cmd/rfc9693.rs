//! `pktlab rfc9693`: RFC 9693's stateful tests (connection tracking table
//! capacity, maximum connection establishment rate, connection tear-down
//! rate), on the campaign machinery of `pktlab bench`.

use pktlab_campaign::campaign::{Campaign, Event, Outcome};
use pktlab_campaign::method::Method;
use pktlab_campaign::sink::Sink;
use pktlab_engine::StopSignal;
use pktlab_history::Recorder;
use pktlab_report::rfc9693 as out;
use pktlab_search::stateful::flags::StatefulFlags;
use pktlab_search::stateful::{Stateful, StatefulReport};
use pktlab_trial::trial::TrialEvent;

use crate::cmd::campaigns::{self, CampaignArgs, Display};
use crate::cmd::common::{self, print_json};
use crate::cmd::recording;
use crate::error::usage;

/// Measure a stateful DUT as RFC 9693 does: how many connections it
/// holds and how fast it sets them up and tears them down.
///
/// Each trial empties the DUT's connection table (conntrack -F), opens N
/// connections from the inside port at a rate R (the Initiator's
/// preliminary phase, one UDP frame per distinct 4-tuple), then answers
/// each from the outside port (the Responder's validation): a stateful
/// DUT passes an answer only for a connection it holds. The capacity is
/// the largest N, the establishment rate the highest R, whose connections
/// all validate, each found by the throughput search's machinery with
/// bounds and a trace. The throughput over established connections is
/// the highest rate each way at which the N connections' own traffic,
/// sent both ways at once for --duration after each trial's preliminary
/// phase, loses no frame. The tear-down rate times deleting N connections.
/// Takes the built-in lab, --configs (nft-stateful, nat44, ...), the
/// traffic's first addresses, -f, -o and --resume of `pktlab bench`.
/// Results in rfc9693.json, the trace drawn in report.html.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
#[group(id = "rfc9693")]
pub struct Args {
    /// Tests to run, a list of capacity, rate, throughput and teardown, or all
    /// [default: all]
    #[arg(long = "tests", value_name = "LIST")]
    pub tests: Option<String>,
    /// Connections of the rate, throughput and tear-down tests (at most
    /// the measured capacity) [default: 10000]
    #[arg(long = "connections", value_name = "N")]
    pub connections: Option<u64>,
    /// The capacity search's highest count [default: nf_conntrack_max
    /// plus a quarter]
    #[arg(long = "max-connections", value_name = "N")]
    pub max_connections: Option<u64>,
    /// The preliminary phase's rate of the capacity, throughput and
    /// tear-down tests [default: 50k]
    #[arg(long = "setup-rate", value_name = "RATE")]
    pub setup_rate: Option<String>,
    /// The Responder's rate in the validation [default: 50k]
    #[arg(long = "validation-rate", value_name = "RATE")]
    pub validation_rate: Option<String>,
    /// The lowest rate of the rate and throughput searches (each way for
    /// the throughput) [default: 1k]
    #[arg(long = "min-rate", value_name = "RATE")]
    pub min_rate: Option<String>,
    /// The highest rate of the rate and throughput searches [default: 1M]
    #[arg(long = "max-rate", value_name = "RATE")]
    pub max_rate: Option<String>,
    /// Relative width of the final bounds, in percent [default: 0.2]
    #[arg(long = "width", value_name = "PERCENT")]
    pub width: Option<String>,
    /// The address a source NAT gives the Initiator's connections
    /// [default: the DUT's outside address for nat44 on the built-in lab]
    #[arg(long = "nat-address", value_name = "ADDR")]
    pub nat_address: Option<String>,
    /// Sets the host's nf_conntrack_max (host-wide on Linux) for each run,
    /// restored after it, also after a kill (at the next lab up or down)
    #[arg(long = "conntrack-max", value_name = "N")]
    pub conntrack_max: Option<u64>,
    #[command(flatten)]
    pub bench: CampaignArgs,
}

impl Args {
    fn flags(&self) -> StatefulFlags {
        StatefulFlags {
            tests: self.tests.clone(),
            connections: self.connections,
            max_connections: self.max_connections,
            setup_rate: self.setup_rate.clone(),
            validation_rate: self.validation_rate.clone(),
            min_rate: self.min_rate.clone(),
            max_rate: self.max_rate.clone(),
            width: self.width.clone(),
            nat_address: self.nat_address.clone(),
            conntrack_max: self.conntrack_max,
            duration: None,
        }
    }
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    // `--duration` is the throughput test's trial length, not a run's.
    let duration = args.bench.duration.take();
    let flags = StatefulFlags {
        duration,
        ..args.flags()
    };
    if let (Some(_), Some(flag)) = (&args.bench.resume, flags.any()) {
        return Err(usage(format!(
            "{flag} does not apply to --resume: a resumed campaign keeps its settings"
        )));
    }
    let settings = flags.settings()?;
    let recorder = recording::recorder(&args.bench.history)?;
    if args.bench.resume.is_none() {
        args.bench.iterations = Some(1);
    }
    let spec = args.bench.spec("rfc9693")?;
    common::install_signals()?;
    let mut method = Stateful::new(settings);
    let o = &args.bench.output;
    let campaign = Campaign::open(spec, &mut method, |e| campaigns::open_event(o, e))?;
    if let Some(n) = method.results().settings.conntrack_max {
        eprintln!("{}", pktlab_search::stateful::limit::notice(n));
    }
    if !o.json && !o.quiet {
        println!(
            "rfc9693 {}: {} on {}, results in {}",
            method
                .results()
                .settings
                .tests
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", "),
            campaign.plan().name,
            campaign.target().describe(),
            campaign.folder().path.display()
        );
    }
    let mut show = Display::new(o);
    let mut label = String::new();
    let mut phases = 0usize;
    let stop = StopSignal::new();
    let page = pktlab_report::html::HtmlReport;
    let mut sinks: Vec<&dyn Sink<StatefulReport>> = Vec::new();
    if !args.bench.no_report {
        sinks.push(&page);
    }
    if let Some(r) = &recorder {
        sinks.push(r);
    }
    let outcome = campaign.run(&mut method, &sinks, &stop, |e| {
        let name = |r: &pktlab_campaign::campaign::RunLabel<'_>| {
            format!("run {}/{} {} {}", r.index, r.of, r.config, r.traffic)
        };
        let Some(e) = show.common(e, "runs are finished; the others start again.", name) else {
            return;
        };
        match e {
            Event::RunStarting(r) => {
                label = name(&r);
                show.bar(0).message(label.clone());
            }
            Event::Trial(TrialEvent::Started) => {
                phases += 1;
                show.bar(0).message(format!("{label} phase {phases}"));
            }
            Event::RunDone { result, .. } => {
                if o.json {
                    print_json(&out::run_json(result));
                } else if !o.quiet {
                    for line in out::trials_text(result) {
                        show.println(line);
                    }
                    show.println(out::run_text(result).trim_end().to_string());
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

/// The results, and the exit code: 130 after Ctrl-C, 1 when runs failed.
fn closing(
    c: &Campaign,
    method: &Stateful,
    outcome: Outcome,
    args: &CampaignArgs,
    recorder: Option<&Recorder>,
) -> anyhow::Result<()> {
    let dir = c.folder().path.display().to_string();
    let r = method.results();
    let o = &args.output;
    if o.json {
        print_json(&out::closing_json(r, &dir, outcome.interrupted));
    } else {
        print!("{}", out::closing_text(r, &dir, outcome.interrupted));
    }
    recording::say_recorded(recorder, &c.folder().path, !o.json && !o.quiet);
    campaigns::exit(&outcome, "runs", "rfc9693", &dir)
}
