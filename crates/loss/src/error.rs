//! The loss layer's error type.

/// A failure to read the lab's counters or to run the drop tracer.
#[derive(Debug, thiserror::Error)]
pub enum LossError {
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    /// The drop tracer's own error, as it says it.
    #[error(transparent)]
    Io(#[from] pktlab_io::IoError),
    /// A bad setting (exit code 2).
    #[error("{}", pktlab_wire::one_line(.0))]
    Usage(String),
    /// The drop tracer could not start or be read.
    #[error("drop trace: {0}")]
    Trace(String),
}

impl LossError {
    pub fn is_usage(&self) -> bool {
        match self {
            LossError::Lab(e) => e.is_usage(),
            LossError::Io(e) => e.is_usage(),
            LossError::Usage(_) => true,
            LossError::Trace(_) => false,
        }
    }
}
