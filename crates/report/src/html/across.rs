//! The comparison across folders (before and after a kernel change): each
//! configuration and traffic found in the first folder, every folder's runs
//! side by side, compared with the first folder by ministat's t test.

use pktlab_stats::Confidence;

use super::charts::{self, Strip};
use super::data::Folder;
use super::escape::html;
use super::numbers::{grouped, pps};
use super::sections::{figure, mean_ci, table};

pub fn section(folders: &[Folder]) -> String {
    let Some(first) = folders.first() else {
        return String::new();
    };
    let Some(summary) = first.summary() else {
        return String::new();
    };
    let mut out = String::new();
    for cell in summary.cells.iter().filter(|c| !c.values.is_empty()) {
        let mut strips = Vec::new();
        let mut rows = Vec::new();
        let base = cell.forwarded;
        for f in folders {
            let cells = f.summary().map_or(&[][..], |s| &s.cells);
            let Some(c) = cells.iter().find(|c| {
                c.config == cell.config && c.traffic == cell.traffic && !c.values.is_empty()
            }) else {
                rows.push(vec![
                    f.label(),
                    "0".into(),
                    "–".into(),
                    "–".into(),
                    "not in this folder".into(),
                ]);
                continue;
            };
            let s = c.forwarded.expect("cells with values have a summary");
            let verdict = match (base, std::ptr::eq(f, first)) {
                (_, true) => "baseline".to_string(),
                (Some(b), false) if b.n >= 2 && s.n >= 2 => {
                    let k = pktlab_stats::compare(&b, &s, Confidence::P95);
                    if k.significant {
                        let p = grouped(k.percent, 1);
                        let p = if k.percent > 0.0 && !p.starts_with('−') {
                            format!("+{p}")
                        } else {
                            p
                        };
                        format!("{p} % ± {} % at 95 %", grouped(k.percent_error, 1))
                    } else {
                        "no difference proven at 95 %".into()
                    }
                }
                _ => "not enough runs (ministat needs two of each)".into(),
            };
            rows.push(vec![
                f.label(),
                s.n.to_string(),
                pps(s.median),
                pps(s.avg),
                verdict,
            ]);
            strips.push(Strip {
                name: f.label(),
                values: c.values.clone(),
                median: s.median,
                min: s.min,
                max: s.max,
                ci: mean_ci(&c.values),
            });
        }
        let chart = charts::strip_chart(
            &format!("{} · {} across folders", cell.config, cell.traffic),
            "forwarded packets per second",
            &strips,
            None,
        );
        out += &format!("<h3>{} · {}</h3>", html(&cell.config), html(&cell.traffic));
        out += &figure(
            &chart,
            &table(
                &[
                    "Folder",
                    "Runs",
                    "Median pps",
                    "Avg pps",
                    "Against the first folder (ministat)",
                ],
                &rows,
                1,
            ),
        );
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"across\"><h2>Folders compared</h2><p>The first folder is the baseline.</p>{out}</section>")
}
