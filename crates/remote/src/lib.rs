//! pktlab remote layer: where a trial's ends run, and the other hosts of
//! a lab.
//!
//! - [`endpoint`]: an end of a trial ([`endpoint::Endpoint`]): this
//!   process's threads ([`endpoint::Local`]), and the I/O backend a
//!   campaign asks for;
//! - [`ssh`]: hosts over OpenSSH: a generator or receiver there, several
//!   generators together, the other hosts' counters, their clocks;
//! - [`worker`]: `pktlab worker --stdio`, its JSON-lines protocol and its
//!   side of it.

pub mod endpoint;
mod error;
pub mod ssh;
pub mod worker;

pub use error::RemoteError;
