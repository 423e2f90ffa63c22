//! DUT configurations and how to run their commands, the way BSDRP's
//! bench-lab switches its DUT between runs.
//!
//! A configuration is shell command lines that apply it and others that
//! revert it, optionally followed by a reboot and a "wait until reachable"
//! command. The lines run on the DUT through a [`DutRunner`]: here, in a
//! network namespace, or over `ssh HOST`. A *state probe* (a command whose
//! output describes the DUT's configuration) taken before a configuration is
//! applied must read the same after it is reverted: that proves the revert.
//!
//! The built-in lab has built-in configurations (the Linux versions of the
//! seeds' experiments): [`builtin_config`].

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::runner;

/// Where the DUT's command lines run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DutRunner {
    /// `sh -c LINE` on this host.
    Local,
    /// `ip netns exec NS sh -c LINE`: the built-in lab's DUT, or a DUT
    /// namespace of a real-interface lab.
    Netns { netns: String },
    /// `ssh -o BatchMode=yes [OPTIONS] -- HOST LINE`: the line goes to the
    /// remote user's shell as it is.
    Ssh { host: String, options: Vec<String> },
}

impl DutRunner {
    /// The program and arguments that run `line`.
    pub fn argv(&self, line: &str) -> Vec<OsString> {
        let mut v: Vec<OsString> = Vec::new();
        match self {
            DutRunner::Local => {}
            DutRunner::Netns { netns } => {
                let ip = runner::ip_path()
                    .map(|p| p.as_os_str().to_owned())
                    .unwrap_or_else(|_| "ip".into());
                v.extend([ip, "netns".into(), "exec".into(), netns.into()]);
            }
            DutRunner::Ssh { host, options } => {
                v.extend(["ssh".into(), "-o".into(), "BatchMode=yes".into()]);
                v.extend(options.iter().map(OsString::from));
                v.extend(["--".into(), host.into(), line.into()]);
                return v;
            }
        }
        v.extend(["sh".into(), "-c".into(), line.into()]);
        v
    }

    /// Where the lines run, for messages: `locally`, `in network namespace
    /// X`, `on HOST`.
    pub fn describe(&self) -> String {
        match self {
            DutRunner::Local => "locally".into(),
            DutRunner::Netns { netns } => format!("in network namespace {netns}"),
            DutRunner::Ssh { host, .. } => format!("on {host}"),
        }
    }

    /// Runs `line` and returns its stdout; a failure is one line with its
    /// stderr.
    ///
    /// Here and in a namespace, the line finds this pktlab as `$PKTLAB`
    /// (the built-in configurations run `"${PKTLAB:-pktlab}" knob ...`)
    /// this process as the owner of host sysctls it changes
    /// ([`crate::knobs::host::OWNER_ENV`]) and this process's network
    /// namespace as the host's.
    pub fn run(&self, line: &str) -> Result<String, DutError> {
        let argv = self.argv(line);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::null());
        if !matches!(self, DutRunner::Ssh { .. }) {
            if let Some(exe) = own_pktlab() {
                cmd.env(PKTLAB_ENV, exe);
            }
            let me = std::process::id();
            cmd.env(crate::knobs::host::OWNER_ENV, me.to_string());
            cmd.env(
                crate::knobs::host::HOST_NETNS_ENV,
                format!("/proc/{me}/ns/net"),
            );
        }
        let failed = |why: String| DutError::Command {
            line: line.to_string(),
            place: self.describe(),
            why,
        };
        let out = cmd
            .output()
            .map_err(|e| failed(format!("cannot start {}: {e}", argv[0].to_string_lossy())))?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let mut why = runner::one_line(&String::from_utf8_lossy(&out.stderr));
        if why.is_empty() {
            why = runner::one_line(&String::from_utf8_lossy(&out.stdout));
        }
        if why.is_empty() {
            why = out.status.to_string();
        }
        Err(failed(why))
    }
}

/// The environment variable that names the pktlab binary to lines run on
/// this host.
pub const PKTLAB_ENV: &str = "PKTLAB";

/// This pktlab, for lines run on this host: `$PKTLAB` when set (tests set
/// it to the binary they test), else this process's executable when it is
/// pktlab; None otherwise (the lines then find `pktlab` in PATH).
fn own_pktlab() -> Option<OsString> {
    if let Some(p) = std::env::var_os(PKTLAB_ENV) {
        return Some(p);
    }
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_string_lossy().into_owned();
    (name == "pktlab").then(|| exe.into_os_string())
}

/// A failure to configure the DUT.
#[derive(Debug, thiserror::Error)]
pub enum DutError {
    /// A configuration name the built-in lab does not know (usage error).
    #[error("unknown configuration '{name}': the built-in ones are {}, and KNOB-VALUE for a host sysctl ({})", BUILTIN_NAMES.join(", "), host_knob_names())]
    Unknown { name: String },
    /// A configuration that cannot be used as written (usage error).
    #[error("invalid configuration '{name}': {why}")]
    Invalid { name: String, why: String },
    /// One command line failed.
    #[error("`{line}` failed {place}: {why}")]
    Command {
        line: String,
        place: String,
        why: String,
    },
    /// Applying failed; what had been applied was reverted (or not).
    #[error("applying configuration '{config}' failed: {error}; {}", reverted_text(.revert_errors))]
    Apply {
        config: String,
        error: Box<DutError>,
        revert_errors: Vec<String>,
    },
    /// Some revert commands failed.
    #[error("reverting configuration '{config}' failed: {}", .errors.join("; "))]
    Revert { config: String, errors: Vec<String> },
    /// The revert ran but the DUT is not back to the state it had before.
    #[error("reverting configuration '{config}' did not restore the DUT: {diff}")]
    NotRestored { config: String, diff: String },
    /// The DUT did not come back after a reboot.
    #[error("the DUT was not reachable {timeout} s after rebooting for configuration '{config}': `{wait}` kept failing: {last}")]
    Unreachable {
        config: String,
        wait: String,
        timeout: u64,
        last: String,
    },
}

fn host_knob_names() -> String {
    crate::knobs::HOST_KNOBS
        .iter()
        .map(|(short, _)| *short)
        .collect::<Vec<_>>()
        .join(", ")
}

fn reverted_text(errors: &[String]) -> String {
    if errors.is_empty() {
        "what it had applied was reverted".to_string()
    } else {
        format!("reverting it also failed: {}", errors.join("; "))
    }
}

impl DutError {
    pub fn is_usage(&self) -> bool {
        matches!(self, DutError::Unknown { .. } | DutError::Invalid { .. })
    }
}

/// One DUT configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DutConfig {
    pub name: String,
    /// Lines that apply it, in order.
    pub apply: Vec<String>,
    /// Lines that revert it, in order (all of them run, even after a failure).
    pub revert: Vec<String>,
    /// Run after `apply` and after `revert` (its exit status is ignored: an
    /// ssh session that reboots its host rarely exits cleanly).
    pub reboot: Option<String>,
    /// Run again and again after a reboot until it succeeds.
    pub wait: Option<String>,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub wait_timeout: Duration,
    /// One of pktlab's built-in configurations for the built-in lab.
    pub builtin: bool,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

fn from_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_secs)
}

/// How long a DUT may take to come back from a reboot by default.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(600);

impl DutConfig {
    /// A configuration that changes nothing (the baseline as it is).
    pub fn unchanged(name: &str) -> DutConfig {
        DutConfig {
            name: name.to_string(),
            apply: Vec::new(),
            revert: Vec::new(),
            reboot: None,
            wait: None,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            builtin: false,
        }
    }

    /// Checks the lines: a reboot needs a wait command, and no line may be
    /// empty.
    pub fn validate(&self) -> Result<(), DutError> {
        let invalid = |why: &str| DutError::Invalid {
            name: self.name.clone(),
            why: why.to_string(),
        };
        if self
            .apply
            .iter()
            .chain(&self.revert)
            .any(|l| l.trim().is_empty())
        {
            return Err(invalid("a command line is empty"));
        }
        match (&self.reboot, &self.wait) {
            (Some(_), None) => Err(invalid(
                "a reboot needs a wait command that succeeds once the DUT is back",
            )),
            (None, Some(_)) => Err(invalid("a wait command is only used with reboot")),
            _ => Ok(()),
        }
    }

    /// The one line to say before applying it, if it changes more than the
    /// DUT: a built-in host-sysctl configuration changes the whole host.
    pub fn notice(&self) -> Option<String> {
        if !self.builtin {
            return None;
        }
        let (key, value) = crate::knobs::parse_host_config(&self.name)?.ok()?;
        Some(crate::knobs::host::host_notice(key, &value.to_string()))
    }

    /// The exact text of the configuration, for the results.
    pub fn text(&self) -> String {
        let mut t = String::new();
        for l in &self.apply {
            t += &format!("apply: {l}\n");
        }
        for l in &self.revert {
            t += &format!("revert: {l}\n");
        }
        if let Some(r) = &self.reboot {
            t += &format!("reboot: {r}\n");
        }
        if let Some(w) = &self.wait {
            t += &format!("wait: {w}\n");
        }
        t
    }
}

/// The DUT: where its commands run, and the probe that proves reverts.
#[derive(Clone, Debug)]
pub struct Dut {
    pub runner: DutRunner,
    /// A command whose output must be the same before a configuration is
    /// applied and after it is reverted.
    pub state_probe: Option<String>,
    /// How long to sleep between two tries of a wait command.
    pub wait_poll: Duration,
}

impl Dut {
    pub fn new(runner: DutRunner, state_probe: Option<String>) -> Dut {
        Dut {
            runner,
            state_probe,
            wait_poll: Duration::from_secs(2),
        }
    }

    /// The probe's output now (empty without a probe).
    pub fn state(&self) -> Result<String, DutError> {
        match &self.state_probe {
            Some(p) => self.runner.run(p),
            None => Ok(String::new()),
        }
    }

    /// Runs `config`'s apply lines (then its reboot). When one fails, every
    /// revert line runs and the error says whether that worked.
    pub fn apply(&self, config: &DutConfig) -> Result<(), DutError> {
        if let Some(note) = config.notice() {
            // Once per configuration and process: interleaved runs apply
            // it again and again.
            static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
            let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
            if !said.contains(&config.name) {
                said.push(config.name.clone());
                eprintln!("{note}");
            }
        }
        for line in &config.apply {
            if let Err(e) = self.runner.run(line) {
                let revert_errors = self.revert_lines(config);
                return Err(DutError::Apply {
                    config: config.name.clone(),
                    error: Box::new(e),
                    revert_errors,
                });
            }
        }
        self.reboot(config)
    }

    /// Runs every revert line of `config` (then its reboot), and checks the
    /// state probe reads `before` again.
    pub fn revert(&self, config: &DutConfig, before: &str) -> Result<(), DutError> {
        let errors = self.revert_lines(config);
        if !errors.is_empty() {
            return Err(DutError::Revert {
                config: config.name.clone(),
                errors,
            });
        }
        self.reboot(config)?;
        let now = self.state()?;
        match first_difference(before, &now) {
            None => Ok(()),
            Some(diff) => Err(DutError::NotRestored {
                config: config.name.clone(),
                diff,
            }),
        }
    }

    fn revert_lines(&self, config: &DutConfig) -> Vec<String> {
        config
            .revert
            .iter()
            .filter_map(|line| self.runner.run(line).err().map(|e| e.to_string()))
            .collect()
    }

    /// The reboot and the wait until the DUT answers, when configured.
    fn reboot(&self, config: &DutConfig) -> Result<(), DutError> {
        let (Some(reboot), Some(wait)) = (&config.reboot, &config.wait) else {
            return Ok(());
        };
        // A reboot over ssh usually ends with the connection dropped: only
        // failing to start it at all is an error.
        if let Err(DutError::Command { why, .. }) = self.runner.run(reboot) {
            if why.starts_with("cannot start") {
                return Err(DutError::Command {
                    line: reboot.clone(),
                    place: self.runner.describe(),
                    why,
                });
            }
        }
        let start = Instant::now();
        loop {
            std::thread::sleep(self.wait_poll);
            match self.runner.run(wait) {
                Ok(_) => return Ok(()),
                Err(e) if start.elapsed() >= config.wait_timeout => {
                    return Err(DutError::Unreachable {
                        config: config.name.clone(),
                        wait: wait.clone(),
                        timeout: config.wait_timeout.as_secs(),
                        last: e.to_string(),
                    })
                }
                Err(_) => {}
            }
        }
    }
}

/// The first line that differs between two probe outputs, said briefly.
pub fn first_difference(before: &str, now: &str) -> Option<String> {
    if before == now {
        return None;
    }
    let (b, n): (Vec<&str>, Vec<&str>) = (before.lines().collect(), now.lines().collect());
    for i in 0..b.len().max(n.len()) {
        match (b.get(i), n.get(i)) {
            (Some(x), Some(y)) if x == y => continue,
            (Some(x), Some(y)) => return Some(format!("'{x}' is now '{y}'")),
            (Some(x), None) => return Some(format!("'{x}' is gone")),
            (None, Some(y)) => return Some(format!("'{y}' is new")),
            (None, None) => break,
        }
    }
    Some("the state probe's output changed".into())
}

/// The built-in configurations, in the order `--configs all` runs them.
/// Host sysctls have configurations too, named `KNOB-VALUE`
/// ([`crate::knobs::parse_host_config`]).
pub const BUILTIN_NAMES: [&str; 13] = [
    "forwarding",
    "nft-stateless",
    "nft-stateful",
    "nat44",
    "rps",
    "gro-off",
    "gro-on",
    "redirects-on",
    "tc-forward",
    "xdp-forward",
    "threaded-napi",
    "fq_codel",
    "pfifo",
];

/// Built-in configurations the XDP live-frame generator cannot feed on the
/// built-in lab: without GRO d0 takes no redirected frame (`gro-off`), and
/// it must poll d0's NAPI inline, not in a thread (`threaded-napi`). A
/// campaign with one of them generates with AF_PACKET.
pub fn builtin_needs_afpacket(name: &str) -> bool {
    matches!(name, "gro-off" | "threaded-napi")
}

/// The pktlab that a built-in configuration's lines run: the one running
/// them ([`DutRunner::run`] sets `$PKTLAB`), else the first in PATH.
const PKTLAB: &str = "\"${PKTLAB:-pktlab}\"";

/// `pktlab knob ARGS` where a pktlab can be run (the reset after a killed
/// campaign, the state probe); nothing where none can, as in a library's
/// tests: nothing can then have attached a fast path either. A knob that
/// fails still fails the line.
fn knob_if_pktlab(args: &str, otherwise: &str) -> String {
    format!(
        "if command -v {PKTLAB} >/dev/null 2>&1; then {PKTLAB} knob {args}; else {otherwise}; fi"
    )
}

/// The DUT's CPUs in the base's RPS mask (`--cpus-mask M`), or nothing in
/// shared mode, where the mask is 0.
fn cpus_option(base: &BuiltinBase) -> String {
    if base.rps_mask.trim_start_matches(['0', ',']).is_empty() {
        String::new()
    } else {
        format!(" --cpus-mask {}", base.rps_mask)
    }
}

/// Lines that put `qdisc` at the root of each port, and back to the
/// default (veth's `noqueue`, a NIC's `mq` or `pfifo_fast`).
fn qdisc_lines(ifaces: &[&str], qdisc: &str) -> (Vec<String>, Vec<String>) {
    let apply = ifaces
        .iter()
        .map(|i| format!("tc qdisc replace dev {i} root {qdisc}"))
        .collect();
    (apply, qdisc_default_lines(ifaces, qdisc))
}

/// Deletes the root `qdisc` of each port where it is the root (deleting
/// the default would fail).
fn qdisc_default_lines(ifaces: &[&str], qdisc: &str) -> Vec<String> {
    ifaces
        .iter()
        .map(|i| {
            format!(
                "if tc qdisc show dev {i} root | grep -q '^qdisc {qdisc} '; then tc qdisc del dev {i} root; fi"
            )
        })
        .collect()
}

/// GRO on for the ports whose base has it off (a veth needs GRO, or an XDP
/// program, for NAPI instances to thread).
fn gro_on_where_off(ifaces: &[&str], base: &BuiltinBase) -> Vec<String> {
    ifaces
        .iter()
        .filter(|i| base.gro_on.as_deref() != Some(**i))
        .map(|i| format!("ethtool -K {i} gro on"))
        .collect()
}

/// The nftables table the built-in firewall configurations create.
const NFT_TABLE: &str = "inet pktlab";

/// The inside and outside ports of a DUT whose ports are `ifaces`: the
/// first faces the generator (the Initiator's side), the last the
/// receiver (the Responder's).
fn inside_outside<'a>(ifaces: &[&'a str]) -> (&'a str, &'a str) {
    let inside = ifaces.first().copied().unwrap_or("d0");
    (inside, ifaces.last().copied().unwrap_or(inside))
}

/// The stateful filter of `nft-stateful` and `nat44`: a conntrack entry
/// per connection, like ipfw's keep-state and pf's default. New
/// connections come in only from the inside port; established and related
/// traffic passes both ways; the policy drops the rest.
fn stateful_filter_line(ifaces: &[&str]) -> String {
    let (inside, _) = inside_outside(ifaces);
    format!(
        "nft 'add table {NFT_TABLE}; \
         add chain {NFT_TABLE} forward {{ type filter hook forward priority filter; policy drop; }}; \
         add rule {NFT_TABLE} forward ct state established,related accept; \
         add rule {NFT_TABLE} forward iifname \"{inside}\" ct state new accept'"
    )
}

/// `nat44`'s source NAT: IPv4 connections leaving by the outside port take
/// its address (masquerade keeps the source port when the translated
/// 4-tuple is free). New connections from the outside to the DUT itself
/// are dropped too, so that they never take a conntrack entry.
fn nat44_line(ifaces: &[&str]) -> String {
    let (_, outside) = inside_outside(ifaces);
    format!(
        "nft 'add chain {NFT_TABLE} postrouting {{ type nat hook postrouting priority srcnat; policy accept; }}; \
         add rule {NFT_TABLE} postrouting meta nfproto ipv4 oifname \"{outside}\" masquerade; \
         add chain {NFT_TABLE} input {{ type filter hook input priority filter; policy accept; }}; \
         add rule {NFT_TABLE} input iifname \"{outside}\" ct state new drop'"
    )
}

/// A CPU mask of `cpus` CPUs as sysfs's `rps_cpus` takes it: hexadecimal,
/// in comma-separated groups of 32 bits (`3`, `ffffffff`, `ff,ffffffff`).
pub fn cpu_mask(cpus: usize) -> String {
    let cpus = cpus.max(1);
    let mut groups = Vec::new();
    let mut left = cpus;
    while left > 0 {
        let bits = left.min(32);
        let g: u64 = (1u64 << bits) - 1;
        groups.push(g);
        left -= bits;
    }
    let mut text = format!("{:x}", groups.last().copied().unwrap_or(0));
    for g in groups.iter().rev().skip(1) {
        text += &format!(",{g:08x}");
    }
    text
}

fn rps_line(ifaces: &[&str], mask: &str) -> String {
    let files: Vec<String> = ifaces
        .iter()
        .map(|i| format!("/sys/class/net/{i}/queues/rx-*/rps_cpus"))
        .collect();
    format!(
        "for f in {}; do echo {mask} > \"$f\"; done",
        files.join(" ")
    )
}

/// The built-in lab's DUT as `lab up` leaves it, which every revert returns
/// to: the RPS mask of its ports (its CPU plan's, `0` without one) and the
/// port with GRO on (d0, for the XDP live-frame generator), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltinBase {
    pub rps_mask: String,
    pub gro_on: Option<String>,
}

impl Default for BuiltinBase {
    /// No RPS, GRO off everywhere (veth's defaults).
    fn default() -> BuiltinBase {
        BuiltinBase {
            rps_mask: "0".into(),
            gro_on: None,
        }
    }
}

/// GRO back to `base`: on for its port, off for the others.
fn gro_base_lines(ifaces: &[&str], base: &BuiltinBase) -> Vec<String> {
    ifaces
        .iter()
        .map(|i| {
            let on = base.gro_on.as_deref() == Some(*i);
            format!("ethtool -K {i} gro {}", if on { "on" } else { "off" })
        })
        .collect()
}

fn gro_lines(ifaces: &[&str], on: bool) -> Vec<String> {
    let v = if on { "on" } else { "off" };
    ifaces
        .iter()
        .map(|i| format!("ethtool -K {i} gro {v}"))
        .collect()
}

fn redirects_line(ifaces: &[&str], value: u8) -> String {
    let keys: Vec<String> = ["all", "default"]
        .iter()
        .chain(ifaces)
        .map(|s| format!("net.ipv4.conf.{s}.send_redirects={value}"))
        .collect();
    format!("sysctl -qw {}", keys.join(" "))
}

/// Built-in configuration `name` for a DUT whose ports are `ifaces` on a
/// host with `cpus` CPUs. Lines run in the DUT's namespace, where `ip netns
/// exec` mounts the namespace's own `/sys`.
///
/// The lab's `forwarding` state has no nftables ruleset, the RPS masks and
/// GRO of `base`, send_redirects off, no XDP or tc program, the default
/// root qdiscs, no threaded NAPI and the host's own sysctls; every revert
/// returns to it.
pub fn builtin_config(
    name: &str,
    ifaces: &[&str],
    cpus: usize,
    base: &BuiltinBase,
) -> Result<DutConfig, DutError> {
    let mut c = DutConfig::unchanged(name);
    c.builtin = true;
    if let Some(host) = crate::knobs::parse_host_config(name) {
        let (key, value) = host.map_err(|why| DutError::Invalid {
            name: name.to_string(),
            why,
        })?;
        let (set, restore) = host_sysctl_lines(key, value);
        c.apply.push(set);
        c.revert.push(restore);
        return Ok(c);
    }
    let ports = ifaces.join(" ");
    match name {
        "forwarding" => {}
        "nft-stateless" => {
            // notrack in a raw-priority prerouting chain: no conntrack entry
            // is ever made, like pf's "pass no state".
            c.apply.push(format!(
                "nft 'add table {NFT_TABLE}; \
                 add chain {NFT_TABLE} raw {{ type filter hook prerouting priority raw; policy accept; }}; \
                 add rule {NFT_TABLE} raw notrack; \
                 add chain {NFT_TABLE} forward {{ type filter hook forward priority filter; policy accept; }}; \
                 add rule {NFT_TABLE} forward accept'"
            ));
            c.revert.push(format!("nft delete table {NFT_TABLE}"));
        }
        "nft-stateful" => {
            c.apply.push(stateful_filter_line(ifaces));
            c.revert.push(format!("nft delete table {NFT_TABLE}"));
        }
        "nat44" => {
            c.apply.push(stateful_filter_line(ifaces));
            c.apply.push(nat44_line(ifaces));
            c.revert.push(format!("nft delete table {NFT_TABLE}"));
        }
        "rps" => {
            c.apply.push(rps_line(ifaces, &cpu_mask(cpus)));
            c.revert.push(rps_line(ifaces, &base.rps_mask));
        }
        "gro-off" => {
            c.apply.extend(gro_lines(ifaces, false));
            c.revert.extend(gro_base_lines(ifaces, base));
        }
        "gro-on" => {
            c.apply.extend(gro_lines(ifaces, true));
            c.revert.extend(gro_base_lines(ifaces, base));
        }
        "redirects-on" => {
            c.apply.push(redirects_line(ifaces, 1));
            c.revert.push(redirects_line(ifaces, 0));
        }
        "tc-forward" => {
            c.apply
                .push(format!("{PKTLAB} knob tc-forward attach {ports}"));
            c.revert
                .push(format!("{PKTLAB} knob tc-forward detach {ports}"));
        }
        "xdp-forward" => {
            // On the DUT's CPUs when the base has some (a veth runs XDP on
            // the CPU that sent to it: the generator's), as RSS would.
            c.apply.push(format!(
                "{PKTLAB} knob xdp-forward attach{} {ports}",
                cpus_option(base)
            ));
            c.revert
                .push(format!("{PKTLAB} knob xdp-forward detach {ports}"));
        }
        "threaded-napi" => {
            c.apply.extend(gro_on_where_off(ifaces, base));
            c.apply.push(format!(
                "{PKTLAB} knob napi-threads on{} {ports}",
                cpus_option(base)
            ));
            c.revert
                .push(format!("{PKTLAB} knob napi-threads off {ports}"));
            c.revert.extend(gro_base_lines(ifaces, base));
        }
        "fq_codel" | "pfifo" => {
            let (apply, revert) = qdisc_lines(ifaces, name);
            c.apply.extend(apply);
            c.revert.extend(revert);
        }
        _ => {
            return Err(DutError::Unknown {
                name: name.to_string(),
            })
        }
    }
    Ok(c)
}

/// The DUT's lines that set host sysctl `key` (one of
/// [`crate::knobs::HOST_KNOBS`]) to `value`, saving its old value for the
/// process that runs them, and that restore it
/// ([`crate::knobs::host`]: restored also after that process is killed).
pub fn host_sysctl_lines(key: &str, value: u64) -> (String, String) {
    (
        format!("{PKTLAB} knob host-sysctl set {key}={value}"),
        format!("{PKTLAB} knob host-sysctl restore {key}"),
    )
}

/// Lines that bring the built-in lab's DUT back to `forwarding` from any
/// built-in configuration (after a campaign was killed half-way, say).
/// Host sysctls left changed by a killed campaign are restored by the
/// lab's `up` ([`crate::knobs::restore_saved_host_sysctls`]).
pub fn builtin_reset(ifaces: &[&str], base: &BuiltinBase) -> Vec<String> {
    let ports = ifaces.join(" ");
    let mut v = vec![
        "nft flush ruleset".to_string(),
        rps_line(ifaces, &base.rps_mask),
        knob_if_pktlab(&format!("xdp-forward detach {ports}"), "true"),
        knob_if_pktlab(&format!("tc-forward detach {ports}"), "true"),
        knob_if_pktlab(&format!("napi-threads off {ports}"), "true"),
    ];
    v.extend(gro_base_lines(ifaces, base));
    v.push(redirects_line(ifaces, 0));
    v.extend(qdisc_default_lines(ifaces, "fq_codel"));
    v.extend(qdisc_default_lines(ifaces, "pfifo"));
    v
}

/// The state probe of the built-in lab's DUT: its nftables ruleset, RPS
/// masks, GRO settings, the redirect and forwarding sysctls, threaded
/// NAPI, root qdiscs, attached XDP and tc programs and the host's sysctls.
pub fn builtin_state_probe(ifaces: &[&str]) -> String {
    let list = ifaces.join(" ");
    format!(
        "nft list ruleset; \
         for i in {list}; do for f in /sys/class/net/$i/queues/rx-*/rps_cpus; do echo \"$f $(cat \"$f\")\"; done; done; \
         for i in {list}; do ethtool -k $i | sed -n \"s/^\\(generic-receive-offload\\|rx-gro-list\\):/$i &/p\"; done; \
         grep -H . /proc/sys/net/ipv4/conf/*/send_redirects /proc/sys/net/ipv4/conf/*/forwarding /proc/sys/net/ipv6/conf/*/forwarding; \
         for i in {list}; do echo \"$i threaded $(cat /sys/class/net/$i/threaded 2>/dev/null || echo -)\"; tc qdisc show dev $i; done; \
         {}",
        knob_if_pktlab(
            &format!("state {list}"),
            "echo 'no pktlab to run: attached programs and host sysctls not probed'"
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: Vec<OsString>) -> Vec<String> {
        v.into_iter().map(|s| s.into_string().unwrap()).collect()
    }

    #[test]
    fn command_lines_per_runner() {
        assert_eq!(
            strings(DutRunner::Local.argv("echo hi")),
            ["sh", "-c", "echo hi"]
        );
        let ns = strings(
            DutRunner::Netns {
                netns: "lab-dut".into(),
            }
            .argv("sysctl -w a=1"),
        );
        assert!(ns[0].ends_with("ip"), "{ns:?}");
        assert_eq!(
            &ns[1..],
            ["netns", "exec", "lab-dut", "sh", "-c", "sysctl -w a=1"]
        );
        let ssh = DutRunner::Ssh {
            host: "root@dut".into(),
            options: vec!["-p".into(), "2222".into()],
        };
        assert_eq!(
            strings(ssh.argv("sysctl net.inet.ip.forwarding=1")),
            [
                "ssh",
                "-o",
                "BatchMode=yes",
                "-p",
                "2222",
                "--",
                "root@dut",
                "sysctl net.inet.ip.forwarding=1"
            ]
        );
        assert_eq!(ssh.describe(), "on root@dut");
    }

    #[test]
    fn local_runner_runs_and_reports() {
        let r = DutRunner::Local;
        assert_eq!(r.run("echo a; echo b").unwrap(), "a\nb\n");
        let e = r.run("echo nope >&2; exit 3").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`echo nope >&2; exit 3` failed locally: nope"
        );
        assert!(!e.is_usage());
    }

    #[test]
    fn masks() {
        assert_eq!(cpu_mask(1), "1");
        assert_eq!(cpu_mask(2), "3");
        assert_eq!(cpu_mask(8), "ff");
        assert_eq!(cpu_mask(32), "ffffffff");
        assert_eq!(cpu_mask(40), "ff,ffffffff");
        assert_eq!(cpu_mask(64), "ffffffff,ffffffff");
    }

    #[test]
    fn builtins() {
        for name in BUILTIN_NAMES {
            let c = builtin_config(name, &["d0", "d1"], 2, &BuiltinBase::default()).unwrap();
            assert_eq!(c.name, name);
            assert!(c.builtin);
            c.validate().unwrap();
            // Everything applied is reverted.
            assert_eq!(c.apply.is_empty(), c.revert.is_empty(), "{name}");
        }
        let base = BuiltinBase {
            rps_mask: "2".into(),
            gro_on: Some("d0".into()),
        };
        let rps = builtin_config("rps", &["d0", "d1"], 2, &base).unwrap();
        assert_eq!(
            rps.revert,
            ["for f in /sys/class/net/d0/queues/rx-*/rps_cpus /sys/class/net/d1/queues/rx-*/rps_cpus; do echo 2 > \"$f\"; done"]
        );
        let gro = builtin_config("gro-off", &["d0", "d1"], 2, &base).unwrap();
        assert_eq!(
            gro.apply,
            ["ethtool -K d0 gro off", "ethtool -K d1 gro off"]
        );
        assert_eq!(
            gro.revert,
            ["ethtool -K d0 gro on", "ethtool -K d1 gro off"]
        );
        assert_eq!(
            rps.apply,
            ["for f in /sys/class/net/d0/queues/rx-*/rps_cpus /sys/class/net/d1/queues/rx-*/rps_cpus; do echo 3 > \"$f\"; done"]
        );
        let red = builtin_config("redirects-on", &["d0", "d1"], 2, &base).unwrap();
        assert_eq!(
            red.revert,
            ["sysctl -qw net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.default.send_redirects=0 \
              net.ipv4.conf.d0.send_redirects=0 net.ipv4.conf.d1.send_redirects=0"]
        );
        let e = builtin_config("pf", &["d0"], 2, &base).unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "unknown configuration 'pf': the built-in ones are forwarding, nft-stateless, \
             nft-stateful, nat44, rps, gro-off, gro-on, redirects-on, tc-forward, \
             xdp-forward, threaded-napi, fq_codel, pfifo, and KNOB-VALUE for a host sysctl (netdev_budget, \
             netdev_budget_usecs, dev_weight, netdev_max_backlog, nf_conntrack_max)"
        );
    }

    #[test]
    fn stateful_lines_name_the_inside_and_outside_ports() {
        let base = BuiltinBase::default();
        let filter = "nft 'add table inet pktlab; \
             add chain inet pktlab forward { type filter hook forward priority filter; policy drop; }; \
             add rule inet pktlab forward ct state established,related accept; \
             add rule inet pktlab forward iifname \"eth1\" ct state new accept'";
        let ports = ["eth1", "eth2"];
        let sf = builtin_config("nft-stateful", &ports, 2, &base).unwrap();
        assert_eq!(sf.apply, [filter]);
        assert_eq!(sf.revert, ["nft delete table inet pktlab"]);
        let nat = builtin_config("nat44", &ports, 2, &base).unwrap();
        assert_eq!(nat.apply[0], filter);
        assert_eq!(
            nat.apply[1],
            "nft 'add chain inet pktlab postrouting { type nat hook postrouting priority srcnat; policy accept; }; \
             add rule inet pktlab postrouting meta nfproto ipv4 oifname \"eth2\" masquerade; \
             add chain inet pktlab input { type filter hook input priority filter; policy accept; }; \
             add rule inet pktlab input iifname \"eth2\" ct state new drop'"
        );
        assert_eq!(nat.revert, ["nft delete table inet pktlab"]);
    }

    #[test]
    fn fast_path_and_knob_lines() {
        let isolated = BuiltinBase {
            rps_mask: "2".into(),
            gro_on: Some("d0".into()),
        };
        let p = "\"${PKTLAB:-pktlab}\"";
        let xdp = builtin_config("xdp-forward", &["d0", "d1"], 2, &isolated).unwrap();
        assert_eq!(
            xdp.apply,
            [format!("{p} knob xdp-forward attach --cpus-mask 2 d0 d1")]
        );
        assert_eq!(xdp.revert, [format!("{p} knob xdp-forward detach d0 d1")]);
        // Shared mode (mask 0): on the CPU that polls the port.
        let shared = BuiltinBase {
            rps_mask: "0".into(),
            gro_on: Some("d0".into()),
        };
        let xdp = builtin_config("xdp-forward", &["d0", "d1"], 2, &shared).unwrap();
        assert_eq!(xdp.apply, [format!("{p} knob xdp-forward attach d0 d1")]);
        let tc = builtin_config("tc-forward", &["d0", "d1"], 2, &isolated).unwrap();
        assert_eq!(tc.apply, [format!("{p} knob tc-forward attach d0 d1")]);
        assert_eq!(tc.revert, [format!("{p} knob tc-forward detach d0 d1")]);
        // GRO first on the port without it, threads pinned to the DUT's CPUs.
        let napi = builtin_config("threaded-napi", &["d0", "d1"], 2, &isolated).unwrap();
        assert_eq!(
            napi.apply,
            [
                "ethtool -K d1 gro on".to_string(),
                format!("{p} knob napi-threads on --cpus-mask 2 d0 d1")
            ]
        );
        assert_eq!(
            napi.revert,
            [
                format!("{p} knob napi-threads off d0 d1"),
                "ethtool -K d0 gro on".to_string(),
                "ethtool -K d1 gro off".to_string()
            ]
        );
        let q = builtin_config("fq_codel", &["d0", "d1"], 2, &isolated).unwrap();
        assert_eq!(
            q.apply,
            [
                "tc qdisc replace dev d0 root fq_codel",
                "tc qdisc replace dev d1 root fq_codel"
            ]
        );
        assert_eq!(
            q.revert[1],
            "if tc qdisc show dev d1 root | grep -q '^qdisc fq_codel '; then tc qdisc del dev d1 root; fi"
        );
        assert!(builtin_needs_afpacket("threaded-napi"));
        assert!(builtin_needs_afpacket("gro-off"));
        assert!(!builtin_needs_afpacket("xdp-forward"));
    }

    #[test]
    fn host_sysctl_configurations() {
        let base = BuiltinBase::default();
        let c = builtin_config("netdev_max_backlog-2000", &["d0", "d1"], 2, &base).unwrap();
        assert_eq!(
            c.apply,
            ["\"${PKTLAB:-pktlab}\" knob host-sysctl set net.core.netdev_max_backlog=2000"]
        );
        assert_eq!(
            c.revert,
            ["\"${PKTLAB:-pktlab}\" knob host-sysctl restore net.core.netdev_max_backlog"]
        );
        assert_eq!(
            c.notice().unwrap(),
            "note: net.core.netdev_max_backlog is host-wide: setting it to 2000 changes the whole \
             host, not only the lab (its old value is saved and restored)"
        );
        // A user's configuration of that name is theirs: no notice.
        let mut own = c.clone();
        own.builtin = false;
        assert_eq!(own.notice(), None);
        assert_eq!(
            builtin_config("forwarding", &["d0"], 2, &base)
                .unwrap()
                .notice(),
            None
        );
        let e = builtin_config("dev_weight-many", &["d0"], 2, &base).unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "invalid configuration 'dev_weight-many': the value of dev_weight must be a \
             non-negative integer, as in dev_weight-1000"
        );
    }

    #[test]
    fn validation() {
        let mut c = DutConfig::unchanged("x");
        c.validate().unwrap();
        c.reboot = Some("reboot".into());
        assert!(c.validate().unwrap_err().is_usage());
        c.wait = Some("true".into());
        c.validate().unwrap();
        c.apply.push("  ".into());
        assert!(c.validate().is_err());
    }

    #[test]
    fn failed_apply_reverts() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let mark = dir.join("applied");
        let mut c = DutConfig::unchanged("half");
        c.apply = vec![
            format!("touch {}", mark.display()),
            "echo broken >&2; false".into(),
        ];
        c.revert = vec![format!("rm {}", mark.display())];
        let dut = Dut::new(DutRunner::Local, None);
        let e = dut.apply(&c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "applying configuration 'half' failed: `echo broken >&2; false` failed locally: broken; \
             what it had applied was reverted"
        );
        assert!(!mark.exists());
    }

    #[test]
    fn revert_is_checked_with_the_probe() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let file = dir.join("value");
        std::fs::write(&file, "0\n").unwrap();
        let probe = format!("cat {}", file.display());
        let dut = Dut::new(DutRunner::Local, Some(probe));
        let before = dut.state().unwrap();
        let mut c = DutConfig::unchanged("one");
        c.apply = vec![format!("echo 1 > {}", file.display())];
        // A revert that forgets to restore the value.
        c.revert = vec!["true".into()];
        dut.apply(&c).unwrap();
        let e = dut.revert(&c, &before).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reverting configuration 'one' did not restore the DUT: '0' is now '1'"
        );
        c.revert = vec![format!("echo 0 > {}", file.display())];
        dut.revert(&c, &before).unwrap();
    }

    #[test]
    fn reboot_waits_until_reachable() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let count = dir.join("count");
        // The "DUT" answers on the third try.
        let wait = format!(
            "n=$(cat {0} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {0}; [ $n -ge 3 ]",
            count.display()
        );
        let mut c = DutConfig::unchanged("rebooting");
        c.reboot = Some("exit 255".into());
        c.wait = Some(wait);
        let mut dut = Dut::new(DutRunner::Local, None);
        dut.wait_poll = Duration::from_millis(10);
        dut.apply(&c).unwrap();
        assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "3");
        c.wait = Some("false".into());
        c.wait_timeout = Duration::from_millis(50);
        let e = dut.apply(&c).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the DUT was not reachable 0 s after rebooting for configuration 'rebooting': `false` kept failing"),
            "{e}"
        );
    }

    #[test]
    fn differences() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\n", "a\nc\n").unwrap(),
            "'b' is now 'c'"
        );
        assert_eq!(first_difference("a\n", "a\nx\n").unwrap(), "'x' is new");
        assert_eq!(first_difference("a\nx\n", "a\n").unwrap(), "'x' is gone");
    }
}
