//! The text and JSON lines of `pktlab rfc9693`: each stateful trial, each
//! run's results with their bounds, and the closing summary.

use serde_json::Value;

use pktlab_search::stateful::phases::StatefulTrial;
use pktlab_search::stateful::results::{StatefulReport, StatefulRun, REPORT_FILE};
use pktlab_search::stateful::searches::Bounds;
use pktlab_search::stateful::teardown::Teardown;

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
        r.trials.len()
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
    if let Some(t) = &r.teardown {
        out += &format!(
            "  connection tear-down rate              {}\n",
            teardown_text(t)
        );
    }
    out
}

/// A run's results as a JSON line (`--json`).
pub fn run_json(r: &StatefulRun) -> Value {
    let mut v = serde_json::to_value(r).expect("results serialise");
    v["type"] = "stateful".into();
    v
}

/// The end of the campaign: every run, the note on throughput, where the
/// results are, how to go on after an interruption.
pub fn closing_text(r: &StatefulReport, dir: &str, interrupted: bool) -> String {
    let trials: usize = r.runs.iter().map(|x| x.trials.len()).sum();
    let mut out = format!("Results ({} runs, {trials} trials):\n", r.runs.len());
    for run in &r.runs {
        out += &run_text(run);
    }
    out += &format!("Note: {}.\n", r.throughput_note);
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
        "trials": r.runs.iter().map(|x| x.trials.len()).sum::<usize>(),
        "throughput_note": r.throughput_note,
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
