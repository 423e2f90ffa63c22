//! The page of an rfc9693 campaign: each run's results, and for each
//! search its trace, the connections that failed in each trial against the
//! count or rate it tried (the throughput search: the frames each
//! direction lost against the rate), drawn and in a table.

use std::path::Path;

use pktlab_search::stateful::phases::StatefulTrial;
use pktlab_search::stateful::results::{StatefulReport, StatefulRun};
use pktlab_search::stateful::throughput::ThroughputTrial;

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
    out + &foot()
}

fn run_section(run: &StatefulRun) -> String {
    let mut out = format!(
        "<section><h2>{} · {} #{}</h2><pre class=\"results\">{}</pre>",
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
    out += &throughput_trace(run);
    out + "</section>\n"
}

/// The throughput search's trace: the frames each direction lost against
/// the rate each way, drawn and in a table; nothing without its trials.
fn throughput_trace(run: &StatefulRun) -> String {
    let trials = &run.throughput_trials;
    if trials.is_empty() {
        return String::new();
    }
    let way = |name: &str, lost: fn(&ThroughputTrial) -> u64| Series {
        name: name.into(),
        points: trials
            .iter()
            .map(|t| (t.rate_pps, lost(t) as f64))
            .collect(),
    };
    let title = format!("{} throughput: frames lost per trial", run.config);
    let mut out = format!("<h3>{}</h3>", html(&title));
    out += &scatter(
        &title,
        "rate each way (frames/s)",
        "frames lost",
        &[
            way("forward", |t| t.forward.lost),
            way("reverse", |t| t.reverse.lost),
        ],
    );
    let n = |v: u64| grouped(v as f64);
    out += "<div class=\"scroll\"><table><thead><tr><th>Trial</th><th>Connections</th>\
            <th>Set up</th><th>Conntrack count</th><th>Rate each way (frames/s)</th>\
            <th>Forward sent</th><th>Forward lost</th><th>Reverse sent</th><th>Reverse lost</th>\
            </tr></thead><tbody>";
    for (i, t) in trials.iter().enumerate() {
        let cells = [
            n(i as u64 + 1),
            n(t.connections),
            n(t.preliminary_received),
            t.conntrack_count.map_or("–".to_string(), n),
            grouped(t.rate_pps),
            n(t.forward.sent),
            n(t.forward.lost),
            n(t.reverse.sent),
            n(t.reverse.lost),
        ];
        out += "<tr>";
        for c in cells {
            out += &format!("<td class=\"num\">{c}</td>");
        }
        out += "</tr>";
    }
    out + "</tbody></table></div>"
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
    use pktlab_search::stateful::throughput::WayCounts;
    use pktlab_search::stateful::StatefulSettings;

    fn way(sent: u64, lost: u64) -> WayCounts {
        WayCounts {
            sent,
            received: sent - lost,
            lost,
            offered_pps: 0.0,
            forwarded_pps: 0.0,
        }
    }

    #[test]
    fn the_throughput_trace_per_direction() {
        let t = |rate: f64, fwd: u64, rev: u64| ThroughputTrial {
            connections: 1000,
            setup_rate_pps: 50_000.0,
            preliminary_sent: 1000,
            preliminary_received: 1000,
            conntrack_count: Some(1000),
            rate_pps: rate,
            duration_s: 2.0,
            forward: way(rate as u64 * 2, fwd),
            reverse: way(rate as u64 * 2, rev),
            tester_lost: 0,
            tester_limited: false,
        };
        let run = StatefulRun {
            config: "nat44".into(),
            traffic: "inet4".into(),
            iteration: 1,
            throughput_trials: vec![t(100_000.0, 0, 12_345), t(47_500.0, 0, 0)],
            ..StatefulRun::default()
        };
        let mut r = StatefulReport::new(StatefulSettings::default());
        r.runs.push(run);
        let page = stateful_page(Path::new("/tmp/rfc9693-y"), &r);
        assert!(page.contains("nat44 throughput: frames lost per trial"));
        assert_eq!(page.matches("<svg class=\"chart\"").count(), 1);
        // Trial 1: 200,000 sent each way, 12,345 lost on the way back.
        assert!(page.contains(
            "<tr><td class=\"num\">1</td><td class=\"num\">1,000</td><td class=\"num\">1,000</td>\
             <td class=\"num\">1,000</td><td class=\"num\">100,000</td><td class=\"num\">200,000</td>\
             <td class=\"num\">0</td><td class=\"num\">200,000</td><td class=\"num\">12,345</td></tr>"
        ));
        // The x axis's ticks are whole numbers with separators.
        assert!(!page.contains("0000.0<"), "a tick with decimals");
    }

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
        assert!(page.contains("<h2>nft-stateful · inet4 #1</h2><pre class=\"results\">"));
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
        assert!(!page.contains("throughput"), "no throughput trials");
        assert!(page.ends_with("</html>\n"));
    }
}
