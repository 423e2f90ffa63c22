//! `pktlab rfc2544`'s text: each search's bounds per goal, and the
//! configurations compared over repeated searches.

use pktlab_bench::mlr::summary::{Comparison, FrameLoss, GoalBounds, Report, Throughput};
use pktlab_wire::rate;
use pktlab_wire::size::SizeMix;

use crate::linerate::{bits, grouped};

/// `0 %`, `0.5 %`: a ratio as a percentage without trailing zeros.
pub fn percent(ratio: f64) -> String {
    let text = format!("{:.4}", ratio * 100.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

/// `NDR` for a zero-loss goal, `PDR 0.5 %` otherwise, with its exceed ratio.
pub fn goal_name(g: &GoalBounds) -> String {
    let name = if g.loss_ratio == 0.0 {
        "NDR".to_string()
    } else {
        format!("PDR {}", percent(g.loss_ratio))
    };
    format!("{name} (exceed {})", percent(g.exceed_ratio))
}

/// The result of one goal in words: `19,950 pps`, `at least 60,000 pps
/// (the generator could not go higher)`, ...
pub fn result_text(g: &GoalBounds) -> String {
    let incomplete = if g.complete {
        ""
    } else {
        " (search cut short)"
    };
    let inversion = if g.loss_inversion {
        " (loss inversion: a higher load lost less; the lower result is kept)"
    } else {
        ""
    };
    match g.lower_pps {
        None => format!(
            "none: even {} pps lost too much{incomplete}",
            grouped(g.upper_pps.unwrap_or(0.0))
        ),
        Some(l) if g.generator_limited => format!(
            "at least {} pps (the generator could not go higher){incomplete}{inversion}",
            grouped(l)
        ),
        Some(l) if g.hit_max => format!(
            "at least {} pps (the maximum load){incomplete}{inversion}",
            grouped(l)
        ),
        Some(l) => format!("{} pps{incomplete}{inversion}", grouped(l)),
    }
}

/// One search: a line per goal with its bounds, L1 rate and share of the
/// line rate when the link speed is known.
pub fn throughput_text(t: &Throughput, link_bps: Option<f64>) -> String {
    let mean = t.size.parse::<SizeMix>().ok().map(|m| m.mean());
    let mut out = format!(
        "{} {} size {} search {}: {} trials, {:.1} s of traffic, maximum load {} pps\n",
        t.config,
        t.traffic,
        t.size,
        t.iteration,
        t.trials,
        t.trial_seconds,
        grouped(t.max_pps)
    );
    for g in &t.goals {
        let bounds = format!(
            "[{}, {}]",
            g.lower_pps.map_or("-".into(), grouped),
            g.upper_pps.map_or("-".into(), grouped)
        );
        let mut line = format!("  {:<22} {} {bounds}", goal_name(g), result_text(g));
        if let (Some(l), Some(mean)) = (g.lower_pps, mean) {
            line.push_str(&format!(" L1 {}", bits(rate::l1_bps_mean(l, mean))));
            if let Some(link) = link_bps {
                let share = l / rate::line_rate_pps_mean(link, mean) * 100.0;
                line.push_str(&format!(" {share:.2} % of the line rate"));
            }
        }
        if let Some(ct) = g.conditional_throughput_pps {
            line.push_str(&format!(", conditional throughput {} pps", grouped(ct)));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A configuration against the baseline for one goal.
pub fn comparison_text(c: &Comparison) -> String {
    let goal = if c.loss_ratio == 0.0 {
        "NDR".to_string()
    } else {
        format!("PDR {}", percent(c.loss_ratio))
    };
    let head = format!("{} vs {} ({}, {goal}):", c.config, c.baseline, c.traffic);
    match (c.difference_percent, c.plus_minus_percent, c.significant) {
        (Some(d), Some(pm), Some(true)) => format!(
            "{head} {d:+.2} % ± {pm:.2} % at {} confidence",
            c.confidence
        ),
        (Some(_), Some(_), Some(false)) => {
            format!("{head} no difference proven at {} confidence", c.confidence)
        }
        _ => format!("{head} needs at least 2 searches of each (--repeat 2)"),
    }
}

/// A frame loss curve on one line: `10,000 pps 66.90 %, 9,000 pps ...`.
pub fn frame_loss_text(f: &FrameLoss) -> String {
    let points: Vec<String> = f
        .points
        .iter()
        .map(|p| {
            format!(
                "{} pps {:.2} %",
                grouped(p.offered_pps),
                p.loss_ratio * 100.0
            )
        })
        .collect();
    format!(
        "{} {} size {} frame loss (offered, loss): {}\n",
        f.config,
        f.traffic,
        f.size,
        points.join(", ")
    )
}

/// The whole report.
pub fn report_text(r: &Report, link_bps: Option<f64>) -> String {
    let mut out = String::new();
    for t in &r.throughput {
        out.push_str(&throughput_text(t, link_bps));
    }
    for f in &r.frame_loss {
        out.push_str(&frame_loss_text(f));
    }
    for c in &r.comparisons {
        out.push_str(&comparison_text(c));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(lower: Option<f64>, hit_max: bool, limited: bool) -> GoalBounds {
        GoalBounds {
            loss_ratio: 0.005,
            exceed_ratio: 0.5,
            lower_pps: lower,
            upper_pps: Some(20_100.0),
            conditional_throughput_pps: lower,
            lower_intended_pps: lower,
            upper_intended_pps: Some(20_100.0),
            hit_max,
            generator_limited: limited,
            loss_inversion: false,
            complete: true,
        }
    }

    #[test]
    fn goal_words() {
        assert_eq!(percent(0.005), "0.5 %");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(
            goal_name(&goal(None, false, false)),
            "PDR 0.5 % (exceed 50 %)"
        );
        assert_eq!(
            result_text(&goal(Some(20_000.0), false, false)),
            "20,000 pps"
        );
        assert_eq!(
            result_text(&goal(Some(60_000.0), true, true)),
            "at least 60,000 pps (the generator could not go higher)"
        );
        assert_eq!(
            result_text(&goal(Some(100_000.0), true, false)),
            "at least 100,000 pps (the maximum load)"
        );
        assert_eq!(
            result_text(&goal(None, false, false)),
            "none: even 20,100 pps lost too much"
        );
    }

    #[test]
    fn a_search_in_text() {
        let t = Throughput {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            max_pps: 100_000.0,
            goals: vec![goal(Some(20_000.0), false, false)],
            generator_limited: false,
            trials: 30,
            trial_seconds: 30.0,
        };
        // 20000 × 84 × 8 = 13.44 Mbps; 10 Gbps at 64 B is 14,880,952 pps:
        // 20000 / 14880952.38 = 0.13 %.
        assert_eq!(
            throughput_text(&t, Some(10e9)),
            "police inet4 size 64 search 1: 30 trials, 30.0 s of traffic, maximum load 100,000 pps\n  \
             PDR 0.5 % (exceed 50 %) 20,000 pps [20,000, 20,100] L1 13.440 Mbps 0.13 % of the line rate, \
             conditional throughput 20,000 pps\n"
        );
    }
}
