//! pktlab wire layer: frame templates, ranges, flows, sizes, the test payload
//! and checksums. Pure code, no I/O.

pub mod checksum;
mod decimal;
mod error;
pub mod ethernet;
mod fastdiv;
pub mod flow;
pub mod frame;
pub mod ipv4;
pub mod ipv6;
pub mod mac;
pub mod parse;
pub mod payload;
pub mod range;
pub mod rate;
pub mod safety;
pub mod size;
pub mod udp;
pub mod units;

pub use error::WireError;
pub use flow::{Flow, FlowCursor, FlowOrder, FlowSet, MAX_FLOWS};
pub use frame::{min_frame_size, FrameGen, FrameSpec};
pub use mac::MacAddr;
pub use parse::{parse_test_frame, verify_checksums, ChecksumError, FlowKey, TestFrame};
pub use payload::{latency_ns, TestPayload, MAGIC, PAYLOAD_LEN};
pub use range::{AddrRange, EndpointRange, Family, PortRange};
pub use safety::check_destinations;
pub use size::SizeMix;
pub use units::{parse_count, parse_duration, parse_link_speed, parse_rate, Rate};
