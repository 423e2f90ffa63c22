//! `pktlab ifstat`: per-second interface counters, like `netstat -iw 1`.

use std::time::{Duration, Instant};

use pktlab_engine::stop::Ticker;

use pktlab_lab::{netns, ports};
use pktlab_report::ifstat::{self as out, IfstatRow};
use pktlab_wire::units;

use crate::cmd::common::emit_line;
use crate::error::usage;

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
    let interval = units::parse_duration(&args.interval)?;
    if interval < Duration::from_millis(10) {
        return Err(usage(format!(
            "invalid interval '{}': use at least 10ms",
            args.interval
        )));
    }
    if args.count == Some(0) {
        return Err(usage("invalid count 0: use at least 1"));
    }
    let ns = args.netns.as_deref();
    if let Some(n) = ns {
        if !netns::exists(n) {
            return Err(usage(format!("network namespace {n} does not exist")));
        }
    }
    let names = if args.ifaces.is_empty() {
        match ns {
            Some(n) => netns::within(n, ports::iface_names)??,
            None => ports::iface_names()?,
        }
    } else {
        args.ifaces.clone()
    };
    if names.is_empty() {
        return Err(usage("no interface to watch"));
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let read = || ports::counters_at(ns, &refs);
    // A bad interface name is bad input: say so before the first interval.
    let mut prev = read().map_err(|e| usage(e.to_string()))?;
    crate::cmd::common::install_signals()?;
    let what = if names.len() == 1 {
        names[0].clone()
    } else {
        "(Total)".to_string()
    };
    let mut ticker = Ticker::new(interval, None);
    let mut prev_at = ticker.start();
    let mut stdout = std::io::stdout().lock();
    for t in 0.. {
        // netstat repeats its header every 21 lines.
        if !args.json && t % 21 == 0 && emit_line(&mut stdout, &out::header(&what))? {
            return Ok(());
        }
        let tick = ticker.wait();
        if tick.interrupted {
            return Ok(());
        }
        let now = read()?;
        let at = Instant::now();
        let deltas: Vec<_> = now.iter().zip(&prev).map(|(n, p)| n.delta(p)).collect();
        let row = IfstatRow::sum(&deltas);
        let line = if args.json {
            row.json(tick.number as usize, (at - prev_at).as_secs_f64())
                .to_string()
        } else {
            out::row(&row)
        };
        if emit_line(&mut stdout, &line)? || args.count.is_some_and(|c| tick.number >= c) {
            return Ok(());
        }
        (prev, prev_at) = (now, at);
    }
    Ok(())
}
