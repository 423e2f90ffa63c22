//! The campaign layer's error type.

use std::path::PathBuf;

/// A failure of a campaign, of its lab or of its results folder. Messages
/// are one line.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(transparent)]
    Trial(Box<pktlab_trial::TrialError>),
    #[error(transparent)]
    Remote(Box<pktlab_remote::RemoteError>),
    #[error(transparent)]
    Loss(Box<pktlab_loss::LossError>),
    #[error(transparent)]
    Lab(#[from] pktlab_lab::LabError),
    #[error(transparent)]
    Dut(#[from] pktlab_lab::dut::DutError),
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// Bad settings or a bad campaign file (exit code 2).
    #[error("{}", pktlab_wire::one_line(.0))]
    Usage(String),
    /// A run that failed.
    #[error("{}", pktlab_wire::one_line(.0))]
    Failed(String),
    /// The lab broke during a campaign (a namespace or port gone or down,
    /// forwarding off).
    #[error("{}", pktlab_wire::one_line(.0))]
    LabFault(String),
    /// The lab is in use by another campaign.
    #[error("{}", pktlab_wire::one_line(.0))]
    Busy(String),
    /// A results file that cannot be read or written.
    #[error("{}: {}", .path.display(), pktlab_io::os_message(.err))]
    File { path: PathBuf, err: std::io::Error },
    /// A results folder that is not what it should be (exit code 2: the
    /// user named it).
    #[error("{}: {why}", .path.display())]
    Results { path: PathBuf, why: String },
}

impl CampaignError {
    pub fn is_usage(&self) -> bool {
        match self {
            CampaignError::Trial(e) => e.is_usage(),
            CampaignError::Remote(e) => e.is_usage(),
            CampaignError::Loss(e) => e.is_usage(),
            CampaignError::Lab(e) => e.is_usage(),
            CampaignError::Dut(e) => e.is_usage(),
            CampaignError::Wire(_) | CampaignError::Usage(_) | CampaignError::Results { .. } => {
                true
            }
            CampaignError::Failed(_)
            | CampaignError::LabFault(_)
            | CampaignError::Busy(_)
            | CampaignError::File { .. } => false,
        }
    }

    pub fn file(path: impl Into<PathBuf>, err: std::io::Error) -> CampaignError {
        CampaignError::File {
            path: path.into(),
            err,
        }
    }
}

impl From<pktlab_trial::TrialError> for CampaignError {
    fn from(e: pktlab_trial::TrialError) -> Self {
        CampaignError::Trial(Box::new(e))
    }
}

impl From<pktlab_remote::RemoteError> for CampaignError {
    fn from(e: pktlab_remote::RemoteError) -> Self {
        CampaignError::Remote(Box::new(e))
    }
}

impl From<pktlab_loss::LossError> for CampaignError {
    fn from(e: pktlab_loss::LossError) -> Self {
        CampaignError::Loss(Box::new(e))
    }
}
