//! Benchmark campaigns: every DUT configuration × traffic profile, N times,
//! in an order that fights drift, into a results folder that survives
//! Ctrl-C and can be resumed (BSDRP's bench-lab, seeds 000 and 002).
//!
//! - [`file`]: the campaign file as written;
//! - [`Campaign`]: the same, checked and resolved;
//! - [`order`]: which run comes when;
//! - [`results`]: the results folder;
//! - [`summary`]: `.pps` files, `summary.json`, `ministat.txt`, the sweep table;
//! - [`runner`]: running it all.

use std::time::Duration;

use pktlab_lab::dut::{self, BuiltinBase, DutConfig, DutRunner};
use pktlab_lab::mac::parse_mac;
use pktlab_lab::ports::{InterfaceLab, Port};
use pktlab_lab::{CpuPlan, LabSpec};
use pktlab_wire::size::SizeMix;
use pktlab_wire::units;
use serde::{Deserialize, Serialize};

use crate::file::{CampaignFile, ConfigSection, LabSection, SweepSection, TrafficSection};
use crate::order::{self, Order};
use crate::CampaignError;
use pktlab_remote::endpoint::BenchIo;
use pktlab_trial::target::BUILTIN_DUT_IFACES;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::TrialSettings;

/// Which lab, as the campaign asks for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LabChoice {
    Builtin {
        prefix: String,
        queues: u16,
        /// How the lab's CPUs are split between the DUT and the tester;
        /// recorded in env.json and every run header, not in the summary
        /// (whose bytes stay those of folders written before the plan).
        #[serde(skip)]
        cpus: Option<CpuPlan>,
    },
    Interfaces {
        #[serde(flatten)]
        lab: InterfaceLab,
        state_probe: Option<String>,
        /// Where the generator and receiver run when not here.
        #[serde(flatten, default)]
        hosts: Box<LabHosts>,
    },
}

/// The hosts of an interfaces lab's generator and receiver, reached over
/// ssh (`pktlab_remote::ssh`); both local when absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabHosts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gen_host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_host: Option<String>,
    /// Passed to every ssh as `-F` (an absolute path by now: the command
    /// line resolves it against the campaign file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<String>,
    /// Several generators sharing the traffic (`[[lab.generator]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<GeneratorHost>,
}

/// One of several generators: its host (None: here) and port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratorHost {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(flatten)]
    pub port: Port,
}

impl LabChoice {
    /// The I/O backend of a campaign that names none: on the built-in lab
    /// the fastest generator it supports, the XDP live-frame generator
    /// (`lab up` turns GRO on on d0 for it), so that the tester outruns
    /// the DUT; AF_PACKET, which works on every interface, elsewhere.
    pub fn default_io(&self) -> BenchIo {
        match self {
            LabChoice::Builtin { .. } => BenchIo::Xdp,
            LabChoice::Interfaces { .. } => BenchIo::Afpacket,
        }
    }

    pub fn builtin_spec(&self) -> Option<LabSpec> {
        match self {
            LabChoice::Builtin {
                prefix,
                queues,
                cpus,
            } => Some(LabSpec {
                prefix: prefix.clone(),
                queues: *queues,
                cpus: cpus.clone(),
            }),
            LabChoice::Interfaces { .. } => None,
        }
    }

    /// This choice as `summary.json` records it: without the CPU plan,
    /// which env.json and the run headers hold.
    pub fn without_cpu_plan(&self) -> LabChoice {
        let mut lab = self.clone();
        if let LabChoice::Builtin { cpus, .. } = &mut lab {
            *cpus = None;
        }
        lab
    }

    /// The built-in lab's CPU plan.
    pub fn cpu_plan(&self) -> Option<&CpuPlan> {
        match self {
            LabChoice::Builtin { cpus, .. } => cpus.as_ref(),
            LabChoice::Interfaces { .. } => None,
        }
    }
}

/// A size sweep: profiles made from one `[[traffic]]` with `sizes`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sweep {
    /// The `[[traffic]]` name (`inet4`).
    pub name: String,
    /// (frame size, profile name) in the order given.
    pub members: Vec<(u16, String)>,
}

/// A sweep of one knob of the DUT (`[[sweep]]`, `--sweep`): one
/// configuration per value, named `LABEL-VALUE`, among the campaign's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KnobSweep {
    /// The knob as written (`netdev_max_backlog`, `ethtool-K:gro`).
    pub knob: String,
    /// What its configurations are named after and the report's axis reads.
    pub label: String,
    pub values: Vec<String>,
    /// The configuration of each value.
    pub configs: Vec<String>,
    /// Every value a number: drawn to scale.
    pub numeric: bool,
    #[serde(skip)]
    pub sweep: pktlab_lab::sweep::Sweep,
    /// The DUT's ports the knob is set on.
    #[serde(skip)]
    pub ports: Vec<String>,
}

impl KnobSweep {
    fn ports(&self) -> Vec<&str> {
        self.ports.iter().map(String::as_str).collect()
    }
}

/// What a campaign does when a run fails (`on_error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// End the campaign (after reverting the DUT).
    #[default]
    Stop,
    /// Report the run and go on with the next; its file is not written,
    /// so `--resume` runs it again.
    Skip,
}

impl OnError {
    fn parse(text: &str) -> Result<OnError, CampaignError> {
        match text {
            "stop" => Ok(OnError::Stop),
            "skip" => Ok(OnError::Skip),
            _ => Err(usage(format!(
                "invalid on_error '{text}': use stop or skip"
            ))),
        }
    }
}

/// How runs are done.
#[derive(Clone, Debug, Serialize)]
pub struct RunSettings {
    pub iterations: usize,
    /// The generator's and the receiver's I/O backend.
    pub io: BenchIo,
    pub trial: TrialSettings,
    pub order: Order,
    /// Not in summary.json, whose bytes stay those of older folders.
    #[serde(skip)]
    pub on_error: OnError,
    /// The drop tracer (`[run] drop_trace`); not in summary.json either.
    #[serde(skip)]
    pub drop_trace: pktlab_loss::drops::DropTrace,
}

/// A checked campaign, ready to run.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub name: String,
    pub lab: LabChoice,
    pub link_bps: Option<f64>,
    pub traffics: Vec<Traffic>,
    pub sweeps: Vec<Sweep>,
    pub configs: Vec<DutConfig>,
    /// Knob sweeps; their configurations are in `configs`, after the
    /// `[[config]]` ones.
    pub knob_sweeps: Vec<KnobSweep>,
    pub run: RunSettings,
}

/// The RFC 2544 frame sizes (`--sizes rfc2544`).
pub const RFC2544_SIZES: [u16; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

fn usage(msg: String) -> CampaignError {
    CampaignError::Usage(msg)
}

/// Names become file names (`<config>.<traffic>.<n>.jsonl`): no dots.
fn check_name(what: &str, name: &str) -> Result<(), CampaignError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(usage(format!(
            "invalid {what} name '{name}': use letters, digits, '-' and '_' (it names files)"
        )))
    }
}

fn duration(what: &str, text: &str) -> Result<Duration, CampaignError> {
    units::parse_duration(text).map_err(|e| usage(format!("invalid {what} '{text}': {e}")))
}

impl Plan {
    /// Checks and resolves a campaign file. `cpus` sizes the built-in `rps`
    /// configuration's mask.
    pub fn from_file(f: &CampaignFile, cpus: usize) -> Result<Plan, CampaignError> {
        let name = f.name.clone().unwrap_or_else(|| "bench".into());
        check_name("campaign", &name)?;
        let link_bps = f
            .lab
            .link_speed
            .as_deref()
            .map(units::parse_link_speed)
            .transpose()?;
        let lab = lab_choice(&f.lab)?;
        let chosen_io: Option<BenchIo> = f.run.io.as_deref().map(str::parse).transpose()?;
        let builtin = matches!(lab, LabChoice::Builtin { .. });
        let base = builtin.then(|| {
            lab.cpu_plan()
                .map(CpuPlan::builtin_base)
                .unwrap_or_default()
        });

        let (traffics, sweeps) = plan_traffics(f, link_bps)?;
        let (configs, knob_sweeps) = plan_configs(f, builtin, base.as_ref(), cpus)?;
        let io = choose_io(chosen_io, &configs, &traffics, &lab)?;

        let r = &f.run;
        let iterations = r.iterations.unwrap_or(5);
        if iterations == 0 {
            return Err(usage("invalid iteration count 0: use at least 1".into()));
        }
        let d = duration("duration", r.duration.as_deref().unwrap_or("10s"))?;
        let warmup = duration("warm-up", r.warmup.as_deref().unwrap_or("1s"))?;
        let tail = duration("tail", r.tail.as_deref().unwrap_or("1s"))?;
        let interval = Duration::from_secs(1);
        // The receiver's first and last intervals are partial, so a run of
        // exactly warm-up + tail still leaves one whole second to value.
        if d < Duration::from_secs(1) || d < warmup + tail {
            return Err(usage(format!(
                "invalid duration '{}': a run must last at least its warm-up ({} s) and tail ({} s) together",
                r.duration.as_deref().unwrap_or("10s"),
                warmup.as_secs_f64(),
                tail.as_secs_f64()
            )));
        }
        let order = Order::parse(r.order.as_deref().unwrap_or("interleaved"), r.seed)?;
        let on_error = OnError::parse(r.on_error.as_deref().unwrap_or("stop"))?;
        let drop_trace: pktlab_loss::drops::DropTrace =
            r.drop_trace.as_deref().unwrap_or("auto").parse()?;
        let samples = |d: Duration| (d.as_secs_f64() / interval.as_secs_f64()).round() as usize;
        Ok(Plan {
            name,
            lab,
            link_bps,
            traffics,
            sweeps,
            configs,
            knob_sweeps,
            run: RunSettings {
                iterations,
                io,
                trial: TrialSettings {
                    duration: d,
                    trim_head: samples(warmup),
                    trim_tail: samples(tail),
                    interval,
                },
                order,
                on_error,
                drop_trace,
            },
        })
    }

    /// Runs planned in campaign order.
    pub fn plan(&self) -> Vec<order::RunKey> {
        order::plan(
            &self.run.order,
            self.configs.len(),
            self.traffics.len(),
            self.run.iterations,
        )
    }

    pub fn is_builtin(&self) -> bool {
        matches!(self.lab, LabChoice::Builtin { .. })
    }

    /// Sets the reverts of the sweeps that put back what the DUT has now,
    /// read through `read` (a line run on the DUT): before the first run.
    pub fn read_sweep_reverts(
        &mut self,
        read: impl Fn(&str) -> Result<String, dut::DutError>,
    ) -> Result<(), CampaignError> {
        for sweep in &self.knob_sweeps {
            sweep
                .sweep
                .fill_reverts(&mut self.configs, &sweep.ports(), &read)?;
        }
        Ok(())
    }

    /// The sweeps' reverts as the campaign's first invocation read them
    /// (`env.json`'s configurations), when resuming it: the DUT may still
    /// hold a value the interrupted run set.
    pub fn adopt_sweep_reverts(&mut self, recorded: &[DutConfig]) {
        for sweep in self.knob_sweeps.iter().filter(|s| s.sweep.reads()) {
            for c in self.configs.iter_mut() {
                if !sweep.configs.contains(&c.name) {
                    continue;
                }
                if let Some(r) = recorded.iter().find(|r| r.name == c.name) {
                    c.revert = r.revert.clone();
                }
            }
        }
    }

    /// Lines that show the swept knobs, for the DUT's state probe.
    pub fn sweep_probes(&self) -> Vec<String> {
        self.knob_sweeps
            .iter()
            .filter_map(|s| s.sweep.probe(&s.ports()))
            .collect()
    }
}

/// The `[[sweep]]` sections, checked. `base` is the built-in lab's (None
/// for a lab of interfaces, whose DUT is a host of its own: a host sysctl
/// is then one of its sysctls).
fn knob_sweeps(
    sections: &[SweepSection],
    lab: &LabSection,
    base: Option<&BuiltinBase>,
) -> Result<Vec<KnobSweep>, CampaignError> {
    use pktlab_lab::sweep::{Sweep as Knob, SweepKnob};
    let mut out = Vec::new();
    for s in sections {
        let knob = match (&s.knob, s.apply.is_empty(), &s.name) {
            (Some(k), true, None) => SweepKnob::parse(k)?,
            (None, false, Some(name)) => SweepKnob::template(name, &s.apply, &s.revert)?,
            (Some(_), _, _) => {
                return Err(usage(
                    "a [[sweep]] has either a knob, or a name with apply (and revert) lines".into(),
                ))
            }
            (None, _, _) => {
                return Err(usage(
                    "a [[sweep]] needs a knob, or a name and apply lines with {value}".into(),
                ))
            }
        };
        let knob = match (knob, base) {
            (SweepKnob::HostSysctl { short }, None) => SweepKnob::DutSysctl {
                key: pktlab_lab::knobs::host::host_knob(&short)
                    .expect("a host knob's short name")
                    .to_string(),
            },
            (k, _) => k,
        };
        let sweep = Knob::new(knob, s.values.iter().map(|v| v.to_string()).collect())?;
        let ports: Vec<String> = match base {
            Some(_) => BUILTIN_DUT_IFACES.iter().map(|p| p.to_string()).collect(),
            None => lab.dut_ifaces.clone(),
        };
        if sweep.needs_ports() && ports.is_empty() {
            return Err(usage(format!(
                "sweeping {} needs the DUT's ports: give them as [lab] dut_ifaces",
                sweep.knob.spec()
            )));
        }
        out.push(KnobSweep {
            knob: sweep.knob.spec(),
            label: sweep.knob.label(),
            values: sweep.values.clone(),
            configs: sweep.names(),
            numeric: sweep.numeric(),
            sweep,
            ports,
        });
    }
    Ok(out)
}

/// The campaign's traffic profiles (`inet4` when it names none) and its
/// size sweeps.
fn plan_traffics(
    f: &CampaignFile,
    link_bps: Option<f64>,
) -> Result<(Vec<Traffic>, Vec<Sweep>), CampaignError> {
    let mut traffics = Vec::new();
    let mut sweeps = Vec::new();
    let sections = if f.traffic.is_empty() {
        vec![TrafficSection {
            name: "inet4".into(),
            ..TrafficSection::default()
        }]
    } else {
        f.traffic.clone()
    };
    for t in &sections {
        let (profiles, sweep) = traffic_profiles(t, link_bps)?;
        traffics.extend(profiles);
        sweeps.extend(sweep);
    }
    for (i, t) in traffics.iter().enumerate() {
        if traffics[..i].iter().any(|o| o.name == t.name) {
            return Err(usage(format!(
                "traffic profile '{}' is defined twice",
                t.name
            )));
        }
    }
    Ok((traffics, sweeps))
}

/// The campaign's DUT configurations (`forwarding` on the built-in lab,
/// `default` elsewhere, when it names none and sweeps nothing), then its
/// knob sweeps' configurations; and the knob sweeps.
fn plan_configs(
    f: &CampaignFile,
    builtin: bool,
    base: Option<&BuiltinBase>,
    cpus: usize,
) -> Result<(Vec<DutConfig>, Vec<KnobSweep>), CampaignError> {
    let sections = if f.config.is_empty() && !f.sweep.is_empty() {
        Vec::new()
    } else if f.config.is_empty() {
        vec![ConfigSection {
            name: if builtin { "forwarding" } else { "default" }.into(),
            ..ConfigSection::default()
        }]
    } else {
        f.config.clone()
    };
    let mut configs = Vec::new();
    for c in &sections {
        let config = dut_config(c, base, cpus)?;
        if configs.iter().any(|o: &DutConfig| o.name == config.name) {
            return Err(usage(format!(
                "configuration '{}' is defined twice",
                c.name
            )));
        }
        configs.push(config);
    }
    let knob_sweeps = knob_sweeps(&f.sweep, &f.lab, base)?;
    for sweep in &knob_sweeps {
        let ports = sweep.ports();
        let made = sweep.sweep.configs(&ports, |name| {
            let base = base.expect("host sysctls are swept on the built-in lab");
            dut::builtin_config(name, &ports, cpus, base)
        })?;
        for config in made {
            if configs.iter().any(|o: &DutConfig| o.name == config.name) {
                return Err(usage(format!(
                    "configuration '{}' is defined twice (once by a sweep)",
                    config.name
                )));
            }
            check_name("configuration", &config.name)?;
            configs.push(config);
        }
    }
    Ok((configs, knob_sweeps))
}

/// The generator's I/O backend: the campaign's choice, else one that
/// works for every configuration and frame size.
fn choose_io(
    chosen_io: Option<BenchIo>,
    configs: &[DutConfig],
    traffics: &[Traffic],
    lab: &LabChoice,
) -> Result<BenchIo, CampaignError> {
    // The XDP live-frame generator cannot feed some built-in
    // configurations (`gro-off` turns off the GRO d0 needs,
    // `threaded-napi` the inline polling it needs): a campaign with one
    // of them uses the backend that works for every configuration.
    // Likewise frames larger than XDP live frames carry (jumbo frames).
    let xdp_max = pktlab_io::xdpgen::delivery::MAX_LIVE_FRAME_LEN + 4;
    let jumbo = traffics.iter().any(|t| {
        t.sizes
            .parse::<pktlab_wire::size::SizeMix>()
            .is_ok_and(|m| usize::from(m.max()) > xdp_max)
    });
    // Traffic both ways sends from the receiver's port too: the XDP
    // backends there need GRO on d1 and g0's NAPI threads, which each
    // trial sets only when named (crates/lab/src/builtin/reverse_xdp.rs).
    let both_ways = traffics.iter().any(|t| t.reverse.is_some());
    Ok(match chosen_io {
        Some(io) => io,
        None if both_ways => BenchIo::Afpacket,
        None if configs
            .iter()
            .any(|c| c.builtin && pktlab_lab::dut::builtin_needs_afpacket(&c.name)) =>
        {
            BenchIo::Afpacket
        }
        None if jumbo => BenchIo::Afpacket,
        None => lab.default_io(),
    })
}

/// The campaign's `[lab]`: the built-in lab or existing interfaces.
fn lab_choice(l: &LabSection) -> Result<LabChoice, CampaignError> {
    match l.kind.as_deref().unwrap_or("builtin") {
        "builtin" => builtin_choice(l),
        "interfaces" => interfaces_choice(l),
        other => Err(usage(format!(
            "invalid [lab] kind '{other}': use builtin or interfaces"
        ))),
    }
}

/// `[lab]` of the built-in lab: its prefix, queues and CPU plan.
fn builtin_choice(l: &LabSection) -> Result<LabChoice, CampaignError> {
    let only_builtin = [
        ("gen_iface", l.gen_iface.is_some()),
        ("gen_netns", l.gen_netns.is_some()),
        ("rcv_iface", l.rcv_iface.is_some()),
        ("rcv_netns", l.rcv_netns.is_some()),
        ("dut_in_mac", l.dut_in_mac.is_some()),
        ("dut_out_mac", l.dut_out_mac.is_some()),
        ("dut", l.dut.is_some()),
        ("dut_ifaces", !l.dut_ifaces.is_empty()),
        ("ssh_options", !l.ssh_options.is_empty()),
        ("state", l.state.is_some()),
        ("gen_host", l.gen_host.is_some()),
        ("rcv_host", l.rcv_host.is_some()),
        ("ssh_config", l.ssh_config.is_some()),
        ("generator", !l.generators.is_empty()),
    ];
    if let Some((key, _)) = only_builtin.iter().find(|(_, set)| *set) {
        return Err(usage(format!(
            "[lab] {key} is for kind = \"interfaces\", not the built-in lab"
        )));
    }
    let prefix = l
        .prefix
        .clone()
        .unwrap_or_else(|| pktlab_lab::DEFAULT_PREFIX.into());
    let queues = l.queues.unwrap_or(1);
    let cpus = CpuPlan::for_this_process(l.dut_cpus.as_deref())?;
    pktlab_lab::BuiltinLab::new(LabSpec {
        prefix: prefix.clone(),
        queues,
        cpus: Some(cpus.clone()),
    })?;
    Ok(LabChoice::Builtin {
        prefix,
        queues,
        cpus: Some(cpus),
    })
}

/// `[lab] kind = "interfaces"`: the ports, the DUT's MACs and runner, the
/// hosts reached over ssh.
fn interfaces_choice(l: &LabSection) -> Result<LabChoice, CampaignError> {
    for (key, set) in [
        ("prefix", l.prefix.is_some()),
        ("queues", l.queues.is_some()),
        ("dut_cpus", l.dut_cpus.is_some()),
    ] {
        if set {
            return Err(usage(format!("[lab] {key} is for the built-in lab")));
        }
    }
    let need = |key: &str, v: &Option<String>| {
        v.clone()
            .ok_or_else(|| usage(format!("[lab] kind = \"interfaces\" needs {key}")))
    };
    let mac = |key: &str, text: &str| {
        parse_mac(text).ok_or_else(|| {
            usage(format!(
                "invalid [lab] {key} '{text}': expected a MAC like 00:1b:21:c4:95:7a"
            ))
        })
    };
    let generators = generator_hosts(l)?;
    let first = generators.first().map(|g| g.port.clone());
    let gen = match &first {
        Some(p) => p.iface.clone(),
        None => need("gen_iface", &l.gen_iface)?,
    };
    let gen_netns = match &first {
        Some(p) => p.netns.clone(),
        None => l.gen_netns.clone(),
    };
    let rcv = need("rcv_iface", &l.rcv_iface)?;
    let dut_in_mac = mac("dut_in_mac", &need("dut_in_mac", &l.dut_in_mac)?)?;
    let dut_out_mac = l
        .dut_out_mac
        .as_deref()
        .map(|m| mac("dut_out_mac", m))
        .transpose()?;
    for (key, host) in [("gen_host", &l.gen_host), ("rcv_host", &l.rcv_host)] {
        if let Some(h) = host {
            check_ssh_dest(key, h)?;
        }
    }
    // The DUT's ssh reads the same client configuration.
    let mut ssh_options = l.ssh_options.clone();
    if let (Some(cfg), Some(dut)) = (&l.ssh_config, &l.dut) {
        if dut.trim_start().starts_with("ssh") {
            ssh_options.splice(0..0, ["-F".to_string(), cfg.clone()]);
        }
    }
    let runner = dut_runner(l.dut.as_deref().unwrap_or("local"), &ssh_options)?;
    Ok(LabChoice::Interfaces {
        lab: InterfaceLab {
            gen: Port::new(&gen, gen_netns.as_deref()),
            rcv: Port::new(&rcv, l.rcv_netns.as_deref()),
            dut_in_mac,
            dut_out_mac,
            dut: runner,
            dut_ifaces: l.dut_ifaces.clone(),
        },
        state_probe: l.state.clone(),
        hosts: Box::new(LabHosts {
            gen_host: l.gen_host.clone(),
            rcv_host: l.rcv_host.clone(),
            ssh_config: l.ssh_config.clone(),
            generators,
        }),
    })
}

/// `[[lab.generator]]`: several generators, each an interface here or on
/// a host.
fn generator_hosts(l: &LabSection) -> Result<Vec<GeneratorHost>, CampaignError> {
    if !l.generators.is_empty() {
        for (key, set) in [
            ("gen_iface", l.gen_iface.is_some()),
            ("gen_netns", l.gen_netns.is_some()),
            ("gen_host", l.gen_host.is_some()),
        ] {
            if set {
                return Err(usage(format!(
                    "[lab] has both {key} and [[lab.generator]]: name every generator in a [[lab.generator]]"
                )));
            }
        }
    }
    l.generators
        .iter()
        .map(|g| {
            if let Some(h) = &g.host {
                check_ssh_dest("generator host", h)?;
            }
            Ok(GeneratorHost {
                host: g.host.clone(),
                port: Port::new(&g.iface, g.netns.as_deref()),
            })
        })
        .collect()
}

/// An ssh destination: `host`, `user@host`, or a `Host` of the ssh
/// config; never something ssh would read as an option.
fn check_ssh_dest(key: &str, dest: &str) -> Result<(), CampaignError> {
    let ok = !dest.is_empty()
        && !dest.starts_with('-')
        && !dest.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok {
        Ok(())
    } else {
        Err(usage(format!(
            "invalid [lab] {key} '{dest}': give an ssh destination like root@gen1"
        )))
    }
}

/// `local`, `netns NAME` or `ssh HOST`.
pub fn dut_runner(text: &str, ssh_options: &[String]) -> Result<DutRunner, CampaignError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let runner = match words.as_slice() {
        ["local"] => DutRunner::Local,
        ["netns", ns] => DutRunner::Netns {
            netns: ns.to_string(),
        },
        ["ssh", host] => DutRunner::Ssh {
            host: host.to_string(),
            options: ssh_options.to_vec(),
        },
        _ => {
            return Err(usage(format!(
                "invalid [lab] dut '{text}': use \"local\", \"netns NAME\" or \"ssh HOST\""
            )))
        }
    };
    if !ssh_options.is_empty() && !matches!(runner, DutRunner::Ssh { .. }) {
        return Err(usage("[lab] ssh_options needs dut = \"ssh HOST\"".into()));
    }
    Ok(runner)
}

fn traffic_profiles(
    t: &TrafficSection,
    link_bps: Option<f64>,
) -> Result<(Vec<Traffic>, Option<Sweep>), CampaignError> {
    check_name("traffic", &t.name)?;
    let family = t
        .family
        .as_deref()
        .unwrap_or(if t.name.starts_with("inet6") {
            "inet6"
        } else {
            "inet4"
        });
    let mut base = match family {
        "inet4" => Traffic::inet4(),
        "inet6" => Traffic::inet6(),
        other => {
            return Err(usage(format!(
                "invalid family '{other}' in traffic '{}': use inet4 or inet6",
                t.name
            )))
        }
    };
    base.name = t.name.clone();
    if let Some(s) = &t.src {
        base.src = s.clone();
    }
    if let Some(d) = &t.dst {
        base.dst = d.clone();
    }
    if let Some(n) = t.threads {
        if n == 0 || n > 64 {
            return Err(usage(format!(
                "invalid thread count {n} in traffic '{}': use 1 to 64",
                t.name
            )));
        }
        base.threads = n;
    }
    base.rfc4814_seed = traffic_ports(t)?;
    base = both_ways(t, base)?;
    let with_size = |mut tr: Traffic, size: &str| -> Result<Traffic, CampaignError> {
        let mix: SizeMix = size.parse()?;
        tr.sizes = mix.to_string();
        tr.rate_pps = match t.rate.as_deref() {
            None | Some("max") => None,
            Some(r) => Some(units::parse_rate(r)?.to_pps(mix.mean(), link_bps)?),
        };
        // Checks ranges, sizes and destinations before any lab exists.
        tr.frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])?;
        if let Some(back) = tr.reverse_stream() {
            back.frame_spec([2, 0, 0, 0, 0, 3], [2, 0, 0, 0, 0, 4])?;
        }
        Ok(tr)
    };
    match (&t.size, &t.sizes) {
        (Some(_), Some(_)) => Err(usage(format!(
            "traffic '{}' has both size and sizes: use one",
            t.name
        ))),
        (_, Some(sizes)) => {
            if sizes.is_empty() {
                return Err(usage(format!(
                    "traffic '{}' has an empty sizes list",
                    t.name
                )));
            }
            let mut out = Vec::new();
            let mut members = Vec::new();
            for &s in sizes {
                let mut tr = with_size(base.clone(), &s.to_string())?;
                tr.name = format!("{}-{s}", t.name);
                members.push((s, tr.name.clone()));
                out.push(tr);
            }
            let sweep = (sizes.len() > 1).then(|| Sweep {
                name: t.name.clone(),
                members,
            });
            Ok((out, sweep))
        }
        (size, None) => {
            let size = size.clone().unwrap_or_else(|| base.sizes.clone());
            Ok((vec![with_size(base, &size)?], None))
        }
    }
}

/// The seed of RFC 4814 ports when `ports = "rfc4814"`: always the same,
/// so that every run of a campaign sends the same ports.
const RFC4814_SEED: u64 = 1;

fn traffic_ports(t: &TrafficSection) -> Result<Option<u64>, CampaignError> {
    match t.ports.as_deref() {
        None | Some("ranges") => Ok(None),
        Some("rfc4814") => Ok(Some(RFC4814_SEED)),
        Some(other) => Err(usage(format!(
            "invalid ports '{other}' in traffic '{}': use ranges or rfc4814",
            t.name
        ))),
    }
}

/// A traffic's `direction` (and its reverse stream's ranges) applied.
fn both_ways(t: &TrafficSection, base: Traffic) -> Result<Traffic, CampaignError> {
    let both = match t.direction.as_deref() {
        None | Some("forward") => false,
        Some("both") => true,
        Some(other) => {
            return Err(usage(format!(
                "invalid direction '{other}' in traffic '{}': use forward or both",
                t.name
            )))
        }
    };
    if !both {
        if t.reverse_src.is_some() || t.reverse_dst.is_some() {
            return Err(usage(format!(
                "traffic '{}' has reverse_src or reverse_dst without direction = \"both\"",
                t.name
            )));
        }
        return Ok(base);
    }
    let mut tr = base.both_ways();
    if let Some(r) = tr.reverse.as_mut() {
        if let Some(src) = &t.reverse_src {
            r.src = src.clone();
        }
        if let Some(dst) = &t.reverse_dst {
            r.dst = dst.clone();
        }
    }
    Ok(tr)
}

fn dut_config(
    c: &ConfigSection,
    builtin: Option<&BuiltinBase>,
    cpus: usize,
) -> Result<DutConfig, CampaignError> {
    check_name("configuration", &c.name)?;
    let has_commands =
        !c.apply.is_empty() || !c.revert.is_empty() || c.reboot.is_some() || c.wait.is_some();
    if let (false, Some(base)) = (has_commands, builtin) {
        return Ok(dut::builtin_config(
            &c.name,
            &BUILTIN_DUT_IFACES,
            cpus,
            base,
        )?);
    }
    let mut config = DutConfig::unchanged(&c.name);
    config.apply = c.apply.clone();
    config.revert = c.revert.clone();
    config.reboot = c.reboot.clone();
    config.wait = c.wait.clone();
    if let Some(t) = &c.wait_timeout {
        config.wait_timeout = duration("wait_timeout", t)?;
    }
    config.validate()?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Plan, CampaignError> {
        Plan::from_file(&CampaignFile::parse(text).unwrap(), 2)
    }

    #[test]
    fn a_traffic_both_ways() {
        let c = parse("[[traffic]]\nname = \"inet4\"\ndirection = \"both\"\n").unwrap();
        let back = c.traffics[0].reverse.as_ref().unwrap();
        assert_eq!(back.src, "198.19.10.1:2000-198.19.10.100");
        assert_eq!(back.dst, "198.18.10.1:2000-198.18.10.20");
        let c = parse(
            "[[traffic]]\nname = \"t\"\ndirection = \"both\"\nreverse_src = \"198.19.10.1\"\n\
             reverse_dst = \"198.18.10.1:9-198.18.10.2:9\"\nsizes = [64, 128]\n",
        )
        .unwrap();
        for t in &c.traffics {
            let back = t.reverse.as_ref().unwrap();
            assert_eq!(
                (back.src.as_str(), back.dst.as_str()),
                ("198.19.10.1", "198.18.10.1:9-198.18.10.2:9")
            );
        }
        let c = parse("[[traffic]]\nname = \"inet4\"\ndirection = \"forward\"\n").unwrap();
        assert_eq!(c.traffics[0].reverse, None);
        // Both ways, the built-in lab generates with AF_PACKET unless told.
        let both = "[[traffic]]\nname = \"inet4\"\ndirection = \"both\"\n";
        assert_eq!(parse(both).unwrap().run.io, BenchIo::Afpacket);
        let afxdp = parse(&format!("[run]\nio = \"afxdp\"\n{both}")).unwrap();
        assert_eq!(afxdp.run.io, BenchIo::Afxdp);
        let xdp = parse(&format!("[run]\nio = \"xdp\"\n{both}")).unwrap();
        assert_eq!(xdp.run.io, BenchIo::Xdp);
        for (text, says) in [
            (
                "direction = \"back\"",
                "invalid direction 'back' in traffic 'inet4': use forward or both",
            ),
            (
                "reverse_src = \"198.19.10.1\"",
                "traffic 'inet4' has reverse_src or reverse_dst without direction = \"both\"",
            ),
            (
                "direction = \"both\"\nreverse_dst = \"8.8.8.8\"",
                "outside the benchmark",
            ),
        ] {
            let err = parse(&format!("[[traffic]]\nname = \"inet4\"\n{text}\n")).unwrap_err();
            assert!(err.to_string().contains(says), "{text}: {err}");
            assert!(err.is_usage(), "{text}: {err}");
        }
    }

    #[test]
    fn defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.name, "bench");
        assert!(c.is_builtin());
        assert_eq!(c.traffics.len(), 1);
        assert_eq!(c.traffics[0].name, "inet4");
        assert_eq!(c.traffics[0].sizes, "64");
        assert_eq!(c.configs.len(), 1);
        assert_eq!(c.configs[0].name, "forwarding");
        assert!(c.configs[0].builtin);
        assert_eq!(c.run.iterations, 5);
        assert_eq!(c.run.trial.duration, Duration::from_secs(10));
        assert_eq!((c.run.trial.trim_head, c.run.trial.trim_tail), (1, 1));
        assert_eq!(c.run.order, Order::Interleaved);
        assert_eq!(c.run.drop_trace, pktlab_loss::drops::DropTrace::Auto);
        assert_eq!(
            parse("[run]\ndrop_trace = \"off\"\n")
                .unwrap()
                .run
                .drop_trace,
            pktlab_loss::drops::DropTrace::Off
        );
        // The built-in lab's tester is its fastest generator, on the CPU
        // plan's tester CPUs.
        assert_eq!(c.run.io, BenchIo::Xdp);
        let plan = c.lab.cpu_plan().unwrap();
        let allowed = pktlab_engine::affinity::allowed_cpus();
        assert_eq!(plan, &CpuPlan::default_for(&allowed));
        assert_eq!(c.plan().len(), 5);
        let c = parse("[run]\nio = \"afpacket\"\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Afpacket);
        // With `gro-off` among the configurations, XDP live frames cannot
        // run them all: AF_PACKET, unless the campaign says otherwise.
        let c =
            parse("[[config]]\nname = \"forwarding\"\n[[config]]\nname = \"gro-off\"\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Afpacket);
        let c = parse("[run]\nio = \"afxdp\"\n[[config]]\nname = \"gro-off\"\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Afxdp);
        // Likewise `threaded-napi`: d0's NAPI in a thread.
        let c = parse("[[config]]\nname = \"threaded-napi\"\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Afpacket);
        // Jumbo frames (above XDP live frames' 3412 bytes): AF_PACKET too.
        let c = parse("[[traffic]]\nname = \"inet4\"\nsizes = [64, 3412]\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Xdp);
        let c = parse("[[traffic]]\nname = \"inet4\"\nsizes = [64, 9018]\n").unwrap();
        assert_eq!(c.run.io, BenchIo::Afpacket);
        // A DUT CPU that does not exist is a usage error naming it.
        let e = parse("[lab]\ndut_cpus = \"1023\"\n").unwrap_err();
        assert!(e.is_usage());
        assert!(
            e.to_string().starts_with("--dut-cpus 1023: CPU 1023 "),
            "{e}"
        );
        let e = parse("[run]\nio = \"netmap\"\n").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "invalid I/O backend 'netmap': use afpacket, afxdp, xdp or auto"
        );
    }

    #[test]
    fn sweeps_become_profiles() {
        let c = parse(
            "[lab]\nlink_speed = \"1Gbps\"\n[[traffic]]\nname = \"inet4\"\nsizes = [64, 1518]\nrate = \"50%\"\n[[traffic]]\nname = \"inet6\"\n",
        )
        .unwrap();
        let names: Vec<&str> = c.traffics.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["inet4-64", "inet4-1518", "inet6"]);
        assert_eq!(c.traffics[2].dst, pktlab_wire::flow::LAB_DST_V6);
        // 50% of 1 Gb/s in 64-byte frames: 1e9 / 672 / 2 = 744047.6 pps.
        let r = c.traffics[0].rate_pps.unwrap();
        assert!((r - 744_047.619).abs() < 0.01, "{r}");
        assert_eq!(
            c.sweeps,
            [Sweep {
                name: "inet4".into(),
                members: vec![(64, "inet4-64".into()), (1518, "inet4-1518".into())],
            }]
        );
    }

    #[test]
    fn rfc4814_ports() {
        let c = parse("[[traffic]]\nname = \"inet4\"\nports = \"rfc4814\"\nsizes = [64, 1518]\n")
            .unwrap();
        assert_eq!(c.traffics.len(), 2);
        assert!(c.traffics.iter().all(|t| t.rfc4814_seed == Some(1)));
        let spec = c.traffics[1]
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        assert_eq!(spec.ports, pktlab_wire::PortMode::Rfc4814 { seed: 1 });
        assert_eq!(spec.flows.count(), 2000);
        assert_eq!(
            parse("[[traffic]]\nname = \"a\"\nports = \"ranges\"\n")
                .unwrap()
                .traffics[0]
                .rfc4814_seed,
            None
        );
        let e = parse("[[traffic]]\nname = \"a\"\nports = \"random\"\n").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "invalid ports 'random' in traffic 'a': use ranges or rfc4814"
        );
        // A port range has no meaning with ports drawn per frame.
        let e = parse("[[traffic]]\nname = \"a\"\nports = \"rfc4814\"\nsrc = \"198.18.10.1:1-198.18.10.1:9\"\n")
            .unwrap_err();
        assert!(e.is_usage());
        assert!(
            e.to_string()
                .contains("has 9 ports, but RFC 4814 ports are drawn per frame"),
            "{e}"
        );
    }

    #[test]
    fn configs() {
        let c = parse(
            "[[config]]\nname = \"forwarding\"\n[[config]]\nname = \"nft-stateful\"\n[[config]]\nname = \"mine\"\napply = [\"sysctl -w net.core.somaxconn=1\"]\nrevert = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(c.configs.len(), 3);
        assert!(c.configs[1].builtin);
        assert!(!c.configs[2].builtin);
        assert_eq!(c.configs[2].apply, ["sysctl -w net.core.somaxconn=1"]);
        let e = parse("[[config]]\nname = \"pf\"\n").unwrap_err();
        assert!(e.is_usage());
        assert!(
            e.to_string().starts_with("unknown configuration 'pf'"),
            "{e}"
        );
        let e = parse("[[config]]\nname = \"a.b\"\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid configuration name 'a.b'"),
            "{e}"
        );
        let e = parse("[[config]]\nname = \"rps\"\n[[config]]\nname = \"rps\"\n").unwrap_err();
        assert_eq!(e.to_string(), "configuration 'rps' is defined twice");
    }

    #[test]
    fn knob_sweeps_are_configurations() {
        // A sweep alone: its values are the configurations, in order.
        let c = parse("[[sweep]]\nknob = \"netdev_max_backlog\"\nvalues = [1000, 4000, 2000]\n")
            .unwrap();
        let names: Vec<&str> = c.configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "netdev_max_backlog-1000",
                "netdev_max_backlog-4000",
                "netdev_max_backlog-2000"
            ]
        );
        // The built-in host sysctl configurations, saved and restored.
        assert!(c.configs[0].builtin);
        assert_eq!(
            c.configs[1].apply,
            ["\"${PKTLAB:-pktlab}\" knob host-sysctl set net.core.netdev_max_backlog=4000"]
        );
        let s = &c.knob_sweeps[0];
        assert_eq!(
            (s.knob.as_str(), s.label.as_str()),
            ("netdev_max_backlog", "netdev_max_backlog")
        );
        assert_eq!(s.values, ["1000", "4000", "2000"]);
        assert!(s.numeric);
        assert_eq!(c.plan().len(), 3 * 5);
        assert!(c.sweep_probes().is_empty());

        // After the [[config]] ones; a qdisc on both DUT ports.
        let mut c = parse(
            "[[config]]\nname = \"forwarding\"\n[[sweep]]\nknob = \"qdisc:pfifo:limit\"\nvalues = [10, 100]\n",
        )
        .unwrap();
        let names: Vec<&str> = c.configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["forwarding", "pfifo-limit-10", "pfifo-limit-100"]);
        assert_eq!(
            c.configs[2].apply,
            [
                "tc qdisc replace dev d0 root pfifo limit 100",
                "tc qdisc replace dev d1 root pfifo limit 100"
            ]
        );
        assert_eq!(
            c.sweep_probes(),
            ["tc qdisc show dev d0 root; tc qdisc show dev d1 root"]
        );
        // Nothing to read for a qdisc: the revert is known.
        c.read_sweep_reverts(|l| panic!("read {l}")).unwrap();
        assert_eq!(c.configs[1].revert.len(), 2);

        // A DUT sysctl's revert is what the DUT has before the first run;
        // on resume, what the first invocation read.
        let mut c =
            parse("[[sweep]]\nknob = \"net.ipv4.neigh.default.gc_thresh1\"\nvalues = [128, 256]\n")
                .unwrap();
        assert!(c.configs[0].revert.is_empty());
        c.read_sweep_reverts(|l| {
            assert_eq!(l, "sysctl -n net.ipv4.neigh.default.gc_thresh1");
            Ok("64\n".into())
        })
        .unwrap();
        assert_eq!(c.configs[0].name, "gc_thresh1-128");
        assert_eq!(
            c.configs[0].apply,
            ["sysctl -qw net.ipv4.neigh.default.gc_thresh1=128"]
        );
        assert_eq!(
            c.configs[1].revert,
            ["sysctl -qw 'net.ipv4.neigh.default.gc_thresh1=64'"]
        );
        let mut recorded = c.configs.clone();
        recorded[1].revert = vec!["sysctl -qw 'net.ipv4.neigh.default.gc_thresh1=32'".into()];
        c.adopt_sweep_reverts(&recorded);
        assert_eq!(c.configs[1].revert, recorded[1].revert);
        assert_eq!(
            c.sweep_probes(),
            ["sysctl net.ipv4.neigh.default.gc_thresh1"]
        );

        // Bad sweeps are usage errors, one line each.
        let bad = |text: &str| {
            let e = parse(text).unwrap_err();
            assert!(e.is_usage(), "{e}");
            e.to_string()
        };
        assert_eq!(
            bad("[[sweep]]\nknob = \"netdev_max_backlog\"\nvalues = [1000]\n"),
            "invalid configuration 'netdev_max_backlog': a sweep needs at least two values"
        );
        assert!(bad("[[sweep]]\nvalues = [1, 2]\n").contains("needs a knob"));
        assert!(
            bad("[[sweep]]\nknob = \"dev_weight\"\nname = \"w\"\nvalues = [1, 2]\n")
                .contains("either a knob, or a name")
        );
        assert_eq!(
            bad("[[config]]\nname = \"dev_weight-64\"\n[[sweep]]\nknob = \"dev_weight\"\nvalues = [64, 128]\n"),
            "configuration 'dev_weight-64' is defined twice (once by a sweep)"
        );
        // An interfaces lab: ethtool needs the DUT's ports; a host sysctl is
        // the DUT host's own sysctl.
        let lab = "[lab]\nkind = \"interfaces\"\ngen_iface = \"eth1\"\nrcv_iface = \"eth2\"\ndut_in_mac = \"00:1b:21:c4:95:7a\"\ndut = \"ssh root@dut\"\n";
        assert_eq!(
            bad(&format!(
                "{lab}[[sweep]]\nknob = \"ethtool-C:rx-usecs\"\nvalues = [0, 8]\n"
            )),
            "sweeping ethtool-C:rx-usecs needs the DUT's ports: give them as [lab] dut_ifaces"
        );
        let c = parse(&format!(
            "{lab}[[sweep]]\nknob = \"dev_weight\"\nvalues = [64, 128]\n"
        ))
        .unwrap();
        assert_eq!(c.configs[0].name, "dev_weight-64");
        assert_eq!(c.configs[0].apply, ["sysctl -qw net.core.dev_weight=64"]);
        assert!(!c.configs[0].builtin);
    }

    #[test]
    fn interfaces_lab() {
        let c = parse(
            "[lab]\nkind = \"interfaces\"\ngen_iface = \"eth1\"\nrcv_iface = \"eth2\"\ndut_in_mac = \"00:1b:21:c4:95:7a\"\ndut = \"ssh root@dut\"\nssh_options = [\"-p\", \"22\"]\n[[config]]\nname = \"base\"\n",
        )
        .unwrap();
        let LabChoice::Interfaces { lab, .. } = &c.lab else {
            panic!("not an interfaces lab");
        };
        assert_eq!(lab.dut_in_mac, [0x00, 0x1b, 0x21, 0xc4, 0x95, 0x7a]);
        assert_eq!(
            lab.dut,
            DutRunner::Ssh {
                host: "root@dut".into(),
                options: vec!["-p".into(), "22".into()]
            }
        );
        // A name alone on real interfaces is just "as it is".
        assert!(c.configs[0].apply.is_empty());
        let e = parse("[lab]\nkind = \"interfaces\"\ngen_iface = \"eth1\"\n").unwrap_err();
        assert_eq!(e.to_string(), "[lab] kind = \"interfaces\" needs rcv_iface");
        let e = parse("[lab]\ndut = \"local\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[lab] dut is for kind = \"interfaces\", not the built-in lab"
        );
        assert!(dut_runner("telnet x", &[]).is_err());
    }

    #[test]
    fn hosts_and_several_generators() {
        let c = parse(
            "[lab]\nkind = \"interfaces\"\nrcv_iface = \"r0\"\nrcv_host = \"root@c\"\n\
             dut_in_mac = \"00:1b:21:c4:95:7a\"\nssh_config = \"/x/cfg\"\ndut = \"ssh b\"\n\
             [[lab.generator]]\nhost = \"a\"\niface = \"g0\"\n\
             [[lab.generator]]\niface = \"g1\"\nnetns = \"n\"\n",
        )
        .unwrap();
        let LabChoice::Interfaces { lab, hosts, .. } = &c.lab else {
            panic!("not an interfaces lab");
        };
        assert_eq!(hosts.rcv_host.as_deref(), Some("root@c"));
        assert_eq!(hosts.gen_host, None);
        assert_eq!(hosts.generators.len(), 2);
        assert_eq!(hosts.generators[0].host.as_deref(), Some("a"));
        assert_eq!(hosts.generators[1].host, None);
        assert_eq!(hosts.generators[1].port, Port::new("g1", Some("n")));
        // The first generator stands for the lab's generator port.
        assert_eq!(lab.gen, Port::new("g0", None));
        // The DUT's ssh reads the same client configuration.
        assert_eq!(
            lab.dut,
            DutRunner::Ssh {
                host: "b".into(),
                options: vec!["-F".into(), "/x/cfg".into()]
            }
        );
        let base = "[lab]\nkind = \"interfaces\"\nrcv_iface = \"r0\"\ndut_in_mac = \"00:1b:21:c4:95:7a\"\n";
        for (extra, msg) in [
            (
                "gen_iface = \"g0\"\n[[lab.generator]]\niface = \"g1\"\n",
                "[lab] has both gen_iface and [[lab.generator]]: name every generator in a [[lab.generator]]",
            ),
            (
                "gen_iface = \"g0\"\ngen_host = \"-oProxyCommand=x\"\n",
                "invalid [lab] gen_host '-oProxyCommand=x': give an ssh destination like root@gen1",
            ),
        ] {
            let e = parse(&format!("{base}{extra}")).unwrap_err();
            assert!(e.is_usage());
            assert_eq!(e.to_string(), msg);
        }
        let e = parse("[lab]\nrcv_host = \"c\"\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[lab] rcv_host is for kind = \"interfaces\", not the built-in lab"
        );
    }

    #[test]
    fn the_example_campaigns_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/campaigns");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let file =
                CampaignFile::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let c = Plan::from_file(&file, 4).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!c.plan().is_empty());
            n += 1;
        }
        assert!(n >= 4);
    }

    #[test]
    fn bad_settings() {
        for (text, start) in [
            ("[run]\niterations = 0\n", "invalid iteration count 0"),
            (
                "[run]\nduration = \"1.5s\"\nwarmup = \"1s\"\ntail = \"1s\"\n",
                "invalid duration '1.5s'",
            ),
            ("[run]\norder = \"zigzag\"\n", "invalid order 'zigzag'"),
            (
                "[run]\ndrop_trace = \"maybe\"\n",
                "invalid drop trace 'maybe': use auto, on or off",
            ),
            ("[[traffic]]\nname = \"x\"\nsize = \"63\"\n", ""),
            ("[[traffic]]\nname = \"x\"\nrate = \"50%\"\n", ""),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.is_usage(), "{text}: {e}");
            assert!(e.to_string().starts_with(start), "{text}: {e}");
        }
    }
}
