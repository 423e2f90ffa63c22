//! The engine's error type.

use pktlab_io::IoError;

/// A failure of a run. Messages are one line.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A port failed to open or failed while running.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Frames that cannot be built (bad input).
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// A CPU list that cannot be used (bad input).
    #[error("{0}")]
    BadCpus(String),
    /// The plan itself is inconsistent (bad input), e.g. zero threads.
    #[error("{0}")]
    BadPlan(String),
    /// Pinning a thread or entering a namespace failed at run time.
    #[error("{0}")]
    System(String),
    /// A worker thread panicked; this is a bug.
    #[error("a {0} worker thread panicked (this is a bug in pktlab)")]
    WorkerPanicked(&'static str),
    /// Frames were built but did not all go out (`--io xdp`): the run
    /// fails, and the summary of what it did comes with the error.
    #[error("{message}")]
    Undelivered {
        message: String,
        summary: Box<crate::tx::TxSummary>,
    },
}

impl EngineError {
    /// True when the user's input caused it (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            EngineError::Io(e) => e.is_usage(),
            EngineError::Wire(_) | EngineError::BadCpus(_) | EngineError::BadPlan(_) => true,
            EngineError::System(_)
            | EngineError::WorkerPanicked(_)
            | EngineError::Undelivered { .. } => false,
        }
    }
}
