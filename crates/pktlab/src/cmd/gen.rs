//! `pktlab gen`: the generator.

use std::time::Duration;

use clap::Parser;
use pktlab_engine::backend::IoSpec;
use pktlab_engine::gen::{run_gen_accounted, GenConfig};
use pktlab_engine::tx::{TxEvent, TxPlan, DEFAULT_BATCH};
use pktlab_engine::StopSignal;
use pktlab_loss::drops::{self, DropTrace};
use pktlab_report::drops as report_drops;
use pktlab_report::gen::{self as out, GenInfo};
use pktlab_wire::flow::{FlowOrder, FlowSet};
use pktlab_wire::frame::FrameSpec;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::range::{EndpointRange, Family};
use pktlab_wire::size::SizeMix;
use pktlab_wire::{flow, units};

use crate::cmd::common::{self, Output};
use crate::error::usage;

/// Generate test traffic, like netmap's `pkt-gen -f tx`.
///
/// Every frame is Ethernet / IPv4 or IPv6 / UDP and carries pktlab's test
/// payload: a magic, the stream id (the flow's index), a per-stream
/// sequence number and a TX timestamp. The timestamp is CLOCK_REALTIME,
/// read once per batch just before the batch is queued, so a receiver on
/// the same host (or on a PTP-synchronised one) measures one-way latency.
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Interface to send on (not needed with --io pcap:FILE or null)
    #[arg(short = 'i', long = "iface", value_name = "IFACE")]
    pub iface: Option<String>,
    /// Packet I/O: auto (AF_XDP where every thread gets a queue of its own, else AF_PACKET),
    /// afxdp, afpacket, xdp (frames built by an XDP program in the kernel: live frames,
    /// one CPU per thread; a veth needs GRO on its peer), pcap:FILE (write the frames
    /// to a pcap file), or null (build and drop)
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
    /// Source range, pkt-gen syntax: 198.18.10.1:2000-198.18.10.20, [2001:2::1]:2000-[2001:2::14]:2000
    /// [default: the built-in lab's, 198.18.10.1:2000-198.18.10.20]
    #[arg(short = 's', long = "src", value_name = "RANGE", verbatim_doc_comment)]
    pub src: Option<String>,
    /// Destination range, same syntax [default: the built-in lab's, 198.19.10.1:2000-198.19.10.100]
    #[arg(short = 'd', long = "dst", value_name = "RANGE")]
    pub dst: Option<String>,
    /// Use the built-in lab's IPv6 ranges when -s/-d are not given
    #[arg(short = '6', long = "inet6")]
    pub inet6: bool,
    /// Source MAC [default: the interface's]
    #[arg(short = 'S', long = "src-mac", value_name = "MAC")]
    pub src_mac: Option<String>,
    /// Destination MAC [default: the next hop's, from the kernel's route and neighbour tables]
    #[arg(short = 'D', long = "dst-mac", value_name = "MAC")]
    pub dst_mac: Option<String>,
    /// Frame size including the FCS (64-9018), imix (64:7,594:4,1518:1), a weighted list
    /// such as 64:7,570:4,1518:1, or an RFC 6985 genome such as aaaag
    /// [default: the smallest frame of the family: 64 for IPv4, 80 for IPv6]
    #[arg(short = 'l', long = "size", value_name = "SIZE", verbatim_doc_comment)]
    pub size: Option<String>,
    /// Frames to send in total (1M, 10k, ...) [default: no limit]
    #[arg(short = 'n', long = "count", value_name = "N")]
    pub count: Option<String>,
    /// How long to send (30s, 2m, ...) [default: no limit]
    #[arg(short = 't', long = "duration", value_name = "TIME")]
    pub duration: Option<String>,
    /// Total rate over all threads: pps (10kpps, 1.5Mpps), L2 bits per second (1Gbps), or N% of --link-speed
    /// [default: as fast as possible]
    #[arg(short = 'R', long = "rate", value_name = "RATE", verbatim_doc_comment)]
    pub rate: Option<String>,
    /// Link speed for -R N% and line-rate figures (1G, 10G, 25G, ...)
    #[arg(long = "link-speed", value_name = "SPEED")]
    pub link_speed: Option<String>,
    /// TX threads; count and rate are split across them
    #[arg(short = 'p', long = "threads", value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Pin thread i to the i-th CPU of this list (0-3,6)
    #[arg(long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,
    /// 802.1Q VLAN id (1-4094)
    #[arg(long = "vlan", value_name = "ID")]
    pub vlan: Option<u16>,
    /// IPv4 TTL / IPv6 hop limit
    #[arg(long = "ttl", value_name = "N", default_value_t = 64)]
    pub ttl: u8,
    /// Flow order: seq (odometer, like pkt-gen) or random (a seeded permutation)
    #[arg(long = "flows", value_name = "ORDER", default_value = "seq")]
    pub flows: String,
    /// Seed of --flows random
    #[arg(long = "seed", value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Frames per batch handed to the port (--io xdp: per live-frames flush, at most 128 on veth)
    #[arg(long = "batch", value_name = "N", default_value_t = DEFAULT_BATCH)]
    pub batch: usize,
    /// Report interval (1s, 500ms, ...)
    #[arg(long = "interval", value_name = "TIME", default_value = "1s")]
    pub interval: String,
    /// Allow destinations outside the benchmark, private and documentation ranges
    #[arg(long = "allow-public")]
    pub allow_public: bool,
    /// Trace the kernel's drops of test frames on this host while sending (every
    /// namespace: the built-in lab's DUT is one) and print them by place at the end:
    /// auto (where BPF is allowed, else one line), on (fail without BPF), or off
    #[arg(
        long = "drop-trace",
        value_name = "MODE",
        default_value = "off",
        verbatim_doc_comment
    )]
    pub drop_trace: String,
    #[command(flatten)]
    pub output: Output,
}

/// How long frames still in flight when the last one left may take to
/// be dropped further on (a DUT's queues): read before the tracer's last
/// count.
const IN_FLIGHT: Duration = Duration::from_millis(200);

/// How much longer to wait, at most, for the host's backlogs to empty and
/// the drops to stop (a loaded host's softirq work lags behind).
const SETTLE_LIMIT: Duration = Duration::from_secs(3);

pub fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    // Off by default: gen cannot know the loss (the receiver does), so its
    // own count of drops is a diagnostic asked for, not a verdict; and
    // the sender is where a BPF program on the drop path and its loading
    // would be paid on every run, also by pkt-gen's users.
    let trace: DropTrace = args.drop_trace.parse()?;
    let stop = StopSignal::new();
    common::install_signals()?;
    let tracer = common::drop_tracer(trace, "no drops are reported")?;
    let window = match trace {
        DropTrace::Off => None,
        _ => Some(tracer.window()?),
    };
    let src = args
        .src
        .clone()
        .unwrap_or_else(|| default_range(&cfg, true));
    let dst = args
        .dst
        .clone()
        .unwrap_or_else(|| default_range(&cfg, false));
    let sizes = &cfg.frames.sizes;
    let info = GenInfo {
        iface: cfg.iface.clone(),
        flows: cfg.frames.flows.count(),
        sizes: sizes.to_string(),
        fixed_size: (sizes.min() == sizes.max()).then(|| sizes.min()),
        requested_pps: cfg.plan.rate_pps,
        threads: cfg.plan.threads,
    };
    let o = &args.output;
    let result = run_gen_accounted(&cfg, &stop, |event| match event {
        TxEvent::Started { backend } => {
            if !o.json && !o.quiet {
                println!("{}", out::header(&info, &backend, &src, &dst));
            }
        }
        TxEvent::Interval(iv) => {
            o.progress(|| out::interval_json(&iv), || out::interval_line(&iv));
        }
    });
    // --io xdp: frames lost after the redirect fail the run, after the
    // summary of what it did.
    let (summary, lost) = result?;
    let dropped = match window {
        Some(w) => {
            std::thread::sleep(IN_FLIGHT);
            w.settle(SETTLE_LIMIT);
            let lab = drops::LabNamespaces::builtin_around(&drops::own_netns());
            common::traced(w.end()?).map(|t| (drops::host_drops(&t.places, lab.as_ref()), t.missed))
        }
        None => None,
    };
    o.summary(
        || {
            let mut v = out::summary_json(&summary, &info);
            if let Some((d, missed)) = &dropped {
                v["drops"] = report_drops::host_drops_json(d);
                if *missed > 0 {
                    v["drops"]["tracer_missed"] = (*missed).into();
                }
            }
            v
        },
        || {
            let mut text = out::summary_text(&summary, &info);
            if let Some((d, _)) = &dropped {
                text += &report_drops::host_drops_line(d);
                text += "\n";
            }
            text
        },
    );
    match lost {
        Some(lost) => Err(pktlab_engine::EngineError::Undelivered(lost).into()),
        None => Ok(()),
    }
}

fn default_range(cfg: &GenConfig, src: bool) -> String {
    let v6 = cfg.frames.flows.family() == Family::Inet6;
    match (src, v6) {
        (true, false) => flow::LAB_SRC_V4,
        (false, false) => flow::LAB_DST_V4,
        (true, true) => flow::LAB_SRC_V6,
        (false, true) => flow::LAB_DST_V6,
    }
    .to_string()
}

/// Turns the arguments into a checked configuration: every usage error is
/// found here, before any port is opened.
pub fn config(args: &Args) -> anyhow::Result<GenConfig> {
    let io: IoSpec = args.io.parse()?;
    if io.needs_iface() && args.iface.is_none() {
        return Err(usage(format!(
            "--io {} needs an interface: give -i IFACE",
            io.name()
        )));
    }
    let flows = flow_set(args)?;
    if !args.allow_public {
        pktlab_wire::safety::check_destinations(&flows)?;
    }
    let sizes: SizeMix = match &args.size {
        Some(size) => size.parse()?,
        None => SizeMix::single(pktlab_wire::frame::min_frame_size(
            flows.family(),
            args.vlan.is_some(),
        ))?,
    };
    let order = match args.flows.as_str() {
        "seq" | "sequential" => FlowOrder::Sequential,
        "random" => FlowOrder::Random { seed: args.seed },
        other => {
            return Err(usage(format!(
                "invalid flow order '{other}': use seq or random"
            )))
        }
    };
    let count = args.count.as_deref().map(units::parse_count).transpose()?;
    if count == Some(0) {
        return Err(usage("invalid count 0: give at least 1 frame"));
    }
    let duration = args
        .duration
        .as_deref()
        .map(units::parse_duration)
        .transpose()?;
    if duration == Some(Duration::ZERO) {
        return Err(usage("invalid duration 0: give a positive time"));
    }
    let link = args
        .link_speed
        .as_deref()
        .map(units::parse_link_speed)
        .transpose()?;
    let rate_pps = match args.rate.as_deref() {
        Some(r) => Some(units::parse_rate(r)?.to_pps(sizes.mean(), link)?),
        None => None,
    };
    let interval = units::parse_duration(&args.interval)?;
    if interval < Duration::from_millis(10) {
        return Err(usage(format!(
            "invalid interval '{}': use at least 10ms",
            args.interval
        )));
    }
    let cpus = common::cpus(args.cpus.as_deref())?;
    pktlab_wire::check_threads(args.threads).map_err(|e| usage(e.to_string()))?;
    if args.batch == 0 || args.batch > 4096 {
        return Err(usage(format!(
            "invalid batch {}: use 1 to 4096",
            args.batch
        )));
    }
    // Addresses given by hand are checked before anything is looked up.
    let src_mac = args
        .src_mac
        .as_deref()
        .map(str::parse::<MacAddr>)
        .transpose()?;
    let dst_mac = args
        .dst_mac
        .as_deref()
        .map(str::parse::<MacAddr>)
        .transpose()?;
    let mut frames = FrameSpec {
        src_mac: src_mac.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 1])),
        dst_mac: dst_mac.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 2])),
        vlan: args.vlan,
        ttl: args.ttl,
        flows,
        order,
        sizes,
    };
    frames.validate()?;
    // The interface is looked up even when it is not used (null, pcap), so a
    // typo is caught the same way with every backend.
    if let Some(name) = &args.iface {
        let iface = pktlab_io::iface::lookup(name)?;
        if src_mac.is_none() {
            frames.src_mac = MacAddr(iface.mac);
        }
        if dst_mac.is_none() && io.needs_iface() {
            frames.dst_mac = common::next_hop_mac(name, frames.flows.flow(0).dst)?;
        }
    }
    frames.validate_threads(args.threads as u32)?;
    let needs_iface = io.needs_iface();
    Ok(GenConfig {
        io,
        iface: args.iface.clone(),
        frames,
        xdp: common::xdp_config(&args.zerocopy)?,
        plan: TxPlan {
            threads: args.threads,
            count,
            duration,
            rate_pps,
            batch: args.batch,
            interval,
            cpus,
            netns: None,
            iface: args.iface.clone().filter(|_| needs_iface),
            share: None,
        },
    })
}

/// The flows from -s/-d, with the built-in lab's ranges as defaults of the
/// family the given addresses (or -6) choose.
fn flow_set(args: &Args) -> anyhow::Result<FlowSet> {
    flows_of(args.src.as_deref(), args.dst.as_deref(), args.inet6)
}

/// The flows of -s/-d/-6 as `gen` reads them (`recv` reads the same
/// options to know which streams to expect).
pub(crate) fn flows_of(
    src: Option<&str>,
    dst: Option<&str>,
    inet6: bool,
) -> anyhow::Result<FlowSet> {
    let src: Option<EndpointRange> = src.map(str::parse).transpose()?;
    let dst: Option<EndpointRange> = dst.map(str::parse).transpose()?;
    let family = src
        .as_ref()
        .or(dst.as_ref())
        .map(|r| r.family())
        .unwrap_or(if inet6 { Family::Inet6 } else { Family::Inet4 });
    if inet6 && family != Family::Inet6 {
        return Err(usage("-6 asks for IPv6, but the ranges given are IPv4"));
    }
    let (dsrc, ddst) = match family {
        Family::Inet4 => (flow::LAB_SRC_V4, flow::LAB_DST_V4),
        Family::Inet6 => (flow::LAB_SRC_V6, flow::LAB_DST_V6),
    };
    let src = match src {
        Some(s) => s,
        None => dsrc.parse()?,
    };
    let dst = match dst {
        Some(d) => d,
        None => ddst.parse()?,
    };
    Ok(FlowSet::new(src, dst)?)
}
