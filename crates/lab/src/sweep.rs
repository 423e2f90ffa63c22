//! Sweeps: one knob of the DUT over a list of values, each value one DUT
//! configuration, as BSDRP's netbenches draws one curve per knob.
//!
//! A knob is one of:
//!
//! - a host-wide sysctl of [`crate::knobs::HOST_KNOBS`] (`netdev_max_backlog`
//!   or `net.core.netdev_max_backlog`): each value is the built-in
//!   configuration `KNOB-VALUE`, saved before the change and restored even
//!   after a kill ([`crate::knobs::host`]);
//! - any other sysctl, set in the DUT (`net.ipv4.neigh.default.gc_thresh3`,
//!   or `sysctl:KEY` for a key without a dot);
//! - an interface setting of every DUT port: `ethtool-K:FEATURE` (on/off),
//!   `ethtool-C:PARAM` (coalescing), `ethtool-G:PARAM` (ring sizes),
//!   `ethtool-L:PARAM` (channels);
//! - a parameter of a root qdisc on every DUT port: `qdisc:KIND:PARAM`
//!   (`qdisc:fq_codel:limit`);
//! - command templates with `{value}`, from a campaign file.
//!
//! A sysctl's or an interface setting's revert sets the value the DUT had
//! before the sweep's first run ([`Sweep::fill_reverts`] reads it there),
//! and [`Sweep::probe`] adds the knob to the DUT's state probe, so
//! that the revert is proven as every configuration's is.

use crate::dut::{DutConfig, DutError};
use crate::knobs::host;

/// The knob a sweep turns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SweepKnob {
    /// A host-wide sysctl: `short` is its short name (`netdev_max_backlog`).
    HostSysctl { short: String },
    /// A sysctl set where the DUT's lines run.
    DutSysctl { key: String },
    /// `ethtool -<option> PORT <setting> VALUE` on every DUT port.
    Ethtool {
        option: EthtoolOption,
        setting: String,
    },
    /// `tc qdisc replace dev PORT root <kind> <param> VALUE` on every DUT port.
    Qdisc { kind: String, param: String },
    /// Lines with `{value}` in them, named by the user.
    Template {
        name: String,
        apply: Vec<String>,
        revert: Vec<String>,
    },
}

/// The ethtool settings a sweep can turn, by the option that sets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EthtoolOption {
    /// `-K`: offload features, on or off.
    Features,
    /// `-C`: interrupt coalescing.
    Coalesce,
    /// `-G`: ring sizes.
    Rings,
    /// `-L`: channels (queues).
    Channels,
}

impl EthtoolOption {
    fn from_letter(letter: &str) -> Option<EthtoolOption> {
        Some(match letter {
            "K" => EthtoolOption::Features,
            "C" => EthtoolOption::Coalesce,
            "G" => EthtoolOption::Rings,
            "L" => EthtoolOption::Channels,
            _ => return None,
        })
    }

    /// The option that sets, and the one that shows.
    fn flags(self) -> (&'static str, &'static str) {
        match self {
            EthtoolOption::Features => ("-K", "-k"),
            EthtoolOption::Coalesce => ("-C", "-c"),
            EthtoolOption::Rings => ("-G", "-g"),
            EthtoolOption::Channels => ("-L", "-l"),
        }
    }
}

/// One knob and the values it takes, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    pub knob: SweepKnob,
    pub values: Vec<String>,
}

/// How a sweep is written on the command line.
pub const SWEEP_SYNTAX: &str = "KNOB=V1,V2,... where KNOB is a host sysctl (netdev_max_backlog, ...), a sysctl of the DUT (net.ipv4....), ethtool-K:FEATURE, ethtool-C:PARAM, ethtool-G:PARAM, ethtool-L:PARAM or qdisc:KIND:PARAM";

fn invalid(name: &str, why: impl Into<String>) -> DutError {
    DutError::Invalid {
        name: name.to_string(),
        why: why.into(),
    }
}

/// Characters a value, a key or a setting may have: they go into shell
/// lines as they are.
fn is_plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-:/+@".contains(c))
}

impl SweepKnob {
    /// Parses a knob as `--sweep` and a campaign file's `knob` write it.
    pub fn parse(text: &str) -> Result<SweepKnob, DutError> {
        let text = text.trim();
        let bad = |why: &str| invalid(text, format!("{why}; a sweep is {SWEEP_SYNTAX}"));
        if !is_plain(text) {
            return Err(bad(
                "the knob is empty or has characters other than letters, digits and ._-:/+@",
            ));
        }
        if host::host_knob(text).is_some() {
            return Ok(SweepKnob::HostSysctl {
                short: text.to_string(),
            });
        }
        if let Some((short, _)) = host::HOST_KNOBS.iter().find(|(_, k)| *k == text) {
            return Ok(SweepKnob::HostSysctl {
                short: short.to_string(),
            });
        }
        if let Some(key) = text.strip_prefix("sysctl:") {
            if key.is_empty() || key.contains(':') {
                return Err(bad("sysctl: needs a key, as in sysctl:net.ipv4.ip_forward"));
            }
            if let Some((short, _)) = host::HOST_KNOBS
                .iter()
                .find(|(s, k)| *s == key || *k == key)
            {
                return Ok(SweepKnob::HostSysctl {
                    short: short.to_string(),
                });
            }
            return Ok(SweepKnob::DutSysctl {
                key: key.to_string(),
            });
        }
        if let Some(rest) = text.strip_prefix("ethtool-") {
            let (letter, setting) = rest
                .split_once(':')
                .ok_or_else(|| bad("an ethtool knob is ethtool-K:FEATURE, ethtool-C:PARAM, ethtool-G:PARAM or ethtool-L:PARAM"))?;
            let option = EthtoolOption::from_letter(letter)
                .ok_or_else(|| bad("ethtool's option must be K, C, G or L"))?;
            if setting.is_empty() || setting.contains(':') {
                return Err(bad(
                    "an ethtool knob names one setting, as in ethtool-C:rx-usecs",
                ));
            }
            return Ok(SweepKnob::Ethtool {
                option,
                setting: setting.to_string(),
            });
        }
        if let Some(rest) = text.strip_prefix("qdisc:") {
            return match rest.split(':').collect::<Vec<_>>()[..] {
                [kind, param] if !kind.is_empty() && !param.is_empty() => Ok(SweepKnob::Qdisc {
                    kind: kind.to_string(),
                    param: param.to_string(),
                }),
                _ => Err(bad(
                    "a qdisc knob is qdisc:KIND:PARAM, as in qdisc:fq_codel:limit",
                )),
            };
        }
        if text.contains('.') && !text.contains(':') {
            return Ok(SweepKnob::DutSysctl {
                key: text.to_string(),
            });
        }
        Err(bad("unknown knob"))
    }

    /// A template knob from a campaign file: lines with `{value}`.
    pub fn template(
        name: &str,
        apply: &[String],
        revert: &[String],
    ) -> Result<SweepKnob, DutError> {
        if !is_plain(name) {
            return Err(invalid(
                name,
                "a sweep's name must be letters, digits and ._-:/+@",
            ));
        }
        if apply.is_empty() || !apply.iter().any(|l| l.contains("{value}")) {
            return Err(invalid(
                name,
                "a sweep's apply lines must use {value}, the value being tried",
            ));
        }
        Ok(SweepKnob::Template {
            name: name.to_string(),
            apply: apply.to_vec(),
            revert: revert.to_vec(),
        })
    }

    /// The knob's short name: what its configurations are named after and
    /// what a report's axis reads.
    pub fn label(&self) -> String {
        match self {
            SweepKnob::HostSysctl { short } => short.clone(),
            SweepKnob::DutSysctl { key } => {
                key.rsplit(['.', '/']).next().unwrap_or(key).to_string()
            }
            SweepKnob::Ethtool { setting, .. } => setting.clone(),
            SweepKnob::Qdisc { kind, param } => format!("{kind}-{param}"),
            SweepKnob::Template { name, .. } => name.clone(),
        }
    }

    /// The knob as the user wrote it, for results and messages.
    pub fn spec(&self) -> String {
        match self {
            SweepKnob::HostSysctl { short } => short.clone(),
            SweepKnob::DutSysctl { key } => key.clone(),
            SweepKnob::Ethtool { option, setting } => {
                format!("ethtool{}:{setting}", option.flags().0)
            }
            SweepKnob::Qdisc { kind, param } => format!("qdisc:{kind}:{param}"),
            SweepKnob::Template { name, .. } => name.clone(),
        }
    }
}

impl Sweep {
    /// Parses `--sweep KNOB=V1,V2,...`.
    pub fn parse_flag(text: &str) -> Result<Sweep, DutError> {
        let (knob, values) = text
            .split_once('=')
            .ok_or_else(|| invalid(text, format!("a sweep is {SWEEP_SYNTAX}")))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        Sweep::new(SweepKnob::parse(knob)?, values)
    }

    /// A sweep of `knob` over `values`: at least two, each plain and told
    /// apart from the others.
    pub fn new(knob: SweepKnob, values: Vec<String>) -> Result<Sweep, DutError> {
        let name = knob.spec();
        if values.len() < 2 {
            return Err(invalid(&name, "a sweep needs at least two values"));
        }
        for (i, v) in values.iter().enumerate() {
            // A value names its configuration, and so results files.
            let plain = !v.is_empty()
                && v.len() <= 32
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !plain {
                return Err(invalid(
                    &name,
                    format!("value '{v}' must be 1 to 32 letters, digits, '-' and '_' (it names a configuration)"),
                ));
            }
            if values[..i].contains(v) {
                return Err(invalid(&name, format!("value '{v}' is given twice")));
            }
            if let SweepKnob::HostSysctl { short } = &knob {
                if v.parse::<u64>().is_err() {
                    return Err(invalid(
                        &name,
                        format!("the value of {short} must be a non-negative integer, not '{v}'"),
                    ));
                }
            }
        }
        Ok(Sweep { knob, values })
    }

    /// The configuration name of each value: `LABEL-VALUE`, in order (for
    /// a host sysctl exactly the built-in configuration's name).
    pub fn names(&self) -> Vec<String> {
        let label = self.knob.label();
        self.values.iter().map(|v| format!("{label}-{v}")).collect()
    }

    /// The value a configuration name stands for, if it is one of this
    /// sweep's.
    pub fn value_of(&self, config: &str) -> Option<&str> {
        self.names()
            .iter()
            .position(|n| n == config)
            .map(|i| self.values[i].as_str())
    }

    /// Whether every value is a number: the report then draws the values
    /// to scale, else one after the other.
    pub fn numeric(&self) -> bool {
        self.values.iter().all(|v| v.parse::<f64>().is_ok())
    }

    /// A line whose output shows the knob on the DUT whose ports are
    /// `ports`, for its state probe; None where the built-in probe already
    /// shows it (host sysctls) or nothing can (templates).
    pub fn probe(&self, ports: &[&str]) -> Option<String> {
        match &self.knob {
            SweepKnob::HostSysctl { .. } | SweepKnob::Template { .. } => None,
            SweepKnob::DutSysctl { key } => Some(format!("sysctl {key}")),
            SweepKnob::Ethtool { option, .. } => Some(
                ports
                    .iter()
                    .map(|p| format!("ethtool {} {p}", option.flags().1))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            SweepKnob::Qdisc { .. } => Some(
                ports
                    .iter()
                    .map(|p| format!("tc qdisc show dev {p} root"))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        }
    }

    /// The DUT configuration of each value. A host sysctl's are the
    /// built-in ones and are left to `builtin` (called with each name).
    /// A sysctl's or an interface setting's have no revert yet: it sets
    /// what the DUT has before the sweep, which [`Sweep::fill_reverts`]
    /// reads there ([`Sweep::reads`]).
    pub fn configs(
        &self,
        ports: &[&str],
        builtin: impl Fn(&str) -> Result<DutConfig, DutError>,
    ) -> Result<Vec<DutConfig>, DutError> {
        if let SweepKnob::HostSysctl { .. } = self.knob {
            return self.names().iter().map(|n| builtin(n)).collect();
        }
        let names = self.names();
        Ok(self
            .values
            .iter()
            .zip(names)
            .map(|(value, name)| {
                let mut c = DutConfig::unchanged(&name);
                c.apply = self.apply_lines(ports, value);
                c.revert = match &self.knob {
                    SweepKnob::Template { revert, .. } => {
                        revert.iter().map(|l| l.replace("{value}", value)).collect()
                    }
                    SweepKnob::Qdisc { kind, .. } => qdisc_revert(ports, kind),
                    _ => Vec::new(),
                };
                c
            })
            .collect())
    }

    /// Whether the knob is set on the DUT's ports, which must then be known.
    pub fn needs_ports(&self) -> bool {
        matches!(
            self.knob,
            SweepKnob::Ethtool { .. } | SweepKnob::Qdisc { .. }
        )
    }

    /// Whether the reverts need the knob's value read on the DUT first.
    pub fn reads(&self) -> bool {
        matches!(
            self.knob,
            SweepKnob::DutSysctl { .. } | SweepKnob::Ethtool { .. }
        )
    }

    /// Sets the revert of each of `configs` (this sweep's, from
    /// [`Sweep::configs`]) to the knob's value now, read through `read` (a
    /// line run on the DUT, returning its output).
    pub fn fill_reverts(
        &self,
        configs: &mut [DutConfig],
        ports: &[&str],
        read: impl Fn(&str) -> Result<String, DutError>,
    ) -> Result<(), DutError> {
        if !self.reads() {
            return Ok(());
        }
        let revert = self.revert_lines(ports, &read)?;
        let names = self.names();
        for c in configs.iter_mut().filter(|c| names.contains(&c.name)) {
            c.revert = revert.clone();
        }
        Ok(())
    }

    fn apply_lines(&self, ports: &[&str], value: &str) -> Vec<String> {
        let each_port = |f: &dyn Fn(&str) -> String| ports.iter().map(|p| f(p)).collect();
        match &self.knob {
            SweepKnob::HostSysctl { .. } => Vec::new(),
            SweepKnob::DutSysctl { key } => vec![format!("sysctl -qw {key}={value}")],
            SweepKnob::Ethtool { option, setting } => {
                each_port(&|p| format!("ethtool {} {p} {setting} {value}", option.flags().0))
            }
            SweepKnob::Qdisc { kind, param } => {
                each_port(&|p| format!("tc qdisc replace dev {p} root {kind} {param} {value}"))
            }
            SweepKnob::Template { apply, .. } => {
                apply.iter().map(|l| l.replace("{value}", value)).collect()
            }
        }
    }

    /// The lines that put a sysctl or an interface setting back as it is
    /// now.
    fn revert_lines(
        &self,
        ports: &[&str],
        read: &impl Fn(&str) -> Result<String, DutError>,
    ) -> Result<Vec<String>, DutError> {
        match &self.knob {
            SweepKnob::DutSysctl { key } => {
                let now = read(&format!("sysctl -n {key}"))?;
                // Multi-field values (`4096 16384 4194304`) come back with
                // tabs; sysctl takes them with spaces, quoted.
                let now = now.split_whitespace().collect::<Vec<_>>().join(" ");
                if now.is_empty() {
                    return Err(invalid(
                        &self.knob.spec(),
                        format!("sysctl {key} has no value"),
                    ));
                }
                Ok(vec![format!("sysctl -qw '{key}={now}'")])
            }
            SweepKnob::Ethtool { option, setting } => ports
                .iter()
                .map(|p| {
                    let shown = read(&format!("ethtool {} {p}", option.flags().1))?;
                    let now = ethtool_current(*option, setting, &shown)
                        .map_err(|why| invalid(&self.knob.spec(), format!("{p}: {why}")))?;
                    Ok(format!("ethtool {} {p} {setting} {now}", option.flags().0))
                })
                .collect(),
            _ => Ok(Vec::new()),
        }
    }
}

/// Deletes the root qdisc of `kind` where it is the root, which brings back
/// the port's default (veth's `noqueue`, a NIC's `mq`).
fn qdisc_revert(ports: &[&str], kind: &str) -> Vec<String> {
    ports
        .iter()
        .map(|p| {
            format!(
                "if tc qdisc show dev {p} root | grep -q '^qdisc {kind} '; then tc qdisc del dev {p} root; fi"
            )
        })
        .collect()
}

/// Long names of the `-K` features whose short names ethtool also takes.
const FEATURE_ALIASES: [(&str, &str); 11] = [
    ("gro", "generic-receive-offload"),
    ("gso", "generic-segmentation-offload"),
    ("tso", "tcp-segmentation-offload"),
    ("lro", "large-receive-offload"),
    ("sg", "scatter-gather"),
    ("rx", "rx-checksumming"),
    ("tx", "tx-checksumming"),
    ("rxvlan", "rx-vlan-offload"),
    ("txvlan", "tx-vlan-offload"),
    ("ntuple", "ntuple-filters"),
    ("rxhash", "receive-hashing"),
];

/// The current value of `setting` in the output of ethtool's show option
/// (`-k`, `-c`, `-g`, `-l`), or why it cannot be swept.
pub fn ethtool_current(
    option: EthtoolOption,
    setting: &str,
    shown: &str,
) -> Result<String, String> {
    let name = match option {
        EthtoolOption::Features => FEATURE_ALIASES
            .iter()
            .find(|(short, _)| *short == setting)
            .map_or(setting, |(_, long)| long)
            .to_string(),
        // `-g` and `-l` print `RX:`, `RX Mini:`, `Combined:` for the
        // `rx`, `rx-mini`, `combined` they take.
        EthtoolOption::Rings | EthtoolOption::Channels => setting.replace('-', " "),
        EthtoolOption::Coalesce => setting.to_string(),
    };
    // `-g` and `-l` print the maximums first, then the current settings.
    let current = match option {
        EthtoolOption::Rings | EthtoolOption::Channels => shown
            .split_once("Current hardware settings:")
            .map(|(_, after)| after)
            .ok_or("ethtool shows no current hardware settings")?,
        _ => shown,
    };
    for line in current.lines() {
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case(&name) {
            continue;
        }
        let mut words = value.split_whitespace();
        let value = words
            .next()
            .ok_or(format!("ethtool shows no value for {setting}"))?;
        if value == "n/a" {
            return Err(format!("the driver does not support {setting}"));
        }
        if words.next() == Some("[fixed]") {
            return Err(format!("{setting} is fixed: the driver cannot change it"));
        }
        return Ok(value.to_string());
    }
    Err(format!("ethtool shows no {setting}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Sweep {
        Sweep::parse_flag(s).unwrap()
    }

    fn error(s: &str) -> String {
        Sweep::parse_flag(s).unwrap_err().to_string()
    }

    #[test]
    fn knobs_and_their_names() {
        let s = parse("netdev_max_backlog=1000,2000,4000");
        assert_eq!(
            s.knob,
            SweepKnob::HostSysctl {
                short: "netdev_max_backlog".into()
            }
        );
        assert_eq!(
            s.names(),
            [
                "netdev_max_backlog-1000",
                "netdev_max_backlog-2000",
                "netdev_max_backlog-4000"
            ]
        );
        assert_eq!(s.value_of("netdev_max_backlog-2000"), Some("2000"));
        assert_eq!(s.value_of("forwarding"), None);
        assert!(s.numeric());
        assert_eq!(
            parse("net.core.dev_weight=64,128").knob,
            SweepKnob::HostSysctl {
                short: "dev_weight".into()
            }
        );
        let s = parse("net.ipv4.neigh.default.gc_thresh3=1024,4096");
        assert_eq!(
            s.knob,
            SweepKnob::DutSysctl {
                key: "net.ipv4.neigh.default.gc_thresh3".into()
            }
        );
        assert_eq!(s.names(), ["gc_thresh3-1024", "gc_thresh3-4096"]);
        assert_eq!(
            parse("sysctl:netdev_budget=300,600").knob,
            SweepKnob::HostSysctl {
                short: "netdev_budget".into()
            }
        );
        assert_eq!(
            parse("sysctl:kernel.foo=1,2").knob,
            SweepKnob::DutSysctl {
                key: "kernel.foo".into()
            }
        );
        let s = parse("ethtool-K:gro=on,off");
        assert_eq!(s.names(), ["gro-on", "gro-off"]);
        assert!(!s.numeric());
        assert_eq!(s.knob.spec(), "ethtool-K:gro");
        let s = parse("qdisc:fq_codel:limit=100, 1000");
        assert_eq!(s.names(), ["fq_codel-limit-100", "fq_codel-limit-1000"]);
    }

    #[test]
    fn bad_sweeps_say_what_is_wrong() {
        assert!(error("netdev_max_backlog").contains("a sweep is KNOB=V1,V2"));
        assert!(error("netdev_max_backlog=1000").contains("at least two values"));
        assert!(error("netdev_max_backlog=1000,1000").contains("value '1000' is given twice"));
        assert!(
            error("netdev_max_backlog=1000,x").contains("must be a non-negative integer, not 'x'")
        );
        assert!(error("net.ipv4.ip_forward=1,$(reboot)").contains("value '$(reboot)'"));
        assert!(error("net.ipv4.ip_forward=1,").contains("value ''"));
        assert!(error("ethtool-X:gro=on,off").contains("must be K, C, G or L"));
        assert!(error("ethtool-K=on,off").contains("ethtool-K:FEATURE"));
        assert!(error("qdisc:fq_codel=1,2").contains("qdisc:KIND:PARAM"));
        assert!(error("backlog=1,2").contains("unknown knob"));
        assert!(error("a b=1,2").contains("characters other than"));
    }

    const ETHTOOL_K: &str = "Features for d0:\nrx-checksumming: on [fixed]\ntx-checksumming: on\ngeneric-receive-offload: off\nrx-gro-list: off\n";
    const ETHTOOL_G: &str = "Ring parameters for eth1:\nPre-set maximums:\nRX:\t\t4096\nRX Mini:\tn/a\nTX:\t\t4096\nCurrent hardware settings:\nRX:\t\t512\nRX Mini:\tn/a\nTX:\t\t1024\n";
    const ETHTOOL_C: &str =
        "Coalesce parameters for eth1:\nAdaptive RX: off  TX: off\nrx-usecs: 3\nrx-frames: n/a\n";

    #[test]
    fn ethtool_values_as_shown() {
        use EthtoolOption::*;
        assert_eq!(
            ethtool_current(Features, "gro", ETHTOOL_K),
            Ok("off".into())
        );
        assert_eq!(ethtool_current(Features, "tx", ETHTOOL_K), Ok("on".into()));
        assert_eq!(
            ethtool_current(Features, "rx-gro-list", ETHTOOL_K),
            Ok("off".into())
        );
        assert_eq!(
            ethtool_current(Features, "rx", ETHTOOL_K),
            Err("rx is fixed: the driver cannot change it".into())
        );
        assert_eq!(ethtool_current(Rings, "rx", ETHTOOL_G), Ok("512".into()));
        assert_eq!(ethtool_current(Rings, "tx", ETHTOOL_G), Ok("1024".into()));
        assert_eq!(
            ethtool_current(Rings, "rx-mini", ETHTOOL_G),
            Err("the driver does not support rx-mini".into())
        );
        assert_eq!(
            ethtool_current(Coalesce, "rx-usecs", ETHTOOL_C),
            Ok("3".into())
        );
        assert_eq!(
            ethtool_current(Coalesce, "rx-frames", ETHTOOL_C),
            Err("the driver does not support rx-frames".into())
        );
        assert_eq!(
            ethtool_current(Coalesce, "tx-usecs", ETHTOOL_C),
            Err("ethtool shows no tx-usecs".into())
        );
        assert_eq!(
            ethtool_current(
                Channels,
                "combined",
                "Channel parameters for d0:\nPre-set maximums:\nCombined:\t8\n"
            ),
            Err("ethtool shows no current hardware settings".into())
        );
    }

    fn no_builtin(name: &str) -> Result<DutConfig, DutError> {
        panic!("no built-in configuration expected, asked for {name}")
    }

    #[test]
    fn configuration_lines_revert_to_what_was_read() {
        let s = parse("ethtool-G:rx=256,1024");
        let read = |line: &str| {
            assert!(
                line == "ethtool -g eth1" || line == "ethtool -g eth2",
                "{line}"
            );
            Ok(ETHTOOL_G.to_string())
        };
        assert!(s.reads());
        let mut c = s.configs(&["eth1", "eth2"], no_builtin).unwrap();
        assert!(c[0].revert.is_empty());
        s.fill_reverts(&mut c, &["eth1", "eth2"], read).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].name, "rx-256");
        assert_eq!(
            c[0].apply,
            ["ethtool -G eth1 rx 256", "ethtool -G eth2 rx 256"]
        );
        assert_eq!(
            c[1].apply,
            ["ethtool -G eth1 rx 1024", "ethtool -G eth2 rx 1024"]
        );
        assert_eq!(
            c[0].revert,
            ["ethtool -G eth1 rx 512", "ethtool -G eth2 rx 512"]
        );
        assert_eq!(c[1].revert, c[0].revert);
        assert!(!c[0].builtin);
        assert_eq!(
            s.probe(&["eth1", "eth2"]).unwrap(),
            "ethtool -g eth1; ethtool -g eth2"
        );

        let s = parse("net.ipv4.tcp_rmem=4096,8192");
        let mut c = s.configs(&["d0"], no_builtin).unwrap();
        s.fill_reverts(&mut c, &["d0"], |l| {
            assert_eq!(l, "sysctl -n net.ipv4.tcp_rmem");
            Ok("4096\t131072\t6291456\n".into())
        })
        .unwrap();
        assert_eq!(c[1].apply, ["sysctl -qw net.ipv4.tcp_rmem=8192"]);
        assert_eq!(
            c[1].revert,
            ["sysctl -qw 'net.ipv4.tcp_rmem=4096 131072 6291456'"]
        );

        let s = parse("qdisc:pfifo:limit=10,100");
        assert!(!s.reads());
        let mut c = s.configs(&["d1"], no_builtin).unwrap();
        s.fill_reverts(&mut c, &["d1"], |_| unreachable!()).unwrap();
        assert_eq!(c[0].apply, ["tc qdisc replace dev d1 root pfifo limit 10"]);
        assert_eq!(
            c[0].revert,
            ["if tc qdisc show dev d1 root | grep -q '^qdisc pfifo '; then tc qdisc del dev d1 root; fi"]
        );

        let s = parse("ethtool-K:rx=on,off");
        let mut c = s.configs(&["d0"], no_builtin).unwrap();
        let e = s
            .fill_reverts(&mut c, &["d0"], |_| Ok(ETHTOOL_K.into()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid configuration 'ethtool-K:rx': d0: rx is fixed: the driver cannot change it"
        );
    }

    #[test]
    fn host_sysctls_are_the_builtin_configurations() {
        let s = parse("dev_weight=64,256");
        assert!(!s.reads());
        let c = s.configs(&["d0"], |n| Ok(DutConfig::unchanged(n))).unwrap();
        assert_eq!(
            c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["dev_weight-64", "dev_weight-256"]
        );
        assert_eq!(s.probe(&["d0"]), None);
    }

    #[test]
    fn templates() {
        let apply = vec!["echo {value} > /tmp/x".to_string()];
        let revert = vec!["echo was {value} >> /tmp/y".to_string()];
        let knob = SweepKnob::template("ring", &apply, &revert).unwrap();
        let s = Sweep::new(knob, vec!["a".into(), "b".into()]).unwrap();
        let c = s.configs(&[], no_builtin).unwrap();
        assert_eq!(c[1].name, "ring-b");
        assert_eq!(c[1].apply, ["echo b > /tmp/x"]);
        assert_eq!(c[1].revert, ["echo was b >> /tmp/y"]);
        let e = SweepKnob::template("ring", &["true".into()], &[]).unwrap_err();
        assert!(e.to_string().contains("must use {value}"), "{e}");
    }
}
