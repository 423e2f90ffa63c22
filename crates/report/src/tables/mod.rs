//! Text tables that the exporters' files, the command lines' text and the
//! HTML report all show: ministat's comparisons and the sweep tables.

pub mod ministat;
pub mod sweep;
