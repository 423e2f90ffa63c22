//! `pktlab bench`: the forwarding benchmark on the built-in lab.

use std::time::Duration;

use clap::Parser;
use pktlab_bench::series::{run_series, SeriesEvent};
use pktlab_bench::traffic::Traffic;
use pktlab_bench::trial::{TrialEvent, TrialSettings};
use pktlab_engine::StopSignal;
use pktlab_lab::{BuiltinLab, LabSpec, UpOutcome};
use pktlab_report::bench as out;
use pktlab_wire::units;

use crate::cmd::common::{self, Output};
use crate::error::usage;

/// Measure how fast the lab's DUT forwards, like BSDRP's bench-lab.
///
/// Runs the receiver and the generator on the built-in lab (bringing it up
/// if needed) for N runs and summarises the forwarded rates with ministat.
///
/// A run's value is the median of the receiver's per-second counts of test
/// frames, leaving out the first and the last second.
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Number of runs
    #[arg(
        long = "iterations",
        short = 'N',
        value_name = "N",
        default_value_t = 5
    )]
    pub iterations: usize,
    /// Length of each run (10s, 1m, ...)
    #[arg(
        long = "duration",
        short = 't',
        value_name = "TIME",
        default_value = "10s"
    )]
    pub duration: String,
    /// Traffic profile: inet4 (2000 IPv4 flows) or inet6
    #[arg(long = "traffic", value_name = "NAME", default_value = "inet4")]
    pub traffic: String,
    /// Frame size or mix, as for gen -l [default: 64 for inet4, 80 for inet6]
    #[arg(short = 'l', long = "size", value_name = "SIZE")]
    pub size: Option<String>,
    /// Offered rate, as for gen -R [default: as fast as the generator can]
    #[arg(short = 'R', long = "rate", value_name = "RATE")]
    pub rate: Option<String>,
    /// Link speed for -R N%
    #[arg(long = "link-speed", value_name = "SPEED")]
    pub link_speed: Option<String>,
    /// Generator threads
    #[arg(short = 'p', long = "threads", value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// The lab's namespace prefix
    #[arg(long = "prefix", value_name = "P", default_value = pktlab_lab::DEFAULT_PREFIX)]
    pub prefix: String,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (traffic, settings) = config(&args)?;
    let lab = BuiltinLab::new(LabSpec {
        prefix: args.prefix.clone(),
        ..LabSpec::default()
    })?;
    common::install_signals()?;
    let o = &args.output;
    let say = |line: String| {
        if !o.json {
            println!("{line}");
        }
    };
    match lab.up()? {
        UpOutcome::Created => say(format!("Built lab {}.", args.prefix)),
        UpOutcome::Repaired => say(format!("Repaired lab {}.", args.prefix)),
        UpOutcome::AlreadyUp => {}
    }
    say(out::header(
        &args.prefix,
        &traffic,
        &settings,
        args.iterations,
    ));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !o.json {
        eprintln!("{}", out::virtual_lab_warning(cpus));
    }
    let mut progress = common::Progress::new(
        !o.json && !o.quiet,
        args.iterations as u64 * settings.duration.as_secs().max(1),
    );
    let stop = StopSignal::new();
    let series = run_series(
        &lab,
        &traffic,
        &settings,
        args.iterations,
        &stop,
        |e| match e {
            SeriesEvent::TrialStarting { iteration, of } => {
                progress.message(format!("run {iteration}/{of}"));
            }
            SeriesEvent::Trial(TrialEvent::Forwarded(pps)) => progress.tick(pps),
            SeriesEvent::Trial(_) => {}
            SeriesEvent::TrialDone { iteration, result } => {
                if o.json {
                    common::print_json(&out::run_json(iteration, result));
                } else {
                    progress.println(out::run_line(iteration, args.iterations, result));
                }
            }
        },
    );
    progress.finish();
    let series = series?;
    if o.json {
        common::print_json(&out::summary_json(&series));
    } else {
        print!("{}", out::summary_text(&series));
    }
    Ok(())
}

fn config(args: &Args) -> anyhow::Result<(Traffic, TrialSettings)> {
    let mut traffic = match args.traffic.as_str() {
        "inet4" => Traffic::inet4(),
        "inet6" => Traffic::inet6(),
        other => {
            return Err(usage(format!(
                "unknown traffic profile '{other}': use inet4 or inet6"
            )))
        }
    };
    if let Some(size) = &args.size {
        let mix: pktlab_wire::size::SizeMix = size.parse()?;
        traffic.sizes = mix.to_string();
        traffic.name = format!("{}-{}", traffic.name, mix);
    }
    let link = args
        .link_speed
        .as_deref()
        .map(units::parse_link_speed)
        .transpose()?;
    if let Some(r) = &args.rate {
        let mix: pktlab_wire::size::SizeMix = traffic.sizes.parse()?;
        traffic.rate_pps = Some(units::parse_rate(r)?.to_pps(mix.mean(), link)?);
    }
    if args.threads == 0 || args.threads > 64 {
        return Err(usage(format!(
            "invalid thread count {}: use 1 to 64",
            args.threads
        )));
    }
    traffic.threads = args.threads;
    if args.iterations == 0 {
        return Err(usage("invalid iteration count 0: use at least 1"));
    }
    let duration = units::parse_duration(&args.duration)?;
    if duration < Duration::from_secs(2) {
        return Err(usage(format!(
            "invalid duration '{}': a run needs at least 2s (its first and last seconds are left out)",
            args.duration
        )));
    }
    // Checks the frames now rather than after the lab is up.
    traffic.frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])?;
    Ok((
        traffic,
        TrialSettings {
            duration,
            ..TrialSettings::default()
        },
    ))
}
