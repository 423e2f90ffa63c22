//! pktlab's stats layer: pure code, no I/O.
//!
//! - [`summarize`], [`median`], [`percentile`]: descriptive statistics of a
//!   sample, computed the way FreeBSD's ministat computes them;
//! - [`compare`]: ministat's Student's t comparison of two samples;
//! - [`ministat`]: ministat's complete text output (legend, plot, table,
//!   comparisons) and its input format, as a library;
//! - [`pktgen`]: per-second rates from netmap pkt-gen logs and the value of a
//!   run, computed the way BSDRP's bench scripts do.
//!
//! ```
//! use pktlab_stats::ministat::{self, Dataset, RenderOptions};
//! use pktlab_stats::{compare, summarize, Confidence};
//!
//! let before = [1.0, 2.0, 3.0];
//! let after = [4.0, 5.0, 6.0];
//! let (a, b) = (summarize(&before).unwrap(), summarize(&after).unwrap());
//! let c = compare(&a, &b, Confidence::P95);
//! assert_eq!((c.difference, c.percent, c.significant), (3.0, 150.0, true));
//!
//! let sets = [
//!     Dataset { name: "before".into(), values: before.to_vec() },
//!     Dataset { name: "after".into(), values: after.to_vec() },
//! ];
//! let text = ministat::render(&sets, &RenderOptions { show_plot: false, ..Default::default() });
//! assert!(text.ends_with("\t3 +/- 2.26659\n\t150% +/- 215.773%\n\t(Student's t, pooled s = 1)\n"));
//! ```

mod cformat;
mod compare;
mod cparse;
mod descriptive;
mod error;
mod json;
pub mod ministat;
pub mod pktgen;
mod student;

pub use cformat::format_g;
pub use compare::{compare, Comparison};
pub use cparse::{parse_c_double, parse_c_long};
pub use descriptive::{median, percentile, summarize, Summary};
pub use error::StatsError;
pub use student::Confidence;
