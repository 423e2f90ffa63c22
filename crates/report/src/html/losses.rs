//! "Where the lost frames went": each configuration's loss summed over its
//! runs (and over its RFC 2544 trials), split into the DUT's, the tester's
//! and what nothing explained, then place by place.

use pktlab_loss::drops::{LossSum, Side};

use super::data::Folder;
use super::escape::html;
use super::numbers::grouped;
use super::sections::table;
use crate::bench::percent;

/// `5,990 (99%)`: frames and their share of the loss.
fn share(frames: u64, lost: u64) -> String {
    if lost == 0 {
        return "0".into();
    }
    format!("{} ({})", grouped(frames as f64, 0), percent(frames, lost))
}

/// The sums of (configuration, traffic) in the order first seen.
type Sums = Vec<(String, String, LossSum)>;

fn add(sums: &mut Sums, config: &str, traffic: &str, d: &pktlab_loss::drops::Drops) {
    match sums
        .iter_mut()
        .find(|(c, t, _)| c == config && t == traffic)
    {
        Some((_, _, s)) => s.add(d),
        None => sums.push((config.into(), traffic.into(), LossSum::of([d]))),
    }
}

/// The sides' table, then each configuration's places.
fn tables(sums: &Sums, counted: &str) -> String {
    let rows: Vec<Vec<String>> = sums
        .iter()
        .map(|(c, t, s)| {
            vec![
                c.clone(),
                t.clone(),
                s.runs.to_string(),
                grouped(s.lost as f64, 0),
                share(s.dut, s.lost),
                share(s.tester, s.lost),
                share(s.unexplained, s.lost),
                s.untraced.to_string(),
                grouped(s.tracer_missed as f64, 0),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "Configuration",
            "Traffic",
            counted,
            "Lost",
            "DUT",
            "Tester",
            "Unexplained",
            "Counters only",
            "Tracer missed",
        ],
        &rows,
        2,
    );
    for (c, t, s) in sums.iter().filter(|x| !x.2.places.is_empty()) {
        let rows: Vec<Vec<String>> = s
            .places
            .iter()
            .map(|p| {
                vec![
                    match p.side {
                        Side::Dut => "DUT".into(),
                        Side::Tester => "tester".into(),
                        Side::Unknown => "-".into(),
                    },
                    p.netns.clone(),
                    // Another host's interface is named with its host, as
                    // in the text line.
                    if p.host == "local" {
                        p.iface.clone()
                    } else {
                        format!("{}:{}", p.host, p.iface)
                    },
                    p.layer.clone(),
                    p.reason.clone(),
                    p.location.clone(),
                    share(p.frames, s.lost),
                ]
            })
            .collect();
        out += &format!("<h3>{} · {}</h3>", html(c), html(t));
        out += &table(
            &[
                "Side",
                "Namespace",
                "Interface",
                "Layer",
                "Reason",
                "Location",
                "Frames",
            ],
            &rows,
            6,
        );
    }
    out
}

/// The section; empty when no run or trial recorded where its loss went.
pub fn section(f: &Folder) -> String {
    let mut runs: Sums = Vec::new();
    for cell in f.summary().map_or(&[][..], |s| &s.cells) {
        for r in f.runs_of(&cell.config, &cell.traffic) {
            if let Some(d) = &r.result.drops {
                add(&mut runs, &cell.config, &cell.traffic, d);
            }
        }
    }
    let mut trials: Sums = Vec::new();
    for t in f.trials() {
        if let Some(d) = &t.drops {
            add(&mut trials, &t.config, &t.traffic, d);
        }
    }
    if runs.is_empty() && trials.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"drops\"><h2>Where the lost frames went</h2><p>Each configuration's lost frames summed over its runs: on the DUT's side (kernel drop reasons from the drop tracer, or the DUT's counters), on the tester's side (generator, receiver and their interfaces), or unexplained. \"Counters only\" runs had no drop tracer; \"Tracer missed\" counts the kernel drop events the tracer was skipped on (it was already running on that CPU), so the places may hold up to that many frames fewer than were dropped there.</p>",
    );
    if !runs.is_empty() {
        out += &tables(&runs, "Runs");
    }
    if !trials.is_empty() {
        out += "<h3>RFC 2544 trials</h3><p>Every trial of the searches and tests, summed the same way.</p>";
        out += &tables(&trials, "Trials");
    }
    out + "</section>"
}

#[cfg(test)]
mod tests {
    use pktlab_loss::drops::{Drops, Place};

    use super::*;

    #[test]
    fn another_hosts_interface_is_named_with_its_host() {
        let remote = Place {
            side: Side::Dut,
            host: "root@dut1".into(),
            netns: "host".into(),
            iface: "d0".into(),
            layer: "interface".into(),
            reason: "rx_dropped".into(),
            location: "-".into(),
            frames: 30,
        };
        let local = Place {
            host: "local".into(),
            iface: "d1".into(),
            frames: 10,
            ..remote.clone()
        };
        let d = Drops {
            lost: 40,
            dut: 40,
            tester: 0,
            unexplained: 0,
            places: vec![remote, local],
            traced: false,
            tracer_missed: 0,
            tester_limited: false,
        };
        let mut sums = Sums::new();
        add(&mut sums, "c", "t", &d);
        let page = tables(&sums, "Runs");
        assert!(page.contains("<td>root@dut1:d0</td>"), "{page}");
        assert!(page.contains("<td>d1</td>"), "{page}");
        assert!(!page.contains("local:"), "{page}");
        // No tracer ran: 1 run from counters only, 0 missed events.
        assert!(
            page.contains("<td class=\"num\">1</td><td class=\"num\">0</td></tr>"),
            "{page}"
        );
    }

    #[test]
    fn the_tracers_misses_are_summed_over_the_runs() {
        let d = |missed| Drops {
            lost: 10,
            dut: 10,
            tester: 0,
            unexplained: 0,
            places: Vec::new(),
            traced: true,
            tracer_missed: missed,
            tester_limited: false,
        };
        let mut sums = Sums::new();
        add(&mut sums, "c", "t", &d(1200));
        add(&mut sums, "c", "t", &d(34));
        let page = tables(&sums, "Runs");
        assert!(
            page.contains("<th>Tracer missed</th></tr></thead>"),
            "{page}"
        );
        // 2 runs, none from counters only, 1,234 events missed.
        assert!(
            page.contains("<td class=\"num\">2</td><td class=\"num\">20</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"num\">0</td><td class=\"num\">1,234</td></tr>"),
            "{page}"
        );
    }
}
