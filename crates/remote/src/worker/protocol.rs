//! The worker protocol: JSON lines between a controller and
//! `pktlab worker --stdio`, both ways over one ssh session.
//!
//! ```text
//! controller                          worker
//!   {"version":1,"task":{...},...}  ->
//!                                   <-  {"type":"ready","clock_unix_ns":...}
//!   {"type":"start","at_unix_ns":T} ->
//!                                   <-  {"type":"started"|"listening",...}
//!                                   <-  {"type":"tx_interval"|"rx_interval",...}  (one per interval)
//!   {"type":"stop"}  (or stdin EOF) ->
//!                                   <-  {"type":"tx_summary"|"rx_summary",...}
//! ```
//!
//! A probe task (an interface's MAC, state and MTU) is answered by one
//! `port` line. An observe task (version 2) samples the host's lab
//! interfaces, and its per-CPU load and interrupts, while a trial runs:
//!
//! ```text
//!   {"version":3,"task":{"role":"observe",...},...} ->
//!                                   <-  {"type":"ready",...}
//!   {"type":"start","at_unix_ns":T} ->
//!                                   <-  {"type":"observing"}        (first reading taken)
//!                                   <-  {"type":"second",...}       (one per interval)
//!   {"type":"stop"}  (or stdin EOF) ->
//!                                   <-  {"type":"second",...}       (the partial last one)
//!                                   <-  {"type":"observed","totals":[...],"drops":{...}}
//! ```
//! An observer with `drop_trace` on (or auto, where BPF is allowed) also
//! runs the drop tracer, and its `observed` line carries the test frames
//! its host's kernel dropped in its ports' namespaces (version 3).
//! Any failure is one `error` line. The job's `version` is
//! read before anything else, so that a worker of another version says so
//! instead of failing on a field it does not know.

use std::time::Duration;

use pktlab_engine::backend::IoSpec;
use pktlab_engine::gen::GenConfig;
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxInterval, RxPlan, RxSummary};
use pktlab_engine::tx::{ThreadShare, TxInterval, TxPlan, TxSummary};
use pktlab_io::xdprecv::{XdpRecvConfig, DEFAULT_STREAMS};
use pktlab_wire::flow::{FlowOrder, FlowSet};
use pktlab_wire::frame::FrameSpec;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::rfc4814::PortMode;
use serde::{Deserialize, Serialize};

use crate::RemoteError;
use pktlab_loss::drops::{DropTrace, Traced};
use pktlab_loss::monitor::{IfaceCounters, Second};

/// The protocol's version: a controller and a worker that differ refuse
/// to work together. 2: the observe task. 3: the observer's drop tracer.
/// 4: RFC 4814 ports (an older worker would send the ranges' ports).
pub const PROTOCOL_VERSION: u32 = 4;

/// The first line the controller sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub version: u32,
    pub task: Task,
    /// The worker stops on its own this long after its start, whatever the
    /// controller does (the run's duration plus a grace period).
    pub deadline_secs: f64,
}

/// What the worker does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "role")]
pub enum Task {
    Gen(GenJob),
    Recv(RecvJob),
    /// Reports an interface's facts, sends nothing.
    Probe(PortRef),
    /// Samples interfaces (and the CPUs) until stopped, sends nothing.
    Observe(ObserveJob),
}

/// What an observing worker samples, every interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObserveJob {
    pub ports: Vec<RolePort>,
    /// Also the host's per-CPU load.
    pub cpus: bool,
    pub interval_secs: f64,
    /// Whether the host's drop tracer counts the test frames its kernel
    /// drops in the ports' namespaces (`--drop-trace`; auto when absent).
    #[serde(default)]
    pub drop_trace: DropTrace,
}

/// A lab interface on the worker's host and its role (`gen`, `rcv`,
/// `dut_in`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolePort {
    pub role: String,
    pub iface: String,
    pub netns: Option<String>,
}

/// An interface, optionally inside a network namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRef {
    pub iface: String,
    pub netns: Option<String>,
}

/// A generator run, as [`GenConfig`] holds it, in plain fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenJob {
    /// `afpacket`, `afxdp`, `auto` or `xdp`.
    pub io: String,
    pub iface: String,
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub vlan: Option<u16>,
    pub ttl: u8,
    /// pkt-gen ranges.
    pub src: String,
    pub dst: String,
    /// `None`: sequential; else the random order's seed.
    pub random_seed: Option<u64>,
    /// RFC 4814 pseudorandom ports from this seed; `None`: the ranges'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rfc4814_seed: Option<u64>,
    pub sizes: String,
    pub threads: usize,
    pub count: Option<u64>,
    pub duration_secs: Option<f64>,
    pub rate_pps: Option<f64>,
    pub batch: usize,
    pub interval_secs: f64,
    pub cpus: Vec<usize>,
    pub netns: Option<String>,
    /// This generator's part of several generators' threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ThreadShare>,
}

/// A receiver run, as [`RecvConfig`] holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecvJob {
    pub io: String,
    pub iface: String,
    pub threads: usize,
    pub count: Option<u64>,
    pub duration_secs: Option<f64>,
    pub idle_secs: Option<f64>,
    pub interval_secs: f64,
    pub cpus: Vec<usize>,
    pub netns: Option<String>,
    /// `--io xdp`: the streams the program keeps state for (the
    /// generator's flows); absent from older controllers: the receiver's
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp_streams: Option<u32>,
}

/// A line from the controller after the job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Command {
    /// Start at this reading of the worker's realtime clock.
    Start {
        at_unix_ns: u64,
    },
    Stop,
}

/// A line from the worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Reply {
    /// The job is understood; the worker waits for `start`.
    Ready {
        version: u32,
        pktlab: String,
        clock_unix_ns: u64,
    },
    /// The generator's ports are open.
    Started {
        backend: String,
    },
    /// The receiver's ports are open and counting.
    Listening {
        backend: String,
    },
    TxInterval(TxInterval),
    RxInterval(RxInterval),
    TxSummary(TxSummary),
    /// The receiver's summary, with every frame's latency as histogram
    /// buckets, which the summary's own JSON leaves out (rfc2544's latency
    /// test keeps them). A worker that sends none gives an empty list.
    RxSummary {
        #[serde(flatten)]
        summary: RxSummary,
        #[serde(default)]
        latency_buckets: Vec<(u64, u64)>,
    },
    /// A probe's answer.
    Port {
        mac: [u8; 6],
        up: bool,
        mtu: u32,
        /// The interface has a device that raises interrupts (veth has
        /// none).
        #[serde(default)]
        device: bool,
    },
    /// An observer's first reading is taken: counting from here.
    Observing,
    /// An observer's interval.
    Second(Second),
    /// An observer's last word: its interfaces' counters from its first
    /// reading to its last (the sum of its seconds), and the test frames
    /// its kernel dropped in its ports' namespaces (None: not traced).
    Observed {
        totals: Vec<IfaceCounters>,
        drops: Option<Traced>,
        /// Why the tracer did not run in auto mode.
        drop_trace_off: Option<String>,
    },
    Error {
        message: String,
    },
}

/// The job's version, read before the rest so that a job of another
/// version is named as such.
pub fn parse_job(line: &str) -> Result<Job, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("the job is not JSON: {e}"))?;
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "protocol version {v} from the controller, but this worker (pktlab {}) speaks version {PROTOCOL_VERSION}: use the same pktlab version on every host",
                env!("CARGO_PKG_VERSION")
            ))
        }
        None => return Err("the job has no protocol version".into()),
    }
    serde_json::from_value(value).map_err(|e| format!("invalid job: {e}"))
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn duration(what: &str, s: f64) -> Result<Duration, RemoteError> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| RemoteError::Usage(format!("invalid {what} {s} in the worker job")))
}

/// Backends a remote worker can use: those that run on an interface.
fn io_name(io: &IoSpec) -> Result<String, RemoteError> {
    match io {
        IoSpec::AfPacket | IoSpec::AfXdp | IoSpec::Auto | IoSpec::Xdp => Ok(io.name().into()),
        other => Err(RemoteError::Usage(format!(
            "--io {} cannot run on a remote worker: use afpacket, afxdp, xdp or auto",
            other.name()
        ))),
    }
}

fn need_iface(iface: &Option<String>) -> Result<String, RemoteError> {
    iface
        .clone()
        .ok_or_else(|| RemoteError::Usage("a remote worker needs an interface".into()))
}

/// Remote workers use AF_XDP's default settings, as trials do.
fn default_xdp(xdp: &pktlab_io::afxdp::XdpConfig) -> Result<(), RemoteError> {
    if *xdp != Default::default() {
        return Err(RemoteError::Usage(
            "a remote worker uses the default AF_XDP settings".into(),
        ));
    }
    Ok(())
}

impl GenJob {
    /// The job for `cfg`; fails on what a remote worker cannot do.
    pub fn from_config(cfg: &GenConfig) -> Result<GenJob, RemoteError> {
        default_xdp(&cfg.xdp)?;
        let f = &cfg.frames;
        let p = &cfg.plan;
        Ok(GenJob {
            io: io_name(&cfg.io)?,
            iface: need_iface(&cfg.iface)?,
            src_mac: f.src_mac.octets(),
            dst_mac: f.dst_mac.octets(),
            vlan: f.vlan,
            ttl: f.ttl,
            src: f.flows.src().to_string(),
            dst: f.flows.dst().to_string(),
            random_seed: match f.order {
                FlowOrder::Sequential => None,
                FlowOrder::Random { seed } => Some(seed),
            },
            rfc4814_seed: match f.ports {
                PortMode::Ranges => None,
                PortMode::Rfc4814 { seed } => Some(seed),
            },
            sizes: f.sizes.to_string(),
            threads: p.threads,
            count: p.count,
            duration_secs: p.duration.map(secs),
            rate_pps: p.rate_pps,
            batch: p.batch,
            interval_secs: secs(p.interval),
            cpus: p.cpus.clone(),
            netns: p.netns.clone(),
            share: p.share,
        })
    }

    /// The engine's configuration again, checked as `gen` checks it.
    pub fn to_config(&self) -> Result<GenConfig, RemoteError> {
        let frames = FrameSpec {
            src_mac: MacAddr(self.src_mac),
            dst_mac: MacAddr(self.dst_mac),
            vlan: self.vlan,
            ttl: self.ttl,
            flows: FlowSet::new(self.src.parse()?, self.dst.parse()?)?,
            order: match self.random_seed {
                None => FlowOrder::Sequential,
                Some(seed) => FlowOrder::Random { seed },
            },
            sizes: self.sizes.parse()?,
            ports: match self.rfc4814_seed {
                None => PortMode::Ranges,
                Some(seed) => PortMode::Rfc4814 { seed },
            },
        };
        frames.validate()?;
        pktlab_wire::safety::check_destinations(&frames.flows)?;
        Ok(GenConfig {
            io: self.io.parse()?,
            iface: Some(self.iface.clone()),
            frames,
            plan: TxPlan {
                threads: self.threads,
                count: self.count,
                duration: self
                    .duration_secs
                    .map(|s| duration("duration", s))
                    .transpose()?,
                rate_pps: self.rate_pps,
                batch: self.batch,
                interval: duration("interval", self.interval_secs)?,
                cpus: self.cpus.clone(),
                netns: self.netns.clone(),
                iface: Some(self.iface.clone()),
                share: self.share,
            },
            xdp: Default::default(),
        })
    }
}

impl RecvJob {
    pub fn from_config(cfg: &RecvConfig) -> Result<RecvJob, RemoteError> {
        default_xdp(&cfg.xdp)?;
        let p = &cfg.plan;
        Ok(RecvJob {
            io: io_name(&cfg.io)?,
            iface: need_iface(&cfg.iface)?,
            threads: p.threads,
            count: p.count,
            duration_secs: p.duration.map(secs),
            idle_secs: p.idle.map(secs),
            interval_secs: secs(p.interval),
            cpus: p.cpus.clone(),
            netns: p.netns.clone(),
            xdp_streams: (cfg.io == IoSpec::Xdp).then_some(cfg.xdp_recv.streams),
        })
    }

    pub fn to_config(&self) -> Result<RecvConfig, RemoteError> {
        let opt = |what: &str, s: Option<f64>| s.map(|s| duration(what, s)).transpose();
        Ok(RecvConfig {
            io: self.io.parse()?,
            iface: Some(self.iface.clone()),
            plan: RxPlan {
                threads: self.threads,
                count: self.count,
                duration: opt("duration", self.duration_secs)?,
                idle: opt("idle timeout", self.idle_secs)?,
                interval: duration("interval", self.interval_secs)?,
                cpus: self.cpus.clone(),
                netns: self.netns.clone(),
                iface: Some(self.iface.clone()),
            },
            xdp: Default::default(),
            xdp_recv: XdpRecvConfig {
                streams: self.xdp_streams.unwrap_or(DEFAULT_STREAMS),
                ..XdpRecvConfig::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_config() -> GenConfig {
        let frames = pktlab_wire::frame::FrameSpec {
            src_mac: pktlab_wire::mac::MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: pktlab_wire::mac::MacAddr([2, 0, 0, 0, 0, 2]),
            vlan: None,
            ttl: 64,
            flows: pktlab_wire::flow::FlowSet::lab(pktlab_wire::range::Family::Inet4),
            order: pktlab_wire::flow::FlowOrder::Sequential,
            sizes: "64".parse().unwrap(),
            ports: pktlab_wire::PortMode::Ranges,
        };
        GenConfig {
            io: IoSpec::AfPacket,
            iface: Some("g0".into()),
            frames,
            plan: TxPlan {
                threads: 2,
                duration: Some(Duration::from_millis(2500)),
                rate_pps: Some(1000.0),
                netns: Some("a-gen".into()),
                iface: Some("g0".into()),
                cpus: vec![1, 3],
                ..TxPlan::default()
            },
            xdp: Default::default(),
        }
    }

    #[test]
    fn gen_job_round_trips_through_json() {
        let cfg = gen_config();
        let job = Job {
            version: PROTOCOL_VERSION,
            task: Task::Gen(GenJob::from_config(&cfg).unwrap()),
            deadline_secs: 12.5,
        };
        let line = serde_json::to_string(&job).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.contains("\"role\":\"gen\""), "{line}");
        assert!(
            line.contains("\"src\":\"198.18.10.1:2000-198.18.10.20:2000\""),
            "{line}"
        );
        let back = parse_job(&line).unwrap();
        assert_eq!(back, job);
        let Task::Gen(g) = back.task else {
            panic!("not a generator job")
        };
        let again = g.to_config().unwrap();
        assert_eq!(again.frames, cfg.frames);
        assert_eq!(again.frames.flows.count(), 2000);
        assert_eq!(again.io, IoSpec::AfPacket);
        assert_eq!(again.plan.duration, Some(Duration::from_millis(2500)));
        assert_eq!(again.plan.rate_pps, Some(1000.0));
        assert_eq!(again.plan.threads, 2);
        assert_eq!(again.plan.cpus, [1, 3]);
        assert_eq!(again.plan.netns.as_deref(), Some("a-gen"));
        assert_eq!(again.plan.batch, cfg.plan.batch);
        // The ranges' ports write no key; RFC 4814 ports travel with their seed.
        assert!(!line.contains("rfc4814_seed"), "{line}");
        let mut cfg = gen_config();
        cfg.frames.ports = PortMode::Rfc4814 { seed: 77 };
        let line = serde_json::to_string(&GenJob::from_config(&cfg).unwrap()).unwrap();
        assert!(line.contains("\"rfc4814_seed\":77"), "{line}");
        let back: GenJob = serde_json::from_str(&line).unwrap();
        assert_eq!(back.to_config().unwrap().frames, cfg.frames);
    }

    #[test]
    fn recv_job_round_trips() {
        let cfg = RecvConfig {
            io: IoSpec::Auto,
            iface: Some("r0".into()),
            plan: RxPlan {
                idle: Some(Duration::from_secs(3)),
                netns: Some("c".into()),
                iface: Some("r0".into()),
                ..RxPlan::default()
            },
            xdp: Default::default(),
            xdp_recv: Default::default(),
        };
        let job = RecvJob::from_config(&cfg).unwrap();
        let text = serde_json::to_string(&job).unwrap();
        let back: RecvJob = serde_json::from_str(&text).unwrap();
        let again = back.to_config().unwrap();
        assert_eq!(again.io, IoSpec::Auto);
        assert_eq!(again.plan.idle, Some(Duration::from_secs(3)));
        assert_eq!(again.plan.duration, None);
        assert_eq!(again.plan.netns.as_deref(), Some("c"));
        assert!(!text.contains("xdp_streams"), "{text}");
        assert_eq!(again.xdp_recv.streams, DEFAULT_STREAMS);
        // The in-kernel receiver's stream count goes with the job.
        let xdp = RecvConfig {
            io: IoSpec::Xdp,
            xdp_recv: XdpRecvConfig {
                streams: 2000,
                ..XdpRecvConfig::default()
            },
            ..cfg
        };
        let text = serde_json::to_string(&RecvJob::from_config(&xdp).unwrap()).unwrap();
        assert!(text.contains("\"xdp_streams\":2000"), "{text}");
        let back: RecvJob = serde_json::from_str(&text).unwrap();
        let again = back.to_config().unwrap();
        assert_eq!((again.io, again.xdp_recv.streams), (IoSpec::Xdp, 2000));
    }

    #[test]
    fn file_backends_stay_local() {
        let mut cfg = gen_config();
        cfg.io = IoSpec::Null;
        let e = GenJob::from_config(&cfg).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--io null cannot run on a remote worker: use afpacket, afxdp, xdp or auto"
        );
    }

    #[test]
    fn another_version_is_named() {
        let e = parse_job(r#"{"version":7,"task":{"role":"teleport"}}"#).unwrap_err();
        assert!(
            e.starts_with("protocol version 7 from the controller, but this worker (pktlab "),
            "{e}"
        );
        assert!(e.ends_with("speaks version 4: use the same pktlab version on every host"));
        // A controller of version 3 (before RFC 4814 ports) is refused too:
        // its worker would send the ranges' ports in silence.
        let e = parse_job(r#"{"version":3,"task":{"role":"teleport"}}"#).unwrap_err();
        assert!(
            e.starts_with("protocol version 3 from the controller"),
            "{e}"
        );
        // A worker of version 2 (before the observer's drop tracer) is
        // refused by name, as a controller of version 2 is by this worker.
        let old = parse_job(
            r#"{"version":2,"task":{"role":"probe","iface":"lo","netns":null},"deadline_secs":1}"#,
        )
        .unwrap_err();
        assert!(
            old.starts_with("protocol version 2 from the controller"),
            "{old}"
        );
        assert_eq!(
            parse_job("{}").unwrap_err(),
            "the job has no protocol version"
        );
        assert!(parse_job("nope")
            .unwrap_err()
            .starts_with("the job is not JSON"));
    }

    #[test]
    fn commands_and_replies_are_tagged_lines() {
        let start = serde_json::to_string(&Command::Start { at_unix_ns: 5 }).unwrap();
        assert_eq!(start, r#"{"type":"start","at_unix_ns":5}"#);
        assert_eq!(
            serde_json::to_string(&Command::Stop).unwrap(),
            r#"{"type":"stop"}"#
        );
        let r: Reply = serde_json::from_str(
            r#"{"type":"ready","version":3,"pktlab":"0.1.0","clock_unix_ns":9}"#,
        )
        .unwrap();
        assert!(matches!(
            r,
            Reply::Ready {
                clock_unix_ns: 9,
                ..
            }
        ));
    }
}
