//! A whole receiver run: ports from the io layer, threads from [`crate::rx`].

use pktlab_io::afpacket::{AfPacketRx, RxRingConfig};
use pktlab_io::pcap::PcapRx;

use crate::backend::IoSpec;
use crate::rx::{run_rx, RxEvent, RxPlan, RxSummary};
use crate::{EngineError, StopSignal};

#[derive(Clone, Debug)]
pub struct RecvConfig {
    pub io: IoSpec,
    pub iface: Option<String>,
    pub plan: RxPlan,
}

/// Runs the receiver; `on_event` sees readiness and each interval.
pub fn run_recv(
    cfg: &RecvConfig,
    stop: &StopSignal,
    on_event: impl FnMut(RxEvent),
) -> Result<RxSummary, EngineError> {
    match &cfg.io {
        IoSpec::AfPacket => {
            let name = cfg.iface.clone().ok_or_else(|| {
                EngineError::BadPlan("--io afpacket needs an interface (-i)".into())
            })?;
            let ring = RxRingConfig::default();
            // Several threads share the interface through one fanout group,
            // whose id only has to be unique on the host while we run.
            let fanout = (cfg.plan.threads > 1).then(|| (std::process::id() & 0xffff) as u16);
            run_rx(
                &cfg.plan,
                |_| AfPacketRx::open(&name, &ring, fanout),
                stop,
                on_event,
            )
        }
        IoSpec::Pcap(path) => {
            if cfg.plan.threads != 1 {
                return Err(EngineError::BadPlan(
                    "--io pcap reads one file: use one thread (-p 1)".into(),
                ));
            }
            run_rx(&cfg.plan, |_| PcapRx::open(path), stop, on_event)
        }
        IoSpec::Null => Err(EngineError::BadPlan(
            "--io null only generates: recv needs afpacket or pcap:FILE".into(),
        )),
    }
}
