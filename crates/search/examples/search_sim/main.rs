//! Runs pktlab's throughput search ([`pktlab_search::Search`]) on
//! one simulated DUT for a range of seeds and prints one JSON line per
//! search, as `bench/mlrsearch/mlr_sim.py` does for FD.io CSIT's
//! MLRsearch. `bench/mlrsearch/run` compares the two.
//!
//! usage: search_sim DUT FIRST_SEED SEEDS MAX_LOAD MIN_LOAD [--trace]
//!
//! The goals are the benchmark's: NDR (0 %) and PDR (0.5 %), exceed ratio
//! 50 %, width 0.5 %, 1 s trials, 21 s duration sum, two preceding targets
//! (pktlab's defaults). `--trace` prints every trial on stderr.

mod duts;

use pktlab_search::{Goal, Measurement, Search, SearchConfig};

fn usage() -> ! {
    eprintln!("usage: search_sim DUT FIRST_SEED SEEDS MAX_LOAD MIN_LOAD [--trace]");
    eprintln!("DUTs: {}", duts::ALL.map(duts::Kind::name).join(", "));
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trace = args.iter().any(|a| a == "--trace");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--trace").collect();
    if args.len() != 5 {
        usage();
    }
    let kind = duts::Kind::by_name(args[0]).unwrap_or_else(|| usage());
    let number = |s: &str| s.parse::<f64>().unwrap_or_else(|_| usage());
    let first = number(args[1]) as u64;
    let seeds = number(args[2]) as u64;
    let (max_load, min_load) = (number(args[3]), number(args[4]));
    let goals = vec![Goal::new(0.0, 0.5), Goal::new(0.005, 0.5)];
    for seed in first..first + seeds {
        let config = SearchConfig::new(goals.clone(), min_load, max_load);
        let mut search = Search::new(config).unwrap_or_else(|e| {
            eprintln!("search_sim: {e}");
            std::process::exit(2)
        });
        let mut dut = duts::Dut::new(kind, seed);
        let mut seconds = 0.0;
        while let Some(req) = search.next_trial() {
            let (_, tx, rx) = dut.trial(req.load, req.duration_s);
            let m = Measurement {
                intended_pps: req.load,
                offered_pps: tx as f64 / req.duration_s,
                duration_s: req.duration_s,
                tx,
                rx,
                tester_lost: 0,
                tester_limited: false,
            };
            search.add(m);
            seconds += req.duration_s;
            if trace {
                eprintln!(
                    "{:3} {:12.1} d={} tx={tx} rx={rx} loss={:.5} goal={} target={}",
                    search.trial_count(),
                    req.load,
                    req.duration_s,
                    m.loss_ratio(),
                    req.goal,
                    req.target
                );
            }
        }
        let goals: Vec<serde_json::Value> = search
            .results()
            .iter()
            .map(|r| {
                serde_json::json!({
                    "loss_ratio": r.goal.loss_ratio,
                    "lower": r.lower.map(|b| b.pps),
                    "upper": r.upper.map(|b| b.pps),
                    "lower_intended": r.lower.map(|b| b.intended_pps),
                    "upper_intended": r.upper.map(|b| b.intended_pps),
                    "loss_inversion": r.loss_inversion,
                    "generator_limited": r.generator_limited,
                    "complete": r.complete,
                })
            })
            .collect();
        let line = serde_json::json!({
            "tool": "pktlab",
            "dut": kind.name(),
            "seed": seed,
            "trials": search.trial_count(),
            "trial_seconds": seconds,
            "goals": goals,
        });
        println!("{line}");
    }
}
