//! What every stateful run of a campaign uses: the tests, the number of
//! connections, the rates and the search's width.

use std::net::IpAddr;

use crate::SearchError;

/// One of RFC 9693's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Connection tracking table capacity: the most connections that
    /// validate.
    Capacity,
    /// Maximum connection establishment rate: the highest preliminary
    /// rate whose connections all validate.
    Rate,
    /// Throughput over established connections: the highest rate each
    /// way at which the connections' own traffic, sent both ways at once,
    /// loses no frame.
    Throughput,
    /// Connection tear-down rate.
    Teardown,
}

impl Test {
    pub const ALL: [Test; 4] = [Test::Capacity, Test::Rate, Test::Throughput, Test::Teardown];

    pub fn name(self) -> &'static str {
        match self {
            Test::Capacity => "capacity",
            Test::Rate => "rate",
            Test::Throughput => "throughput",
            Test::Teardown => "teardown",
        }
    }

    /// `capacity,rate`, `all`.
    pub fn parse_list(text: &str) -> Result<Vec<Test>, SearchError> {
        if text.trim() == "all" {
            return Ok(Test::ALL.to_vec());
        }
        let mut tests = Vec::new();
        for word in text.split(',').map(str::trim) {
            let t = Test::ALL
                .into_iter()
                .find(|t| t.name() == word)
                .ok_or_else(|| {
                    SearchError(format!(
                        "unknown stateful test '{word}': use capacity, rate, throughput, teardown or all"
                    ))
                })?;
            if !tests.contains(&t) {
                tests.push(t);
            }
        }
        // In the order they run: the capacity bounds the others' count.
        tests.sort_by_key(|t| Test::ALL.iter().position(|a| a == t));
        Ok(tests)
    }
}

/// The stateful tests' settings, as `rfc9693.json` records them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatefulSettings {
    pub tests: Vec<Test>,
    /// Connections of the rate search and the tear-down test (fewer when
    /// the measured capacity is lower).
    pub connections: u64,
    /// The capacity search's highest count; None: a quarter above the
    /// DUT's `nf_conntrack_max`.
    pub max_connections: Option<u64>,
    /// The preliminary phase's rate in the capacity and tear-down tests.
    pub setup_rate_pps: f64,
    /// The validation's rate (the Responder's).
    pub validation_rate_pps: f64,
    /// The range of the rate and throughput searches.
    pub min_rate_pps: f64,
    pub max_rate_pps: f64,
    /// Relative width of the searches' final bounds.
    pub width: f64,
    /// The Initiator's address as the Responder sees it (source NAT);
    /// None: the DUT's own (`nat44` on the built-in lab), else none.
    pub translated: Option<IpAddr>,
    /// The host's `nf_conntrack_max` for the campaign's runs (host-wide
    /// on Linux; restored after each run); None: left as it is.
    #[serde(default)]
    pub conntrack_max: Option<u64>,
    /// Seconds of the throughput test's real test phase, per trial.
    #[serde(default = "default_throughput_duration")]
    pub throughput_duration_s: f64,
}

/// The throughput trials' length: `pktlab bench`'s trial length.
pub const THROUGHPUT_DURATION_S: f64 = 10.0;

fn default_throughput_duration() -> f64 {
    THROUGHPUT_DURATION_S
}

impl Default for StatefulSettings {
    fn default() -> StatefulSettings {
        StatefulSettings {
            tests: Test::ALL.to_vec(),
            connections: 10_000,
            max_connections: None,
            setup_rate_pps: 50_000.0,
            validation_rate_pps: 50_000.0,
            min_rate_pps: 1_000.0,
            max_rate_pps: 1_000_000.0,
            width: 0.002,
            translated: None,
            conntrack_max: None,
            throughput_duration_s: THROUGHPUT_DURATION_S,
        }
    }
}

impl StatefulSettings {
    /// Checks the numbers against each other.
    pub fn check(&self) -> Result<(), SearchError> {
        let rate_ok = |r: f64| r.is_finite() && r > 0.0;
        if !(rate_ok(self.setup_rate_pps)
            && rate_ok(self.validation_rate_pps)
            && rate_ok(self.min_rate_pps))
        {
            return Err(SearchError("rates must be more than 0".into()));
        }
        if self.min_rate_pps > self.max_rate_pps {
            return Err(SearchError(format!(
                "the lowest rate ({} pps) is above the highest ({} pps)",
                self.min_rate_pps, self.max_rate_pps
            )));
        }
        if !(self.width > 0.0 && self.width < 1.0) {
            return Err(SearchError(format!(
                "invalid width {} %: use more than 0 and less than 100 %",
                self.width * 100.0
            )));
        }
        let d = self.throughput_duration_s;
        if !(d.is_finite() && (0.1..=86_400.0).contains(&d)) {
            return Err(SearchError(format!(
                "invalid throughput trial duration {d} s: use 0.1 s to a day"
            )));
        }
        if self.connections == 0 || self.max_connections == Some(0) {
            return Err(SearchError(
                "the number of connections must be at least 1".into(),
            ));
        }
        super::connections::Connections::at_least(
            self.connections.max(self.max_connections.unwrap_or(0)),
        )?;
        if self.conntrack_max == Some(0) {
            return Err(SearchError(
                "--conntrack-max must be at least 1 (0 is no limit at all)".into(),
            ));
        }
        if self.tests.is_empty() {
            return Err(SearchError("no stateful test to run".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_lists() {
        assert_eq!(Test::parse_list("all").unwrap(), Test::ALL);
        assert_eq!(
            Test::parse_list("teardown, capacity,teardown").unwrap(),
            [Test::Capacity, Test::Teardown]
        );
        assert_eq!(
            Test::parse_list("throughput,rate").unwrap(),
            [Test::Rate, Test::Throughput]
        );
        assert_eq!(
            Test::parse_list("speed").unwrap_err().0,
            "unknown stateful test 'speed': use capacity, rate, throughput, teardown or all"
        );
    }

    #[test]
    fn settings_checked() {
        assert!(StatefulSettings::default().check().is_ok());
        let s = StatefulSettings {
            min_rate_pps: 2e6,
            ..StatefulSettings::default()
        };
        assert!(s.check().unwrap_err().0.contains("above the highest"));
        let s = StatefulSettings {
            connections: 20_000_000,
            ..StatefulSettings::default()
        };
        assert!(s
            .check()
            .unwrap_err()
            .0
            .contains("more than a trial can open"));
        let s = StatefulSettings {
            throughput_duration_s: 0.0,
            ..StatefulSettings::default()
        };
        assert_eq!(
            s.check().unwrap_err().0,
            "invalid throughput trial duration 0 s: use 0.1 s to a day"
        );
    }
}
