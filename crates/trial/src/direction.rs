//! Traffic both ways: what each direction of a trial measured, and the
//! total of both ends' summaries and samples.

use hdrhistogram::Histogram;
use pktlab_engine::rx::{Latency, RxSummary};
use pktlab_engine::tx::TxSummary;
use pktlab_loss::drops::Drops;
use serde::{Deserialize, Serialize};

/// The names of a trial's directions both ways, in order.
pub const DIRECTIONS: [&str; 2] = ["forward", "reverse"];

/// One direction of a trial sent both ways: the figures a one-way trial
/// has, for this direction's generator and receiver alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Direction {
    /// `forward` (the generator's port to the receiver's) or `reverse`.
    pub name: String,
    /// Median forwarded test frames per second of this direction.
    pub forwarded_pps: f64,
    pub offered_pps: f64,
    pub lost: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    pub loss_ratio: f64,
    #[serde(default)]
    pub rx_samples: Vec<f64>,
    #[serde(default)]
    pub tx_samples: Vec<f64>,
    pub tx: TxSummary,
    pub rx: RxSummary,
    /// Where this direction's lost frames went (places no direction can
    /// claim are in the total's only).
    pub drops: Drops,
}

/// The per-interval samples of both directions added up, over the
/// intervals both have.
pub fn sum_samples(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Both receivers' summaries as one: counts and rates added up (the two
/// ran at the same time), the latency of every frame of both.
pub fn sum_rx(all: &[&RxSummary]) -> RxSummary {
    let add = |f: fn(&RxSummary) -> u64| all.iter().map(|s| f(s)).sum::<u64>();
    let addf = |f: fn(&RxSummary) -> f64| all.iter().map(|s| f(s)).sum::<f64>();
    let mut backends: Vec<&str> = all.iter().map(|s| s.backend.as_str()).collect();
    backends.dedup();
    let buckets = merged_buckets(all);
    RxSummary {
        backend: backends.join(", "),
        packets: add(|s| s.packets),
        bytes: add(|s| s.bytes),
        seconds: all.iter().map(|s| s.seconds).fold(0.0, f64::max),
        pps: addf(|s| s.pps),
        l2_bps: addf(|s| s.l2_bps),
        l1_bps: addf(|s| s.l1_bps),
        flows: add(|s| s.flows),
        streams: add(|s| s.streams),
        lost: add(|s| s.lost),
        out_of_order: add(|s| s.out_of_order),
        duplicates: add(|s| s.duplicates),
        foreign: add(|s| s.foreign),
        untracked: add(|s| s.untracked),
        ring_drops: add(|s| s.ring_drops),
        bad_stamps: add(|s| s.bad_stamps),
        latency_ns: latency_of(&buckets).or_else(|| {
            // Receivers that kept no buckets: only a single latency stands.
            let mut some = all.iter().filter_map(|s| s.latency_ns);
            match (some.next(), some.next()) {
                (Some(l), None) => Some(l),
                _ => None,
            }
        }),
        latency_buckets: buckets,
        interrupted: all.iter().any(|s| s.interrupted),
        threads: all.iter().flat_map(|s| s.threads.iter().cloned()).collect(),
        iface: None,
    }
}

/// Both receivers' latency buckets, merged in rising order.
fn merged_buckets(all: &[&RxSummary]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = all
        .iter()
        .flat_map(|s| s.latency_buckets.iter().copied())
        .collect();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (ns, n) in v {
        match out.last_mut() {
            Some(last) if last.0 == ns => last.1 += n,
            _ => out.push((ns, n)),
        }
    }
    out
}

/// The latency figures of merged buckets, as a receiver computes its own
/// (an HDR histogram of 3 significant digits); None without any.
fn latency_of(buckets: &[(u64, u64)]) -> Option<Latency> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).ok()?;
    for &(ns, n) in buckets {
        h.record_n(ns.max(1), n).ok()?;
    }
    (!h.is_empty()).then(|| Latency {
        count: h.len(),
        min: h.min(),
        avg: h.mean(),
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
        one_in: None,
    })
}

/// Both generators' summaries as one.
pub fn sum_tx(all: &[&TxSummary]) -> TxSummary {
    let owned: Vec<TxSummary> = all.iter().map(|s| (*s).clone()).collect();
    let mut total = pktlab_remote::ssh::several::sum_summaries(&owned);
    // Both ran at the same time: their rates add up.
    total.pps = all.iter().map(|s| s.pps).sum();
    total.l2_bps = all.iter().map(|s| s.l2_bps).sum();
    total.l1_bps = all.iter().map(|s| s.l1_bps).sum();
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(packets: u64, pps: f64, buckets: Vec<(u64, u64)>) -> RxSummary {
        let mut s: RxSummary = serde_json::from_value(serde_json::json!({
            "backend": "afpacket", "packets": packets, "bytes": packets * 64, "seconds": 2.0,
            "pps": pps, "l2_bps": 0.0, "l1_bps": 0.0, "flows": 2000, "streams": 2000,
            "lost": 1, "out_of_order": 0, "duplicates": 0, "foreign": 3, "ring_drops": 0,
            "latency_ns": null, "interrupted": false, "threads": [], "iface": null
        }))
        .unwrap();
        s.latency_buckets = buckets;
        s
    }

    #[test]
    fn both_receivers_add_up() {
        let a = rx(1000, 500.0, vec![(10_000, 3), (20_000, 1)]);
        let b = rx(600, 300.0, vec![(10_000, 1), (50_000, 1)]);
        let t = sum_rx(&[&a, &b]);
        assert_eq!(
            (t.packets, t.bytes, t.foreign, t.lost),
            (1600, 102_400, 6, 2)
        );
        assert_eq!((t.pps, t.flows, t.seconds), (800.0, 4000, 2.0));
        assert_eq!(t.backend, "afpacket");
        assert_eq!(t.latency_buckets, [(10_000, 4), (20_000, 1), (50_000, 1)]);
        // 6 frames: 4 at 10 µs, 1 at 20 µs, 1 at 50 µs.
        let l = t.latency_ns.unwrap();
        assert_eq!(l.count, 6);
        assert!((10_000..10_010).contains(&l.p50), "{}", l.p50);
        assert!((49_900..=50_100).contains(&l.max), "{}", l.max);
        // (4 × 10 + 20 + 50) / 6 µs.
        assert!((l.avg - 18_333.3).abs() < 50.0, "{}", l.avg);
        assert_eq!(sum_samples(&[1.0, 2.0, 3.0], &[10.0, 20.0]), [11.0, 22.0]);
    }
}
