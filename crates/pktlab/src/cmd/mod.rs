//! One module per subcommand: argument definitions and the glue that calls
//! the library crates.

pub mod bench;
pub mod campaigns;
pub mod common;
pub mod compare;
pub mod docs;
pub mod drops;
pub mod gen;
pub mod history;
pub mod ifstat;
pub mod knob;
pub mod lab;
pub mod linerate;
pub mod ministat;
pub mod pktgen_log;
pub mod recording;
pub mod recv;
pub mod report;
pub mod rfc2544;
pub mod rfc9693;
pub mod worker;
