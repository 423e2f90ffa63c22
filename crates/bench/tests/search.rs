//! The throughput search against simulated DUTs, with bounds worked out by
//! hand from what each DUT forwards.

use pktlab_bench::search::{Class, Goal, GoalResult, Measurement, Search, SearchConfig};
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
    // Next: up from the lower bound by the width, 19950 × 1.005.
    let next = s.next_trial().unwrap();
    assert_eq!(next.load, 19_950.0 * 1.005);
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
