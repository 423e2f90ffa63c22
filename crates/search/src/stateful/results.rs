//! `rfc9693.json`: the stateful tests' settings and every finished run
//! with its trials (the searches' trace), rewritten as each run ends.

use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::CampaignError;

use super::phases::StatefulTrial;
use super::searches::Bounds;
use super::settings::StatefulSettings;
use super::teardown::Teardown;
use super::throughput::ThroughputTrial;

/// The results file.
pub const REPORT_FILE: &str = "rfc9693.json";

/// One run: a configuration and traffic profile, its DUT's limits, and
/// each test's result.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatefulRun {
    pub config: String,
    pub traffic: String,
    pub iteration: usize,
    /// `nf_conntrack_max` as the DUT reads it (host-wide on Linux).
    pub conntrack_max: Option<u64>,
    /// The DUT's timeout of a UDP connection never answered, in seconds.
    pub udp_timeout_s: Option<u64>,
    /// The Initiator's address as the Responder addressed it (source NAT).
    pub translated: Option<String>,
    /// Connection tracking table capacity, in connections.
    pub capacity: Option<Bounds>,
    /// The DUT's connection count after the preliminary phase at the
    /// capacity's lower bound.
    pub count_at_capacity: Option<u64>,
    /// Maximum connection establishment rate, in connections per second,
    /// and the connections each trial opened.
    pub rate: Option<Bounds>,
    pub rate_connections: Option<u64>,
    pub teardown: Option<Teardown>,
    /// Throughput over established connections, in frames per second
    /// each way, and the connections each trial set up.
    #[serde(default)]
    pub throughput: Option<Bounds>,
    #[serde(default)]
    pub throughput_connections: Option<u64>,
    /// Every trial of the capacity, rate and tear-down tests, in order:
    /// their searches' trace.
    pub trials: Vec<StatefulTrial>,
    /// Every trial of the throughput search, in order.
    #[serde(default)]
    pub throughput_trials: Vec<ThroughputTrial>,
}

impl StatefulRun {
    pub fn is(&self, config: &str, traffic: &str, iteration: usize) -> bool {
        self.config == config && self.traffic == traffic && self.iteration == iteration
    }
}

/// Everything in `rfc9693.json`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatefulReport {
    pub settings: StatefulSettings,
    pub runs: Vec<StatefulRun>,
}

impl StatefulReport {
    pub fn new(settings: StatefulSettings) -> StatefulReport {
        StatefulReport {
            settings,
            runs: Vec::new(),
        }
    }

    pub fn read(dir: &ResultsDir) -> Result<Option<StatefulReport>, CampaignError> {
        dir.read_json(REPORT_FILE)
    }

    pub fn write(&self, dir: &ResultsDir) -> Result<(), CampaignError> {
        dir.write_json(REPORT_FILE, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stateful::throughput::WayCounts;

    #[test]
    fn write_read_equal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(&tmp.path().join("c")).unwrap();
        let mut r = StatefulReport::new(StatefulSettings::default());
        r.runs.push(StatefulRun {
            config: "nft-stateful".into(),
            traffic: "inet4".into(),
            iteration: 1,
            conntrack_max: Some(3000),
            udp_timeout_s: Some(30),
            translated: Some("198.19.0.203".into()),
            capacity: Some(Bounds {
                lower: Some(2998.0),
                upper: Some(3004.0),
                min: 1.0,
                max: 3750.0,
                hit_max: false,
                generator_limited: false,
                complete: true,
                lower_intended: Some(2998.2),
                upper_intended: Some(3004.1),
            }),
            count_at_capacity: Some(2998),
            rate: None,
            rate_connections: Some(2998),
            teardown: Some(Teardown::Measured {
                connections: 2998,
                full_s: 0.02,
                empty_s: 0.01,
                rate_per_s: 299_800.0,
            }),
            trials: vec![StatefulTrial {
                test: "capacity".into(),
                connections: 3750,
                setup_rate_pps: 50_000.0,
                offered_pps: 50_010.5,
                preliminary_sent: 3750,
                preliminary_received: 3750,
                conntrack_count: Some(3000),
                validation_rate_pps: 50_000.0,
                validation_sent: 3750,
                validation_received: 3000,
                setup_refused: Some(625),
                setup_evicted: Some(125),
                validation_evicted: Some(0),
            }],
            throughput: Some(Bounds {
                lower: Some(19_800.0),
                upper: Some(19_840.0),
                min: 1000.0,
                max: 1e6,
                hit_max: false,
                generator_limited: false,
                complete: true,
                lower_intended: Some(19_800.0),
                upper_intended: Some(19_840.0),
            }),
            throughput_connections: Some(2998),
            throughput_trials: vec![ThroughputTrial {
                connections: 2998,
                setup_rate_pps: 50_000.0,
                preliminary_sent: 2998,
                preliminary_received: 2998,
                conntrack_count: Some(2998),
                rate_pps: 19_840.0,
                duration_s: 2.5,
                forward: WayCounts {
                    sent: 49_600,
                    received: 49_600,
                    lost: 0,
                    offered_pps: 19_840.5,
                    forwarded_pps: 19_840.5,
                },
                reverse: WayCounts {
                    sent: 49_600,
                    received: 49_590,
                    lost: 10,
                    offered_pps: 19_839.5,
                    forwarded_pps: 19_836.0,
                },
                tester_lost: 0,
                tester_limited: false,
            }],
        });
        r.write(&dir).unwrap();
        assert_eq!(StatefulReport::read(&dir).unwrap(), Some(r));
    }

    /// A folder written before the throughput test existed (a
    /// `throughput_note`, no throughput keys) still reads, for --resume.
    #[test]
    fn a_folder_without_the_throughput_test_reads() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ResultsDir::create(&tmp.path().join("c")).unwrap();
        let mut r = StatefulReport::new(StatefulSettings::default());
        r.runs.push(StatefulRun {
            config: "nat44".into(),
            ..StatefulRun::default()
        });
        let mut v = serde_json::to_value(&r).unwrap();
        v["settings"]["tests"] = serde_json::json!(["capacity", "rate", "teardown"]);
        let settings = v["settings"].as_object_mut().unwrap();
        assert!(settings.remove("throughput_duration_s").is_some());
        let run = v["runs"][0].as_object_mut().unwrap();
        for key in ["throughput", "throughput_connections", "throughput_trials"] {
            assert!(run.remove(key).is_some(), "{key}");
        }
        v["throughput_note"] = "not measured yet".into();
        std::fs::write(dir.path.join(REPORT_FILE), v.to_string()).unwrap();
        let back = StatefulReport::read(&dir).unwrap().unwrap();
        assert_eq!(back.settings.throughput_duration_s, 10.0);
        assert_eq!(back.settings.tests.len(), 3);
        assert_eq!(back.runs[0].throughput, None);
        assert!(back.runs[0].throughput_trials.is_empty());
    }
}
