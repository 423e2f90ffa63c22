//! The campaign file (TOML), as written by people. Every section and key is
//! optional; unknown keys are errors, so that a typo is not silently
//! ignored. [`super::Campaign::from_file`] checks and resolves it.
//!
//! ```toml
//! name = "firewalls"
//!
//! [lab]                      # the built-in lab by default
//! kind = "builtin"           # or "interfaces"
//! prefix = "pktlab"
//! dut_cpus = "1"             # the DUT's CPUs; the generator and receiver get the rest
//! link_speed = "10Gbps"      # for rates in % and the sweep table's line rate
//!
//! [run]
//! iterations = 5
//! duration = "10s"
//! warmup = "1s"              # left out at the start of each run
//! tail = "1s"                # and at its end
//! order = "interleaved"      # or "sequential", or "random" (with seed)
//! io = "afpacket"            # or "afxdp", "xdp", "auto"
//! on_error = "stop"          # or "skip": when a run fails
//! drop_trace = "auto"        # or "on", "off": where the lost frames went
//!
//! # kind = "interfaces" on other hosts (over ssh; local when absent):
//! # gen_host = "root@gen1"  gen_iface = "eth1"
//! # rcv_host = "root@rcv1"  rcv_iface = "eth1"
//! # dut = "ssh root@dut"    ssh_config = "lab_ssh_config"
//! # [[lab.generator]]        # several generators share the traffic
//! # host = "root@gen2"       # (instead of gen_host, gen_iface, gen_netns)
//! # iface = "eth1"
//!
//! [[traffic]]
//! name = "inet4"             # inet4 and inet6 are the lab's 2000 flows
//! sizes = [64, 512, 1518]    # a sweep: inet4-64, inet4-512, inet4-1518
//! ports = "ranges"           # or "rfc4814": pseudorandom ports per frame
//!
//! [[config]]
//! name = "forwarding"        # a built-in configuration (built-in lab)
//!
//! [[config]]
//! name = "pf"
//! apply = ["sysrc pf_enable=YES", "service pf start"]
//! revert = ["service pf stop", "sysrc pf_enable=NO"]
//!
//! [[sweep]]                  # one configuration per value: netdev_max_backlog-1000, ...
//! knob = "netdev_max_backlog"
//! values = [1000, 2000, 4000]
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole campaign file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub lab: LabSection,
    #[serde(default)]
    pub run: RunSection,
    #[serde(default, rename = "traffic", skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<TrafficSection>,
    #[serde(default, rename = "config", skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigSection>,
    #[serde(default, rename = "sweep", skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<SweepSection>,
}

/// `[lab]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabSection {
    /// `builtin` (default) or `interfaces`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Built-in lab: the namespace prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Built-in lab: queues per veth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queues: Option<u16>,
    /// Built-in lab: the DUT's CPUs (`1`, `6-7`); the tester gets the
    /// others. Default: the last CPU, or the last quarter from 8 CPUs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dut_cpus: Option<String>,
    /// `10Gbps`, ...: for rates in % and the sweep's line rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_speed: Option<String>,
    /// Interfaces lab: the generator's port on this host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_iface: Option<String>,
    /// ... and the namespace it is in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_netns: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcv_iface: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcv_netns: Option<String>,
    /// The DUT port facing the generator: destination MAC of the frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dut_in_mac: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dut_out_mac: Option<String>,
    /// The DUT's port names (for the record of their drivers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dut_ifaces: Vec<String>,
    /// Where DUT commands run: `local`, `netns NAME` or `ssh HOST`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dut: Option<String>,
    /// Extra ssh options (`["-p", "2222"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_options: Vec<String>,
    /// A DUT command whose output must read the same after every revert.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Interfaces lab: the ssh destination the generator runs on (local
    /// when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_host: Option<String>,
    /// ... and the receiver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcv_host: Option<String>,
    /// An ssh client configuration passed to every ssh as `-F`, relative
    /// to the campaign file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<String>,
    /// Interfaces lab: several generators sharing the traffic (instead of
    /// gen_iface, gen_netns and gen_host).
    #[serde(default, rename = "generator", skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<GeneratorSection>,
}

/// One `[[lab.generator]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSection {
    /// The ssh destination it runs on (local when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub iface: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netns: Option<String>,
}

/// `[run]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The I/O backend: `afpacket` (default), `afxdp`, `xdp` or `auto`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<String>,
    /// When a run fails: `stop` the campaign (default) or `skip` to the
    /// next run (a later `--resume` tries the failed ones again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_error: Option<String>,
    /// The drop tracer during every run: `auto` (default: where BPF is
    /// allowed), `on` or `off` (counters only); `--drop-trace` overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_trace: Option<String>,
}

/// One `[[traffic]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSection {
    pub name: String,
    /// `inet4` or `inet6` (default: inet6 for a profile called so, else inet4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// pkt-gen ranges (default: the lab's 2000 flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// One size or a mix (`64`, `imix`, `64:7,594:4,1518:1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// A sweep: one profile per size, named `<name>-<size>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<u16>>,
    /// `max` (default), `1Mpps`, `10Gbps`, `50%`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// `forward` (default: from the generator's port to the receiver's)
    /// or `both` (each port sends and receives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// The reverse stream's ranges (default: the mirror of dst and src).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_src: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_dst: Option<String>,
    /// `ranges` (default: the ports of `src` and `dst`) or `rfc4814`
    /// (pseudorandom per frame, RFC 4814's ranges, seed 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<String>,
}

/// One `[[config]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigSection {
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apply: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revert: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reboot: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_timeout: Option<String>,
}

/// One `[[sweep]]`: a knob of the DUT and the values it takes, each value
/// one configuration named `LABEL-VALUE` (`pktlab_lab::sweep`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// `netdev_max_backlog` (a host sysctl), `net.ipv4.…` (a sysctl of the
    /// DUT), `ethtool-K:gro`, `ethtool-C:rx-usecs`, `ethtool-G:rx`,
    /// `ethtool-L:combined`, `qdisc:fq_codel:limit`; none with `apply`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knob: Option<String>,
    /// The values, in the order the report shows them (numbers or words).
    pub values: Vec<SweepValue>,
    /// With `apply`: the name the configurations are named after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Lines that set the knob, `{value}` standing for the value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apply: Vec<String>,
    /// Lines that put it back (`{value}` allowed too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revert: Vec<String>,
}

/// A sweep's value as a campaign file writes it: `1000` or `"on"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SweepValue {
    Number(u64),
    Word(String),
}

impl std::fmt::Display for SweepValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepValue::Number(n) => write!(f, "{n}"),
            SweepValue::Word(w) => f.write_str(w),
        }
    }
}

impl CampaignFile {
    /// Parses TOML text; the error is one line with the line number.
    pub fn parse(text: &str) -> Result<CampaignFile, String> {
        toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().trim().replace('\n', " ");
            match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            }
        })
    }

    /// The file as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a campaign file serialises")
    }

    /// Every section and key, as a JSON Schema derived from these types
    /// (`pktlab docs campaign-keys` lists the keys the guide must document).
    pub fn json_schema() -> schemars::Schema {
        schemars::schema_for!(CampaignFile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_file() {
        let f = CampaignFile::parse(
            r#"
name = "fw"
[lab]
prefix = "x1"
[run]
iterations = 3
order = "random"
seed = 7
on_error = "skip"
drop_trace = "off"
[[traffic]]
name = "inet4"
sizes = [64, 1518]
[[config]]
name = "forwarding"
[[config]]
name = "pf"
apply = ["a", "b"]
revert = ["c"]
[[sweep]]
knob = "ethtool-K:gro"
values = ["on", "off"]
[[sweep]]
name = "ring"
values = [256, 1024]
apply = ["ethtool -G eth1 rx {value}"]
revert = ["ethtool -G eth1 rx 512"]
"#,
        )
        .unwrap();
        assert_eq!(f.name.as_deref(), Some("fw"));
        assert_eq!(f.lab.prefix.as_deref(), Some("x1"));
        assert_eq!(f.run.iterations, Some(3));
        assert_eq!(f.run.seed, Some(7));
        assert_eq!(f.run.on_error.as_deref(), Some("skip"));
        assert_eq!(f.run.drop_trace.as_deref(), Some("off"));
        assert_eq!(f.traffic[0].sizes, Some(vec![64, 1518]));
        assert_eq!(f.config[1].apply, ["a", "b"]);
        assert_eq!(f.sweep[0].knob.as_deref(), Some("ethtool-K:gro"));
        assert_eq!(
            f.sweep[0].values,
            [
                SweepValue::Word("on".into()),
                SweepValue::Word("off".into())
            ]
        );
        assert_eq!(
            f.sweep[1].values,
            [SweepValue::Number(256), SweepValue::Number(1024)]
        );
        assert_eq!(f.sweep[1].values[1].to_string(), "1024");
        assert_eq!(f.sweep[1].apply, ["ethtool -G eth1 rx {value}"]);
        // What it writes, it reads back the same.
        assert_eq!(CampaignFile::parse(&f.to_toml()).unwrap(), f);
    }

    #[test]
    fn empty_file_is_all_defaults() {
        assert_eq!(CampaignFile::parse("").unwrap(), CampaignFile::default());
    }

    #[test]
    fn errors_are_one_line_with_the_line_number() {
        let e = CampaignFile::parse("name = \"x\"\n[run]\niteratons = 3\n").unwrap_err();
        assert!(e.starts_with("line 3: unknown field `iteratons`"), "{e}");
        assert!(!e.contains('\n'));
        let e = CampaignFile::parse("[run]\niterations = \"five\"\n").unwrap_err();
        assert!(e.starts_with("line 2: "), "{e}");
    }
}
