//! `pktlab drops`: the drop tracer alone, for runs made by another
//! generator: dropped test frames per second by place and reason (every
//! reason traced), then a summary, with the CPUs' backlog refusals the
//! kernel counted meanwhile.

use std::time::{Duration, Instant};

use pktlab_engine::stop::Ticker;

use pktlab_io::droptrace::{netns_inode, DropCounts, DropTracer, Places};
use pktlab_report::drops as out;
use pktlab_wire::units;

use crate::cmd::common::emit_line;
use crate::error::usage;

/// Count the frames the kernel drops, by network namespace, interface,
/// dropping function and drop reason (the skb:kfree_skb tracepoint, with
/// the reasons the kernel names), once per interval and in a summary at
/// the end. Only pktlab test frames are counted unless --all is given.
/// Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only drops in this network namespace (`ip netns` name)
    #[arg(long = "netns", value_name = "NS")]
    pub netns: Option<String>,
    /// Stop after TIME [default: until Ctrl-C]
    #[arg(short = 't', long = "time", value_name = "TIME")]
    pub time: Option<String>,
    /// Interval between lines
    #[arg(
        short = 'w',
        long = "interval",
        value_name = "TIME",
        default_value = "1s"
    )]
    pub interval: String,
    /// Count every dropped frame, not only test frames
    #[arg(long = "all")]
    pub all: bool,
    /// JSON lines: ready, one per interval, then
    /// {"type":"summary","places":[...],"total":N}
    #[arg(long = "json")]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let interval = units::parse_duration(&args.interval)?;
    if interval < Duration::from_millis(10) {
        return Err(usage(format!(
            "invalid interval '{}': use at least 10ms",
            args.interval
        )));
    }
    let time = match &args.time {
        Some(t) => {
            let d = units::parse_duration(t)?;
            if d.is_zero() {
                return Err(usage(format!("invalid time '{t}': use more than 0s")));
            }
            Some(d)
        }
        None => None,
    };
    let only_ns = match &args.netns {
        Some(n) => Some(netns_inode(Some(n)).map_err(usage)?),
        None => None,
    };
    crate::cmd::common::install_signals()?;
    let tracer = DropTracer::start(args.all)?;
    // Unreadable softnet counts only leave out the summary's counted line.
    let softnet_before = pktlab_lab::softnet::read().unwrap_or_default();
    let mut places = Places::load();
    let filter = |c: DropCounts| match only_ns {
        Some(ino) => DropCounts {
            frames: c
                .frames
                .into_iter()
                .filter(|(k, _)| k.netns == ino)
                .collect(),
            overflow: c.overflow,
            missed: c.missed,
        },
        None => c,
    };
    let mut stdout = std::io::stdout().lock();
    let first = filter(tracer.read()?);
    let ready = if args.json {
        out::ready_json(args.all, args.netns.as_deref()).to_string()
    } else {
        out::header()
    };
    if emit_line(&mut stdout, &ready)? {
        return Ok(());
    }
    let mut ticker = Ticker::new(interval, time);
    let (mut prev, mut prev_at) = (first.clone(), ticker.start());
    loop {
        let tick = ticker.wait();
        let now = filter(tracer.read()?);
        let at = Instant::now();
        let named = places.name(&now.since(&prev));
        let seconds = (at - prev_at).as_secs_f64();
        let line = if args.json {
            out::interval_json(tick.number, seconds, &named).to_string()
        } else {
            out::interval_text(tick.number, seconds, &named)
        };
        if emit_line(&mut stdout, &line)? {
            return Ok(());
        }
        (prev, prev_at) = (now, at);
        if tick.interrupted || tick.at_end {
            break;
        }
    }
    let seconds = (prev_at - ticker.start()).as_secs_f64();
    let all = prev.since(&first);
    if all.missed > 0 {
        eprintln!(
            "pktlab: warning: {}",
            pktlab_loss::drops::missed_line(all.missed)
        );
    }
    let named = places.name(&all);
    let backlogs = pktlab_lab::softnet::deltas(
        &softnet_before,
        &pktlab_lab::softnet::read().unwrap_or_default(),
    );
    let line = if args.json {
        out::summary_json(seconds, &named, &backlogs).to_string()
    } else {
        out::summary_text(seconds, args.all, &named, &backlogs)
    };
    emit_line(&mut stdout, &line)?;
    Ok(())
}
