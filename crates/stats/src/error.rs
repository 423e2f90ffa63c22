//! The stats layer's error type.

/// Bad input to the stats layer. Every message is one line that names the
/// offending value; the ministat ones are ministat's own texts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A data line whose selected column is not a number.
    #[error("Invalid data on line {line} in {name}")]
    InvalidData { name: String, line: usize },
    /// A data set with fewer than the three points a t test needs.
    #[error("Dataset {name} must contain at least 3 data points")]
    TooFewPoints { name: String },
    /// `-c` with something that is not a number.
    #[error("Not a floating point number: {0}")]
    ConfidenceNotANumber(String),
    /// `-c` with a number that is not one of the six levels.
    #[error("No support for confidence level {0}")]
    UnsupportedConfidence(String),
    /// A confidence level flag (`compare -c`) that is not one of the six.
    #[error("invalid confidence level '{0}': use 80, 90, 95, 98, 99 or 99.5")]
    InvalidConfidence(String),
}

impl StatsError {
    /// Every stats error comes from the user's input or arguments (exit code 2).
    pub fn is_usage(&self) -> bool {
        true
    }
}
