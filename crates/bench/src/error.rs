//! The bench layer's error type.

use std::path::PathBuf;

/// A failure of a trial or a campaign. Messages are one line.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    #[error(transparent)]
    Dut(#[from] pktlab_lab::dut::DutError),
    #[error(transparent)]
    Engine(#[from] pktlab_engine::EngineError),
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// Bad settings or a bad campaign file (exit code 2).
    #[error("{}", one_line(.0))]
    Usage(String),
    /// A trial that ran but cannot be valued.
    #[error("{}", one_line(.0))]
    Trial(String),
    /// The lab broke during a campaign (a namespace or port gone or down,
    /// forwarding off).
    #[error("{}", one_line(.0))]
    LabFault(String),
    /// The lab is in use by another campaign.
    #[error("{}", one_line(.0))]
    Busy(String),
    /// A results file that cannot be read or written.
    #[error("{}: {}", .path.display(), pktlab_io::os_message(.err))]
    File { path: PathBuf, err: std::io::Error },
    /// A results folder that is not what it should be (exit code 2: the
    /// user named it).
    #[error("{}: {why}", .path.display())]
    Results { path: PathBuf, why: String },
}

/// Messages quote what the user wrote (a campaign file's value may hold a
/// newline); control characters are shown escaped so a message stays one
/// line.
fn one_line(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl BenchError {
    pub fn is_usage(&self) -> bool {
        match self {
            BenchError::Lab(e) => e.is_usage(),
            BenchError::Dut(e) => e.is_usage(),
            BenchError::Engine(e) => e.is_usage(),
            BenchError::Wire(_) | BenchError::Usage(_) | BenchError::Results { .. } => true,
            BenchError::Trial(_)
            | BenchError::LabFault(_)
            | BenchError::Busy(_)
            | BenchError::File { .. } => false,
        }
    }

    pub(crate) fn file(path: impl Into<PathBuf>, err: std::io::Error) -> BenchError {
        BenchError::File {
            path: path.into(),
            err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_control_characters_stay_on_one_line() {
        let e = BenchError::Usage("invalid drop trace 'a\nb\tc': use auto, on or off".into());
        assert_eq!(
            e.to_string(),
            "invalid drop trace 'a\\nb\\tc': use auto, on or off"
        );
        assert_eq!(BenchError::Trial("é ok".into()).to_string(), "é ok");
    }
}
