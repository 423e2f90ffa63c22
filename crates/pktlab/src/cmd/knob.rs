//! `pktlab knob`: what the built-in DUT configurations of Linux's fast
//! paths and knobs run on the DUT (in the built-in lab's DUT namespace, or
//! on a DUT host over ssh), for people to run on a DUT of their own; the
//! configurations' lines (`crates/lab/src/dut.rs`) call it too, and its
//! `state` and `host-sysctl` are theirs alone (hidden). Arguments and glue
//! only; the work is in `pktlab_io::fastpath` and `pktlab_lab::knobs`.

use std::time::Duration;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

use pktlab_io::fastpath::{self, Redirect, TcHook, XdpForward};
use pktlab_lab::knobs::{self, host, napi, state};
use pktlab_report::knob as out;

use crate::cmd::common;

/// Linux's fast paths and knobs on ports, by hand: XDP and tc routers, threaded NAPI, XDP's drops
///
/// What the built-in DUT configurations run on the DUT, for a Linux DUT of
/// your own (in a campaign file's apply and revert lines) or a look outside
/// a campaign: the XDP and tc routers attached to or detached from ports,
/// NAPI in threads, a router's counters, XDP's drops on this host. Run it
/// where the ports are (ip netns exec NS pktlab knob ... in a namespace),
/// as root.
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// The XDP router (bpf_fib_lookup, bpf_redirect) on the ports
    #[command(name = "xdp-forward")]
    XdpForward(XdpArgs),
    /// The tc router (bpf_fib_lookup, bpf_redirect_neigh) at the ports' ingress
    #[command(name = "tc-forward")]
    TcForward(TcArgs),
    /// Threaded NAPI on the ports
    #[command(name = "napi-threads")]
    NapiThreads(NapiArgs),
    /// A host-wide sysctl: set (its old value saved first) or restore
    #[command(name = "host-sysctl", hide = true)]
    HostSysctl(HostArgs),
    /// Attached programs (by name) and host sysctls, for the state probe
    #[command(hide = true)]
    State(PortsArg),
    /// The counters of the XDP or tc router on a port
    Stats(StatsArgs),
    /// Frames XDP drops on this host during SECS seconds, by place and cause
    #[command(name = "xdp-drops")]
    XdpDrops(XdpDropsArgs),
}

#[derive(ClapArgs, Debug)]
pub struct XdpDropsArgs {
    /// How long to count
    #[arg(
        short = 't',
        long = "duration",
        value_name = "SECS",
        default_value_t = 10
    )]
    pub secs: u64,
    /// One JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Action {
    Attach,
    Detach,
}

#[derive(ClapArgs, Debug)]
pub struct XdpArgs {
    /// Attach the router to every port given, or detach it
    pub action: Action,
    /// How to reach the egress port
    #[arg(long, value_enum, default_value = "plain")]
    pub redirect: RedirectArg,
    /// Forward on these CPUs (an RPS-style hexadecimal mask), through a
    /// CPUMAP queue each, instead of on the CPU that polls the port
    #[arg(long = "cpus-mask", value_name = "MASK")]
    pub cpus_mask: Option<String>,
    /// Frames each CPU's queue holds
    #[arg(long, default_value_t = fastpath::DEFAULT_QUEUE)]
    pub queue: u32,
    /// The ports it forwards between (every DUT port)
    #[arg(required = true, value_name = "PORT")]
    pub ports: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RedirectArg {
    Plain,
    Devmap,
}

#[derive(ClapArgs, Debug)]
pub struct TcArgs {
    /// Attach the router to every port given, or detach it
    pub action: Action,
    /// tcx or a clsact filter (default: tcx where the kernel has it)
    #[arg(long, value_enum)]
    pub hook: Option<HookArg>,
    /// The ports it forwards between (every DUT port)
    #[arg(required = true, value_name = "PORT")]
    pub ports: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HookArg {
    Tcx,
    Clsact,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(ClapArgs, Debug)]
pub struct NapiArgs {
    /// on: each port's NAPI in a kernel thread; off: back in the softirq
    pub state: OnOff,
    /// Pin the NAPI threads to these CPUs (a hexadecimal mask)
    #[arg(long = "cpus-mask", value_name = "MASK")]
    pub cpus_mask: Option<String>,
    /// The ports
    #[arg(required = true, value_name = "PORT")]
    pub ports: Vec<String>,
}

#[derive(ClapArgs, Debug)]
pub struct HostArgs {
    #[command(subcommand)]
    pub action: HostAction,
}

#[derive(Subcommand, Debug)]
pub enum HostAction {
    /// KEY=VALUE: save the old value, then set it
    Set { setting: String },
    /// Put KEY back to its saved value
    Restore { key: String },
    /// Put back every value whose campaign is no longer running
    RestoreOrphans,
}

#[derive(ClapArgs, Debug)]
pub struct PortsArg {
    #[arg(required = true, value_name = "PORT")]
    pub ports: Vec<String>,
}

#[derive(ClapArgs, Debug)]
pub struct StatsArgs {
    /// A port the router is attached to
    #[arg(value_name = "PORT")]
    pub port: String,
    /// One JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        What::XdpForward(a) => xdp(a),
        What::TcForward(a) => tc(a),
        What::NapiThreads(a) => {
            let ports: Vec<&str> = a.ports.iter().map(String::as_str).collect();
            let pin = pktlab_lab::mask_cpus(a.cpus_mask.as_deref())?;
            napi::set_threaded(&ports, a.state == OnOff::On, pin.as_deref())?;
            Ok(())
        }
        What::HostSysctl(a) => host_sysctl(a.action),
        What::State(a) => {
            let ports: Vec<&str> = a.ports.iter().map(String::as_str).collect();
            common::write_stdout(&state::state_text(&ports)?)
        }
        What::Stats(a) => stats(a),
        What::XdpDrops(a) => xdp_drops(a),
    }
}

fn xdp_drops(a: XdpDropsArgs) -> anyhow::Result<()> {
    let (total, places) = knobs::xdp_drops_during(Duration::from_secs(a.secs))?;
    common::write_stdout(&match a.json {
        true => out::xdp_drops_json(total, a.secs, &places),
        false => out::xdp_drops_text(total, a.secs, &places),
    })
}

fn xdp(a: XdpArgs) -> anyhow::Result<()> {
    let ports: Vec<&str> = a.ports.iter().map(String::as_str).collect();
    match a.action {
        Action::Attach => {
            let how = XdpForward {
                redirect: match a.redirect {
                    RedirectArg::Plain => Redirect::Plain,
                    RedirectArg::Devmap => Redirect::Devmap,
                },
                cpus: pktlab_lab::mask_cpus(a.cpus_mask.as_deref())?.unwrap_or_default(),
                queue: a.queue,
            };
            fastpath::attach_xdp_forward(&ports, &how)?;
        }
        Action::Detach => {
            fastpath::detach_xdp_forward(&ports)?;
        }
    }
    Ok(())
}

fn tc(a: TcArgs) -> anyhow::Result<()> {
    let ports: Vec<&str> = a.ports.iter().map(String::as_str).collect();
    match a.action {
        Action::Attach => {
            let hook = a.hook.map(|h| match h {
                HookArg::Tcx => TcHook::Tcx,
                HookArg::Clsact => TcHook::Clsact,
            });
            fastpath::attach_tc_forward(&ports, hook)?;
        }
        Action::Detach => {
            fastpath::detach_tc_forward(&ports)?;
        }
    }
    Ok(())
}

fn host_sysctl(action: HostAction) -> anyhow::Result<()> {
    match action {
        HostAction::Set { setting } => {
            let (key, value) = host::parse_setting(&setting)?;
            let change = host::set_host_sysctl(key, value, host::Owner::from_env())?;
            eprintln!("{}", host::host_notice(&change.key, &change.new));
        }
        HostAction::Restore { key } => {
            host::restore_host_sysctl(key.trim())?;
        }
        HostAction::RestoreOrphans => {
            let restored = knobs::restore_saved_host_sysctls()?;
            common::write_stdout(&out::restored_text(&restored))?;
        }
    }
    Ok(())
}

fn stats(a: StatsArgs) -> anyhow::Result<()> {
    let Some((program, s)) = fastpath::stats(&a.port)? else {
        anyhow::bail!("{} has no pktlab fast path attached", a.port);
    };
    common::write_stdout(&match a.json {
        true => out::fastpath_stats_json(&a.port, &program, &s),
        false => out::fastpath_stats_text(&a.port, &program, &s),
    })
}
