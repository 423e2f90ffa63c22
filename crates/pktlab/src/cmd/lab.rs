//! `pktlab lab up|down|status`: the built-in namespace lab.

use pktlab_campaign::plan::Plan;
use pktlab_lab::{BuiltinLab, CpuPlan, LabSpec, DEFAULT_PREFIX};
use pktlab_report::lab as out;

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
    let was = was.and_then(|w| w.plan).map(|p| p.to_string());
    common::write_stdout(&out::up_text(&lab, outcome, &cpus, was, &problems))
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
    let plan = Plan::from_file(&file, pktlab_lab::cpuload::cpu_count()?)?;
    // Reaches every host and probes its port: the first problem is the
    // error, one line naming the host.
    let found = pktlab_campaign::lab::check(&plan)?;
    common::write_stdout(&out::check_text(&found))?;
    match found.problems() {
        0 => Ok(()),
        _ => Err(crate::error::Exit(1).into()),
    }
}
