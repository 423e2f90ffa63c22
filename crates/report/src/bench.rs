//! `pktlab bench` output: a line per run, then ministat's summary.

use pktlab_bench::series::SeriesResult;
use pktlab_bench::traffic::Traffic;
use pktlab_bench::trial::{TrialResult, TrialSettings};
use pktlab_stats::ministat::{render, Dataset, RenderOptions};
use serde_json::{json, Value};

use crate::units::rate;

/// What the series is about, said before it starts.
pub fn header(lab: &str, traffic: &Traffic, settings: &TrialSettings, iterations: usize) -> String {
    let speed = match traffic.rate_pps {
        Some(p) => rate(p, "pps"),
        None => "full speed".to_string(),
    };
    format!(
        "pktlab bench on lab {lab}: {} ({} -> {}), {}-byte frames at {speed}, {iterations} runs of {} s",
        traffic.name,
        traffic.src,
        traffic.dst,
        traffic.sizes,
        settings.duration.as_secs_f64()
    )
}

/// The warning every result of a virtual lab carries (DESIGN.md,
/// "Measuring honestly").
pub fn virtual_lab_warning(cpus: usize) -> String {
    format!(
        "note: this lab is virtual: the generator, the DUT and the receiver share this host's {cpus} CPU{}, \
         so the figures measure the whole host, not a DUT alone",
        if cpus == 1 { "" } else { "s" }
    )
}

/// `run 2/5: forwarded 318.57 Kpps, offered 318.58 Kpps, loss 0.000% (0 of 3185800)`.
pub fn run_line(iteration: usize, of: usize, t: &TrialResult) -> String {
    let mut line = format!(
        "run {iteration}/{of}: forwarded {}, offered {}, loss {:.3}% ({} of {})",
        rate(t.forwarded_pps, "pps"),
        rate(t.offered_pps, "pps"),
        t.loss_ratio * 100.0,
        t.lost,
        t.tx.packets
    );
    if t.rx.foreign > 0 {
        line += &format!(", {} foreign frames", t.rx.foreign);
    }
    line
}

pub fn run_json(iteration: usize, t: &TrialResult) -> Value {
    let mut v = serde_json::to_value(t).expect("serialisable");
    v["type"] = json!("run");
    v["iteration"] = json!(iteration);
    v
}

/// ministat's view of the forwarded rates of the series (legend, plot and
/// table), as BSDRP users read it.
pub fn summary_text(s: &SeriesResult) -> String {
    let values: Vec<f64> = s.trials.iter().map(|t| t.forwarded_pps).collect();
    let mut out = String::new();
    if s.interrupted {
        out += &format!("Interrupted after {} finished runs.\n", s.trials.len());
    }
    if values.is_empty() {
        out += "No run finished.\n";
        return out;
    }
    out += &format!("Forwarded packets per second ({}):\n", s.traffic.name);
    let ds = Dataset {
        name: format!("{}.pps", s.traffic.name),
        values,
    };
    out += &render(&[ds], &RenderOptions::default());
    out
}

pub fn summary_json(s: &SeriesResult) -> Value {
    json!({
        "type": "summary",
        "traffic": s.traffic,
        "settings": s.settings,
        "runs": s.trials.len(),
        "interrupted": s.interrupted,
        "forwarded_pps": s.forwarded,
        "offered_pps": s.offered,
        "values": s.trials.iter().map(|t| t.forwarded_pps).collect::<Vec<_>>(),
    })
}
