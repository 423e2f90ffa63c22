//! Reading back what JSON cannot hold: serde_json writes NaN and the
//! infinities as `null`.

use serde::{Deserialize, Deserializer};

/// A number, or NaN for `null` (for `#[serde(deserialize_with)]`).
pub(crate) fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use crate::{summarize, Confidence, Summary};

    #[test]
    fn a_summary_of_one_value_round_trips() {
        let s = summarize(&[5.0]).unwrap();
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            r#"{"n":1,"min":5.0,"max":5.0,"median":5.0,"avg":5.0,"stddev":null}"#
        );
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!((back.n, back.avg), (1, 5.0));
        assert!(back.stddev.is_nan());
        let c: Confidence = serde_json::from_str("99.5").unwrap();
        assert_eq!(c, Confidence::P99_5);
        assert!(serde_json::from_str::<Confidence>("97").is_err());
    }
}
