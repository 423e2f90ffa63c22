//! `pktlab gen`: the generator.

use clap::Parser;
use pktlab_engine::gen::{run_gen_accounted, GenConfig};
use pktlab_engine::options::{self, GenOptions};
use pktlab_engine::tx::{TxEvent, DEFAULT_BATCH};
use pktlab_engine::StopSignal;
use pktlab_loss::drops::{self, DropTrace};
use pktlab_report::gen::{self as out, GenInfo};
use pktlab_wire::mac::MacAddr;

use crate::cmd::common::{self, Output};

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
    /// UDP ports: ranges (those of -s/-d, as flows) or rfc4814 (pseudorandom per frame: source 1024-65535, destination 1-49151; a stream is then an address pair)
    #[arg(long = "ports", value_name = "PORTS", default_value = "ranges")]
    pub ports: String,
    /// Seed of --flows random and --ports rfc4814
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
    let (src, dst) = out::ranges(&cfg, args.src.as_deref(), args.dst.as_deref());
    let info = GenInfo::of(&cfg);
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
        Some(w) => w.host_drops_after_send()?,
        None => None,
    };
    if let Some((_, missed)) = dropped.as_ref().filter(|d| d.1 > 0) {
        eprintln!("pktlab: warning: {}", drops::missed_line(*missed));
    }
    o.summary(
        || out::summary_json(&summary, &info, dropped.as_ref()),
        || out::summary_text(&summary, &info, dropped.as_ref()),
    );
    match lost {
        Some(lost) => Err(pktlab_engine::EngineError::Undelivered(lost).into()),
        None => Ok(()),
    }
}

impl Args {
    /// The options as the engine reads them.
    pub fn options(&self) -> GenOptions {
        GenOptions {
            iface: self.iface.clone(),
            io: self.io.clone(),
            zerocopy: self.zerocopy.clone(),
            src: self.src.clone(),
            dst: self.dst.clone(),
            inet6: self.inet6,
            src_mac: self.src_mac.clone(),
            dst_mac: self.dst_mac.clone(),
            size: self.size.clone(),
            count: self.count.clone(),
            duration: self.duration.clone(),
            rate: self.rate.clone(),
            link_speed: self.link_speed.clone(),
            threads: self.threads,
            cpus: self.cpus.clone(),
            vlan: self.vlan,
            ttl: self.ttl,
            flows: self.flows.clone(),
            ports: self.ports.clone(),
            seed: self.seed,
            batch: self.batch,
            interval: self.interval.clone(),
            allow_public: self.allow_public,
        }
    }
}

/// Turns the arguments into a checked configuration: every usage error is
/// found here, before any port is opened. The next hop's MAC comes from
/// the kernel's tables when -D does not give it.
pub fn config(args: &Args) -> anyhow::Result<GenConfig> {
    let setup = options::gen_config(&args.options())?;
    let mut cfg = setup.config;
    if let Some((iface, dst)) = setup.next_hop {
        cfg.frames.dst_mac = MacAddr(pktlab_lab::neigh::next_hop_mac(&iface, dst)?);
    }
    Ok(cfg)
}
