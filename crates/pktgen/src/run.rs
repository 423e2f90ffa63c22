use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pktlab_engine::gen::run_gen;
use pktlab_engine::options::{gen_config, recv_config, GenOptions, RecvOptions};
use pktlab_engine::recv::run_recv;
use pktlab_engine::rx::RxEvent;
use pktlab_engine::tx::TxEvent;
use pktlab_engine::{StopSignal, FCS_LEN};

use crate::output::{self as out, line, Interval, Reporter, Totals};
use pktlab_wire::range::{EndpointRange, Family};

use crate::error::{usage, PktgenError};
use crate::options::{self, Function, Options, Port, FRAMING_BITS, NAME};

/// Runs pkt-gen's command line `args` (without the program's name).
pub fn run(args: Vec<String>) -> Result<(), PktgenError> {
    name_process();
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let o = options::parse(&args, online)?;
    if o.help {
        return write_stdout(options::USAGE);
    }
    diag(
        "main",
        line::MAIN_INTERFACE,
        &format!("interface is {}", o.iface_arg),
    );
    warn_ignored(&o);
    let burst = match o.burst {
        Some(b) => b,
        None => {
            diag(
                "main",
                line::MAIN_BURST,
                &format!("using default burst size: {}", options::DEFAULT_BURST),
            );
            options::DEFAULT_BURST
        }
    };
    diag(
        "main",
        line::MAIN_CPUS,
        &format!("running on {} cpus (have {online})", o.cpus),
    );
    let family = if o.inet6 {
        Family::Inet6
    } else {
        Family::Inet4
    };
    for range in [&o.src, &o.dst] {
        diag(
            "extract_ip_range",
            line::EXTRACT_IP_RANGE,
            &range_text(range, family)?,
        );
    }
    let sigint = install_sigint()?;
    match o.function {
        Function::Tx => send(&o, burst, &sigint),
        Function::Rx => receive(&o, &sigint),
    }
}

/// Sets the process name to `pkt-gen` (what `ps` and `pkill pkt-gen` see),
/// also when started as `pktlab pkt-gen`.
fn name_process() {
    let _ = std::fs::write("/proc/self/comm", NAME);
}

/// One `D()` line on stderr.
fn diag(function: &str, line: u32, message: &str) {
    eprintln!("{}", out::diag(function, line, message));
}

/// The one warning line for what has no meaning here.
fn warn_ignored(o: &Options) {
    let mut parts = Vec::new();
    if !o.ignored.is_empty() {
        parts.push(format!("ignored on Linux: {}", o.ignored.join(" ")));
    }
    if !o.operands.is_empty() {
        parts.push(format!("ignored operands: {}", o.operands.join(" ")));
    }
    if !parts.is_empty() {
        eprintln!("pkt-gen: warning: {}", parts.join("; "));
    }
}

/// `range is 10.0.0.1:1234 to 10.0.0.1:1234`, or for IPv6 pkt-gen's
/// `range is 7@[2001:2::1]:1234 to 7@[2001:2::1]:1234` (7: its default group).
fn range_text(range: &str, family: Family) -> Result<String, PktgenError> {
    let r: EndpointRange = range.parse()?;
    if r.family() != family {
        return Err(usage(format!(
            "range {range} is not {}: {}",
            family.name(),
            if family == Family::Inet6 {
                "give IPv6 ranges with -s and -d, or leave out -6"
            } else {
                "give -6 for IPv6 ranges"
            }
        )));
    }
    let (start, end) = (r.addrs.start(), r.addrs.end());
    let (p0, p1) = (r.ports.start, r.ports.end);
    Ok(match family {
        Family::Inet4 => format!("range is {start}:{p0} to {end}:{p1}"),
        Family::Inet6 => format!("range is 7@[{start}]:{p0} to 7@[{end}]:{p1}"),
    })
}

/// Ctrl-C asks the run to stop (a second one exits at once, code 130);
/// SIGTERM keeps its default action.
fn install_sigint() -> Result<Arc<AtomicBool>, PktgenError> {
    use signal_hook::consts::SIGINT;
    let flag = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, flag.clone())
        .and_then(|_| signal_hook::flag::register(SIGINT, flag.clone()))
        .map_err(|e| PktgenError::System(format!("cannot install the Ctrl-C handler: {e}")))?;
    Ok(flag)
}

/// Fires `stop` once `flag` is set; the watcher ends with the run.
fn watch(flag: Arc<AtomicBool>, stop: StopSignal, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        while !done.load(Ordering::Relaxed) {
            if flag.load(Ordering::Relaxed) {
                stop.stop();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

/// pkt-gen's wait for the link, cut short by Ctrl-C.
fn wait_link(o: &Options, sigint: &AtomicBool) {
    diag(
        "start_threads",
        line::START_THREADS_WAIT,
        &format!("Wait {} secs for phy reset", o.wait_link),
    );
    let until = std::time::Instant::now() + Duration::from_secs(o.wait_link);
    while std::time::Instant::now() < until && !sigint.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many hardware queues `iface` has in `dir` (`tx` or `rx`).
fn queues(iface: &str, dir: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{iface}/queues"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{dir}-"))
                })
                .count()
        })
        .unwrap_or(1)
}

/// The per-thread count of `-n`, as pkt-gen divides it (the remainder is
/// not sent; less than one per thread is no limit).
fn total_count(o: &Options) -> Option<u64> {
    let per_thread = o.count / o.threads as u64;
    (per_thread > 0).then(|| per_thread * o.threads as u64)
}

/// The engine's rate over all threads: `-R` is each thread's.
fn total_rate(o: &Options) -> Option<String> {
    (o.rate_per_thread > 0).then(|| format!("{}pps", o.rate_per_thread * o.threads as u64))
}

/// pkt-gen's burst under `-R`: about 1/300 s of traffic, at least 1; and
/// the period between bursts in nanoseconds.
fn paced_burst(burst: usize, rate: u64) -> (usize, u64) {
    if rate == 0 {
        return (burst, 0);
    }
    let burst = burst.min((rate / 300) as usize).max(1);
    (burst, 1_000_000_000 * burst as u64 / rate)
}

fn interval(seconds: f64, packets: u64, bytes: u64) -> Interval {
    Interval {
        packets,
        bytes: bytes.saturating_sub(packets * FCS_LEN),
        usec: (seconds * 1e6).round() as u64,
    }
}

/// The `main_thread` lines: like pkt-gen, an interval shorter than 10 ms
/// is not printed but carried into the next one; the last is always printed.
struct Lines {
    reporter: Reporter,
    pending: Option<Interval>,
}

impl Lines {
    const SHORTEST_USEC: u64 = 10_000;

    fn new(o: &Options) -> Lines {
        let framing = if o.framing { FRAMING_BITS } else { 0 };
        Lines {
            reporter: Reporter::new(o.normalize, framing, o.pps_stats),
            pending: None,
        }
    }

    fn add(&mut self, iv: Interval) {
        let iv = match self.pending.take() {
            Some(p) => Interval {
                packets: p.packets + iv.packets,
                bytes: p.bytes + iv.bytes,
                usec: p.usec + iv.usec,
            },
            None => iv,
        };
        if iv.usec < Self::SHORTEST_USEC {
            self.pending = Some(iv);
        } else {
            self.print(iv);
        }
    }

    fn print(&mut self, iv: Interval) {
        diag("main_thread", line::MAIN_THREAD, &self.reporter.message(iv));
    }

    fn finish(&mut self) {
        if let Some(iv) = self.pending.take() {
            self.print(iv);
        }
    }
}

/// pktlab's smallest frame for the family, in pkt-gen's terms (no FCS):
/// refused in pkt-gen's units, where the engine would speak of sizes with
/// the FCS.
fn check_size(o: &Options) -> Result<(), PktgenError> {
    let family = if o.inet6 {
        Family::Inet6
    } else {
        Family::Inet4
    };
    let smallest = pktlab_wire::frame::min_frame_size(family, false) - 4;
    let size = o.min_size.unwrap_or(o.size).min(o.size);
    if size < smallest {
        return Err(usage(format!(
            "-l {size} is too small for {}: the smallest frame without FCS is {smallest} \
             (headers and pktlab's test payload)",
            family.name()
        )));
    }
    Ok(())
}

fn send(o: &Options, burst: usize, sigint: &Arc<AtomicBool>) -> Result<(), PktgenError> {
    check_size(o)?;
    let (burst, period_ns) = paced_burst(burst, o.rate_per_thread);
    let iface = match &o.port {
        Port::Iface(name) => Some(name.clone()),
        Port::Null => None,
    };
    let options = GenOptions {
        iface: iface.clone(),
        io: if iface.is_some() { "afpacket" } else { "null" }.to_string(),
        zerocopy: "auto".to_string(),
        src: Some(o.src.clone()),
        dst: Some(o.dst.clone()),
        inet6: o.inet6,
        src_mac: o.src_mac.clone(),
        dst_mac: Some(o.dst_mac.clone()),
        size: Some(o.size_mix()),
        count: total_count(o).map(|n| n.to_string()),
        duration: None,
        rate: total_rate(o),
        link_speed: None,
        threads: o.threads,
        cpus: None,
        vlan: None,
        ttl: 64,
        flows: if o.random_src || o.random_dst {
            "random"
        } else {
            "seq"
        }
        .to_string(),
        ports: "ranges".to_string(),
        seed: 1,
        batch: burst,
        interval: format!("{}ms", o.interval_ms),
        allow_public: o.allow_public,
    };
    let mut cfg = gen_config(&options)?.config;
    cfg.plan.cpus = pinned_cpus(o)?;
    if let Some(name) = &iface {
        println!(
            "Sending on {name}: {} queues, {} threads and {} cpus.",
            queues(name, "tx"),
            o.threads,
            o.cpus
        );
        println!(
            "{} -> {} ({} -> {})",
            o.src, o.dst, cfg.frames.src_mac, o.dst_mac
        );
    }
    diag(
        "main",
        line::MAIN_SENDING,
        &format!(
            "Sending {burst} packets every  {}.{:09} s",
            period_ns / 1_000_000_000,
            period_ns % 1_000_000_000
        ),
    );
    wait_link(o, sigint);
    let stop = StopSignal::new();
    let done = Arc::new(AtomicBool::new(false));
    watch(sigint.clone(), stop.clone(), done.clone());
    let framing = if o.framing { FRAMING_BITS } else { 0 };
    let mut lines = Lines::new(o);
    let result = run_gen(&cfg, &stop, |event| match event {
        TxEvent::Started { .. } => diag("start_threads", line::START_THREADS_READY, "Ready..."),
        TxEvent::Interval(iv) => lines.add(interval(iv.seconds, iv.packets, iv.bytes)),
    });
    lines.finish();
    done.store(true, Ordering::Relaxed);
    let summary = result?;
    print!(
        "{}",
        out::summary(
            "Sent",
            Totals {
                packets: summary.packets,
                bytes: summary.bytes.saturating_sub(summary.packets * FCS_LEN),
                seconds: summary.seconds,
            },
            o.normalize,
            framing,
        )
    );
    Ok(())
}

fn receive(o: &Options, sigint: &Arc<AtomicBool>) -> Result<(), PktgenError> {
    let Port::Iface(name) = &o.port else {
        return Err(usage("-i null only sends: give an interface to receive on"));
    };
    let options = RecvOptions {
        iface: Some(name.clone()),
        io: "afpacket".to_string(),
        zerocopy: "auto".to_string(),
        count: total_count(o).map(|n| n.to_string()),
        duration: None,
        idle: o.exit_when_idle.then(|| "1s".to_string()),
        threads: o.threads,
        cpus: None,
        streams: None,
        pass: false,
        latency: "on".to_string(),
        interval: format!("{}ms", o.interval_ms),
        src: None,
        dst: None,
        inet6: false,
    };
    let mut cfg = recv_config(&options)?;
    cfg.plan.cpus = pinned_cpus(o)?;
    println!(
        "Receiving from {name}: {} queues, {} threads and {} cpus.",
        queues(name, "rx"),
        o.threads,
        o.cpus
    );
    wait_link(o, sigint);
    let stop = StopSignal::new();
    let done = Arc::new(AtomicBool::new(false));
    watch(sigint.clone(), stop.clone(), done.clone());
    let framing = if o.framing { FRAMING_BITS } else { 0 };
    let mut lines = Lines::new(o);
    let result = run_recv(&cfg, &stop, |event| match event {
        RxEvent::Ready { .. } => diag("start_threads", line::START_THREADS_READY, "Ready..."),
        RxEvent::Interval(iv) => lines.add(interval(iv.seconds, iv.packets, iv.bytes)),
        RxEvent::Warning(w) => eprintln!("pktlab: warning: {w}"),
        RxEvent::Note(n) => eprintln!("{n}"),
    });
    lines.finish();
    done.store(true, Ordering::Relaxed);
    let summary = result?;
    print!(
        "{}",
        out::summary(
            "Received",
            Totals {
                packets: summary.packets,
                bytes: summary.bytes.saturating_sub(summary.packets * FCS_LEN),
                seconds: summary.seconds,
            },
            o.normalize,
            framing,
        )
    );
    Ok(())
}

/// The CPUs of `-a`/`-c`, checked against the ones this process may use.
fn pinned_cpus(o: &Options) -> Result<Vec<usize>, PktgenError> {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpus = o.thread_cpus(online);
    if !cpus.is_empty() {
        pktlab_engine::affinity::check_cpus(&cpus)
            .map_err(|e| usage(format!("-a {}: {e}", o.affinity.unwrap_or(0))))?;
    }
    Ok(cpus)
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an
/// error, where `print!` would panic.
fn write_stdout(text: &str) -> Result<(), PktgenError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(PktgenError::System(format!(
            "writing to standard output: {e}"
        ))),
        Ok(()) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(line: &str) -> Options {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        options::parse(&args, 4).unwrap()
    }

    #[test]
    fn rate_and_count_are_per_thread_like_pkt_gen() {
        let o = options("-i null -p 3 -R 50000 -n 1000");
        assert_eq!(total_rate(&o).as_deref(), Some("150000pps"));
        // 1000 / 3 = 333 a thread: 999 in all.
        assert_eq!(total_count(&o), Some(999));
        let o = options("-i null -p 4 -n 3");
        // Less than one a thread is pkt-gen's "no limit".
        assert_eq!(total_count(&o), None);
        assert_eq!(total_rate(&o), None);
        assert_eq!(total_count(&options("-i null -n 0")), None);
        assert_eq!(total_count(&options("-i null -n 7")), Some(7));
    }

    #[test]
    fn sizes_in_pkt_gen_units() {
        assert!(check_size(&options("-i null -l 60")).is_ok());
        let e = check_size(&options("-i null -l 59"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "-l 59 is too small for IPv4: the smallest frame without FCS is 60 \
             (headers and pktlab's test payload)"
        );
        let e = check_size(&options("-i null -6")).unwrap_err().to_string();
        assert!(
            e.starts_with("-l 60 is too small for IPv6: the smallest frame without FCS is 76"),
            "{e}"
        );
        assert!(check_size(&options("-i null -6 -l 76")).is_ok());
        assert!(check_size(&options("-i null -l 80 -l 58")).is_err());
    }

    #[test]
    fn pacing_like_pkt_gen() {
        // 100000 pps: burst min(512, 333) = 333, every 333e9 / 100000 ns.
        assert_eq!(paced_burst(512, 100_000), (333, 3_330_000));
        // 100 pps: 100 / 300 = 0, so 1 packet every 10 ms.
        assert_eq!(paced_burst(512, 100), (1, 10_000_000));
        assert_eq!(paced_burst(64, 0), (64, 0));
    }
}
