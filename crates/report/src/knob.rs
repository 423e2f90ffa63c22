//! The hidden `pktlab knob`'s text: what XDP dropped for a while, a fast
//! path's counters, the host settings restored.

use pktlab_io::fastpath::FastPathStats;
use pktlab_io::xdpdrops::NamedXdpDrop;
use pktlab_lab::knobs::host::Restored;
use serde_json::json;

/// `knob xdp-drops`: the frames XDP dropped in `secs`, by place.
pub fn xdp_drops_text(total: u64, secs: u64, places: &[NamedXdpDrop]) -> String {
    let mut text = format!("XDP dropped {total} frames in {secs} s\n");
    for p in places {
        text += &format!(
            "  {:>12}  {} {} (peer {}) {}: {} [{}]\n",
            p.frames,
            p.netns,
            p.iface,
            p.peer,
            p.cause.name(),
            p.error,
            p.detail
        );
    }
    text
}

/// [`xdp_drops_text`] as one JSON line.
pub fn xdp_drops_json(total: u64, secs: u64, places: &[NamedXdpDrop]) -> String {
    format!(
        "{}\n",
        json!({ "seconds": secs, "total": total, "places": places })
    )
}

/// `knob stats`: the counters of the fast path `program` on `port`.
pub fn fastpath_stats_text(port: &str, program: &str, s: &FastPathStats) -> String {
    let mut text = format!(
        "{port} {program}: frames {}, forwarded {}, to the stack {} (not IP {}, TTL expired {}, malformed {}, port not in the map {}), redirect failed {}",
        s.frames, s.forwarded, s.to_stack, s.not_ip, s.ttl_expired, s.malformed, s.no_port, s.redirect_failed
    );
    if s.steered > 0 || s.steer_failed > 0 {
        text += &format!(", steered {}, steer failed {}", s.steered, s.steer_failed);
    }
    let fib: Vec<String> = s.fib.iter().map(|(n, c)| format!("{n} {c}")).collect();
    text += &format!(
        "; FIB: {}\n",
        if fib.is_empty() {
            "-".into()
        } else {
            fib.join(", ")
        }
    );
    text
}

/// [`fastpath_stats_text`] as one JSON line.
pub fn fastpath_stats_json(port: &str, program: &str, s: &FastPathStats) -> String {
    format!(
        "{}\n",
        json!({ "port": port, "program": program, "stats": s })
    )
}

/// `knob host-sysctl restore-orphans`: a line per setting restored.
pub fn restored_text(restored: &[Restored]) -> String {
    restored
        .iter()
        .map(|r| format!("restored {} to {} (was {})\n", r.key, r.value, r.was))
        .collect()
}
