//! The text and JSON lines of `pktlab rfc9693`: each stateful trial, each
//! run's results with their bounds, and the closing summary.

use serde_json::Value;

use pktlab_search::stateful::phases::StatefulTrial;
use pktlab_search::stateful::results::{StatefulReport, StatefulRun, REPORT_FILE};
use pktlab_search::stateful::searches::Bounds;
use pktlab_search::stateful::teardown::Teardown;
use pktlab_search::stateful::throughput::{ThroughputTrial, WayCounts};

use crate::linerate::grouped;

/// One trial: `  trial 3 (capacity): 3,750 connections at 50,000 pps:
/// 3,125 set up, conntrack count 3,000, 2,999 validated (failed; table
/// full: 625 refused, 125 evicted in the setup, 1 in the validation)`.
pub fn trial_text(n: usize, t: &StatefulTrial) -> String {
    let count = t.conntrack_count.map_or(String::new(), |c| {
        format!(", conntrack count {}", grouped(c as f64))
    });
    let full = match (t.setup_refused, t.setup_evicted, t.validation_evicted) {
        (Some(r), Some(e), Some(v)) if r + e + v > 0 => format!(
            "; table full: {} refused, {} evicted in the setup, {} in the validation",
            grouped(r as f64),
            grouped(e as f64),
            grouped(v as f64)
        ),
        _ => String::new(),
    };
    let status = match (t.validated(), full.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!(" ({})", &full[2..]),
        (false, _) => format!(" (failed{full})"),
    };
    format!(
        "  trial {n} ({}): {} connections at {} pps: {} set up{count}, {} validated{status}",
        t.test,
        grouped(t.connections as f64),
        grouped(t.setup_rate_pps),
        grouped(t.preliminary_received as f64),
        grouped(t.validation_received as f64),
    )
}

/// One throughput trial: `  trial 12 (throughput): 10,000 connections
/// set up at 50,000 pps: 10,000 set up, conntrack count 10,000; 20,000 pps
/// each way for 10 s: forward 200,000 sent, 200,000 received, 0 lost;
/// reverse 200,000 sent, 199,990 received, 10 lost (loss)`.
pub fn throughput_trial_text(n: usize, t: &ThroughputTrial) -> String {
    let count = t.conntrack_count.map_or(String::new(), |c| {
        format!(", conntrack count {}", grouped(c as f64))
    });
    let way = |name: &str, w: &WayCounts| {
        format!(
            "{name} {} sent, {} received, {} lost",
            grouped(w.sent as f64),
            grouped(w.received as f64),
            grouped(w.lost as f64)
        )
    };
    let status = match (t.lost(), t.tester_limited) {
        (0, _) => "",
        (_, true) => " (loss, mostly the tester's)",
        (_, false) => " (loss)",
    };
    format!(
        "  trial {n} (throughput): {} connections set up at {} pps: {} set up{count}; \
         {} pps each way for {} s: {}; {}{status}",
        grouped(t.connections as f64),
        grouped(t.setup_rate_pps),
        grouped(t.preliminary_received as f64),
        grouped(t.rate_pps),
        t.duration_s,
        way("forward", &t.forward),
        way("reverse", &t.reverse),
    )
}

/// Each direction at the throughput's bounds: what the lower bound's
/// trial received per second each way, what the upper bound's lost.
fn throughput_ways(b: &Bounds, trials: &[ThroughputTrial]) -> String {
    let at = |rate: Option<f64>| rate.and_then(|r| trials.iter().rev().find(|t| t.rate_pps == r));
    let mut out = String::new();
    if let Some(t) = at(b.lower_intended) {
        out += &format!(
            "; received forward {} pps, reverse {} pps",
            grouped(t.forward.forwarded_pps),
            grouped(t.reverse.forwarded_pps)
        );
    }
    if let Some(t) = at(b.upper_intended) {
        out += &format!(
            "; at the upper bound lost forward {}, reverse {}",
            grouped(t.forward.lost as f64),
            grouped(t.reverse.lost as f64)
        );
    }
    out
}

/// A search's answer with its bounds: `2,998 connections [2,998, 3,004]`.
pub fn bounds_text(b: &Bounds, unit: &str) -> String {
    let cut = if b.complete {
        ""
    } else {
        " (search cut short)"
    };
    let pair = format!(
        "[{}, {}]",
        b.lower.map_or("-".into(), grouped),
        b.upper.map_or("-".into(), grouped)
    );
    let answer = match b.lower {
        None => format!("none: even {} {unit} failed", grouped(b.min)),
        Some(l) if b.generator_limited => {
            format!(
                "at least {} {unit} (the generator could not go higher)",
                grouped(l)
            )
        }
        Some(l) if b.hit_max => format!("at least {} {unit} (the highest tried)", grouped(l)),
        Some(l) => format!("{} {unit}", grouped(l)),
    };
    // Where the generator offered less than the search asked, say what
    // it asked: the width is that of the values asked for.
    let differs = |shown: Option<f64>, asked: Option<f64>| match (shown, asked) {
        (Some(s), Some(a)) => (s - a).abs() > 0.005 * a,
        _ => false,
    };
    let asked = if differs(b.lower, b.lower_intended) || differs(b.upper, b.upper_intended) {
        format!(
            ", asked [{}, {}]: the generator offered less",
            b.lower_intended.map_or("-".into(), grouped),
            b.upper_intended.map_or("-".into(), grouped)
        )
    } else {
        String::new()
    };
    format!("{answer} {pair}{asked}{cut}")
}

/// The tear-down result in words.
pub fn teardown_text(t: &Teardown) -> String {
    match t {
        Teardown::Measured {
            connections,
            full_s,
            empty_s,
            rate_per_s,
        } => format!(
            "{} connections/s ({} connections deleted in {:.1} ms, the empty table's {:.1} ms less)",
            grouped(*rate_per_s),
            grouped(*connections as f64),
            full_s * 1e3,
            empty_s * 1e3
        ),
        Teardown::NotMeasured { why } => format!("not measured: {why}"),
    }
}

/// One run's results, the answer with its bounds first.
pub fn run_text(r: &StatefulRun) -> String {
    let limit = r
        .conntrack_max
        .map_or("unknown".to_string(), |m| grouped(m as f64));
    let timeout = r
        .udp_timeout_s
        .map_or(String::new(), |t| format!(", UDP timeout {t} s"));
    let nat = r
        .translated
        .as_ref()
        .map_or(String::new(), |a| format!(", answered to {a} (source NAT)"));
    let mut out = format!(
        "{} {} #{}: nf_conntrack_max {limit} (host-wide){timeout}{nat}, {} trials\n",
        r.config,
        r.traffic,
        r.iteration,
        trial_count(r)
    );
    if let Some(b) = &r.capacity {
        let count = r.count_at_capacity.map_or(String::new(), |c| {
            format!(", the DUT counted {}", grouped(c as f64))
        });
        out += &format!(
            "  connection tracking table capacity     {}{count}\n",
            bounds_text(b, "connections")
        );
    }
    if let Some(b) = &r.rate {
        let n = r.rate_connections.map_or(String::new(), |n| {
            format!(" ({} connections)", grouped(n as f64))
        });
        out += &format!(
            "  maximum connection establishment rate  {}{n}\n",
            bounds_text(b, "connections/s")
        );
    }
    if let Some(b) = &r.throughput {
        let n = r.throughput_connections.map_or(String::new(), |n| {
            format!(" ({} connections)", grouped(n as f64))
        });
        out += &format!(
            "  established-connection throughput      {}{n}{}\n",
            bounds_text(b, "pps each way"),
            throughput_ways(b, &r.throughput_trials)
        );
    }
    if let Some(t) = &r.teardown {
        out += &format!(
            "  connection tear-down rate              {}\n",
            teardown_text(t)
        );
    }
    out
}

/// Every trial of a run, of every test.
pub fn trial_count(r: &StatefulRun) -> usize {
    r.trials.len() + r.throughput_trials.len()
}

/// A run's trials in words, numbered from 1: the capacity, rate and
/// tear-down tests' first, then the throughput test's.
pub fn trials_text(r: &StatefulRun) -> Vec<String> {
    let mut out: Vec<String> = r
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| trial_text(i + 1, t))
        .collect();
    let first = out.len() + 1;
    for (i, t) in r.throughput_trials.iter().enumerate() {
        out.push(throughput_trial_text(first + i, t));
    }
    out
}

/// A run's results as a JSON line (`--json`).
pub fn run_json(r: &StatefulRun) -> Value {
    let mut v = serde_json::to_value(r).expect("results serialise");
    v["type"] = "stateful".into();
    v
}

/// The end of the campaign: every run, where the results are, how to go
/// on after an interruption.
pub fn closing_text(r: &StatefulReport, dir: &str, interrupted: bool) -> String {
    let trials: usize = r.runs.iter().map(trial_count).sum();
    let mut out = format!("Results ({} runs, {trials} trials):\n", r.runs.len());
    for run in &r.runs {
        out += &run_text(run);
    }
    out += &format!("Results in {dir}/{REPORT_FILE}.\n");
    if interrupted {
        out += &format!(
            "Interrupted: every finished run is kept; pktlab rfc9693 --resume {dir} goes on.\n"
        );
    }
    out
}

/// The closing JSON line (`--json`).
pub fn closing_json(r: &StatefulReport, dir: &str, interrupted: bool) -> Value {
    serde_json::json!({
        "type": "summary",
        "dir": dir,
        "runs": r.runs.len(),
        "trials": r.runs.iter().map(trial_count).sum::<usize>(),
        "interrupted": interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(lower: Option<f64>, upper: Option<f64>) -> Bounds {
        Bounds {
            lower,
            upper,
            min: 1.0,
            max: 3750.0,
            hit_max: false,
            generator_limited: false,
            complete: true,
            lower_intended: lower,
            upper_intended: upper,
        }
    }

    #[test]
    fn answers_with_bounds() {
        let b = bounds(Some(2998.0), Some(3004.0));
        assert_eq!(
            bounds_text(&b, "connections"),
            "2,998 connections [2,998, 3,004]"
        );
        let b = bounds(None, Some(1.0));
        assert_eq!(
            bounds_text(&b, "connections"),
            "none: even 1 connections failed [-, 1]"
        );
        let b = Bounds {
            hit_max: true,
            complete: false,
            ..bounds(Some(3750.0), None)
        };
        assert_eq!(
            bounds_text(&b, "connections"),
            "at least 3,750 connections (the highest tried) [3,750, -] (search cut short)"
        );
    }

    #[test]
    fn a_trial_in_words() {
        let mut t = StatefulTrial {
            test: "capacity".into(),
            connections: 3750,
            setup_rate_pps: 50_000.0,
            offered_pps: 50_000.0,
            preliminary_sent: 3750,
            preliminary_received: 3125,
            conntrack_count: Some(3000),
            validation_rate_pps: 50_000.0,
            validation_sent: 3750,
            validation_received: 2999,
            setup_refused: Some(625),
            setup_evicted: Some(125),
            validation_evicted: Some(1),
        };
        assert_eq!(
            trial_text(1, &t),
            "  trial 1 (capacity): 3,750 connections at 50,000 pps: 3,125 set up, conntrack count 3,000, \
             2,999 validated (failed; table full: 625 refused, 125 evicted in the setup, 1 in the validation)"
        );
        t.connections = 2000;
        (t.preliminary_received, t.validation_received) = (2000, 2000);
        (t.setup_refused, t.setup_evicted, t.validation_evicted) = (Some(0), Some(0), None);
        t.conntrack_count = None;
        assert_eq!(
            trial_text(2, &t),
            "  trial 2 (capacity): 2,000 connections at 50,000 pps: 2,000 set up, 2,000 validated"
        );
    }

    #[test]
    fn what_was_asked_where_the_generator_fell_short() {
        let b = Bounds {
            lower_intended: Some(225_120.0),
            upper_intended: Some(225_571.0),
            ..bounds(Some(200_137.0), Some(200_137.0))
        };
        assert_eq!(
            bounds_text(&b, "connections/s"),
            "200,137 connections/s [200,137, 200,137], asked [225,120, 225,571]: the generator offered less"
        );
    }

    fn throughput_trial(rate: f64, forward_lost: u64, reverse_lost: u64) -> ThroughputTrial {
        let way = |lost: u64| WayCounts {
            sent: 200_000,
            received: 200_000 - lost,
            lost,
            offered_pps: 20_000.0,
            forwarded_pps: (200_000 - lost) as f64 / 10.0,
        };
        ThroughputTrial {
            connections: 10_000,
            setup_rate_pps: 50_000.0,
            preliminary_sent: 10_000,
            preliminary_received: 10_000,
            conntrack_count: Some(10_000),
            rate_pps: rate,
            duration_s: 10.0,
            forward: way(forward_lost),
            reverse: way(reverse_lost),
            tester_lost: 0,
            tester_limited: false,
        }
    }

    #[test]
    fn a_throughput_trial_in_words() {
        assert_eq!(
            throughput_trial_text(12, &throughput_trial(20_000.0, 0, 10)),
            "  trial 12 (throughput): 10,000 connections set up at 50,000 pps: 10,000 set up, \
             conntrack count 10,000; 20,000 pps each way for 10 s: forward 200,000 sent, 200,000 \
             received, 0 lost; reverse 200,000 sent, 199,990 received, 10 lost (loss)"
        );
        let t = ThroughputTrial {
            duration_s: 2.5,
            conntrack_count: None,
            ..throughput_trial(19_000.5, 0, 0)
        };
        assert!(throughput_trial_text(1, &t).ends_with(
            "10,000 set up; 19,001 pps each way for 2.5 s: forward 200,000 sent, 200,000 received, \
             0 lost; reverse 200,000 sent, 200,000 received, 0 lost"
        ));
    }

    #[test]
    fn a_throughput_result_with_each_direction() {
        let r = StatefulRun {
            config: "nat44".into(),
            traffic: "inet4".into(),
            iteration: 1,
            throughput: Some(bounds(Some(19_000.0), Some(19_038.0))),
            throughput_connections: Some(10_000),
            throughput_trials: vec![
                throughput_trial(19_038.0, 0, 2_000),
                throughput_trial(19_000.0, 0, 0),
            ],
            ..StatefulRun::default()
        };
        assert_eq!(
            run_text(&r),
            "nat44 inet4 #1: nf_conntrack_max unknown (host-wide), 2 trials\n  \
             established-connection throughput      19,000 pps each way [19,000, 19,038] \
             (10,000 connections); received forward 20,000 pps, reverse 20,000 pps; \
             at the upper bound lost forward 0, reverse 2,000\n"
        );
        let lines = trials_text(&r);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].starts_with("  trial 2 (throughput): "),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn a_run_in_words() {
        let r = StatefulRun {
            config: "nft-stateful".into(),
            traffic: "inet4".into(),
            iteration: 1,
            conntrack_max: Some(3000),
            udp_timeout_s: Some(30),
            capacity: Some(bounds(Some(2998.0), Some(3004.0))),
            count_at_capacity: Some(2998),
            teardown: Some(Teardown::NotMeasured {
                why: "too fast".into(),
            }),
            ..StatefulRun::default()
        };
        assert_eq!(
            run_text(&r),
            "nft-stateful inet4 #1: nf_conntrack_max 3,000 (host-wide), UDP timeout 30 s, 0 trials\n  \
             connection tracking table capacity     2,998 connections [2,998, 3,004], the DUT counted 2,998\n  \
             connection tear-down rate              not measured: too fast\n"
        );
    }
}
