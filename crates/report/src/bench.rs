//! `pktlab bench` output: what the campaign is, a line per run, then
//! ministat's comparison of the configurations (and the size sweep).

use pktlab_campaign::campaign::{reverse_path_note, Outcome};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::{RunRecord, RunResult};
use pktlab_campaign::runs::Runs;
use pktlab_campaign::summary::Cell;
use pktlab_engine::affinity::format_cpu_list;
use pktlab_loss::drops::{Drops, Place, Side};
use pktlab_trial::target::Target;
use serde_json::{json, Value};

use crate::tables::{ministat, sweep};
use crate::units::rate;

/// What the campaign is about, said before it starts.
pub fn header(c: &Plan, lab: &str, dir: &str) -> String {
    let traffic: Vec<String> = c
        .traffics
        .iter()
        .map(|t| {
            let speed = match t.rate_pps {
                Some(p) => rate(p, "pps"),
                None => "full speed".to_string(),
            };
            match &t.reverse {
                // Each direction at the rate asked for.
                Some(r) => format!(
                    "{} ({} -> {} and back {} -> {}, {}-byte frames at {speed} each way)",
                    t.name, t.src, t.dst, r.src, r.dst, t.sizes
                ),
                None => format!(
                    "{} ({} -> {}, {}-byte frames at {speed})",
                    t.name, t.src, t.dst, t.sizes
                ),
            }
        })
        .collect();
    let configs: Vec<&str> = c.configs.iter().map(|c| c.name.as_str()).collect();
    format!(
        "Campaign {} on {lab}: configurations {}; traffic {}; {} runs of {} s each, {} order; results in {dir}",
        c.name,
        configs.join(", "),
        traffic.join(", "),
        c.run.iterations,
        c.run.trial.duration.as_secs_f64(),
        c.run.order.name(),
    )
}

/// The warning every result of a virtual lab carries: its DUT shares the
/// generator's CPUs, so it measures the host rather than a router.
pub fn virtual_lab_warning(cpus: usize) -> String {
    format!(
        "note: this lab is virtual: the generator, the DUT and the receiver share this host's {cpus} CPU{}, \
         so the figures measure the whole host, not a DUT alone",
        if cpus == 1 { "" } else { "s" }
    )
}

/// The caveat of a built-in lab whose DUT has CPUs of its own (`dut` and
/// `tester` are CPU lists such as `1` and `0`).
pub fn isolated_lab_warning(dut: &str, tester: &str) -> String {
    format!(
        "note: this lab is virtual: the DUT forwards on CPUs {dut} of its own and the \
         generator and receiver run on CPUs {tester}, but all share this host's memory, caches \
         and kernel: the figures are those of a virtual DUT, not of a router's hardware"
    )
}

/// A line a campaign says as it opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opening {
    /// For its reader (stdout; not with `--json` or `--quiet`).
    Text(String),
    /// A caveat (stderr; not with `--json`).
    Warning(String),
}

/// What a `bench` campaign of `plan` on `target` says before its first
/// run (`dir`: its results folder; `clocks`: its hosts' clocks, if
/// remote; `cpus`: this host's CPU count).
pub fn opening(
    plan: &Plan,
    target: &Target,
    dir: &str,
    clocks: Option<String>,
    cpus: usize,
) -> Vec<Opening> {
    let mut out = vec![Opening::Text(header(plan, &target.describe(), dir))];
    out.extend(clocks.map(Opening::Text));
    if target.is_virtual() {
        out.push(Opening::Warning(
            match target.cpus.as_ref().filter(|p| !p.is_shared()) {
                Some(p) => isolated_lab_warning(
                    &format_cpu_list(&p.dut_cpus),
                    &format_cpu_list(&p.tester_cpus),
                ),
                None => virtual_lab_warning(cpus),
            },
        ));
    }
    if let Some(p) = &target.cpus {
        if let Some(notice) = p.shared_notice() {
            out.push(Opening::Warning(format!("pktlab: {notice}")));
        }
        out.push(Opening::Text(format!(
            "CPU plan {p}; generator {}",
            plan.run.io.name()
        )));
    }
    out.extend(reverse_path_note(plan, target).map(|n| Opening::Text(format!("note: {n}"))));
    out
}

/// `[3/10] nft-stateful inet4 #2`.
pub fn run_label(index: usize, of: usize, config: &str, traffic: &str, iteration: usize) -> String {
    format!("[{index}/{of}] {config} {traffic} #{iteration}")
}

/// `[3/10] nft-stateful inet4 #2: forwarded 318.57 Kpps, offered 318.58 Kpps, loss 0.000% (0 of 3185800)`.
pub fn run_line(label: &str, t: &RunResult) -> String {
    let mut line = format!(
        "{label}: forwarded {}, offered {}, loss {:.3}% ({} of {})",
        rate(t.forwarded_pps, "pps"),
        rate(t.offered_pps, "pps"),
        t.loss_ratio * 100.0,
        t.lost,
        t.tx.packets
    );
    if let (Some(r), true) = (t.requested_pps, t.generator_limited()) {
        // A generator that fell short measured itself, not the DUT.
        line += &format!(
            " (the generator fell short of the requested {})",
            rate(r, "pps")
        );
    }
    if t.rx.foreign > 0 {
        line += &format!(", {} foreign frames", t.rx.foreign);
    }
    line
}

/// The lines said when a run is done: its figures (and the DUT's backlog
/// drops, where the loss happened), then where its loss went (and what
/// its one-way latency across hosts is worth). A run both ways has a line
/// per direction and the total's line (their sum), each with its loss.
pub fn run_done_lines(label: &str, t: &RunResult) -> Vec<String> {
    let mut line = run_line(label, t);
    if let Some(n) = t.dut_backlog_drops.filter(|&n| n > 0) {
        line += &format!(", DUT backlog drops {n}");
    }
    let mut drops = match &t.drops {
        Some(d) => drops_line(d, t.tx.packets),
        None => "where the lost frames went was not recorded".into(),
    };
    if let (Some(l), Some(note)) = (&t.rx.latency_ns, &t.latency_note) {
        drops += &format!("\n  latency: median {:.1} µs, {note}", l.p50 as f64 / 1e3);
    }
    if t.directions.is_empty() {
        return vec![line, drops];
    }
    let mut lines = vec![line + ", both ways:"];
    for d in &t.directions {
        lines.push(direction_line(
            &d.name,
            d.forwarded_pps,
            d.offered_pps,
            &d.tx,
            &d.rx,
            &d.drops,
        ));
    }
    if let Some(total) = &t.drops {
        lines.push(direction_line(
            "total",
            t.forwarded_pps,
            t.offered_pps,
            &t.tx,
            &t.rx,
            total,
        ));
    }
    lines
}

/// One direction of a run both ways, or their total: `  forward:
/// forwarded 20.00 Kpps, offered 20.00 Kpps, sent 60000, received 60000,
/// lost 0 (0.00%)` and where the loss went.
pub fn direction_line(
    name: &str,
    forwarded_pps: f64,
    offered_pps: f64,
    tx: &pktlab_engine::tx::TxSummary,
    rx: &pktlab_engine::rx::RxSummary,
    drops: &Drops,
) -> String {
    format!(
        "  {name}: forwarded {}, offered {}, sent {}, received {}, {}",
        rate(forwarded_pps, "pps"),
        rate(offered_pps, "pps"),
        tx.packets,
        rx.packets - rx.foreign,
        drops_line(drops, tx.packets)
    )
}

/// One JSON line per finished run.
pub fn run_json(r: &RunRecord) -> Value {
    let mut v = serde_json::to_value(&r.result).expect("serialisable");
    v["type"] = json!("run");
    v["config"] = json!(r.header.config);
    v["traffic"] = json!(r.header.traffic);
    v["iteration"] = json!(r.header.iteration);
    v
}

/// The JSON line of a campaign's end (`--json`): the summary, the folder,
/// whether Ctrl-C stopped it.
pub fn closing_json(runs: &Runs, dir: &str, interrupted: bool) -> Value {
    let mut v = serde_json::to_value(&runs.summary).expect("the summary serialises");
    v["dir"] = json!(dir);
    v["interrupted"] = json!(interrupted);
    v
}

/// The end of a campaign: ministat's comparison per traffic profile, the
/// size sweep, and where everything is.
pub fn summary_text(c: &Plan, o: &Outcome, runs: &Runs, dir: &str) -> String {
    let s = &runs.summary;
    let mut out = String::new();
    if o.interrupted {
        out += &format!(
            "Interrupted: {} of {} runs finished; carry on with `pktlab bench --resume {dir}`.\n",
            s.runs_finished, s.runs_planned
        );
    }
    if s.runs_finished == 0 {
        out += "No run finished.\n";
        return out;
    }
    out += &ministat::text(c, &s.cells);
    if let Some(line) = kept_up_line(c, &s.cells) {
        out += &line;
        out.push('\n');
    }
    if !s.sweeps.is_empty() {
        out.push('\n');
        out += &sweep::text(&s.sweeps);
    }
    if !s.knob_sweeps.is_empty() {
        out.push('\n');
        out += &sweep::knob_text(&s.knob_sweeps);
    }
    out += &format!("Results: {dir}\n");
    out
}

/// A run at full speed whose DUT lost less than this share of the frames
/// kept up with the generator: it was never saturated.
const KEPT_UP_LOSS: f64 = 0.001;

/// The note for the cells whose every run went at full speed and lost
/// less than [`KEPT_UP_LOSS`]: their DUT forwarded what the generator
/// offered, so their figure is the generator's rate, a lower bound of the
/// DUT's, and comparing them compares the generator with itself.
pub fn kept_up_line(c: &Plan, cells: &[Cell]) -> Option<String> {
    let full_speed = |traffic: &str| {
        c.traffics
            .iter()
            .any(|t| t.name == traffic && t.rate_pps.is_none())
    };
    let kept_up: Vec<String> = cells
        .iter()
        .filter(|cell| !cell.values.is_empty() && full_speed(&cell.traffic))
        .filter(|cell| cell.max_loss_ratio < KEPT_UP_LOSS)
        .map(|cell| format!("{} {}", cell.config, cell.traffic))
        .collect();
    if kept_up.is_empty() {
        return None;
    }
    Some(format!(
        "note: at full speed the DUT lost less than {}% in every run of {}: it kept up with the \
         generator, so these figures are the generator's rate, lower bounds of the DUT's and not \
         its limit (a faster generator, or more generator threads, finds the limit)",
        KEPT_UP_LOSS * 100.0,
        kept_up.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(config: &str, traffic: &str, max_loss_ratio: f64) -> Cell {
        Cell {
            config: config.into(),
            traffic: traffic.into(),
            iterations: vec![1],
            values: vec![500_000.0],
            offered_values: vec![500_100.0],
            forwarded: None,
            offered: None,
            max_loss_ratio,
            directions: Vec::new(),
        }
    }

    #[test]
    fn a_dut_that_kept_up_at_full_speed_is_said_to_be_a_lower_bound() {
        let file = "[[config]]\nname = \"forwarding\"\n[[config]]\nname = \"rps\"\n[[config]]\nname = \"gro-off\"\n\
                    [[traffic]]\nname = \"fast\"\n[[traffic]]\nname = \"slow\"\nrate = \"100kpps\"\n";
        let plan = Plan::from_file(
            &pktlab_campaign::file::CampaignFile::parse(file).unwrap(),
            1,
        )
        .unwrap();
        // forwarding lost 0.05 % at full speed: kept up. rps lost 0.1 %
        // (not less than the bound) and gro-off 20 %: saturated. The fixed-rate traffic is
        // never flagged, whatever it lost.
        let cells = [
            cell("forwarding", "fast", 0.0005),
            cell("rps", "fast", 0.001),
            cell("gro-off", "fast", 0.2),
            cell("forwarding", "slow", 0.0),
        ];
        assert_eq!(
            kept_up_line(&plan, &cells).unwrap(),
            "note: at full speed the DUT lost less than 0.1% in every run of forwarding fast: it kept up \
             with the generator, so these figures are the generator's rate, lower bounds of the \
             DUT's and not its limit (a faster generator, or more generator threads, finds the limit)"
        );
        assert_eq!(kept_up_line(&plan, &cells[1..]), None);
    }

    #[test]
    fn labels() {
        assert_eq!(run_label(3, 10, "rps", "inet4", 2), "[3/10] rps inet4 #2");
        assert!(virtual_lab_warning(2).contains("2 CPUs"));
        assert!(virtual_lab_warning(1).contains("1 CPU,"));
        assert!(isolated_lab_warning("1", "0")
            .starts_with("note: this lab is virtual: the DUT forwards on CPUs 1 of its own and the generator and receiver run on CPUs 0,"));
    }
}

/// A share in percent with two significant figures or more: `100`,
/// `55`, `5.5`, `0.55`.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    let p = if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    };
    if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// A place and its share of `lost`: `DUT nft_do_chain NETFILTER_DROP 4000
/// (100%)`; a counter's place is named by its interface, with its host
/// when it is another one (`DUT root@dut1:d0 rx_dropped 10 (5.0%)`); a
/// place of no known side by its namespace and interface (`lab-dut d0
/// nft_do_chain NETFILTER_DROP 4000 (100%)`). A kernel drop reason that
/// the kernel's counters counted rather than the tracer says so: `DUT
/// enqueue_to_backlog CPU_BACKLOG 4000 (100%, counted)`.
pub(crate) fn place_text(p: &Place, lost: u64) -> String {
    let mut at = if p.location == "-" {
        p.iface.clone()
    } else {
        p.location.clone()
    };
    if p.host != "local" {
        at = format!("{}:{at}", p.host);
    }
    let side = match p.side {
        Side::Dut => "DUT".to_string(),
        Side::Tester => "tester".to_string(),
        // A counter's interface is in `at` already.
        Side::Unknown if p.location == "-" => p.netns.clone(),
        Side::Unknown => format!("{} {}", p.netns, p.iface),
    };
    let counted = if p.layer == "softnet" {
        ", counted"
    } else {
        ""
    };
    // XDP's places say so: their reasons are XDP's, not the kernel's.
    let layer = if p.layer == "xdp" { " xdp" } else { "" };
    format!(
        "{side} {at}{layer} {} {} ({}{counted})",
        p.reason,
        p.frames,
        percent(p.frames, lost)
    )
}

/// Where a run's loss went, one line:
/// `lost 4000 (0.55%): DUT nft_do_chain NETFILTER_DROP 4000 (100%)`.
pub fn drops_line(d: &Drops, sent: u64) -> String {
    let mut line = format!("lost {} ({})", d.lost, percent(d.lost, sent));
    if d.lost == 0 {
        return line;
    }
    let places: Vec<String> = d.places.iter().map(|p| place_text(p, d.lost)).collect();
    if !places.is_empty() {
        line += ": ";
        line += &places.join(", ");
    }
    if d.unexplained > 0 {
        line += &format!(
            "{}unexplained {} ({})",
            if places.is_empty() { ": " } else { ", " },
            d.unexplained,
            percent(d.unexplained, d.lost)
        );
        // More than 1% left over: the places above are not the whole story.
        if d.unexplained * 100 > d.lost {
            line += ", more than 1% of the loss unexplained";
        }
    }
    if !d.traced {
        line += " (counters only)";
    }
    if d.tester_limited {
        line += "; tester-limited: most of the loss is the tester's, not the DUT's";
    }
    line
}

#[cfg(test)]
mod drops_tests {
    use super::*;
    use pktlab_loss::drops::Place;

    fn place(side: Side, location: &str, reason: &str, frames: u64) -> Place {
        Place {
            side,
            host: "local".into(),
            netns: "n".into(),
            iface: "r0".into(),
            layer: "kernel".into(),
            reason: reason.into(),
            location: location.into(),
            frames,
        }
    }

    #[test]
    fn the_issue_example() {
        let d = Drops {
            lost: 4000,
            dut: 4000,
            tester: 0,
            unexplained: 0,
            places: vec![place(Side::Dut, "nft_do_chain", "NETFILTER_DROP", 4000)],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        // 4000 of 727273 sent is 0.550%.
        assert_eq!(
            drops_line(&d, 727_273),
            "lost 4000 (0.55%): DUT nft_do_chain NETFILTER_DROP 4000 (100%)"
        );
    }

    #[test]
    fn an_xdp_place_names_its_port_and_layer() {
        let xdp = |iface: &str, reason: &str, side, frames| Place {
            layer: "xdp".into(),
            iface: iface.into(),
            ..place(side, "-", reason, frames)
        };
        let d = Drops {
            lost: 3085,
            dut: 1234 + 1,
            tester: 1850,
            unexplained: 0,
            places: vec![
                xdp("d1", "xmit_refused", Side::Tester, 1850),
                xdp("d0", "cpu_queue_full", Side::Dut, 1234),
                xdp("d0", "redirect_error(ENETDOWN)", Side::Dut, 1),
            ],
            traced: true,
            tracer_missed: 0,
            tester_limited: true,
        };
        // 3085 of 10000 is 31%; 1850/3085 60%, 1234/3085 40%, 1/3085 0.032%.
        assert_eq!(
            drops_line(&d, 10_000),
            "lost 3085 (31%): tester d1 xdp xmit_refused 1850 (60%), DUT d0 xdp cpu_queue_full \
             1234 (40%), DUT d0 xdp redirect_error(ENETDOWN) 1 (0.03%); tester-limited: most of \
             the loss is the tester's, not the DUT's"
        );
    }

    #[test]
    fn a_counted_backlog_refusal_says_so() {
        let d0 = Place {
            layer: "softnet".into(),
            iface: "d0".into(),
            ..place(Side::Dut, "enqueue_to_backlog", "CPU_BACKLOG", 1_023_594)
        };
        let cpu = Place {
            layer: "softnet".into(),
            iface: "cpu 1".into(),
            ..place(Side::Dut, "-", "CPU_BACKLOG", 6)
        };
        let d = Drops {
            lost: 1_023_600,
            dut: 1_023_600,
            tester: 0,
            unexplained: 0,
            places: vec![d0, cpu],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        // 1023600 of 1916928 sent is 53.4%; 6 of 1023600 is 0.00059%.
        assert_eq!(
            drops_line(&d, 1_916_928),
            "lost 1023600 (53%): DUT enqueue_to_backlog CPU_BACKLOG 1023594 (100%, counted), \
             DUT cpu 1 CPU_BACKLOG 6 (0.00%, counted)"
        );
    }

    #[test]
    fn another_hosts_place_and_a_place_of_no_side_are_named() {
        let remote = Place {
            host: "root@dut1".into(),
            layer: "interface".into(),
            ..place(Side::Dut, "-", "rx_dropped", 50)
        };
        let unknown = Place {
            netns: "lab-dut".into(),
            iface: "d0".into(),
            ..place(Side::Unknown, "nft_do_chain", "NETFILTER_DROP", 150)
        };
        let ring = Place {
            netns: "lab-rcv".into(),
            ..place(Side::Unknown, "-", "ring_drops", 0)
        };
        let d = Drops {
            lost: 200,
            dut: 50,
            tester: 0,
            unexplained: 0,
            places: vec![remote, unknown],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        // 50 and 150 of 200: 25 % and 75 %.
        assert_eq!(
            drops_line(&d, 2000),
            "lost 200 (10%): DUT root@dut1:r0 rx_dropped 50 (25%), \
             lab-dut d0 nft_do_chain NETFILTER_DROP 150 (75%)"
        );
        assert_eq!(place_text(&ring, 200), "lab-rcv r0 ring_drops 0 (0.00%)");
    }

    #[test]
    fn unexplained_counters_only_and_tester_limited_are_said() {
        let d = Drops {
            lost: 200,
            dut: 10,
            tester: 150,
            unexplained: 40,
            places: vec![
                place(Side::Tester, "-", "ring_drops", 150),
                place(Side::Dut, "-", "tx_dropped", 10),
            ],
            traced: false,
            tracer_missed: 0,
            tester_limited: true,
        };
        assert_eq!(
            drops_line(&d, 1000),
            "lost 200 (20%): tester r0 ring_drops 150 (75%), DUT r0 tx_dropped 10 (5.0%), \
             unexplained 40 (20%), more than 1% of the loss unexplained (counters only); \
             tester-limited: most of the loss is the tester's, not the DUT's"
        );
        let none = Drops {
            lost: 0,
            dut: 0,
            tester: 0,
            unexplained: 0,
            places: vec![],
            traced: true,
            tracer_missed: 0,
            tester_limited: false,
        };
        assert_eq!(drops_line(&none, 1000), "lost 0 (0.00%)");
    }
}
