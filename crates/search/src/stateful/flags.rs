//! The stateful tests' settings as the command line gives them, checked
//! and turned into [`StatefulSettings`].

use std::net::IpAddr;

use pktlab_wire::units::{self, Rate};

use super::settings::{StatefulSettings, Test};
use crate::SearchError;

/// The flags of `pktlab rfc9693`, as typed.
#[derive(Clone, Debug, Default)]
pub struct StatefulFlags {
    pub tests: Option<String>,
    pub connections: Option<u64>,
    pub max_connections: Option<u64>,
    pub setup_rate: Option<String>,
    pub validation_rate: Option<String>,
    pub min_rate: Option<String>,
    pub max_rate: Option<String>,
    pub width: Option<String>,
    pub nat_address: Option<String>,
    pub conntrack_max: Option<u64>,
    /// `--duration`: the throughput test's trial length.
    pub duration: Option<String>,
}

impl StatefulFlags {
    /// Any flag that a resumed campaign takes from its results instead.
    pub fn any(&self) -> Option<&'static str> {
        [
            ("--tests", self.tests.is_some()),
            ("--connections", self.connections.is_some()),
            ("--max-connections", self.max_connections.is_some()),
            ("--setup-rate", self.setup_rate.is_some()),
            ("--validation-rate", self.validation_rate.is_some()),
            ("--min-rate", self.min_rate.is_some()),
            ("--max-rate", self.max_rate.is_some()),
            ("--width", self.width.is_some()),
            ("--nat-address", self.nat_address.is_some()),
            ("--conntrack-max", self.conntrack_max.is_some()),
            ("--duration", self.duration.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(flag, _)| flag)
    }

    pub fn settings(&self) -> Result<StatefulSettings, SearchError> {
        let d = StatefulSettings::default();
        let s = StatefulSettings {
            tests: match &self.tests {
                Some(t) => Test::parse_list(t)?,
                None => d.tests,
            },
            connections: self.connections.unwrap_or(d.connections),
            max_connections: self.max_connections,
            setup_rate_pps: pps("--setup-rate", &self.setup_rate, d.setup_rate_pps)?,
            validation_rate_pps: pps(
                "--validation-rate",
                &self.validation_rate,
                d.validation_rate_pps,
            )?,
            min_rate_pps: pps("--min-rate", &self.min_rate, d.min_rate_pps)?,
            max_rate_pps: pps("--max-rate", &self.max_rate, d.max_rate_pps)?,
            width: width(&self.width, d.width)?,
            translated: match &self.nat_address {
                Some(a) => Some(a.parse::<IpAddr>().map_err(|_| {
                    SearchError(format!("invalid --nat-address '{a}': give an IP address"))
                })?),
                None => None,
            },
            conntrack_max: self.conntrack_max,
            throughput_duration_s: match &self.duration {
                Some(t) => units::parse_duration(t)
                    .map_err(|e| SearchError(format!("invalid --duration '{t}': {e}")))?
                    .as_secs_f64(),
                None => d.throughput_duration_s,
            },
        };
        s.check()?;
        Ok(s)
    }
}

/// A rate in frames per second: `50k`, `50kpps`, `1.5M`.
fn pps(flag: &str, text: &Option<String>, default: f64) -> Result<f64, SearchError> {
    let Some(t) = text else {
        return Ok(default);
    };
    match units::parse_rate(t).map_err(|e| SearchError(format!("invalid {flag} '{t}': {e}")))? {
        Rate::Pps(p) if p > 0.0 => Ok(p),
        _ => Err(SearchError(format!(
            "invalid {flag} '{t}': give frames per second above 0, such as 50k"
        ))),
    }
}

fn width(text: &Option<String>, default: f64) -> Result<f64, SearchError> {
    let Some(t) = text else {
        return Ok(default);
    };
    t.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v < 100.0)
        .map(|v| v / 100.0)
        .ok_or_else(|| {
            SearchError(format!(
                "invalid --width '{t}': use a percentage above 0 and below 100, such as 0.2"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_into_settings() {
        let f = StatefulFlags {
            tests: Some("capacity".into()),
            setup_rate: Some("20k".into()),
            width: Some("0.1".into()),
            nat_address: Some("198.19.0.203".into()),
            duration: Some("2.5s".into()),
            ..StatefulFlags::default()
        };
        let s = f.settings().unwrap();
        assert_eq!(s.throughput_duration_s, 2.5);
        assert_eq!(s.tests, [Test::Capacity]);
        assert_eq!(s.setup_rate_pps, 20_000.0);
        assert!((s.width - 0.001).abs() < 1e-15);
        assert_eq!(s.translated.unwrap().to_string(), "198.19.0.203");
        assert_eq!(f.any(), Some("--tests"));
        assert_eq!(StatefulFlags::default().any(), None);
    }

    #[test]
    fn bad_flags_say_which() {
        let bad = |f: StatefulFlags| f.settings().unwrap_err().0;
        let e = bad(StatefulFlags {
            setup_rate: Some("1Gbps".into()),
            ..StatefulFlags::default()
        });
        assert_eq!(
            e,
            "invalid --setup-rate '1Gbps': give frames per second above 0, such as 50k"
        );
        let e = bad(StatefulFlags {
            width: Some("100".into()),
            ..StatefulFlags::default()
        });
        assert!(e.starts_with("invalid --width '100'"), "{e}");
        let e = bad(StatefulFlags {
            nat_address: Some("d1".into()),
            ..StatefulFlags::default()
        });
        assert_eq!(e, "invalid --nat-address 'd1': give an IP address");
        let e = bad(StatefulFlags {
            duration: Some("soon".into()),
            ..StatefulFlags::default()
        });
        assert!(e.starts_with("invalid --duration 'soon': "), "{e}");
    }

    #[test]
    fn conntrack_max_refused_at_0() {
        let bad = |f: StatefulFlags| f.settings().unwrap_err().0;
        let e = bad(StatefulFlags {
            conntrack_max: Some(0),
            ..StatefulFlags::default()
        });
        assert_eq!(
            e,
            "--conntrack-max must be at least 1 (0 is no limit at all)"
        );
    }

    #[test]
    fn conntrack_max_is_a_setting_a_resume_keeps() {
        let f = StatefulFlags {
            conntrack_max: Some(3000),
            ..StatefulFlags::default()
        };
        assert_eq!(f.settings().unwrap().conntrack_max, Some(3000));
        assert_eq!(f.any(), Some("--conntrack-max"));
        // Settings written before the option existed read as "left alone".
        let mut v = serde_json::to_value(StatefulSettings::default()).unwrap();
        v.as_object_mut().unwrap().remove("conntrack_max");
        let old: StatefulSettings = serde_json::from_value(v).unwrap();
        assert_eq!(old.conntrack_max, None);
    }
}
