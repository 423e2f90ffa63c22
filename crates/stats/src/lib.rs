//! pktlab's stats layer: pure code, no I/O.
//!
//! - [`summarize`], [`median`], [`percentile`]: descriptive statistics of a
//!   sample, computed the way FreeBSD's ministat computes them;
//! - [`compare`]: ministat's Student's t comparison of two samples;
//! - [`ministat`]: ministat's complete text output (legend, plot, table,
//!   comparisons) and its input format, as a library;
//! - [`pktgen`]: per-second rates from netmap pkt-gen logs and the value of a
//!   run, computed the way BSDRP's bench scripts do.

mod cformat;
mod compare;
mod cparse;
mod descriptive;
mod error;
pub mod ministat;
pub mod pktgen;
mod student;

pub use cformat::format_g;
pub use compare::{compare, Comparison};
pub use cparse::{parse_c_double, parse_c_long};
pub use descriptive::{median, percentile, summarize, Summary};
pub use error::StatsError;
pub use student::Confidence;
