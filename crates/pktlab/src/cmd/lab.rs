//! `pktlab lab up|down|status`: the built-in namespace lab.

use pktlab_campaign::plan::{LabChoice, Plan};
use pktlab_lab::dutroute::{self, Routed};
use pktlab_lab::mac::format_mac;
use pktlab_lab::{BuiltinLab, CpuPlan, LabSpec, UpOutcome, DEFAULT_PREFIX};

use crate::cmd::common;

#[derive(clap::Args)]
#[command(
    after_long_help = "The lab follows BSDRP's forwarding-lab diagram:\n\n  \
    [gen] g0 ---- d0 [dut] d1 ---- r0 [rcv]\n  \
    g0 198.18.0.201/24  2001:2::201/64\n  \
    d0 198.18.0.203/24  2001:2::203/64\n  \
    d1 198.19.0.203/24  2001:2:0:8000::203/64\n  \
    r0 198.19.0.201/24  2001:2:0:8000::201/64\n\n\
    The DUT routes 198.19.0.0/16 and 2001:2:0:8000::/49 to static next hops (.208) that map \
    to r0's MAC, so traffic to the lab ranges (198.19.10.1-100, 2001:2:0:8000::1-64) reaches \
    the receiver with no ARP or ND, and nothing answers it. MACs are fixed per prefix."
)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Build the lab; a complete lab is left alone, a partial one is repaired
    Up(UpArgs),
    /// Remove the lab's namespaces and everything in them
    Down(PrefixArg),
    /// Show the namespaces, interfaces, MACs, addresses, routes and counters
    Status(StatusArgs),
    /// Check a campaign's lab of interfaces (hosts over ssh included)
    /// without sending test traffic: reachability, logins, pktlab on the
    /// hosts, interfaces, MACs, MTU and link state, the DUT's commands, and
    /// that the DUT routes the traffic's destinations out of its port
    /// towards the receiver (`ip route get` of each range's first and last
    /// address); one line per problem, exit 1 when there is one
    Check(CheckArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Campaign file (TOML) whose [lab] is checked
    #[arg(short = 'f', long = "campaign", value_name = "FILE")]
    campaign: std::path::PathBuf,
}

#[derive(clap::Args)]
struct PrefixArg {
    /// Namespace prefix: the lab is <P>-gen, <P>-dut and <P>-rcv
    #[arg(long, value_name = "P", default_value = DEFAULT_PREFIX)]
    prefix: String,
}

#[derive(clap::Args)]
struct UpArgs {
    #[command(flatten)]
    prefix: PrefixArg,
    /// TX and RX queues of every veth (1 to 64); a lab with another count is rebuilt
    #[arg(long, value_name = "N", default_value_t = 1)]
    queues: u16,
    /// CPUs that do the DUT's forwarding (RPS/XPS masks on d0 and d1); the
    /// generator and receiver get the others [default: the last CPU, or
    /// the last quarter from 8 CPUs on; shared mode with one CPU]; all: shared
    /// mode (no steering), for comparison
    #[arg(long, value_name = "LIST")]
    dut_cpus: Option<String>,
}

#[derive(clap::Args)]
struct StatusArgs {
    #[command(flatten)]
    prefix: PrefixArg,
    /// Print one JSON object instead of text
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.action {
        Action::Up(a) => up(a),
        Action::Down(a) => down(a),
        Action::Status(a) => status(a),
        Action::Check(a) => check(a),
    }
}

fn lab(prefix: String, queues: u16) -> anyhow::Result<BuiltinLab> {
    Ok(BuiltinLab::new(LabSpec {
        prefix,
        queues,
        cpus: None,
    })?)
}

fn up(args: UpArgs) -> anyhow::Result<()> {
    let cpus = CpuPlan::for_this_process(args.dut_cpus.as_deref())?;
    let lab = BuiltinLab::new(LabSpec {
        prefix: args.prefix.prefix,
        queues: args.queues,
        cpus: Some(cpus.clone()),
    })?;
    if let Some(notice) = cpus.shared_notice() {
        eprintln!("pktlab: {notice}");
    }
    // Only to say why a rebuild happens; `up` decides on its own (and says
    // when root is missing).
    let problems = lab.problems().unwrap_or_default();
    let was = lab.cpu_status().ok().flatten();
    let outcome = lab.up()?;
    let prefix = lab.prefix();
    let mut out = String::new();
    match outcome {
        UpOutcome::AlreadyUp => {
            return common::write_stdout(&format!("lab {prefix} is already up; nothing changed\n"));
        }
        UpOutcome::CpusApplied => {
            let was = match was.and_then(|w| w.plan) {
                Some(p) => p.to_string(),
                None => "masks set by hand".into(),
            };
            return common::write_stdout(&format!(
                "lab {prefix} was up with another CPU plan ({was}); applied CPU plan {cpus}\n"
            ));
        }
        UpOutcome::Created => out += &format!("lab {prefix} is up:\n"),
        UpOutcome::Repaired => {
            out += &format!("lab {prefix} was incomplete and has been repaired:\n");
            const SHOWN: usize = 5;
            for p in problems.iter().take(SHOWN) {
                out += &format!("  was: {p}\n");
            }
            if problems.len() > SHOWN {
                out += &format!("  was: ... and {} more\n", problems.len() - SHOWN);
            }
        }
    }
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
    out += &format!("  CPU plan {cpus}; GRO on d0 (for gen --io xdp)\n");
    let q = lab.spec().queues;
    out += &format!(
        "  {q} queue{} per interface; to generate: ip netns exec {} pktlab gen -i {} -D {}\n",
        if q == 1 { "" } else { "s" },
        lab.gen_ns(),
        lab.gen_if(),
        format_mac(lab.dut_in_mac()),
    );
    common::write_stdout(&out)
}

fn down(args: PrefixArg) -> anyhow::Result<()> {
    // The queue count does not matter for removing.
    let lab = lab(args.prefix, 1)?;
    lab.down()?;
    common::write_stdout(&format!("lab {} is down\n", lab.prefix()))
}

fn status(args: StatusArgs) -> anyhow::Result<()> {
    let lab = lab(args.prefix.prefix, 1)?;
    let status = lab.status()?;
    if args.json {
        common::write_stdout(&format!("{}\n", serde_json::to_string(&status)?))
    } else {
        common::write_stdout(&status.to_string())
    }
}

fn check(args: CheckArgs) -> anyhow::Result<()> {
    let file = pktlab_campaign::flags::campaign_file_at(&args.campaign)?;
    let cpus = pktlab_lab::cpuload::cpu_count()?;
    let plan = Plan::from_file(&file, cpus)?;
    let LabChoice::Interfaces { lab, .. } = &plan.lab else {
        return Err(crate::error::usage(
            "pktlab lab check is for kind = \"interfaces\" labs: `pktlab lab status` shows the built-in one",
        ));
    };
    // Reaches every host and probes its port: the first problem is the
    // error, one line naming the host.
    let (target, _) = pktlab_campaign::lab::lab_target(&plan)?;
    let mut out = format!("lab {}\n", target.describe());
    for line in target.port_lines()? {
        out += &format!("  {line}\n");
    }
    target.dut.runner.run("true")?;
    out += &format!("  DUT: commands run {}\n", target.dut.runner.describe());
    if let Some(uname) = target.dut_uname() {
        out += &format!("  DUT: {uname}\n");
    }
    let mut problems = Vec::new();
    let want = lab.dut_ifaces.get(1).map(String::as_str);
    for addr in dutroute::ends(&destination_ranges(&plan)?) {
        match dutroute::route_of(&target.dut.runner, addr, want) {
            Routed::Out { dev, via } => {
                let via = via.map(|v| format!(" via {v}")).unwrap_or_default();
                out += &format!("  DUT route: {addr} out of {dev}{via}\n");
            }
            Routed::Problem(p) => {
                out += &format!("  problem: {p}\n");
                problems.push(p);
            }
        }
    }
    if let Some(clocks) = target.clocks() {
        out += &format!("  clocks: {}\n", clocks.latency);
    }
    if problems.is_empty() {
        out += "lab OK: no test traffic was sent\n";
        return common::write_stdout(&out);
    }
    out += &format!(
        "lab NOT OK: {} problem{}; no test traffic was sent\n",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    common::write_stdout(&out)?;
    Err(crate::error::Exit(1).into())
}

/// The first and last address of every traffic profile's destinations.
fn destination_ranges(plan: &Plan) -> anyhow::Result<Vec<(std::net::IpAddr, std::net::IpAddr)>> {
    let mut out = Vec::new();
    for t in &plan.traffics {
        let r: pktlab_wire::range::EndpointRange = t.dst.parse()?;
        out.push((r.addrs.start(), r.addrs.end()));
    }
    Ok(out)
}
