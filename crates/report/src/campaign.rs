//! What every campaign shows the same way, `bench` or `rfc2544`: what
//! opening it did to the lab and the lock, and how it ended.

use pktlab_campaign::campaign::Outcome;
use pktlab_lab::UpOutcome;

/// The line saying what opening the campaign did to the built-in lab
/// `prefix`, if it did anything worth a line. The lab outlives the
/// campaign, as a bench-lab does, so that the next campaign and `pktlab
/// lab status` find it.
pub fn lab_up_line(prefix: &str, outcome: UpOutcome) -> Option<String> {
    match outcome {
        UpOutcome::Created => {
            let down = if prefix == pktlab_lab::DEFAULT_PREFIX {
                "pktlab lab down".to_string()
            } else {
                format!("pktlab lab down --prefix {prefix}")
            };
            Some(format!(
                "Built lab {prefix}; it stays up after the campaign ({down} removes it)."
            ))
        }
        UpOutcome::Repaired => Some(format!("Repaired lab {prefix}.")),
        UpOutcome::CpusApplied | UpOutcome::AlreadyUp => None,
    }
}

/// The warning of a lock taken over from a campaign that died.
pub fn lock_taken_line(what: &str, pid: u32, dir: &str) -> String {
    format!(
        "pktlab: {what}: took over the lock left by pid {pid} (results folder {dir}), which ended without releasing it"
    )
}

/// Why a campaign that ran to its end failed: some of its runs (`what`:
/// "runs", "searches") failed; `command` with `--resume dir` runs them
/// again.
pub fn failed_line(o: &Outcome, what: &str, command: &str, dir: &str) -> Option<String> {
    (o.failed > 0).then(|| {
        format!(
            "{} of {} {what} failed and were skipped; pktlab {command} --resume {dir} runs them again",
            o.failed, o.planned
        )
    })
}

/// `1m20s`, `45s`.
pub fn human(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
