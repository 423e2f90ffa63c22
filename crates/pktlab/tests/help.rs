//! Every default a command's `--help` shows is the value the command uses
//! when the option is left out, and an option a command refuses is not
//! shown there.
//!
//! The help of every subcommand (and pkt-gen's usage) is rendered by the
//! binary and read as people read it; each `[default: X]` is compared with
//! the value found in the library that applies it: the campaign's plan
//! made from no flags, the search's and the stateful tests' settings, the
//! generator's configuration, the CPU plan, pkt-gen's parser, ... A
//! default that only clap gives (the value clap passes when the option is
//! left out, with no notion of it in a library) must be clap's own, as
//! `pktlab docs options` reports it from the command tree. A shown default
//! with no entry below fails, so that a new option says where its default
//! comes from.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{pktlab, PKTLAB};
use pktlab_campaign::flags::Flags;
use pktlab_campaign::plan::Plan;
use pktlab_search::mlr::flags::SearchFlags;
use pktlab_search::stateful::flags::StatefulFlags;

/// One default as a help text shows it.
#[derive(Debug)]
struct Shown {
    command: String,
    /// The option's long name (`--duration`), else its short one (`-c`),
    /// else its value name (`<PORT>`).
    key: String,
    default: String,
}

/// Where a shown default is found.
enum Real {
    /// The value the library applies, written as the help writes it.
    Value(String),
    /// Clap's own default: the value clap passes to the command.
    Clap,
}

/// Every subcommand a user sees (`lab up`), pkt-gen's aside.
fn subcommands() -> Vec<String> {
    let r = pktlab(&["docs", "subcommands"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
        .lines()
        .filter(|s| *s != "pkt-gen")
        .map(String::from)
        .collect()
}

fn help(command: &str) -> String {
    let mut args: Vec<&str> = command.split(' ').collect();
    args.push("--help");
    let r = pktlab(&args);
    assert_eq!(r.code, 0, "{command} --help: {}", r.stderr);
    r.stdout
}

/// The key of an option line of clap's help (`  -t, --duration <TIME>`),
/// if it is one.
fn option_key(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let first = words.first()?;
    // Options are indented by 2 to 6 spaces, their help by 10.
    let indent = line.len() - line.trim_start().len();
    if !(2..=6).contains(&indent) {
        return None;
    }
    if first.starts_with('<') {
        return Some(first.trim_end_matches("...").to_string());
    }
    if !first.starts_with('-') {
        return None;
    }
    let long = words.iter().find(|w| w.starts_with("--"));
    let key = long.unwrap_or(first).trim_end_matches(',');
    Some(key.to_string())
}

/// Every `[default: X]` in `text` (brackets may nest).
fn defaults_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("[default: ") {
        let mut depth = 0;
        let mut end = None;
        for (j, c) in rest[i..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.expect("a closed [default: ...]");
        out.push(rest[i + "[default: ".len()..end].to_string());
        rest = &rest[end..];
    }
    out
}

/// The defaults `command --help` shows, option by option.
fn shown_defaults(command: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    let flush = |current: &Option<(String, String)>, out: &mut Vec<Shown>| {
        if let Some((key, text)) = current {
            for default in defaults_in(text) {
                out.push(Shown {
                    command: command.to_string(),
                    key: key.clone(),
                    default,
                });
            }
        }
    };
    for line in help(command).lines() {
        if let Some(key) = option_key(line) {
            flush(&current, &mut out);
            current = Some((key, line.to_string()));
        } else if !line.is_empty() && !line.starts_with(' ') {
            // A section's heading (`Options:`) or text after the options.
            flush(&current, &mut out);
            current = None;
        } else if let Some((_, text)) = current.as_mut() {
            if line.trim().is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push(' ');
            text.push_str(line.trim());
        }
    }
    flush(&current, &mut out);
    out
}

/// Clap's own default of every option: (command, key) → default.
fn clap_defaults() -> HashMap<(String, String), String> {
    let r = pktlab(&["docs", "options"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let key = f[1].split(", ").last().unwrap().to_string();
            ((f[0].to_string(), key), f[2].to_string())
        })
        .collect()
}

fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// 50000 as the help writes a rate: `50k`.
fn rate(pps: f64) -> String {
    match pps {
        p if p >= 1e6 && p % 1e6 == 0.0 => format!("{}M", p / 1e6),
        p if p >= 1e3 && p % 1e3 == 0.0 => format!("{}k", p / 1e3),
        p => p.to_string(),
    }
}

/// A ratio as the help writes a percentage: 0.005 is `0.5`.
fn percent(ratio: f64) -> String {
    format!("{}", (ratio * 1e6).round() / 1e4)
}

/// The plan of `pktlab COMMAND` with `flags` and nothing else, on a
/// machine of `cpus` CPUs.
fn plan_with(command: &str, flags: Flags, cpus: usize) -> Plan {
    let flags = Flags {
        command: command.to_string(),
        ..flags
    };
    let (file, _) = flags.campaign_file().expect("the flags make a campaign");
    Plan::from_file(&file, cpus).expect("the campaign plans")
}

fn plan(command: &str) -> Plan {
    plan_with(command, Flags::default(), 4)
}

/// The plan of a campaign file's text under `pktlab COMMAND`.
fn plan_of_file(command: &str, text: &str) -> Plan {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, text).unwrap();
    let flags = Flags {
        file: Some(path),
        ..Flags::default()
    };
    plan_with(command, flags, 4)
}

/// A description, if `holds`; else what was found instead.
fn described(text: &str, holds: bool, found: impl std::fmt::Debug) -> Real {
    Real::Value(match holds {
        true => text.to_string(),
        false => format!("not {text:?}: {found:?}"),
    })
}

fn io_of(plan: &Plan) -> &'static str {
    plan.run.io.name()
}

/// The campaign commands' shared options.
fn campaign(command: &str, key: &str) -> Option<Real> {
    let p = plan(command);
    let v = |s: String| Some(Real::Value(s));
    match key {
        "--output-dir" => v(results_folder_pattern()),
        "--name" => v(p.name.clone()),
        "--configs" => v(p
            .configs
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
            .join(",")),
        "--iterations" => v(p.run.iterations.to_string()),
        "--duration" if command == "rfc9693" => {
            let s = StatefulFlags::default().settings().unwrap();
            v(secs(Duration::from_secs_f64(s.throughput_duration_s)))
        }
        "--duration" => v(secs(p.run.trial.duration)),
        "--warmup" => v(secs(p.run.trial.interval * p.run.trial.trim_head as u32)),
        "--tail" => v(secs(p.run.trial.interval * p.run.trial.trim_tail as u32)),
        "--order" => v(p.run.order.name().to_string()),
        "--seed" => {
            let random = plan_of_file(command, "[run]\norder = \"random\"\n");
            v(match random.run.order {
                pktlab_campaign::order::Order::Random { seed } => seed.to_string(),
                other => format!("{other:?}"),
            })
        }
        "--size" => {
            let both = Flags {
                traffic: Some("inet4,inet6".into()),
                ..Flags::default()
            };
            let t = plan_with(command, both, 4).traffics;
            v(format!(
                "{} for inet4, {} for inet6",
                t[0].sizes, t[1].sizes
            ))
        }
        "--rate" => Some(described(
            "as fast as the generator can",
            p.traffics[0].rate_pps.is_none(),
            p.traffics[0].rate_pps,
        )),
        "--threads" => v(p.traffics[0].threads.to_string()),
        "--traffic" => v(p
            .traffics
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
            .join(",")),
        "--io" => Some(campaign_io(command)),
        "--drop-trace" => {
            use pktlab_loss::drops::DropTrace;
            let from_file = plan_of_file(command, "[run]\ndrop_trace = \"off\"\n");
            let found = (p.run.drop_trace, from_file.run.drop_trace);
            Some(described(
                "the campaign's [run] drop_trace, else auto",
                found == (DropTrace::Auto, DropTrace::Off),
                found,
            ))
        }
        "--prefix" => v(match &p.lab {
            pktlab_campaign::plan::LabChoice::Builtin { prefix, .. } => prefix.clone(),
            other => format!("{other:?}"),
        }),
        "--dut-cpus" => Some(dut_cpus("the last CPU, or the last quarter from 8 CPUs on")),
        "--label" => Some(label()),
        "--db" => v(DB_DEFAULT.into()),
        _ => None,
    }
}

/// `--io`: the XDP backends on the built-in lab, AF_PACKET where they
/// cannot go and on other labs.
fn campaign_io(command: &str) -> Real {
    let with = |f: Flags| io_of(&plan_with(command, f, 4)).to_string();
    let configs = |c: &str| Flags {
        configs: Some(c.into()),
        ..Flags::default()
    };
    let found = [
        with(Flags::default()),
        with(configs("forwarding,gro-off")),
        with(configs("threaded-napi")),
        with(Flags {
            bidir: true,
            ..Flags::default()
        }),
        with(Flags {
            size: Some("3413".into()),
            ..Flags::default()
        }),
        with(Flags {
            size: Some("3412".into()),
            ..Flags::default()
        }),
        io_of(&plan_of_file(
            command,
            "[lab]\nkind = \"interfaces\"\ngen_iface = \"a\"\nrcv_iface = \"b\"\n\
             dut_in_mac = \"02:00:00:00:00:01\"\n",
        ))
        .to_string(),
    ];
    described(
        "xdp on the built-in lab (afpacket with gro-off, threaded-napi, traffic both ways \
         or frames above 3412 bytes), afpacket on other labs",
        found
            == [
                "xdp", "afpacket", "afpacket", "afpacket", "afpacket", "xdp", "afpacket",
            ],
        found,
    )
}

/// The built-in lab's DUT CPUs by the number of CPUs.
fn dut_cpus(text: &str) -> Real {
    use pktlab_lab::CpuPlan;
    let dut = |n: usize| CpuPlan::default_for(&(0..n).collect::<Vec<_>>()).dut_cpus;
    let one = CpuPlan::default_for(&[0]);
    let found = (dut(2), dut(7), dut(8), dut(16), one.mode);
    let holds = found.0 == [1]
        && found.1 == [6]
        && found.2 == [6, 7]
        && found.3 == [12, 13, 14, 15]
        && one.mode == pktlab_lab::CpuMode::Shared;
    described(text, holds, found)
}

/// `--label`: the DUT's kernel release (of its `uname -a` over ssh, else
/// this host's).
fn label() -> Real {
    let env = |uname: Option<&str>| {
        serde_json::from_value::<pktlab_campaign::records::EnvRecord>(serde_json::json!({
            "configs": [], "created_at": 0, "dut_uname": uname,
            "host": {"hostname": "h", "kernel": "6.18.0-host", "kernel_build": "#1",
                     "os": null, "cpu_model": null, "cpus": 2},
            "interrupts": null, "lab": "l", "nics": [], "pktlab_version": "0",
            "virtual_lab": false
        }))
        .unwrap()
    };
    let found = (
        pktlab_history::import::folder::default_label(&env(None)),
        pktlab_history::import::folder::default_label(&env(Some(
            "FreeBSD dut1 14.1-RELEASE FreeBSD 14.1-RELEASE amd64",
        ))),
    );
    described(
        "the DUT's kernel release",
        found == ("6.18.0-host".into(), "14.1-RELEASE".into()),
        found,
    )
}

/// What `--db` says when left out; [`the_history_database_is_where_the_help_says`]
/// checks it on the binary.
const DB_DEFAULT: &str =
    "$PKTLAB_HISTORY_DB, else $XDG_DATA_HOME/pktlab/history.sqlite, else ~/.local/share/pktlab/history.sqlite";

/// rfc2544's own options: the search's settings made of no flags.
fn rfc2544(key: &str) -> Option<Real> {
    let flags = SearchFlags {
        tests: "throughput,latency,back-to-back".into(),
        ..SearchFlags::default()
    };
    let s = flags.settings(None).unwrap();
    let g = &s.goals[0];
    let v = |s: String| Some(Real::Value(s));
    match key {
        "--tests" => Some(Real::Clap),
        "--latency-loads" => v(s
            .latency_loads
            .iter()
            .map(|l| percent(*l))
            .collect::<Vec<_>>()
            .join(",")),
        "--latency-trials" => v(s.latency_trials.to_string()),
        "--b2b-trials" => v(s.b2b_trials.to_string()),
        "--b2b-trial" => v(secs(Duration::from_secs_f64(s.b2b_trial_s))),
        "--trial-warmup" => v(secs(Duration::from_secs_f64(s.warmup_s))),
        "--goal" => v(s
            .goals
            .iter()
            .map(|g| percent(g.loss_ratio))
            .collect::<Vec<_>>()
            .join(" and ")),
        "--width" => v(percent(g.width)),
        "--initial-trial" => v(secs(Duration::from_secs_f64(g.initial_trial_duration))),
        "--final-trial" => v(secs(Duration::from_secs_f64(g.final_trial_duration))),
        "--duration-sum" => v(secs(Duration::from_secs_f64(g.duration_sum))),
        "--preceding-targets" => v(g.preceding_targets.to_string()),
        "--max-rate" => {
            use pktlab_search::mlr::MaxLoad;
            let linked = flags.settings(Some(10e9)).unwrap().max;
            let found = (s.max.clone(), linked);
            Some(described(
                "the line rate of --link-speed, or else what the generator reaches",
                matches!(found, (MaxLoad::Calibrate, MaxLoad::LinkBps(b)) if b == 10e9),
                found,
            ))
        }
        "--repeat" => v(flags.searches().to_string()),
        _ => None,
    }
}

/// rfc9693's own options: the stateful tests' settings made of no flags.
fn rfc9693(key: &str) -> Option<Real> {
    use pktlab_search::stateful::settings::Test;
    let s = StatefulFlags::default().settings().unwrap();
    let v = |s: String| Some(Real::Value(s));
    match key {
        "--tests" => Some(described("all", s.tests == Test::ALL, &s.tests)),
        "--connections" => v(s.connections.to_string()),
        // Left to the run, which goes a quarter above the DUT's limit
        // (stateful::method's the_capacity_search_goes_a_quarter_above_the_limit).
        "--max-connections" => Some(described(
            "nf_conntrack_max plus a quarter",
            s.max_connections.is_none(),
            s.max_connections,
        )),
        "--setup-rate" => v(rate(s.setup_rate_pps)),
        "--validation-rate" => v(rate(s.validation_rate_pps)),
        "--min-rate" => v(rate(s.min_rate_pps)),
        "--max-rate" => v(rate(s.max_rate_pps)),
        "--width" => v(percent(s.width)),
        // Left to the run, which takes d1's address for nat44 on the
        // built-in lab (tests/stateful.rs checks the translated frames).
        "--nat-address" => Some(described(
            "the DUT's outside address for nat44 on the built-in lab",
            s.translated.is_none(),
            s.translated,
        )),
        _ => None,
    }
}

/// The generator's configuration made of `gen`'s options as clap gives
/// them when only `set` is given.
fn gen_config(
    set: impl FnOnce(&mut pktlab_engine::options::GenOptions),
) -> pktlab_engine::gen::GenConfig {
    let mut o = pktlab_engine::options::GenOptions {
        io: "null".into(),
        zerocopy: "auto".into(),
        threads: 1,
        ttl: 64,
        flows: "seq".into(),
        ports: "ranges".into(),
        seed: 1,
        batch: pktlab_engine::tx::DEFAULT_BATCH,
        interval: "1s".into(),
        ..Default::default()
    };
    set(&mut o);
    pktlab_engine::options::gen_config(&o).unwrap().config
}

fn gen(key: &str) -> Option<Real> {
    use pktlab_engine::options::default_range;
    let cfg = gen_config(|_| {});
    let tx = pktlab_engine::tx::TxPlan::default();
    let v = |s: String| Some(Real::Value(s));
    match key {
        "--src" => v(format!("the built-in lab's, {}", default_range(&cfg, true))),
        "--dst" => v(format!(
            "the built-in lab's, {}",
            default_range(&cfg, false)
        )),
        "--size" => {
            let v6 = gen_config(|o| o.inet6 = true);
            let sizes = (cfg.frames.sizes.to_string(), v6.frames.sizes.to_string());
            v(format!(
                "the smallest frame of the family: {} for IPv4, {} for IPv6",
                sizes.0, sizes.1
            ))
        }
        "--count" => Some(described(
            "no limit",
            cfg.plan.count.is_none(),
            cfg.plan.count,
        )),
        "--duration" => Some(described(
            "no limit",
            cfg.plan.duration.is_none(),
            cfg.plan.duration,
        )),
        "--rate" => Some(described(
            "as fast as possible",
            cfg.plan.rate_pps.is_none(),
            cfg.plan.rate_pps,
        )),
        "--src-mac" => {
            let on_lo = gen_config(|o| o.iface = Some("lo".into()));
            let lo = pktlab_io::iface::lookup("lo").unwrap().mac;
            Some(described(
                "the interface's",
                on_lo.frames.src_mac.0 == lo,
                on_lo.frames.src_mac,
            ))
        }
        "--dst-mac" => {
            let mut o = pktlab_engine::options::GenOptions {
                iface: Some("lo".into()),
                io: "afpacket".into(),
                zerocopy: "auto".into(),
                threads: 1,
                ttl: 64,
                flows: "seq".into(),
                ports: "ranges".into(),
                seed: 1,
                batch: tx.batch,
                interval: "1s".into(),
                ..Default::default()
            };
            o.dst_mac = None;
            let setup = pktlab_engine::options::gen_config(&o).unwrap();
            Some(described(
                "the next hop's, from the kernel's route and neighbour tables",
                setup.next_hop.is_some(),
                setup.next_hop,
            ))
        }
        // clap's defaults, the same as the engine's own plan's.
        "--threads" => v(tx.threads.to_string()),
        "--batch" => v(tx.batch.to_string()),
        "--interval" => v(secs(tx.interval)),
        "--io" | "--zerocopy" | "--ttl" | "--flows" | "--ports" | "--seed" | "--drop-trace" => {
            Some(Real::Clap)
        }
        _ => None,
    }
}

fn recv(key: &str) -> Option<Real> {
    use pktlab_loss::drops::DropTrace;
    let rx = pktlab_engine::rx::RxPlan::default();
    match key {
        "--threads" => Some(Real::Value(rx.threads.to_string())),
        "--interval" => Some(Real::Value(secs(rx.interval))),
        "--drop-trace" => {
            let found = (
                DropTrace::for_receiver(None, true, true).unwrap(),
                DropTrace::for_receiver(None, false, true).unwrap(),
            );
            Some(described(
                "auto when -s, -d or -6 give the generator's ranges, else off",
                found == (DropTrace::Auto, DropTrace::Off),
                found,
            ))
        }
        "--io" | "--zerocopy" | "--latency" => Some(Real::Clap),
        _ => None,
    }
}

fn others(command: &str, key: &str) -> Option<Real> {
    let v = |s: String| Some(Real::Value(s));
    match (command, key) {
        ("lab up" | "lab down" | "lab status", "--prefix") => {
            v(pktlab_lab::DEFAULT_PREFIX.to_string())
        }
        ("lab up", "--queues") => Some(Real::Clap),
        ("lab up", "--dut-cpus") => Some(dut_cpus(
            "the last CPU, or the last quarter from 8 CPUs on; shared mode with one CPU",
        )),
        ("compare" | "history compare", "--confidence") => Some(Real::Clap),
        ("report", "--output") => Some(Real::Value(report_output())),
        (c, "--db") if c.starts_with("history") => v(DB_DEFAULT.into()),
        ("history import", "--label") => match label() {
            Real::Value(t) if t == "the DUT's kernel release" => {
                v("each DUT's kernel release".into())
            }
            other => Some(other),
        },
        ("history import-pps", "--order") => {
            let mut labels = vec!["100", "99", "9"];
            labels.sort_by(|a, b| pktlab_history::order::natural(a, b));
            Some(described(
                "natural order, so that revision numbers sort as numbers",
                labels == ["9", "99", "100"],
                labels,
            ))
        }
        ("history import-pps", "--traffic" | "--size") => Some(Real::Clap),
        ("history trend" | "history compare" | "history report", "--by") => Some(Real::Clap),
        ("history trend" | "history report", "--metric") => Some(Real::Value(
            "each run's forwarded_pps, search bounds, rfc9693 results".into(),
        )),
        ("history compare", "--metric") => v("as for trend".into()),
        ("linerate", "--size") => {
            let text =
                pktlab_report::linerate::command_text("10G", false, None, None, false).unwrap();
            let sizes: Vec<&str> = text
                .lines()
                .skip(2)
                .filter_map(|l| l.split_whitespace().next())
                .collect();
            Some(described(
                "the RFC 2544 sizes and imix",
                sizes == ["64", "128", "256", "512", "1024", "1280", "1518", "imix"],
                sizes,
            ))
        }
        ("ifstat" | "drops", "--interval") => Some(Real::Clap),
        ("ifstat", "--count") | ("drops", "--time") => v("until Ctrl-C".into()),
        ("pktgen-log", "--trim") => Some(Real::Clap),
        ("pktgen-log", "--trim-head") => v(pktlab_stats::pktgen::Trim::default().head.to_string()),
        ("pktgen-log", "--trim-tail") => v(pktlab_stats::pktgen::Trim::default().tail.to_string()),
        ("knob xdp-forward", "--redirect") | ("knob xdp-drops", "--duration") => Some(Real::Clap),
        ("knob xdp-forward", "--queue") => v(pktlab_io::fastpath::DEFAULT_QUEUE.to_string()),
        ("ministat", "-c" | "-d" | "-w") => v(ministat_default(key)),
        _ => None,
    }
}

/// Where a shown default is found, if this test knows.
fn real(command: &str, key: &str) -> Option<Real> {
    match command {
        "bench" => campaign(command, key),
        "rfc2544" | "rfc9693" => {
            let own = match command {
                "rfc2544" => rfc2544(key),
                _ => rfc9693(key),
            };
            own.or_else(|| campaign(command, key))
        }
        "gen" => gen(key),
        "recv" => recv(key),
        _ => others(command, key),
    }
}

#[test]
fn every_default_shown_is_the_one_the_command_uses() {
    let clap = clap_defaults();
    let mut problems = Vec::new();
    let mut checked = 0;
    for command in subcommands() {
        for s in shown_defaults(&command) {
            checked += 1;
            let at = format!(
                "pktlab {} --help: {} [default: {}]",
                s.command, s.key, s.default
            );
            match real(&s.command, &s.key) {
                None => problems.push(format!(
                    "{at}: say in tests/help.rs where the command finds this default"
                )),
                Some(Real::Clap) => match clap.get(&(s.command.clone(), s.key.clone())) {
                    // clap shows an empty default as "".
                    Some(d) if *d == s.default || (d.is_empty() && s.default == "\"\"") => {}
                    other => problems.push(format!(
                        "{at}: not clap's own default ({other:?}): find the value the command uses"
                    )),
                },
                Some(Real::Value(v)) if v == s.default => {}
                Some(Real::Value(v)) => problems.push(format!("{at}: the command uses {v:?}")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 90, "only {checked} defaults were read");
}

/// `report`'s page when `-o` is left out: in the folder, or with several
/// folders in the current one (checked on the binary).
fn report_output() -> String {
    "DIR/report.html; with several folders, report.html in the current folder".into()
}

/// ministat's -c, -d and -w, on the binary: the confidence, the
/// delimiters and the width it takes when they are left out.
fn ministat_default(key: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::write(&a, "1\t9\n2\t9\n3 9\n").unwrap();
    std::fs::write(&b, "4\n5\n6\n").unwrap();
    let r = pktlab(&["ministat", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    match key {
        "-c" => match r.stdout.contains("Difference at 95.0% confidence") {
            true => "95".into(),
            false => r.stdout,
        },
        // Tab and space both split: the first column's values are 1, 2, 3.
        "-d" => {
            let row = r
                .stdout
                .lines()
                .find(|l| l.starts_with("x   "))
                .unwrap_or_default();
            let f: Vec<&str> = row.split_whitespace().collect();
            match f.get(1..4) == Some(&["3", "1", "3"][..]) {
                true => "space and tab".into(),
                false => r.stdout,
            }
        }
        // Not a terminal: the plot is 74 characters between its borders.
        _ => {
            let border = r.stdout.lines().find(|l| l.starts_with("+-")).unwrap();
            match border.len() == 76 {
                true => "74, or the terminal's width".into(),
                false => border.to_string(),
            }
        }
    }
}

/// `results/<name>-<timestamp>`: the folder a campaign claims when `-o`
/// is left out, as the campaign library claims it (in a child process of
/// this test, run in a folder of its own, since it is made under the
/// current directory).
fn results_folder_pattern() -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_claims_the_default_results_folder",
            "--nocapture",
        ])
        .env("PKTLAB_HELP_TEST_CHILD", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let claimed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("CLAIMED "))
        .unwrap_or_else(|| panic!("the child said: {stdout}"));
    let stamp = pktlab_campaign::folder::utc_stamp(1_700_000_000);
    claimed
        .replace("NAME", "<name>")
        .replace(&stamp, "<timestamp>")
}

#[test]
fn child_claims_the_default_results_folder() {
    if std::env::var_os("PKTLAB_HELP_TEST_CHILD").is_none() {
        return;
    }
    let path = pktlab_campaign::folder::ResultsDir::claim_default("NAME", 1_700_000_000).unwrap();
    println!("CLAIMED {}", path.display());
}

#[test]
fn the_history_database_is_where_the_help_says() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(&home).unwrap();
    // `history list` on a database not made yet names the one it read.
    let list = |env: &[(&str, &Path)], want: &Path| {
        let mut c = Command::new(PKTLAB);
        c.args(["history", "list"])
            .env_remove("PKTLAB_HISTORY_DB")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", &home);
        for (k, v) in env {
            c.env(k, v);
        }
        let stderr = String::from_utf8_lossy(&c.output().unwrap().stderr).into_owned();
        let named = format!("history database {}: does not exist", want.display());
        assert!(stderr.contains(&named), "{env:?}: {stderr}");
    };
    // The order the help gives: the variable, XDG_DATA_HOME, ~/.local/share.
    let named = dir.path().join("named.sqlite");
    list(
        &[("PKTLAB_HISTORY_DB", &named), ("XDG_DATA_HOME", &xdg)],
        &named,
    );
    list(
        &[("XDG_DATA_HOME", &xdg)],
        &xdg.join("pktlab/history.sqlite"),
    );
    list(&[], &home.join(".local/share/pktlab/history.sqlite"));
}

#[test]
fn report_writes_where_the_help_says() {
    // A folder pktlab report reads: a campaign file and one .pps file.
    let dir = tempfile::tempdir().unwrap();
    let folder = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("campaign.toml"), "name = \"t\"\n").unwrap();
        std::fs::write(d.join("forwarding.inet4.pps"), "1\n2\n3\n").unwrap();
        d
    };
    let (a, b) = (folder("a"), folder("b"));
    let run = |args: &[&Path]| {
        let mut c = Command::new(PKTLAB);
        c.arg("report").args(args).current_dir(dir.path());
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[&a]);
    assert!(a.join("report.html").is_file(), "DIR/report.html");
    run(&[&a, &b]);
    assert!(dir.path().join("report.html").is_file(), "./report.html");
    assert_eq!(
        report_output(),
        "DIR/report.html; with several folders, report.html in the current folder"
    );
}

/// A range as pkt-gen reads it, written with its port (the range's own,
/// or the one pkt-gen gives a range without one).
fn with_port(range: &str) -> String {
    let r: pktlab_wire::range::EndpointRange = range.parse().unwrap();
    match range.contains(':') {
        true => range.to_string(),
        false => format!("{range}:{}", r.ports.start),
    }
}

/// pkt-gen's usage (`pktlab pkt-gen -h`): each `(default X)` against what
/// pkt-gen's own parser sets when the option is left out.
#[test]
fn pkt_gen_s_usage_shows_its_parser_s_defaults() {
    let r = pktlab(&["pkt-gen", "-h"]);
    let usage = format!("{}{}", r.stdout, r.stderr);
    let o = pktlab_pktgen::options::parse(&["-i".into(), "null".into()], 4).unwrap();
    let real = |opt: &str| -> Option<String> {
        Some(match opt {
            "-f" => format!("{:?}", o.function).to_lowercase(),
            "-l" => o.size.to_string(),
            "-p" => o.threads.to_string(),
            "-c" => format!("{}, 0: all", o.cpus),
            "-b" => o
                .burst
                .unwrap_or(pktlab_pktgen::options::DEFAULT_BURST)
                .to_string(),
            "-w" => o.wait_link.to_string(),
            "-T" => o.interval_ms.to_string(),
            "-s" => with_port(&o.src),
            "-d" => with_port(&o.dst),
            "-S" => match &o.src_mac {
                None => "the interface's".into(),
                Some(m) => m.clone(),
            },
            "-D" => o.dst_mac.clone(),
            _ => return None,
        })
    };
    let mut seen = 0;
    for line in usage.lines() {
        let Some(opt) = line
            .split_whitespace()
            .next()
            .filter(|w| w.starts_with('-'))
        else {
            continue;
        };
        let Some(start) = line.find("(default ") else {
            continue;
        };
        let shown = &line[start + "(default ".len()..];
        let shown = &shown[..shown.find(')').unwrap()];
        seen += 1;
        assert_eq!(
            real(opt).as_deref(),
            Some(shown),
            "pkt-gen -h: {opt} (default {shown})"
        );
    }
    assert!(seen >= 10, "{usage}");
    // -4 is the default family.
    assert!(usage.contains("IPv4 (default)") && !o.inet6, "{usage}");
}

#[test]
fn options_a_command_refuses_are_neither_shown_nor_taken() {
    let refused = [
        (
            "rfc2544",
            &["--rate", "--duration", "--warmup", "--tail", "--iterations"][..],
        ),
        (
            "rfc9693",
            &["--rate", "--warmup", "--tail", "--iterations"][..],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let man = pktlab(&["man", dir.path().to_str().unwrap()]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    let bash = pktlab(&["completions", "bash"]).stdout;
    for (command, flags) in refused {
        let text = help(command);
        let page = std::fs::read_to_string(dir.path().join(format!("pktlab-{command}.1"))).unwrap();
        // bash's completion words of this command: its case line.
        let words = bash
            .lines()
            .skip_while(|l| !l.contains(&format!("pktlab__subcmd__{command})")))
            .find(|l| l.contains("opts=\""))
            .unwrap()
            .to_string();
        for flag in flags {
            let shown = text
                .lines()
                .any(|l| option_key(l).as_deref() == Some(*flag));
            assert!(!shown, "{command} --help shows {flag}");
            // The flag, not a longer one that starts with it (--duration-sum).
            let in_page =
                regex::Regex::new(&format!(r"{}(\\f|[^\\a-z])", flag.replace('-', r"\\-")))
                    .unwrap();
            assert!(!in_page.is_match(&page), "pktlab-{command}.1 shows {flag}");
            assert!(
                !words.contains(&format!(" {flag} ")),
                "bash completes {command} {flag}"
            );
            let mut args = vec![command, "--prefix", "nolab", flag, "1"];
            if *flag == "--iterations" {
                args[3] = "-N";
            }
            let r = pktlab(&args);
            assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
            assert!(
                r.stderr.starts_with(&format!(
                    "pktlab: {} does not apply to {command}: ",
                    args[3]
                )),
                "{args:?}: {}",
                r.stderr
            );
        }
    }
    // bench shows them all.
    let bench = help("bench");
    for flag in ["--rate", "--duration", "--warmup", "--tail", "--iterations"] {
        assert!(
            bench
                .lines()
                .any(|l| option_key(l).as_deref() == Some(flag)),
            "bench {flag}"
        );
    }
}
