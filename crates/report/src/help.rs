//! Options as the command they are on shows and takes them. `bench`,
//! `rfc2544` and `rfc9693` share one set of campaign options (one clap
//! argument struct, flattened into each); this module says what differs
//! on a command: an option it refuses (left out of its help, man page and
//! completions, and refused in one line that says why), or a help text of
//! its own. An option added to the shared struct shows on every command
//! with its own text until a line here says otherwise.

use clap::parser::ValueSource;

/// Why `rfc2544` refuses a fixed-rate run's options.
const SEARCH_CHOOSES: &str =
    "the search chooses loads and trial lengths (see --max-rate, --final-trial, --repeat)";
/// Why `rfc9693` refuses them.
const TESTS_CHOOSE: &str =
    "the tests choose their counts and rates (see --setup-rate, --connections)";

/// An option a command refuses.
pub struct Refused {
    pub command: &'static str,
    /// clap's id of the argument (the field's name).
    pub arg: &'static str,
    /// The option as the error names it.
    pub flag: &'static str,
    pub why: &'static str,
}

/// Every option a command refuses, in the order they are checked.
pub const REFUSED: &[Refused] = &[
    refused("rfc2544", "rate", "--rate", SEARCH_CHOOSES),
    refused("rfc2544", "duration", "--duration", SEARCH_CHOOSES),
    refused("rfc2544", "warmup", "--warmup", SEARCH_CHOOSES),
    refused("rfc2544", "tail", "--tail", SEARCH_CHOOSES),
    refused("rfc2544", "iterations", "-N", SEARCH_CHOOSES),
    refused("rfc9693", "rate", "--rate", TESTS_CHOOSE),
    refused("rfc9693", "warmup", "--warmup", TESTS_CHOOSE),
    refused("rfc9693", "tail", "--tail", TESTS_CHOOSE),
    refused("rfc9693", "iterations", "-N", TESTS_CHOOSE),
];

const fn refused(
    command: &'static str,
    arg: &'static str,
    flag: &'static str,
    why: &'static str,
) -> Refused {
    Refused {
        command,
        arg,
        flag,
        why,
    }
}

/// The one-line refusal of an option the command line gave to a command
/// that refuses it, if any (`matches` are the whole program's).
pub fn refusal(matches: &clap::ArgMatches) -> Option<String> {
    let (name, sub) = matches.subcommand()?;
    REFUSED
        .iter()
        .filter(|r| r.command == name)
        .find(|r| sub.value_source(r.arg) == Some(ValueSource::CommandLine))
        .map(|r| format!("{} does not apply to {name}: {}", r.flag, r.why))
}

/// The program's command tree with each command's own view of the
/// options it shares: refused options hidden, help texts of its own.
pub fn tailor(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommands(|sub| {
        let name = sub.get_name().to_string();
        let hidden = REFUSED.iter().filter(|r| r.command == name);
        let sub = hidden.fold(sub, |c, r| c.mut_arg(r.arg, |a| a.hide(true)));
        OWN_HELP
            .iter()
            .filter(|(command, _, _)| *command == name)
            .fold(sub, |c, (_, arg, text)| {
                c.mut_arg(*arg, |a| a.help(*text).long_help(None::<&str>))
            })
    })
}

/// (command, argument id, its help on that command).
const OWN_HELP: &[(&str, &str, &str)] = &[
    (
        "rfc2544",
        "name",
        "Campaign name (names the default results folder) [default: rfc2544]",
    ),
    (
        "rfc9693",
        "name",
        "Campaign name (names the default results folder) [default: rfc9693]",
    ),
    (
        "rfc9693",
        "duration",
        "Length of the throughput test's real test phase in each of its trials, \
         after the preliminary phase (10s, 1m, ...) [default: 10s]",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    /// A program with one command sharing the campaign options.
    fn program(name: &'static str) -> Command {
        let shared = [
            "rate",
            "duration",
            "warmup",
            "tail",
            "iterations",
            "name",
            "configs",
        ];
        let sub = shared.iter().fold(Command::new(name), |c, id| {
            c.arg(Arg::new(*id).long(*id).action(ArgAction::Set))
        });
        Command::new("pktlab").subcommand(sub)
    }

    fn refusal_of(name: &'static str, words: &[&str]) -> Option<String> {
        let mut all = vec!["pktlab", name];
        all.extend_from_slice(words);
        refusal(&tailor(program(name)).try_get_matches_from(all).unwrap())
    }

    #[test]
    fn a_refused_option_is_named_with_the_reason() {
        assert_eq!(
            refusal_of("rfc2544", &["--configs", "a", "--iterations", "3"]).as_deref(),
            Some(
                "-N does not apply to rfc2544: the search chooses loads and trial lengths \
                 (see --max-rate, --final-trial, --repeat)"
            )
        );
        // The first in the table's order, as the options were checked.
        assert_eq!(
            refusal_of("rfc9693", &["--tail", "1s", "--rate", "1k"]).as_deref(),
            Some(
                "--rate does not apply to rfc9693: the tests choose their counts and rates \
                 (see --setup-rate, --connections)"
            )
        );
        assert_eq!(refusal_of("rfc9693", &["--duration", "5s"]), None);
        assert_eq!(refusal_of("bench", &["--rate", "1k"]), None);
    }

    #[test]
    fn a_refused_option_is_hidden_where_refused_only() {
        for (name, want) in [
            ("bench", vec![]),
            (
                "rfc2544",
                vec!["duration", "iterations", "rate", "tail", "warmup"],
            ),
            ("rfc9693", vec!["iterations", "rate", "tail", "warmup"]),
        ] {
            let cmd = tailor(program(name));
            let sub = cmd.find_subcommand(name).unwrap();
            let mut hidden: Vec<&str> = sub
                .get_arguments()
                .filter(|a| a.is_hide_set())
                .map(|a| a.get_id().as_str())
                .collect();
            hidden.sort();
            assert_eq!(hidden, want, "{name}");
        }
    }

    #[test]
    fn a_command_s_own_help_replaces_the_shared_one_there_only() {
        let help = |name: &'static str, arg: &str| {
            let cmd = tailor(program(name).mut_subcommand(name, |c| {
                c.mut_arg("name", |a| a.help("shared [default: bench]"))
            }));
            let sub = cmd.find_subcommand(name).unwrap().clone();
            let a = sub.get_arguments().find(|a| a.get_id() == arg).unwrap();
            a.get_help().map(|h| h.to_string()).unwrap_or_default()
        };
        assert_eq!(help("bench", "name"), "shared [default: bench]");
        assert!(help("rfc2544", "name").ends_with("[default: rfc2544]"));
        assert!(help("rfc9693", "name").ends_with("[default: rfc9693]"));
        assert!(help("rfc9693", "duration").starts_with("Length of the throughput test's"));
    }
}
