//! The trials at one load, and what they say about it for a target.
//!
//! A trial is high-loss when it lost more than the target's loss ratio.
//! Full-length trials (at least the target's trial duration) count as they
//! are; shorter ones only count against a load, by how much their
//! high-loss seconds outweigh their low-loss seconds (a short clean trial
//! proves little, a short lossy one proves a lot). Seconds not yet
//! measured up to the duration sum are "missing": a load is an upper bound
//! when it exceeds the exceed ratio even if every missing second were
//! clean, a lower bound when it stays within it even if every missing
//! second were lossy, and undecided otherwise.
//!
//! A trial whose generator fell short of the load counts like a short one:
//! frames never offered prove nothing about the load, but loss at an even
//! lower load still speaks against it. So does a tester-limited trial
//! (most of its loss was the tester's own, `crate::drops`), and its
//! tester-side loss is never the DUT's: it is judged by the rest.

/// What one trial measured.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Measurement {
    /// The load the search asked for, in frames per second.
    pub intended_pps: f64,
    /// The load the generator achieved (frames sent / duration).
    pub offered_pps: f64,
    /// Seconds the generator sent for.
    pub duration_s: f64,
    /// Frames sent.
    pub tx: u64,
    /// Frames received in time.
    pub rx: u64,
    /// Lost frames that the drop attribution placed on the tester's side
    /// (0 where it is not known).
    #[serde(default)]
    pub tester_lost: u64,
    /// Most of the loss was on the tester's side (`crate::drops`).
    #[serde(default)]
    pub tester_limited: bool,
}

impl Measurement {
    pub fn lost(&self) -> u64 {
        self.tx.saturating_sub(self.rx)
    }

    /// Lost frames over sent frames (0 when nothing was sent).
    pub fn loss_ratio(&self) -> f64 {
        if self.tx == 0 {
            0.0
        } else {
            self.lost() as f64 / self.tx as f64
        }
    }

    /// The loss that speaks about the DUT: a tester-limited trial's
    /// tester-side frames are left out, any other trial's loss counts whole.
    pub fn dut_loss_ratio(&self) -> f64 {
        if !self.tester_limited || self.tx == 0 {
            return self.loss_ratio();
        }
        self.lost().saturating_sub(self.tester_lost) as f64 / self.tx as f64
    }

    /// Frames the DUT forwarded per second.
    pub fn forwarded_pps(&self) -> f64 {
        self.rx as f64 / self.duration_s
    }

    /// The generator fell short of the intended load by more than
    /// `tolerance` (a fraction): its frames were never offered to the DUT.
    pub fn generator_limited(&self, tolerance: f64) -> bool {
        self.offered_pps < self.intended_pps * (1.0 - tolerance)
    }

    /// The trial measured the tester rather than the DUT: its generator
    /// fell short of the load, or most of its loss was the tester's.
    pub fn limited(&self, tolerance: f64) -> bool {
        self.generator_limited(tolerance) || self.tester_limited
    }
}

/// Whether `t` counts as a full-length trial: long enough (to the
/// millisecond) and, with `generator_tolerance`, neither generator- nor
/// tester-limited.
pub fn full_length(t: &Measurement, trial_duration: f64, generator_tolerance: Option<f64>) -> bool {
    t.duration_s >= trial_duration - 1e-3 && !generator_tolerance.is_some_and(|tol| t.limited(tol))
}

/// A load's classification for one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Upper,
    Lower,
    Undecided,
}

impl Class {
    /// As `trials.jsonl` writes it.
    pub fn name(self) -> &'static str {
        match self {
            Class::Upper => "upper",
            Class::Lower => "lower",
            Class::Undecided => "undecided",
        }
    }
}

/// Trial-second sums of one load for one target.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sums {
    pub good_long: f64,
    pub bad_long: f64,
    pub good_short: f64,
    pub bad_short: f64,
}

impl Sums {
    /// Sums `trials` for a target with `loss_ratio` and full-length trials
    /// of `trial_duration` seconds. With `generator_tolerance`, a trial that
    /// fell short of its load by more than it, or a tester-limited one,
    /// counts as short. A trial's loss is its [`Measurement::dut_loss_ratio`].
    pub fn of<'a>(
        trials: impl IntoIterator<Item = &'a Measurement>,
        loss_ratio: f64,
        trial_duration: f64,
        generator_tolerance: Option<f64>,
    ) -> Sums {
        let mut s = Sums::default();
        for t in trials {
            let bad = t.dut_loss_ratio() > loss_ratio;
            let long = full_length(t, trial_duration, generator_tolerance);
            let sum = match (long, bad) {
                (true, false) => &mut s.good_long,
                (true, true) => &mut s.bad_long,
                (false, false) => &mut s.good_short,
                (false, true) => &mut s.bad_short,
            };
            *sum += t.duration_s;
        }
        s
    }

    /// High-loss seconds that count: every full-length one, and short ones
    /// by how much they outweigh short low-loss ones.
    pub fn effective_bad(&self) -> f64 {
        self.bad_long + (self.bad_short - self.good_short).max(0.0)
    }

    /// Classifies the load against `duration_sum` and `exceed_ratio`.
    pub fn classify(&self, duration_sum: f64, exceed_ratio: f64) -> Class {
        let bad = self.effective_bad();
        let whole = bad + self.good_long;
        let missing = (duration_sum - whole).max(0.0);
        // More seconds than the sum: the trials speak for themselves.
        let total = duration_sum.max(whole);
        // A tiny slack so that 10.5 of 21 s is exactly half.
        const EPS: f64 = 1e-9;
        if bad / total > exceed_ratio + EPS {
            Class::Upper
        } else if (bad + missing) / total <= exceed_ratio + EPS {
            Class::Lower
        } else {
            Class::Undecided
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(duration_s: f64, tx: u64, rx: u64) -> Measurement {
        Measurement {
            intended_pps: tx as f64 / duration_s,
            offered_pps: tx as f64 / duration_s,
            duration_s,
            tx,
            rx,
            tester_lost: 0,
            tester_limited: false,
        }
    }

    #[test]
    fn sums_split_by_length_and_loss() {
        // PDR 0.5 %: 1000 sent, 996 received is 0.4 % (low), 994 is 0.6 % (high).
        let trials = [
            trial(1.0, 1000, 996),
            trial(1.0, 1000, 994),
            trial(0.5, 500, 500),
            trial(0.5, 500, 490),
            trial(0.5, 500, 480),
        ];
        let s = Sums::of(&trials, 0.005, 1.0, None);
        assert_eq!(
            s,
            Sums {
                good_long: 1.0,
                bad_long: 1.0,
                good_short: 0.5,
                bad_short: 1.0
            }
        );
        // 1 s long + (1 − 0.5) s short.
        assert_eq!(s.effective_bad(), 1.5);
        // NDR: every trial with any loss is high-loss.
        let s = Sums::of(&trials, 0.0, 1.0, None);
        assert_eq!((s.good_long, s.bad_long), (0.0, 2.0));
        // Short clean trials never make up for long lossy ones.
        let s = Sums::of(
            &[trial(1.0, 10, 9), trial(0.5, 5, 5), trial(0.5, 5, 5)],
            0.0,
            1.0,
            None,
        );
        assert_eq!(s.effective_bad(), 1.0);
        // A trial 11 % short of its load counts as short, lossy or not.
        let mut short = trial(1.0, 2975, 2975);
        short.intended_pps = 3342.0;
        let mut lossy = short;
        lossy.rx = 2900;
        let s = Sums::of(&[short, lossy], 0.0, 1.0, Some(0.005));
        assert_eq!((s.good_short, s.bad_short, s.good_long), (1.0, 1.0, 0.0));
        let s = Sums::of(&[short], 0.0, 1.0, None);
        assert_eq!(s.good_long, 1.0);
    }

    #[test]
    fn exceed_ratio_one_half_of_21_seconds() {
        let sums = |good: f64, bad: f64| Sums {
            good_long: good,
            bad_long: bad,
            ..Sums::default()
        };
        // 11 clean seconds: even 10 lossy missing ones are 10/21 < 1/2.
        assert_eq!(sums(11.0, 0.0).classify(21.0, 0.5), Class::Lower);
        assert_eq!(sums(10.0, 0.0).classify(21.0, 0.5), Class::Undecided);
        // 11 lossy seconds: 11/21 > 1/2 whatever comes.
        assert_eq!(sums(0.0, 11.0).classify(21.0, 0.5), Class::Upper);
        assert_eq!(sums(0.0, 10.0).classify(21.0, 0.5), Class::Undecided);
        assert_eq!(sums(10.0, 10.0).classify(21.0, 0.5), Class::Undecided);
        // Past the sum: 12 lossy of 24 is exactly the ratio, still allowed.
        assert_eq!(sums(12.0, 12.0).classify(21.0, 0.5), Class::Lower);
        assert_eq!(sums(11.0, 13.0).classify(21.0, 0.5), Class::Upper);
    }

    #[test]
    fn exceed_ratio_zero() {
        let sums = |good: f64, bad: f64| Sums {
            good_long: good,
            bad_long: bad,
            ..Sums::default()
        };
        // Any lossy second is an upper bound; a lower bound needs the whole sum.
        assert_eq!(sums(20.0, 1.0).classify(60.0, 0.0), Class::Upper);
        assert_eq!(sums(59.0, 0.0).classify(60.0, 0.0), Class::Undecided);
        assert_eq!(sums(60.0, 0.0).classify(60.0, 0.0), Class::Lower);
        // One trial decides a target whose sum is one trial.
        assert_eq!(sums(1.0, 0.0).classify(1.0, 0.5), Class::Lower);
        assert_eq!(sums(0.0, 1.0).classify(1.0, 0.5), Class::Upper);
    }

    #[test]
    fn generator_limited_beyond_the_tolerance() {
        let mut t = trial(1.0, 995, 995);
        t.intended_pps = 1000.0;
        assert!(!t.generator_limited(0.005));
        t.offered_pps = 994.0;
        assert!(t.generator_limited(0.005));
        assert_eq!(trial(1.0, 0, 0).loss_ratio(), 0.0);
    }

    #[test]
    fn a_tester_limited_trials_loss_leaves_the_tester_out() {
        // 1000 sent, 100 lost, 80 of them by the tester.
        let mut t = trial(1.0, 1000, 900);
        t.tester_lost = 80;
        assert_eq!(t.dut_loss_ratio(), 0.1);
        t.tester_limited = true;
        assert_eq!(t.dut_loss_ratio(), 0.02);
        assert!(t.limited(0.005) && !t.generator_limited(0.005));
        // Short with a tolerance, full-length without one.
        assert!(!full_length(&t, 1.0, Some(0.005)));
        assert!(full_length(&t, 1.0, None));
        let s = Sums::of(&[t], 0.01, 1.0, Some(0.005));
        assert_eq!((s.bad_short, s.good_short, s.bad_long), (1.0, 0.0, 0.0));
        let s = Sums::of(&[t], 0.05, 1.0, None);
        assert_eq!((s.good_long, s.bad_long), (1.0, 0.0));
    }

    #[test]
    fn forwarded_rate_and_lost_frames() {
        // 900 of 1000 frames in 2 s: 450 forwarded per second, 100 lost.
        let t = trial(2.0, 1000, 900);
        assert_eq!(t.forwarded_pps(), 450.0);
        assert_eq!(t.lost(), 100);
        assert_eq!(t.loss_ratio(), 0.1);
        // More received than sent (duplicates): nothing lost.
        assert_eq!(trial(1.0, 10, 12).lost(), 0);
    }

    #[test]
    fn a_bad_share_of_exactly_the_slack_is_not_upper() {
        // Exceed ratio 0: bad / total = 1e-9 is the slack itself, within
        // it; with the 1 s sum all but missing, the load is undecided.
        let s = Sums {
            bad_long: 1e-9,
            ..Sums::default()
        };
        assert_eq!(s.classify(1.0, 0.0), Class::Undecided);
        // Twice the slack is over it.
        let s = Sums {
            bad_long: 2e-9,
            ..Sums::default()
        };
        assert_eq!(s.classify(1.0, 0.0), Class::Upper);
    }
}
