//! `pktlab recv`: the receiver.

use clap::Parser;
use pktlab_engine::options::{self, RecvOptions};
use pktlab_engine::recv::run_recv;
use pktlab_engine::rx::RxEvent;
use pktlab_engine::StopSignal;
use pktlab_loss::drops::{self, DropTrace};
use pktlab_report::recv::{self as out, RecvInfo};

use crate::cmd::common::{self, Output};

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

pub fn run(args: Args) -> anyhow::Result<()> {
    let options = args.options();
    let cfg = options::recv_config(&options)?;
    let expected = options.expected_streams()?;
    let trace = DropTrace::for_receiver(
        args.drop_trace.as_deref(),
        expected.is_some(),
        cfg.io.needs_iface(),
    )?;
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
                common::print_json(&out::ready_json(&backend, &info));
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
        Some(w) => {
            // The loss: the sequence gaps, and the frames of the streams
            // that never arrived (when the ranges are known).
            let missing = expected.map_or(0, |n| out::missing_frames(&summary, n));
            let iface = cfg.iface.as_deref().unwrap_or("-");
            let d = w.split_receiver_loss(summary.lost + missing, summary.ring_drops, iface)?;
            if d.tracer_missed > 0 {
                eprintln!("pktlab: warning: {}", drops::missed_line(d.tracer_missed));
            }
            // The frames sent, as the receiver knows them: the share's base.
            let received = summary
                .packets
                .saturating_sub(summary.foreign + summary.untracked + summary.duplicates);
            Some((d, received + summary.lost + missing))
        }
        None => None,
    };
    o.summary(
        || out::summary_json(&summary, &info, expected, loss.as_ref()),
        || out::summary_text(&summary, &info, expected, loss.as_ref()),
    );
    Ok(())
}

impl Args {
    /// The options as the engine reads them.
    pub fn options(&self) -> RecvOptions {
        RecvOptions {
            iface: self.iface.clone(),
            io: self.io.clone(),
            zerocopy: self.zerocopy.clone(),
            count: self.count.clone(),
            duration: self.duration.clone(),
            idle: self.idle.clone(),
            threads: self.threads,
            cpus: self.cpus.clone(),
            streams: self.streams,
            pass: self.pass,
            latency: self.latency.clone(),
            interval: self.interval.clone(),
            src: self.src.clone(),
            dst: self.dst.clone(),
            inet6: self.inet6,
        }
    }
}
