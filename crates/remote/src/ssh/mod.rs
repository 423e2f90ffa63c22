//! Generators and receivers on other hosts, reached with OpenSSH.
//!
//! - [`host`]: ssh options, shared connections, copying pktlab over;
//! - [`session`]: one `pktlab worker --stdio` job on a host;
//! - [`remote`]: a generator or receiver there ([`Remote`]);
//! - [`several`]: several generators sharing the traffic;
//! - [`observe`]: the other hosts' counters, read by their workers;
//! - [`clock`]: the hosts' clocks, and what they make of one-way latency.

pub mod clock;
pub mod host;
pub mod observe;
pub mod remote;
pub mod session;
pub mod several;

pub use host::{ControlDir, SshHost};
pub use remote::Remote;
pub use session::{PortFacts, GRACE};
pub use several::{GenPart, Generators};
