//! A whole generator run: frame sources from the wire layer, ports from the
//! io layer, threads from [`crate::tx`] or, for `--io xdp`, from
//! [`crate::xdpgen`]. The one place that picks the generator's backend.

use pktlab_io::afpacket::{AfPacketTx, TxRingConfig};
use pktlab_io::afxdp::{AfXdpTx, XdpConfig};
use pktlab_io::null::NullTx;
use pktlab_io::pcap::PcapTx;
use pktlab_wire::frame::{FrameGen, FrameSpec};

use crate::auto::AutoTx;
use crate::backend::IoSpec;
use crate::error::Undelivered;
use crate::tx::{run_tx, TxEvent, TxPlan, TxSummary};
use crate::xdpgen::run_xdp_gen;
use crate::{EngineError, StopSignal};

/// Everything `pktlab gen` needs, already parsed and checked.
#[derive(Clone, Debug)]
pub struct GenConfig {
    pub io: IoSpec,
    /// The interface to send on (AF_PACKET and AF_XDP).
    pub iface: Option<String>,
    pub frames: FrameSpec,
    pub plan: TxPlan,
    /// AF_XDP settings (`--io afxdp` and `auto`).
    pub xdp: XdpConfig,
}

/// Runs the generator; `on_event` sees the start and each interval.
/// Frames built but not sent (`--io xdp`) fail the run.
pub fn run_gen(
    cfg: &GenConfig,
    stop: &StopSignal,
    on_event: impl FnMut(TxEvent),
) -> Result<TxSummary, EngineError> {
    match run_gen_accounted(cfg, stop, on_event)? {
        (summary, None) => Ok(summary),
        (_, Some(lost)) => Err(EngineError::Undelivered(lost)),
    }
}

/// Runs the generator as [`run_gen`] does, but returns the summary of a
/// run whose frames did not all go out too, with what was lost: for a
/// caller that shows what the run did before it fails.
pub fn run_gen_accounted(
    cfg: &GenConfig,
    stop: &StopSignal,
    on_event: impl FnMut(TxEvent),
) -> Result<(TxSummary, Option<Undelivered>), EngineError> {
    let threads = cfg.plan.threads as u32;
    let (first, of) = match cfg.plan.share {
        None => (0, threads),
        Some(share) => {
            if share.first + cfg.plan.threads > share.of {
                return Err(EngineError::BadPlan(format!(
                    "threads {}..{} of a generator share beyond its {} threads",
                    share.first,
                    share.first + cfg.plan.threads,
                    share.of
                )));
            }
            (share.first as u32, share.of as u32)
        }
    };
    let sources = (first..first + threads)
        .map(|t| FrameGen::try_new(&cfg.frames, t, of))
        .collect::<Result<Vec<FrameGen>, _>>()?;
    let max_len = sources.first().map_or(0, |g| g.max_len());
    let iface = || {
        cfg.iface.clone().ok_or_else(|| {
            EngineError::BadPlan(format!("--io {} needs an interface (-i)", cfg.io.name()))
        })
    };
    if cfg.io == IoSpec::Xdp {
        if cfg.plan.share.is_some() {
            return Err(EngineError::BadPlan(
                "--io xdp cannot share one traffic between generators: use afpacket or afxdp"
                    .into(),
            ));
        }
        return run_xdp_gen(&cfg.frames, &iface()?, &cfg.plan, stop, on_event);
    }
    let ring = TxRingConfig {
        slot_size: max_len.max(60),
        ..TxRingConfig::default()
    };
    let plan = &cfg.plan;
    let summary = match &cfg.io {
        IoSpec::AfPacket => {
            let name = iface()?;
            run_tx(
                plan,
                sources,
                |_| AfPacketTx::open(&name, &ring),
                stop,
                on_event,
            )
        }
        IoSpec::AfXdp => {
            let name = iface()?;
            let open = |i: usize| AfXdpTx::open(&name, i as u32, &cfg.xdp);
            run_tx(plan, sources, open, stop, on_event)
        }
        IoSpec::Auto => {
            let name = iface()?;
            let open = |i: usize| AutoTx::open(&name, i, plan.threads, &cfg.xdp, &ring);
            run_tx(plan, sources, open, stop, on_event)
        }
        IoSpec::Pcap(path) => {
            if plan.threads != 1 {
                return Err(EngineError::BadPlan(
                    "--io pcap writes one file: use one thread (-p 1)".into(),
                ));
            }
            run_tx(
                plan,
                sources,
                |_| PcapTx::create(path, max_len),
                stop,
                on_event,
            )
        }
        IoSpec::Null => run_tx(plan, sources, |_| Ok(NullTx::new(max_len)), stop, on_event),
        IoSpec::Xdp => unreachable!("--io xdp runs above"),
    }?;
    Ok((summary, None))
}
