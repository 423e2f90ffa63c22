//! What `scripts/check-docs` and the help test ask the program about
//! itself (through the hidden `pktlab docs`), made from the command tree
//! and the libraries so that it cannot drift: every option with clap's
//! own default, every file of a results folder, and the I/O backend a
//! command line would use.

use std::io::BufRead;
use std::path::PathBuf;

use clap::ArgMatches;
use pktlab_campaign::flags::Flags;
use pktlab_campaign::folder::{run_name, CAMPAIGN_FILE, ENV_FILE, RUNS_DIR};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::summary::{pps_name, SUMMARY_FILE};
use pktlab_search::mlr;

use crate::export::{csv, ministat, sweep};
use crate::manual::subcommand_paths;

/// Every option a user sees, one line each: `COMMAND<TAB>FLAGS<TAB>DEFAULT`,
/// COMMAND its path (`lab up`), FLAGS as the help writes them (`-t,
/// --duration` or `<PORT>`), DEFAULT clap's own default, the value clap
/// passes when the option is left out (empty: none).
pub fn options(cmd: &clap::Command) -> Vec<String> {
    let mut out = Vec::new();
    for path in subcommand_paths(cmd) {
        let sub = path
            .split(' ')
            .try_fold(cmd, |c, name| c.find_subcommand(name))
            .expect("a path of the tree");
        for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let flags = match (a.get_short(), a.get_long()) {
                (Some(s), Some(l)) => format!("-{s}, --{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, None) => format!("<{}>", a.get_id().as_str().to_uppercase()),
            };
            let default: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            out.push(format!("{path}\t{flags}\t{}", default.join(",")));
        }
    }
    out
}

/// Every file a campaign's results folder may hold, named as the guide
/// names them: run files and `.pps` files by their pattern.
pub fn results_files() -> Vec<String> {
    let run = run_name("<config>", "<traffic>", 1).replace(".1.", ".<n>.");
    [
        CAMPAIGN_FILE,
        ENV_FILE,
        &format!("{RUNS_DIR}/{run}"),
        &pps_name("<config>", "<traffic>"),
        SUMMARY_FILE,
        ministat::FILE,
        sweep::FILE,
        sweep::CSV_FILE,
        csv::FILE,
        crate::html::REPORT_FILE,
        mlr::record::TRIALS_FILE,
        mlr::summary::REPORT_FILE,
        mlr::latency::HISTOGRAMS_FILE,
        mlr::settings::SETTINGS_FILE,
        pktlab_search::stateful::results::REPORT_FILE,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The I/O backend a parsed command line would use: what `gen` and
/// `recv` are given (`auto` when left out); for a campaign, its plan's,
/// made from the flags that choose it as the command makes it (the
/// built-in lab's own, or AF_PACKET where a configuration or the traffic
/// needs it). None for other commands, and for a campaign that cannot be
/// read here (its file is not there).
pub fn io_of(m: &ArgMatches) -> Option<String> {
    let (name, sub) = m.subcommand()?;
    let text = |id: &str| sub.try_get_one::<String>(id).ok().flatten().cloned();
    match name {
        "gen" | "recv" => text("io"),
        "bench" | "rfc2544" | "rfc9693" => {
            let flags = Flags {
                file: sub
                    .try_get_one::<PathBuf>("campaign")
                    .ok()
                    .flatten()
                    .cloned(),
                resume: sub.try_get_one::<PathBuf>("resume").ok().flatten().cloned(),
                configs: text("configs"),
                traffic: text("traffic"),
                size: text("size"),
                sizes: text("sizes"),
                sweep: text("sweep"),
                io: text("io"),
                bidir: sub.try_get_one::<bool>("bidir").ok().flatten() == Some(&true),
                command: name.to_string(),
                ..Flags::default()
            };
            let (file, _) = flags.campaign_file().ok()?;
            // The CPU count shapes the CPU plan, not the backend.
            let plan = Plan::from_file(&file, 2).ok()?;
            Some(plan.run.io.name().to_string())
        }
        _ => None,
    }
}

/// `WHERE<TAB>IO` for each command line of `input` (as
/// [`crate::manual::unparsed_lines`] reads them), IO being what
/// [`io_of`] says of its words as `matches` parses them, or `-`.
pub fn io_lines(
    input: impl BufRead,
    matches: impl Fn(&[String]) -> Option<ArgMatches>,
) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for line in input.lines() {
        let line = line?;
        let mut fields = line.split('\t');
        let place = fields.next().unwrap_or_default().to_string();
        let words: Vec<String> = fields.map(String::from).collect();
        let io = matches(&words).and_then(|m| io_of(&m));
        out.push(format!("{place}\t{}", io.as_deref().unwrap_or("-")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    /// The options of the commands `io_of` reads, as the program has them.
    fn program() -> Command {
        let text = |id: &'static str| Arg::new(id).long(id).action(ArgAction::Set);
        let campaign = |name: &'static str| {
            ["configs", "traffic", "size", "sizes", "sweep", "io"]
                .into_iter()
                .fold(Command::new(name), |c, id| c.arg(text(id)))
                .arg(
                    Arg::new("campaign")
                        .short('f')
                        .value_parser(clap::value_parser!(PathBuf)),
                )
                .arg(
                    Arg::new("resume")
                        .long("resume")
                        .value_parser(clap::value_parser!(PathBuf)),
                )
                .arg(Arg::new("bidir").long("bidir").action(ArgAction::SetTrue))
        };
        Command::new("pktlab")
            .subcommand(Command::new("gen").arg(text("io").default_value("auto")))
            .subcommand(campaign("bench"))
            .subcommand(campaign("rfc2544"))
            .subcommand(Command::new("ministat"))
    }

    fn io(line: &str) -> Option<String> {
        io_of(&program().try_get_matches_from(line.split(' ')).unwrap())
    }

    #[test]
    fn the_backend_a_command_line_uses() {
        assert_eq!(io("pktlab gen").as_deref(), Some("auto"));
        assert_eq!(io("pktlab gen --io xdp").as_deref(), Some("xdp"));
        // The built-in lab's own: the XDP generator and receiver ...
        assert_eq!(io("pktlab bench").as_deref(), Some("xdp"));
        assert_eq!(
            io("pktlab rfc2544 --configs forwarding").as_deref(),
            Some("xdp")
        );
        // ... but AF_PACKET where the XDP generator cannot go.
        for line in [
            "pktlab bench --configs forwarding,threaded-napi",
            "pktlab bench --configs gro-off",
            "pktlab bench --bidir",
            "pktlab rfc2544 --sizes 64,9018",
        ] {
            assert_eq!(io(line).as_deref(), Some("afpacket"), "{line}");
        }
        assert_eq!(
            io("pktlab bench --configs threaded-napi --io xdp").as_deref(),
            Some("xdp")
        );
        assert_eq!(io("pktlab bench -f /nonexistent/policer.toml"), None);
        assert_eq!(io("pktlab ministat"), None);
    }

    #[test]
    fn results_files_are_named_as_the_guide_names_them() {
        let files = results_files();
        for f in [
            "runs/<config>.<traffic>.<n>.jsonl",
            "<config>.<traffic>.pps",
            "sweep.csv",
            "rfc9693.json",
        ] {
            assert!(files.iter().any(|x| x == f), "{f} in {files:?}");
        }
        assert_eq!(files.len(), 15);
    }

    #[test]
    fn options_carry_clap_s_own_defaults() {
        let cmd = Command::new("pktlab").subcommand(
            Command::new("lab").subcommand(
                Command::new("up")
                    .arg(Arg::new("queues").long("queues").default_value("1"))
                    .arg(Arg::new("secret").long("secret").hide(true))
                    .arg(Arg::new("dir")),
            ),
        );
        assert_eq!(
            options(&cmd),
            vec!["lab up\t--queues\t1", "lab up\t<DIR>\t"]
        );
    }
}
