//! The records of a results folder, as types: what the campaign writes and
//! what every reader (`pktlab report`, `pktlab compare`, `--resume`) reads
//! back are the same structs.
//!
//! A run file (`runs/<config>.<traffic>.<n>.jsonl`) is one JSON object per
//! line, each with a `type`: a [`RunHeader`] (`run`), one [`Second`] per
//! second (`second`), then a [`RunResult`] (`result`). `env.json` is an
//! [`EnvRecord`]. Keys are those of the files written before these types
//! existed, so that old folders still load.

use pktlab_engine::rx::RxSummary;
use pktlab_engine::tx::TxSummary;
use pktlab_lab::dut::DutConfig;
use pktlab_lab::envinfo::{HostFacts, NicFacts};
use pktlab_lab::softnet::SoftnetCpu;
use pktlab_lab::CpuPlan;
use pktlab_loss::drops::Drops;
pub use pktlab_loss::monitor::Second;
use pktlab_loss::monitor::{IfaceCounters, IfaceEthtool, IfaceQdisc};
use pktlab_remote::endpoint::BenchIo;
use pktlab_trial::direction::Direction;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{TrialResult, TrialSettings, GENERATOR_TOLERANCE};
use serde::{Deserialize, Serialize};

/// The `type` of each line of a run file.
pub const HEADER_TYPE: &str = "run";
pub const SECOND_TYPE: &str = "second";
pub const RESULT_TYPE: &str = "result";

/// The first line of a run file: which run, on what, how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunHeader {
    pub campaign: String,
    pub config: String,
    pub traffic: String,
    pub iteration: usize,
    /// Seconds since the Unix epoch.
    pub started_at: u64,
    pub pktlab_version: String,
    pub kernel: String,
    pub cpu_model: Option<String>,
    pub cpus: usize,
    /// The lab, as people read it (`built-in lab pktlab`).
    pub lab: String,
    pub virtual_lab: bool,
    /// The I/O backend the generator and the receiver were asked for
    /// (`afpacket`, `afxdp`, `xdp`, `auto`). Folders written before it was
    /// recorded only ever used AF_PACKET.
    #[serde(default)]
    pub io: BenchIo,
    pub traffic_profile: Traffic,
    pub settings: TrialSettings,
    /// The configuration's apply/revert lines, as text.
    pub config_text: String,
    /// Why the NICs' interrupts are not recorded, when they are not.
    pub interrupts: Option<String>,
    /// The built-in lab's CPU plan (`mode` `shared`: the DUT was not
    /// isolated and figures are the whole machine's speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_plan: Option<CpuPlan>,
    /// The generator's backend as it ran (`xdp`, `afpacket`, ...); the
    /// result's `offered_pps` is what it offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
}

/// The last line of a run file: what the run's trial measured
/// ([`TrialResult`], less its seconds, which are lines of their own) and
/// what was asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The run's value: median forwarded test frames per second.
    pub forwarded_pps: f64,
    /// The median offered load over the same kind of samples.
    pub offered_pps: f64,
    /// Test frames sent but not received by the end of the drain.
    pub lost: u64,
    /// Test frames received after the drain (part of `lost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    pub loss_ratio: f64,
    /// Per-interval test frames per second at the receiver.
    #[serde(default)]
    pub rx_samples: Vec<f64>,
    /// Per-interval frames per second at the generator.
    #[serde(default)]
    pub tx_samples: Vec<f64>,
    pub tx: TxSummary,
    pub rx: RxSummary,
    /// Every lab interface's counters over the run.
    #[serde(default)]
    pub lab_counters: Vec<IfaceCounters>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qdiscs: Vec<IfaceQdisc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ethtool_drops: Vec<IfaceEthtool>,
    #[serde(default)]
    pub softnet: Vec<SoftnetCpu>,
    /// Backlog drops on the DUT's CPUs (None: the DUT is another machine).
    #[serde(default)]
    pub dut_backlog_drops: Option<u64>,
    /// Where the lost frames went; None in files written before it was
    /// recorded.
    #[serde(default)]
    pub drops: Option<Drops>,
    /// What the one-way latency is worth across hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_note: Option<String>,
    /// The rate the traffic profile asked for (None: full speed).
    #[serde(default)]
    pub requested_pps: Option<f64>,
    /// Seconds since the Unix epoch; None in files written before it was
    /// recorded.
    #[serde(default)]
    pub finished_at: Option<u64>,
    /// Traffic both ways: each direction's figures (forward, reverse); the
    /// fields above are their total. Empty for traffic one way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<Direction>,
}

impl RunResult {
    /// The record of `trial`, finished at `finished_at`, and its seconds.
    pub fn of(trial: TrialResult, finished_at: u64) -> (RunResult, Vec<Second>) {
        // Every field named: a field added to the trial must be placed here.
        let TrialResult {
            intended_pps,
            forwarded_pps,
            offered_pps,
            lost,
            late,
            loss_ratio,
            rx_samples,
            tx_samples,
            tx,
            rx,
            lab_counters,
            qdiscs,
            ethtool_drops,
            softnet,
            dut_backlog_drops,
            seconds,
            drops,
            latency_note,
            directions,
        } = trial;
        let result = RunResult {
            forwarded_pps,
            offered_pps,
            lost,
            late,
            loss_ratio,
            rx_samples,
            tx_samples,
            tx,
            rx,
            lab_counters,
            qdiscs,
            ethtool_drops,
            softnet,
            dut_backlog_drops,
            drops: Some(drops),
            latency_note,
            requested_pps: intended_pps,
            finished_at: Some(finished_at),
            directions,
        };
        (result, seconds)
    }

    /// The generator offered clearly less than the profile asked for: the
    /// run measured the generator, not the DUT.
    /// Both ways, each direction's generator was asked for the rate.
    pub fn generator_limited(&self) -> bool {
        let ways = self.directions.len().max(1) as f64;
        self.requested_pps
            .is_some_and(|r| r > 0.0 && self.offered_pps < r * ways * (1.0 - GENERATOR_TOLERANCE))
    }
}

/// A whole finished run, as its file holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    pub header: RunHeader,
    pub seconds: Vec<Second>,
    pub result: RunResult,
}

/// A record with its line `type` first (`{"type":"run",...}`).
#[derive(Serialize, Deserialize)]
pub struct Typed<T> {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub record: T,
}

impl RunRecord {
    /// The run file's text: one JSON line per record.
    pub fn to_jsonl(&self) -> String {
        fn line<T: Serialize>(kind: &str, record: T) -> String {
            let typed = Typed {
                kind: kind.into(),
                record,
            };
            serde_json::to_string(&typed).expect("records serialise") + "\n"
        }
        let mut text = line(HEADER_TYPE, &self.header);
        for s in &self.seconds {
            text += &line(SECOND_TYPE, s);
        }
        text + &line(RESULT_TYPE, &self.result)
    }

    /// A run file's text read back (the folder checks that it is whole and
    /// not from a newer pktlab).
    pub fn parse(text: &str) -> Result<RunRecord, String> {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
            return Err("empty run file".into());
        };
        if lines.len() < 2 {
            return Err("run file without a result line".into());
        }
        let h: Typed<RunHeader> =
            serde_json::from_str(first).map_err(|e| format!("bad first line: {e}"))?;
        let r: Typed<RunResult> =
            serde_json::from_str(last).map_err(|e| format!("bad last line: {e}"))?;
        if h.kind != HEADER_TYPE || r.kind != RESULT_TYPE {
            return Err(
                "a run file starts with a \"run\" line and ends with a \"result\" line".into(),
            );
        }
        let mut seconds = Vec::new();
        for (i, line) in lines[1..lines.len() - 1].iter().enumerate() {
            let s: Typed<Second> =
                serde_json::from_str(line).map_err(|e| format!("bad line {}: {e}", i + 2))?;
            seconds.push(s.record);
        }
        Ok(RunRecord {
            header: h.record,
            seconds,
            result: r.record,
        })
    }
}

/// One DUT configuration in `env.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvConfig {
    pub config: DutConfig,
    pub name: String,
    pub text: String,
}

/// `env.json`: the host, the lab's NIC drivers, the DUT (when remote),
/// pktlab's version and every configuration's exact text. Fields in
/// alphabetical order: the order of the file as first written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvRecord {
    /// The hosts' clocks (chrony) and the note on one-way latency, when
    /// the generator or the receiver is on another host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<pktlab_remote::ssh::clock::Clocks>,
    pub configs: Vec<EnvConfig>,
    /// The built-in lab's CPU plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_plan: Option<CpuPlan>,
    pub created_at: u64,
    pub dut_uname: Option<String>,
    pub host: HostFacts,
    pub interrupts: Option<String>,
    pub lab: String,
    pub nics: Vec<NicFacts>,
    pub pktlab_version: String,
    /// What each trial changes on the built-in lab for traffic both ways
    /// with the XDP backends (GRO on the DUT's d1, g0's NAPI threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_path: Option<String>,
    pub virtual_lab: bool,
}

#[cfg(test)]
pub(crate) mod tests {
    use std::time::Duration;

    use pktlab_engine::rx::RxSummary;
    use pktlab_engine::tx::TxSummary;
    use pktlab_io::iface::IfCounters;
    use pktlab_lab::cpuload::CpuLoad;
    use pktlab_lab::interrupts::IrqDelta;

    use super::*;
    use pktlab_loss::monitor::IfaceCounters;

    fn header() -> RunHeader {
        RunHeader {
            campaign: "c".into(),
            config: "rps".into(),
            traffic: "inet6".into(),
            iteration: 4,
            started_at: 1_700_000_000,
            pktlab_version: "0.1.0".into(),
            kernel: "6.12.0".into(),
            cpu_model: None,
            cpus: 8,
            lab: "built-in lab x".into(),
            virtual_lab: true,
            io: BenchIo::Afxdp,
            traffic_profile: Traffic::inet6(),
            settings: TrialSettings {
                duration: Duration::from_millis(2500),
                trim_head: 2,
                trim_tail: 0,
                interval: Duration::from_secs(1),
            },
            config_text: "apply: true\n".into(),
            interrupts: Some("veth".into()),
            cpu_plan: Some(pktlab_lab::CpuPlan::default_for(&[0, 1, 2, 3])),
            generator: Some("xdp".into()),
        }
    }

    fn second(t: usize) -> Second {
        Second {
            t,
            seconds: 1.001,
            ifaces: vec![IfaceCounters {
                host: None,
                role: "rcv".into(),
                ns: Some("x-rcv".into()),
                iface: "r0".into(),
                counters: IfCounters {
                    rx_packets: 1000 + t as u64,
                    rx_dropped: 3,
                    ..IfCounters::default()
                },
            }],
            cpus: vec![CpuLoad {
                cpu: 1,
                user: 1.5,
                system: 2.5,
                irq: 0.0,
                softirq: 40.0,
                steal: 0.0,
                idle: 56.0,
            }],
            interrupts: vec![IrqDelta {
                iface: "eth0".into(),
                irq: "34".into(),
                name: "eth0-rx-0".into(),
                total: 7,
                per_cpu: vec![3, 4],
            }],
            hosts: Vec::new(),
        }
    }

    fn trial() -> TrialResult {
        TrialResult {
            intended_pps: Some(1000.0),
            forwarded_pps: 990.5,
            offered_pps: 1000.0,
            lost: 19,
            late: None,
            loss_ratio: 0.0095,
            rx_samples: vec![990.5, 990.5],
            tx_samples: vec![1000.0, 1000.0],
            tx: TxSummary {
                backend: "afxdp (copy)".into(),
                packets: 2000,
                bytes: 128_000,
                seconds: 2.0,
                pps: 1000.0,
                l2_bps: 512_000.0,
                l1_bps: 672_000.0,
                tx_errors: 0,
                interrupted: false,
                threads: vec![],
                iface: None,
            },
            rx: RxSummary {
                backend: "afxdp (copy)".into(),
                packets: 1981,
                bytes: 126_784,
                seconds: 2.0,
                pps: 990.5,
                l2_bps: 0.0,
                l1_bps: 0.0,
                flows: 2000,
                streams: 2000,
                lost: 19,
                out_of_order: 0,
                duplicates: 0,
                foreign: 0,
                untracked: 0,
                ring_drops: 0,
                bad_stamps: 0,
                latency_ns: None,
                latency_buckets: vec![],
                interrupted: false,
                threads: vec![],
                iface: None,
            },
            lab_counters: vec![],
            qdiscs: vec![],
            ethtool_drops: vec![],
            softnet: vec![pktlab_lab::softnet::SoftnetCpu {
                cpu: 3,
                processed: 1981,
                dropped: 19,
                time_squeeze: 2,
            }],
            dut_backlog_drops: Some(19),
            seconds: vec![second(1), second(2)],
            drops: pktlab_loss::drops::Drops {
                lost: 19,
                dut: 19,
                tester: 0,
                unexplained: 0,
                places: vec![pktlab_loss::drops::Place {
                    side: pktlab_loss::drops::Side::Dut,
                    host: "local".into(),
                    netns: "pktlab-dut".into(),
                    iface: "d0".into(),
                    layer: "kernel".into(),
                    reason: "NETFILTER_DROP".into(),
                    location: "nft_do_chain".into(),
                    frames: 19,
                }],
                traced: true,
                tracer_missed: 0,
                tester_limited: false,
            },
            latency_note: None,
            directions: vec![],
        }
    }

    /// A finished run of `config` and `traffic`, forwarding `fwd` of the
    /// `off` pps offered.
    pub(crate) fn record(
        config: &str,
        traffic: &str,
        iteration: usize,
        fwd: f64,
        off: f64,
    ) -> RunRecord {
        let (mut result, seconds) = RunResult::of(trial(), 1_700_000_004);
        result.forwarded_pps = fwd;
        result.offered_pps = off;
        result.loss_ratio = 1.0 - fwd / off;
        RunRecord {
            header: RunHeader {
                config: config.into(),
                traffic: traffic.into(),
                iteration,
                ..header()
            },
            seconds,
            result,
        }
    }

    #[test]
    fn a_run_both_ways_reads_back_with_each_direction() {
        let one = trial();
        let direction = |name: &str, lost: u64| Direction {
            name: name.into(),
            forwarded_pps: 990.5,
            offered_pps: 1000.0,
            lost,
            late: Some(2),
            loss_ratio: lost as f64 / 2000.0,
            rx_samples: vec![990.0, 991.0],
            tx_samples: vec![1000.0, 1000.0],
            tx: one.tx.clone(),
            rx: one.rx.clone(),
            drops: one.drops.clone(),
        };
        let t = TrialResult {
            lost: 38,
            directions: vec![direction("forward", 19), direction("reverse", 19)],
            ..one
        };
        let (result, seconds) = RunResult::of(t, 1_700_000_004);
        assert_eq!(result.directions.len(), 2);
        let run = RunRecord {
            header: RunHeader {
                traffic_profile: Traffic::inet4().both_ways(),
                ..header()
            },
            seconds,
            result,
        };
        let text = run.to_jsonl();
        assert_eq!(RunRecord::parse(&text).unwrap(), run);
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["directions"][1]["name"], "reverse");
        assert_eq!(last["directions"][1]["lost"], 19);
        assert_eq!(last["directions"][0]["late"], 2);
        // A run one way has no directions in its file, and a file
        // without them reads as one way.
        let (one_way, _) = RunResult::of(trial(), 1);
        let v = serde_json::to_value(&one_way).unwrap();
        assert!(v.get("directions").is_none());
        let back: RunResult = serde_json::from_value(v).unwrap();
        assert!(back.directions.is_empty());
    }

    #[test]
    fn a_run_file_reads_back_as_its_records() {
        let t = trial();
        let (result, seconds) = RunResult::of(t.clone(), 1_700_000_004);
        assert_eq!(seconds, t.seconds);
        let run = RunRecord {
            header: header(),
            seconds,
            result,
        };
        let text = run.to_jsonl();
        assert_eq!(RunRecord::parse(&text).unwrap(), run);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with(r#"{"type":"run","campaign":"c","#));
        assert!(lines[1].starts_with(r#"{"type":"second","t":1,"#));
        assert!(lines[3].starts_with(r#"{"type":"result","forwarded_pps":990.5,"#));

        let h: Typed<RunHeader> = serde_json::from_str(lines[0]).unwrap();
        assert_eq!((h.kind.as_str(), &h.record), (HEADER_TYPE, &run.header));
        for (i, line) in lines[1..3].iter().enumerate() {
            let s: Typed<Second> = serde_json::from_str(line).unwrap();
            assert_eq!(s.kind, SECOND_TYPE);
            assert_eq!(s.record, second(i + 1));
        }
        let r: Typed<RunResult> = serde_json::from_str(lines[3]).unwrap();
        assert_eq!(r.kind, RESULT_TYPE);
        assert_eq!(
            (r.record.requested_pps, r.record.finished_at),
            (Some(1000.0), Some(1_700_000_004))
        );
        assert_eq!(r.record.drops, Some(t.drops.clone()));
        // The seconds are their own lines, not a field of the result.
        let v: serde_json::Value = serde_json::from_str(lines[3]).unwrap();
        // Where the loss went, as the issue writes it.
        assert_eq!(
            v["drops"],
            serde_json::json!({"lost": 19, "dut": 19, "tester": 0, "unexplained": 0,
                "places": [{"side": "dut", "host": "local", "netns": "pktlab-dut", "iface": "d0",
                    "layer": "kernel", "reason": "NETFILTER_DROP", "location": "nft_do_chain",
                    "frames": 19}],
                "traced": true, "tester_limited": false})
        );
        assert!(v.get("seconds").is_none() && v.get("intended_pps").is_none());
        assert_eq!(v["tx"]["packets"], 2000);
        assert_eq!(v["dut_backlog_drops"], 19);
        assert_eq!(v["softnet"][0]["dropped"], 19);
        let h: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(h["generator"], "xdp");
        assert_eq!(h["cpu_plan"]["mode"], "isolated");
        assert_eq!(h["cpu_plan"]["dut_cpus"], serde_json::json!([3]));
        assert_eq!(h["cpu_plan"]["tester_cpus"], serde_json::json!([0, 1, 2]));
        // A header written before the plan was recorded reads back without one.
        let mut old = h.clone();
        let o = old.as_object_mut().unwrap();
        o.remove("cpu_plan");
        o.remove("generator");
        let back: Typed<RunHeader> = serde_json::from_value(old).unwrap();
        assert_eq!((back.record.cpu_plan, back.record.generator), (None, None));
    }

    #[test]
    fn env_json_round_trips_in_its_first_order() {
        let env = EnvRecord {
            clocks: None,
            configs: vec![EnvConfig {
                config: pktlab_lab::dut::DutConfig {
                    name: "pf".into(),
                    apply: vec!["a".into()],
                    revert: vec!["b".into()],
                    reboot: None,
                    wait: Some("true".into()),
                    wait_timeout: Duration::from_secs(600),
                    builtin: false,
                },
                name: "pf".into(),
                text: "apply: a\nrevert: b\n".into(),
            }],
            cpu_plan: Some(pktlab_lab::CpuPlan::shared(&[0])),
            created_at: 17,
            dut_uname: None,
            host: HostFacts {
                hostname: "h".into(),
                kernel: "6.1".into(),
                kernel_build: "#1 SMP".into(),
                os: None,
                cpu_model: Some("cpu".into()),
                cpus: 2,
            },
            interrupts: None,
            lab: "lab".into(),
            nics: vec![NicFacts {
                iface: "g0".into(),
                driver: Some("veth".into()),
                ..NicFacts::default()
            }],
            pktlab_version: "0.1.0".into(),
            reverse_path: None,
            virtual_lab: false,
        };
        let text = serde_json::to_string(&env).unwrap();
        // Keys in alphabetical order, as `json!` wrote them.
        assert!(
            text.starts_with(r#"{"configs":[{"config":{"name":"pf","#),
            "{text}"
        );
        assert!(text.contains(r#""wait_timeout":600,"#), "{text}");
        assert!(
            text.contains(
                r#""cpu_plan":{"mode":"shared","dut_cpus":[0],"tester_cpus":[0]},"created_at":17,"#
            ),
            "{text}"
        );
        assert!(text.ends_with(r#""pktlab_version":"0.1.0","virtual_lab":false}"#));
        let back: EnvRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, env);
    }
}
