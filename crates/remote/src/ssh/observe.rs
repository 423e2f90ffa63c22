//! The lab's other hosts watched while a trial runs: a `pktlab worker`
//! with an observe task on each (protocol version 2) reads that host's lab
//! interfaces every interval, and the DUT's per-CPU load and interrupts,
//! from the host itself, as [`pktlab_loss::monitor`] does here for local ports.
//! Its seconds join the trial's own by their number, its totals the
//! trial's interface counters, each marked with its host.

use std::thread::JoinHandle;
use std::time::Duration;

use pktlab_engine::StopSignal;
use pktlab_loss::drops::{self, DropTrace, Traced};
use pktlab_loss::monitor::{HostLoad, IfaceCounters, Second};

use super::host::SshHost;
use super::session::{Session, GRACE};
use crate::worker::protocol::{Job, ObserveJob, Reply, RolePort, Task, PROTOCOL_VERSION};
use crate::RemoteError;

/// One host to watch.
#[derive(Clone, Debug)]
pub struct Observer {
    pub host: SshHost,
    /// What the host is in the lab: `dut`, `gen`, `rcv`, `gen+rcv`.
    pub role: String,
    pub ports: Vec<RolePort>,
    /// Also its per-CPU load (the DUT's).
    pub cpus: bool,
    /// The longest a trial lasts: the worker stops itself after it (and
    /// a grace period).
    pub run_limit: Duration,
}

/// What one host's worker saw over a trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub host: String,
    pub role: String,
    pub seconds: Vec<Second>,
    pub totals: Vec<IfaceCounters>,
    /// The test frames the host's kernel dropped in its lab ports'
    /// namespaces (None: its tracer did not run).
    pub drops: Option<Traced>,
    /// What the user must know of the host's tracer: that it could not
    /// start, or missed drop events.
    pub warnings: Vec<String>,
}

/// The workers of a trial, counting.
pub struct Observing {
    stop: StopSignal,
    running: Vec<JoinHandle<Result<Observed, RemoteError>>>,
}

impl Observer {
    fn job(&self, interval: Duration, drop_trace: DropTrace) -> Job {
        Job {
            version: PROTOCOL_VERSION,
            task: Task::Observe(ObserveJob {
                ports: self.ports.clone(),
                cpus: self.cpus,
                interval_secs: interval.as_secs_f64(),
                drop_trace,
            }),
            deadline_secs: (self.run_limit + GRACE).as_secs_f64(),
        }
    }
}

/// Starts a worker on every host, its tracer in mode `drop_trace`, and
/// returns once each has taken its first reading (so that a trial started
/// after it is counted whole).
pub fn start(
    observers: &[Observer],
    interval: Duration,
    drop_trace: DropTrace,
) -> Result<Observing, RemoteError> {
    // Made first: on an error below, its Drop stops the workers started.
    let mut observing = Observing {
        stop: StopSignal::new(),
        running: Vec::new(),
    };
    let mut sessions = Vec::new();
    for o in observers {
        sessions.push((o, Session::open(&o.host, &o.job(interval, drop_trace))?));
    }
    for (_, s) in &mut sessions {
        s.start_now()?;
    }
    for (o, mut s) in sessions {
        match s.next(&observing.stop)? {
            Reply::Observing => {}
            other => return Err(unexpected(&o.host, &other)),
        }
        let (host, role, stop) = (o.host.clone(), o.role.clone(), observing.stop.clone());
        observing
            .running
            .push(std::thread::spawn(move || follow(s, &host, role, &stop)));
    }
    Ok(observing)
}

/// A worker's seconds until its totals.
fn follow(
    mut s: Session,
    host: &SshHost,
    role: String,
    stop: &StopSignal,
) -> Result<Observed, RemoteError> {
    let mut seconds = Vec::new();
    loop {
        match s.next(stop)? {
            Reply::Second(second) => seconds.push(second),
            Reply::Observed {
                totals,
                drops,
                drop_trace_off,
            } => {
                s.finish();
                let mut warnings = Vec::new();
                if let Some(why) = drop_trace_off {
                    warnings.push(drops::remote_off_line(&host.label(), &why));
                }
                if let Some(t) = drops.as_ref().filter(|t| t.missed > 0) {
                    warnings.push(format!(
                        "{}: {}",
                        host.label(),
                        drops::missed_line(t.missed)
                    ));
                }
                return Ok(Observed {
                    host: host.dest().to_string(),
                    role,
                    seconds,
                    totals,
                    drops,
                    warnings,
                });
            }
            other => return Err(unexpected(host, &other)),
        }
    }
}

fn unexpected(host: &SshHost, r: &Reply) -> RemoteError {
    RemoteError::Failed(format!(
        "{}: unexpected reply from the observing worker: {r:?}",
        host.label()
    ))
}

impl Observing {
    /// Stops every worker and collects what each saw; the first host that
    /// failed (lost, or its worker's error) is the error.
    pub fn finish(mut self) -> Result<Vec<Observed>, RemoteError> {
        self.stop.stop();
        let mut out = Vec::new();
        let mut first_err = None;
        for h in self.running.drain(..) {
            match h.join() {
                Ok(Ok(o)) => out.push(o),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err
                        .get_or_insert(RemoteError::Failed("an observing thread panicked".into()));
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

impl Drop for Observing {
    /// A trial that failed stops its workers too.
    fn drop(&mut self) {
        self.stop.stop();
        for h in self.running.drain(..) {
            let _ = h.join();
        }
    }
}

/// Adds what `o` saw to a trial's `seconds` (by second number; a second
/// only it has is added) and `totals`, its interfaces marked with its host.
pub fn merge(seconds: &mut Vec<Second>, totals: &mut Vec<IfaceCounters>, o: Observed) {
    let mark = |mut c: IfaceCounters| {
        c.host = Some(o.host.clone());
        c
    };
    for r in o.seconds {
        let i = match seconds.iter().position(|s| s.t == r.t) {
            Some(i) => i,
            None => {
                seconds.push(Second {
                    t: r.t,
                    seconds: r.seconds,
                    ifaces: Vec::new(),
                    cpus: Vec::new(),
                    interrupts: Vec::new(),
                    hosts: Vec::new(),
                });
                seconds.len() - 1
            }
        };
        let s = &mut seconds[i];
        s.ifaces.extend(r.ifaces.into_iter().map(mark));
        if !r.cpus.is_empty() || !r.interrupts.is_empty() {
            s.hosts.push(HostLoad {
                host: o.host.clone(),
                role: o.role.clone(),
                cpus: r.cpus,
                interrupts: r.interrupts,
            });
        }
    }
    seconds.sort_by_key(|s| s.t);
    totals.extend(o.totals.into_iter().map(mark));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_io::iface::IfCounters;
    use pktlab_lab::cpuload::CpuLoad;

    fn ifc(role: &str, iface: &str, rx: u64) -> IfaceCounters {
        IfaceCounters {
            host: None,
            role: role.into(),
            ns: None,
            iface: iface.into(),
            counters: IfCounters {
                rx_packets: rx,
                ..IfCounters::default()
            },
        }
    }

    fn second(t: usize, ifaces: Vec<IfaceCounters>, cpus: Vec<CpuLoad>) -> Second {
        Second {
            t,
            seconds: 1.0,
            ifaces,
            cpus,
            interrupts: Vec::new(),
            hosts: Vec::new(),
        }
    }

    fn load(cpu: usize, softirq: f64) -> CpuLoad {
        CpuLoad {
            cpu,
            user: 0.0,
            system: 0.0,
            irq: 0.0,
            softirq,
            steal: 0.0,
            idle: 100.0 - softirq,
        }
    }

    #[test]
    fn a_hosts_seconds_join_the_trials_by_number() {
        let mut seconds = vec![
            second(1, vec![ifc("gen", "g0", 0)], vec![load(0, 1.0)]),
            second(2, vec![ifc("gen", "g0", 0)], vec![load(0, 2.0)]),
        ];
        let mut totals = vec![ifc("gen", "g0", 0)];
        merge(
            &mut seconds,
            &mut totals,
            Observed {
                host: "hostb".into(),
                role: "dut".into(),
                seconds: vec![
                    second(1, vec![ifc("dut_in", "d0", 40)], vec![load(0, 30.0)]),
                    second(2, vec![ifc("dut_in", "d0", 50)], vec![load(0, 35.0)]),
                    second(3, vec![ifc("dut_in", "d0", 10)], Vec::new()),
                ],
                totals: vec![ifc("dut_in", "d0", 100)],
                drops: None,
                warnings: Vec::new(),
            },
        );
        assert_eq!(seconds.len(), 3);
        assert_eq!(seconds[0].ifaces.len(), 2);
        assert_eq!(seconds[0].ifaces[1].host.as_deref(), Some("hostb"));
        assert_eq!(seconds[0].ifaces[1].counters.rx_packets, 40);
        // This host's CPUs stay where they were; the DUT's are its own.
        assert_eq!(seconds[1].cpus, [load(0, 2.0)]);
        assert_eq!(
            seconds[1].hosts,
            [HostLoad {
                host: "hostb".into(),
                role: "dut".into(),
                cpus: vec![load(0, 35.0)],
                interrupts: Vec::new(),
            }]
        );
        // A third second only the DUT had, with nothing else in it.
        assert_eq!(seconds[2].t, 3);
        assert_eq!(seconds[2].ifaces.len(), 1);
        assert!(seconds[2].hosts.is_empty());
        assert_eq!(totals.len(), 2);
        assert_eq!(totals[1].host.as_deref(), Some("hostb"));
        assert_eq!(totals[1].counters.rx_packets, 100);
        // A host's marked interfaces say so in JSON; this host's do not.
        let text = serde_json::to_string(&seconds[0]).unwrap();
        assert!(
            text.contains("\"host\":\"hostb\",\"role\":\"dut_in\""),
            "{text}"
        );
        assert!(
            text.starts_with("{\"t\":1,\"seconds\":1.0,\"ifaces\":[{\"role\":\"gen\""),
            "{text}"
        );
        // A second of a file written before hosts were watched still reads.
        let old = r#"{"t":1,"seconds":1.0,"ifaces":[],"cpus":[],"interrupts":[]}"#;
        assert!(serde_json::from_str::<Second>(old)
            .unwrap()
            .hosts
            .is_empty());
    }
}
