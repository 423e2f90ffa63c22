//! The history's text for people: trends with their groups and changes,
//! the campaigns recorded, and two labels compared with ministat.

use pktlab_stats::ministat::{self, RenderOptions};
use pktlab_stats::Confidence;

use crate::compare::LabelComparison;
use crate::jumpavg::Kind;
use crate::record::{Recorded, StoredCampaign};
use crate::trend::Trend;

pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Normal => "normal",
        Kind::Regression => "regression",
        Kind::Progression => "progression",
    }
}

/// A figure with one decimal (pps and ns are large enough).
pub fn number(v: f64) -> String {
    format!("{v:.1}")
}

/// `+4.09 %`, `-12.42 %`.
pub fn signed_percent(ratio: f64) -> String {
    format!("{:+.2} %", ratio * 100.0)
}

/// `2024-05-01 12:00 UTC`, or `-`.
pub fn when(unix: Option<i64>) -> String {
    match unix {
        Some(t) if t >= 0 => {
            let s = pktlab_campaign::folder::utc_stamp(t as u64);
            format!(
                "{}-{}-{} {}:{} UTC",
                &s[0..4],
                &s[4..6],
                &s[6..8],
                &s[9..11],
                &s[11..13]
            )
        }
        _ => "-".into(),
    }
}

/// `1 run`, `5 runs`.
pub fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn span(first: &str, last: &str) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first} .. {last}")
    }
}

/// One series: its groups, then its changes.
pub fn trend_text(t: &Trend) -> String {
    let runs: usize = t.points.iter().map(|p| p.values.len()).sum();
    let mut out = format!(
        "{}: {}, {} ({}), {}\n",
        t.key.title(),
        t.key.metric,
        plural(t.points.len(), "label"),
        span(
            &t.points
                .first()
                .map(|p| p.label.clone())
                .unwrap_or_default(),
            &t.points.last().map(|p| p.label.clone()).unwrap_or_default()
        ),
        plural(runs, "run"),
    );
    out += &format!(
        "  groups (jumpavg, sbps 12: unit {} {}; {:.2} bits):\n",
        number(t.jumpavg_unit),
        t.unit,
        t.bits
    );
    let width = t
        .groups
        .iter()
        .map(|g| span(&g.first_label, &g.last_label).chars().count())
        .max()
        .unwrap_or(0);
    for g in &t.groups {
        out += &format!(
            "    {:<width$}  {:>4} {} {:>5} runs  {:>12} ± {:<10} {:>9.2} bits  {}\n",
            span(&g.first_label, &g.last_label),
            g.last - g.first + 1,
            if g.last == g.first {
                "label "
            } else {
                "labels"
            },
            g.runs,
            number(g.average),
            number(g.stdev),
            g.bits,
            kind_name(g.kind)
        );
    }
    if t.changes.is_empty() {
        out += "  no change\n";
    } else {
        out += "  changes:\n";
        for c in &t.changes {
            out += &format!(
                "    {:<11} at {}: {} -> {} {} ({})\n",
                kind_name(c.kind),
                c.label,
                number(c.before),
                number(c.after),
                t.unit,
                signed_percent(c.relative)
            );
        }
    }
    out
}

/// The campaigns, one line each.
pub fn list_text(campaigns: &[StoredCampaign]) -> String {
    let mut out = String::new();
    for c in campaigns {
        out += &format!(
            "{:>5}  {}  {:<7}  {:<20}  {:>9}  {}  {}\n",
            c.id,
            when(c.started_at),
            c.source.as_str(),
            c.label,
            plural(c.runs as usize, "run"),
            c.name,
            c.results_dir
        );
    }
    out
}

/// ministat's comparison of the two labels in each series.
pub fn compare_text(comparisons: &[LabelComparison], confidence: Confidence) -> String {
    let options = RenderOptions {
        confidence,
        ..RenderOptions::default()
    };
    let mut out = String::new();
    for (i, c) in comparisons.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out += &format!("{}: {}\n", c.key.title(), c.key.metric);
        out += &ministat::render(&c.datasets, &options);
    }
    out
}

/// The line a campaign ends with once recorded in the history `db`.
pub fn recorded_line(r: &Recorded, db: &str) -> String {
    format!(
        "History: {} as '{}' in {db} (pktlab history trend shows it).",
        match (r.new_campaign, r.runs_added) {
            (true, n) => format!("{} recorded", plural(n, "run")),
            (false, 0) => "already recorded".to_string(),
            (false, n) => format!("{} more recorded", plural(n, "run")),
        },
        r.label,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(signed_percent(0.040869), "+4.09 %");
        assert_eq!(signed_percent(-0.124204), "-12.42 %");
        assert_eq!(number(788610.93333), "788610.9");
        assert_eq!(when(Some(1_700_000_000)), "2023-11-14 22:13 UTC");
        assert_eq!(when(None), "-");
    }
}
