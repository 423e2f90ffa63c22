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
pub mod html;
pub mod import;
pub mod jumpavg;
pub mod order;
pub mod record;
pub mod series;
pub mod text;
pub mod trend;

pub use db::{Database, DbTarget};
pub use error::HistoryError;

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Records results folder `dir` (a campaign that just finished, or an old
/// one) in the database `target`, created if need be: what `bench` and
/// `rfc2544` do at the end of a campaign, and `history import` for each
/// folder. `label` None: the DUT's kernel release.
pub fn record_folder(
    target: &DbTarget,
    dir: &std::path::Path,
    label: Option<&str>,
) -> Result<record::Recorded, HistoryError> {
    let rec = import::folder::read_folder(dir, label)?;
    let mut db = Database::open(target, true)?;
    db.record(&rec)
}
