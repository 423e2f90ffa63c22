//! `pktlab bench`: forwarding benchmark campaigns (BSDRP's bench-lab).

use std::time::{Duration, Instant};

use pktlab_campaign::campaign::{Campaign, Event, Outcome};
use pktlab_campaign::runs::FixedRate;
use pktlab_engine::StopSignal;
use pktlab_history::Recorder;
use pktlab_report::bench::{self as out, Opening};

use crate::cmd::campaigns::{self, CampaignArgs, Display};
use crate::cmd::common;
use crate::cmd::recording;

pub type Args = CampaignArgs;

pub fn run(args: Args) -> anyhow::Result<()> {
    let recorder = recording::recorder(&args.history)?;
    let spec = args.spec("bench")?;
    common::install_signals()?;
    let mut method = FixedRate::new();
    let o = &args.output;
    let campaign = Campaign::open(spec, &mut method, |e| campaigns::open_event(o, e))?;
    say_what_runs(&campaign, o);
    let mut show = Display::new(o);
    let secs = campaign.plan().run.trial.duration.as_secs().max(1);
    let mut started = Instant::now();
    let mut label = String::new();
    let mut sinks = pktlab_report::export::runs_exporters(!args.no_report);
    if let Some(r) = &recorder {
        sinks.push(r);
    }
    let stop = StopSignal::new();
    let outcome = campaign.run(&mut method, &sinks, &stop, |e| {
        let Some(e) = show.common(
            e,
            "runs are already finished and will not run again.",
            |r| out::run_label(r.index, r.of, r.config, r.traffic, r.key.iteration),
        ) else {
            return;
        };
        match e {
            Event::RunStarting(r) => {
                if r.index == 1 {
                    started = Instant::now();
                }
                label = out::run_label(r.index, r.of, r.config, r.traffic, r.key.iteration);
                show.bar(r.of as u64 * secs).message(label.clone());
                if show.text() && !show.terminal {
                    let per_run = match r.index {
                        1 => Duration::from_secs(secs + 1),
                        i => started.elapsed() / (i as u32 - 1),
                    };
                    let left = per_run * (r.of - r.index + 1) as u32;
                    println!(
                        "{label} ... (about {} left)",
                        pktlab_report::campaign::human(left)
                    );
                }
            }
            Event::RunDone { result, .. } => {
                if o.json {
                    common::print_json(&out::run_json(result));
                } else if !o.quiet {
                    for line in out::run_done_lines(&label, &result.result) {
                        show.println(line);
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
    closing(&campaign, &method, outcome, &args, recorder.as_ref())
}

/// What the campaign is and on what, before its first run.
fn say_what_runs(c: &Campaign, o: &common::Output) {
    if o.json {
        return;
    }
    let dir = c.folder().path.display().to_string();
    let cpus = pktlab_lab::cpuload::cpu_count().unwrap_or(1);
    let clocks = campaigns::clocks_line(c);
    for line in out::opening(c.plan(), c.target(), &dir, clocks, cpus) {
        match line {
            Opening::Text(l) if !o.quiet => println!("{l}"),
            Opening::Text(_) => {}
            Opening::Warning(l) => eprintln!("{l}"),
        }
    }
}

/// The summary, and the exit code: 130 after Ctrl-C, 1 when runs failed.
fn closing(
    c: &Campaign,
    method: &FixedRate,
    outcome: Outcome,
    args: &Args,
    recorder: Option<&Recorder>,
) -> anyhow::Result<()> {
    use pktlab_campaign::method::Method;
    let (o, runs) = (&args.output, method.results());
    let dir = &c.folder().path.display().to_string();
    if o.json {
        common::print_json(&out::closing_json(runs, dir, outcome.interrupted));
    } else {
        print!("{}", out::summary_text(c.plan(), &outcome, runs, dir));
    }
    recording::say_recorded(recorder, &c.folder().path, !o.json && !o.quiet);
    campaigns::exit(&outcome, "runs", "bench", dir)
}
