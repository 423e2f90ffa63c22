//! What the generator's and the receiver's options mean: the words of
//! `pktlab gen` and `pktlab recv` (and of pkt-gen's command line, which is
//! turned into them) checked and turned into a [`GenConfig`] or a
//! [`RecvConfig`]. Every bad value is found here, before a port opens.

use std::net::IpAddr;
use std::time::Duration;

use pktlab_io::afxdp::{XdpConfig, ZeroCopy};
use pktlab_io::xdprecv::{Timing, XdpRecvConfig};
use pktlab_wire::flow::{self, FlowOrder, FlowSet};
use pktlab_wire::frame::FrameSpec;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::range::{EndpointRange, Family};
use pktlab_wire::rfc4814::PortMode;
use pktlab_wire::size::SizeMix;
use pktlab_wire::units;

use crate::backend::IoSpec;
use crate::gen::GenConfig;
use crate::recv::RecvConfig;
use crate::rx::RxPlan;
use crate::tx::TxPlan;
use crate::EngineError;

fn bad(message: impl Into<String>) -> EngineError {
    EngineError::BadPlan(message.into())
}

/// The generator's options, as words (`pktlab gen`'s flags).
#[derive(Clone, Debug, Default)]
pub struct GenOptions {
    pub iface: Option<String>,
    pub io: String,
    pub zerocopy: String,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub inet6: bool,
    pub src_mac: Option<String>,
    pub dst_mac: Option<String>,
    pub size: Option<String>,
    pub count: Option<String>,
    pub duration: Option<String>,
    pub rate: Option<String>,
    pub link_speed: Option<String>,
    pub threads: usize,
    pub cpus: Option<String>,
    pub vlan: Option<u16>,
    pub ttl: u8,
    pub flows: String,
    /// `ranges` or `rfc4814` (seeded by `seed` too).
    pub ports: String,
    pub seed: u64,
    pub batch: usize,
    pub interval: String,
    pub allow_public: bool,
}

/// A checked generator configuration, and what is left to look up.
#[derive(Debug)]
pub struct GenSetup {
    pub config: GenConfig,
    /// The interface and the first flow's destination whose next hop's MAC
    /// is the frames' destination MAC, when no MAC was given (the kernel's
    /// route and neighbour tables know it: the lab crate reads them).
    pub next_hop: Option<(String, IpAddr)>,
}

/// Turns the generator's options into a configuration.
pub fn gen_config(o: &GenOptions) -> Result<GenSetup, EngineError> {
    let io: IoSpec = o.io.parse()?;
    if io.needs_iface() && o.iface.is_none() {
        return Err(bad(format!(
            "--io {} needs an interface: give -i IFACE",
            io.name()
        )));
    }
    let flows = flows_of(o.src.as_deref(), o.dst.as_deref(), o.inet6)?;
    if !o.allow_public {
        pktlab_wire::safety::check_destinations(&flows)?;
    }
    let sizes: SizeMix = match &o.size {
        Some(size) => size.parse()?,
        None => SizeMix::single(pktlab_wire::frame::min_frame_size(
            flows.family(),
            o.vlan.is_some(),
        ))?,
    };
    let order = match o.flows.as_str() {
        "seq" | "sequential" => FlowOrder::Sequential,
        "random" => FlowOrder::Random { seed: o.seed },
        other => {
            return Err(bad(format!(
                "invalid flow order '{other}': use seq or random"
            )))
        }
    };
    let ports = PortMode::parse(&o.ports, o.seed)?;
    let plan = tx_plan(o, &io, &sizes)?;
    let mut frames = frame_spec(o, flows, (order, ports), sizes)?;
    // The interface is looked up even when it is not used (null, pcap), so a
    // typo is caught the same way with every backend.
    let mut next_hop = None;
    if let Some(name) = &o.iface {
        let iface = pktlab_io::iface::lookup(name)?;
        if o.src_mac.is_none() {
            frames.src_mac = MacAddr(iface.mac);
        }
        if o.dst_mac.is_none() && io.needs_iface() {
            next_hop = Some((name.clone(), frames.flows.flow(0).dst));
        }
    }
    frames.validate_threads(o.threads as u32)?;
    Ok(GenSetup {
        config: GenConfig {
            io,
            iface: o.iface.clone(),
            frames,
            xdp: xdp_config(&o.zerocopy)?,
            plan,
        },
        next_hop,
    })
}

/// How many, how long, how fast, with how many threads.
fn tx_plan(o: &GenOptions, io: &IoSpec, sizes: &SizeMix) -> Result<TxPlan, EngineError> {
    let count = o.count.as_deref().map(units::parse_count).transpose()?;
    if count == Some(0) {
        return Err(bad("invalid count 0: give at least 1 frame"));
    }
    let duration = positive_time(o.duration.as_deref(), "duration")?;
    let link = o
        .link_speed
        .as_deref()
        .map(units::parse_link_speed)
        .transpose()?;
    let rate_pps = match o.rate.as_deref() {
        Some(r) => Some(units::parse_rate(r)?.to_pps(sizes.mean(), link)?),
        None => None,
    };
    let interval = interval(&o.interval)?;
    let cpus = cpus(o.cpus.as_deref())?;
    pktlab_wire::check_threads(o.threads).map_err(|e| bad(e.to_string()))?;
    if o.batch == 0 || o.batch > 4096 {
        return Err(bad(format!("invalid batch {}: use 1 to 4096", o.batch)));
    }
    Ok(TxPlan {
        threads: o.threads,
        count,
        duration,
        rate_pps,
        batch: o.batch,
        interval,
        cpus,
        netns: None,
        iface: o.iface.clone().filter(|_| io.needs_iface()),
        share: None,
    })
}

/// The frames: addresses given by hand are checked before anything is
/// looked up.
fn frame_spec(
    o: &GenOptions,
    flows: FlowSet,
    (order, ports): (FlowOrder, PortMode),
    sizes: SizeMix,
) -> Result<FrameSpec, EngineError> {
    let mac = |text: &Option<String>| text.as_deref().map(str::parse::<MacAddr>).transpose();
    let frames = FrameSpec {
        src_mac: mac(&o.src_mac)?.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 1])),
        dst_mac: mac(&o.dst_mac)?.unwrap_or(MacAddr([0x02, 0, 0, 0, 0, 2])),
        vlan: o.vlan,
        ttl: o.ttl,
        flows,
        order,
        sizes,
        ports,
    };
    frames.validate()?;
    Ok(frames)
}

/// The range `-s` (`src`) or `-d` stands for when not given: the built-in
/// lab's, of the configuration's family.
pub fn default_range(cfg: &GenConfig, src: bool) -> &'static str {
    let v6 = cfg.frames.flows.family() == Family::Inet6;
    match (src, v6) {
        (true, false) => flow::LAB_SRC_V4,
        (false, false) => flow::LAB_DST_V4,
        (true, true) => flow::LAB_SRC_V6,
        (false, true) => flow::LAB_DST_V6,
    }
}

/// The flows of -s/-d/-6 as `gen` reads them (`recv` reads the same
/// options to know which streams to expect): the built-in lab's ranges are
/// the defaults, of the family the given addresses (or -6) choose.
pub fn flows_of(src: Option<&str>, dst: Option<&str>, inet6: bool) -> Result<FlowSet, EngineError> {
    let src: Option<EndpointRange> = src.map(str::parse).transpose()?;
    let dst: Option<EndpointRange> = dst.map(str::parse).transpose()?;
    let family = src
        .as_ref()
        .or(dst.as_ref())
        .map(|r| r.family())
        .unwrap_or(if inet6 { Family::Inet6 } else { Family::Inet4 });
    if inet6 && family != Family::Inet6 {
        return Err(bad("-6 asks for IPv6, but the ranges given are IPv4"));
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

/// The receiver's options, as words (`pktlab recv`'s flags).
#[derive(Clone, Debug)]
pub struct RecvOptions {
    pub iface: Option<String>,
    pub io: String,
    pub zerocopy: String,
    pub count: Option<String>,
    pub duration: Option<String>,
    pub idle: Option<String>,
    pub threads: usize,
    pub cpus: Option<String>,
    pub streams: Option<u32>,
    pub pass: bool,
    pub latency: String,
    pub interval: String,
    /// The generator's ranges, when known: the streams to expect.
    pub src: Option<String>,
    pub dst: Option<String>,
    pub inet6: bool,
}

impl RecvOptions {
    /// How many streams the generator's ranges make, when they were given.
    pub fn expected_streams(&self) -> Result<Option<u64>, EngineError> {
        if self.src.is_none() && self.dst.is_none() && !self.inet6 {
            return Ok(None);
        }
        let flows = flows_of(self.src.as_deref(), self.dst.as_deref(), self.inet6)?;
        Ok(Some(u64::from(flows.count())))
    }
}

/// Turns the receiver's options into a configuration.
pub fn recv_config(o: &RecvOptions) -> Result<RecvConfig, EngineError> {
    let io: IoSpec = o.io.parse()?;
    if io == IoSpec::Null {
        return Err(bad(
            "--io null only generates: recv needs auto, afxdp, afpacket, xdp or pcap:FILE",
        ));
    }
    if io.needs_iface() && o.iface.is_none() {
        return Err(bad(format!(
            "--io {} needs an interface: give -i IFACE",
            io.name()
        )));
    }
    if let Some(name) = &o.iface {
        pktlab_io::iface::lookup(name)?;
    }
    let count = o.count.as_deref().map(units::parse_count).transpose()?;
    if count == Some(0) {
        return Err(bad("invalid count 0: give at least 1 frame"));
    }
    let duration = positive_time(o.duration.as_deref(), "duration")?;
    let idle = positive_time(o.idle.as_deref(), "idle time")?;
    let interval = interval(&o.interval)?;
    pktlab_wire::check_threads(o.threads).map_err(|e| bad(e.to_string()))?;
    let xdp_recv = xdp_recv(o, &io)?;
    let needs_iface = io.needs_iface();
    Ok(RecvConfig {
        io,
        iface: o.iface.clone(),
        xdp: xdp_config(&o.zerocopy)?,
        xdp_recv,
        plan: RxPlan {
            threads: o.threads,
            count,
            duration,
            idle,
            interval,
            cpus: cpus(o.cpus.as_deref())?,
            netns: None,
            iface: o.iface.clone().filter(|_| needs_iface),
        },
    })
}

/// The XDP receiver's settings: its streams sized to the run (the
/// generator's flows when its ranges are known), and the options that
/// apply to it only.
fn xdp_recv(o: &RecvOptions, io: &IoSpec) -> Result<XdpRecvConfig, EngineError> {
    let max = pktlab_io::xdprecv::MAX_STREAMS;
    let streams = match (o.streams, o.expected_streams()?) {
        (Some(n), _) => n,
        (None, Some(flows)) => flows.clamp(1, u64::from(max)) as u32,
        (None, None) => pktlab_io::xdprecv::DEFAULT_STREAMS,
    };
    if streams == 0 || streams > max {
        return Err(bad(format!(
            "invalid stream count {streams}: give 1 to {max} (stream ids are 24 bits)"
        )));
    }
    if *io != IoSpec::Xdp && o.pass {
        return Err(bad("--pass applies to --io xdp only"));
    }
    let timing: Timing = o.latency.parse().map_err(bad)?;
    if *io != IoSpec::Xdp && timing != Timing::Every {
        return Err(bad(format!(
            "--latency {} applies to --io xdp only (the other receivers time frames per batch or per frame at no cost worth saving)",
            o.latency
        )));
    }
    Ok(XdpRecvConfig {
        streams,
        pass: o.pass,
        timing,
        ..XdpRecvConfig::default()
    })
}

/// A time that, when given, is more than zero.
fn positive_time(text: Option<&str>, what: &str) -> Result<Option<Duration>, EngineError> {
    let d = text.map(units::parse_duration).transpose()?;
    if d == Some(Duration::ZERO) {
        return Err(bad(format!("invalid {what} 0: give a positive time")));
    }
    Ok(d)
}

/// The report interval: at least 10 ms.
fn interval(text: &str) -> Result<Duration, EngineError> {
    let interval = units::parse_duration(text)?;
    if interval < Duration::from_millis(10) {
        return Err(bad(format!("invalid interval '{text}': use at least 10ms")));
    }
    Ok(interval)
}

/// The CPUs of `--cpus`, checked against the ones this process may use.
pub fn cpus(list: Option<&str>) -> Result<Vec<usize>, EngineError> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let cpus = crate::affinity::parse_cpu_list(list)?;
    crate::affinity::check_cpus(&cpus)?;
    Ok(cpus)
}

/// AF_XDP settings from `--zerocopy auto|on|off`.
pub fn xdp_config(zerocopy: &str) -> Result<XdpConfig, EngineError> {
    let zerocopy = match zerocopy {
        "auto" => ZeroCopy::Auto,
        "on" => ZeroCopy::On,
        "off" => ZeroCopy::Off,
        other => {
            return Err(bad(format!(
                "invalid --zerocopy '{other}': use auto, on or off"
            )))
        }
    };
    Ok(XdpConfig {
        zerocopy,
        ..Default::default()
    })
}
