//! The history layer's error type: one line each, and whether the user's
//! input is to blame (exit code 2) or the run (exit code 1).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A bad argument or input file (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The database cannot be opened, read or written.
    #[error("history database {db}: {why}")]
    Database { db: String, why: String },
    /// The database was written by a newer pktlab.
    #[error("history database {db} has schema version {theirs}, newer than this pktlab's {ours}: use the pktlab that wrote it (or a newer one)")]
    Newer { db: String, theirs: i64, ours: i64 },
    /// A results folder or file that cannot be read (exit code 1; a
    /// missing or malformed one is a [`HistoryError::Usage`]).
    #[error("{}: {why}", .path.display())]
    File { path: PathBuf, why: String },
    /// Anything else that failed at run time, as one line.
    #[error("{0}")]
    Runtime(String),
    /// A results folder from which nothing can be recorded.
    #[error("{}: {why}", .path.display())]
    Nothing { path: PathBuf, why: String },
}

impl HistoryError {
    pub fn is_usage(&self) -> bool {
        matches!(self, HistoryError::Usage(_))
    }

    pub(crate) fn db(db: &str, why: impl std::fmt::Display) -> HistoryError {
        HistoryError::Database {
            db: db.to_string(),
            why: one_line(&why.to_string()),
        }
    }
}

/// The operating system's text for `e`, without Rust's " (os error N)".
pub(crate) fn os_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Messages from a database server may span lines: one line, always.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
