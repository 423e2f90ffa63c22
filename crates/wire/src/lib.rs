//! pktlab wire layer: frame templates, ranges, flows, sizes, the test payload
//! and checksums. Pure code, no I/O.

mod decimal;
mod error;
pub mod mac;
pub mod rate;
pub mod units;

pub use error::WireError;
pub use mac::MacAddr;
pub use units::{parse_count, parse_duration, parse_link_speed, parse_rate, Rate};
