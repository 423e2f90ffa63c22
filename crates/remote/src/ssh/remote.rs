//! A generator or receiver on another host: the [`Remote`] endpoint runs
//! `pktlab worker --stdio` there (protocol in [`crate::worker::protocol`])
//! and reads its events back as the engine's own types.

use std::time::Duration;

use pktlab_engine::gen::GenConfig;
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxEvent, RxSummary};
use pktlab_engine::tx::{TxEvent, TxSummary};
use pktlab_engine::StopSignal;

use super::host::SshHost;
use super::session::{self, follow_gen, unexpected, PortFacts, Session, GRACE};
use crate::endpoint::Endpoint;
use crate::worker::protocol::{GenJob, Job, PortRef, RecvJob, Reply, Task, PROTOCOL_VERSION};
use crate::RemoteError;

/// A generator or receiver on `host`.
#[derive(Clone, Debug)]
pub struct Remote {
    pub host: SshHost,
    /// The longest a run lasts (a receiver has no duration of its own: it
    /// stops when told); the worker stops itself after it plus [`GRACE`].
    pub run_limit: Duration,
}

impl Remote {
    pub(crate) fn deadline(&self, duration: Option<Duration>) -> f64 {
        (duration.unwrap_or(self.run_limit) + GRACE).as_secs_f64()
    }

    /// The MAC, state and MTU of `iface` (in `netns`) on the host, through
    /// a worker that sends nothing.
    pub fn probe(&self, iface: &str, netns: Option<&str>) -> Result<PortFacts, RemoteError> {
        let job = Job {
            version: PROTOCOL_VERSION,
            task: Task::Probe(PortRef {
                iface: iface.to_string(),
                netns: netns.map(str::to_string),
            }),
            deadline_secs: GRACE.as_secs_f64(),
        };
        session::probe(&self.host, &job)
    }
}

impl Endpoint for Remote {
    fn generate(
        &self,
        cfg: &GenConfig,
        stop: &StopSignal,
        on_event: &mut dyn FnMut(TxEvent),
    ) -> Result<TxSummary, RemoteError> {
        let job = Job {
            version: PROTOCOL_VERSION,
            task: Task::Gen(GenJob::from_config(cfg)?),
            deadline_secs: self.deadline(cfg.plan.duration),
        };
        let mut s = Session::open(&self.host, &job)?;
        s.start_now()?;
        follow_gen(&mut s, stop, on_event)
    }

    fn receive(
        &self,
        cfg: &RecvConfig,
        stop: &StopSignal,
        on_event: &mut (dyn FnMut(RxEvent) + Send),
    ) -> Result<RxSummary, RemoteError> {
        let job = Job {
            version: PROTOCOL_VERSION,
            task: Task::Recv(RecvJob::from_config(cfg)?),
            deadline_secs: self.deadline(cfg.plan.duration),
        };
        let mut s = Session::open(&self.host, &job)?;
        s.start_now()?;
        loop {
            match s.next(stop)? {
                Reply::Listening { backend } => on_event(RxEvent::Ready { backend }),
                Reply::RxInterval(iv) => on_event(RxEvent::Interval(iv)),
                Reply::RxSummary {
                    mut summary,
                    latency_buckets,
                } => {
                    s.finish();
                    summary.latency_buckets = latency_buckets;
                    return Ok(summary);
                }
                other => return Err(unexpected(&self.host, &other)),
            }
        }
    }
}
