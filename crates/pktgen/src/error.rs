//! pkt-gen's failures: a bad command line (exit 2, as pkt-gen's usage) or
//! a run that failed.

use pktlab_engine::EngineError;
use pktlab_wire::WireError;

/// A failure of `pkt-gen`. Messages are one line.
#[derive(Debug, thiserror::Error)]
pub enum PktgenError {
    /// A bad option or value.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The process could not be set up (a signal handler, standard output).
    #[error("{0}")]
    System(String),
}

impl PktgenError {
    /// True when the command line is at fault (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            PktgenError::Usage(_) | PktgenError::Wire(_) => true,
            PktgenError::Engine(e) => e.is_usage(),
            PktgenError::System(_) => false,
        }
    }
}

/// A usage error with `message`.
pub(crate) fn usage(message: impl Into<String>) -> PktgenError {
    PktgenError::Usage(message.into())
}
