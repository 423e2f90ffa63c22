//! The bench layer's error type.

/// A failure of a trial or a series. Messages are one line.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    #[error(transparent)]
    Engine(#[from] pktlab_engine::EngineError),
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// Bad settings (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A trial that ran but cannot be valued.
    #[error("{0}")]
    Trial(String),
}

impl BenchError {
    pub fn is_usage(&self) -> bool {
        match self {
            BenchError::Lab(e) => e.is_usage(),
            BenchError::Engine(e) => e.is_usage(),
            BenchError::Wire(_) | BenchError::Usage(_) => true,
            BenchError::Trial(_) => false,
        }
    }
}
