//! `pktlab recv`: the receiver.

use std::time::Duration;

use clap::Parser;
use pktlab_engine::backend::IoSpec;
use pktlab_engine::recv::{run_recv, RecvConfig};
use pktlab_engine::rx::{RxEvent, RxPlan, RxSummary};
use pktlab_engine::StopSignal;
use pktlab_io::xdprecv::{Timing, XdpRecvConfig};
use pktlab_loss::drops::{self, DropTrace};
use pktlab_loss::tracer::Window;
use pktlab_report::recv::{self as out, RecvInfo};
use pktlab_wire::units;

use crate::cmd::common::{self, Output};
use crate::error::usage;

/// Receive and check test traffic, like netmap's `pkt-gen -f rx`.
///
/// Counts frames and bytes per interval and in total; checks pktlab's test
/// payload per stream (lost, out-of-order and duplicate frames), counts the
/// distinct flows (5-tuples) and the frames without a test payload
/// (foreign), and measures one-way latency from the payload's CLOCK_REALTIME
/// TX timestamp to the kernel's receive timestamp (meaningful when sender
/// and receiver share a clock). The interface's own counters are read at
/// the start and the end and reported next to pktlab's counts.
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Interface to receive on (not needed with --io pcap:FILE)
    #[arg(short = 'i', long = "iface", value_name = "IFACE")]
    pub iface: Option<String>,
    /// Packet I/O: auto (AF_XDP when there is a thread per queue, else AF_PACKET), afxdp,
    /// afpacket, xdp, or pcap:FILE (read frames from a pcap file). AF_XDP attaches an XDP
    /// program to the interface for the run (detached at exit, however pktlab ends) and
    /// timestamps frames per batch, AF_PACKET per frame. xdp checks and counts every frame
    /// in an XDP program, on every CPU, and drops it (or passes it on with --pass): no frame
    /// reaches pktlab, the fastest receiver; latency quantiles are within 1/128.
    #[arg(
        long = "io",
        value_name = "BACKEND",
        default_value = "auto",
        verbatim_doc_comment
    )]
    pub io: String,
    /// AF_XDP zero-copy: auto (where the driver has it), on, or off
    #[arg(long = "zerocopy", value_name = "MODE", default_value = "auto")]
    pub zerocopy: String,
    /// Stop after this many frames
    #[arg(short = 'n', long = "count", value_name = "N")]
    pub count: Option<String>,
    /// Stop after this long (30s, 2m, ...)
    #[arg(short = 't', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,
    /// Stop after this long without traffic, once traffic has started
    #[arg(short = 'W', long = "idle", value_name = "SECS")]
    pub idle: Option<String>,
    /// RX threads, sharing the interface by flow (PACKET_FANOUT_HASH)
    #[arg(short = 'p', long = "threads", value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Pin thread i to the i-th CPU of this list (0-3,6)
    #[arg(long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// --io xdp: stream ids with per-stream state (0 to N-1); test frames of other
    /// streams are counted as untracked. The maps take 64 bytes per stream.
    /// Default: the generator's flow count when -s, -d or -6 give its ranges, else 65536
    #[arg(long = "streams", value_name = "N")]
    pub streams: Option<u32>,
    /// --io xdp: pass the frames on to the kernel's stack instead of dropping them
    #[arg(long = "pass")]
    pub pass: bool,
    /// --io xdp: time every test frame (on); one test frame in N per CPU (1/N):
    /// every frame still counted and checked, latency from the sample, nearly
    /// the speed of off; or read no clock per frame (off): the fastest count, no
    /// latency, the last frame dated to within 5 ms
    #[arg(long = "latency", value_name = "on|off|1/N", default_value = "on")]
    pub latency: String,
    /// Report interval (1s, 500ms, ...)
    #[arg(long = "interval", value_name = "TIME", default_value = "1s")]
    pub interval: String,
    #[command(flatten)]
    pub output: Output,
    /// The generator's source range (gen's -s): with -d or -6, the streams
    /// to expect, and those that never arrived are reported
    #[arg(short = 's', long = "src", value_name = "RANGE")]
    pub src: Option<String>,
    /// The generator's destination range (gen's -d)
    #[arg(short = 'd', long = "dst", value_name = "RANGE")]
    pub dst: Option<String>,
    /// The generator's -6: the built-in lab's IPv6 ranges
    #[arg(short = '6', long = "inet6")]
    pub inet6: bool,
    /// Trace the kernel's drops of test frames on this host while receiving (every
    /// namespace: the built-in lab's DUT is one) and say where the loss went: auto (where
    /// BPF is allowed, else one line and the receiver's ring only), on (fail without
    /// BPF), or off. [default: auto when -s, -d or -6 give the generator's ranges, else off]
    #[arg(long = "drop-trace", value_name = "MODE", verbatim_doc_comment)]
    pub drop_trace: Option<String>,
}

/// `--drop-trace`. Auto by default only when the ranges are given: only
/// then does the receiver know its whole loss (the streams that never
/// arrived included), so a split of a bare recv's loss would leave out
/// what a blackhole took; and a plain recv (another generator's frames, a
/// pcap file) loads no BPF and puts no program on the kernel's drop path
/// it did not ask for. Nothing to trace when reading a file.
fn drop_trace(args: &Args, ranges: bool, io: &IoSpec) -> anyhow::Result<DropTrace> {
    Ok(match &args.drop_trace {
        Some(text) => text.parse()?,
        None if ranges && io.needs_iface() => DropTrace::Auto,
        None => DropTrace::Off,
    })
}

/// How many streams the generator's ranges make, when recv was given them.
fn expected_streams(args: &Args) -> anyhow::Result<Option<u64>> {
    if args.src.is_none() && args.dst.is_none() && !args.inet6 {
        return Ok(None);
    }
    let flows = super::gen::flows_of(args.src.as_deref(), args.dst.as_deref(), args.inet6)?;
    Ok(Some(u64::from(flows.count())))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    let expected = expected_streams(&args)?;
    let trace = drop_trace(&args, expected.is_some(), &cfg.io)?;
    common::install_signals()?;
    // Started before the receiver counts, so that it sees every frame's drop.
    let tracer = common::drop_tracer(trace, "the loss is attributed to the receiver's ring only")?;
    let window = match trace {
        DropTrace::Off => None,
        _ => Some(tracer.window()?),
    };
    let stop = StopSignal::new();
    let info = RecvInfo {
        iface: cfg.iface.clone(),
        threads: cfg.plan.threads,
    };
    let o = &args.output;
    let summary = run_recv(&cfg, &stop, |event| match event {
        RxEvent::Ready { backend } => {
            if o.json {
                // Lets a script start its generator only once frames are counted.
                common::print_json(&serde_json::json!({
                    "type": "ready",
                    "backend": backend,
                    "iface": info.iface,
                    "max_streams": pktlab_engine::seq::MAX_STREAMS,
                    "checker_max_bytes": pktlab_engine::rx::CHECKER_MAX_BYTES,
                }));
            } else if !o.quiet {
                println!("{}", out::header(&info, &backend));
                println!("{}", out::bound_line());
            }
        }
        RxEvent::Interval(iv) => {
            o.progress(|| out::interval_json(&iv), || out::interval_line(&iv));
        }
        RxEvent::Warning(w) => eprintln!("pktlab: warning: {w}"),
        RxEvent::Note(n) => eprintln!("{n}"),
    })?;
    let loss = match window {
        Some(w) => Some(where_lost(&summary, expected, &cfg, w)?),
        None => None,
    };
    o.summary(
        || {
            let mut v = out::summary_json(&summary, &info);
            if let Some(n) = expected {
                v["streams_expected"] = n.into();
                v["streams_missing"] = out::streams_missing(&summary, n).into();
            }
            if let Some((d, _)) = &loss {
                v["drops"] = serde_json::to_value(d).expect("serialisable");
            }
            v
        },
        || {
            let mut text = out::summary_text(&summary, &info);
            if let Some(n) = expected {
                text += &out::missing_line(&summary, n);
            }
            if let Some((d, sent)) = &loss {
                text += &pktlab_report::bench::drops_line(d, *sent);
                text += "\n";
            }
            text
        },
    );
    Ok(())
}

/// The receiver's loss split over the places the tracer saw since
/// `window` began, and the frames sent as the receiver knows them (the
/// share's base). The loss is the sequence gaps plus the frames of the
/// streams that never arrived (when the ranges are known).
fn where_lost(
    s: &RxSummary,
    expected: Option<u64>,
    cfg: &RecvConfig,
    window: Window<'_>,
) -> anyhow::Result<(drops::Drops, u64)> {
    let traced = common::traced(window.end()?);
    let missing = expected.map_or(0, |n| out::missing_frames(s, n));
    let lost = s.lost + missing;
    let received = s
        .packets
        .saturating_sub(s.foreign + s.untracked + s.duplicates);
    let netns = drops::own_netns();
    let lab = drops::LabNamespaces::builtin_around(&netns);
    let mut d = drops::reconcile_receiver(
        &drops::ReceiverLoss {
            lost,
            ring_drops: s.ring_drops,
            netns: &netns,
            iface: cfg.iface.as_deref().unwrap_or("-"),
        },
        traced.as_ref().map(|t| t.places.as_slice()),
        lab.as_ref(),
    );
    d.tracer_missed = traced.map_or(0, |t| t.missed);
    Ok((d, received + lost))
}

pub fn config(args: &Args) -> anyhow::Result<RecvConfig> {
    let io: IoSpec = args.io.parse()?;
    if io == IoSpec::Null {
        return Err(usage(
            "--io null only generates: recv needs auto, afxdp, afpacket, xdp or pcap:FILE",
        ));
    }
    if io.needs_iface() && args.iface.is_none() {
        return Err(usage(format!(
            "--io {} needs an interface: give -i IFACE",
            io.name()
        )));
    }
    if let Some(name) = &args.iface {
        pktlab_io::iface::lookup(name)?;
    }
    let count = args.count.as_deref().map(units::parse_count).transpose()?;
    if count == Some(0) {
        return Err(usage("invalid count 0: give at least 1 frame"));
    }
    let duration = args
        .duration
        .as_deref()
        .map(units::parse_duration)
        .transpose()?;
    let idle = args
        .idle
        .as_deref()
        .map(units::parse_duration)
        .transpose()?;
    for (what, d) in [("duration", duration), ("idle time", idle)] {
        if d == Some(Duration::ZERO) {
            return Err(usage(format!("invalid {what} 0: give a positive time")));
        }
    }
    let interval = units::parse_duration(&args.interval)?;
    if interval < Duration::from_millis(10) {
        return Err(usage(format!(
            "invalid interval '{}': use at least 10ms",
            args.interval
        )));
    }
    pktlab_wire::check_threads(args.threads).map_err(|e| usage(e.to_string()))?;
    let max = pktlab_io::xdprecv::MAX_STREAMS;
    // Sized to the run: the generator's flows when its ranges are known.
    let streams = match (args.streams, expected_streams(args)?) {
        (Some(n), _) => n,
        (None, Some(flows)) => flows.clamp(1, u64::from(max)) as u32,
        (None, None) => pktlab_io::xdprecv::DEFAULT_STREAMS,
    };
    if streams == 0 || streams > max {
        return Err(usage(format!(
            "invalid stream count {streams}: give 1 to {max} (stream ids are 24 bits)"
        )));
    }
    if io != IoSpec::Xdp && args.pass {
        return Err(usage("--pass applies to --io xdp only"));
    }
    let timing: Timing = args.latency.parse().map_err(usage)?;
    if io != IoSpec::Xdp && timing != Timing::Every {
        return Err(usage(format!(
            "--latency {} applies to --io xdp only (the other receivers time frames per batch or per frame at no cost worth saving)",
            args.latency
        )));
    }
    let needs_iface = io.needs_iface();
    Ok(RecvConfig {
        io,
        iface: args.iface.clone(),
        xdp: common::xdp_config(&args.zerocopy)?,
        xdp_recv: XdpRecvConfig {
            streams,
            pass: args.pass,
            timing,
            ..XdpRecvConfig::default()
        },
        plan: RxPlan {
            threads: args.threads,
            count,
            duration,
            idle,
            interval,
            cpus: common::cpus(args.cpus.as_deref())?,
            netns: None,
            iface: args.iface.clone().filter(|_| needs_iface),
        },
    })
}
