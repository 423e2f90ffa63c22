//! `pktlab rfc2544`'s text: each search's bounds per goal, and the
//! configurations compared over repeated searches.

use pktlab_search::mlr::back_to_back::BackToBack;
use pktlab_search::mlr::latency::LatencyResult;
use pktlab_search::mlr::record::TRIALS_FILE;
use pktlab_search::mlr::summary::{
    Comparison, DirectionLoss, FrameLoss, GoalBounds, Report, Throughput, REPORT_FILE,
};
use pktlab_wire::rate;
use pktlab_wire::size::SizeMix;
use serde_json::Value;

use pktlab_loss::drops::Drops;

use crate::bench::drops_line;
use crate::linerate::{bits, grouped};
use crate::units::nanos;

/// `0 %`, `0.5 %`: a ratio as a percentage without trailing zeros.
pub fn percent(ratio: f64) -> String {
    let text = format!("{:.4}", ratio * 100.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

/// `NDR` for a zero-loss goal, `PDR 0.5 %` otherwise.
pub fn short_goal_name(g: &GoalBounds) -> String {
    if g.loss_ratio == 0.0 {
        "NDR".to_string()
    } else {
        format!("PDR {}", percent(g.loss_ratio))
    }
}

/// `NDR (exceed 50 %)`: the goal's name with its exceed ratio.
pub fn goal_name(g: &GoalBounds) -> String {
    format!(
        "{} (exceed {})",
        short_goal_name(g),
        percent(g.exceed_ratio)
    )
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
        Some(l) if g.tester_limited => format!(
            "at least {} pps (the tester dropped the frames, not the DUT){incomplete}{inversion}",
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
        for d in &g.directions {
            out.push_str(&direction_loss_line(d));
        }
    }
    out
}

/// One direction's loss at a goal's bounds, under the goal's line:
/// `    forward: lost 0 % at the lower bound, 1.25 % at the upper`.
fn direction_loss_line(d: &DirectionLoss) -> String {
    let at = |r: Option<f64>| r.map_or("-".to_string(), percent);
    format!(
        "    {}: lost {} at the lower bound, {} at the upper\n",
        d.name,
        at(d.lower_loss_ratio),
        at(d.upper_loss_ratio)
    )
}

/// Where one trial's lost frames went, the line bench prints after a run,
/// after the trial's number and load:
/// `  trial 3 at 20,000 pps: lost 2000 (10%): DUT nft_do_chain NETFILTER_DROP 2000 (100%)`.
/// A trial both ways has a line per direction (`directions`: name, sent,
/// drops) under its total's.
pub fn trial_drops_text(
    n: usize,
    intended_pps: Option<f64>,
    sent: u64,
    drops: &Drops,
    directions: &[(String, u64, Drops)],
) -> String {
    let load = intended_pps.map_or("as fast as possible".to_string(), |p| {
        let each = if directions.is_empty() {
            ""
        } else {
            " each way"
        };
        format!("at {} pps{each}", grouped(p))
    });
    let mut text = format!("  trial {n} {load}: {}", drops_line(drops, sent));
    for (name, sent, d) in directions {
        text += &format!("\n    {name}: sent {sent}, {}", drops_line(d, *sent));
    }
    text
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

/// The latency table: a row per load, its percentiles over every frame of
/// its trials; then where the timestamps come from and, across hosts, what
/// the clocks make of them: one `Clocks:` line when every load has the
/// same note, else one per load.
pub fn latency_text(rows: &[LatencyResult]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let mut out = format!(
        "Latency, one way, over every frame of each load's trials:\n  \
         {:<28} {:>6} {:>14} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "config traffic size",
        "of PDR",
        "load",
        "trials",
        "frames",
        "min",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max"
    );
    for r in rows {
        let name = format!("{} {} {}", r.config, r.traffic, r.size);
        let ns = |v: u64| nanos(v as f64);
        out.push_str(&format!(
            "  {name:<28} {:>6} {:>14} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            percent(r.load_fraction).replace(' ', ""),
            format!("{} pps", grouped(r.load_pps)),
            r.trials,
            r.frames,
            ns(r.min_ns),
            ns(r.p50_ns),
            ns(r.p90_ns),
            ns(r.p99_ns),
            ns(r.p999_ns),
            ns(r.max_ns),
        ));
    }
    out.push_str(&format!(
        "  (0 % of PDR is the search's lowest load. Timestamps: {}.)\n",
        first.clock
    ));
    let notes: Vec<Option<&String>> = rows.iter().map(|r| r.latency_note.as_ref()).collect();
    match notes[0] {
        Some(note) if notes.iter().all(|n| *n == Some(note)) => {
            out.push_str(&format!("  Clocks: {note}\n"));
        }
        _ => {
            for r in rows {
                if let Some(note) = &r.latency_note {
                    out.push_str(&format!(
                        "  Clocks, {} {} {} at {} of PDR: {note}\n",
                        r.config,
                        r.traffic,
                        r.size,
                        percent(r.load_fraction).replace(' ', "")
                    ));
                }
            }
        }
    }
    out
}

/// One back-to-back result: the average burst, its rate and RFC 9004's
/// buffer times.
pub fn back_to_back_text(b: &BackToBack) -> String {
    let floor = if b.at_least {
        " (at least: a whole trial at the maximum load went through)"
    } else {
        ""
    };
    let mut out = format!(
        "{} {} size {} back-to-back: {:.1} frames{floor} on average over {} searches \
         (min {}, max {}, {} bursts), bursts sent at {} pps (maximum load {} pps)\n",
        b.config,
        b.traffic,
        b.size,
        b.frames,
        b.trials,
        b.min_frames,
        b.max_frames,
        b.bursts,
        grouped(b.burst_pps),
        grouped(b.max_pps),
    );
    if let Some(i) = b.implied_buffer_time_s {
        out.push_str(&format!("  implied DUT buffer time {}", nanos(i * 1e9)));
        match (b.corrected_buffer_time_s, b.throughput_pps) {
            (Some(c), Some(t)) => out.push_str(&format!(
                ", corrected {} (throughput {} pps)\n",
                nanos(c * 1e9),
                grouped(t)
            )),
            _ => out.push_str(", no correction: the search found no throughput\n"),
        }
    }
    out
}

/// The JSON lines of a campaign's end (`--json`): each frame loss,
/// latency, back-to-back and comparison result, then the summary.
pub fn closing_json(r: &Report, dir: &str, trials: usize, interrupted: bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut typed = |kind: &str, v: serde_json::Result<Value>| {
        let mut v = v.expect("results serialise");
        v["type"] = kind.into();
        out.push(v);
    };
    for f in &r.frame_loss {
        typed("frame_loss", serde_json::to_value(f));
    }
    for l in &r.latency {
        typed("latency", serde_json::to_value(l));
    }
    for b in &r.back_to_back {
        typed("back_to_back", serde_json::to_value(b));
    }
    for c in &r.comparisons {
        typed("comparison", serde_json::to_value(c));
    }
    out.push(serde_json::json!({
        "type": "summary",
        "dir": dir,
        "searches": r.throughput.len(),
        "trials": trials,
        "interrupted": interrupted,
    }));
    out
}

/// A search's throughput as a JSON line (`--json`).
pub fn throughput_json(t: &Throughput) -> Value {
    let mut v = serde_json::to_value(t).expect("results serialise");
    v["type"] = "throughput".into();
    v
}

/// What an `rfc2544` campaign prints as it ends: [`closing_json`]'s
/// lines with `json`, else [`closing_text`].
pub fn closing_output(
    r: &Report,
    link_bps: Option<f64>,
    dir: &str,
    trials: usize,
    interrupted: bool,
    json: bool,
) -> String {
    match json {
        true => closing_json(r, dir, trials, interrupted)
            .iter()
            .map(|v| format!("{v}\n"))
            .collect(),
        false => closing_text(r, link_bps, dir, trials, interrupted),
    }
}

/// The text of a campaign's end: every result, where the files are, and
/// how to go on when it was interrupted.
pub fn closing_text(
    r: &Report,
    link_bps: Option<f64>,
    dir: &str,
    trials: usize,
    interrupted: bool,
) -> String {
    let mut out = format!(
        "Results ({} searches, {trials} trials):\n",
        r.throughput.len()
    );
    out += &report_text(r, link_bps);
    out += &format!("Trials in {dir}/{TRIALS_FILE}, results in {dir}/{REPORT_FILE}.\n");
    if interrupted {
        out += &format!(
            "Interrupted: every finished trial is kept; pktlab rfc2544 --resume {dir} goes on.\n"
        );
    }
    out
}

/// The whole report.
pub fn report_text(r: &Report, link_bps: Option<f64>) -> String {
    let mut out = String::new();
    for t in &r.throughput {
        out.push_str(&throughput_text(t, link_bps));
    }
    out.push_str(&latency_text(&r.latency));
    for f in &r.frame_loss {
        out.push_str(&frame_loss_text(f));
    }
    for b in &r.back_to_back {
        out.push_str(&back_to_back_text(b));
    }
    for c in &r.comparisons {
        out.push_str(&comparison_text(c));
        out.push('\n');
    }
    for t in &r.knob_sweeps {
        out.push_str(&crate::tables::sweep::search_table(t));
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
            tester_limited: false,
            loss_inversion: false,
            complete: true,
            directions: Vec::new(),
        }
    }

    #[test]
    fn each_direction_s_loss_under_its_goal() {
        let mut t = Throughput {
            config: "nft".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            max_pps: 1e5,
            goals: vec![goal(Some(20_000.0), false, false)],
            generator_limited: false,
            tester_limited: false,
            trials: 9,
            trial_seconds: 9.0,
        };
        t.goals[0].directions = vec![
            DirectionLoss {
                name: "forward".into(),
                lower_loss_ratio: Some(0.0),
                upper_loss_ratio: Some(0.0125),
            },
            DirectionLoss {
                name: "reverse".into(),
                lower_loss_ratio: Some(0.001),
                upper_loss_ratio: None,
            },
        ];
        let text = throughput_text(&t, None);
        assert!(
            text.ends_with(
                "conditional throughput 20,000 pps\n    \
                 forward: lost 0 % at the lower bound, 1.25 % at the upper\n    \
                 reverse: lost 0.1 % at the lower bound, - at the upper\n"
            ),
            "{text}"
        );
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
        let tester = GoalBounds {
            tester_limited: true,
            ..goal(Some(100_000.0), true, false)
        };
        assert_eq!(
            result_text(&tester),
            "at least 100,000 pps (the tester dropped the frames, not the DUT)"
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
    fn a_trials_drops_line() {
        use pktlab_loss::drops::{Place, Side};
        let place = |side, reason: &str, location: &str, frames| Place {
            side,
            host: "local".into(),
            netns: "lab-dut".into(),
            iface: "d0".into(),
            layer: "kernel".into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        };
        // 2000 of 20000 lost (10 %), all nft's in the DUT.
        let d = Drops {
            lost: 2000,
            dut: 2000,
            tester: 0,
            unexplained: 0,
            places: vec![place(Side::Dut, "NETFILTER_DROP", "nft_do_chain", 2000)],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        assert_eq!(
            trial_drops_text(3, Some(20_000.0), 20_000, &d, &[]),
            "  trial 3 at 20,000 pps: lost 2000 (10%): DUT nft_do_chain NETFILTER_DROP 2000 (100%)"
        );
        // The same loss both ways, all of it the reverse stream's: 20000
        // sent each way, 40000 in all (5 %).
        let none = Drops {
            lost: 0,
            dut: 0,
            places: vec![],
            ..d.clone()
        };
        let both = [
            ("forward".to_string(), 20_000, none),
            ("reverse".to_string(), 20_000, d.clone()),
        ];
        assert_eq!(
            trial_drops_text(3, Some(20_000.0), 40_000, &d, &both),
            "  trial 3 at 20,000 pps each way: lost 2000 (5.0%): DUT nft_do_chain NETFILTER_DROP 2000 (100%)\n    \
             forward: sent 20000, lost 0 (0.00%)\n    \
             reverse: sent 20000, lost 2000 (10%): DUT nft_do_chain NETFILTER_DROP 2000 (100%)"
        );
        // 100 lost of 40000 (0.25 %): 60 the receiver's ring (a tester
        // place), 40 unexplained (40 %, more than 1 %).
        let d = Drops {
            lost: 100,
            dut: 0,
            tester: 60,
            unexplained: 40,
            places: vec![Place {
                layer: "ring".into(),
                netns: "lab-rcv".into(),
                iface: "r0".into(),
                ..place(Side::Tester, "ring_drops", "-", 60)
            }],
            traced: true,
            tracer_missed: 0,
            tester_limited: true,
        };
        assert_eq!(
            trial_drops_text(1, None, 40_000, &d, &[]),
            "  trial 1 as fast as possible: lost 100 (0.25%): tester r0 ring_drops 60 (60%), \
             unexplained 40 (40%), more than 1% of the loss unexplained; \
             tester-limited: most of the loss is the tester's, not the DUT's"
        );
    }

    #[test]
    fn latency_table_by_hand() {
        let row = LatencyResult {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            load_fraction: 0.5,
            load_pps: 10_000.0,
            offered_pps: 9_990.0,
            trials: 3,
            frames: 29_970,
            lost: 0,
            min_ns: 800,
            p50_ns: 12_345,
            p90_ns: 20_000,
            p99_ns: 1_500_000,
            p999_ns: 2_000_000,
            max_ns: 3_000_000_000,
            clock: "one host".into(),
            latency_note: None,
        };
        let text = latency_text(std::slice::from_ref(&row));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("Latency, one way"));
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "config", "traffic", "size", "of", "PDR", "load", "trials", "frames", "min", "p50",
                "p90", "p99", "p99.9", "max"
            ]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            [
                "police", "inet4", "64", "50%", "10,000", "pps", "3", "29970", "800", "ns", "12.3",
                "us", "20.0", "us", "1.50", "ms", "2.00", "ms", "3.000", "s"
            ]
        );
        assert!(text.ends_with("Timestamps: one host.)\n"), "{text}");
        assert_eq!(latency_text(&[]), "");
        // Across hosts: one line when every load has the same note...
        let ok = "clocks of a and c synchronised to ±5.0 µs (ptp)";
        let far = LatencyResult {
            latency_note: Some(ok.into()),
            clock: "two hosts".into(),
            ..row.clone()
        };
        let near = LatencyResult {
            load_fraction: 0.1,
            ..far.clone()
        };
        let text = latency_text(&[far.clone(), near.clone()]);
        assert!(
            text.ends_with(&format!("Timestamps: two hosts.)\n  Clocks: {ok}\n")),
            "{text}"
        );
        // ... else one per load that has one.
        let bad =
            "not comparable: the clocks' error is unknown (no synchronised chrony or PTP on c)";
        let near = LatencyResult {
            latency_note: Some(bad.into()),
            ..near
        };
        let text = latency_text(&[far, near]);
        assert!(
            text.ends_with(&format!(
                "Timestamps: two hosts.)\n  Clocks, police inet4 64 at 50% of PDR: {ok}\n  \
                 Clocks, police inet4 64 at 10% of PDR: {bad}\n"
            )),
            "{text}"
        );
    }

    #[test]
    fn back_to_back_by_hand() {
        let b = BackToBack {
            config: "police".into(),
            traffic: "inet4".into(),
            size: "64".into(),
            iteration: 1,
            frames: 415.5,
            min_frames: 400,
            max_frames: 431,
            burst_pps: 49_876.4,
            max_pps: 50_000.0,
            trials: 2,
            bursts: 24,
            at_least: false,
            throughput_pps: Some(3_300.0),
            implied_buffer_time_s: Some(415.5 / 50_000.0),
            corrected_buffer_time_s: Some(415.5 / 50_000.0 * (1.0 - 3_300.0 / 50_000.0)),
        };
        // 415.5 / 50,000 = 8.31 ms; × (1 − 0.066) = 7.76 ms.
        assert_eq!(
            back_to_back_text(&b),
            "police inet4 size 64 back-to-back: 415.5 frames on average over 2 searches \
             (min 400, max 431, 24 bursts), bursts sent at 49,876 pps (maximum load 50,000 pps)\n  \
             implied DUT buffer time 8.31 ms, corrected 7.76 ms (throughput 3,300 pps)\n"
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
            tester_limited: false,
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
