//! The RFC 2544 section, which leads the page of an rfc2544 folder: NDR
//! and PDR per size with their bounds, the search trace, the frame-loss
//! curves, latency percentiles in HDR style and the back-to-back result,
//! from the searches' results and trials.

use std::collections::BTreeMap;

use pktlab_search::mlr::latency::LatencyResult;
use pktlab_search::mlr::summary::{DirectionLoss, Report, Throughput};

use super::charts::{self, LineChart, Series};
use super::data::Folder;
use super::escape::html;
use super::numbers::{grouped, percent, pps};
use super::sections::{figure, table};
use super::sizes::SizeLabel;
use crate::rfc2544::short_goal_name;
use pktlab_search::mlr::record::THROUGHPUT;

/// (percentile, ns) points of a load's HDR curve; max is drawn at 99.99.
fn hdr_points(l: &LatencyResult) -> [(f64, f64); 5] {
    [
        (50.0, l.p50_ns as f64),
        (90.0, l.p90_ns as f64),
        (99.0, l.p99_ns as f64),
        (99.9, l.p999_ns as f64),
        (99.99, l.max_ns as f64),
    ]
}

fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), pps)
}

/// `(config, traffic)` pairs in first-seen order.
fn pairs<'a>(keys: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (c, t) in keys {
        if !out.iter().any(|(a, b)| a == c && b == t) {
            out.push((c.to_string(), t.to_string()));
        }
    }
    out
}

/// The section; empty for a folder without searches.
pub fn rfc2544(f: &Folder) -> String {
    let Some(r) = f.report() else {
        return String::new();
    };
    let mut out = String::from("<section id=\"rfc2544\"><h2>RFC 2544</h2>");
    if !r.throughput.is_empty() {
        out += "<h3>Throughput: NDR and PDR per frame size</h3>";
        for (config, traffic) in pairs(
            r.throughput
                .iter()
                .map(|t| (t.config.as_str(), t.traffic.as_str())),
        ) {
            let mine: Vec<&Throughput> = r
                .throughput
                .iter()
                .filter(|t| t.config == config && t.traffic == traffic)
                .collect();
            out += &format!("<h4>{} · {}</h4>", html(&config), html(&traffic));
            out += &throughput_figure(&config, &traffic, &mine);
        }
    }
    out += &trace(f);
    if !r.frame_loss.is_empty() || !f.trials().is_empty() {
        out += &frame_loss(f, r);
    }
    out += &latency(r);
    out += &back_to_back(r);
    out + "</section>"
}

/// One configuration's and traffic's NDR/PDR bounds per size: chart and
/// table.
fn throughput_figure(config: &str, traffic: &str, mine: &[&Throughput]) -> String {
    let sizes: Vec<String> = mine.iter().map(|t| format!("{} B", t.size)).collect();
    let mut goals: Vec<charts::GoalBounds> = Vec::new();
    for t in mine {
        for g in &t.goals {
            let name = short_goal_name(g);
            if !goals.iter().any(|(n, _)| *n == name) {
                goals.push((name, Vec::new()));
            }
        }
    }
    for (name, per) in goals.iter_mut() {
        for t in mine {
            let g = t.goals.iter().find(|g| short_goal_name(g) == *name);
            let nan = f64::NAN;
            per.push(g.map_or((nan, nan, nan), |g| {
                (
                    g.lower_pps.unwrap_or(nan),
                    g.conditional_throughput_pps.unwrap_or(nan),
                    g.upper_pps.unwrap_or(nan),
                )
            }));
        }
    }
    let chart = charts::bounds_chart(
        &format!("NDR/PDR {config} · {traffic}"),
        "packets per second",
        &sizes,
        &goals,
    );
    // Traffic both ways: each direction's loss at the bounds, which tells
    // the direction that failed first.
    let both_ways = mine
        .iter()
        .any(|t| t.goals.iter().any(|g| !g.directions.is_empty()));
    let mut rows = Vec::new();
    for t in mine {
        for g in &t.goals {
            let mut row = vec![
                t.size.to_string(),
                short_goal_name(g),
                percent(g.exceed_ratio),
                opt(g.lower_pps),
                opt(g.conditional_throughput_pps),
                opt(g.upper_pps),
                t.trials.to_string(),
                if t.generator_limited {
                    "yes: at least this".into()
                } else {
                    "no".into()
                },
            ];
            if both_ways {
                row.push(direction_losses(&g.directions));
            }
            rows.push(row);
        }
    }
    let mut headers = vec![
        "Size",
        "Goal",
        "Exceed ratio",
        "Lower bound pps",
        "Conditional throughput pps",
        "Upper bound pps",
        "Trials",
        "Generator-limited",
    ];
    if both_ways {
        headers.push("Loss each way, lower / upper bound");
    }
    figure(&chart, &table(&headers, &rows, 2))
}

/// `forward 0 % / 1.25 %; reverse 0 % / 0 %`: each direction's loss at a
/// goal's lower and upper bound.
fn direction_losses(directions: &[DirectionLoss]) -> String {
    // The text output's trimmed percent (`1.25 %`), as beside the goal.
    let at = |r: Option<f64>| r.map_or("-".to_string(), crate::rfc2544::percent);
    directions
        .iter()
        .map(|d| {
            format!(
                "{} {} / {}",
                d.name,
                at(d.lower_loss_ratio),
                at(d.upper_loss_ratio)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Latency percentiles per load, in HDR style.
fn latency(r: &Report) -> String {
    if r.latency.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Latency</h3>");
    let mut groups: BTreeMap<(String, String, SizeLabel), Vec<&LatencyResult>> = BTreeMap::new();
    for l in &r.latency {
        groups
            .entry((
                l.config.clone(),
                l.traffic.clone(),
                SizeLabel(l.size.clone()),
            ))
            .or_default()
            .push(l);
    }
    for ((config, traffic, size), ls) in groups {
        let series: Vec<Series> = ls
            .iter()
            .map(|l| Series {
                name: format!("at {} pps", pps(l.load_pps)),
                points: hdr_points(l).iter().map(|&(p, ns)| (p, ns / 1e3)).collect(),
            })
            .collect();
        let chart = charts::hdr_chart(&format!("Latency {config} · {traffic} · {size} B"), &series);
        let rows: Vec<Vec<String>> = ls
            .iter()
            .map(|l| {
                let ns = [l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns];
                let mut row = vec![pps(l.load_pps)];
                row.extend(ns.iter().map(|v| grouped(*v as f64 / 1e3, 2)));
                row
            })
            .collect();
        out += &format!(
            "<h4>{} · {} · {} B</h4>",
            html(&config),
            html(&traffic),
            size
        );
        out += &figure(
            &chart,
            &table(
                &[
                    "Load pps",
                    "min µs",
                    "p50 µs",
                    "p90 µs",
                    "p99 µs",
                    "p99.9 µs",
                    "max µs",
                ],
                &rows,
                0,
            ),
        );
    }
    out
}

/// The back-to-back frames and RFC 9004's buffer times.
fn back_to_back(r: &Report) -> String {
    if r.back_to_back.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = r
        .back_to_back
        .iter()
        .map(|b| {
            vec![
                b.config.clone(),
                b.traffic.clone(),
                b.size.to_string(),
                grouped(b.frames, 1),
                pps(b.burst_pps),
                b.trials.to_string(),
                b.implied_buffer_time_s
                    .map_or("–".into(), |s| grouped(s * 1e6, 2)),
                b.corrected_buffer_time_s
                    .map_or("–".into(), |s| grouped(s * 1e6, 2)),
            ]
        })
        .collect();
    let mut out = String::from("<h3>Back-to-back frames</h3>");
    out += &table(
        &[
            "Configuration",
            "Traffic",
            "Size",
            "Frames (average)",
            "Burst pps",
            "Trials",
            "Implied buffer µs",
            "Corrected buffer µs (RFC 9004)",
        ],
        &rows,
        2,
    );
    out
}

/// Every throughput trial's offered load against time, coloured by the
/// class its load got for the first goal.
fn trace(f: &Folder) -> String {
    let trials: Vec<_> = f.trials().iter().filter(|t| t.test == THROUGHPUT).collect();
    if trials.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Search trace</h3>");
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for t in &trials {
        let k = (t.config.clone(), t.traffic.clone(), t.size.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (config, traffic, size) in keys {
        let mine: Vec<_> = trials
            .iter()
            .filter(|t| t.config == config && t.traffic == traffic && t.size == size)
            .collect();
        let t0 = mine.iter().map(|t| t.started_at).min().unwrap_or(0);
        let mut groups: Vec<Series> = Vec::new();
        for t in &mine {
            let class = t.first_class().to_string();
            let p = ((t.started_at - t0) as f64, t.offered_pps);
            match groups.iter_mut().find(|g| g.name == class) {
                Some(g) => g.points.push(p),
                None => groups.push(Series {
                    name: class,
                    points: vec![p],
                }),
            }
        }
        let chart = charts::scatter(
            &format!("Search trace {config} · {traffic} · {size} B"),
            "seconds since the first trial",
            "offered packets per second",
            &groups,
        );
        let rows: Vec<Vec<String>> = mine
            .iter()
            .map(|t| {
                vec![
                    t.first_class().to_string(),
                    grouped((t.started_at - t0) as f64, 1),
                    t.intended_pps.map_or("full speed".to_string(), pps),
                    pps(t.offered_pps),
                    grouped(t.duration_s, 1),
                    grouped(t.tx as f64, 0),
                    grouped(t.rx as f64, 0),
                    grouped(t.lost as f64, 0),
                    t.late.map_or("n/a".to_string(), |n| grouped(n as f64, 0)),
                    percent(t.loss_ratio),
                    if t.generator_limited {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                ]
            })
            .collect();
        out += &format!(
            "<h4>{} · {} · {} B</h4>",
            html(&config),
            html(&traffic),
            size
        );
        out += &figure(
            &chart,
            &format!(
                "<details><summary>{} trials</summary>{}</details>",
                mine.len(),
                table(
                    &[
                        "Class",
                        "At s",
                        "Intended pps",
                        "Offered pps",
                        "Duration s",
                        "TX",
                        "RX",
                        "Lost",
                        "Late",
                        "Loss",
                        "Generator-limited"
                    ],
                    &rows,
                    1,
                )
            ),
        );
    }
    out
}

/// The frame-loss curve (RFC 2544 §26.3 steps) and the search trials' loss
/// against offered load, both kept.
fn frame_loss(f: &Folder, r: &Report) -> String {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let steps = r.frame_loss.as_slice();
    for k in steps
        .iter()
        .map(|l| (l.config.clone(), l.traffic.clone(), l.size.clone()))
        .chain(
            f.trials()
                .iter()
                .filter(|t| t.test == THROUGHPUT)
                .map(|t| (t.config.clone(), t.traffic.clone(), t.size.clone())),
        )
    {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = String::from("<h3>Frame loss against offered load</h3>");
    for (config, traffic, size) in keys {
        let mut series = Vec::new();
        let mut rows = Vec::new();
        if let Some(l) = steps
            .iter()
            .find(|l| l.config == config && l.traffic == traffic && l.size == size)
        {
            let mut pts: Vec<(f64, f64)> = l
                .points
                .iter()
                .map(|p| (p.offered_pps, p.loss_ratio * 100.0))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            for p in &l.points {
                rows.push(vec![
                    "frame-loss steps".to_string(),
                    pps(p.offered_pps),
                    percent(p.loss_ratio),
                ]);
            }
            series.push(Series {
                name: "frame-loss steps".into(),
                points: pts,
            });
        }
        let mut pts: Vec<(f64, f64)> = f
            .trials()
            .iter()
            .filter(|t| {
                t.test == THROUGHPUT && t.config == config && t.traffic == traffic && t.size == size
            })
            .map(|t| (t.offered_pps, t.loss_ratio * 100.0))
            .collect();
        if !pts.is_empty() {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            for p in &pts {
                rows.push(vec![
                    "search trials".to_string(),
                    pps(p.0),
                    percent(p.1 / 100.0),
                ]);
            }
            series.push(Series {
                name: "search trials".into(),
                points: pts,
            });
        }
        let chart = charts::line_chart(&LineChart {
            title: format!("Frame loss {config} · {traffic} · {size} B"),
            x_desc: "offered packets per second".into(),
            y_desc: "loss (%)".into(),
            series,
            ..LineChart::default()
        });
        out += &format!(
            "<h4>{} · {} · {} B</h4>",
            html(&config),
            html(&traffic),
            size
        );
        out += &figure(
            &chart,
            &format!(
                "<details><summary>Values</summary>{}</details>",
                table(&["Source", "Offered pps", "Loss"], &rows, 1)
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_s_loss_in_one_cell() {
        let d = |name: &str, lower, upper| DirectionLoss {
            name: name.into(),
            lower_loss_ratio: lower,
            upper_loss_ratio: upper,
        };
        assert_eq!(
            direction_losses(&[
                d("forward", Some(0.0), Some(0.0125)),
                d("reverse", Some(0.0), None)
            ]),
            "forward 0 % / 1.25 %; reverse 0 % / -"
        );
    }
}
