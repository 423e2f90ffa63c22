//! The sweep tables as text: a size sweep (the layout of the Ostinato
//! throughput table: Kpps and L1 Mbit/s offered and forwarded per size),
//! a knob sweep (forwarded pps per value of the knob, with the mean's
//! 95 % confidence interval, as netbenches draws them) and a knob sweep's
//! searches; and the knob sweeps' rows as CSV.

use pktlab_campaign::summary::{KnobSweepTable, SweepTable};
use pktlab_search::mlr::sweep::SearchSweepTable;
use serde::Serialize;

/// A goal's name: `NDR` for no loss, `PDR 0.5%` for a loss ratio of 0.005.
pub fn goal_name(loss_ratio: f64) -> String {
    if loss_ratio == 0.0 {
        "NDR".into()
    } else {
        format!("PDR {}%", pktlab_stats::format_g(loss_ratio * 100.0, 6))
    }
}

/// One knob sweep's searches: each goal's lower and upper bound per value.
pub fn search_table(t: &SearchSweepTable) -> String {
    let mut out = format!(
        "Sweep of {} on {} (each goal's bounds in pps, the median of the value's searches):\n",
        t.knob, t.traffic
    );
    let value_width = t
        .rows
        .iter()
        .map(|r| r.value.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let config_width = t
        .rows
        .iter()
        .map(|r| r.config.len())
        .max()
        .unwrap_or(0)
        .max(13);
    let goals: Vec<String> = t
        .rows
        .first()
        .map(|r| r.goals.iter().map(|g| goal_name(g.loss_ratio)).collect())
        .unwrap_or_default();
    let mut head = format!(
        "{:>vw$} | {:<cw$} | {:>8}",
        "Value",
        "Configuration",
        "Searches",
        vw = value_width,
        cw = config_width
    );
    for g in &goals {
        head += &format!(
            " | {:>14} | {:>14}",
            format!("{g} lower"),
            format!("{g} upper")
        );
    }
    out += &head;
    out.push('\n');
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    for r in &t.rows {
        let mut line = format!(
            "{:>vw$} | {:<cw$} | {:>8}",
            r.value,
            r.config,
            r.searches,
            vw = value_width,
            cw = config_width
        );
        for g in &r.goals {
            line += &format!(" | {:>14} | {:>14}", opt(g.lower_pps), opt(g.upper_pps));
        }
        out += &line;
        out.push('\n');
    }
    out
}

/// A row of a search sweep's `sweep.csv`: one goal at one value.
#[derive(Serialize)]
struct SearchCsvRow<'a> {
    knob: &'a str,
    traffic: &'a str,
    value: &'a str,
    config: &'a str,
    searches: usize,
    loss_ratio: f64,
    lower_pps: Option<f64>,
    conditional_throughput_pps: Option<f64>,
    upper_pps: Option<f64>,
}

/// The search sweep tables as one CSV, a row per goal, value and traffic.
pub fn search_csv(tables: &[SearchSweepTable]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for t in tables {
        for r in &t.rows {
            for g in &r.goals {
                w.serialize(SearchCsvRow {
                    knob: &t.knob,
                    traffic: &t.traffic,
                    value: &r.value,
                    config: &r.config,
                    searches: r.searches,
                    loss_ratio: g.loss_ratio,
                    lower_pps: g.lower_pps,
                    conditional_throughput_pps: g.conditional_throughput_pps,
                    upper_pps: g.upper_pps,
                })
                .expect("a CSV row serialises");
            }
        }
    }
    String::from_utf8(w.into_inner().expect("a Vec takes every byte")).expect("CSV of UTF-8")
}

/// Every knob sweep table, a blank line between two.
pub fn knob_text(tables: &[KnobSweepTable]) -> String {
    tables.iter().map(knob_table).collect::<Vec<_>>().join("\n")
}

/// One knob sweep table.
pub fn knob_table(t: &KnobSweepTable) -> String {
    let mut out = format!(
        "Sweep of {} on {} (forwarded pps: median and mean of the runs, the mean's 95 % confidence interval):\n",
        t.knob, t.traffic
    );
    let value_width = t
        .rows
        .iter()
        .map(|r| r.value.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let config_width = t
        .rows
        .iter()
        .map(|r| r.config.len())
        .max()
        .unwrap_or(0)
        .max(13);
    out += &format!(
        "{:>vw$} | {:<cw$} | {:>4} | {:>12} | {:>12} | {:>12} | {:>12} | {:>12} | {:>8}\n",
        "Value",
        "Configuration",
        "Runs",
        "Median",
        "Mean",
        "CI low",
        "CI high",
        "Offered",
        "Max loss",
        vw = value_width,
        cw = config_width
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    for r in &t.rows {
        out += &format!(
            "{:>vw$} | {:<cw$} | {:>4} | {:>12.0} | {:>12.0} | {:>12} | {:>12} | {:>12.0} | {:>7.3}%\n",
            r.value,
            r.config,
            r.runs,
            r.forwarded_median_pps,
            r.forwarded_mean_pps,
            opt(r.ci95_low_pps),
            opt(r.ci95_high_pps),
            r.offered_median_pps,
            r.max_loss_ratio * 100.0,
            vw = value_width,
            cw = config_width
        );
    }
    out
}

/// A row of `sweep.csv`; the header is the field names.
#[derive(Serialize)]
struct CsvRow<'a> {
    knob: &'a str,
    traffic: &'a str,
    value: &'a str,
    config: &'a str,
    runs: usize,
    forwarded_median_pps: f64,
    forwarded_mean_pps: f64,
    ci95_low_pps: Option<f64>,
    ci95_high_pps: Option<f64>,
    offered_median_pps: f64,
    max_loss_ratio: f64,
}

/// The knob sweep tables as one CSV, a row per value and traffic.
pub fn knob_csv(tables: &[KnobSweepTable]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for t in tables {
        for r in &t.rows {
            w.serialize(CsvRow {
                knob: &t.knob,
                traffic: &t.traffic,
                value: &r.value,
                config: &r.config,
                runs: r.runs,
                forwarded_median_pps: r.forwarded_median_pps,
                forwarded_mean_pps: r.forwarded_mean_pps,
                ci95_low_pps: r.ci95_low_pps,
                ci95_high_pps: r.ci95_high_pps,
                offered_median_pps: r.offered_median_pps,
                max_loss_ratio: r.max_loss_ratio,
            })
            .expect("a CSV row serialises");
        }
    }
    String::from_utf8(w.into_inner().expect("a Vec takes every byte")).expect("CSV of UTF-8")
}

/// Every sweep table, a blank line between two.
pub fn text(tables: &[SweepTable]) -> String {
    tables.iter().map(table).collect::<Vec<_>>().join("\n")
}

/// One sweep table.
pub fn table(t: &SweepTable) -> String {
    let mut out = format!(
        "Size sweep of {} with configuration {} (medians of the runs; L1 adds 20 bytes of preamble and gap per frame):\n",
        t.traffic, t.config
    );
    let line_rate = t.link_bps.is_some();
    let mut header = format!(
        "{:>6} | {:>12} | {:>14} | {:>15} | {:>17}",
        "Size", "Offered Kpps", "Forwarded Kpps", "Offered L1 Mbps", "Forwarded L1 Mbps"
    );
    if line_rate {
        header += &format!(" | {:>14}", "Line rate Kpps");
    }
    out += &header;
    out.push('\n');
    for r in &t.rows {
        let mut line = format!(
            "{:>6} | {:>12.2} | {:>14.2} | {:>15.2} | {:>17.2}",
            r.size, r.offered_kpps, r.forwarded_kpps, r.offered_l1_mbps, r.forwarded_l1_mbps
        );
        if let Some(l) = r.line_rate_kpps {
            line += &format!(" | {l:>14.2}");
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_campaign::summary::SweepRow;

    #[test]
    fn the_ostinato_layout() {
        // 755/630 Kpps at 64 bytes, 725/639 Kpps at 1518 bytes on 10 Gb/s.
        let row = |size: u16, off: f64, fwd: f64| SweepRow {
            size,
            runs: 1,
            offered_kpps: off,
            forwarded_kpps: fwd,
            offered_l1_mbps: off * (size as f64 + 20.0) * 8.0 / 1e3,
            forwarded_l1_mbps: fwd * (size as f64 + 20.0) * 8.0 / 1e3,
            line_rate_kpps: Some(1e10 / ((size as f64 + 20.0) * 8.0) / 1e3),
        };
        let t = SweepTable {
            config: "forwarding".into(),
            traffic: "inet4".into(),
            link_bps: Some(1e10),
            rows: vec![row(64, 755.0, 630.0), row(1518, 725.0, 639.0)],
        };
        assert_eq!(
            table(&t),
            "Size sweep of inet4 with configuration forwarding (medians of the runs; L1 adds 20 bytes of preamble and gap per frame):\n\
             \x20 Size | Offered Kpps | Forwarded Kpps | Offered L1 Mbps | Forwarded L1 Mbps | Line rate Kpps\n\
             \x20   64 |       755.00 |         630.00 |          507.36 |            423.36 |       14880.95\n\
             \x20 1518 |       725.00 |         639.00 |         8920.40 |           7862.26 |         812.74\n"
        );
        // Without a link speed, no line-rate column.
        let mut t = t;
        t.link_bps = None;
        t.rows.truncate(1);
        t.rows[0].line_rate_kpps = None;
        assert_eq!(
            table(&t).lines().nth(2).unwrap(),
            "    64 |       755.00 |         630.00 |          507.36 |            423.36"
        );
        assert_eq!(text(&[t.clone(), t]).matches("\n\nSize sweep").count(), 1);
    }

    fn knob_sweep() -> KnobSweepTable {
        use pktlab_campaign::summary::KnobSweepRow;
        KnobSweepTable {
            knob: "netdev_max_backlog".into(),
            label: "netdev_max_backlog".into(),
            traffic: "inet4".into(),
            numeric: true,
            rows: vec![
                KnobSweepRow {
                    value: "1000".into(),
                    config: "netdev_max_backlog-1000".into(),
                    runs: 3,
                    forwarded_median_pps: 500000.0,
                    forwarded_mean_pps: 499000.0,
                    ci95_low_pps: Some(495000.4),
                    ci95_high_pps: Some(502999.6),
                    offered_median_pps: 900000.0,
                    max_loss_ratio: 0.45,
                },
                KnobSweepRow {
                    value: "20000".into(),
                    config: "netdev_max_backlog-20000".into(),
                    runs: 1,
                    forwarded_median_pps: 600000.0,
                    forwarded_mean_pps: 600000.0,
                    ci95_low_pps: None,
                    ci95_high_pps: None,
                    offered_median_pps: 900000.0,
                    max_loss_ratio: 0.001234,
                },
            ],
        }
    }

    #[test]
    fn knob_sweep_table_and_csv() {
        let t = knob_sweep();
        assert_eq!(
            knob_table(&t),
            "Sweep of netdev_max_backlog on inet4 (forwarded pps: median and mean of the runs, the mean's 95 % confidence interval):\n\
             Value | Configuration            | Runs |       Median |         Mean |       CI low |      CI high |      Offered | Max loss\n\
             \x201000 | netdev_max_backlog-1000  |    3 |       500000 |       499000 |       495000 |       503000 |       900000 |  45.000%\n\
             20000 | netdev_max_backlog-20000 |    1 |       600000 |       600000 |            - |            - |       900000 |   0.123%\n"
        );
        assert_eq!(
            knob_csv(&[t]),
            "knob,traffic,value,config,runs,forwarded_median_pps,forwarded_mean_pps,ci95_low_pps,ci95_high_pps,offered_median_pps,max_loss_ratio\n\
             netdev_max_backlog,inet4,1000,netdev_max_backlog-1000,3,500000.0,499000.0,495000.4,502999.6,900000.0,0.45\n\
             netdev_max_backlog,inet4,20000,netdev_max_backlog-20000,1,600000.0,600000.0,,,900000.0,0.001234\n"
        );
    }
}
