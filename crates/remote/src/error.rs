//! The remote layer's error type.

/// A failure of an end of a trial, here or on another host.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Loss(#[from] pktlab_loss::LossError),
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    #[error(transparent)]
    Engine(#[from] pktlab_engine::EngineError),
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// A bad setting (exit code 2).
    #[error("{}", pktlab_wire::one_line(.0))]
    Usage(String),
    /// A file this host needs (ssh's control folder, pktlab itself).
    #[error("{}: {}", .path.display(), pktlab_io::os_message(.err))]
    File {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    /// A host, its connection or its worker failed.
    #[error("{}", pktlab_wire::one_line(.0))]
    Failed(String),
}

impl RemoteError {
    pub fn is_usage(&self) -> bool {
        match self {
            RemoteError::Loss(e) => e.is_usage(),
            RemoteError::Lab(e) => e.is_usage(),
            RemoteError::Engine(e) => e.is_usage(),
            RemoteError::Wire(_) | RemoteError::Usage(_) => true,
            RemoteError::Failed(_) | RemoteError::File { .. } => false,
        }
    }

    pub fn file(path: impl Into<std::path::PathBuf>, err: std::io::Error) -> RemoteError {
        RemoteError::File {
            path: path.into(),
            err,
        }
    }
}
