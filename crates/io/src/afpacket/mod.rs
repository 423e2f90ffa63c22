//! Linux AF_PACKET ports with memory-mapped rings.
//!
//! - [`AfPacketTx`]: a TPACKET_V2 TX ring. Frames are written straight into
//!   ring slots, marked `TP_STATUS_SEND_REQUEST`, and one
//!   `sendto(fd, NULL, 0, MSG_DONTWAIT)` per batch tells the kernel to send
//!   them. `PACKET_QDISC_BYPASS` is asked for; `PACKET_LOSS` is on so that a
//!   malformed frame never stalls the ring.
//! - [`AfPacketRx`]: a TPACKET_V3 RX ring of blocks, `ETH_P_ALL`,
//!   `PACKET_IGNORE_OUTGOING`, optional `PACKET_FANOUT_HASH` fanout.
//!
//! Both work in the network namespace of the thread that opens them; once
//! open, a port may be moved to and used from any thread.

mod rx;
mod socket;
mod tx;

pub use rx::{AfPacketRx, RxRingConfig};
pub use tx::{AfPacketTx, TxRingConfig};
