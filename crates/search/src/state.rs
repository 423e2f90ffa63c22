//! The search: its trials, which trial next, and what the trials say.
//!
//! Targets are worked through level by level (every goal's coarsest target
//! first), so a trial asked for one goal serves all. A goal never goes
//! back to a coarser target it has reached, whatever later trials (longer
//! sums, another goal's loads) say about it: the finer target has taken
//! over from its bounds. Which load a target asks for is `select`'s.
//!
//! The search remembers, from the trials it is given in order, which
//! target asked for the last one and where that target started: a resumed
//! search, fed the recorded trials in order, knows the same.
//!
//! Bounds are reported conservatively: the relevant lower bound is the
//! highest lower bound *below* the relevant (lowest) upper bound, so a
//! higher load with less loss (loss inversion) never raises the result, and
//! it is flagged. A load's reported rate is at most what the generator
//! actually offered there.

use super::goal::{Goal, Target};
use super::load::{full_length, Class, Measurement, Sums};
use crate::SearchError;
use pktlab_trial::trial::GENERATOR_TOLERANCE;

/// What the search works with.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchConfig {
    pub goals: Vec<Goal>,
    /// The highest load tried, in frames per second.
    pub max_load: f64,
    /// The lowest load tried.
    pub min_load: f64,
    /// A trial offering less than the intended load by more than this
    /// fraction is generator-limited.
    pub generator_tolerance: f64,
    /// The search stops after this many trials, whatever it found.
    pub max_trials: usize,
}

/// A bound on a search that noise keeps from converging.
pub const MAX_TRIALS: usize = 1000;

impl SearchConfig {
    /// The goals between `min_load` and `max_load`, with the usual
    /// tolerance and trial limit.
    pub fn new(goals: Vec<Goal>, min_load: f64, max_load: f64) -> SearchConfig {
        SearchConfig {
            goals,
            max_load,
            min_load,
            generator_tolerance: GENERATOR_TOLERANCE,
            max_trials: MAX_TRIALS,
        }
    }
}

/// A trial the search wants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrialRequest {
    pub load: f64,
    pub duration_s: f64,
    /// Which goal and which of its targets asked for it.
    pub goal: usize,
    pub target: usize,
}

/// A bound of a goal.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bound {
    /// The load the trials asked for.
    pub intended_pps: f64,
    /// The rate to report: the intended load, or less when the generator
    /// offered less in any trial there.
    pub pps: f64,
}

/// What the search found for one goal.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoalResult {
    pub goal: Goal,
    /// The relevant lower bound (None: even the minimum load is too lossy).
    pub lower: Option<Bound>,
    /// The relevant upper bound (None: the maximum load met the goal).
    pub upper: Option<Bound>,
    /// The lower bound's rate less its exceed-ratio quantile of loss.
    pub conditional_throughput_pps: Option<f64>,
    /// The lower bound is the maximum load: the DUT may forward more.
    pub hit_max: bool,
    /// A trial at the lower bound offered less than intended: the result is
    /// what the generator could offer, "at least" that for the DUT.
    pub generator_limited: bool,
    /// A trial at the lower bound lost frames mostly on the tester's side
    /// (`crate::drops`): the result is "at least" that for the DUT.
    #[serde(default)]
    pub tester_limited: bool,
    /// A lower bound lies above the relevant upper bound.
    pub loss_inversion: bool,
    /// The final target was reached (not cut short).
    pub complete: bool,
}

#[derive(Clone, Debug)]
pub(super) struct Load {
    pub(super) load: f64,
    pub(super) trials: Vec<Measurement>,
}

/// A search in progress.
#[derive(Clone, Debug)]
pub struct Search {
    pub(super) config: SearchConfig,
    /// Loads measured so far, in increasing order.
    pub(super) loads: Vec<Load>,
    trials: usize,
    /// The last trial, when it was the one the search asked for: which
    /// goal and target asked, and the load. A resumed search replays its
    /// trials in order, so it knows this too.
    pub(super) last: Option<TrialRequest>,
    /// The coarser target's relevant bounds when the target that asked for
    /// the last trial took over (from another target).
    pub(super) entry: Option<Entry>,
    /// Per goal, how many of its coarser targets the search has passed: it
    /// never goes back to them, whatever later trials say about them.
    passed: Vec<usize>,
}

/// Where a target started from: its coarser target's relevant bounds at
/// the time, which later trials (its own among them) may move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Entry {
    pub(super) goal: usize,
    pub(super) target: usize,
    pub(super) lower: Option<f64>,
    pub(super) upper: Option<f64>,
}

/// Two loads closer than this (relatively) are the same load.
pub(super) const SAME_LOAD: f64 = 1e-9;

pub(super) fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_LOAD * a.abs().max(b.abs())
}

impl Search {
    pub fn new(config: SearchConfig) -> Result<Search, SearchError> {
        if config.goals.is_empty() {
            return Err(SearchError("a search needs at least one goal".into()));
        }
        for g in &config.goals {
            g.check()?;
        }
        let loads_ok = config.min_load.is_finite()
            && config.max_load.is_finite()
            && config.min_load > 0.0
            && config.min_load <= config.max_load;
        if !loads_ok {
            return Err(SearchError(format!(
                "invalid search loads: the minimum ({} pps) must be more than 0 and at most the maximum ({} pps)",
                config.min_load, config.max_load
            )));
        }
        let goals = config.goals.len();
        Ok(Search {
            config,
            loads: Vec::new(),
            trials: 0,
            last: None,
            entry: None,
            passed: vec![0; goals],
        })
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Trials added so far.
    pub fn trial_count(&self) -> usize {
        self.trials
    }

    /// Adds a finished trial, at the load it intended.
    pub fn add(&mut self, m: Measurement) {
        // Whether the search asked for this trial, and for which target:
        // that target goes on with the same load until it is decided, and
        // works from where it started.
        let asked = self.wanted().filter(|r| same(r.load, m.intended_pps));
        self.pass();
        self.entry = asked.map(|r| match self.entry {
            Some(e) if (e.goal, e.target) == (r.goal, r.target) => e,
            _ => self.entry_of(r.goal, r.target),
        });
        self.last = asked;
        self.trials += 1;
        match self.loads.iter_mut().find(|l| same(l.load, m.intended_pps)) {
            Some(l) => l.trials.push(m),
            None => {
                let at = self
                    .loads
                    .iter()
                    .position(|l| l.load > m.intended_pps)
                    .unwrap_or(self.loads.len());
                self.loads.insert(
                    at,
                    Load {
                        load: m.intended_pps,
                        trials: vec![m],
                    },
                );
            }
        }
    }

    /// Moves every goal past the coarser targets it has reached.
    fn pass(&mut self) {
        for (goal, g) in self.config.goals.iter().enumerate() {
            let targets = g.targets();
            let last = targets.len() - 1;
            while self.passed[goal] < last
                && self.select(goal, self.passed[goal], &targets).is_none()
            {
                self.passed[goal] += 1;
            }
        }
    }

    /// The next trial to run, or None when every goal's final target is
    /// reached (or the trial limit is).
    pub fn next_trial(&self) -> Option<TrialRequest> {
        if self.trials >= self.config.max_trials {
            return None;
        }
        self.wanted()
    }

    /// The trial the targets still want, whatever the trial limit.
    fn wanted(&self) -> Option<TrialRequest> {
        let targets: Vec<Vec<Target>> = self.config.goals.iter().map(Goal::targets).collect();
        let levels = targets.iter().map(Vec::len).max().unwrap_or(0);
        for level in 0..levels {
            for (goal, ts) in targets.iter().enumerate() {
                let Some(target) = ts.get(level) else {
                    continue;
                };
                // A coarser target once passed stays behind.
                if level < self.passed[goal] {
                    continue;
                }
                if let Some(load) = self.select(goal, level, ts) {
                    return Some(TrialRequest {
                        load,
                        duration_s: target.trial_duration,
                        goal,
                        target: level,
                    });
                }
            }
        }
        None
    }

    /// How `load` stands for goal `goal`'s final target (Undecided for a
    /// load never measured).
    pub fn classify(&self, load: f64, goal: usize) -> Class {
        let target = final_target(&self.config.goals[goal]);
        match self.loads.iter().find(|l| same(l.load, load)) {
            Some(l) => self.class(l, &target),
            None => Class::Undecided,
        }
    }

    /// Every goal's result from the trials so far.
    pub fn results(&self) -> Vec<GoalResult> {
        // A search stopped by the trial limit is not complete.
        let done = self.wanted().is_none();
        self.config
            .goals
            .iter()
            .map(|g| self.result(g, done))
            .collect()
    }

    fn result(&self, goal: &Goal, done: bool) -> GoalResult {
        let target = final_target(goal);
        let (lower, upper) = self.relevant(&target);
        let inversion = match upper {
            Some(u) => self.loads[u + 1..]
                .iter()
                .any(|l| self.class(l, &target) == Class::Lower),
            None => false,
        };
        // The trials that decide a load, by the final target's rules.
        let counted = |i: usize| {
            let l = &self.loads[i];
            let tol = self.tolerance(l);
            l.trials
                .iter()
                .filter(move |t| full_length(t, target.trial_duration, tol))
        };
        let bound = |i: usize| {
            let l = &self.loads[i];
            let offered = counted(i)
                .map(|t| t.offered_pps)
                .fold(f64::INFINITY, f64::min);
            Bound {
                intended_pps: l.load,
                pps: l.load.min(offered),
            }
        };
        let upper_bound = upper.map(bound);
        let lower_bound = lower.map(|i| {
            let mut b = bound(i);
            // The generator may have offered more at the upper bound than
            // here; a lower bound is never reported above an upper one.
            if let Some(u) = upper_bound {
                b.pps = b.pps.min(u.pps);
            }
            b
        });
        let generator_limited = lower.is_some_and(|i| {
            counted(i).any(|t| t.generator_limited(self.config.generator_tolerance))
        });
        let tester_limited = lower.is_some_and(|i| counted(i).any(|t| t.tester_limited));
        GoalResult {
            goal: goal.clone(),
            lower: lower_bound,
            upper: upper_bound,
            conditional_throughput_pps: lower.zip(lower_bound).map(|(i, b)| {
                let l = &self.loads[i];
                b.pps * (1.0 - loss_quantile(&l.trials, &target, self.tolerance(l)))
            }),
            hit_max: lower.is_some_and(|i| same(self.loads[i].load, self.config.max_load)),
            generator_limited,
            tester_limited,
            loss_inversion: inversion,
            complete: done,
        }
    }

    /// Indexes of the relevant lower and upper bounds for `target`.
    pub(super) fn relevant(&self, target: &Target) -> (Option<usize>, Option<usize>) {
        relevant(&self.classes(target))
    }

    /// Every load's class for `target`.
    pub(super) fn classes(&self, target: &Target) -> Vec<Class> {
        self.loads.iter().map(|l| self.class(l, target)).collect()
    }

    /// Generator-limited trials count as short, except at the maximum load:
    /// there the generator's best is all there is, and the result says so.
    /// So do they at a load whose generator-limited trials already add up
    /// to the longest duration sum of any goal: without that, a load the
    /// generator cannot reach would stay undecided and be asked for again
    /// until the trial limit. Tester-limited trials are treated the same.
    fn tolerance(&self, l: &Load) -> Option<f64> {
        let tol = self.config.generator_tolerance;
        let limited: f64 = l
            .trials
            .iter()
            .filter(|t| t.limited(tol))
            .map(|t| t.duration_s)
            .sum();
        let longest_sum = self
            .config
            .goals
            .iter()
            .map(|g| g.duration_sum)
            .fold(0.0, f64::max);
        if same(l.load, self.config.max_load) || limited >= longest_sum - 1e-9 {
            None
        } else {
            Some(tol)
        }
    }

    fn class(&self, l: &Load, target: &Target) -> Class {
        Sums::of(
            &l.trials,
            target.loss_ratio,
            target.trial_duration,
            self.tolerance(l),
        )
        .classify(target.duration_sum, target.exceed_ratio)
    }
}

/// The relevant bounds among loads of these classes (in load order): the
/// lowest upper bound, and the highest lower bound below it.
pub(super) fn relevant(classes: &[Class]) -> (Option<usize>, Option<usize>) {
    let upper = classes.iter().position(|&c| c == Class::Upper);
    let below = upper.unwrap_or(classes.len());
    let lower = classes[..below].iter().rposition(|&c| c == Class::Lower);
    (lower, upper)
}

fn final_target(goal: &Goal) -> Target {
    *goal.targets().last().expect("a goal has a final target")
}

/// The loss ratio exceeded by at most the exceed ratio of the target's
/// trial-seconds: full-length trials, worst first, and missing seconds
/// counted as total loss.
fn loss_quantile(trials: &[Measurement], target: &Target, tolerance: Option<f64>) -> f64 {
    let mut seconds: Vec<(f64, f64)> = trials
        .iter()
        .filter(|t| full_length(t, target.trial_duration, tolerance))
        .map(|t| (t.dut_loss_ratio(), t.duration_s))
        .collect();
    let measured: f64 = seconds.iter().map(|s| s.1).sum();
    if measured < target.duration_sum {
        seconds.push((1.0, target.duration_sum - measured));
    }
    let total = measured.max(target.duration_sum);
    seconds.sort_by(|a, b| b.0.total_cmp(&a.0));
    let allowed = target.exceed_ratio * total;
    let mut sum = 0.0;
    for (loss, d) in &seconds {
        sum += d;
        if sum > allowed + 1e-9 {
            return *loss;
        }
    }
    seconds.last().map_or(1.0, |s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NDR with one target: trials of 1 s, 2 s of them decide a load.
    fn search() -> Search {
        let goal = Goal {
            preceding_targets: 0,
            duration_sum: 2.0,
            ..Goal::new(0.0, 0.0)
        };
        Search::new(SearchConfig::new(vec![goal], 100.0, 10_000.0)).unwrap()
    }

    /// A 1 s trial at `load` that sent `load` frames and lost `lost`, of
    /// which `tester` on the tester's side.
    fn trial(load: f64, lost: u64, tester: u64, tester_limited: bool) -> Measurement {
        let tx = load as u64;
        Measurement {
            intended_pps: load,
            offered_pps: load,
            duration_s: 1.0,
            tx,
            rx: tx - lost,
            tester_lost: tester,
            tester_limited,
        }
    }

    #[test]
    fn a_tester_limited_trial_is_short_and_its_tester_loss_is_not_the_duts() {
        // 300 of 5000 lost, 250 by the tester: as the DUT's loss it would
        // make 5000 an upper bound at once.
        let mut s = search();
        s.add(trial(5000.0, 300, 250, false));
        assert_eq!(s.classify(5000.0, 0), Class::Upper);
        // Tester-limited, it counts like a generator-limited trial: short.
        // Its DUT-side 50 frames still speak against the load (a short
        // lossy second outweighs no short clean one).
        let mut s = search();
        s.add(trial(5000.0, 300, 250, true));
        assert_eq!(s.classify(5000.0, 0), Class::Upper);
        // All 300 on the tester's side: a short clean second, which
        // decides nothing; the search asks for the load again.
        let mut s = search();
        s.add(trial(5000.0, 300, 300, true));
        assert_eq!(s.classify(5000.0, 0), Class::Undecided);
        assert_eq!(s.next_trial().map(|r| r.load), Some(5000.0));
        // A clean full-length second there is not enough either (2 s decide).
        s.add(trial(5000.0, 0, 0, false));
        assert_eq!(s.classify(5000.0, 0), Class::Undecided);
        s.add(trial(5000.0, 0, 0, false));
        assert_eq!(s.classify(5000.0, 0), Class::Lower);
    }

    #[test]
    fn tester_limited_trials_that_fill_the_sum_decide_by_the_duts_loss() {
        // Two tester-limited seconds reach the 2 s sum: they count as
        // full-length (as generator-limited ones do), by DUT-side loss.
        let mut s = search();
        s.add(trial(5000.0, 400, 400, true));
        s.add(trial(5000.0, 100, 100, true));
        assert_eq!(s.classify(5000.0, 0), Class::Lower);
        s.add(trial(10_000.0, 1, 0, false));
        assert_eq!(s.classify(10_000.0, 0), Class::Upper);
        let r = &s.results()[0];
        assert_eq!(r.lower.map(|b| b.pps), Some(5000.0));
        assert_eq!(r.upper.map(|b| b.pps), Some(10_000.0));
        assert!(r.tester_limited && !r.generator_limited && !r.hit_max);
        // Its conditional throughput leaves the tester's loss out too.
        assert_eq!(r.conditional_throughput_pps, Some(5000.0));
        // One DUT-side frame among them makes it an upper bound.
        let mut s = search();
        s.add(trial(5000.0, 400, 400, true));
        s.add(trial(5000.0, 100, 99, true));
        assert_eq!(s.classify(5000.0, 0), Class::Upper);
    }

    #[test]
    fn at_the_maximum_load_a_tester_limited_result_says_so() {
        let mut s = search();
        s.add(trial(10_000.0, 900, 900, true));
        s.add(trial(10_000.0, 0, 0, false));
        assert_eq!(s.classify(10_000.0, 0), Class::Lower);
        let r = &s.results()[0];
        assert_eq!(r.lower.map(|b| b.pps), Some(10_000.0));
        assert!(r.hit_max && r.tester_limited && r.complete);
        // Without tester-limited trials the flag stays off.
        let mut s = search();
        s.add(trial(10_000.0, 0, 0, false));
        s.add(trial(10_000.0, 0, 0, false));
        assert!(!s.results()[0].tester_limited);
    }
}
