//! Records made from folders on disk: pktlab results folders
//! ([`folder`]) and BSDRP/netbenches `.pps` folders ([`pps`]).

pub mod folder;
mod identity;
pub mod pps;

pub use identity::{check_label, sha256_hex, MAX_LABEL};
