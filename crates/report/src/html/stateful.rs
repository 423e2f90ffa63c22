//! The page of an rfc9693 campaign: each run's results, and for each
//! search its trace, the connections that failed in each trial against the
//! count or rate it tried, drawn and in a table.

use std::path::Path;

use pktlab_search::stateful::phases::StatefulTrial;
use pktlab_search::stateful::results::{StatefulReport, StatefulRun};

use super::charts::{scatter, Series};
use super::escape::html;
use super::page::{foot, head};
use crate::linerate::grouped;
use crate::rfc9693::run_text;

/// The whole page of the folder at `path`.
pub fn stateful_page(path: &Path, r: &StatefulReport) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let title = format!("pktlab report: {name}");
    let mut out = head(&title);
    out += &format!(
        "<h1>{}</h1>\n<p class=\"meta\">Results folder <code>{}</code>: RFC 9693's stateful tests</p>\n",
        html(&title),
        html(&path.display().to_string())
    );
    for run in &r.runs {
        out += &run_section(run);
    }
    out += &format!("<p>{}.</p>\n", html(&r.throughput_note));
    out + &foot()
}

fn run_section(run: &StatefulRun) -> String {
    let mut out = format!(
        "<section><h2>{} · {} #{}</h2><pre>{}</pre>",
        html(&run.config),
        html(&run.traffic),
        run.iteration,
        html(run_text(run).trim_end())
    );
    for (test, x_desc) in [
        ("capacity", "connections opened"),
        ("rate", "preliminary phase's rate (frames/s)"),
    ] {
        let trials: Vec<&StatefulTrial> = run.trials.iter().filter(|t| t.test == test).collect();
        if trials.is_empty() {
            continue;
        }
        let x = |t: &StatefulTrial| match test {
            "capacity" => t.connections as f64,
            _ => t.setup_rate_pps,
        };
        let group = |validated: bool, name: &str| Series {
            name: name.into(),
            points: trials
                .iter()
                .filter(|t| t.validated() == validated)
                .map(|t| (x(t), t.failed() as f64))
                .collect(),
        };
        let title = format!("{} {test}: connections failed per trial", run.config);
        out += &format!("<h3>{}</h3>", html(&title));
        out += &scatter(
            &title,
            x_desc,
            "connections failed",
            &[group(true, "validated"), group(false, "failed")],
        );
        out += &trial_table(&trials);
    }
    out + "</section>\n"
}

/// Every trial of a search, in the order run.
fn trial_table(trials: &[&StatefulTrial]) -> String {
    let n = |v: u64| grouped(v as f64);
    let opt = |v: Option<u64>| v.map_or("–".to_string(), n);
    let mut out = String::from(
        "<div class=\"scroll\"><table><thead><tr><th>Trial</th><th>Connections</th><th>Rate (frames/s)</th>\
         <th>Set up</th><th>Conntrack count</th><th>Validated</th><th>Failed</th><th>Refused</th>\
         <th>Evicted (setup)</th><th>Evicted (validation)</th></tr></thead><tbody>",
    );
    for (i, t) in trials.iter().enumerate() {
        out += &format!(
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            i + 1,
            n(t.connections),
            grouped(t.setup_rate_pps),
            n(t.preliminary_received),
            opt(t.conntrack_count),
            n(t.validation_received),
            n(t.failed()),
            opt(t.setup_refused),
            opt(t.setup_evicted),
            opt(t.validation_evicted),
        );
    }
    out + "</tbody></table></div>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_search::stateful::StatefulSettings;

    fn trial(n: u64, validated: u64) -> StatefulTrial {
        StatefulTrial {
            test: "capacity".into(),
            connections: n,
            setup_rate_pps: 50_000.0,
            offered_pps: 50_000.0,
            preliminary_sent: n,
            preliminary_received: n,
            conntrack_count: Some(validated),
            validation_rate_pps: 50_000.0,
            validation_sent: n,
            validation_received: validated,
            setup_refused: Some(0),
            setup_evicted: Some(n - validated),
            validation_evicted: Some(0),
        }
    }

    #[test]
    fn a_page_with_the_trace() {
        let mut r = StatefulReport::new(StatefulSettings::default());
        r.runs.push(StatefulRun {
            config: "nft-stateful".into(),
            traffic: "inet4".into(),
            iteration: 1,
            trials: vec![trial(3750, 3000), trial(2996, 2996)],
            ..StatefulRun::default()
        });
        let page = stateful_page(Path::new("/tmp/rfc9693-x"), &r);
        assert!(page.contains("<h1>pktlab report: rfc9693-x</h1>"));
        assert!(page.contains("<h2>nft-stateful · inet4 #1</h2>"));
        assert_eq!(
            page.matches("<svg class=\"chart\"").count(),
            1,
            "one chart: no rate trials"
        );
        assert!(page.contains("nft-stateful capacity: connections failed per trial"));
        // 3750 opened, 3000 validated: 750 failed, 750 evicted.
        assert!(page.contains(
            "<td class=\"num\">1</td><td class=\"num\">3,750</td><td class=\"num\">50,000</td>\
             <td class=\"num\">3,750</td><td class=\"num\">3,000</td><td class=\"num\">3,000</td>\
             <td class=\"num\">750</td><td class=\"num\">0</td><td class=\"num\">750</td><td class=\"num\">0</td></tr>"
        ));
        assert!(page.contains("not measured yet: it needs the connections"));
        assert!(page.ends_with("</html>\n"));
    }
}
