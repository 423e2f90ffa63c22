//! `pktlab drops`: the drop tracer alone, for runs made by another
//! generator: dropped test frames per second by place and reason, then a
//! summary.

use std::io::Write;
use std::time::{Duration, Instant};

use pktlab_io::droptrace::{netns_inode, DropCounts, DropTracer, Places};
use pktlab_report::drops as out;
use pktlab_wire::units;

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
    if emit(&mut stdout, &ready)? {
        return Ok(());
    }
    let start = Instant::now();
    let end = time.map(|d| start + d);
    let mut prev = first.clone();
    let mut prev_at = start;
    let mut t: u64 = 0;
    loop {
        t += 1;
        let mut deadline = start + interval * t as u32;
        if let Some(e) = end {
            deadline = deadline.min(e);
        }
        let mut stopped = false;
        while Instant::now() < deadline {
            if pktlab_engine::stop::interrupted() {
                stopped = true;
                break;
            }
            std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
        }
        let now = filter(tracer.read()?);
        let at = Instant::now();
        let seconds = (at - prev_at).as_secs_f64();
        let named = places.name(&now.since(&prev));
        let line = if args.json {
            out::interval_json(t, seconds, &named).to_string()
        } else {
            out::interval_text(t, seconds, &named)
        };
        if emit(&mut stdout, &line)? {
            return Ok(());
        }
        prev = now;
        prev_at = at;
        if stopped || end.is_some_and(|e| at >= e) {
            break;
        }
    }
    let seconds = (prev_at - start).as_secs_f64();
    let all = prev.since(&first);
    if all.missed > 0 {
        eprintln!(
            "pktlab: warning: {}",
            pktlab_loss::drops::missed_line(all.missed)
        );
    }
    let named = places.name(&all);
    let line = if args.json {
        out::summary_json(seconds, &named).to_string()
    } else {
        out::summary_text(seconds, args.all, &named)
    };
    emit(&mut stdout, &line)?;
    Ok(())
}

/// Writes a line and flushes (so a pipe sees each interval); true when the
/// reader has gone away.
fn emit(out: &mut impl Write, line: &str) -> anyhow::Result<bool> {
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Ok(()) => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(true),
        Err(e) => Err(e.into()),
    }
}
