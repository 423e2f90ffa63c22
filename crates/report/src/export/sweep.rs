//! `sweep.txt`: a size sweep as a table (the layout of the Ostinato
//! throughput table: Kpps and L1 Mbit/s offered and forwarded per size).

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Exporter, Finished};
use pktlab_campaign::summary::SweepTable;

/// Its name in the results folder.
pub const FILE: &str = "sweep.txt";

pub struct Sweep;

impl Exporter<Runs> for Sweep {
    fn file_name(&self) -> &'static str {
        FILE
    }

    /// Nothing for a campaign without a sweep.
    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        (!f.plan.sweeps.is_empty()).then(|| text(&f.results.summary.sweeps))
    }
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
}
