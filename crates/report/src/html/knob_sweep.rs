//! The knob sweep section: forwarded pps against each value of the swept
//! knob, the mean of the runs with its 95 % confidence interval as an
//! error bar (BSDRP's netbenches draws one such curve per knob), or, for
//! an rfc2544 campaign, each goal's bounds against the value; and the
//! table of the numbers drawn.

use pktlab_campaign::summary::KnobSweepTable;
use pktlab_search::mlr::sweep::SearchSweepTable;

use super::charts::{self, GoalBounds};
use super::data::Folder;
use super::escape::html;
use super::numbers::grouped;
use super::sections::{figure, table};
use crate::tables::sweep::goal_name;

/// The section, or nothing for a folder without a knob sweep.
pub fn section(f: &Folder) -> String {
    let Some(summary) = f.summary().filter(|s| !s.knob_sweeps.is_empty()) else {
        return String::new();
    };
    let mut out = String::from(
        "<section id=\"knob-sweep\"><h2>Knob sweep</h2><p>Forwarded packets per second for each value of the knob: the mean of the runs (a dot), its 95&nbsp;% confidence interval (the bar), and the median in the table.</p>",
    );
    for t in &summary.knob_sweeps {
        out += &format!("<h3>{} · {}</h3>", html(&t.knob), html(&t.traffic));
        out += &sweep_figure(t);
    }
    out + "</section>"
}

fn sweep_figure(t: &KnobSweepTable) -> String {
    let categories: Vec<String> = t.rows.iter().map(|r| r.value.clone()).collect();
    let bars: GoalBounds = (
        "forwarded: mean, 95 % CI".into(),
        t.rows
            .iter()
            .map(|r| {
                let m = r.forwarded_mean_pps;
                (r.ci95_low_pps.unwrap_or(m), m, r.ci95_high_pps.unwrap_or(m))
            })
            .collect(),
    );
    let chart = charts::bounds_chart(
        &format!("{} against {}", t.traffic, t.label),
        "forwarded packets per second",
        &categories,
        &[bars],
    );
    let head = [
        "Value",
        "Configuration",
        "Runs",
        "Median pps",
        "Mean pps",
        "95 % CI",
        "Offered pps",
        "Max loss",
    ];
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            let ci = match (r.ci95_low_pps, r.ci95_high_pps) {
                (Some(lo), Some(hi)) => format!("{} – {}", grouped(lo, 0), grouped(hi, 0)),
                _ => "–".into(),
            };
            vec![
                r.value.clone(),
                r.config.clone(),
                r.runs.to_string(),
                grouped(r.forwarded_median_pps, 0),
                grouped(r.forwarded_mean_pps, 0),
                ci,
                grouped(r.offered_median_pps, 0),
                format!("{:.3} %", r.max_loss_ratio * 100.0),
            ]
        })
        .collect();
    figure(&chart, &table(&head, &rows, 2))
}

/// The section of an rfc2544 campaign: NDR and PDR bounds per value.
pub fn search_section(f: &Folder) -> String {
    let Some(report) = f.report().filter(|r| !r.knob_sweeps.is_empty()) else {
        return String::new();
    };
    let mut out = String::from(
        "<section id=\"knob-sweep\"><h2>Knob sweep</h2><p>Each goal's bounds for each value of the knob (the bar from the lower to the upper bound, the dot at the conditional throughput), the median of the value's searches.</p>",
    );
    for t in &report.knob_sweeps {
        out += &format!("<h3>{} · {}</h3>", html(&t.knob), html(&t.traffic));
        out += &search_figure(t);
    }
    out + "</section>"
}

fn search_figure(t: &SearchSweepTable) -> String {
    let categories: Vec<String> = t.rows.iter().map(|r| r.value.clone()).collect();
    let ngoals = t.rows.first().map_or(0, |r| r.goals.len());
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let goals: Vec<GoalBounds> = (0..ngoals)
        .map(|i| {
            let name = goal_name(t.rows[0].goals[i].loss_ratio);
            let per = t
                .rows
                .iter()
                .map(|r| {
                    r.goals.get(i).map_or((f64::NAN, f64::NAN, f64::NAN), |g| {
                        (
                            nan(g.lower_pps),
                            nan(g.conditional_throughput_pps),
                            nan(g.upper_pps),
                        )
                    })
                })
                .collect();
            (name, per)
        })
        .collect();
    let chart = charts::bounds_chart(
        &format!("{} against {}", t.traffic, t.label),
        "packets per second",
        &categories,
        &goals,
    );
    let mut head = vec![
        "Value".to_string(),
        "Configuration".into(),
        "Searches".into(),
    ];
    for (name, _) in &goals {
        head.push(format!("{name} lower"));
        head.push(format!("{name} upper"));
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let opt = |v: Option<f64>| v.map_or("–".to_string(), |v| grouped(v, 0));
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            let mut v = vec![r.value.clone(), r.config.clone(), r.searches.to_string()];
            for g in &r.goals {
                v.push(opt(g.lower_pps));
                v.push(opt(g.upper_pps));
            }
            v
        })
        .collect();
    figure(&chart, &table(&head, &rows, 2))
}
