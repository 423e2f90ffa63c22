//! pktlab wire layer: everything the generator and the receiver need to
//! build and recognise frames. Pure code: no I/O, no threads, no clock reads.
//!
//! - Command-line input: [`range`] (pkt-gen's `IP[:PORT][-IP[:PORT]]`),
//!   [`size`] (sizes, IMIX, weighted lists, RFC 6985 genomes), [`units`]
//!   (rates, link speeds, durations, counts), [`mac`], and [`safety`] (the
//!   destinations allowed without `--allow-public`).
//! - Flows: [`flow`] numbers every source/destination combination in
//!   pkt-gen's odometer order and splits them between TX threads;
//!   [`rfc4814`] draws pseudorandom ports per frame instead.
//! - Frames: [`frame::FrameGen`] writes frames from templates, patched in
//!   place with incremental checksums; [`parse::parse_test_frame`] is the
//!   receiver's fast path. Both allocate nothing per frame.
//! - Building blocks: typed views over [`ethernet`], [`ipv4`], [`ipv6`] and
//!   [`udp`] headers, the [`checksum`] arithmetic, the [`payload`] layout and
//!   [`rate`] (line-rate arithmetic).
//!
//! Every [`WireError`] is a usage error (exit code 2).
//!
//! ```
//! use pktlab_wire::{parse_test_frame, FlowOrder, FlowSet, FrameGen, FrameSpec, Family, PortMode};
//!
//! let spec = FrameSpec {
//!     src_mac: "02:00:00:00:00:01".parse()?,
//!     dst_mac: "02:00:00:00:00:02".parse()?,
//!     vlan: None,
//!     ttl: 64,
//!     flows: FlowSet::new("198.18.10.1:2000-198.18.10.20".parse()?, "198.19.10.1-198.19.10.100:2000".parse()?)?,
//!     order: FlowOrder::Sequential,
//!     sizes: "64".parse()?,
//!     ports: PortMode::Ranges,
//! };
//! spec.validate()?;
//! pktlab_wire::check_destinations(&spec.flows)?;
//! let mut generator = FrameGen::new(&spec, 0, 1);
//! let mut slot = vec![0u8; generator.max_len()];
//! let len = generator.write_next(&mut slot, 0, 1_700_000_000_000_000_000);
//! assert_eq!(len, 60); // 64 bytes on the wire with the FCS
//! let frame = parse_test_frame(&slot[..len]).unwrap();
//! assert_eq!((frame.payload.stream, frame.payload.seq), (0, 0));
//! assert_eq!(frame.key.dst_addr().to_string(), "198.19.10.1");
//! # Ok::<(), pktlab_wire::WireError>(())
//! ```

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
pub mod rfc4814;
pub mod safety;
pub mod size;
pub mod threads;
pub mod udp;
pub mod units;

pub use error::{one_line, WireError};
pub use flow::{Flow, FlowCursor, FlowOrder, FlowSet, MAX_FLOWS};
pub use frame::{min_frame_size, FrameGen, FrameSpec};
pub use mac::MacAddr;
pub use parse::{parse_test_frame, verify_checksums, ChecksumError, FlowKey, TestFrame};
pub use payload::{latency_ns, TestPayload, MAGIC, PAYLOAD_LEN};
pub use range::{AddrRange, EndpointRange, Family, PortRange};
pub use rfc4814::PortMode;
pub use safety::check_destinations;
pub use size::SizeMix;
pub use threads::{check_threads, MAX_THREADS};
pub use units::{parse_count, parse_duration, parse_link_speed, parse_rate, Rate};
