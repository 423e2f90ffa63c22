//! `pktlab bench`: forwarding benchmark campaigns (BSDRP's bench-lab).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use pktlab_campaign::file::{CampaignFile, ConfigSection, TrafficSection};
use pktlab_campaign::lock::{lock_keys, LabLock};
use pktlab_campaign::method::FixedRate;
use pktlab_campaign::plan::{Campaign, LabChoice, RFC2544_SIZES};
use pktlab_campaign::results::{self, ResultsDir};
use pktlab_campaign::runner::{self, CampaignEvent};
use pktlab_engine::affinity::format_cpu_list;
use pktlab_engine::StopSignal;
use pktlab_lab::dut::BUILTIN_NAMES;
use pktlab_lab::UpOutcome;
use pktlab_report::bench as out;
use pktlab_trial::target::Target;
use pktlab_trial::trial::TrialEvent;

use crate::cmd::common::{self, Output};
use crate::error::{usage, Exit};

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
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
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
    /// forwarding, nft-stateless, nft-stateful, rps, gro-off, gro-on,
    /// redirects-on, or all [default: forwarding]
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
    #[arg(long = "traffic", value_name = "LIST", conflicts_with = "campaign")]
    pub traffic: Option<String>,
    /// Frame size or mix, as for gen -l [default: 64 for inet4, 80 for inet6]
    #[arg(short = 'l', long = "size", value_name = "SIZE", conflicts_with_all = ["campaign", "sizes"])]
    pub size: Option<String>,
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
    /// xdp (the XDP generator; the receiver as with auto) or auto
    /// [default: afpacket]
    #[arg(long = "io", value_name = "IO")]
    pub io: Option<String>,
    /// The drop tracer (where the lost frames went): auto (where BPF is
    /// allowed, else counters only), on, off [default: the campaign's
    /// [run] drop_trace, else auto]
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
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let drop_trace = drop_trace_flag(&args)?;
    let (file, saved_text) = campaign_file(&args)?;
    let cpus = pktlab_lab::cpuload::cpu_count()?;
    let campaign = Campaign::from_file(&file, cpus)?;
    let dir_path = match (&args.resume, &args.output_dir) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) => d.clone(),
        (None, None) => ResultsDir::claim_default(&campaign.name, results::unix_now())?,
    };
    let dir = match &args.resume {
        Some(d) => ResultsDir::open(d)?,
        None => {
            check_new_dir(&dir_path)?;
            ResultsDir::create(&dir_path)?
        }
    };
    let created = args.resume.is_none();
    let prepared = prepare(&args, &campaign, &dir, saved_text.as_deref());
    let (target, _lock) = match prepared {
        Ok(t) => t,
        Err(e) => {
            if created {
                // Nothing was measured: leave no empty folder behind.
                let _ = std::fs::remove_dir(dir.path.join(results::RUNS_DIR));
                let _ = std::fs::remove_dir(&dir.path);
            }
            return Err(e);
        }
    };
    let mode = drop_trace.unwrap_or(campaign.run.drop_trace);
    let tracer = common::drop_tracer(mode, "the loss is attributed from counters only")?;
    execute(&args, &campaign, &target, &dir, &tracer)
}

/// Locks the lab, brings it up and records the campaign and its
/// environment. The lock is held until the returned guard drops: keep it
/// for the whole campaign.
pub(crate) fn prepare(
    args: &Args,
    campaign: &Campaign,
    dir: &ResultsDir,
    saved_text: Option<&str>,
) -> anyhow::Result<(Target, LabLock)> {
    common::install_signals()?;
    let o = &args.output;
    // Said before the lock, whose folder a user without root may not
    // write either.
    if campaign.is_builtin() && !pktlab_lab::runner::is_root() {
        anyhow::bail!(
            "the built-in lab needs root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
        );
    }
    // Before the lab is touched: setting it up resets the DUT, which would
    // disturb a campaign already running on it.
    let lock = LabLock::acquire(&lock_keys(&campaign.lab), &dir.path)?;
    for (what, old) in &lock.taken_over {
        eprintln!(
            "pktlab: {what}: took over the lock left by pid {} (results folder {}), which ended without releasing it",
            old.pid, old.dir
        );
    }
    let target = match &campaign.lab {
        LabChoice::Builtin { .. } => {
            let spec = campaign.lab.builtin_spec().expect("a built-in lab");
            let prefix = spec.prefix.clone();
            let (target, outcome) = Target::builtin(spec)?;
            if !o.json && !o.quiet {
                match outcome {
                    // The lab outlives the campaign, as a bench-lab does, so
                    // that the next campaign and `pktlab lab status` find it.
                    UpOutcome::Created => {
                        let down = if prefix == pktlab_lab::DEFAULT_PREFIX {
                            "pktlab lab down".to_string()
                        } else {
                            format!("pktlab lab down --prefix {prefix}")
                        };
                        println!("Built lab {prefix}; it stays up after the campaign ({down} removes it).")
                    }
                    UpOutcome::Repaired => println!("Repaired lab {prefix}."),
                    UpOutcome::CpusApplied | UpOutcome::AlreadyUp => {}
                }
            }
            target
        }
        LabChoice::Interfaces {
            lab,
            state_probe,
            hosts,
        } => Target::interfaces_on_hosts(
            lab.clone(),
            state_probe.clone(),
            hosts.gen_host.as_deref(),
            hosts.rcv_host.as_deref(),
            hosts.ssh_config.as_deref(),
            &generator_ports(hosts),
            run_limit(campaign),
        )?,
    };
    if let Some(text) = saved_text {
        dir.write(results::CAMPAIGN_FILE, text.as_bytes())?;
    }
    if !dir.has_env() {
        dir.write_env(&runner::env_record(campaign, &target))?;
    }
    Ok((target, lock))
}

/// `[[lab.generator]]`s as the lab takes them.
pub(crate) fn generator_ports(
    hosts: &pktlab_campaign::plan::LabHosts,
) -> Vec<(Option<String>, pktlab_lab::ports::Port)> {
    hosts
        .generators
        .iter()
        .map(|g| (g.host.clone(), g.port.clone()))
        .collect()
}

/// The longest a trial of `campaign` lasts: the receiver's start, the
/// run, the drain.
pub(crate) fn run_limit(campaign: &Campaign) -> Duration {
    campaign.run.trial.duration + pktlab_trial::trial::DRAIN + Duration::from_secs(30)
}

fn execute(
    args: &Args,
    campaign: &Campaign,
    target: &Target,
    dir: &ResultsDir,
    tracer: &pktlab_loss::tracer::Tracer,
) -> anyhow::Result<()> {
    let o = &args.output;
    let dir_text = dir.path.display().to_string();
    let text = !o.json;
    if text && !o.quiet {
        println!("{}", out::header(campaign, &target.describe(), &dir_text));
        // Across hosts, one-way latency is only as good as the clocks
        // (each run's result says so again for its own latency).
        if let Some(clocks) = dir.env().ok().and_then(|e| e.clocks) {
            println!("Clocks: {}", clocks.latency);
        }
    }
    let isolated = target.cpus.as_ref().filter(|p| !p.is_shared());
    if target.is_virtual() && text {
        match isolated {
            Some(p) => eprintln!(
                "{}",
                out::isolated_lab_warning(
                    &format_cpu_list(&p.dut_cpus),
                    &format_cpu_list(&p.tester_cpus)
                )
            ),
            None => {
                let cpus = pktlab_lab::cpuload::cpu_count().unwrap_or(1);
                eprintln!("{}", out::virtual_lab_warning(cpus));
            }
        }
    }
    if let (Some(plan), true) = (&target.cpus, text) {
        if let Some(notice) = plan.shared_notice() {
            eprintln!("pktlab: {notice}");
        }
        if !o.quiet {
            println!("CPU plan {plan}; generator {}", campaign.run.io.name());
        }
    }
    let stop = StopSignal::new();
    let terminal = std::io::stderr().is_terminal();
    let secs = campaign.run.trial.duration.as_secs().max(1);
    let mut progress: Option<common::Progress> = None;
    let mut started = Instant::now();
    let mut labels: String = String::new();
    // Each receiver warning once per campaign, not once per run.
    let mut warned = std::collections::HashSet::new();
    let exporters = pktlab_report::export::exporters_with_report(!args.no_report);
    let outcome = runner::run_campaign(
        campaign,
        target,
        dir,
        &FixedRate,
        &exporters,
        &stop,
        tracer,
        |e| {
            match e {
                CampaignEvent::Resuming { finished, planned } => {
                    if text && !o.quiet {
                        println!("Resuming: {finished} of {planned} runs are already finished and will not run again.");
                    }
                }
                CampaignEvent::Applying { config } => {
                    if text && !o.quiet && !terminal {
                        println!("applying configuration {config}");
                    }
                }
                CampaignEvent::Reverting { config } => {
                    if text && !o.quiet && !terminal {
                        println!("reverting configuration {config}");
                    }
                }
                CampaignEvent::RunStarting {
                    index,
                    of,
                    key,
                    config,
                    traffic,
                } => {
                    if index == 1 {
                        started = Instant::now();
                    }
                    let p = progress.get_or_insert_with(|| {
                        common::Progress::new(text && !o.quiet, of as u64 * secs)
                    });
                    labels = out::run_label(index, of, config, traffic, key.iteration);
                    p.message(labels.clone());
                    if text && !o.quiet && !terminal {
                        let per_run = if index > 1 {
                            started.elapsed() / (index as u32 - 1)
                        } else {
                            Duration::from_secs(secs + 1)
                        };
                        let left = per_run * (of - index + 1) as u32;
                        println!("{labels} ... (about {} left)", human(left));
                    }
                }
                CampaignEvent::Trial(TrialEvent::Forwarded(pps)) => {
                    if let Some(p) = progress.as_mut() {
                        p.tick(pps);
                    }
                }
                CampaignEvent::Trial(TrialEvent::Warning(w)) => {
                    if warned.insert(w.clone()) {
                        let line = format!("pktlab: warning: {w}");
                        match progress.as_ref() {
                            Some(p) => p.eprintln(line),
                            None => eprintln!("{line}"),
                        }
                    }
                }
                CampaignEvent::Trial(_) => {}
                CampaignEvent::RunFailed {
                    index,
                    of,
                    key,
                    config,
                    traffic,
                    error,
                } => {
                    // A diagnostic: stderr, also with --json and --quiet.
                    let line = format!(
                        "pktlab: {} failed, skipped: {error}",
                        out::run_label(index, of, config, traffic, key.iteration)
                    );
                    match progress.as_ref() {
                        Some(p) => p.eprintln(line),
                        None => eprintln!("{line}"),
                    }
                }
                CampaignEvent::RunDone {
                    key,
                    config,
                    traffic,
                    result,
                    ..
                } => {
                    if o.json {
                        common::print_json(&out::run_json(config, traffic, key.iteration, result));
                    } else if !o.quiet {
                        let requested = campaign.traffics[key.traffic].rate_pps;
                        let mut line = out::run_line(&labels, result, requested);
                        // Where the loss happened: the DUT's CPUs' backlogs.
                        if let Some(n) = result.dut_backlog_drops.filter(|&n| n > 0) {
                            line += &format!(", DUT backlog drops {n}");
                        }
                        let mut drops = out::drops_line(&result.drops, result.tx.packets);
                        // One-way latency across hosts, and what it is worth.
                        if let (Some(l), Some(note)) = (&result.rx.latency_ns, &result.latency_note)
                        {
                            drops += &format!(
                                "\n  latency: median {:.1} µs, {note}",
                                l.p50 as f64 / 1e3
                            );
                        }
                        match progress.as_ref() {
                            Some(p) => {
                                p.println(line);
                                p.println(drops);
                            }
                            None => println!("{line}\n{drops}"),
                        }
                    }
                }
            }
        },
    );
    if let Some(mut p) = progress {
        p.finish();
    }
    let outcome = outcome?;
    if o.json {
        let mut v = serde_json::to_value(&outcome.summary)?;
        v["dir"] = serde_json::json!(dir_text);
        v["interrupted"] = serde_json::json!(outcome.interrupted);
        common::print_json(&v);
    } else {
        print!("{}", out::summary_text(campaign, &outcome, &dir_text));
    }
    if outcome.interrupted {
        return Err(Exit(130).into());
    }
    if outcome.failed > 0 {
        return Err(anyhow::anyhow!(
            "{} of {} runs failed and were skipped; pktlab bench --resume {dir_text} runs them again",
            outcome.failed,
            outcome.planned
        ));
    }
    Ok(())
}

/// `1m20s`, `45s`.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

pub(crate) fn check_new_dir(path: &Path) -> anyhow::Result<()> {
    if let Ok(mut entries) = std::fs::read_dir(path) {
        if entries.next().is_some() {
            return Err(usage(format!(
                "results folder {} already exists and is not empty (use --resume {0} to carry it on)",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Makes `[lab] ssh_config` absolute, against the campaign file's folder;
/// true when it changed. A missing file is a usage error.
pub(crate) fn resolve_ssh_config(file: &mut CampaignFile, campaign: &Path) -> anyhow::Result<bool> {
    let Some(cfg) = file.lab.ssh_config.clone() else {
        return Ok(false);
    };
    let base = campaign.parent().unwrap_or(Path::new("."));
    let joined = base.join(&cfg);
    let abs = std::fs::canonicalize(&joined).map_err(|e| {
        usage(format!(
            "[lab] ssh_config {}: {}",
            joined.display(),
            crate::error::os_message(&e)
        ))
    })?;
    let abs = abs.display().to_string();
    file.lab.ssh_config = Some(abs.clone());
    Ok(abs != cfg)
}

/// `--drop-trace`, checked before anything runs (None: the campaign's).
pub(crate) fn drop_trace_flag(
    args: &Args,
) -> anyhow::Result<Option<pktlab_loss::drops::DropTrace>> {
    Ok(match &args.drop_trace {
        Some(text) => Some(text.parse()?),
        None => None,
    })
}

/// The campaign to run, and the text to save as `campaign.toml` (none on
/// resume: it is there already).
pub(crate) fn campaign_file(args: &Args) -> anyhow::Result<(CampaignFile, Option<String>)> {
    if let Some(dir) = &args.resume {
        let shaping = [
            ("--name", args.name.is_some()),
            ("--configs", args.configs.is_some()),
            ("-N", args.iterations.is_some()),
            ("--duration", args.duration.is_some()),
            ("--warmup", args.warmup.is_some()),
            ("--tail", args.tail.is_some()),
            ("--order", args.order.is_some()),
            ("--seed", args.seed.is_some()),
            ("--traffic", args.traffic.is_some()),
            ("--size", args.size.is_some()),
            ("--sizes", args.sizes.is_some()),
            ("--rate", args.rate.is_some()),
            ("--link-speed", args.link_speed.is_some()),
            ("--threads", args.threads.is_some()),
            ("--prefix", args.prefix.is_some()),
            ("--dut-cpus", args.dut_cpus.is_some()),
            ("--io", args.io.is_some()),
        ];
        if let Some((flag, _)) = shaping.iter().find(|(_, set)| *set) {
            return Err(usage(format!(
                "{flag} cannot be used with --resume: the campaign is the one saved in {}",
                dir.display()
            )));
        }
        let path = dir.join(results::CAMPAIGN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            usage(format!(
                "cannot resume {}: {} ({})",
                dir.display(),
                crate::error::os_message(&e),
                path.display()
            ))
        })?;
        let file =
            CampaignFile::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        return Ok((file, None));
    }
    let (mut file, original) = match &args.campaign {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                usage(format!(
                    "cannot read campaign file {}: {}",
                    path.display(),
                    crate::error::os_message(&e)
                ))
            })?;
            let mut file = CampaignFile::parse(&text)
                .map_err(|e| usage(format!("{}: {e}", path.display())))?;
            // Saved with the campaign and read again on --resume from
            // elsewhere: the path is made absolute now.
            match resolve_ssh_config(&mut file, path)? {
                true => (file, None),
                false => (file, Some(text)),
            }
        }
        None => (from_flags(args)?, None),
    };
    let mut overridden = Vec::new();
    let mut set = |flag: &str, value: &Option<String>, slot: &mut Option<String>| {
        if let Some(v) = value {
            *slot = Some(v.clone());
            overridden.push(format!("{flag} {v}"));
        }
    };
    set("--name", &args.name, &mut file.name);
    set("--duration", &args.duration, &mut file.run.duration);
    set("--warmup", &args.warmup, &mut file.run.warmup);
    set("--tail", &args.tail, &mut file.run.tail);
    set("--order", &args.order, &mut file.run.order);
    set("--link-speed", &args.link_speed, &mut file.lab.link_speed);
    set("--prefix", &args.prefix, &mut file.lab.prefix);
    set("--dut-cpus", &args.dut_cpus, &mut file.lab.dut_cpus);
    set("--io", &args.io, &mut file.run.io);
    // Saved with the campaign, so that --resume traces as the run began.
    set("--drop-trace", &args.drop_trace, &mut file.run.drop_trace);
    if let Some(n) = args.iterations {
        file.run.iterations = Some(n);
        overridden.push(format!("-N {n}"));
    }
    if let Some(s) = args.seed {
        file.run.seed = Some(s);
        overridden.push(format!("--seed {s}"));
    }
    let text = match (&args.campaign, original) {
        (Some(_), Some(text)) if overridden.is_empty() => text,
        (Some(path), None) if overridden.is_empty() => format!(
            "# {} with [lab] ssh_config made absolute\n{}",
            path.display(),
            file.to_toml()
        ),
        (Some(path), _) => format!(
            "# {} with {}\n{}",
            path.display(),
            overridden.join(" "),
            file.to_toml()
        ),
        (None, _) => format!("# pktlab bench {}\n{}", command_line(), file.to_toml()),
    };
    Ok((file, Some(text)))
}

fn command_line() -> String {
    std::env::args().skip(2).collect::<Vec<_>>().join(" ")
}

/// The campaign the command-line flags describe.
fn from_flags(args: &Args) -> anyhow::Result<CampaignFile> {
    let mut file = CampaignFile::default();
    let sizes: Option<Vec<u16>> = match args.sizes.as_deref() {
        None => None,
        Some("rfc2544") => Some(RFC2544_SIZES.to_vec()),
        Some(list) => Some(
            list.split(',')
                .map(|s| {
                    s.trim().parse::<u16>().map_err(|_| {
                        usage(format!(
                            "invalid size '{s}' in --sizes: give frame sizes like 64,512,1518, or rfc2544"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    for name in args.traffic.as_deref().unwrap_or("inet4").split(',') {
        let name = name.trim();
        if name != "inet4" && name != "inet6" {
            return Err(usage(format!(
                "unknown traffic profile '{name}': use inet4, inet6 or inet4,inet6 (other profiles go in a campaign file)"
            )));
        }
        file.traffic.push(TrafficSection {
            name: name.to_string(),
            size: args.size.clone(),
            sizes: sizes.clone(),
            rate: args.rate.clone(),
            threads: args.threads,
            ..TrafficSection::default()
        });
    }
    if let Some(list) = &args.configs {
        let names: Vec<&str> = if list.trim() == "all" {
            BUILTIN_NAMES.to_vec()
        } else {
            list.split(',').map(str::trim).collect()
        };
        for name in names {
            file.config.push(ConfigSection {
                name: name.to_string(),
                ..ConfigSection::default()
            });
        }
    }
    Ok(file)
}
