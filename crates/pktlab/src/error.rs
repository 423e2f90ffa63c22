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
    for cause in err.chain() {
        if cause.downcast_ref::<UsageError>().is_some() {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<pktlab_wire::WireError>() {
            let _ = e;
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<pktlab_io::IoError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_stats::StatsError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_lab::LabError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_engine::EngineError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_loss::LossError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_remote::RemoteError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_trial::TrialError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_campaign::CampaignError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<pktlab_search::SearchError>() {
            return if e.is_usage() { 2 } else { 1 };
        }
    }
    1
}

/// The operating system's text for `err` ("No such file or directory"),
/// without Rust's " (os error 2)" suffix, for messages that quote it.
pub use pktlab_io::os_message;

/// The whole error chain on one line: "context: cause: root cause".
pub fn one_line(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err.chain().map(|c| c.to_string()).collect();
    parts.join(": ").replace('\n', " ")
}
