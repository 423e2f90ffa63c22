//! pktlab history layer: every campaign's results in a database (SQLite
//! embedded by default, PostgreSQL for a team), trends over labels, and
//! changes found as FD.io CSIT finds them ([`jumpavg`]).
//!
//! - [`db`]: the database (open, migrate, record, read back);
//! - [`import`]: records made from results folders and `.pps` folders;
//! - [`jumpavg`]: CSIT's grouping of a series by minimum description length;
//! - [`series`], [`trend`], [`compare`]: what the commands compute;
//! - [`text`], [`html`]: how they show it.

pub mod compare;
pub mod db;
pub mod error;
pub mod import;
pub mod jumpavg;
pub mod order;
pub mod record;
pub mod series;
pub mod trend;

pub use db::{Database, DbTarget};
pub use error::HistoryError;

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
