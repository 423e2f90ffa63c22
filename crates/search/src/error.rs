//! The search's own error: a setting it cannot work with. Everything else
//! a search method meets is a campaign's error
//! ([`pktlab_campaign::CampaignError`]).

/// A goal, width, load range or trial duration the search cannot use
/// (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{}", pktlab_wire::one_line(.0))]
pub struct SearchError(pub String);

impl SearchError {
    pub fn is_usage(&self) -> bool {
        true
    }
}

impl From<SearchError> for pktlab_campaign::CampaignError {
    fn from(e: SearchError) -> Self {
        pktlab_campaign::CampaignError::Usage(e.0)
    }
}
