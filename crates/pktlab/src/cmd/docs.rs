//! `pktlab completions SHELL` and `pktlab man DIR`: shell completions and
//! man pages generated from the clap definitions, so they never drift from
//! the options the binary really takes. And the hidden `pktlab docs ...`,
//! which gives `scripts/check-docs` what only the program knows: whether a
//! command line parses, the subcommands, the campaign file's keys.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::{os_message, usage};

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(clap::Args)]
#[command(
    after_help = "Writes pktlab.1 and one pktlab-SUBCOMMAND.1 per subcommand (pktlab-lab-up.1 \
for nested ones). Install them with, for example: pktlab man /usr/local/share/man/man1 && mandb"
)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// Prints the completion script of `shell` for `cmd` on stdout.
pub fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    use clap_complete::shells;
    let mut out = Vec::new();
    let name = cmd.get_name().to_string();
    match args.shell {
        Shell::Bash => clap_complete::generate(shells::Bash, &mut cmd, name, &mut out),
        Shell::Zsh => clap_complete::generate(shells::Zsh, &mut cmd, name, &mut out),
        Shell::Fish => clap_complete::generate(shells::Fish, &mut cmd, name, &mut out),
    }
    crate::cmd::common::write_stdout(&String::from_utf8_lossy(&out))
}

/// Writes a man page for `cmd` and one for each of its subcommands, at
/// every depth, into `args.dir`; prints the files written.
pub fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir).map_err(|e| {
        usage(format!(
            "cannot create {}: {}",
            args.dir.display(),
            os_message(&e)
        ))
    })?;
    let mut cmd = cmd;
    cmd.build();
    let mut written = Vec::new();
    write_pages(&cmd, cmd.get_name(), &args.dir, &mut written)?;
    let list: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    crate::cmd::common::write_stdout(&list)
}

fn write_pages(
    cmd: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    // clap names are `&'static str` without its `string` feature; these few
    // names live until the command exits anyway.
    let static_name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let page = cmd.clone().name(static_name);
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    let path = dir.join(format!("{name}.1"));
    pktlab_campaign::atomic::write_atomic(&path, &roff)?;
    written.push(path);
    for sub in visible_subcommands(cmd) {
        write_pages(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

/// The subcommands a user sees: not `help`, not the hidden ones.
fn visible_subcommands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
}

/// `pktlab docs WHAT`, for scripts/check-docs, not for users: `main`
/// dispatches it before clap reads the command line, so it stays out of
/// the help, the man pages and the completions.
#[derive(clap::Parser)]
#[command(
    name = "pktlab-docs",
    bin_name = "pktlab docs",
    about = "Checks of the documentation (scripts/check-docs)"
)]
struct DocsCli {
    #[command(subcommand)]
    what: DocsWhat,
}

/// The word after `pktlab` that calls [`docs`].
pub const DOCS: &str = "docs";

#[derive(clap::Subcommand)]
enum DocsWhat {
    /// Parse command lines read on stdin, without running them: one per
    /// line, `WHERE<TAB>pktlab<TAB>ARG<TAB>...`; prints `WHERE: error` for
    /// each one that does not parse and exits 1 if any did not
    CheckArgs,
    /// Print every subcommand a user sees, one path a line (`lab up`)
    Subcommands,
    /// Print every key of a campaign file, derived from the types it is read
    /// into: `TABLE<TAB>KEY<TAB>TYPE<TAB>required|optional`
    CampaignKeys,
    /// Parse campaign files (TOML) as `bench -f` does; prints `FILE: error`
    /// for each one that does not parse and exits 1 if any did not
    CheckCampaign {
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
    },
}

/// Runs `pktlab docs ...` (`words` without the program's name). `cmd` and
/// `parse` are the program's own command tree and parser.
pub fn docs(
    words: Vec<String>,
    cmd: clap::Command,
    parse: impl Fn(&[String]) -> Result<(), clap::Error>,
) -> anyhow::Result<()> {
    use clap::Parser;
    let args = match DocsCli::try_parse_from(&words) {
        Ok(args) => args,
        Err(e) => {
            // Help on stdout (exit 0), usage errors on stderr (exit 2), as main.
            let _ = e.print();
            return Err(crate::error::Exit(if e.use_stderr() { 2 } else { 0 }).into());
        }
    };
    match args.what {
        DocsWhat::CheckArgs => check_args(std::io::stdin().lock(), parse),
        DocsWhat::Subcommands => {
            let mut paths = Vec::new();
            subcommand_paths(&cmd, "", &mut paths);
            crate::cmd::common::write_stdout(&lines(&paths))
        }
        DocsWhat::CampaignKeys => {
            let schema = pktlab_campaign::file::CampaignFile::json_schema();
            let keys = campaign_keys(schema.as_value())?;
            crate::cmd::common::write_stdout(&lines(&keys))
        }
        DocsWhat::CheckCampaign { files } => check_campaigns(&files),
    }
}

fn lines(items: &[String]) -> String {
    items.iter().map(|l| format!("{l}\n")).collect()
}

fn check_args(
    input: impl BufRead,
    parse: impl Fn(&[String]) -> Result<(), clap::Error>,
) -> anyhow::Result<()> {
    let mut failures = Vec::new();
    for line in input.lines() {
        let line = line?;
        let mut fields = line.split('\t');
        let place = fields.next().unwrap_or_default().to_string();
        let words: Vec<String> = fields.map(String::from).collect();
        if let Err(e) = parse_command_line(&words, &parse) {
            failures.push(format!("{place}: {e}"));
        }
    }
    crate::cmd::common::write_stdout(&lines(&failures))?;
    match failures.len() {
        0 => Ok(()),
        _ => Err(crate::error::Exit(1).into()),
    }
}

/// Whether `words` (`pktlab` first) parse; help and version requests do.
/// `pkt-gen`'s options are read by its own parser, as it would run them.
fn parse_command_line(
    words: &[String],
    parse: &impl Fn(&[String]) -> Result<(), clap::Error>,
) -> Result<(), String> {
    use clap::error::ErrorKind;
    use clap::Parser;
    let parsed = match words.get(1).map(String::as_str) {
        Some(DOCS) => DocsCli::try_parse_from(&words[1..]).map(|_| ()),
        _ => parse(words),
    };
    match parsed {
        Ok(()) => {}
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {}
        Err(e) => return Err(clap_one_line(&e)),
    }
    if words.get(1).map(String::as_str) == Some(crate::cmd::pktgen::NAME) {
        // Any CPU count a documented -c may name.
        crate::cmd::pktgen::options::parse(&words[2..], usize::from(u16::MAX))
            .map_err(|e| crate::error::one_line(&e))?;
    }
    Ok(())
}

/// clap's error and its tip, without the usage lines.
fn clap_one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("error:") || l.starts_with("tip:"))
        .collect();
    kept.join("; ").replace("error: ", "")
}

fn subcommand_paths(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in visible_subcommands(cmd) {
        let path = format!("{prefix}{}", sub.get_name());
        out.push(path.clone());
        subcommand_paths(sub, &format!("{path} "), out);
    }
}

/// Every leaf key of the schema: `(top level)`, `[lab]`, `[[traffic]]`,
/// `[[lab.generator]]`, each with the key's type and whether it is required.
fn campaign_keys(schema: &serde_json::Value) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    walk_table(schema, schema, "", false, &mut out)?;
    Ok(out)
}

fn walk_table(
    root: &serde_json::Value,
    table: &serde_json::Value,
    path: &str,
    array: bool,
    out: &mut Vec<String>,
) -> anyhow::Result<()> {
    let header = match (path, array) {
        ("", _) => "(top level)".to_string(),
        (p, false) => format!("[{p}]"),
        (p, true) => format!("[[{p}]]"),
    };
    let required: Vec<&str> = table["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|k| k.as_str()).collect())
        .unwrap_or_default();
    let Some(props) = table["properties"].as_object() else {
        anyhow::bail!("{header}: the schema has no properties");
    };
    for (key, value) in props {
        let value = resolve(root, value)?;
        let sub_path = match path {
            "" => key.clone(),
            p => format!("{p}.{key}"),
        };
        if value["properties"].is_object() {
            walk_table(root, value, &sub_path, false, out)?;
            continue;
        }
        let items = resolve(root, &value["items"])?;
        if items["properties"].is_object() {
            walk_table(root, items, &sub_path, true, out)?;
            continue;
        }
        let need = match required.contains(&key.as_str()) {
            true => "required",
            false => "optional",
        };
        out.push(format!(
            "{header}\t{key}\t{}\t{need}",
            type_name(value, items)
        ));
    }
    Ok(())
}

/// A `$ref` to `#/$defs/NAME` replaced by the definition.
fn resolve<'a>(
    root: &'a serde_json::Value,
    value: &'a serde_json::Value,
) -> anyhow::Result<&'a serde_json::Value> {
    match value["$ref"].as_str() {
        None => Ok(value),
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").unwrap_or(r);
            match &root["$defs"][name] {
                serde_json::Value::Null => anyhow::bail!("the schema has no definition {r}"),
                def => Ok(def),
            }
        }
    }
}

/// `string`, `integer`, `array of string`: the JSON type without `null`.
fn type_name(value: &serde_json::Value, items: &serde_json::Value) -> String {
    let base = |v: &serde_json::Value| -> String {
        match &v["type"] {
            serde_json::Value::String(t) => t.clone(),
            serde_json::Value::Array(ts) => ts
                .iter()
                .filter_map(|t| t.as_str())
                .filter(|t| *t != "null")
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "any".to_string(),
        }
    };
    match base(value).as_str() {
        "array" => format!("array of {}", base(items)),
        other => other.to_string(),
    }
}

fn check_campaigns(files: &[PathBuf]) -> anyhow::Result<()> {
    use pktlab_campaign::file::CampaignFile;
    let mut failures = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| {
            crate::error::usage(format!(
                "cannot read {}: {}",
                file.display(),
                crate::error::os_message(&e)
            ))
        })?;
        if let Err(e) = CampaignFile::parse(&text) {
            failures.push(format!("{}: {e}", file.display()));
        }
    }
    crate::cmd::common::write_stdout(&lines(&failures))?;
    match failures.len() {
        0 => Ok(()),
        _ => Err(crate::error::Exit(1).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_a_schema_by_hand() {
        // A schema written by hand in the shape schemars derives.
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "lab": {"$ref": "#/$defs/Lab"},
                "traffic": {"type": "array", "items": {"$ref": "#/$defs/T"}},
            },
            "$defs": {
                "Lab": {"type": "object", "properties": {
                    "ifaces": {"type": "array", "items": {"type": "string"}},
                    "generator": {"type": "array", "items": {"$ref": "#/$defs/G"}},
                }},
                "G": {"type": "object", "required": ["iface"], "properties": {
                    "iface": {"type": "string"},
                }},
                "T": {"type": "object", "properties": {
                    "sizes": {"type": ["array", "null"], "items": {"type": "integer"}},
                }},
            }
        });
        let keys = campaign_keys(&schema).unwrap();
        assert_eq!(
            keys,
            [
                // Keys in the schema's (alphabetical) order: generator, ifaces.
                "[[lab.generator]]\tiface\tstring\trequired",
                "[lab]\tifaces\tarray of string\toptional",
                "(top level)\tname\tstring\toptional",
                "[[traffic]]\tsizes\tarray of integer\toptional",
            ]
        );
    }

    #[test]
    fn the_campaign_files_keys_come_from_its_types() {
        let schema = pktlab_campaign::file::CampaignFile::json_schema();
        let keys = campaign_keys(schema.as_value()).unwrap();
        for key in [
            "(top level)\tname\tstring\toptional",
            "[run]\titerations\tinteger\toptional",
            "[[traffic]]\tname\tstring\trequired",
            "[[traffic]]\tsizes\tarray of integer\toptional",
            "[[lab.generator]]\tiface\tstring\trequired",
            "[[config]]\tapply\tarray of string\toptional",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key} not in {keys:#?}");
        }
        assert!(
            !keys.iter().any(|k| k.contains("\tgenerator\t")),
            "{keys:#?}"
        );
    }

    fn parse_with_clap(cmd: clap::Command) -> impl Fn(&[String]) -> Result<(), clap::Error> {
        move |words| cmd.clone().try_get_matches_from(words).map(|_| ())
    }

    #[test]
    fn a_misspelt_flag_is_reported_with_clap_s_tip() {
        let cmd = clap::Command::new("pktlab")
            .subcommand(clap::Command::new("gen").arg(clap::Arg::new("duration").long("duration")));
        let parse = parse_with_clap(cmd);
        let input = "a.md:3\tpktlab\tgen\t--duration\t5s\nb.md:7\tpktlab\tgen\t--duraton\t5s\n";
        let words = |l: &str| l.split('\t').skip(1).map(String::from).collect::<Vec<_>>();
        let lines: Vec<&str> = input.lines().collect();
        assert_eq!(parse_command_line(&words(lines[0]), &parse), Ok(()));
        let err = parse_command_line(&words(lines[1]), &parse).unwrap_err();
        assert!(
            err.starts_with("unexpected argument '--duraton' found"),
            "{err}"
        );
        assert!(
            err.contains("tip: a similar argument exists: '--duration'"),
            "{err}"
        );
    }

    #[test]
    fn pkt_gen_options_go_through_pkt_gen_s_parser() {
        let cmd = clap::Command::new("pktlab").subcommand(
            clap::Command::new("pkt-gen").arg(
                clap::Arg::new("args")
                    .num_args(0..)
                    .allow_hyphen_values(true)
                    .trailing_var_arg(true),
            ),
        );
        let parse = parse_with_clap(cmd);
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            parse_command_line(&words("pktlab pkt-gen -f tx -i g0 -l 60"), &parse),
            Ok(())
        );
        let err =
            parse_command_line(&words("pktlab pkt-gen -f tx -i g0 -l 6o"), &parse).unwrap_err();
        assert!(err.contains("invalid -l '6o'"), "{err}");
    }
}
