//! The lab a campaign runs on: the built-in namespace lab, or existing
//! interfaces cabled to a real DUT. Both come down to the same things: a
//! generator port, a receiver port, the MACs to address, the interfaces to
//! watch, and a DUT whose configuration commands can be run.

use pktlab_lab::dut::{self, Dut, DutRunner};
use pktlab_lab::envinfo::{self, NicFacts};
use pktlab_lab::interrupts::{self, NicIrqMatch};
use pktlab_lab::ports::{InterfaceLab, Port};
use pktlab_lab::{BuiltinLab, CpuPlan, IfRole, LabSpec, UpOutcome};
use pktlab_loss::drops::{LabNamespaces, LabView, NsAt};
use pktlab_loss::monitor::{Sampled, Watched};
use pktlab_remote::ssh::clock::{latency_note, run_latency_note, Clocks, HostClock, CLOCK_SCRIPT};
use pktlab_remote::ssh::observe::Observer;
use pktlab_remote::ssh::{ControlDir, GenPart, Generators, Remote, SshHost};
use pktlab_remote::worker::protocol::RolePort;
use std::path::PathBuf;
use std::time::Duration;

use crate::TrialError;

/// Which lab.
#[derive(Clone, Debug)]
pub enum LabKind {
    Builtin(Box<BuiltinLab>),
    Interfaces(InterfaceLab),
}

/// A lab ready to run trials on.
#[derive(Clone, Debug)]
pub struct Target {
    pub kind: LabKind,
    /// The generator's port and the MACs of the frames it sends.
    pub gen: Port,
    pub rcv: Port,
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub watched: Vec<Watched>,
    /// How to find the watched NICs' interrupts (none on veth).
    pub irqs: Vec<NicIrqMatch>,
    pub dut: Dut,
    /// The built-in lab's CPU plan: the generator and receiver threads run
    /// on its tester CPUs.
    pub cpus: Option<CpuPlan>,
    /// The generator's host, when it is not this one.
    pub gen_remote: Option<Remote>,
    /// The receiver's host, when it is not this one.
    pub rcv_remote: Option<Remote>,
    /// Several generators sharing the traffic, when there are.
    pub generators: Option<Generators>,
    /// The other hosts whose interfaces (and, for the DUT, CPUs and
    /// interrupts) every trial records, read there by a worker.
    pub observers: Vec<Observer>,
    /// Why a remote DUT's counters are not recorded, when they are not.
    pub observe_note: Option<String>,
    /// Other hosts' lab ports that have no device (veth): no interrupts
    /// (`g0 on hosta`).
    pub remote_without_irqs: Vec<String>,
}

/// The built-in lab's DUT ports.
pub const BUILTIN_DUT_IFACES: [&str; 2] = ["d0", "d1"];

impl Target {
    /// The built-in lab for `spec`: brought up (or repaired), its DUT reset
    /// to `forwarding`. Returns what `up` did too.
    pub fn builtin(spec: LabSpec) -> Result<(Target, UpOutcome), TrialError> {
        let cpus = spec.cpus.clone();
        let base = cpus.as_ref().map(CpuPlan::builtin_base).unwrap_or_default();
        let lab = BuiltinLab::new(spec)?;
        let outcome = lab.up()?;
        let dut = Dut::new(
            DutRunner::Netns {
                netns: lab.dut_ns().to_string(),
            },
            Some(dut::builtin_state_probe(&BUILTIN_DUT_IFACES)),
        );
        // A campaign killed with a configuration applied leaves it behind;
        // `up` repairs sysctls, routes and neighbours but knows nothing of
        // nftables, RPS or GRO. The reset returns the DUT's ports to the
        // CPU plan's masks and GRO; the tester's ports are not the DUT's
        // business, so the plan is applied again as a whole.
        for line in dut::builtin_reset(&BUILTIN_DUT_IFACES, &base) {
            dut.runner.run(&line)?;
        }
        lab.steer()?;
        let problems = lab.problems()?;
        if !problems.is_empty() {
            return Err(TrialError::Failed(format!(
                "lab {} is not in its forwarding state after a reset: {}",
                lab.prefix(),
                problems.join("; ")
            )));
        }
        let watched = IfRole::ALL
            .iter()
            .map(|&role| {
                let i = lab.iface(role);
                Watched {
                    role: role_name(role).to_string(),
                    port: Port::new(i.name, Some(&i.ns)),
                }
            })
            .collect();
        let target = Target {
            gen: Port::new(lab.gen_if(), Some(lab.gen_ns())),
            rcv: Port::new(lab.rcv_if(), Some(lab.rcv_ns())),
            src_mac: lab.gen_mac(),
            dst_mac: lab.dut_in_mac(),
            watched,
            irqs: Vec::new(),
            dut,
            cpus,
            kind: LabKind::Builtin(Box::new(lab)),
            gen_remote: None,
            rcv_remote: None,
            generators: None,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: Vec::new(),
        };
        Ok((target.with_irqs()?, outcome))
    }

    /// What the lab's counters are read from: its own interfaces and
    /// this host's CPUs.
    pub fn sampled(&self) -> Sampled<'_> {
        Sampled {
            watched: &self.watched,
            irqs: &self.irqs,
            cpus: true,
        }
    }

    /// The lab as loss accounting sees it: its namespaces by side and
    /// host, the receiver's port, whether its ports are veth pairs, and
    /// the DUT's CPUs.
    pub fn loss_view(&self) -> LabView {
        LabView {
            namespaces: self.namespaces(),
            rcv: self.rcv.clone(),
            veth: self.is_virtual(),
            cpus: self.cpus.clone(),
        }
    }

    /// The lab's namespaces as the tracers name them: the generators' and
    /// the receiver's are the tester's, the DUT ports' (here or on a host
    /// a worker observes) the DUT's.
    fn namespaces(&self) -> LabNamespaces {
        let dest = |r: &Option<Remote>| r.as_ref().map(|r| r.host.dest().to_string());
        let gen = match &self.generators {
            Some(g) => g
                .parts
                .iter()
                .map(|p| NsAt::of_port(dest(&p.remote).as_deref(), &p.port.netns))
                .collect(),
            None => vec![NsAt::of_port(
                dest(&self.gen_remote).as_deref(),
                &self.gen.netns,
            )],
        };
        let local_dut = self
            .watched
            .iter()
            .filter(|w| w.role.starts_with("dut"))
            .map(|w| NsAt::of_port(None, &w.port.netns));
        let remote_dut = self.observers.iter().flat_map(|o| {
            o.ports
                .iter()
                .filter(|p| p.role.starts_with("dut"))
                .map(|p| NsAt::of_port(Some(o.host.dest()), &p.netns))
        });
        LabNamespaces {
            gen,
            rcv: NsAt::of_port(dest(&self.rcv_remote).as_deref(), &self.rcv.netns),
            dut: local_dut.chain(remote_dut).collect(),
        }
    }

    /// A lab on existing interfaces; fails when a port is missing or down.
    pub fn interfaces(
        lab: InterfaceLab,
        state_probe: Option<String>,
    ) -> Result<Target, TrialError> {
        let problems = lab.problems()?;
        if !problems.is_empty() {
            return Err(TrialError::Failed(problems.join("; ")));
        }
        let src_mac = lab.gen.mac()?;
        let watched = vec![
            Watched {
                role: "gen".into(),
                port: lab.gen.clone(),
            },
            Watched {
                role: "rcv".into(),
                port: lab.rcv.clone(),
            },
        ];
        let target = Target {
            gen: lab.gen.clone(),
            rcv: lab.rcv.clone(),
            src_mac,
            dst_mac: lab.dut_in_mac,
            watched,
            irqs: Vec::new(),
            dut: Dut::new(lab.dut.clone(), state_probe),
            cpus: None,
            kind: LabKind::Interfaces(lab),
            gen_remote: None,
            rcv_remote: None,
            generators: None,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: Vec::new(),
        };
        target.with_local_dut_ports()?.with_irqs()
    }

    /// A DUT whose commands run here or in a namespace of this host
    /// (`dut = "local"`, `"netns NAME"`) has its `dut_ifaces` watched here
    /// like the tester's ports, as the built-in lab's are (roles `dut_in`,
    /// `dut_out`, then `dut3`, ...), between the generator's and the
    /// receiver's. A missing or down one stops the campaign now.
    fn with_local_dut_ports(mut self) -> Result<Target, TrialError> {
        let LabKind::Interfaces(lab) = &self.kind else {
            return Ok(self);
        };
        let ns = match &self.dut.runner {
            pktlab_lab::dut::DutRunner::Local => None,
            pktlab_lab::dut::DutRunner::Netns { netns } => Some(netns.clone()),
            pktlab_lab::dut::DutRunner::Ssh { .. } => return Ok(self),
        };
        let mut ports = Vec::new();
        let mut problems = Vec::new();
        for (i, iface) in lab.dut_ifaces.iter().enumerate() {
            let port = Port::new(iface, ns.as_deref());
            problems.extend(port.problem()?);
            ports.push(Watched {
                role: dut_role(i),
                port,
            });
        }
        if !problems.is_empty() {
            return Err(TrialError::Failed(problems.join("; ")));
        }
        let at = self
            .watched
            .iter()
            .position(|w| w.role == "rcv")
            .unwrap_or(self.watched.len());
        self.watched.splice(at..at, ports);
        Ok(self)
    }

    /// A lab on existing interfaces whose generator(s) and/or receiver run
    /// on other hosts (ssh destinations; `None`: here). `generators`, when
    /// not empty, replaces `gen_host` and the lab's generator port: several
    /// generators that share the traffic. Before anything is sent, every
    /// host is reached and its port probed: an unreachable host, a refused
    /// login, a wrong host key, a missing or down interface is one line
    /// naming the host. `run_limit` bounds a run: remote workers stop on
    /// their own after it (and a grace period).
    #[allow(clippy::too_many_arguments)]
    pub fn interfaces_on_hosts(
        lab: InterfaceLab,
        state_probe: Option<String>,
        gen_host: Option<&str>,
        rcv_host: Option<&str>,
        ssh_config: Option<&str>,
        generators: &[(Option<String>, Port)],
        run_limit: Duration,
    ) -> Result<Target, TrialError> {
        let control = ControlDir::new()?;
        if gen_host.is_none() && rcv_host.is_none() && generators.is_empty() {
            return Target::interfaces(lab, state_probe)?.with_dut_observer(&control, run_limit);
        }
        let remote = |dest: Option<&str>| {
            dest.map(|d| Remote {
                host: SshHost::new(
                    d,
                    ssh_config.map(PathBuf::from),
                    Vec::new(),
                    control.clone(),
                ),
                run_limit,
            })
        };
        let gens: Vec<(Option<&str>, &Port)> = if generators.is_empty() {
            vec![(gen_host, &lab.gen)]
        } else {
            generators.iter().map(|(h, p)| (h.as_deref(), p)).collect()
        };
        let rcv_remote = remote(rcv_host);
        let mut problems = Vec::new();
        let mut parts = Vec::new();
        let mut without_irqs = Vec::new();
        let sides = gens.iter().map(|(h, p)| (true, *p, remote(*h))).chain([(
            false,
            &lab.rcv,
            rcv_remote.clone(),
        )]);
        for (is_gen, port, remote) in sides {
            let mac = end_mac(
                is_gen,
                port,
                remote.as_ref(),
                &mut problems,
                &mut without_irqs,
            )?;
            if let (true, Some(src_mac)) = (is_gen, mac) {
                parts.push(GenPart {
                    remote,
                    port: port.clone(),
                    src_mac,
                });
            }
        }
        if !problems.is_empty() {
            return Err(TrialError::Failed(problems.join("; ")));
        }
        let watched = watched_ends(&parts, rcv_remote.is_none(), &lab.rcv);
        let (gen_remote, several) = if parts.len() == 1 {
            (parts[0].remote.clone(), None)
        } else {
            (
                None,
                Some(Generators {
                    parts: parts.clone(),
                }),
            )
        };
        let target = Target {
            gen: parts[0].port.clone(),
            rcv: lab.rcv.clone(),
            src_mac: parts[0].src_mac,
            dst_mac: lab.dut_in_mac,
            watched,
            irqs: Vec::new(),
            dut: Dut::new(lab.dut.clone(), state_probe),
            cpus: None,
            kind: LabKind::Interfaces(lab),
            gen_remote,
            rcv_remote,
            generators: several,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: without_irqs,
        };
        target
            .with_local_dut_ports()?
            .with_irqs()?
            .with_observers(&parts, run_limit)
            .with_dut_observer(&control, run_limit)
    }

    /// A worker on each remote generator's and receiver's host watches its
    /// ports (one per host).
    fn with_observers(mut self, parts: &[GenPart], run_limit: Duration) -> Target {
        let mut sides: Vec<(&Remote, String, &Port)> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            if let Some(r) = &part.remote {
                let role = if i == 0 {
                    "gen".to_string()
                } else {
                    format!("gen{}", i + 1)
                };
                sides.push((r, role, &part.port));
            }
        }
        if let Some(r) = &self.rcv_remote {
            sides.push((r, "rcv".into(), &self.rcv));
        }
        let mut observers: Vec<Observer> = Vec::new();
        for (r, role, port) in sides {
            let p = RolePort {
                role: role.clone(),
                iface: port.iface.clone(),
                netns: port.netns.clone(),
            };
            let short = role.trim_end_matches(char::is_numeric).to_string();
            match observers
                .iter_mut()
                .find(|o| o.host.dest() == r.host.dest())
            {
                Some(o) => {
                    o.ports.push(p);
                    if !o.role.split('+').any(|x| x == short) {
                        o.role = format!("{}+{short}", o.role);
                    }
                }
                None => observers.push(Observer {
                    host: r.host.clone(),
                    role: short,
                    ports: vec![p],
                    cpus: false,
                    run_limit,
                }),
            }
        }
        self.observers = observers;
        self
    }

    /// A DUT reached over ssh (`dut = "ssh HOST"`) is watched by a worker
    /// on it: its ports (`dut_ifaces`: `dut_in`, `dut_out`, then `dut3`,
    /// ...), its per-CPU load and its interrupts. Its ports are probed
    /// now, so that a missing one stops the campaign before any traffic.
    /// A DUT that is not Linux has no worker: a note says so.
    fn with_dut_observer(
        mut self,
        control: &std::sync::Arc<ControlDir>,
        run_limit: Duration,
    ) -> Result<Target, TrialError> {
        let (dut_ifaces, host, options) = match (&self.kind, &self.dut.runner) {
            (LabKind::Interfaces(lab), pktlab_lab::dut::DutRunner::Ssh { host, options }) => {
                (lab.dut_ifaces.clone(), host.clone(), options.clone())
            }
            _ => return Ok(self),
        };
        let shared = self.observers.iter().position(|o| o.host.dest() == host);
        let ssh = match shared {
            Some(i) => self.observers[i].host.clone(),
            None => SshHost::new(&host, None, options, control.clone()),
        };
        let system = ssh.run("uname -s")?;
        if system.trim() != "Linux" {
            self.observe_note = Some(format!(
                "the DUT {host} runs {}: its counters, CPU load and interrupts are not recorded (pktlab's worker runs on Linux)",
                system.trim()
            ));
            return Ok(self);
        }
        let remote = Remote {
            host: ssh.clone(),
            run_limit,
        };
        let mut ports = Vec::new();
        for (i, iface) in dut_ifaces.iter().enumerate() {
            if !remote.probe(iface, None)?.device {
                self.remote_without_irqs
                    .push(format!("{iface} on {}", ssh.dest()));
            }
            ports.push(RolePort {
                role: dut_role(i),
                iface: iface.clone(),
                netns: None,
            });
        }
        match shared {
            Some(i) => {
                let o = &mut self.observers[i];
                o.ports.extend(ports);
                o.cpus = true;
                o.role = format!("{}+dut", o.role);
            }
            None => self.observers.push(Observer {
                host: ssh,
                role: "dut".into(),
                ports,
                cpus: true,
                run_limit,
            }),
        }
        Ok(self)
    }

    fn with_irqs(mut self) -> Result<Target, TrialError> {
        let mut irqs = Vec::new();
        for w in &self.watched {
            if let Some(m) = interrupts::nic_irq_match(w.port.netns.as_deref(), &w.port.iface)? {
                irqs.push(m);
            }
        }
        self.irqs = irqs;
        Ok(self)
    }

    /// The clocks of the lab's hosts and what they mean for one-way
    /// latency, when the generator or the receiver is on another host
    /// (None: everything runs here on one clock).
    pub fn clocks(&self) -> Option<Clocks> {
        let (gens, rcv) = self.clock_sides()?;
        let mut hosts: Vec<HostClock> = Vec::new();
        for (host, r) in gens.iter().chain([&rcv]) {
            if hosts.iter().any(|h| &h.host == host) {
                continue;
            }
            let text = match r {
                Some(r) => r.host.run(CLOCK_SCRIPT).unwrap_or_default(),
                None => std::process::Command::new("sh")
                    .args(["-c", CLOCK_SCRIPT])
                    .stdin(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default(),
            };
            hosts.push(HostClock::from_report(host, &text));
        }
        let mut notes: Vec<String> = Vec::new();
        for (g, _) in &gens {
            let note = latency_note(&hosts, g, &rcv.0);
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        Some(Clocks {
            hosts,
            latency: notes.join("; "),
        })
    }

    /// The generators' hosts and the receiver's, by name (`here`, or the
    /// ssh destination); None when all run here.
    #[allow(clippy::type_complexity)]
    fn clock_sides(&self) -> Option<(Vec<(String, Option<&Remote>)>, (String, Option<&Remote>))> {
        let gens: Vec<&Option<Remote>> = match &self.generators {
            Some(g) => g.parts.iter().map(|p| &p.remote).collect(),
            None => vec![&self.gen_remote],
        };
        if gens.iter().all(|g| g.is_none()) && self.rcv_remote.is_none() {
            return None;
        }
        fn side(r: &Option<Remote>) -> (String, Option<&Remote>) {
            (
                r.as_ref()
                    .map_or("here".to_string(), |r| r.host.dest().to_string()),
                r.as_ref(),
            )
        }
        Some((gens.into_iter().map(side).collect(), side(&self.rcv_remote)))
    }

    /// What a run's one-way latency (the smallest the receiver measured:
    /// `min_latency_ns`) is worth when the generator and the receiver are
    /// on different hosts: the clocks read now, and
    /// [`pktlab_remote::ssh::clock::run_latency_note`] for every generator's host;
    /// a "not comparable" one wins. None when they share one clock.
    pub fn run_latency_note(&self, min_latency_ns: u64) -> Option<String> {
        let (gens, rcv) = self.clock_sides()?;
        let clocks = self.clocks()?;
        let mut notes: Vec<String> = Vec::new();
        for (g, _) in &gens {
            if let Some(n) = run_latency_note(&clocks.hosts, g, &rcv.0, min_latency_ns) {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        let worst = notes.iter().find(|n| n.starts_with("not comparable"));
        worst.or(notes.first()).cloned()
    }

    /// One line per port, read again where it is: its host, MAC, MTU and
    /// state (for `pktlab lab check`).
    pub fn port_lines(&self) -> Result<Vec<String>, TrialError> {
        let mut out = Vec::new();
        let mut ports = match &self.generators {
            Some(g) => g
                .parts
                .iter()
                .map(|p| ("generator", &p.port, &p.remote))
                .collect(),
            None => vec![("generator", &self.gen, &self.gen_remote)],
        };
        ports.push(("receiver", &self.rcv, &self.rcv_remote));
        for (role, port, remote) in ports {
            let (mac, mtu, up, place) = match remote {
                Some(r) => {
                    let f = r.probe(&port.iface, port.netns.as_deref())?;
                    let at = format!("on {} (pktlab: {})", r.host.dest(), r.host.pktlab()?);
                    (f.mac, f.mtu, f.up, at)
                }
                None => {
                    let name = port.iface.clone();
                    let facts = move || {
                        pktlab_io::iface::lookup(&name)
                            .and_then(|i| pktlab_io::iface::is_up(&name).map(|up| (i, up)))
                    };
                    let found = match &port.netns {
                        Some(ns) => pktlab_lab::netns::within(ns, facts)?,
                        None => facts(),
                    };
                    let (i, up) = found.map_err(|e| {
                        TrialError::Failed(format!("interface {}: {e}", port.describe()))
                    })?;
                    (i.mac, i.mtu, up, "here".to_string())
                }
            };
            out.push(format!(
                "{role}: {} {place}: MAC {}, MTU {mtu}, {}",
                port.describe(),
                pktlab_lab::mac::format_mac(mac),
                if up { "up" } else { "down" }
            ));
        }
        Ok(out)
    }

    /// What broke in the lab, one short sentence each (empty when it is
    /// whole): on the built-in lab a namespace or interface gone or down,
    /// or forwarding off; on real interfaces a port gone or down.
    pub fn faults(&self) -> Result<Vec<String>, TrialError> {
        Ok(match &self.kind {
            LabKind::Builtin(lab) => lab.faults()?,
            LabKind::Interfaces(lab) => {
                // Ports on other hosts are their workers' to check.
                let mut out = Vec::new();
                if self.gen_remote.is_none() && self.generators.is_none() {
                    out.extend(lab.gen.problem()?);
                }
                if self.rcv_remote.is_none() {
                    out.extend(lab.rcv.problem()?);
                }
                out
            }
        })
    }

    /// True for the built-in lab, whose generator, DUT and receiver share
    /// this host's CPUs.
    pub fn is_virtual(&self) -> bool {
        matches!(self.kind, LabKind::Builtin(_))
    }

    /// The DUT's port names (for built-in configurations and facts).
    pub fn dut_ifaces(&self) -> Vec<String> {
        match &self.kind {
            LabKind::Builtin(_) => BUILTIN_DUT_IFACES.iter().map(|s| s.to_string()).collect(),
            LabKind::Interfaces(l) => l.dut_ifaces.clone(),
        }
    }

    /// CPUs the generator's and receiver's threads are pinned to (empty:
    /// not pinned).
    pub fn tester_cpus(&self) -> Vec<usize> {
        match &self.cpus {
            Some(p) if !p.is_shared() => p.tester_cpus.clone(),
            _ => Vec::new(),
        }
    }

    /// Why there are no interrupt counts, when there are none (and why a
    /// remote DUT's counters are not recorded).
    pub fn interrupts_note(&self) -> Option<String> {
        let veth = self.veth_note();
        match (&self.observe_note, veth) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.clone().or(b),
        }
    }

    fn veth_note(&self) -> Option<String> {
        let without: Vec<String> = self
            .watched
            .iter()
            .filter(|w| !self.irqs.iter().any(|m| m.iface == w.port.iface))
            .map(|w| w.port.describe())
            .chain(self.remote_without_irqs.iter().cloned())
            .collect();
        (!without.is_empty()).then(|| {
            format!(
                "no interrupts for {}: virtual interfaces (veth) have no device and raise none",
                without.join(", ")
            )
        })
    }

    /// Drivers of every watched interface, then of the DUT's ports when its
    /// commands can reach them.
    pub fn nic_facts(&self) -> Vec<NicFacts> {
        let interfaces = matches!(self.kind, LabKind::Interfaces(_));
        let mut v: Vec<NicFacts> = self
            .watched
            .iter()
            // An interface lab's DUT ports have their `dut:` entries below.
            .filter(|w| !(interfaces && w.role.starts_with("dut")))
            .map(|w| {
                envinfo::nic_facts(w.port.netns.as_deref(), &w.port.iface).unwrap_or_else(|_| {
                    NicFacts {
                        ns: w.port.netns.clone(),
                        iface: w.port.iface.clone(),
                        ..NicFacts::default()
                    }
                })
            })
            .collect();
        if let LabKind::Interfaces(l) = &self.kind {
            for i in &l.dut_ifaces {
                let mut f = NicFacts {
                    iface: format!("dut:{i}"),
                    ..NicFacts::default()
                };
                if let Ok(text) = self.dut.runner.run(&format!("ethtool -i {i}")) {
                    envinfo::parse_ethtool_i(&text, &mut f);
                }
                v.push(f);
            }
        }
        v
    }

    /// `uname -a` of the DUT, when it is another machine.
    pub fn dut_uname(&self) -> Option<String> {
        match &self.dut.runner {
            DutRunner::Ssh { .. } => self
                .dut
                .runner
                .run("uname -a")
                .ok()
                .map(|s| s.trim().to_string()),
            _ => None,
        }
    }

    /// A short description for headers: `built-in lab pktlab` or
    /// `eth1 -> DUT -> eth2`.
    pub fn describe(&self) -> String {
        match &self.kind {
            LabKind::Builtin(l) => format!("built-in lab {}", l.prefix()),
            LabKind::Interfaces(l) => format!(
                "{} -> DUT ({}) -> {}",
                match &self.generators {
                    Some(g) => g
                        .parts
                        .iter()
                        .map(|p| on_host(&p.port, &p.remote))
                        .collect::<Vec<_>>()
                        .join(" + "),
                    None => on_host(&l.gen, &self.gen_remote),
                },
                l.dut
                    .describe()
                    .trim_start_matches("in ")
                    .trim_start_matches("on "),
                on_host(&l.rcv, &self.rcv_remote)
            ),
        }
    }
}

/// `eth1`, or `eth1 on root@gen1` for a port on another host.
fn on_host(port: &Port, remote: &Option<Remote>) -> String {
    match remote {
        Some(r) => format!("{} on {}", port.describe(), r.host.dest()),
        None => port.describe(),
    }
}

/// The role of the DUT's `i`th port of `dut_ifaces`.
fn dut_role(i: usize) -> String {
    match i {
        0 => "dut_in".into(),
        1 => "dut_out".into(),
        n => format!("dut{}", n + 1),
    }
}

fn role_name(role: IfRole) -> &'static str {
    match role {
        IfRole::Gen => "gen",
        IfRole::DutIn => "dut_in",
        IfRole::DutOut => "dut_out",
        IfRole::Rcv => "rcv",
    }
}

/// The MAC of a trial's end when it is a generator (None for the
/// receiver, or a port with a problem): a port here is checked here, one
/// on a host by its worker. Problems and ports without interrupts to
/// watch are added to `problems` and `without_irqs`.
fn end_mac(
    is_gen: bool,
    port: &Port,
    remote: Option<&Remote>,
    problems: &mut Vec<String>,
    without_irqs: &mut Vec<String>,
) -> Result<Option<[u8; 6]>, TrialError> {
    Ok(match remote {
        None => {
            let problem = port.problem()?;
            let ok = problem.is_none();
            problems.extend(problem);
            if is_gen && ok {
                Some(port.mac()?)
            } else {
                None
            }
        }
        Some(r) => {
            r.host.pktlab()?;
            let facts = r.probe(&port.iface, port.netns.as_deref())?;
            if !facts.device {
                without_irqs.push(format!("{} on {}", port.iface, r.host.dest()));
            }
            if !facts.up {
                problems.push(format!(
                    "{}: interface {} is down",
                    r.host.label(),
                    port.describe()
                ));
            }
            Some(facts.mac)
        }
    })
}

/// The ports this host watches: its generators' and the receiver's when
/// it is here (`rcv_here`); a remote port's own counters come in its
/// worker's summary.
fn watched_ends(parts: &[GenPart], rcv_here: bool, rcv: &Port) -> Vec<Watched> {
    let mut watched = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if part.remote.is_none() {
            watched.push(Watched {
                role: if i == 0 {
                    "gen".into()
                } else {
                    format!("gen{}", i + 1)
                },
                port: part.port.clone(),
            });
        }
    }
    if rcv_here {
        watched.push(Watched {
            role: "rcv".into(),
            port: rcv.clone(),
        });
    }
    watched
}
