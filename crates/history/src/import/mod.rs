//! Records made from folders on disk: pktlab results folders
//! ([`folder`]; an rfc9693 campaign's results by [`stateful`]) and
//! BSDRP/netbenches `.pps` folders ([`pps`]).

pub mod folder;
mod identity;
pub mod pps;
pub mod stateful;

pub use identity::{check_label, sha256_hex, MAX_LABEL};
