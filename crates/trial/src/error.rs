//! The trial layer's error type.

/// A failure of a lab or of a trial on it.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error(transparent)]
    Remote(Box<pktlab_remote::RemoteError>),
    #[error(transparent)]
    Loss(Box<pktlab_loss::LossError>),
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    #[error(transparent)]
    Dut(#[from] pktlab_lab::dut::DutError),
    #[error(transparent)]
    Engine(#[from] pktlab_engine::EngineError),
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// A bad setting (exit code 2).
    #[error("{}", pktlab_wire::one_line(.0))]
    Usage(String),
    /// A trial that ran but cannot be valued, or a lab that is not right.
    #[error("{}", pktlab_wire::one_line(.0))]
    Failed(String),
}

impl TrialError {
    pub fn is_usage(&self) -> bool {
        match self {
            TrialError::Remote(e) => e.is_usage(),
            TrialError::Loss(e) => e.is_usage(),
            TrialError::Lab(e) => e.is_usage(),
            TrialError::Dut(e) => e.is_usage(),
            TrialError::Engine(e) => e.is_usage(),
            TrialError::Wire(_) | TrialError::Usage(_) => true,
            TrialError::Failed(_) => false,
        }
    }
}

impl From<pktlab_remote::RemoteError> for TrialError {
    fn from(e: pktlab_remote::RemoteError) -> Self {
        TrialError::Remote(Box::new(e))
    }
}

impl From<pktlab_loss::LossError> for TrialError {
    fn from(e: pktlab_loss::LossError) -> Self {
        TrialError::Loss(Box::new(e))
    }
}
