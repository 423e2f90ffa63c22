//! `pktlab drops`: the drop tracer's places as text and JSON lines.

use pktlab_io::droptrace::NamedDrop;
use serde_json::{json, Value};

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

/// The run's summary.
pub fn summary_json(seconds: f64, places: &[NamedDrop]) -> Value {
    let total: u64 = places.iter().map(|p| p.frames).sum();
    json!({
        "type": "summary",
        "seconds": seconds,
        "places": places.iter().map(place_json).collect::<Vec<_>>(),
        "total": total,
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

/// The summary as text: the total, then each place with its share.
pub fn summary_text(seconds: f64, all: bool, places: &[NamedDrop]) -> String {
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
        let text = summary_text(2.0, false, &[place("dut", 3000), place("gen", 1000)]);
        assert_eq!(
            text,
            "4000 test frames dropped in 2.0s\n\
             \x20       3000 ( 75.0%)  dut d0 nf_hook_slow NETFILTER_DROP\n\
             \x20       1000 ( 25.0%)  gen d0 nf_hook_slow NETFILTER_DROP"
        );
        assert_eq!(summary_text(1.0, true, &[]), "0 frames dropped in 1.0s");
    }

    #[test]
    fn interval_text_is_a_rate() {
        let line = interval_text(3, 0.5, &[place("dut", 100)]);
        assert!(line.starts_with("    3          200  dut "), "{line}");
        assert!(line.ends_with(" NETFILTER_DROP"), "{line}");
        assert_eq!(interval_text(1, 1.0, &[]), "    1            0  no drops");
    }

    #[test]
    fn summary_json_has_the_issue_keys() {
        let v = summary_json(1.0, &[place("dut", 7)]);
        assert_eq!(v["type"], "summary");
        assert_eq!(v["total"], 7);
        assert_eq!(v["places"][0]["layer"], "kernel");
        assert_eq!(v["places"][0]["reason"], "NETFILTER_DROP");
        assert_eq!(v["places"][0]["frames"], 7);
    }
}
