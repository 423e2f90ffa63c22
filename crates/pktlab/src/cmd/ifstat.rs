//! `pktlab ifstat`: per-second interface counters, like `netstat -iw 1`.

use pktlab_lab::ifstat::{IfSeen, IfWatch};
use pktlab_report::ifstat::{self as out, IfstatRow};

use crate::cmd::common::emit_line;

/// Print input packets, errors, drops and bytes, and output packets,
/// errors, bytes and drops, once per interval, summed over the interfaces
/// (all but lo by default), like FreeBSD's `netstat -iw 1`. idrops counts
/// the kernel's rx_dropped plus the NIC's rx_missed_errors; odrops is
/// tx_dropped.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Read the interfaces of this network namespace
    #[arg(long = "netns", value_name = "NS")]
    pub netns: Option<String>,
    /// Stop after COUNT intervals [default: until Ctrl-C]
    #[arg(short = 'c', long = "count", value_name = "COUNT")]
    pub count: Option<u64>,
    /// Interval between lines
    #[arg(
        short = 'w',
        long = "interval",
        value_name = "TIME",
        default_value = "1s"
    )]
    pub interval: String,
    /// One JSON object per interval instead of text
    #[arg(long = "json")]
    pub json: bool,
    /// Interfaces [default: every interface but lo]
    #[arg(value_name = "IFACE")]
    pub ifaces: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let watch = IfWatch::open(
        &args.interval,
        args.count,
        args.netns.as_deref(),
        &args.ifaces,
    )?;
    crate::cmd::common::install_signals()?;
    let what = match watch.names() {
        [one] => one.clone(),
        _ => "(Total)".to_string(),
    };
    let mut stdout = std::io::stdout().lock();
    watch.run(|seen| match seen {
        // netstat repeats its header every 21 lines.
        IfSeen::Waiting { index } if !args.json && index % 21 == 0 => {
            emit_line(&mut stdout, &out::header(&what))
        }
        IfSeen::Waiting { .. } => Ok(false),
        IfSeen::Interval {
            number,
            seconds,
            deltas,
        } => {
            let row = IfstatRow::sum(deltas);
            let line = match args.json {
                true => row.json(number as usize, seconds).to_string(),
                false => out::row(&row),
            };
            emit_line(&mut stdout, &line)
        }
    })
}
