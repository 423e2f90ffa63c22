//! `pktlab history report`: one self-contained HTML page with a chart per
//! series and, beside it, the changes and groups the trend found.

pub mod chart;
pub mod page;

use crate::jumpavg::Kind;
use crate::text::{kind_name, number, signed_percent};
use crate::trend::Trend;
use page::escape;

/// What the page says about where its data came from.
#[derive(Clone, Debug, Default)]
pub struct PageInfo {
    pub database: String,
    pub campaigns: usize,
    pub labels: usize,
    /// Series that could not be split, with why.
    pub notes: Vec<String>,
}

fn changes_table(t: &Trend) -> String {
    if t.changes.is_empty() {
        return "<p>No change: one group.</p>".into();
    }
    let rows: String = t
        .changes
        .iter()
        .map(|c| {
            let k = kind_name(c.kind);
            format!(
                "<tr><td>{}</td><td class=\"{k}\">{k}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(&c.label),
                number(c.before),
                number(c.after),
                signed_percent(c.relative)
            )
        })
        .collect();
    format!(
        "<div class=\"scroll\"><table><caption>Changes ({})</caption><tr><th>from label</th><th>change</th><th>before</th><th>after</th><th>relative</th></tr>{rows}</table></div>",
        t.unit
    )
}

fn groups_table(t: &Trend) -> String {
    let rows: String = t
        .groups
        .iter()
        .map(|g| {
            let labels = if g.first == g.last {
                escape(&g.first_label)
            } else {
                format!("{} … {}", escape(&g.first_label), escape(&g.last_label))
            };
            let class = match g.kind {
                Kind::Normal => "",
                Kind::Regression => " class=\"regression\"",
                Kind::Progression => " class=\"progression\"",
            };
            format!(
                "<tr><td class=\"label\">{labels}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td{class}>{}</td></tr>",
                g.runs,
                number(g.average),
                number(g.stdev),
                g.bits,
                kind_name(g.kind)
            )
        })
        .collect();
    format!(
        "<div class=\"scroll\"><table><caption>Groups (jumpavg: {:.2} bits, unit {})</caption><tr><th>labels</th><th>runs</th><th>average</th><th>stdev</th><th>bits</th><th></th></tr>{rows}</table></div>",
        t.bits,
        number(t.jumpavg_unit)
    )
}

/// The page of `trends`.
pub fn render(trends: &[Trend], info: &PageInfo) -> String {
    let title = "pktlab history";
    let mut out = page::head(title);
    out += &format!(
        "<h1>{title}</h1>\n<p class=\"meta\">Database <code>{}</code>: {} campaigns, {} labels, {} series. Groups and changes by FD.io CSIT's jumpavg (minimum description length; sbps 12, as CSIT's trending).</p>\n",
        escape(&info.database),
        info.campaigns,
        info.labels,
        trends.len()
    );
    if trends.len() > 1 {
        let items: String = trends
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    "<li><a href=\"#s{i}\">{} {}</a> ({} changes)</li>",
                    escape(&t.key.title()),
                    escape(&t.key.metric),
                    t.changes.len()
                )
            })
            .collect();
        out += &format!("<nav><ul>{items}</ul></nav>\n");
    }
    for note in &info.notes {
        out += &format!("<p class=\"note\">{}</p>\n", escape(note));
    }
    if trends.is_empty() {
        out += "<p class=\"note\">No series: nothing in the history matches.</p>\n";
    }
    for (i, t) in trends.iter().enumerate() {
        let title = format!("{}: {}", t.key.title(), t.key.metric);
        out += &format!(
            "<section id=\"s{i}\"><h2>{}</h2><p class=\"meta\">{} labels, {} runs.</p><div class=\"figure\"><div class=\"plot\">{}<p class=\"meta\">{}</p></div><div class=\"numbers\">{}{}</div></div></section>\n",
            escape(&title),
            t.points.len(),
            t.points.iter().map(|p| p.values.len()).sum::<usize>(),
            chart::trend_chart(t, &title),
            chart::LEGEND,
            changes_table(t),
            groups_table(t)
        );
    }
    out + page::foot()
}
