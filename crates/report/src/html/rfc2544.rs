//! The files `pktlab rfc2544` leaves in a results folder, as the report
//! reads them: `rfc2544.json` (the stable keys of its results) and
//! `trials.jsonl` (one line per trial). Every list may be absent.

use serde::Deserialize;

pub const RFC2544_FILE: &str = "rfc2544.json";

/// A frame size as `pktlab rfc2544` names it: `64` (written as text, since
/// a mix such as `imix` is a size too) or a bare number. Sizes in bytes sort
/// by value, before mixes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SizeLabel(pub String);

impl SizeLabel {
    fn bytes(&self) -> Option<u32> {
        self.0.parse().ok()
    }
}

impl Ord for SizeLabel {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let key = |s: &SizeLabel| (s.bytes().unwrap_or(u32::MAX), s.0.clone());
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for SizeLabel {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for SizeLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for SizeLabel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SizeLabel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u32),
            Text(String),
        }
        Ok(SizeLabel(match Raw::deserialize(d)? {
            Raw::Number(n) => n.to_string(),
            Raw::Text(t) => t,
        }))
    }
}
pub const TRIALS_FILE: &str = "trials.jsonl";

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Rfc2544 {
    #[serde(default)]
    pub throughput: Vec<Throughput>,
    #[serde(default)]
    pub latency: Vec<Latency>,
    #[serde(default)]
    pub frame_loss: Vec<FrameLoss>,
    #[serde(default)]
    pub back_to_back: Vec<BackToBack>,
}

/// One search's answer for every goal.
#[derive(Clone, Debug, Deserialize)]
pub struct Throughput {
    pub config: String,
    pub traffic: String,
    pub size: SizeLabel,
    pub goals: Vec<Goal>,
    #[serde(default)]
    pub generator_limited: bool,
    /// Most of the loss at some goal's lower bound was the tester's.
    #[serde(default)]
    pub tester_limited: bool,
    #[serde(default)]
    pub trials: usize,
}

/// A loss goal (NDR: 0, PDR: 0.005) and its bounds.
#[derive(Clone, Debug, Deserialize)]
pub struct Goal {
    pub loss_ratio: f64,
    #[serde(default)]
    pub exceed_ratio: f64,
    pub lower_pps: Option<f64>,
    pub upper_pps: Option<f64>,
    pub conditional_throughput_pps: Option<f64>,
}

impl Goal {
    /// `NDR` for zero loss, `PDR 0.5 %` otherwise.
    pub fn name(&self) -> String {
        if self.loss_ratio == 0.0 {
            "NDR".into()
        } else {
            format!("PDR {} %", self.loss_ratio * 100.0)
        }
    }
}

/// Latency at one load.
#[derive(Clone, Debug, Deserialize)]
pub struct Latency {
    pub config: String,
    pub traffic: String,
    pub size: SizeLabel,
    pub load_pps: f64,
    pub min_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
    pub max_ns: f64,
}

impl Latency {
    /// (percentile, ns) points of the HDR curve; max is drawn at 99.99.
    pub fn points(&self) -> [(f64, f64); 5] {
        [
            (50.0, self.p50_ns),
            (90.0, self.p90_ns),
            (99.0, self.p99_ns),
            (99.9, self.p999_ns),
            (99.99, self.max_ns),
        ]
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct FrameLoss {
    pub config: String,
    pub traffic: String,
    pub size: SizeLabel,
    pub points: Vec<LossPoint>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct LossPoint {
    pub offered_pps: f64,
    pub loss_ratio: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct BackToBack {
    pub config: String,
    pub traffic: String,
    pub size: SizeLabel,
    pub frames: f64,
    pub burst_pps: f64,
    #[serde(default)]
    pub trials: usize,
    pub implied_buffer_time_s: Option<f64>,
    pub corrected_buffer_time_s: Option<f64>,
}

/// One line of `trials.jsonl`.
#[derive(Clone, Debug, Deserialize)]
pub struct TrialLine {
    pub config: String,
    pub traffic: String,
    pub size: SizeLabel,
    pub test: String,
    /// None for a trial at full speed (the calibration).
    pub intended_pps: Option<f64>,
    pub offered_pps: f64,
    pub duration_s: f64,
    pub tx: u64,
    pub rx: u64,
    pub lost: u64,
    /// None when the receiver could not tell late frames from lost ones.
    #[serde(default)]
    pub late: Option<u64>,
    pub loss_ratio: f64,
    #[serde(default)]
    pub generator_limited: bool,
    /// Per goal: `upper`, `lower` or `undecided` (a list in goal order, or
    /// a map from goal to class); kept as written. `pktlab rfc2544` writes
    /// it as `classes`, a list of `{loss_ratio, exceed_ratio, class}`.
    #[serde(default, alias = "classes")]
    pub classification: serde_json::Value,
    pub started_at: f64,
    /// Where the trial's lost frames went (None: not recorded).
    #[serde(default)]
    pub drops: Option<pktlab_loss::drops::Drops>,
}

impl TrialLine {
    /// The class the first goal (NDR) gave this trial's load.
    pub fn first_class(&self) -> String {
        let v = &self.classification;
        let s = match v {
            serde_json::Value::String(s) => Some(s.as_str()),
            serde_json::Value::Array(a) => a.first().and_then(|x| {
                x.as_str()
                    .or_else(|| x.get("class").and_then(|c| c.as_str()))
            }),
            serde_json::Value::Object(m) => m.values().next().and_then(|x| x.as_str()),
            _ => None,
        };
        s.unwrap_or("unclassified").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_text_or_number_and_sort_by_bytes() {
        let mut sizes: Vec<SizeLabel> =
            serde_json::from_str(r#"["1518", 64, "imix", "128"]"#).unwrap();
        sizes.sort();
        let names: Vec<String> = sizes.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["64", "128", "1518", "imix"]);
    }

    #[test]
    fn a_calibration_trial_has_no_intended_rate() {
        let line = r#"{"config":"a","traffic":"t","size":"64","test":"calibration","intended_pps":null,"offered_pps":1163264.0,"duration_s":1.0,"tx":1163264,"rx":880234,"lost":283030,"late":null,"loss_ratio":0.2433,"generator_limited":false,"started_at":1.0}"#;
        let t: TrialLine = serde_json::from_str(line).unwrap();
        assert_eq!((t.intended_pps, t.tx), (None, 1163264));
    }

    #[test]
    fn the_classes_rfc2544_writes_give_the_first_goals_class() {
        let line = r#"{"config":"a","traffic":"t","size":"64","test":"throughput","intended_pps":1000.0,"offered_pps":1000.0,"duration_s":1.0,"tx":1000,"rx":1000,"lost":0,"loss_ratio":0.0,"classes":[{"loss_ratio":0.0,"exceed_ratio":0.5,"class":"lower"},{"loss_ratio":0.005,"exceed_ratio":0.5,"class":"undecided"}],"started_at":1.0}"#;
        let t: TrialLine = serde_json::from_str(line).unwrap();
        assert_eq!(t.first_class(), "lower");
    }

    #[test]
    fn a_trial_without_late_frames_counted_reads_as_none() {
        let line = r#"{"config":"a","traffic":"t","size":"64","test":"throughput","intended_pps":1000.0,"offered_pps":999.0,"duration_s":1.0,"tx":999,"rx":990,"lost":9,"late":null,"loss_ratio":0.009,"generator_limited":false,"started_at":1.0}"#;
        let t: TrialLine = serde_json::from_str(line).unwrap();
        assert_eq!((t.late, t.lost, t.size.to_string()), (None, 9, "64".into()));
    }
}
