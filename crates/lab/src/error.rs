//! The lab's one error type. Every message is one line that names what failed.
//!
//! No variant has a `source()`: the cause is part of the message, so a
//! printer that walks the error chain does not repeat it. OS errors are shown
//! without Rust's "(os error N)" suffix.

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
    /// A CPU plan that cannot be used (bad input, exit code 2).
    #[error("{0}")]
    BadCpus(String),
    /// Other bad input, named in the message (exit code 2).
    #[error("{0}")]
    Usage(String),
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
    #[error("cannot run `{command}`: {}", pktlab_io::os_message(err))]
    Spawn {
        command: String,
        err: std::io::Error,
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
    #[error("{what}: {}", pktlab_io::os_message(err))]
    Sys { what: String, err: std::io::Error },
    /// An interface query inside a namespace failed.
    #[error("{err} (in network namespace {ns})")]
    Io { ns: String, err: pktlab_io::IoError },
    /// The lab (or part of it) that an operation needs does not exist.
    #[error("lab '{prefix}' is not up: {why} (run `pktlab lab up --prefix {prefix}`)")]
    NotUp { prefix: String, why: String },
    /// `up` built the lab but it does not check out (the first problems found).
    #[error("the lab is incomplete after building it: {0}")]
    Incomplete(String),
    /// A DUT knob that cannot be set or restored, with the kernel's reason.
    #[error("{knob}: {why}")]
    Knob { knob: String, why: String },
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
            LabError::BadName { .. }
            | LabError::BadQueues(_)
            | LabError::BadCpus(_)
            | LabError::Usage(_) => true,
            LabError::Cleanup { error, .. } => error.is_usage(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_without_a_source_chain() {
        use std::error::Error;
        let e = LabError::Sys {
            what: "cannot enter network namespace x".into(),
            err: std::io::Error::from_raw_os_error(libc::EPERM),
        };
        assert_eq!(
            e.to_string(),
            "cannot enter network namespace x: Operation not permitted"
        );
        assert!(e.source().is_none());
        let e = LabError::Io {
            ns: "lab-gen".into(),
            err: pktlab_io::IoError::NoSuchInterface("g0".into()),
        };
        assert_eq!(
            e.to_string(),
            "no such interface: g0 (in network namespace lab-gen)"
        );
        assert!(e.source().is_none());
        assert!(!e.is_usage());
        let e = LabError::Cleanup {
            error: Box::new(LabError::BadQueues(0)),
            cleanup: Box::new(LabError::NoNamespace("x".into())),
        };
        assert!(e.is_usage());
        assert!(!e.to_string().contains('\n'));
    }
}
