//! ministat(1) as a library: the legend, the plot, the table and the
//! comparisons, byte for byte as FreeBSD 13's ministat prints them
//! ([`report`], drawn by `plot`), from data sets ([`dataset`]) read as
//! ministat reads them ([`input`]); and ministat's command line
//! ([`command`]).

pub mod command;
mod dataset;
mod input;
mod plot;
mod report;

pub use dataset::{symbol, Dataset, MAX_DATASETS};
pub use input::{parse_values, read_dataset, ParseOptions, MIN_POINTS};
pub use report::{analyze, render, Analysis, DatasetStats, NamedComparison, RenderOptions};

#[cfg(test)]
mod tests;
