//! `pktlab lab`'s text: what `up` did, and what `check` found.

use pktlab_campaign::lab::LabCheck;
use pktlab_engine::affinity::format_cpu_list;
use pktlab_lab::dutroute::Routed;
use pktlab_lab::mac::format_mac;
use pktlab_lab::{BuiltinLab, CpuPlan, UpOutcome};

/// Problems of a repaired lab shown at most.
const SHOWN: usize = 5;

/// What `lab up` did: nothing, a new CPU plan (`was`: the plan before, if
/// pktlab set it), or a lab built or repaired (`problems`: what was
/// wrong), with its interfaces and how to send on it.
pub fn up_text(
    lab: &BuiltinLab,
    outcome: UpOutcome,
    cpus: &CpuPlan,
    was: Option<String>,
    problems: &[String],
) -> String {
    let prefix = lab.prefix();
    let mut out = match outcome {
        UpOutcome::AlreadyUp => return format!("lab {prefix} is already up; nothing changed\n"),
        UpOutcome::CpusApplied => {
            let was = was.unwrap_or_else(|| "masks set by hand".into());
            return format!(
                "lab {prefix} was up with another CPU plan ({was}); applied CPU plan {cpus}\n"
            );
        }
        UpOutcome::Created => format!("lab {prefix} is up:\n"),
        UpOutcome::Repaired => {
            let mut out = format!("lab {prefix} was incomplete and has been repaired:\n");
            for p in problems.iter().take(SHOWN) {
                out += &format!("  was: {p}\n");
            }
            if problems.len() > SHOWN {
                out += &format!("  was: ... and {} more\n", problems.len() - SHOWN);
            }
            out
        }
    };
    for i in lab.ifaces() {
        out += &format!(
            "  {:<width$}  {}  {}  {}  {}\n",
            i.ns,
            i.name,
            format_mac(i.mac),
            i.ipv4_cidr(),
            i.ipv6_cidr(),
            width = lab.dut_ns().len()
        );
    }
    out += &format!("  CPU plan {cpus}; GRO on d0 (for gen --io xdp)");
    if !cpus.is_shared() {
        out += &format!(
            "; r0's NAPI in threads on CPUs {} (for recv --io xdp)",
            format_cpu_list(&cpus.tester_cpus)
        );
    }
    out += "\n";
    let q = lab.spec().queues;
    out + &format!(
        "  {q} queue{} per interface; to generate: ip netns exec {} pktlab gen -i {} -D {}\n",
        if q == 1 { "" } else { "s" },
        lab.gen_ns(),
        lab.gen_if(),
        format_mac(lab.dut_in_mac()),
    )
}

/// What `lab check` found, ending with the verdict.
pub fn check_text(c: &LabCheck) -> String {
    let mut out = format!("lab {}\n", c.lab);
    for line in &c.ports {
        out += &format!("  {line}\n");
    }
    out += &format!("  DUT: commands run {}\n", c.dut_runner);
    if let Some(uname) = &c.dut_uname {
        out += &format!("  DUT: {uname}\n");
    }
    for (addr, route) in &c.routes {
        match route {
            Routed::Out { dev, via } => {
                let via = via
                    .as_ref()
                    .map(|v| format!(" via {v}"))
                    .unwrap_or_default();
                out += &format!("  DUT route: {addr} out of {dev}{via}\n");
            }
            Routed::Problem(p) => out += &format!("  problem: {p}\n"),
        }
    }
    if let Some(clocks) = &c.clocks {
        out += &format!("  clocks: {clocks}\n");
    }
    match c.problems() {
        0 => out + "lab OK: no test traffic was sent\n",
        n => {
            out + &format!(
                "lab NOT OK: {n} problem{}; no test traffic was sent\n",
                if n == 1 { "" } else { "s" }
            )
        }
    }
}
