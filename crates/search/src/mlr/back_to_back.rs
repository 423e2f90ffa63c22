//! RFC 2544's back-to-back frames test (section 26.4, as updated by RFC
//! 9004): bursts at the maximum load, searching the longest burst that the
//! DUT forwards without losing a frame. Each search is one of the RFC's
//! trials (50 by default); the result is their average.
//!
//! The search is pure: [`BurstSearch::next`] says which burst to send,
//! [`BurstSearch::add`] takes what it lost. Bursts are bisected
//! geometrically (the answer may be anywhere from 1 to millions of frames)
//! until the longest clean burst and the shortest lossy one are within the
//! width of each other, or one frame apart.

use pktlab_engine::tx::TxSummary;

use super::record::{TrialLine, BACK_TO_BACK};
use pktlab_trial::trial::GENERATOR_TOLERANCE;

/// The longest burst: the maximum load for a whole trial.
pub fn max_frames(max_pps: f64, trial_s: f64) -> u64 {
    ((max_pps * trial_s).round() as u64).max(1)
}

/// A burst trial's line: its rate is the burst's own (frames over the time
/// it took to send them), not the trial's.
/// Both ways (`ways` 2), each direction sent a burst of `frames` and
/// `tx` is both generators' total.
pub fn line(
    base: TrialLine,
    frames: u64,
    repetition: usize,
    tx: &TxSummary,
    ways: u64,
) -> TrialLine {
    let offered = if tx.pps.is_finite() {
        tx.pps / ways as f64
    } else {
        0.0
    };
    TrialLine {
        duration_s: tx.seconds,
        offered_pps: offered,
        generator_limited: tx.packets < frames * ways
            || offered < base.max_pps * (1.0 - GENERATOR_TOLERANCE),
        burst: Some(frames),
        repetition: Some(repetition),
        ..base
    }
}

/// One search for the longest burst without loss.
#[derive(Clone, Debug, PartialEq)]
pub struct BurstSearch {
    /// The longest burst tried: the maximum load over a whole trial.
    pub max_frames: u64,
    /// Relative width at which the search stops.
    pub width: f64,
    /// The longest burst sent without loss (0: none yet).
    pub clean: u64,
    /// The shortest burst that lost frames (None: none yet).
    pub lossy: Option<u64>,
}

impl BurstSearch {
    pub fn new(max_frames: u64, width: f64) -> BurstSearch {
        BurstSearch {
            max_frames: max_frames.max(1),
            width,
            clean: 0,
            lossy: None,
        }
    }

    /// A burst of `frames` lost `lost` of them.
    pub fn add(&mut self, frames: u64, lost: u64) {
        if lost == 0 {
            self.clean = self.clean.max(frames);
        } else {
            self.lossy = Some(self.lossy.map_or(frames, |l| l.min(frames)));
        }
    }

    /// The next burst to send, or None when the search is over.
    pub fn next(&self) -> Option<u64> {
        let Some(hi) = self.lossy else {
            // First the whole trial at the maximum load: a DUT that keeps
            // up with it has no back-to-back limit to find.
            return (self.clean < self.max_frames).then_some(self.max_frames);
        };
        let lo = self.clean;
        if hi <= lo {
            // A shorter burst lost what a longer one did not: the clean
            // one stands, nothing left between them to try.
            return None;
        }
        let close = ((lo as f64 * self.width).floor() as u64).max(1);
        if hi - lo <= close {
            return None;
        }
        let mid = ((lo.max(1) as f64) * hi as f64).sqrt().round() as u64;
        Some(mid.clamp(lo + 1, hi - 1))
    }

    /// The search's answer: the longest burst without loss, and whether it
    /// is only a floor (the DUT kept up with the maximum load throughout).
    pub fn result(&self) -> (u64, bool) {
        (
            self.clean,
            self.lossy.is_none() && self.clean >= self.max_frames,
        )
    }
}

/// RFC 9004's buffer times from the average back-to-back frames, the
/// maximum (theoretical) frame rate and the measured throughput (all in
/// frames and frames per second).
///
/// - implied DUT buffer time = frames / max rate;
/// - corrected DUT buffer time = implied × (1 − throughput / max rate):
///   while the burst arrives, the DUT forwards at its throughput, so only
///   the rest of the burst was held in its buffer.
pub fn buffer_times(frames: f64, max_pps: f64, throughput_pps: Option<f64>) -> (f64, Option<f64>) {
    let implied = frames / max_pps;
    let corrected = throughput_pps.map(|t| implied * (1.0 - (t / max_pps).min(1.0)));
    (implied, corrected)
}

/// One back-to-back test in `rfc2544.json`'s `back_to_back` list.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BackToBack {
    pub config: String,
    pub traffic: String,
    pub size: String,
    pub iteration: usize,
    /// The average of the searches' longest bursts without loss.
    pub frames: f64,
    pub min_frames: u64,
    pub max_frames: u64,
    /// The mean rate the generator achieved over those bursts.
    pub burst_pps: f64,
    /// The maximum load, which the bursts were asked to reach.
    pub max_pps: f64,
    /// Finished searches (the RFCs' trials) and bursts sent by all.
    pub trials: usize,
    pub bursts: usize,
    /// Some search's longest burst was the whole trial: the DUT kept up
    /// with the maximum load, and the frames are a floor.
    pub at_least: bool,
    /// The throughput (NDR) the correction uses.
    pub throughput_pps: Option<f64>,
    pub implied_buffer_time_s: Option<f64>,
    pub corrected_buffer_time_s: Option<f64>,
}

/// Every back-to-back test from the trial lines: for each configuration,
/// traffic and iteration, its finished searches averaged. `ndr` gives the
/// measured throughput of the same search.
pub fn summarize(
    lines: &[TrialLine],
    trial_s: f64,
    width: f64,
    ndr: &dyn Fn(&str, &str, usize) -> Option<f64>,
) -> Vec<BackToBack> {
    let mine: Vec<&TrialLine> = lines.iter().filter(|l| l.test == BACK_TO_BACK).collect();
    let mut keys: Vec<(&str, &str, usize)> = Vec::new();
    for l in &mine {
        let k = (l.config.as_str(), l.traffic.as_str(), l.iteration);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (config, traffic, iteration) in keys {
        let run: Vec<&&TrialLine> = mine
            .iter()
            .filter(|l| l.of_run(config, traffic, iteration))
            .collect();
        let max_pps = run[0].max_pps;
        let mut reps: Vec<usize> = run.iter().filter_map(|l| l.repetition).collect();
        reps.sort_unstable();
        reps.dedup();
        let mut found: Vec<u64> = Vec::new();
        let mut rates: Vec<f64> = Vec::new();
        let mut at_least = false;
        for rep in reps {
            let bursts: Vec<&&&TrialLine> =
                run.iter().filter(|l| l.repetition == Some(rep)).collect();
            let mut s = BurstSearch::new(max_frames(max_pps, trial_s), width);
            for l in &bursts {
                s.add(l.burst.unwrap_or(l.tx), l.lost);
            }
            if s.next().is_some() {
                continue; // Cut short: not a trial yet.
            }
            let (frames, floor) = s.result();
            at_least |= floor;
            found.push(frames);
            rates.extend(
                bursts
                    .iter()
                    .filter(|l| l.burst == Some(frames) && l.lost == 0)
                    .map(|l| l.offered_pps),
            );
        }
        if found.is_empty() {
            continue;
        }
        let frames = found.iter().sum::<u64>() as f64 / found.len() as f64;
        let throughput = ndr(config, traffic, iteration);
        let (implied, corrected) = buffer_times(frames, max_pps, throughput);
        out.push(BackToBack {
            config: config.into(),
            traffic: traffic.into(),
            size: run[0].size.clone(),
            iteration,
            frames,
            min_frames: *found.iter().min().unwrap_or(&0),
            max_frames: *found.iter().max().unwrap_or(&0),
            burst_pps: if rates.is_empty() {
                0.0
            } else {
                rates.iter().sum::<f64>() / rates.len() as f64
            },
            max_pps,
            trials: found.len(),
            bursts: run.len(),
            at_least,
            throughput_pps: throughput,
            implied_buffer_time_s: Some(implied),
            corrected_buffer_time_s: corrected,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a DUT that loses every burst above `limit`.
    fn run(max: u64, width: f64, limit: u64) -> (Vec<u64>, (u64, bool)) {
        let mut s = BurstSearch::new(max, width);
        let mut sent = Vec::new();
        while let Some(n) = s.next() {
            sent.push(n);
            s.add(n, n.saturating_sub(limit));
            assert!(sent.len() < 100, "no end: {sent:?}");
        }
        (sent, s.result())
    }

    #[test]
    fn bisects_geometrically_to_one_frame() {
        // [0, 100]: √(1·100) = 10 clean; √(10·100) = 31.6 → 32 lossy;
        // √(10·32) = 17.9 → 18 clean; √(18·32) = 24 lossy; √(18·24) = 20.8
        // → 21 clean; √(21·24) = 22.4 → 22 lossy: 21 and 22 are one apart.
        let (sent, result) = run(100, 0.0, 21);
        assert_eq!(sent, [100, 10, 32, 18, 24, 21, 22]);
        assert_eq!(result, (21, false));
    }

    #[test]
    fn stops_at_the_relative_width() {
        // Width 10 %, rounded down to whole frames: [18, 24] is 6 apart,
        // above 1; [21, 24] 3, above 2; √(21·24) = 22.4 → 22 clean: [22, 24]
        // is 2 apart, within 2.
        let (sent, result) = run(100, 0.1, 22);
        assert_eq!(sent, [100, 10, 32, 18, 24, 21, 22]);
        assert_eq!(result, (22, false));
    }

    #[test]
    fn a_dut_that_keeps_up_or_loses_everything() {
        // Keeps up at the maximum load for the whole trial: a floor.
        let (sent, result) = run(1000, 0.005, 5000);
        assert_eq!((sent, result), (vec![1000], (1000, true)));
        // Loses even one frame: 0 after trying 1000 and 1 (√(1·1000) = 31.6
        // → 32, √(1·32) = 5.7 → 6, √6 = 2.4 → 2, then 1).
        let (sent, result) = run(1000, 0.005, 0);
        assert_eq!(sent, [1000, 32, 6, 2, 1]);
        assert_eq!(result, (0, false));
    }

    #[test]
    fn a_resumed_search_goes_on_from_its_trials() {
        let mut s = BurstSearch::new(100, 0.0);
        s.add(100, 79);
        s.add(10, 0);
        assert_eq!(s.next(), Some(32));
        // Inverted: a shorter burst lost, a longer one did not.
        s.add(32, 0);
        s.add(20, 1);
        assert_eq!(s.next(), None);
        assert_eq!(s.result(), (32, false));
    }

    fn burst_line(rep: usize, burst: u64, lost: u64, pps: f64) -> TrialLine {
        TrialLine {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            test: BACK_TO_BACK.into(),
            iteration: 1,
            intended_pps: Some(1000.0),
            offered_pps: pps,
            duration_s: burst as f64 / pps,
            tx: burst,
            rx: burst - lost,
            lost,
            late: Some(0),
            loss_ratio: lost as f64 / burst as f64,
            generator_limited: false,
            max_pps: 1000.0,
            classes: vec![],
            started_at: 0,
            burst: Some(burst),
            repetition: Some(rep),
            load_fraction: None,
            latency_ns: None,
            drops: None,
            latency_note: None,
            directions: Vec::new(),
        }
    }

    #[test]
    fn searches_averaged_with_buffer_times() {
        // Maximum 1000 pps, 0.1 s trials: bursts of at most 100 frames.
        // Search 1 ends at 21 (the first test's steps), search 2 at 10
        // (100, 10 clean, 32 lossy, 18 lossy, 13 lossy, 11 lossy: 10 and
        // 11 are one apart), search 3 is cut short after two bursts.
        let mut lines: Vec<TrialLine> = [(100, 79), (10, 0), (32, 11), (18, 0), (24, 3)]
            .iter()
            .chain(&[(21, 0), (22, 1)])
            .map(|&(b, l)| burst_line(1, b, l, 990.0))
            .collect();
        for (b, l) in [(100, 90), (10, 0), (32, 22), (18, 8), (13, 3), (11, 1)] {
            lines.push(burst_line(2, b, l, 980.0));
        }
        lines.push(burst_line(3, 100, 90, 970.0));
        lines.push(burst_line(3, 10, 0, 970.0));
        let r = summarize(&lines, 0.1, 0.0, &|c, t, i| {
            assert_eq!((c, t, i), ("police", "inet4", 1));
            Some(250.0)
        });
        assert_eq!(r.len(), 1);
        let r = &r[0];
        assert_eq!((r.trials, r.bursts, r.at_least), (2, 15, false));
        assert_eq!((r.frames, r.min_frames, r.max_frames), (15.5, 10, 21));
        // The clean bursts at each search's answer: 21 at 990, 10 at 980.
        assert!((r.burst_pps - 985.0).abs() < 1e-9, "{}", r.burst_pps);
        // 15.5 / 1000 = 15.5 ms; × (1 − 250 / 1000) = 11.625 ms.
        assert!((r.implied_buffer_time_s.unwrap() - 0.0155).abs() < 1e-12);
        assert!((r.corrected_buffer_time_s.unwrap() - 0.011625).abs() < 1e-12);
    }

    #[test]
    fn buffer_times_by_hand() {
        // 1000 frames at 1 Mpps: 1 ms implied; the DUT forwards a quarter
        // of them (250 kpps) as they come: 750 µs corrected.
        let (i, c) = buffer_times(1000.0, 1e6, Some(250_000.0));
        assert!((i - 1.0e-3).abs() < 1e-12, "{i}");
        assert!((c.unwrap() - 0.75e-3).abs() < 1e-12, "{c:?}");
        // No throughput known: no correction.
        assert_eq!(buffer_times(500.0, 1000.0, None), (0.5, None));
        // A throughput at the maximum rate leaves nothing buffered.
        assert_eq!(buffer_times(500.0, 1000.0, Some(1000.0)).1, Some(0.0));
    }
}
