//! What `pktlab bench` and `pktlab rfc2544` share: the campaign's
//! arguments, the spec made of them, and how an opening campaign and its
//! runs are shown (lines, a progress bar, warnings once each).

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;

use pktlab_campaign::campaign::{Campaign, Event, Folder, OpenEvent, Outcome, RunLabel, Spec};
use pktlab_campaign::flags::Flags;
use pktlab_campaign::plan::Plan;
use pktlab_loss::drops::DropTrace;
use pktlab_report::campaign as out;
use pktlab_trial::trial::TrialEvent;

use crate::cmd::common::{Output, Progress};
use crate::cmd::recording::RecordArgs;
use crate::error::Exit;

/// Measure how fast the DUT forwards, like BSDRP's bench-lab.
///
/// Every DUT configuration runs with every traffic profile N times,
/// interleaved (A B A B ...), and the configurations are compared with
/// ministat.
///
/// With no arguments: inet4 (2000 flows of 64-byte frames) on the built-in
/// lab in its `forwarding` configuration, 5 runs of 10 s. A run's value is
/// the median of the receiver's per-second counts of test frames, leaving
/// out a warm-up and a tail (1 s each by default).
///
/// Everything goes to a results folder (-o, default
/// results/<name>-<timestamp>/): the campaign, env.json, one file per run
/// with its per-second samples, interface counters, per-CPU load and
/// interrupts, BSDRP-style .pps files, summary.json and ministat.txt.
/// Ctrl-C keeps every finished run; --resume DIR carries on.
#[derive(clap::Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct CampaignArgs {
    /// Campaign file (TOML); see examples/campaigns/
    #[arg(short = 'f', long = "campaign", value_name = "FILE")]
    pub campaign: Option<PathBuf>,
    /// Carry on the campaign of results folder DIR, skipping finished runs
    #[arg(long = "resume", value_name = "DIR", conflicts_with_all = ["campaign", "output_dir"])]
    pub resume: Option<PathBuf>,
    /// Results folder [default: results/<name>-<timestamp>]
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Campaign name (names the default results folder) [default: bench]
    #[arg(long = "name", value_name = "NAME")]
    pub name: Option<String>,
    /// DUT configurations to compare, the first being the baseline:
    /// forwarding, nft-stateless, nft-stateful, nat44, rps, gro-off, gro-on,
    /// redirects-on, tc-forward, xdp-forward, threaded-napi, fq_codel,
    /// pfifo, KNOB-VALUE for a host sysctl (netdev_max_backlog-2000), or
    /// all [default: forwarding]
    #[arg(long = "configs", value_name = "LIST", conflicts_with = "campaign")]
    pub configs: Option<String>,
    /// Runs per configuration and traffic [default: 5]
    #[arg(long = "iterations", short = 'N', value_name = "N")]
    pub iterations: Option<usize>,
    /// Length of each run (10s, 1m, ...) [default: 10s]
    #[arg(long = "duration", short = 't', value_name = "TIME")]
    pub duration: Option<String>,
    /// Left out at the start of each run [default: 1s]
    #[arg(long = "warmup", value_name = "TIME")]
    pub warmup: Option<String>,
    /// Left out at the end of each run [default: 1s]
    #[arg(long = "tail", value_name = "TIME")]
    pub tail: Option<String>,
    /// interleaved, sequential or random [default: interleaved]
    #[arg(long = "order", value_name = "ORDER")]
    pub order: Option<String>,
    /// Seed of the random order [default: 1]
    #[arg(long = "seed", value_name = "N")]
    pub seed: Option<u64>,
    /// Traffic profiles: inet4 (2000 IPv4 flows), inet6, or both (inet4,inet6)
    /// [default: inet4]
    #[arg(long = "traffic", value_name = "LIST", conflicts_with = "campaign")]
    pub traffic: Option<String>,
    /// Frame size or mix, as for gen -l [default: 64 for inet4, 80 for inet6]
    #[arg(short = 'l', long = "size", value_name = "SIZE", conflicts_with_all = ["campaign", "sizes"])]
    pub size: Option<String>,
    /// A knob sweep, one configuration per value (after --configs' ones):
    /// KNOB=V1,V2,... where KNOB is a host sysctl (netdev_max_backlog,
    /// netdev_budget, netdev_budget_usecs, dev_weight, nf_conntrack_max), a
    /// sysctl of the DUT (net.ipv4....), ethtool-K:FEATURE, ethtool-C:PARAM,
    /// ethtool-G:PARAM, ethtool-L:PARAM or qdisc:KIND:PARAM
    #[arg(long = "sweep", value_name = "KNOB=VALUES")]
    pub sweep: Option<String>,
    /// A size sweep: a list of frame sizes (64,512,1518) or rfc2544
    #[arg(long = "sizes", value_name = "LIST", conflicts_with = "campaign")]
    pub sizes: Option<String>,
    /// Offered rate, as for gen -R [default: as fast as the generator can]
    #[arg(
        short = 'R',
        long = "rate",
        value_name = "RATE",
        conflicts_with = "campaign"
    )]
    pub rate: Option<String>,
    /// Traffic both ways: each port sends (at -R each) and receives
    #[arg(long = "bidir")]
    pub bidir: bool,
    /// Link speed, for -R N% and the sweep table's line rate
    #[arg(long = "link-speed", value_name = "SPEED")]
    pub link_speed: Option<String>,
    /// Generator threads [default: 1]
    #[arg(
        short = 'p',
        long = "threads",
        value_name = "N",
        conflicts_with = "campaign"
    )]
    pub threads: Option<usize>,
    /// I/O backend of the generator and the receiver: afpacket, afxdp,
    /// xdp (the XDP generator and the in-kernel receiver) or auto
    /// [default: xdp on the built-in lab (afpacket with gro-off,
    /// threaded-napi, traffic both ways or frames above 3412 bytes),
    /// afpacket on other labs]
    #[arg(long = "io", value_name = "IO")]
    pub io: Option<String>,
    /// The drop tracer (where the lost frames went): auto (traced where
    /// BPF is allowed, counters only in full-speed runs), on, off
    /// [default: the campaign's [run] drop_trace, else auto]
    #[arg(long = "drop-trace", value_name = "MODE")]
    pub drop_trace: Option<String>,
    /// The built-in lab's namespace prefix [default: pktlab]
    #[arg(long = "prefix", value_name = "P")]
    pub prefix: Option<String>,
    /// Do not write report.html (the HTML report) into the results folder
    #[arg(long = "no-report")]
    pub no_report: bool,
    /// The built-in lab's DUT CPUs; the generator and receiver run on the
    /// others [default: the last CPU, or the last quarter from 8 CPUs on]; all:
    /// shared mode (no steering), for comparison
    #[arg(long = "dut-cpus", value_name = "LIST")]
    pub dut_cpus: Option<String>,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub history: RecordArgs,
}

impl CampaignArgs {
    /// The campaign's spec: its file (or the flags alone) with the flags
    /// over it, checked; `command` names the subcommand for the comment of
    /// a campaign saved from flags.
    pub fn spec(&self, command: &str) -> anyhow::Result<Spec> {
        let drop_trace: Option<DropTrace> =
            self.drop_trace.as_deref().map(str::parse).transpose()?;
        let (file, saved_text) = self.flags(command).campaign_file()?;
        let plan = Plan::from_file(&file, pktlab_lab::cpuload::cpu_count()?)?;
        let folder = match (&self.resume, &self.output_dir) {
            (Some(d), _) => Folder::Resume(d.clone()),
            (None, d) => Folder::New(d.clone()),
        };
        Ok(Spec {
            plan,
            folder,
            saved_text,
            drop_trace,
        })
    }

    fn flags(&self, command: &str) -> Flags {
        let args: Vec<String> = std::env::args().skip(2).collect();
        Flags {
            file: self.campaign.clone(),
            resume: self.resume.clone(),
            name: self.name.clone(),
            configs: self.configs.clone(),
            iterations: self.iterations,
            duration: self.duration.clone(),
            warmup: self.warmup.clone(),
            tail: self.tail.clone(),
            order: self.order.clone(),
            seed: self.seed,
            traffic: self.traffic.clone(),
            size: self.size.clone(),
            sizes: self.sizes.clone(),
            rate: self.rate.clone(),
            link_speed: self.link_speed.clone(),
            threads: self.threads,
            prefix: self.prefix.clone(),
            dut_cpus: self.dut_cpus.clone(),
            io: self.io.clone(),
            drop_trace: self.drop_trace.clone(),
            sweep: self.sweep.clone(),
            bidir: self.bidir,
            command_line: format!("pktlab {command} {}", args.join(" ")),
            command: command.into(),
        }
    }
}

/// Says what an opening campaign did to the lab, the lock and the tracer.
pub fn open_event(o: &Output, e: OpenEvent<'_>) {
    match e {
        OpenEvent::LockTakenOver { what, pid, dir } => {
            eprintln!("{}", out::lock_taken_line(what, pid, dir))
        }
        OpenEvent::LabUp { prefix, outcome } if !o.json && !o.quiet => {
            if let Some(line) = out::lab_up_line(prefix, outcome) {
                println!("{line}");
            }
        }
        OpenEvent::LabUp { .. } => {}
        OpenEvent::DropTraceOff { why } => {
            eprintln!("drop trace off: {why}; the loss is attributed from counters only")
        }
    }
}

/// The exit code of a campaign that ended with `outcome`: 130 after
/// Ctrl-C, 1 when some of its runs (`what`) failed.
pub fn exit(outcome: &Outcome, what: &str, command: &str, dir: &str) -> anyhow::Result<()> {
    if outcome.interrupted {
        return Err(Exit(130).into());
    }
    match out::failed_line(outcome, what, command, dir) {
        Some(line) => Err(anyhow::anyhow!(line)),
        None => Ok(()),
    }
}

/// Across hosts, one-way latency is only as good as the clocks (each
/// run's result says so again for its own latency).
pub fn clocks_line(c: &Campaign) -> Option<String> {
    c.env()
        .clocks
        .as_ref()
        .map(|k| format!("Clocks: {}", k.latency))
}

/// The display of a campaign's runs: the progress bar, and each warning
/// once per campaign.
pub struct Display {
    pub output: Output,
    /// Standard error is a terminal (with a bar, no line per run start).
    pub terminal: bool,
    pub progress: Option<Progress>,
    warned: HashSet<String>,
}

impl Display {
    pub fn new(output: &Output) -> Display {
        Display {
            output: output.clone(),
            terminal: std::io::stderr().is_terminal(),
            progress: None,
            warned: HashSet::new(),
        }
    }

    /// Lines (unless `--json` or `--quiet`).
    pub fn text(&self) -> bool {
        !self.output.json && !self.output.quiet
    }

    /// The bar, made on first use for `total` ticks.
    pub fn bar(&mut self, total: u64) -> &mut Progress {
        let enabled = self.text();
        self.progress
            .get_or_insert_with(|| Progress::new(enabled, total))
    }

    pub fn println(&self, line: String) {
        match &self.progress {
            Some(p) => p.println(line),
            None => println!("{line}"),
        }
    }

    /// A diagnostic: stderr, also with `--json` and `--quiet`.
    pub fn eprintln(&self, line: String) {
        match &self.progress {
            Some(p) => p.eprintln(line),
            None => eprintln!("{line}"),
        }
    }

    /// What every campaign shows the same way; returns the events it
    /// leaves to the command.
    pub fn common<'a, R>(
        &mut self,
        e: Event<'a, R>,
        resuming: &str,
        label: impl Fn(&RunLabel<'_>) -> String,
    ) -> Option<Event<'a, R>> {
        match e {
            Event::Resuming { finished, planned } => {
                if self.text() {
                    self.println(format!("Resuming: {finished} of {planned} {resuming}"));
                }
            }
            Event::Applying { config } if self.text() && !self.terminal => {
                println!("applying configuration {config}")
            }
            Event::Reverting { config } if self.text() && !self.terminal => {
                println!("reverting configuration {config}")
            }
            Event::Applying { .. } | Event::Reverting { .. } => {}
            Event::Trial(TrialEvent::Forwarded(pps)) => {
                if let Some(p) = self.progress.as_mut() {
                    p.tick(pps);
                }
            }
            Event::Trial(TrialEvent::Warning(w)) => {
                if self.warned.insert(w.clone()) {
                    self.eprintln(format!("pktlab: warning: {w}"));
                }
            }
            Event::RunFailed { run, error } => {
                self.eprintln(format!("pktlab: {} failed, skipped: {error}", label(&run)))
            }
            other => return Some(other),
        }
        None
    }

    pub fn finish(&mut self) {
        if let Some(p) = self.progress.as_mut() {
            p.finish();
        }
    }
}
