//! Where a trial's generator and receiver run, and with which I/O backend.
//!
//! A trial talks to its two ends only through [`Endpoint`]: start the
//! receiver and wait for its `Ready` event, start the generator, follow both
//! ends' interval events, collect both summaries. [`Local`] runs them as
//! threads of this process (in the lab's namespaces); a remote worker (a
//! `pktlab gen --json` / `pktlab recv --json` over ssh, whose lines
//! deserialize into the engine's own event and summary types) implements
//! the same trait.

use std::fmt;
use std::str::FromStr;

use pktlab_engine::backend::IoSpec;
use pktlab_engine::gen::{run_gen, GenConfig};
use pktlab_engine::recv::{run_recv, RecvConfig};
use pktlab_engine::rx::{RxEvent, RxSummary};
use pktlab_engine::tx::{TxEvent, TxSummary};
use pktlab_engine::StopSignal;
use serde::{Deserialize, Serialize};

use crate::RemoteError;

/// One end of a trial: where a generator or a receiver runs.
pub trait Endpoint: Sync {
    /// Runs the generator until its duration ends or `stop`; `on_event` sees
    /// its start and each interval.
    fn generate(
        &self,
        cfg: &GenConfig,
        stop: &StopSignal,
        on_event: &mut dyn FnMut(TxEvent),
    ) -> Result<TxSummary, RemoteError>;

    /// Runs the receiver until `stop`; `on_event` sees `Ready` once every
    /// port counts, then each interval. Called on a thread of its own.
    fn receive(
        &self,
        cfg: &RecvConfig,
        stop: &StopSignal,
        on_event: &mut (dyn FnMut(RxEvent) + Send),
    ) -> Result<RxSummary, RemoteError>;
}

/// Generator and receiver as threads of this process.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl Endpoint for Local {
    fn generate(
        &self,
        cfg: &GenConfig,
        stop: &StopSignal,
        on_event: &mut dyn FnMut(TxEvent),
    ) -> Result<TxSummary, RemoteError> {
        Ok(run_gen(cfg, stop, on_event)?)
    }

    fn receive(
        &self,
        cfg: &RecvConfig,
        stop: &StopSignal,
        on_event: &mut (dyn FnMut(RxEvent) + Send),
    ) -> Result<RxSummary, RemoteError> {
        Ok(run_recv(cfg, stop, on_event)?)
    }
}

/// The I/O backend of a campaign's trials (`[run] io`, `pktlab bench --io`).
/// Its default, AF_PACKET, is also what run files written before the
/// backend was recorded used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchIo {
    /// AF_PACKET with mmap rings at both ends.
    #[default]
    Afpacket,
    /// AF_XDP at both ends.
    Afxdp,
    /// AF_XDP where it works for the whole run, AF_PACKET otherwise.
    Auto,
    /// XDP at both ends: the live-frame generator (`gen --io xdp`) and the
    /// in-kernel receiver (`recv --io xdp`), which checks and times every
    /// frame where the driver hands it over and needs no thread.
    Xdp,
}

impl BenchIo {
    pub const NAMES: &'static str = "afpacket, afxdp, xdp or auto";

    pub fn name(self) -> &'static str {
        match self {
            BenchIo::Afpacket => "afpacket",
            BenchIo::Afxdp => "afxdp",
            BenchIo::Auto => "auto",
            BenchIo::Xdp => "xdp",
        }
    }

    /// The generator's backend.
    pub fn gen(self) -> IoSpec {
        match self {
            BenchIo::Afpacket => IoSpec::AfPacket,
            BenchIo::Afxdp => IoSpec::AfXdp,
            BenchIo::Auto => IoSpec::Auto,
            BenchIo::Xdp => IoSpec::Xdp,
        }
    }

    /// The receiver's backend.
    pub fn recv(self) -> IoSpec {
        match self {
            BenchIo::Afpacket => IoSpec::AfPacket,
            BenchIo::Afxdp => IoSpec::AfXdp,
            BenchIo::Auto => IoSpec::Auto,
            BenchIo::Xdp => IoSpec::Xdp,
        }
    }
}

impl fmt::Display for BenchIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BenchIo {
    type Err = RemoteError;

    fn from_str(s: &str) -> Result<BenchIo, RemoteError> {
        match s {
            "afpacket" => Ok(BenchIo::Afpacket),
            "afxdp" => Ok(BenchIo::Afxdp),
            "auto" => Ok(BenchIo::Auto),
            "xdp" => Ok(BenchIo::Xdp),
            _ => Err(RemoteError::Usage(format!(
                "invalid I/O backend '{s}': use {}",
                BenchIo::NAMES
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends() {
        for (text, gen, recv) in [
            ("afpacket", IoSpec::AfPacket, IoSpec::AfPacket),
            ("afxdp", IoSpec::AfXdp, IoSpec::AfXdp),
            ("auto", IoSpec::Auto, IoSpec::Auto),
            ("xdp", IoSpec::Xdp, IoSpec::Xdp),
        ] {
            let io: BenchIo = text.parse().unwrap();
            assert_eq!((io.gen(), io.recv()), (gen, recv));
            assert_eq!(io.to_string(), text);
        }
        assert_eq!(BenchIo::default(), BenchIo::Afpacket);
        let e = "dpdk".parse::<BenchIo>().unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "invalid I/O backend 'dpdk': use afpacket, afxdp, xdp or auto"
        );
    }
}
