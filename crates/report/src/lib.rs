//! pktlab report layer: what people and programs read.
//!
//! Human text follows pkt-gen's habits (a line per interval, a two-line
//! summary with `Speed:` and `Bandwidth:`), so that existing eyes and
//! scripts keep working. JSON output is one object per line with a `type`
//! field (`interval`, `summary`, ...), snake_case keys and integer counts.

pub mod bench;
pub mod campaign;
pub mod compare;
pub mod drops;
pub mod export;
pub mod facts;
pub mod gen;
pub mod help;
pub mod html;
pub mod ifstat;
pub mod knob;
pub mod lab;
pub mod linerate;
pub mod manual;
pub mod recv;
pub mod rfc2544;
pub mod rfc9693;
pub mod tables;
pub mod units;
