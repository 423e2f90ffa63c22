//! The latency test: trials at fractions of the found PDR (0, 10, 50 and
//! 90 % by default, as FD.io CSIT does), each frame's one-way latency kept
//! as an HDR histogram in `latency-histograms.jsonl`, one line per trial.
//! The percentiles of a load are those of its trials' histograms merged,
//! so they come from every frame.

use hdrhistogram::Histogram;
use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;

use super::record::TrialLine;

/// The histograms' file in the results folder.
pub const HISTOGRAMS_FILE: &str = "latency-histograms.jsonl";
/// The default loads, as fractions of the PDR.
pub const DEFAULT_LOADS: [f64; 4] = [0.0, 0.1, 0.5, 0.9];
/// Trials per load unless told.
pub const DEFAULT_TRIALS: usize = 3;
/// The histograms' precision, as the receiver records them.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// The receiver clamps latencies above an hour.
const MAX_NS: u64 = 3_600_000_000_000;

/// Where the timestamps come from, and why they are comparable.
pub const CLOCK: &str = "one host: the generator stamps CLOCK_REALTIME into each frame as it writes it, \
     the receiver takes the kernel's receive time (AF_PACKET) or CLOCK_REALTIME as it reads the frame (AF_XDP); \
     both ends run on this machine, so both read the same clock";

/// Where the timestamps come from when the generator and the receiver are
/// on different hosts ([`LatencyResult::latency_note`] says what that is
/// worth).
pub const CROSS_HOST_CLOCK: &str = "two hosts: the generator stamps its host's CLOCK_REALTIME into each frame, \
     the receiver takes its own host's receive time; the latency is only as exact as the two clocks agree";

/// One latency trial's histogram.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HistogramLine {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub iteration: usize,
    pub load_fraction: f64,
    pub intended_pps: f64,
    pub repetition: usize,
    pub significant_digits: u8,
    /// `[ns, frames]`: each recorded bucket's highest equivalent value and
    /// its count, in rising order.
    pub buckets: Vec<(u64, u64)>,
}

impl HistogramLine {
    fn key(&self) -> (&str, &str, usize, u64, usize) {
        (
            &self.config,
            &self.traffic,
            self.iteration,
            self.load_fraction.to_bits(),
            self.repetition,
        )
    }
}

/// The load of `fraction` of the PDR: the search's minimum load for 0 %.
pub fn load(fraction: f64, pdr_pps: f64, min_pps: f64) -> f64 {
    (fraction * pdr_pps).max(min_pps)
}

/// Every histogram line of the folder (none when the file does not exist).
pub fn read(dir: &ResultsDir) -> Result<Vec<HistogramLine>, CampaignError> {
    dir.read_lines(HISTOGRAMS_FILE)
}

/// Appends `line` by rewriting the whole file atomically.
pub fn append(dir: &ResultsDir, line: &HistogramLine) -> Result<(), CampaignError> {
    dir.append_line(HISTOGRAMS_FILE, line)
}

/// One load's latency in `rfc2544.json`'s `latency` list.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyResult {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub iteration: usize,
    /// The load as a fraction of the PDR, the load asked for and the mean
    /// of what the trials offered.
    pub load_fraction: f64,
    pub load_pps: f64,
    pub offered_pps: f64,
    pub trials: usize,
    /// Frames whose latency was measured, over all trials.
    pub frames: u64,
    /// Frames lost over all trials (late ones included).
    pub lost: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub clock: String,
    /// Across hosts: what the load's latency is worth, from its trials'
    /// notes (a "not comparable" one wins); None on one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_note: Option<String>,
}

/// Percentiles of merged buckets: (frames, min, p50, p90, p99, p99.9, max).
pub fn percentiles<'a>(buckets: impl IntoIterator<Item = &'a (u64, u64)>) -> Option<[u64; 7]> {
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_NS, SIGNIFICANT_DIGITS)
        .expect("valid histogram bounds");
    for &(ns, n) in buckets {
        h.saturating_record_n(ns.clamp(1, MAX_NS), n);
    }
    (!h.is_empty()).then(|| {
        [
            h.len(),
            h.min(),
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.9),
            h.value_at_quantile(0.99),
            h.value_at_quantile(0.999),
            h.max(),
        ]
    })
}

/// Every load's latency from the latency trials and their histograms, in
/// the order the loads were measured. A trial whose histogram line is
/// missing (cut short between the two files) is left out.
pub fn summarize(lines: &[TrialLine], histograms: &[HistogramLine]) -> Vec<LatencyResult> {
    let mut out: Vec<LatencyResult> = Vec::new();
    let mut merged: Vec<Vec<(u64, u64)>> = Vec::new();
    for l in lines.iter().filter(|l| l.test == super::record::LATENCY) {
        let (Some(fraction), Some(rep), Some(load)) =
            (l.load_fraction, l.repetition, l.intended_pps)
        else {
            continue;
        };
        // The last line of a trial wins (a resumed run never repeats one).
        let Some(h) = histograms.iter().rev().find(|h| {
            h.key()
                == (
                    &*l.config,
                    &*l.traffic,
                    l.iteration,
                    fraction.to_bits(),
                    rep,
                )
        }) else {
            continue;
        };
        let i = match out.iter().position(|r| {
            r.config == l.config
                && r.traffic == l.traffic
                && r.iteration == l.iteration
                && r.load_fraction == fraction
        }) {
            Some(i) => i,
            None => {
                out.push(LatencyResult {
                    config: l.config.clone(),
                    traffic: l.traffic.clone(),
                    size: l.size.clone(),
                    iteration: l.iteration,
                    load_fraction: fraction,
                    load_pps: load,
                    offered_pps: 0.0,
                    trials: 0,
                    frames: 0,
                    lost: 0,
                    min_ns: 0,
                    p50_ns: 0,
                    p90_ns: 0,
                    p99_ns: 0,
                    p999_ns: 0,
                    max_ns: 0,
                    clock: CLOCK.into(),
                    latency_note: None,
                });
                merged.push(Vec::new());
                out.len() - 1
            }
        };
        let r = &mut out[i];
        r.offered_pps = (r.offered_pps * r.trials as f64 + l.offered_pps) / (r.trials + 1) as f64;
        r.trials += 1;
        r.lost += l.lost;
        if let Some(note) = &l.latency_note {
            r.clock = CROSS_HOST_CLOCK.into();
            let kept = r.latency_note.as_ref();
            if kept.is_none_or(|k| !k.starts_with("not comparable")) {
                r.latency_note = Some(note.clone());
            }
        }
        merged[i].extend_from_slice(&h.buckets);
    }
    for (r, buckets) in out.iter_mut().zip(&merged) {
        if let Some([n, min, p50, p90, p99, p999, max]) = percentiles(buckets) {
            (r.frames, r.min_ns, r.p50_ns, r.p90_ns) = (n, min, p50, p90);
            (r.p99_ns, r.p999_ns, r.max_ns) = (p99, p999, max);
        }
    }
    out.retain(|r| r.frames > 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_are_fractions_of_the_pdr_with_a_floor() {
        assert_eq!(load(0.5, 20_000.0, 10.0), 10_000.0);
        assert_eq!(load(0.9, 20_000.0, 10.0), 18_000.0);
        // 0 %: the search's lowest load, not no traffic at all.
        assert_eq!(load(0.0, 20_000.0, 10.0), 10.0);
    }

    #[test]
    fn percentiles_of_merged_buckets_by_hand() {
        // Two trials: 500 frames at 100 ns and 400 at 200 ns, then 90 at
        // 500 ns, 9 at 1000 ns and 1 at 2000 ns (1000 frames; below 2048
        // ns a 3-digit histogram is exact to the nanosecond).
        let a = [(100, 500), (200, 400)];
        let b = [(500, 90), (1000, 9), (2000, 1)];
        let [n, min, p50, p90, p99, p999, max] = percentiles(a.iter().chain(b.iter())).unwrap();
        assert_eq!((n, min, max), (1000, 100, 2000));
        // The 500th frame is at 100 ns, the 900th at 200, the 990th at
        // 500, the 999th at 1000.
        assert_eq!((p50, p90, p99, p999), (100, 200, 500, 1000));
        // Above, buckets are 2 ns wide from 2048 ns, 4 from 4096 ns, ...:
        // a value reads back as its bucket's highest (8000 → 8003).
        assert_eq!(percentiles(&[(8000, 1)]).unwrap()[6], 8003);
        assert_eq!(percentiles(&[]), None);
    }

    fn trial(fraction: f64, rep: usize, load: f64) -> TrialLine {
        TrialLine {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            test: super::super::record::LATENCY.into(),
            iteration: 1,
            intended_pps: Some(load),
            offered_pps: load * 0.99,
            duration_s: 1.0,
            tx: 100,
            rx: 99,
            lost: 1,
            late: Some(0),
            loss_ratio: 0.01,
            generator_limited: false,
            max_pps: 1e5,
            classes: vec![],
            started_at: 0,
            burst: None,
            repetition: Some(rep),
            load_fraction: Some(fraction),
            latency_ns: None,
            drops: None,
            latency_note: None,
            directions: Vec::new(),
        }
    }

    fn hist(fraction: f64, rep: usize, buckets: Vec<(u64, u64)>) -> HistogramLine {
        HistogramLine {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            load_fraction: fraction,
            intended_pps: 0.0,
            repetition: rep,
            significant_digits: SIGNIFICANT_DIGITS,
            buckets,
        }
    }

    #[test]
    fn each_load_merges_its_trials() {
        let lines = [
            trial(0.1, 1, 1000.0),
            trial(0.1, 2, 1000.0),
            trial(0.5, 1, 5000.0),
            trial(0.5, 2, 5000.0),
        ];
        let hists = [
            hist(0.1, 1, vec![(1000, 10)]),
            hist(0.1, 2, vec![(1500, 10)]),
            hist(0.5, 1, vec![(1800, 4)]),
            // 0.5 #2's histogram is missing: that trial is left out.
        ];
        let r = summarize(&lines, &hists);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].trials, r[0].frames, r[0].lost), (2, 20, 2));
        assert_eq!((r[0].min_ns, r[0].p50_ns, r[0].max_ns), (1000, 1000, 1500));
        assert_eq!(r[0].p90_ns, 1500);
        assert!((r[0].offered_pps - 990.0).abs() < 1e-9);
        assert_eq!((r[1].load_pps, r[1].trials, r[1].frames), (5000.0, 1, 4));
        assert_eq!((r[1].min_ns, r[1].max_ns), (1800, 1800));
        // One host: no note, the shared clock said.
        assert!(r
            .iter()
            .all(|r| r.latency_note.is_none() && r.clock == CLOCK));
    }

    #[test]
    fn across_hosts_a_load_keeps_its_trials_worst_clock_note() {
        let ok = "clocks of a and c synchronised to ±5.0 µs (chrony)";
        let bad = "not comparable: the clocks of a and c may be ±5.0 µs apart (chrony), more than the smallest latency measured (4.5 µs)";
        let noted = |fraction, rep, note: &str| TrialLine {
            latency_note: Some(note.into()),
            ..trial(fraction, rep, 1000.0)
        };
        // 0.1: not comparable in its second trial, and it stays so after a
        // third that is; 0.5: synchronised in both.
        let lines = [
            noted(0.1, 1, ok),
            noted(0.1, 2, bad),
            noted(0.1, 3, ok),
            noted(0.5, 1, ok),
            noted(0.5, 2, ok),
        ];
        let hists = [
            hist(0.1, 1, vec![(1000, 1)]),
            hist(0.1, 2, vec![(4500, 1)]),
            hist(0.1, 3, vec![(9000, 1)]),
            hist(0.5, 1, vec![(8000, 1)]),
            hist(0.5, 2, vec![(9000, 1)]),
        ];
        let r = summarize(&lines, &hists);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].latency_note.as_deref(), Some(bad));
        assert_eq!(r[1].latency_note.as_deref(), Some(ok));
        assert!(r.iter().all(|r| r.clock == CROSS_HOST_CLOCK));
        // The record says it; one host's results leave the key out.
        let v = serde_json::to_value(&r[1]).unwrap();
        assert_eq!(v["latency_note"], ok);
        assert_eq!(v["clock"], CROSS_HOST_CLOCK);
        let one = summarize(&[trial(0.1, 1, 1000.0)], &[hist(0.1, 1, vec![(1000, 1)])]);
        let v = serde_json::to_value(&one[0]).unwrap();
        assert!(v.get("latency_note").is_none(), "{v}");
    }
}
