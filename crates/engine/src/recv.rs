//! A whole receiver run: ports from the io layer, threads from [`crate::rx`].

use pktlab_io::afpacket::{AfPacketRx, RxRingConfig};
use pktlab_io::afxdp::{AfXdpRx, XdpConfig};
use pktlab_io::pcap::PcapRx;
use pktlab_io::xdprecv::XdpRecvConfig;

use crate::auto::AutoRx;
use crate::backend::IoSpec;
use crate::rx::{run_rx, RxEvent, RxPlan, RxSummary};
use crate::{EngineError, StopSignal};

#[derive(Clone, Debug)]
pub struct RecvConfig {
    pub io: IoSpec,
    pub iface: Option<String>,
    pub plan: RxPlan,
    /// AF_XDP settings (`--io afxdp` and `auto`).
    pub xdp: XdpConfig,
    /// The XDP receiver's settings (`--io xdp`).
    pub xdp_recv: XdpRecvConfig,
}

/// Runs the receiver; `on_event` sees readiness and each interval.
pub fn run_recv(
    cfg: &RecvConfig,
    stop: &StopSignal,
    on_event: impl FnMut(RxEvent),
) -> Result<RxSummary, EngineError> {
    let plan = &cfg.plan;
    let iface = || {
        cfg.iface.clone().ok_or_else(|| {
            EngineError::BadPlan(format!("--io {} needs an interface (-i)", cfg.io.name()))
        })
    };
    let ring = RxRingConfig::default();
    // Several AF_PACKET threads share the interface through one fanout
    // group, whose id only has to be unique on the host while we run.
    let fanout = (plan.threads > 1).then(|| (std::process::id() & 0xffff) as u16);
    match &cfg.io {
        IoSpec::AfPacket => {
            let name = iface()?;
            run_rx(
                plan,
                |_| AfPacketRx::open(&name, &ring, fanout),
                stop,
                on_event,
            )
        }
        IoSpec::AfXdp => {
            let name = iface()?;
            let open = |i: usize| {
                // A queue without a socket would pass its frames to the
                // kernel uncounted: every queue needs a thread.
                if i == 0 {
                    check_queues_covered(&name, plan.threads)?;
                }
                AfXdpRx::open(&name, i as u32, &cfg.xdp)
            };
            run_rx(plan, open, stop, on_event)
        }
        IoSpec::Auto => {
            let name = iface()?;
            let open = |i: usize| AutoRx::open(&name, i, plan.threads, &cfg.xdp, &ring, fanout);
            run_rx(plan, open, stop, on_event)
        }
        IoSpec::Pcap(path) => {
            if plan.threads != 1 {
                return Err(EngineError::BadPlan(
                    "--io pcap reads one file: use one thread (-p 1)".into(),
                ));
            }
            run_rx(plan, |_| PcapRx::open(path), stop, on_event)
        }
        IoSpec::Null => Err(EngineError::BadPlan(
            "--io null only generates: recv needs auto, afxdp, afpacket, xdp or pcap:FILE".into(),
        )),
        IoSpec::Xdp => {
            let name = iface()?;
            crate::xdprecv::run_xdp_recv(&name, plan, &cfg.xdp_recv, stop, on_event)
        }
    }
}

/// Refuses an AF_XDP receiver with fewer threads than the interface has
/// queues.
fn check_queues_covered(iface: &str, threads: usize) -> Result<(), pktlab_io::IoError> {
    match pktlab_io::afxdp::queue_count(iface)? {
        Some(q) if (q as usize) > threads => Err(pktlab_io::IoError::QueuesUncovered {
            iface: iface.to_string(),
            queues: q,
            threads,
        }),
        _ => Ok(()),
    }
}
