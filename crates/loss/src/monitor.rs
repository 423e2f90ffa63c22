//! What the seeds watched by hand during a run, sampled once per second
//! from a thread: every lab interface's counters (`netstat -iw 1`), the
//! per-CPU load (`top -SH`) and the NICs' interrupts (`vmstat -i`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pktlab_io::iface::IfCounters;
use pktlab_io::qdisc::QdiscCounters;
use pktlab_lab::cpuload::{self, CpuLoad, CpuTimes};
use pktlab_lab::interrupts::{self, IrqDelta, IrqLine, NicIrqMatch};
use pktlab_lab::ports::{counters_at, ethtool_drops_at, qdiscs_at, Port};
use serde::{Deserialize, Serialize};

use crate::LossError;

/// One interface whose counters every run records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Watched {
    /// `gen`, `dut_in`, `dut_out`, `rcv`.
    pub role: String,
    #[serde(flatten)]
    pub port: Port,
}

/// One interface's counters over one interval (or a whole run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfaceCounters {
    /// The ssh destination of the interface's host; None: this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub role: String,
    pub ns: Option<String>,
    pub iface: String,
    #[serde(flatten)]
    pub counters: IfCounters,
}

/// One second of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// 1 for the first second after the generator started.
    pub t: usize,
    /// The interval's real length.
    pub seconds: f64,
    pub ifaces: Vec<IfaceCounters>,
    pub cpus: Vec<CpuLoad>,
    pub interrupts: Vec<IrqDelta>,
    /// The per-CPU load and interrupts of the lab's other hosts (a DUT
    /// reached over ssh), read there by their workers; their interfaces
    /// are in `ifaces`, with their `host`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostLoad>,
}

/// One other host's second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    /// The ssh destination.
    pub host: String,
    /// What the host is in the lab: `dut`, `gen`, `rcv` (joined with `+`
    /// when it is several).
    pub role: String,
    pub cpus: Vec<CpuLoad>,
    pub interrupts: Vec<IrqDelta>,
}

/// What a sampler reads: interfaces, and where their interrupts are; the
/// per-CPU load when `cpus`.
#[derive(Clone, Copy, Debug)]
pub struct Sampled<'a> {
    pub watched: &'a [Watched],
    pub irqs: &'a [NicIrqMatch],
    pub cpus: bool,
}

/// Everything read at one instant.
struct Reading {
    at: Instant,
    counters: Vec<IfaceCounters>,
    cpus: Vec<(usize, CpuTimes)>,
    irqs: Vec<IrqLine>,
}

/// The counters of every watched interface now, in `watched` order.
pub fn read_counters(watched: &[Watched]) -> Result<Vec<IfaceCounters>, LossError> {
    // One namespace entry per namespace, not per interface.
    let mut out: Vec<Option<IfaceCounters>> = vec![None; watched.len()];
    let mut done = vec![false; watched.len()];
    for i in 0..watched.len() {
        if done[i] {
            continue;
        }
        let ns = watched[i].port.netns.clone();
        let group: Vec<usize> = (i..watched.len())
            .filter(|&j| watched[j].port.netns == ns)
            .collect();
        let names: Vec<&str> = group
            .iter()
            .map(|&j| watched[j].port.iface.as_str())
            .collect();
        let counters = counters_at(ns.as_deref(), &names)?;
        for (&j, c) in group.iter().zip(counters) {
            done[j] = true;
            out[j] = Some(IfaceCounters {
                host: None,
                role: watched[j].role.clone(),
                ns: watched[j].port.netns.clone(),
                iface: watched[j].port.iface.clone(),
                counters: c,
            });
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// One interface's root qdisc counters over a run (`tc -s qdisc`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfaceQdisc {
    pub role: String,
    pub ns: Option<String>,
    pub iface: String,
    #[serde(flatten)]
    pub counters: QdiscCounters,
}

/// The root qdisc of every watched interface that has one, now, grouped
/// by namespace (one namespace entry per namespace).
pub fn read_qdiscs(watched: &[Watched]) -> Result<Vec<IfaceQdisc>, LossError> {
    let mut out = Vec::new();
    let mut namespaces: Vec<&Option<String>> = Vec::new();
    for w in watched {
        if !namespaces.contains(&&w.port.netns) {
            namespaces.push(&w.port.netns);
        }
    }
    for ns in namespaces {
        let mine: Vec<&Watched> = watched.iter().filter(|w| &w.port.netns == ns).collect();
        let names: Vec<&str> = mine.iter().map(|w| w.port.iface.as_str()).collect();
        for (w, q) in mine.iter().zip(qdiscs_at(ns.as_deref(), &names)?) {
            if let Some(counters) = q {
                out.push(IfaceQdisc {
                    role: w.role.clone(),
                    ns: w.port.netns.clone(),
                    iface: w.port.iface.clone(),
                    counters,
                });
            }
        }
    }
    Ok(out)
}

/// One interface's driver drop statistics over a run (`ethtool -S`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfaceEthtool {
    pub role: String,
    pub ns: Option<String>,
    pub iface: String,
    /// (statistic, frames), in the driver's order.
    pub drops: Vec<(String, u64)>,
}

/// The drop statistics of every watched interface whose driver has some,
/// now, grouped by namespace.
pub fn read_ethtool_drops(watched: &[Watched]) -> Result<Vec<IfaceEthtool>, LossError> {
    let mut out = Vec::new();
    let mut namespaces: Vec<&Option<String>> = Vec::new();
    for w in watched {
        if !namespaces.contains(&&w.port.netns) {
            namespaces.push(&w.port.netns);
        }
    }
    for ns in namespaces {
        let mine: Vec<&Watched> = watched.iter().filter(|w| &w.port.netns == ns).collect();
        let names: Vec<&str> = mine.iter().map(|w| w.port.iface.as_str()).collect();
        for (w, drops) in mine.iter().zip(ethtool_drops_at(ns.as_deref(), &names)?) {
            if !drops.is_empty() {
                out.push(IfaceEthtool {
                    role: w.role.clone(),
                    ns: w.port.netns.clone(),
                    iface: w.port.iface.clone(),
                    drops,
                });
            }
        }
    }
    Ok(out)
}

/// `after - before` per interface and statistic, keeping only those that
/// moved (a statistic new since `before` counts from 0).
pub fn ethtool_deltas(before: &[IfaceEthtool], after: &[IfaceEthtool]) -> Vec<IfaceEthtool> {
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.ns == a.ns && b.iface == a.iface);
            let drops: Vec<(String, u64)> = a
                .drops
                .iter()
                .map(|(name, v)| {
                    let was = b
                        .and_then(|b| b.drops.iter().find(|d| &d.0 == name))
                        .map_or(0, |d| d.1);
                    (name.clone(), v.saturating_sub(was))
                })
                .filter(|d| d.1 > 0)
                .collect();
            (!drops.is_empty()).then(|| IfaceEthtool { drops, ..a.clone() })
        })
        .collect()
}

/// `after - before` per interface's qdisc (one that appeared during the
/// run counts from 0).
pub fn qdisc_deltas(before: &[IfaceQdisc], after: &[IfaceQdisc]) -> Vec<IfaceQdisc> {
    after
        .iter()
        .map(|a| {
            let mut d = a.clone();
            if let Some(b) = before.iter().find(|b| b.ns == a.ns && b.iface == a.iface) {
                d.counters = a.counters.delta(&b.counters);
            }
            d
        })
        .collect()
}

/// `after - before` per interface.
pub fn counter_deltas(before: &[IfaceCounters], after: &[IfaceCounters]) -> Vec<IfaceCounters> {
    after
        .iter()
        .map(|a| {
            let mut d = a.clone();
            if let Some(b) = before.iter().find(|b| b.ns == a.ns && b.iface == a.iface) {
                d.counters = a.counters.delta(&b.counters);
            }
            d
        })
        .collect()
}

fn read(s: Sampled<'_>) -> Result<Reading, LossError> {
    Ok(Reading {
        at: Instant::now(),
        counters: read_counters(s.watched)?,
        cpus: if s.cpus {
            cpuload::read_cpu_times()?
        } else {
            Vec::new()
        },
        irqs: if s.irqs.is_empty() {
            Vec::new()
        } else {
            interrupts::read_interrupts()?
        },
    })
}

fn second(t: usize, before: &Reading, after: &Reading, s: Sampled<'_>) -> Second {
    Second {
        t,
        seconds: (after.at - before.at).as_secs_f64(),
        ifaces: counter_deltas(&before.counters, &after.counters),
        cpus: cpuload::load_between(&before.cpus, &after.cpus),
        interrupts: interrupts::deltas(s.irqs, &before.irqs, &after.irqs),
        hosts: Vec::new(),
    }
}

/// Samples `s` every `interval` until `stop` is set, then once more for
/// the partial last interval. Runs on the caller's thread (spawn it).
pub fn sample_until(
    s: Sampled<'_>,
    interval: Duration,
    stop: &AtomicBool,
) -> Result<Vec<Second>, LossError> {
    let mut out = Vec::new();
    Sampler::start(s)?.run(
        interval,
        false,
        &|| stop.load(Ordering::Relaxed),
        &mut |s| out.push(s),
    )?;
    Ok(out)
}

/// A sampler whose first reading is taken.
pub struct Sampler<'a> {
    s: Sampled<'a>,
    first: Reading,
}

impl<'a> Sampler<'a> {
    /// Takes the first reading: what the seconds and the totals count from.
    pub fn start(s: Sampled<'a>) -> Result<Sampler<'a>, LossError> {
        Ok(Sampler { s, first: read(s)? })
    }

    /// Samples every `interval` until `stopped()`, handing each second to
    /// `on_second` as soon as it is read, and returns the counters from
    /// the first reading to the last. With `whole_tail` the partial last
    /// interval is always handed on, however short, so that the seconds
    /// add up to those counters exactly; else a last interval under a
    /// tenth of `interval` is left out as noise.
    pub fn run(
        self,
        interval: Duration,
        whole_tail: bool,
        stopped: &dyn Fn() -> bool,
        on_second: &mut dyn FnMut(Second),
    ) -> Result<Vec<IfaceCounters>, LossError> {
        let s = self.s;
        let start = self.first.at;
        let base = self.first.counters.clone();
        let mut prev = self.first;
        let mut t = 0;
        loop {
            t += 1;
            let deadline = start + interval * t as u32;
            // Short sleeps, so that a stop is seen quickly.
            while Instant::now() < deadline && !stopped() {
                std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
            }
            let now = read(s)?;
            let stop = stopped();
            if !stop || whole_tail || (now.at - prev.at) >= interval / 10 {
                on_second(second(t, &prev, &now, s));
            }
            if stop {
                return Ok(counter_deltas(&base, &now.counters));
            }
            prev = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_match_by_namespace_and_name() {
        let c = |ns: &str, iface: &str, rx: u64| IfaceCounters {
            host: None,
            role: "x".into(),
            ns: Some(ns.into()),
            iface: iface.into(),
            counters: IfCounters {
                rx_packets: rx,
                ..IfCounters::default()
            },
        };
        let before = vec![c("a", "d0", 10), c("b", "d0", 100)];
        let after = vec![c("a", "d0", 15), c("b", "d0", 130)];
        let d = counter_deltas(&before, &after);
        assert_eq!(d[0].counters.rx_packets, 5);
        assert_eq!(d[1].counters.rx_packets, 30);
    }
}
