//! The worker's side of the protocol: one job from the controller, run in
//! this process, its events and summary written back as lines.
//!
//! The worker never outlives its controller's interest: it stops on a
//! `stop` line, on the end of its input (the ssh session went away: killing
//! the local ssh does not kill the remote process, but it closes this
//! process's stdin), on SIGTERM/SIGINT (the engine's handlers), on SIGHUP
//! (`hangup`), when its output cannot be written, and at the job's
//! deadline.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pktlab_engine::gen::{run_gen, GenConfig};
use pktlab_engine::recv::{run_recv, RecvConfig};
use pktlab_engine::rx::RxEvent;
use pktlab_engine::tx::TxEvent;
use pktlab_engine::StopSignal;
use pktlab_io::clock::realtime_ns;

use pktlab_lab::interrupts::{self, NicIrqMatch};
use pktlab_lab::ports::Port;

use super::protocol::{parse_job, Command, ObserveJob, PortRef, Reply, Task, PROTOCOL_VERSION};
use pktlab_loss::drops::{self, DropTrace};
use pktlab_loss::monitor::Watched;
use pktlab_loss::monitor::{self, Sampled, Sampler};
use pktlab_loss::tracer::Tracer;

/// How long the worker waits for `start` after `ready`.
const START_WAIT: Duration = Duration::from_secs(60);
/// How often the watchdog looks at the deadline and SIGHUP.
const TICK: Duration = Duration::from_millis(20);
/// The longest an observer waits for its host's backlogs to empty after
/// `stop`, before its tracer's last read.
const SETTLE: Duration = Duration::from_secs(1);

/// Writes replies, one flushed line each; remembers a failed write (the
/// controller is gone).
struct Replies<W: Write> {
    out: W,
    broken: bool,
}

impl<W: Write> Replies<W> {
    fn send(&mut self, r: &Reply) -> bool {
        let line = serde_json::to_string(r).expect("a reply serialises");
        let ok = writeln!(self.out, "{line}").and_then(|_| self.out.flush());
        self.broken |= ok.is_err();
        !self.broken
    }

    fn fail(&mut self, message: String) -> Result<(), String> {
        self.send(&Reply::Error {
            message: message.clone(),
        });
        Err(message)
    }
}

/// Serves one job read from `input`, replying on `output`. The error (one
/// line, already sent as an `error` reply) is for the worker's stderr and
/// exit code.
pub fn serve<R, W>(mut input: R, output: W, hangup: Arc<AtomicBool>) -> Result<(), String>
where
    R: BufRead + Send + 'static,
    W: Write,
{
    let mut out = Replies {
        out: output,
        broken: false,
    };
    let mut first = String::new();
    match input.read_line(&mut first) {
        Ok(0) => return Err("no job on standard input".into()),
        Ok(_) => {}
        Err(e) => return Err(format!("cannot read the job: {e}")),
    }
    let job = match parse_job(first.trim()) {
        Ok(job) => job,
        Err(e) => return out.fail(e),
    };
    // Checked before `ready`: a bad job never gets as far as a start.
    let checked = match &job.task {
        Task::Probe(port) => {
            return match probe(port) {
                Ok(r) => {
                    out.send(&r);
                    Ok(())
                }
                Err(e) => out.fail(e),
            }
        }
        Task::Gen(g) => g
            .to_config()
            .map(|c| Checked::Gen(Box::new(c)))
            .map_err(|e| e.to_string()),
        Task::Recv(r) => r
            .to_config()
            .map(|c| Checked::Recv(Box::new(c)))
            .map_err(|e| e.to_string()),
        Task::Observe(o) => ObservePlan::check(o).map(Checked::Observe),
    };
    let checked = match checked {
        Ok(c) => c,
        Err(e) => return out.fail(e),
    };
    let deadline = match Duration::try_from_secs_f64(job.deadline_secs) {
        Ok(d) => d,
        Err(_) => return out.fail(format!("invalid deadline {} s", job.deadline_secs)),
    };
    out.send(&Reply::Ready {
        version: PROTOCOL_VERSION,
        pktlab: env!("CARGO_PKG_VERSION").into(),
        clock_unix_ns: realtime_ns(),
    });

    let stop = StopSignal::new();
    let (starts, start_at) = mpsc::channel::<u64>();
    {
        let stop = stop.clone();
        std::thread::spawn(move || follow_controller(input, starts, stop));
    }
    let at = match wait_for_start(&start_at, &stop, &hangup) {
        Some(at) => at,
        None => return Err("the controller went away before the start".into()),
    };
    sleep_until(at, &stop, &hangup);

    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (stop, done, hangup) = (stop.clone(), done.clone(), hangup.clone());
        std::thread::spawn(move || watch(deadline, &stop, &done, &hangup))
    };
    let result = run(checked, &stop, &mut out);
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    result
}

/// A job's configuration, checked.
enum Checked {
    Gen(Box<GenConfig>),
    Recv(Box<RecvConfig>),
    Observe(ObservePlan),
}

/// An observe job, checked: its interfaces exist and are read once.
struct ObservePlan {
    watched: Vec<Watched>,
    irqs: Vec<NicIrqMatch>,
    cpus: bool,
    interval: Duration,
    drop_trace: DropTrace,
}

impl ObservePlan {
    fn check(job: &ObserveJob) -> Result<ObservePlan, String> {
        let interval = Duration::try_from_secs_f64(job.interval_secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("invalid interval {} s", job.interval_secs))?;
        let watched: Vec<Watched> = job
            .ports
            .iter()
            .map(|p| Watched {
                role: p.role.clone(),
                port: Port::new(&p.iface, p.netns.as_deref()),
            })
            .collect();
        // A missing interface or namespace is named now, before `ready`.
        monitor::read_counters(&watched).map_err(|e| e.to_string())?;
        let mut irqs = Vec::new();
        for w in &watched {
            let m = interrupts::nic_irq_match(w.port.netns.as_deref(), &w.port.iface)
                .map_err(|e| e.to_string())?;
            irqs.extend(m);
        }
        Ok(ObservePlan {
            watched,
            irqs,
            cpus: job.cpus,
            interval,
            drop_trace: job.drop_trace,
        })
    }
}

/// Runs the checked job, streaming its events.
fn run<W: Write>(job: Checked, stop: &StopSignal, out: &mut Replies<W>) -> Result<(), String> {
    match job {
        Checked::Gen(cfg) => {
            let result = run_gen(&cfg, stop, |e| {
                let sent = match e {
                    TxEvent::Started { backend } => out.send(&Reply::Started { backend }),
                    TxEvent::Interval(iv) => out.send(&Reply::TxInterval(iv)),
                };
                if !sent {
                    stop.stop();
                }
            });
            match result {
                Ok(s) => {
                    out.send(&Reply::TxSummary(s));
                    Ok(())
                }
                Err(e) => out.fail(e.to_string()),
            }
        }
        Checked::Recv(cfg) => {
            let result = run_recv(&cfg, stop, |e| {
                let sent = match e {
                    RxEvent::Ready { backend } => out.send(&Reply::Listening { backend }),
                    RxEvent::Interval(iv) => out.send(&Reply::RxInterval(iv)),
                    // Not part of the protocol: stderr reaches the
                    // controller's terminal through ssh.
                    RxEvent::Warning(w) => {
                        eprintln!("pktlab worker: {w}");
                        true
                    }
                    // Each trial's receiver would repeat it.
                    RxEvent::Note(_) => true,
                };
                if !sent {
                    stop.stop();
                }
            });
            match result {
                Ok(s) => {
                    out.send(&Reply::RxSummary {
                        latency_buckets: s.latency_buckets.clone(),
                        summary: s,
                    });
                    Ok(())
                }
                Err(e) => out.fail(e.to_string()),
            }
        }
        Checked::Observe(plan) => {
            let sampled = Sampled {
                watched: &plan.watched,
                irqs: &plan.irqs,
                cpus: plan.cpus,
            };
            let sampler = match Sampler::start(sampled) {
                Ok(s) => s,
                Err(e) => return out.fail(e.to_string()),
            };
            let (tracer, drop_trace_off) = match Tracer::start(plan.drop_trace) {
                Ok(t) => t,
                Err(e) => return out.fail(e.to_string()),
            };
            let window = match tracer.window() {
                Ok(w) => w,
                Err(e) => return out.fail(e.to_string()),
            };
            if !out.send(&Reply::Observing) {
                return Err("the controller went away".into());
            }
            // Every second is sent, the short last one too: the seconds
            // add up to the totals.
            let result = sampler.run(plan.interval, true, &|| stop.is_set(), &mut |second| {
                if !out.send(&Reply::Second(second)) {
                    stop.stop();
                }
            });
            // The frames still in the host's backlogs are dropped (or
            // not) before the tracer's last read.
            window.settle(SETTLE);
            let traced = match window.end() {
                Ok(t) => t,
                Err(e) => return out.fail(e.to_string()),
            };
            let port_netns: Vec<Option<String>> =
                plan.watched.iter().map(|w| w.port.netns.clone()).collect();
            let drops = traced.map(|t| drops::worker_places(t, &port_netns, &drops::own_netns()));
            match result {
                Ok(totals) => {
                    out.send(&Reply::Observed {
                        totals,
                        drops,
                        drop_trace_off,
                    });
                    Ok(())
                }
                Err(e) => out.fail(e.to_string()),
            }
        }
    }
}

/// Reads the controller's lines until the end of the input: `start` goes
/// to the waiting worker, `stop` and the end of the input stop the run.
fn follow_controller<R: BufRead>(mut input: R, starts: mpsc::Sender<u64>, stop: StopSignal) {
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => match serde_json::from_str::<Command>(line.trim()) {
                Ok(Command::Start { at_unix_ns }) => {
                    let _ = starts.send(at_unix_ns);
                }
                Ok(Command::Stop) => stop.stop(),
                // A line this worker does not understand: stopping is safer
                // than sending on.
                Err(_) => break,
            },
        }
    }
    stop.stop();
}

fn wait_for_start(
    start_at: &mpsc::Receiver<u64>,
    stop: &StopSignal,
    hangup: &AtomicBool,
) -> Option<u64> {
    let until = Instant::now() + START_WAIT;
    while Instant::now() < until {
        if stop.is_set() || hangup.load(Ordering::Relaxed) {
            return None;
        }
        if let Ok(at) = start_at.recv_timeout(TICK) {
            return Some(at);
        }
    }
    None
}

/// Sleeps until the realtime clock reads `at` (at most [`START_WAIT`]).
fn sleep_until(at: u64, stop: &StopSignal, hangup: &AtomicBool) {
    let until = Instant::now() + START_WAIT;
    loop {
        let now = realtime_ns();
        if now >= at || Instant::now() >= until || stop.is_set() || hangup.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_nanos(at - now).min(TICK));
    }
}

fn watch(deadline: Duration, stop: &StopSignal, done: &AtomicBool, hangup: &AtomicBool) {
    let end = Instant::now() + deadline;
    while !done.load(Ordering::Relaxed) {
        if Instant::now() >= end || hangup.load(Ordering::Relaxed) {
            stop.stop();
        }
        std::thread::sleep(TICK);
    }
}

/// An interface's MAC, state and MTU, in its namespace.
fn probe(port: &PortRef) -> Result<Reply, String> {
    let name = port.iface.clone();
    let facts = move || {
        pktlab_io::iface::lookup(&name)
            .and_then(|i| pktlab_io::iface::is_up(&name).map(|up| (i, up)))
    };
    let found = match &port.netns {
        Some(ns) => pktlab_lab::netns::within(ns, facts).map_err(|e| e.to_string())?,
        None => facts(),
    };
    let (i, up) = found.map_err(|e| e.to_string())?;
    let device = interrupts::nic_irq_match(port.netns.as_deref(), &port.iface)
        .map_err(|e| e.to_string())?
        .is_some();
    Ok(Reply::Port {
        mac: i.mac,
        up,
        mtu: i.mtu,
        device,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve_text(input: &str) -> (Result<(), String>, Vec<serde_json::Value>) {
        let mut out = Vec::new();
        let input = std::io::Cursor::new(input.as_bytes().to_vec());
        let r = serve(input, &mut out, Arc::new(AtomicBool::new(false)));
        let lines = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (r, lines)
    }

    #[test]
    fn a_job_of_another_version_is_one_error_line() {
        let (r, lines) = serve_text("{\"version\":99,\"task\":{}}\n");
        let e = r.unwrap_err();
        assert!(
            e.starts_with("protocol version 99 from the controller"),
            "{e}"
        );
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["type"], "error");
        assert_eq!(lines[0]["message"], e.as_str());
    }

    #[test]
    fn no_job_is_an_error_without_reply() {
        let (r, lines) = serve_text("");
        assert_eq!(r.unwrap_err(), "no job on standard input");
        assert!(lines.is_empty());
    }

    #[test]
    fn probing_a_missing_interface_names_it() {
        let (r, lines) = serve_text(
            "{\"version\":4,\"task\":{\"role\":\"probe\",\"iface\":\"nosuchif7\",\"netns\":null},\"deadline_secs\":1}\n",
        );
        let e = r.unwrap_err();
        assert!(e.contains("nosuchif7"), "{e}");
        assert_eq!(lines[0]["type"], "error");
        let (r, lines) = serve_text(
            "{\"version\":4,\"task\":{\"role\":\"probe\",\"iface\":\"lo\",\"netns\":null},\"deadline_secs\":1}\n",
        );
        r.unwrap();
        assert_eq!(lines[0]["type"], "port");
        assert_eq!(lines[0]["mac"], serde_json::json!([0, 0, 0, 0, 0, 0]));
        assert_eq!(lines[0]["up"], true);
        assert_eq!(lines[0]["mtu"], 65536);
        assert_eq!(lines[0]["device"], false);
    }

    #[test]
    fn the_end_of_input_before_start_ends_the_worker() {
        let job = "{\"version\":4,\"task\":{\"role\":\"recv\",\"io\":\"afpacket\",\"iface\":\"lo\",\"threads\":1,\"count\":null,\"duration_secs\":null,\"idle_secs\":null,\"interval_secs\":1.0,\"cpus\":[],\"netns\":null},\"deadline_secs\":5}\n";
        let started = Instant::now();
        let (r, lines) = serve_text(job);
        assert_eq!(r.unwrap_err(), "the controller went away before the start");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["type"], "ready");
        assert_eq!(lines[0]["version"], 4);
        // Long before START_WAIT.
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
