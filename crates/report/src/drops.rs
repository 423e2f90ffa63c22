//! `pktlab drops`: the drop tracer's places as text and JSON lines; and
//! where a configuration's lost frames went over its runs (`pktlab
//! compare`, the report).

use pktlab_io::droptrace::{NamedDrop, BACKLOG_REASON};
use pktlab_lab::softnet::SoftnetCpu;
use pktlab_loss::drops::{LossSum, Place};
use serde_json::{json, Value};

use crate::bench::{percent, place_text};

/// A configuration's loss summed over its runs: a line with the sides,
/// then a line per place, most frames first:
///
/// ```text
///   seq2: 3 runs, lost 6000: DUT 5900 (98%), tester 0 (0.00%), unexplained 100 (1.7%)
///     DUT nft_do_chain NETFILTER_DROP 5900 (98%)
/// ```
pub fn loss_sum_text(name: &str, s: &LossSum) -> String {
    let runs = if s.runs == 1 { "run" } else { "runs" };
    let mut out = format!("  {name}: {} {runs}, lost {}", s.runs, s.lost);
    if s.lost > 0 {
        out += &format!(
            ": DUT {} ({}), tester {} ({}), unexplained {} ({})",
            s.dut,
            percent(s.dut, s.lost),
            s.tester,
            percent(s.tester, s.lost),
            s.unexplained,
            percent(s.unexplained, s.lost)
        );
    }
    if s.untraced > 0 {
        out += &format!(" ({} of them from counters only)", s.untraced);
    }
    if s.tester_limited > 0 {
        out += &format!(
            "; {} tester-limited (most of their loss is the tester's)",
            s.tester_limited
        );
    }
    if s.tracer_missed > 0 {
        out += &format!(
            "; the tracer missed {} kernel drop event{}",
            s.tracer_missed,
            if s.tracer_missed == 1 { "" } else { "s" }
        );
    }
    for p in &s.places {
        out += &format!("\n    {}", place_text(p, s.lost));
    }
    out
}

/// The kernel's drops of test frames on this host during a `gen` run,
/// one line: `dropped on this host: 2000 test frames: DUT ip_error
/// IP_INNOROUTES 2000 (100%)`, or `dropped on this host: 0 test frames`.
pub fn host_drops_line(places: &[Place]) -> String {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    let mut line = format!("dropped on this host: {total} test frames");
    if !places.is_empty() {
        let each: Vec<String> = places.iter().map(|p| place_text(p, total)).collect();
        line += ": ";
        line += &each.join(", ");
    }
    line
}

/// The same as `gen --json`'s summary's `drops`.
pub fn host_drops_json(places: &[Place]) -> Value {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    json!({"total": total, "places": places})
}

/// A place as JSON: the layer is always `kernel` (a tracer event).
pub fn place_json(p: &NamedDrop) -> Value {
    json!({
        "netns": p.netns,
        "iface": p.iface,
        "layer": "kernel",
        "reason": p.reason,
        "location": p.location,
        "frames": p.frames,
    })
}

/// The line that says the tracer runs (`--json`).
pub fn ready_json(all: bool, netns: Option<&str>) -> Value {
    json!({"type": "ready", "frames": if all { "all" } else { "test" }, "netns": netns})
}

/// One interval: frames per second by place.
pub fn interval_json(t: u64, seconds: f64, places: &[NamedDrop]) -> Value {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    json!({
        "type": "interval",
        "t": t,
        "seconds": seconds,
        "places": places.iter().map(place_json).collect::<Vec<_>>(),
        "total": total,
    })
}

/// The run's summary: the traced places (test frames), and what the
/// kernel's own counters counted meanwhile (`counted`: each CPU whose
/// backlog refused frames, of any kind, from softnet's `dropped`).
pub fn summary_json(seconds: f64, places: &[NamedDrop], backlogs: &[SoftnetCpu]) -> Value {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    let counted: Vec<Value> = backlogs
        .iter()
        .filter(|c| c.dropped > 0)
        .map(|c| {
            json!({"layer": "softnet", "cpu": c.cpu, "reason": BACKLOG_REASON, "frames": c.dropped})
        })
        .collect();
    json!({
        "type": "summary",
        "seconds": seconds,
        "places": places.iter().map(place_json).collect::<Vec<_>>(),
        "total": total,
        "counted": counted,
    })
}

/// The header of the text lines.
pub fn header() -> String {
    format!(
        "{:>5} {:>12}  {:<16} {:<10} {:<24} reason",
        "t", "frames/s", "netns", "iface", "location"
    )
}

/// One interval as text: one line per place (rate over `seconds`), or
/// one line saying nothing was dropped.
pub fn interval_text(t: u64, seconds: f64, places: &[NamedDrop]) -> String {
    if places.is_empty() {
        return format!("{t:>5} {:>12}  no drops", 0);
    }
    places
        .iter()
        .map(|p| {
            let rate = if seconds > 0.0 {
                p.frames as f64 / seconds
            } else {
                0.0
            };
            format!(
                "{t:>5} {:>12.0}  {:<16} {:<10} {:<24} {}",
                rate, p.netns, p.iface, p.location, p.reason
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The summary as text: the total, then each place with its share (all
/// traced), then the CPUs' backlog refusals the kernel counted meanwhile
/// (of every frame, test frames or not), if any.
pub fn summary_text(
    seconds: f64,
    all: bool,
    places: &[NamedDrop],
    backlogs: &[SoftnetCpu],
) -> String {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    let what = if all { "frames" } else { "test frames" };
    let mut out = format!("{total} {what} dropped in {seconds:.1}s");
    for p in places {
        let share = if total > 0 {
            100.0 * p.frames as f64 / total as f64
        } else {
            0.0
        };
        out.push_str(&format!(
            "\n  {:>10} ({share:5.1}%)  {} {} {} {}",
            p.frames, p.netns, p.iface, p.location, p.reason
        ));
    }
    let refused: Vec<String> = backlogs
        .iter()
        .filter(|c| c.dropped > 0)
        .map(|c| format!("CPU {} {}", c.cpu, c.dropped))
        .collect();
    if !refused.is_empty() {
        out.push_str(&format!(
            "\ncounted by the kernel meanwhile (softnet dropped, frames of any kind): \
             {BACKLOG_REASON} {}",
            refused.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(netns: &str, frames: u64) -> NamedDrop {
        NamedDrop {
            netns: netns.into(),
            iface: "d0".into(),
            reason: "NETFILTER_DROP".into(),
            location: "nf_hook_slow".into(),
            frames,
        }
    }

    #[test]
    fn summary_text_gives_shares() {
        let text = summary_text(2.0, false, &[place("dut", 3000), place("gen", 1000)], &[]);
        assert_eq!(
            text,
            "4000 test frames dropped in 2.0s\n\
             \x20       3000 ( 75.0%)  dut d0 nf_hook_slow NETFILTER_DROP\n\
             \x20       1000 ( 25.0%)  gen d0 nf_hook_slow NETFILTER_DROP"
        );
        assert_eq!(
            summary_text(1.0, true, &[], &[]),
            "0 frames dropped in 1.0s"
        );
        // The backlogs' refusals the kernel counted, CPU by CPU.
        let cpu = |cpu, dropped| SoftnetCpu {
            cpu,
            processed: 0,
            dropped,
            time_squeeze: 0,
        };
        assert_eq!(
            summary_text(1.0, false, &[], &[cpu(0, 0), cpu(1, 6167), cpu(3, 2)]),
            "0 test frames dropped in 1.0s\n\
             counted by the kernel meanwhile (softnet dropped, frames of any kind): \
             CPU_BACKLOG CPU 1 6167, CPU 3 2"
        );
    }

    #[test]
    fn interval_text_is_a_rate() {
        let line = interval_text(3, 0.5, &[place("dut", 100)]);
        assert!(line.starts_with("    3          200  dut "), "{line}");
        assert!(line.ends_with(" NETFILTER_DROP"), "{line}");
        assert_eq!(interval_text(1, 1.0, &[]), "    1            0  no drops");
    }

    #[test]
    fn a_configurations_loss_over_its_runs() {
        use pktlab_loss::drops::{Place, Side};
        let nft = Place {
            side: Side::Dut,
            host: "local".into(),
            netns: "lab-dut".into(),
            iface: "d0".into(),
            layer: "kernel".into(),
            reason: "NETFILTER_DROP".into(),
            location: "nft_do_chain".into(),
            frames: 5900,
        };
        let ring = Place {
            side: Side::Tester,
            netns: "lab-rcv".into(),
            iface: "r0".into(),
            layer: "ring".into(),
            reason: "ring_drops".into(),
            location: "-".into(),
            frames: 60,
            ..nft.clone()
        };
        // 6000 lost over 3 runs: nft 5900 (98.3 %), the ring 60 (1.0 %),
        // 40 unexplained (0.67 %).
        let s = LossSum {
            runs: 3,
            untraced: 1,
            lost: 6000,
            dut: 5900,
            tester: 60,
            unexplained: 40,
            places: vec![nft, ring],
            tester_limited: 0,
            tracer_missed: 0,
        };
        assert_eq!(
            loss_sum_text("seq2", &s),
            "  seq2: 3 runs, lost 6000: DUT 5900 (98%), tester 60 (1.0%), unexplained 40 (0.67%) \
             (1 of them from counters only)\n    \
             DUT nft_do_chain NETFILTER_DROP 5900 (98%)\n    \
             tester r0 ring_drops 60 (1.0%)"
        );
        let none = LossSum {
            runs: 1,
            ..LossSum::default()
        };
        assert_eq!(
            loss_sum_text("forwarding", &none),
            "  forwarding: 1 run, lost 0"
        );
        let limited = LossSum {
            runs: 2,
            lost: 10,
            tester: 10,
            tester_limited: 2,
            ..LossSum::default()
        };
        assert_eq!(
            loss_sum_text("x", &limited),
            "  x: 2 runs, lost 10: DUT 0 (0.00%), tester 10 (100%), unexplained 0 (0.00%); \
             2 tester-limited (most of their loss is the tester's)"
        );
        let missed = |n| LossSum {
            runs: 1,
            lost: 10,
            dut: 7,
            unexplained: 3,
            tracer_missed: n,
            ..LossSum::default()
        };
        assert_eq!(
            loss_sum_text("y", &missed(3)),
            "  y: 1 run, lost 10: DUT 7 (70%), tester 0 (0.00%), unexplained 3 (30%); \
             the tracer missed 3 kernel drop events"
        );
        assert!(loss_sum_text("y", &missed(1)).ends_with("; the tracer missed 1 kernel drop event"));
    }

    #[test]
    fn a_generators_drops_on_this_host() {
        use pktlab_loss::drops::Side;
        let blackhole = Place {
            side: Side::Dut,
            host: "local".into(),
            netns: "lab-dut".into(),
            iface: "d0".into(),
            layer: "kernel".into(),
            reason: "IP_INNOROUTES".into(),
            location: "ip_error".into(),
            frames: 1500,
        };
        let elsewhere = Place {
            side: Side::Unknown,
            netns: "other".into(),
            iface: "x1".into(),
            frames: 500,
            ..blackhole.clone()
        };
        // 1500 and 500 of 2000: 75 % and 25 %.
        assert_eq!(
            host_drops_line(&[blackhole.clone(), elsewhere.clone()]),
            "dropped on this host: 2000 test frames: DUT ip_error IP_INNOROUTES 1500 (75%), \
             other x1 ip_error IP_INNOROUTES 500 (25%)"
        );
        assert_eq!(host_drops_line(&[]), "dropped on this host: 0 test frames");
        let v = host_drops_json(&[blackhole]);
        assert_eq!(v["total"], 1500);
        assert_eq!(v["places"][0]["side"], "dut");
        assert_eq!(v["places"][0]["location"], "ip_error");
        assert_eq!(v["places"][0]["frames"], 1500);
        assert_eq!(host_drops_json(&[]), json!({"total": 0, "places": []}));
    }

    #[test]
    fn summary_json_has_the_issue_keys() {
        let backlog = SoftnetCpu {
            cpu: 1,
            processed: 9,
            dropped: 4,
            time_squeeze: 0,
        };
        let v = summary_json(1.0, &[place("dut", 7)], &[backlog]);
        assert_eq!(v["type"], "summary");
        assert_eq!(v["total"], 7);
        assert_eq!(v["places"][0]["layer"], "kernel");
        assert_eq!(v["places"][0]["reason"], "NETFILTER_DROP");
        assert_eq!(v["places"][0]["frames"], 7);
        assert_eq!(
            v["counted"],
            json!([{"layer": "softnet", "cpu": 1, "reason": "CPU_BACKLOG", "frames": 4}])
        );
        let none = SoftnetCpu {
            dropped: 0,
            ..backlog
        };
        assert_eq!(summary_json(1.0, &[], &[none])["counted"], json!([]));
    }
}
