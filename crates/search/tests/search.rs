//! The throughput search against simulated DUTs, with bounds worked out by
//! hand from what each DUT forwards.

use pktlab_search::{Class, Goal, GoalResult, Measurement, Search, SearchConfig};
use rand::{RngExt, SeedableRng};

/// Runs a search to the end; `dut(load, duration)` returns (offered pps, tx, rx).
fn drive(
    config: SearchConfig,
    mut dut: impl FnMut(f64, f64) -> (f64, u64, u64),
) -> (Search, Vec<Measurement>) {
    let mut search = Search::new(config).unwrap();
    let mut trials = Vec::new();
    while let Some(req) = search.next_trial() {
        let c = search.config();
        assert!(
            req.load <= c.max_load && req.load >= c.min_load,
            "{req:?} outside [{}, {}]",
            c.min_load,
            c.max_load
        );
        let (offered, tx, rx) = dut(req.load, req.duration_s);
        let m = Measurement {
            intended_pps: req.load,
            offered_pps: offered,
            duration_s: req.duration_s,
            tx,
            rx,
            tester_lost: 0,
            tester_limited: false,
        };
        search.add(m);
        trials.push(m);
        assert!(trials.len() < 2000, "the search does not end");
    }
    (search, trials)
}

/// A DUT that forwards up to `r` frames per second, exactly.
fn policer(r: f64) -> impl FnMut(f64, f64) -> (f64, u64, u64) {
    move |load, d| {
        let tx = (load * d).round() as u64;
        (load, tx, tx.min((r * d).round() as u64))
    }
}

fn bounds(g: &GoalResult) -> (f64, f64) {
    (g.lower.unwrap().pps, g.upper.unwrap().pps)
}

fn default_goals() -> Vec<Goal> {
    vec![Goal::parse("0").unwrap(), Goal::parse("0.5").unwrap()]
}

#[test]
fn a_dut_of_exact_capacity() {
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (search, trials) = drive(config, policer(20_000.0));
    let r = search.results();
    // NDR: a 1 s trial loses frames once round(load) > 20000, so the
    // bounds bracket 20000.5 within 0.5 %.
    let (l, u) = bounds(&r[0]);
    assert!(l <= 20_000.5 && u > 20_000.5, "NDR [{l}, {u}]");
    assert!((u - l) / u <= 0.005 + 1e-12, "NDR [{l}, {u}]");
    assert!(l > 20_000.5 * 0.995, "NDR [{l}, {u}]");
    assert_eq!(r[0].conditional_throughput_pps, Some(l));
    // PDR: the loss (load − 20000) / load exceeds 0.5 % above 20000 / 0.995
    // = 20100.50.
    let (l, u) = bounds(&r[1]);
    assert!(l <= 20_100.51 && u > 20_100.49, "PDR [{l}, {u}]");
    assert!((u - l) / u <= 0.005 + 1e-12, "PDR [{l}, {u}]");
    // Its conditional throughput is what the DUT forwarded there: 20000
    // (less the rounding of one frame in a trial), or the load itself
    // when the lower bound is below 20000.
    let ct = r[1].conditional_throughput_pps.unwrap();
    let expected = l.min(20_000.0);
    assert!((ct - expected).abs() <= 1.0, "{ct} vs {expected}");
    for g in &r {
        assert!(g.complete && !g.hit_max && !g.generator_limited && !g.loss_inversion);
        // Each final bound was decided by 11 of its 21 one-second trials.
        for b in [g.lower.unwrap(), g.upper.unwrap()] {
            let n = trials
                .iter()
                .filter(|t| t.intended_pps == b.intended_pps)
                .count();
            assert!(n >= 11, "{n} trials at {}", b.intended_pps);
        }
    }
    assert_eq!(
        search.classify(r[0].lower.unwrap().intended_pps, 0),
        Class::Lower
    );
    assert_eq!(
        search.classify(r[0].upper.unwrap().intended_pps, 0),
        Class::Upper
    );
    // The first trial is at the maximum load.
    assert_eq!(trials[0].intended_pps, 100_000.0);
}

#[test]
fn a_dut_faster_than_the_maximum() {
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (search, trials) = drive(config, policer(1e9));
    for g in search.results() {
        assert!(g.hit_max && g.complete && !g.generator_limited);
        assert_eq!(g.lower.unwrap().pps, 100_000.0);
        assert_eq!(g.upper, None);
    }
    // 11 clean seconds of 21 at the maximum decide both goals (the other 10
    // could all be lossy and stay within 50 %), and nothing else runs.
    assert_eq!(trials.len(), 11);
    assert!(trials.iter().all(|t| t.intended_pps == 100_000.0));
}

#[test]
fn a_dut_slower_than_the_minimum() {
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (search, _) = drive(config, policer(500.0));
    for g in search.results() {
        assert_eq!(g.lower, None);
        assert_eq!(g.upper.unwrap().pps, 1000.0);
        assert_eq!(g.conditional_throughput_pps, None);
        assert!(g.complete);
    }
}

#[test]
fn a_generator_that_cannot_reach_the_maximum() {
    // The generator sends at most 60 kpps; the DUT forwards everything.
    let generator = |cap: f64, r: f64| {
        move |load: f64, d: f64| {
            let offered = load.min(cap);
            let tx = (offered * d).round() as u64;
            (offered, tx, tx.min((r * d).round() as u64))
        }
    };
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (search, _) = drive(config.clone(), generator(60_000.0, 1e9));
    for g in search.results() {
        // Not 100 kpps: at least 60 kpps, as far as the generator could go.
        assert_eq!(g.lower.unwrap().pps, 60_000.0);
        assert_eq!(g.lower.unwrap().intended_pps, 100_000.0);
        assert!(g.hit_max && g.generator_limited);
        assert_eq!(g.conditional_throughput_pps, Some(60_000.0));
    }
    // A DUT slower than the generator is measured as usual.
    let (search, _) = drive(config, generator(60_000.0, 50_000.0));
    let ndr = &search.results()[0];
    let (l, u) = bounds(ndr);
    assert!(l <= 50_000.5 && u > 50_000.5, "[{l}, {u}]");
    assert!(!ndr.generator_limited && !ndr.hit_max);
}

#[test]
fn a_load_the_generator_never_reaches_ends_the_search() {
    // The generator sends at most 60 kpps; the DUT loses 10 frames only in
    // the all-out trial at the maximum (a burst at start, say), so every
    // load between 60 and 100 kpps is short of its intended rate and
    // loses nothing. Such a load used to stay undecided, asked for again
    // until the trial limit.
    let dut = |load: f64, d: f64| {
        let offered = load.min(60_000.0);
        let tx = (offered * d).round() as u64;
        let rx = if load >= 100_000.0 { tx - 10 } else { tx };
        (offered, tx, rx)
    };
    let (search, trials) = drive(SearchConfig::new(default_goals(), 1000.0, 100_000.0), dut);
    // A goal's final duration sum is 21 s of 1 s trials (the defaults):
    // a few loads' worth, not the limit of 1000.
    assert!(trials.len() < 300, "{} trials", trials.len());
    let ndr = &search.results()[0];
    let (lower, upper) = (ndr.lower.unwrap(), ndr.upper.unwrap());
    // Not a DUT throughput: at least what the generator offered there.
    assert!(ndr.generator_limited);
    assert_eq!(lower.pps, 60_000.0);
    assert!(lower.intended_pps > 60_000.0 && lower.intended_pps < 100_000.0);
    assert_eq!(upper.intended_pps, 100_000.0);
}

#[test]
fn a_generator_hiccup_proves_nothing() {
    // Every third trial, the generator sends only 89 % of the load.
    let mut n = 0;
    let dut = move |load: f64, d: f64| {
        n += 1;
        let offered = if n % 3 == 0 { load * 0.89 } else { load };
        let tx = (offered * d).round() as u64;
        (offered, tx, tx.min((20_000.0 * d).round() as u64))
    };
    let (search, trials) = drive(SearchConfig::new(default_goals(), 1000.0, 100_000.0), dut);
    assert!(
        trials
            .iter()
            .filter(|t| t.offered_pps < t.intended_pps)
            .count()
            > 5
    );
    let ndr = &search.results()[0];
    let (l, u) = bounds(ndr);
    // Short trials neither made a lower bound nor lowered the one found.
    assert!(
        l <= 20_000.5 && l > 20_000.5 * 0.995 && u > 20_000.5,
        "[{l}, {u}]"
    );
    assert_eq!(l, ndr.lower.unwrap().intended_pps);
    assert!(!ndr.generator_limited);
}

#[test]
fn the_exceed_ratio_tolerates_rare_loss() {
    // Up to 20 kpps, but loads above 10 kpps lose 3 frames in one trial of
    // five, at random.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let dut = move |load: f64, d: f64| {
        let tx = (load * d).round() as u64;
        let mut rx = tx.min((20_000.0 * d).round() as u64);
        if load > 10_000.0 && rng.random_bool(0.2) {
            rx = rx.saturating_sub(3);
        }
        (load, tx, rx)
    };
    let goals = vec![Goal::parse("0:50").unwrap(), Goal::parse("0:0").unwrap()];
    let (search, _) = drive(SearchConfig::new(goals, 1000.0, 100_000.0), dut);
    let r = search.results();
    // Exceed ratio 50 %: a fifth of lossy seconds is allowed, so NDR is
    // the DUT's capacity.
    let (l, u) = bounds(&r[0]);
    assert!(
        l <= 20_000.5 && l > 20_000.5 * 0.995 && u > 20_000.5,
        "[{l}, {u}]"
    );
    // Exceed ratio 0: any lossy second counts, so NDR stops at 10 kpps.
    let (l, u) = bounds(&r[1]);
    assert!(
        l <= 10_000.0 && l > 10_000.0 * 0.99 && u > 10_000.0,
        "[{l}, {u}]"
    );
    assert!((u - l) / u <= 0.005 + 1e-12, "[{l}, {u}]");
}

fn trial(load: f64, tx: u64, rx: u64) -> Measurement {
    Measurement {
        intended_pps: load,
        offered_pps: load,
        duration_s: 1.0,
        tx,
        rx,
        tester_lost: 0,
        tester_limited: false,
    }
}

fn single_target(loss: &str, sum: f64) -> Goal {
    Goal {
        duration_sum: sum,
        preceding_targets: 0,
        ..Goal::parse(loss).unwrap()
    }
}

#[test]
fn loss_inversion_keeps_the_lower_result() {
    let mut s = Search::new(SearchConfig::new(
        vec![single_target("0", 1.0)],
        1000.0,
        100_000.0,
    ))
    .unwrap();
    // Lossy at 100k and 25k, clean at 35k (inversion) and 19.95k.
    for (load, rx) in [
        (100_000.0, 20_000),
        (35_000.0, 35_000),
        (25_000.0, 20_000),
        (19_950.0, 19_950),
    ] {
        s.add(trial(load, load as u64, rx));
    }
    let r = &s.results()[0];
    assert_eq!(bounds(r), (19_950.0, 25_000.0));
    assert!(r.loss_inversion && !r.complete);
    // Next: one grid step up from the lower bound. The grid lies half a
    // step (0.5 %) below the 20000 forwarded at the maximum: 20000 ×
    // √0.995 = 19949.9 is just below 19950, the next step 20000 / √0.995.
    let next = s.next_trial().unwrap();
    assert!(close(next.load, 20_000.0 / 0.995f64.sqrt()), "{next:?}");
    assert_eq!(next.duration_s, 1.0);
}

#[test]
fn exceed_ratio_and_conditional_throughput_by_hand() {
    // PDR 0.5 % over 4 s, exceed ratio 50 %.
    let mut s = Search::new(SearchConfig::new(
        vec![single_target("0.5:50", 4.0)],
        1000.0,
        100_000.0,
    ))
    .unwrap();
    // 0.1 %, 0.2 %, 0.8 % and 0.9 % loss of 10000 frames at 10 kpps.
    for (i, rx) in [9990, 9980, 9920, 9910].into_iter().enumerate() {
        s.add(trial(10_000.0, 10_000, rx));
        // One clean second leaves 3 s that could all be lossy: undecided.
        // From two clean seconds on, at most 2 lossy of 4 is 50 %: lower.
        let expected = if i == 0 {
            Class::Undecided
        } else {
            Class::Lower
        };
        assert_eq!(s.classify(10_000.0, 0), expected, "after {} trials", i + 1);
    }
    // Worst first: 0.9 % and 0.8 % are the 2 s allowed, then 0.2 %:
    // 10000 × (1 − 0.002) = 9980.
    let r = &s.results()[0];
    assert_eq!(r.conditional_throughput_pps, Some(9980.0));
    // One more lossy second: 3 of 5 exceed the ratio.
    s.add(trial(10_000.0, 10_000, 9900));
    assert_eq!(s.classify(10_000.0, 0), Class::Upper);
}

#[test]
fn a_resumed_search_asks_for_the_same_trials() {
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (whole, trials) = drive(config.clone(), policer(33_333.0));
    // Replaying half the trials, then carrying on, runs exactly the rest.
    let half = trials.len() / 2;
    assert!(half > 10, "{}", trials.len());
    let mut resumed = Search::new(config).unwrap();
    for t in &trials[..half] {
        resumed.add(*t);
    }
    let mut dut = policer(33_333.0);
    let mut rest = Vec::new();
    while let Some(req) = resumed.next_trial() {
        let (offered, tx, rx) = dut(req.load, req.duration_s);
        let m = Measurement {
            intended_pps: req.load,
            offered_pps: offered,
            duration_s: req.duration_s,
            tx,
            rx,
            tester_lost: 0,
            tester_limited: false,
        };
        resumed.add(m);
        rest.push(m);
    }
    assert_eq!(rest, trials[half..]);
    assert_eq!(resumed.results(), whole.results());
}

#[test]
fn preceding_targets_use_shorter_trials() {
    let goal = Goal {
        initial_trial_duration: 1.0,
        final_trial_duration: 4.0,
        duration_sum: 16.0,
        ..Goal::parse("0").unwrap()
    };
    let (search, trials) = drive(
        SearchConfig::new(vec![goal], 1000.0, 100_000.0),
        policer(20_000.0),
    );
    // Trials of 1, 2 and 4 s, starting with 1 s.
    assert_eq!(trials[0].duration_s, 1.0);
    for d in [1.0, 2.0, 4.0] {
        assert!(trials.iter().any(|t| t.duration_s == d), "no {d} s trial");
    }
    // The final lower bound rests on 8 clean seconds of 4 s trials (half
    // of the 16 s sum).
    let r = &search.results()[0];
    let lower = r.lower.unwrap().intended_pps;
    let n = trials
        .iter()
        .filter(|t| t.intended_pps == lower && t.duration_s == 4.0)
        .count();
    assert_eq!(n, 2, "at {lower}");
    let (l, u) = bounds(r);
    assert!(l <= 20_000.5 && u > 20_000.5 && (u - l) / u <= 0.005 + 1e-12);
}

// The tests below build each situation trial by trial, so that the load the
// search asks for next is worked out by hand from `state.rs`'s rules.

fn search_of(goals: Vec<Goal>, min: f64, max: f64) -> Search {
    Search::new(SearchConfig::new(goals, min, max)).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

/// A one-target goal "0" (no loss, exceed ratio 50 %) with this width.
fn wide_target(width: f64, sum: f64) -> Goal {
    Goal {
        width,
        ..single_target("0", sum)
    }
}

#[test]
fn one_lossy_second_does_not_divert_the_search() {
    // The default goals on a DUT of 20000 frames/s that also loses one
    // frame in the third trial at every load: one lossy second in 11 says
    // nothing against a load with an exceed ratio of 50 %. Worked out by
    // hand: the maximum forwards 20000, so the grid has A0 = 20000 × √0.995
    // (clean), A1 = 20000 / √0.995 (0.25 % loss: NDR upper, PDR lower) and
    // A2 = 20000 / √0.995³ (0.75 %: PDR upper). A0 takes 12 trials (11
    // clean, one lossy), A1 and A2 11 each, the maximum 1: 35 in all, and
    // no load but these four.
    let mut seen = std::collections::HashMap::<u64, u32>::new();
    let dut = move |load: f64, d: f64| {
        let n = seen.entry(load.to_bits()).or_default();
        *n += 1;
        let tx = (load * d).round() as u64;
        let rx = tx.min((20_000.0 * d).round() as u64);
        (load, tx, if *n == 3 { rx - 1 } else { rx })
    };
    let config = SearchConfig::new(default_goals(), 1000.0, 100_000.0);
    let (search, trials) = drive(config, dut);
    let a = |k: i32| 20_000.0 * 0.995f64.powf(-0.5 * f64::from(k));
    let (a0, a1, a2) = (a(-1), a(1), a(3));
    let at = |x: f64| trials.iter().filter(|t| close(t.intended_pps, x)).count();
    assert_eq!(
        (at(100_000.0), at(a0), at(a1), at(a2), trials.len()),
        (1, 12, 11, 11, 35)
    );
    let r = search.results();
    let intended = |g: &GoalResult| (g.lower.unwrap().intended_pps, g.upper.unwrap().intended_pps);
    let (l, u) = intended(&r[0]);
    assert!(close(l, a0) && close(u, a1), "NDR [{l}, {u}]");
    let (l, u) = intended(&r[1]);
    assert!(close(l, a1) && close(u, a2), "PDR [{l}, {u}]");
    assert!(r.iter().all(|g| g.complete && !g.loss_inversion));
}

#[test]
fn a_lower_bound_without_an_upper_one_tries_the_maximum() {
    let mut s = search_of(vec![single_target("0", 1.0)], 1000.0, 100_000.0);
    // A resumed search may start anywhere: one clean second at 50 kpps is
    // a lower bound, and nothing above it was measured.
    s.add(trial(50_000.0, 50_000, 50_000));
    assert_eq!(s.classify(50_000.0, 0), Class::Lower);
    assert_eq!(s.next_trial().unwrap().load, 100_000.0);
    s.add(trial(100_000.0, 100_000, 100_000));
    assert_eq!(s.next_trial(), None);
    let r = &s.results()[0];
    assert!(r.hit_max && r.complete && r.upper.is_none());
    assert_eq!(r.lower.unwrap().pps, 100_000.0);
}

#[test]
fn steps_down_go_to_the_forwarded_rate_then_twice_as_far_each_time() {
    // Width 10 %, one trial of 1 s decides a load.
    let mut s = search_of(vec![wide_target(0.1, 1.0)], 1000.0, 100_000.0);
    // The maximum forwarded 50 kpps: the grid lies half a step below it,
    // a = 50000 × √0.9, and its loads are a × 0.9^-n.
    s.add(trial(100_000.0, 100_000, 50_000));
    let a = 50_000.0 * 0.9f64.sqrt();
    let next = s.next_trial().unwrap().load;
    assert!(close(next, a), "{next}");
    // a (47434) forwards only 40 kpps: down to the grid load at or below
    // it, ln(40000 / a) / −ln 0.9 = −1.6 steps, so a × 0.9².
    s.add(trial(next, next.round() as u64, 40_000));
    let next = s.next_trial().unwrap().load;
    assert!(close(next, a * 0.81), "{next}");
    // Lossy again, 2 steps below the last upper bound: 4 steps further,
    // a × 0.9⁶; then 8 further, a × 0.9¹⁴, and 16, a × 0.9³⁰ (2010 pps);
    // 32 further would be below the minimum, which comes instead.
    let mut next = next;
    for n in [6, 14, 30] {
        s.add(trial(next, next.round() as u64, 1000));
        next = s.next_trial().unwrap().load;
        assert!(close(next, a * 0.9f64.powi(n)), "{n}: {next}");
    }
    s.add(trial(next, next.round() as u64, 1000));
    assert_eq!(s.next_trial().unwrap().load, 1000.0);
}

#[test]
fn the_step_down_stops_at_the_minimum_load() {
    let goal = || vec![single_target("0", 1.0)];
    // The minimum load itself is an upper bound: nothing is left to try.
    let mut s = search_of(goal(), 1000.0, 100_000.0);
    s.add(trial(1000.0, 1000, 500));
    assert_eq!(s.next_trial(), None);
    let r = &s.results()[0];
    assert!(r.complete && r.lower.is_none());
    assert_eq!(r.upper.unwrap().pps, 1000.0);
    // Half a frame per second above it: 1000.5 × 0.995 and 500 × 0.995
    // are both below the minimum, so the minimum is next.
    let mut s = search_of(goal(), 1000.0, 100_000.0);
    s.add(trial(1000.5, 1000, 500));
    assert_eq!(s.next_trial().unwrap().load, 1000.0);
}

#[test]
fn steps_up_grow_fourfold_at_the_coarsest_target_up_to_the_middle() {
    // Width 10 %, one trial of 1 s decides a load (a single target, the
    // coarsest). The maximum, 1 Mpps, forwarded 100 kpps: the grid's loads
    // are a × 0.9^-n, a = 100000 × √0.9; the maximum lies at n = 22.4.
    let mut s = search_of(vec![wide_target(0.1, 1.0)], 1000.0, 1_000_000.0);
    s.add(trial(1_000_000.0, 1_000_000, 100_000));
    let a = 100_000.0 * 0.9f64.sqrt();
    let step = |n: i32| a * 0.9f64.powi(-n);
    let clean = |s: &mut Search, n: i32| {
        let x = s.next_trial().unwrap().load;
        assert!(close(x, step(n)), "{n}: {x} vs {}", step(n));
        s.add(trial(x, x.round() as u64, x.round() as u64));
    };
    // The guess a is clean; the first step up is one grid step (n = 1),
    // the next four times as far (n = 5), the next 16 further (n = 21),
    // but no farther than the middle of (5, 22.4): n = 14, which is lossy.
    clean(&mut s, 0);
    clean(&mut s, 1);
    clean(&mut s, 5);
    let x = s.next_trial().unwrap().load;
    assert!(close(x, step(14)), "{x}");
    s.add(trial(x, x.round() as u64, 100_000));
    // Between 5 and 14: 16 steps up would pass the middle, 9.
    clean(&mut s, 9);
    // Between 9 and 14: the middle, 11 (the lower of 11 and 12), lossy.
    let x = s.next_trial().unwrap().load;
    assert!(close(x, step(11)), "{x}");
    s.add(trial(x, x.round() as u64, 100_000));
    clean(&mut s, 10);
    // [10, 11] is one grid step, the 10 % width: done.
    assert_eq!(s.next_trial(), None);
    let r = &s.results()[0];
    let (l, u) = (r.lower.unwrap().intended_pps, r.upper.unwrap().intended_pps);
    assert!(close(l, step(10)) && close(u, step(11)), "[{l}, {u}]");
    assert!(r.complete && !r.loss_inversion && !r.hit_max);
    assert_eq!(s.trial_count(), 8);
}

#[test]
fn generator_limited_seconds_decide_a_load_once_they_fill_the_sum() {
    // Sum 2 s. At 80 kpps the generator offers only 60 kpps (short by
    // 25 %, more than the 0.5 % tolerance), and nothing is lost.
    let mut s = search_of(vec![single_target("0", 2.0)], 1000.0, 100_000.0);
    let limited = Measurement {
        intended_pps: 80_000.0,
        offered_pps: 60_000.0,
        duration_s: 1.0,
        tx: 60_000,
        rx: 60_000,
        tester_lost: 0,
        tester_limited: false,
    };
    // One such second counts as short: a short clean second proves
    // nothing, so 2 s of 2 are missing.
    s.add(limited);
    assert_eq!(s.classify(80_000.0, 0), Class::Undecided);
    // Two add up to the sum: now they count, 2 clean seconds of 2.
    s.add(limited);
    assert_eq!(s.classify(80_000.0, 0), Class::Lower);
    let r = &s.results()[0];
    assert!(r.generator_limited && !r.hit_max);
    assert_eq!(r.lower.unwrap().pps, 60_000.0);
    assert_eq!(r.lower.unwrap().intended_pps, 80_000.0);
}

#[test]
fn loads_a_rounding_error_apart_are_one_load() {
    // 10000 × (1 + 1e-12) differs from 10000 by 1e-8, far below the 1e-9
    // relative tolerance: its trial joins the one at 10000. Two clean
    // seconds of a 3 s sum leave 1 missing (1/3 ≤ 50 %): a lower bound; one
    // alone would leave 2 (2/3): undecided.
    let mut s = search_of(vec![single_target("0", 3.0)], 1000.0, 100_000.0);
    s.add(trial(10_000.0, 10_000, 10_000));
    assert_eq!(s.classify(10_000.0, 0), Class::Undecided);
    s.add(trial(10_000.0 * (1.0 + 1e-12), 10_000, 10_000));
    assert_eq!(s.classify(10_000.0, 0), Class::Lower);
    assert_eq!(s.trial_count(), 2);
}

#[test]
fn the_trial_limit_ends_the_search_cut_short() {
    let config = SearchConfig {
        max_trials: 3,
        ..SearchConfig::new(default_goals(), 1000.0, 100_000.0)
    };
    let (search, trials) = drive(config, policer(20_000.0));
    assert_eq!(trials.len(), 3);
    assert_eq!(search.trial_count(), 3);
    // Three trials decide nothing for a 21 s sum: not complete.
    for g in search.results() {
        assert!(!g.complete, "{g:?}");
    }
}

#[test]
fn the_loss_quantile_counts_missing_seconds_as_total_loss() {
    // PDR 0.5 %, exceed ratio 50 %, sum 6 s; 0.1 %, 0.2 % and 0.3 % loss
    // at 10 kpps. Three clean seconds of 6, 3 missing: 3/6 ≤ 50 %, lower.
    let mut s = search_of(vec![single_target("0.5:50", 6.0)], 1000.0, 100_000.0);
    for rx in [9990, 9980, 9970] {
        s.add(trial(10_000.0, 10_000, rx));
    }
    assert_eq!(s.classify(10_000.0, 0), Class::Lower);
    // Worst first: the 3 missing seconds (loss 1) are the 3 s allowed
    // (50 % of 6); the next is 0.3 %: 10000 × (1 − 0.003) = 9970.
    let ct = s.results()[0].conditional_throughput_pps.unwrap();
    assert!(close(ct, 9970.0), "{ct}");
}

#[test]
fn the_loss_quantile_passes_over_exactly_the_allowed_seconds() {
    // PDR 0.5 %, exceed ratio 0, trials of 1 ms and a 1 ms sum, so that
    // a 1 ns trial is full-length and the allowed high-loss time is
    // 0 s (plus the 1e-9 s rounding slack).
    let goal = Goal {
        initial_trial_duration: 0.001,
        final_trial_duration: 0.001,
        ..single_target("0.5:0", 0.001)
    };
    let mut s = search_of(vec![goal], 1000.0, 100_000.0);
    let at = |duration_s: f64, rx: u64| Measurement {
        duration_s,
        ..trial(10_000.0, 1000, rx)
    };
    // 0.4 % loss for 1 ns, 0.1 % for 1 ms: both low-loss, a lower bound.
    s.add(at(1e-9, 996));
    s.add(at(0.001, 999));
    assert_eq!(s.classify(10_000.0, 0), Class::Lower);
    // Worst first: the 1 ns of 0.4 % fill the slack exactly and are passed
    // over; the quantile is the 0.1 % after them: 10000 × 0.999 = 9990.
    let ct = s.results()[0].conditional_throughput_pps.unwrap();
    assert!(close(ct, 9990.0), "{ct}");
}
