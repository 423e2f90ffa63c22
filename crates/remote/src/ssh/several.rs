//! Several generators sending one traffic together (`[[lab.generator]]`),
//! each on its host and port: every one runs the trial's threads as its
//! own share of all of them ([`ThreadShare`]: disjoint flows, so disjoint
//! streams at the receiver) at its part of the rate, and all start at the
//! same absolute time. Their intervals and summaries add up to what one
//! generator of all the threads would have reported.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Duration;

use pktlab_engine::gen::{run_gen, GenConfig};
use pktlab_engine::recv::RecvConfig;
use pktlab_engine::rx::{RxEvent, RxSummary};
use pktlab_engine::tx::{ThreadShare, TxEvent, TxInterval, TxSummary};
use pktlab_engine::StopSignal;
use pktlab_io::clock::realtime_ns;
use pktlab_lab::ports::Port;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::rate::L1_OVERHEAD;

use super::remote::Remote;
use super::session::{follow_gen, Session};
use crate::endpoint::Endpoint;
use crate::worker::protocol::{GenJob, Job, Task, PROTOCOL_VERSION};
use crate::RemoteError;

/// How far ahead the common start is set, for the `start` lines to reach
/// every host.
const START_AHEAD: Duration = Duration::from_millis(300);

/// One generator among several.
#[derive(Clone, Debug)]
pub struct GenPart {
    /// Its host; None: this one.
    pub remote: Option<Remote>,
    pub port: Port,
    /// Its port's MAC: the source of its frames.
    pub src_mac: [u8; 6],
}

/// Several generators as one [`Endpoint`] (it only generates).
#[derive(Clone, Debug)]
pub struct Generators {
    pub parts: Vec<GenPart>,
}

enum Msg {
    Event(TxEvent),
    Done(Result<TxSummary, RemoteError>),
}

impl Generators {
    /// Part `i`'s configuration: its port and MAC, its share of the
    /// threads, of the rate and of a frame count.
    pub fn part_config(&self, cfg: &GenConfig, i: usize) -> GenConfig {
        let n = self.parts.len();
        let part = &self.parts[i];
        let mut c = cfg.clone();
        c.iface = Some(part.port.iface.clone());
        c.plan.iface = Some(part.port.iface.clone());
        c.plan.netns = part.port.netns.clone();
        c.frames.src_mac = MacAddr(part.src_mac);
        c.plan.share = Some(ThreadShare {
            first: i * cfg.plan.threads,
            of: n * cfg.plan.threads,
        });
        c.plan.rate_pps = cfg.plan.rate_pps.map(|r| r / n as f64);
        c.plan.count = cfg
            .plan
            .count
            .map(|c| c / n as u64 + u64::from((i as u64) < c % n as u64));
        c
    }
}

impl Endpoint for Generators {
    fn generate(
        &self,
        cfg: &GenConfig,
        stop: &StopSignal,
        on_event: &mut dyn FnMut(TxEvent),
    ) -> Result<TxSummary, RemoteError> {
        let configs: Vec<GenConfig> = (0..self.parts.len())
            .map(|i| self.part_config(cfg, i))
            .collect();
        // Every remote worker ready before any starts.
        let mut sessions = Vec::new();
        for (part, c) in self.parts.iter().zip(&configs) {
            sessions.push(match &part.remote {
                Some(r) => {
                    let job = Job {
                        version: PROTOCOL_VERSION,
                        task: Task::Gen(GenJob::from_config(c)?),
                        deadline_secs: r.deadline(c.plan.duration),
                    };
                    Some(Session::open(&r.host, &job)?)
                }
                None => None,
            });
        }
        let at = realtime_ns() + START_AHEAD.as_nanos() as u64;
        for s in sessions.iter_mut().flatten() {
            s.start_at(at)?;
        }
        let parts_stop = StopSignal::new();
        let (tx, rx) = mpsc::channel::<(usize, Msg)>();
        let mut done: Vec<Option<Result<TxSummary, RemoteError>>> =
            (0..configs.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            for (i, (session, c)) in sessions.into_iter().zip(&configs).enumerate() {
                let (tx, parts_stop) = (tx.clone(), &parts_stop);
                scope.spawn(move || {
                    let mut send = |e| {
                        let _ = tx.send((i, Msg::Event(e)));
                    };
                    let r = match session {
                        Some(mut s) => {
                            let r = follow_gen(&mut s, parts_stop, &mut send);
                            s.finish();
                            r
                        }
                        None => {
                            let now = realtime_ns();
                            if at > now {
                                std::thread::sleep(Duration::from_nanos(at - now));
                            }
                            run_gen(c, parts_stop, send).map_err(RemoteError::from)
                        }
                    };
                    let _ = tx.send((i, Msg::Done(r)));
                });
            }
            drop(tx);
            let mut started = false;
            let mut pending: Vec<VecDeque<TxInterval>> = vec![VecDeque::new(); configs.len()];
            loop {
                if stop.is_set() {
                    parts_stop.stop();
                }
                let (i, m) = match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(x) => x,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                match m {
                    Msg::Event(TxEvent::Started { backend }) => {
                        if !started {
                            started = true;
                            on_event(TxEvent::Started { backend });
                        }
                    }
                    Msg::Event(TxEvent::Interval(iv)) => {
                        pending[i].push_back(iv);
                        while pending.iter().all(|q| !q.is_empty()) {
                            let ivs: Vec<TxInterval> =
                                pending.iter_mut().filter_map(|q| q.pop_front()).collect();
                            on_event(TxEvent::Interval(sum_intervals(&ivs)));
                        }
                    }
                    Msg::Done(r) => {
                        // One generator failing ends the others' runs.
                        if r.is_err() {
                            parts_stop.stop();
                        }
                        done[i] = Some(r);
                    }
                }
            }
        });
        let mut summaries = Vec::new();
        for r in done {
            match r {
                Some(Ok(s)) => summaries.push(s),
                Some(Err(e)) => return Err(e),
                None => {
                    return Err(RemoteError::Failed(
                        "a generator ended without a word".into(),
                    ))
                }
            }
        }
        Ok(sum_summaries(&summaries))
    }

    fn receive(
        &self,
        _cfg: &RecvConfig,
        _stop: &StopSignal,
        _on_event: &mut (dyn FnMut(RxEvent) + Send),
    ) -> Result<RxSummary, RemoteError> {
        Err(RemoteError::Usage(
            "[[lab.generator]] names generators: the receiver is rcv_host/rcv_iface".into(),
        ))
    }
}

/// The same interval of every generator, added up.
pub fn sum_intervals(ivs: &[TxInterval]) -> TxInterval {
    let f = |g: fn(&TxInterval) -> f64| ivs.iter().map(g).sum::<f64>();
    TxInterval {
        elapsed: ivs.iter().map(|i| i.elapsed).fold(0.0, f64::max),
        seconds: ivs.iter().map(|i| i.seconds).fold(0.0, f64::max),
        packets: ivs.iter().map(|i| i.packets).sum(),
        bytes: ivs.iter().map(|i| i.bytes).sum(),
        pps: f(|i| i.pps),
        l2_bps: f(|i| i.l2_bps),
        l1_bps: f(|i| i.l1_bps),
        threads: ivs.iter().flat_map(|i| i.threads.iter().copied()).collect(),
    }
}

/// Every generator's summary added up, over the longest one's time. The
/// interface counters are per port, so the sum has none: each port's are
/// in its own generator's summary, not kept here.
pub fn sum_summaries(all: &[TxSummary]) -> TxSummary {
    let packets: u64 = all.iter().map(|s| s.packets).sum();
    let bytes: u64 = all.iter().map(|s| s.bytes).sum();
    let seconds = all.iter().map(|s| s.seconds).fold(0.0, f64::max);
    let per_sec = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    let mut backends: Vec<&str> = all.iter().map(|s| s.backend.as_str()).collect();
    backends.dedup();
    TxSummary {
        backend: backends.join(", "),
        packets,
        bytes,
        seconds,
        pps: per_sec(packets as f64),
        l2_bps: per_sec(bytes as f64 * 8.0),
        l1_bps: per_sec((bytes + packets * u64::from(L1_OVERHEAD)) as f64 * 8.0),
        tx_errors: all.iter().map(|s| s.tx_errors).sum(),
        interrupted: all.iter().any(|s| s.interrupted),
        threads: all.iter().flat_map(|s| s.threads.iter().cloned()).collect(),
        iface: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_engine::backend::IoSpec;
    use pktlab_engine::tx::TxPlan;

    fn summary(packets: u64, seconds: f64) -> TxSummary {
        TxSummary {
            backend: "afpacket".into(),
            packets,
            bytes: packets * 64,
            seconds,
            pps: packets as f64 / seconds,
            l2_bps: 0.0,
            l1_bps: 0.0,
            tx_errors: 1,
            interrupted: false,
            threads: Vec::new(),
            iface: None,
        }
    }

    #[test]
    fn two_summaries_add_up() {
        let s = sum_summaries(&[summary(3000, 2.0), summary(1000, 2.5)]);
        assert_eq!(s.packets, 4000);
        assert_eq!(s.bytes, 256_000);
        assert_eq!(s.seconds, 2.5);
        assert_eq!(s.pps, 1600.0);
        // 4000 frames of 64 + 20 bytes in 2.5 s.
        assert_eq!(s.l1_bps, 4000.0 * 84.0 * 8.0 / 2.5);
        assert_eq!(s.tx_errors, 2);
        assert_eq!(s.backend, "afpacket");
    }

    #[test]
    fn parts_split_threads_rate_and_count() {
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
        let cfg = GenConfig {
            io: IoSpec::AfPacket,
            iface: Some("g0".into()),
            frames,
            plan: TxPlan {
                threads: 2,
                rate_pps: Some(9000.0),
                count: Some(1001),
                ..TxPlan::default()
            },
            xdp: Default::default(),
        };
        let part = |iface: &str, mac: u8| GenPart {
            remote: None,
            port: Port::new(iface, Some("h")),
            src_mac: [2, 0, 0, 0, 0, mac],
        };
        let g = Generators {
            parts: vec![part("ga", 7), part("gb", 8)],
        };
        let b = g.part_config(&cfg, 1);
        assert_eq!(b.iface.as_deref(), Some("gb"));
        assert_eq!(b.plan.netns.as_deref(), Some("h"));
        assert_eq!(b.frames.src_mac, MacAddr([2, 0, 0, 0, 0, 8]));
        assert_eq!(b.plan.share, Some(ThreadShare { first: 2, of: 4 }));
        assert_eq!(b.plan.rate_pps, Some(4500.0));
        assert_eq!(b.plan.count, Some(500));
        assert_eq!(g.part_config(&cfg, 0).plan.count, Some(501));
        assert_eq!(
            g.part_config(&cfg, 0).plan.share,
            Some(ThreadShare { first: 0, of: 4 })
        );
    }
}
