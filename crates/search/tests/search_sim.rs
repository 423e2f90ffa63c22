//! The throughput search on the simulated DUTs of the MLRsearch benchmark
//! (`bench/mlrsearch/`, `crates/search/examples/search_sim/duts.rs`), with
//! the benchmark's goals: NDR and PDR (0.5 %), exceed ratio 50 %, width
//! 0.5 %, 1 s trials, 21 s sums, two preceding targets. Not a speed test:
//! the bounds must hold what each DUT truly forwards, worked out by hand
//! from its definition, and a deterministic DUT's trial count follows from
//! the search's rules.

#[path = "../examples/search_sim/duts.rs"]
#[allow(dead_code)]
mod duts;

use duts::{Dut, Kind, CAPACITY};
use pktlab_search::{Goal, GoalResult, Measurement, Search, SearchConfig};

const MAX: f64 = 1_507_328.0;

fn search(kind: Kind, seed: u64) -> (Search, usize) {
    let goals = vec![Goal::new(0.0, 0.5), Goal::new(0.005, 0.5)];
    let mut s = Search::new(SearchConfig::new(goals, MAX / 1000.0, MAX)).unwrap();
    let mut dut = Dut::new(kind, seed);
    let mut n = 0;
    while let Some(req) = s.next_trial() {
        let (_, tx, rx) = dut.trial(req.load, req.duration_s);
        s.add(Measurement {
            intended_pps: req.load,
            offered_pps: tx as f64 / req.duration_s,
            duration_s: req.duration_s,
            tx,
            rx,
            tester_lost: 0,
            tester_limited: false,
        });
        n += 1;
        assert!(n < 1000, "{kind:?} seed {seed}: the search does not end");
    }
    (s, n)
}

/// The goal's bounds hold `truth`, lower below upper, at most 0.5 %
/// apart (between the loads the search asked for).
fn holds(g: &GoalResult, truth: f64) -> bool {
    let (l, u) = (g.lower.unwrap(), g.upper.unwrap());
    let width = (u.intended_pps - l.intended_pps) / u.intended_pps;
    l.pps <= truth && truth < u.pps && l.pps < u.pps && width <= 0.005 + 1e-9 && g.complete
}

#[test]
fn the_ideal_dut_takes_34_trials() {
    // Forwards min(load, C), C = 617,760. The maximum forwards C; the grid
    // lies half a step below it, C × √0.995 (clean), then C / √0.995
    // (0.25 % loss: NDR upper, PDR lower) and C / √0.995³ (0.75 %: PDR
    // upper). Each decides every target with 11 equal seconds of 21: one
    // trial at the maximum and 3 × 11.
    let (s, n) = search(Kind::Ideal, 1);
    assert_eq!(n, 34);
    let r = s.results();
    let step = |k: f64| CAPACITY * 0.995f64.powf(-k / 2.0);
    let at = |g: &GoalResult| (g.lower.unwrap().intended_pps, g.upper.unwrap().intended_pps);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    let (l, u) = at(&r[0]);
    assert!(
        close(l, step(-1.0)) && close(u, step(1.0)),
        "NDR [{l}, {u}]"
    );
    let (l, u) = at(&r[1]);
    assert!(close(l, step(1.0)) && close(u, step(3.0)), "PDR [{l}, {u}]");
    // A 1 s trial sends round(load) frames: no loss up to 617,760 frames,
    // at most 0.5 % up to 617,760 / 0.995 = 620,864.3 frames.
    assert!(holds(&r[0], 617_760.5) && holds(&r[1], 620_864.5), "{r:?}");
}

#[test]
fn the_policer_takes_34_trials() {
    // A bucket of 100,000 frames/s and 400, full at each trial: a 1 s
    // trial passes 100,400 frames, so the search runs as on the ideal
    // DUT with that capacity. NDR up to 100,400 frames, PDR up to
    // 100,400 / 0.995 = 100,904.5.
    let (s, n) = search(Kind::Policer, 1);
    assert_eq!(n, 34);
    let r = s.results();
    assert!(holds(&r[0], 100_400.5) && holds(&r[1], 100_904.5), "{r:?}");
}

#[test]
fn slowly_growing_loss_and_loss_inversion_are_bounded() {
    // Slow loss: a tenth of the frames above C lost (rounded up): none up
    // to C; for the PDR, ⌈(tx − C) / 10⌉ ≤ 0.005 tx holds up to 650,270
    // frames (3251 of 650,270; 3252 of 650,271 is too many).
    let r = search(Kind::SlowLoss, 1).0.results();
    assert!(holds(&r[0], 617_760.5) && holds(&r[1], 650_270.5), "{r:?}");
    // Inversion: loads of 90–92 % of C (from 555,984 frames) lose 0.1 %,
    // higher ones up to C nothing: the NDR is below 555,984, and higher
    // clean loads are flagged. Above C it forwards C − 2 (tx − C): at most
    // 0.5 % lost while 0.005 C ≥ 2.995 (tx − C), up to 618,791 frames.
    let r = search(Kind::Inversion, 1).0.results();
    assert!(holds(&r[0], 555_983.5) && holds(&r[1], 618_791.5), "{r:?}");
    assert!(r[0].loss_inversion && !r[1].loss_inversion);
}

#[test]
fn a_generator_below_the_dut_is_no_dut_throughput() {
    // The generator offers at most 500,000 pps, which the DUT forwards:
    // the maximum is a lower bound after 11 clean seconds, reported at
    // what the generator offered, with no upper bound.
    let (s, n) = search(Kind::GeneratorLimited, 1);
    assert_eq!(n, 11);
    for g in s.results() {
        assert_eq!(g.lower.unwrap().pps, 500_000.0);
        assert!(g.upper.is_none() && g.hit_max && g.generator_limited && g.complete);
    }
}

#[test]
fn noise_never_pushes_the_bounds_out_of_its_range() {
    // Capacity C ± 2 %, uniform per trial-second: a load above C × 1.02
    // loses in every second and can never be a lower bound, one below
    // C × 0.98 never loses and can never be an upper bound (for the PDR,
    // both divided by 0.995). Rare loss: one frame in 10 % of seconds, far
    // within the exceed ratio, so the ideal DUT's bounds hold.
    for seed in 1..=40 {
        let r = search(Kind::Noisy, seed).0.results();
        for (g, c) in r.iter().zip([CAPACITY, CAPACITY / 0.995]) {
            let (l, u) = (g.lower.unwrap().pps, g.upper.unwrap().pps);
            assert!(
                l <= c * 1.02 && u >= c * 0.98 && l < u && g.complete,
                "{seed}: {g:?}"
            );
        }
        let r = search(Kind::RareLoss, seed).0.results();
        assert!(
            holds(&r[0], 617_760.5) && holds(&r[1], 620_864.5),
            "{seed}: {r:?}"
        );
    }
}
