//! How failures reach the user: one line, and an exit code that tells bad
//! input (2) from a runtime failure (1).

use std::fmt;

/// An error caused by the user's arguments or input files: exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Shorthand for returning a usage error from a subcommand.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}

/// An error that has already been reported in full and only sets the exit code.
#[derive(Debug)]
pub struct Exit(pub i32);

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Exit {}

pub fn exit_code(err: &anyhow::Error) -> i32 {
    if let Some(Exit(code)) = err.downcast_ref::<Exit>() {
        return *code;
    }
    match err.chain().find_map(is_usage) {
        Some(true) => 2,
        _ => 1,
    }
}

/// Whether `cause` is one of pktlab's errors, and then whether bad input
/// caused it.
fn is_usage(cause: &(dyn std::error::Error + 'static)) -> Option<bool> {
    if cause.is::<UsageError>() || cause.is::<pktlab_wire::WireError>() {
        return Some(true);
    }
    macro_rules! is_usage_of {
        ($($t:ty),*) => {$(
            if let Some(e) = cause.downcast_ref::<$t>() {
                return Some(e.is_usage());
            }
        )*};
    }
    is_usage_of!(
        pktlab_io::IoError,
        pktlab_stats::StatsError,
        pktlab_lab::LabError,
        pktlab_engine::EngineError,
        pktlab_loss::LossError,
        pktlab_remote::RemoteError,
        pktlab_trial::TrialError,
        pktlab_campaign::CampaignError,
        pktlab_pktgen::PktgenError,
        pktlab_search::SearchError,
        pktlab_history::HistoryError
    );
    None
}

/// The operating system's text for `err` ("No such file or directory"),
/// without Rust's " (os error 2)" suffix, for messages that quote it.
pub use pktlab_io::os_message;

/// The whole error chain on one line: "context: cause: root cause".
pub fn one_line(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err.chain().map(|c| c.to_string()).collect();
    parts.join(": ").replace('\n', " ")
}
