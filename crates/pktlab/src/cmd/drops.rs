//! `pktlab drops`: the drop tracer alone, for runs made by another
//! generator: dropped test frames per second by place and reason (every
//! reason traced), then a summary, with the CPUs' backlog refusals the
//! kernel counted meanwhile.

use pktlab_loss::watch::{watch, WatchSpec, Watched};
use pktlab_report::drops as out;

use crate::cmd::common::emit_line;

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
    let spec = WatchSpec::parse(
        &args.interval,
        args.time.as_deref(),
        args.netns.as_deref(),
        args.all,
    )?;
    crate::cmd::common::install_signals()?;
    let mut stdout = std::io::stdout().lock();
    watch(&spec, |seen| {
        let line = match seen {
            Watched::Ready if args.json => {
                out::ready_json(args.all, args.netns.as_deref()).to_string()
            }
            Watched::Ready => out::header(),
            Watched::Interval {
                number,
                seconds,
                drops,
            } if args.json => out::interval_json(number, seconds, drops).to_string(),
            Watched::Interval {
                number,
                seconds,
                drops,
            } => out::interval_text(number, seconds, drops),
            Watched::Summary {
                seconds,
                drops,
                backlogs,
                missed,
            } => {
                if missed > 0 {
                    eprintln!(
                        "pktlab: warning: {}",
                        pktlab_loss::drops::missed_line(missed)
                    );
                }
                match args.json {
                    true => out::summary_json(seconds, drops, backlogs).to_string(),
                    false => out::summary_text(seconds, args.all, drops, backlogs),
                }
            }
        };
        emit_line(&mut stdout, &line)
    })
}
