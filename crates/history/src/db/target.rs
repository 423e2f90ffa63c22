//! Which database: `--db`, else `$PKTLAB_HISTORY_DB`, else the default
//! file under the user's data directory.
//!
//! The default follows the XDG base directory rules, through the `dirs`
//! crate: `$XDG_DATA_HOME/pktlab/history.sqlite` when `XDG_DATA_HOME` is
//! an absolute path, else `~/.local/share/pktlab/history.sqlite`.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::HistoryError;

/// The environment variable that names the database when `--db` does not
/// (tests and CI point it at a scratch file).
pub const ENV_VAR: &str = "PKTLAB_HISTORY_DB";

/// The default file's name under the data directory.
pub const DEFAULT_FILE: &str = "pktlab/history.sqlite";

/// How long a PostgreSQL connection may take when the URL does not say.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A history database.
#[derive(Clone, Debug, PartialEq)]
pub enum DbTarget {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgresql://user@host/db`).
    Postgres(String),
}

impl DbTarget {
    /// `--db`'s value: a `postgresql://` or `postgres://` URL, or a file.
    pub fn parse(text: &str) -> Result<DbTarget, HistoryError> {
        let bad = |why: &str| {
            HistoryError::Usage(format!(
                "invalid history database '{}': {why}",
                redact(text)
            ))
        };
        if text.trim().is_empty() {
            return Err(bad("give a file or a postgresql:// URL"));
        }
        if text.starts_with("postgresql://") || text.starts_with("postgres://") {
            postgres::Config::from_str(text)
                .map_err(|e| bad(&crate::error::one_line(&e.to_string())))?;
            return Ok(DbTarget::Postgres(text.to_string()));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            if !scheme.contains('/') {
                return Err(bad(&format!(
                    "'{scheme}://' is not a database pktlab knows: give a file (SQLite) or a postgresql:// URL"
                )));
            }
        }
        Ok(DbTarget::Sqlite(PathBuf::from(text)))
    }

    /// `--db` if given, else [`ENV_VAR`], else [`default_path`].
    pub fn resolve(flag: Option<&str>) -> Result<DbTarget, HistoryError> {
        if let Some(text) = flag {
            return DbTarget::parse(text);
        }
        if let Some(text) = std::env::var_os(ENV_VAR) {
            let text = text.to_string_lossy().into_owned();
            return DbTarget::parse(&text)
                .map_err(|e| HistoryError::Usage(format!("{ENV_VAR}: {e}")));
        }
        default_path().map(DbTarget::Sqlite).ok_or_else(|| {
            HistoryError::Usage(format!(
                "no data directory for the history database (neither XDG_DATA_HOME nor HOME is set): give --db or {ENV_VAR}"
            ))
        })
    }

    /// The database as messages name it: a URL's password is hidden.
    pub fn display(&self) -> String {
        match self {
            DbTarget::Sqlite(p) => p.display().to_string(),
            DbTarget::Postgres(url) => redact(url),
        }
    }
}

/// `~/.local/share/pktlab/history.sqlite`, or under `$XDG_DATA_HOME`.
pub fn default_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join(DEFAULT_FILE))
}

/// `scheme://user:secret@host/...` with the secret replaced by `***`, and
/// a `password=` parameter too.
pub fn redact(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(start) = out.find("://").map(|i| i + 3) {
        let auth_end = out[start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| start + i);
        if let Some(at) = out[start..auth_end].rfind('@').map(|i| start + i) {
            if let Some(colon) = out[start..at].find(':').map(|i| start + i) {
                out.replace_range(colon + 1..at, "***");
            }
        }
    }
    if let Some(p) = out.find("password=") {
        let from = p + "password=".len();
        let to = out[from..].find('&').map_or(out.len(), |i| from + i);
        out.replace_range(from..to, "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_urls_and_nonsense() {
        assert_eq!(
            DbTarget::parse("/tmp/h.sqlite").unwrap(),
            DbTarget::Sqlite("/tmp/h.sqlite".into())
        );
        assert_eq!(
            DbTarget::parse("rel/h.db").unwrap(),
            DbTarget::Sqlite("rel/h.db".into())
        );
        let url = "postgresql://bench@db.example/history";
        assert_eq!(
            DbTarget::parse(url).unwrap(),
            DbTarget::Postgres(url.into())
        );
        assert!(DbTarget::parse("postgres:///h?host=/run/pg").is_ok());
        let e = DbTarget::parse("mysql://x/y").unwrap_err();
        assert!(e.is_usage());
        assert!(
            e.to_string().contains("'mysql://' is not a database"),
            "{e}"
        );
        let e = DbTarget::parse("postgresql://h:notaport/db").unwrap_err();
        assert!(
            e.is_usage() && e.to_string().starts_with("invalid history database"),
            "{e}"
        );
        assert!(DbTarget::parse("  ").unwrap_err().is_usage());
    }

    #[test]
    fn passwords_never_shown() {
        assert_eq!(
            redact("postgresql://u:s3cret@h:5432/db"),
            "postgresql://u:***@h:5432/db"
        );
        assert_eq!(redact("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(
            redact("postgresql:///db?user=u&password=x&host=/s"),
            "postgresql:///db?user=u&password=***&host=/s"
        );
        let e = DbTarget::parse("postgresql://u:s3cret@h:bad/db").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
}
