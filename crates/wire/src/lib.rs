//! pktlab wire layer: frame templates, ranges, flows, sizes, the test payload
//! and checksums. Pure code, no I/O.

mod error;
pub use error::WireError;
