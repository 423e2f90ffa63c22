//! pktlab history layer: every campaign's results in a database (SQLite
//! embedded by default, PostgreSQL for a team), trends over labels, and
//! changes found as FD.io CSIT finds them ([`jumpavg`]).
//!
//! - [`db`]: the database (open, migrate, record, read back);
//! - [`import`]: records made from results folders and `.pps` folders;
//! - [`jumpavg`]: CSIT's grouping of a series by minimum description length;
//! - [`series`], [`trend`], [`compare`]: what the commands compute;
//! - [`commands`]: what each `pktlab history` subcommand does;
//! - [`sink`]: a campaign recording itself as it ends;
//! - [`text`], [`html`]: how they show it.

pub mod commands;
pub mod compare;
pub mod db;
pub mod error;
pub mod html;
pub mod import;
pub mod jumpavg;
pub mod order;
pub mod record;
pub mod series;
pub mod sink;
pub mod text;
pub mod trend;

pub use db::{Database, DbTarget};
pub use error::HistoryError;
pub use record::unix_now;
pub use sink::Recorder;
