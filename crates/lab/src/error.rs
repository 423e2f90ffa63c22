//! The lab's one error type. Every message is one line that names what failed.

/// A failure to build, inspect or remove a lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A lab prefix or namespace name that cannot be used (bad input, exit code 2).
    #[error("invalid {what} '{value}': {why}")]
    BadName {
        what: &'static str,
        value: String,
        why: String,
    },
    /// A queue count out of range (bad input, exit code 2).
    #[error("invalid queue count {0}: use 1 to {max}", max = crate::MAX_QUEUES)]
    BadQueues(u16),
    /// The caller is not root; the message says what needed root.
    #[error("{0}")]
    NotRoot(String),
    /// A required program (`ip`) is not installed.
    #[error(
        "the `{program}` command was not found in PATH, /usr/sbin or /sbin: install {package}"
    )]
    MissingProgram {
        program: &'static str,
        package: &'static str,
    },
    /// A command could not be started.
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    /// A command ran and failed; `stderr` is its diagnostics on one line.
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    /// A command's output was not what we expected.
    #[error("unexpected output from `{command}`: {why}")]
    Output { command: String, why: String },
    /// A network namespace that should be new already exists.
    #[error("network namespace {0} already exists")]
    NamespaceExists(String),
    /// A network namespace that should exist does not.
    #[error("network namespace {0} does not exist")]
    NoNamespace(String),
    /// A system call failed.
    #[error("{what}: {source}")]
    Sys {
        what: String,
        source: std::io::Error,
    },
    /// Building a lab failed, and so did removing what had been created.
    #[error("{error} (removing the partial lab also failed: {cleanup})")]
    Cleanup {
        error: Box<LabError>,
        cleanup: Box<LabError>,
    },
}

impl LabError {
    /// True when the user's input caused the error (exit code 2), false for
    /// runtime failures (exit code 1).
    pub fn is_usage(&self) -> bool {
        match self {
            LabError::BadName { .. } | LabError::BadQueues(_) => true,
            LabError::Cleanup { error, .. } => error.is_usage(),
            _ => false,
        }
    }
}
