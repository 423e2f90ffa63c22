//! pktlab lab layer: network namespaces, veth pairs and the built-in
//! forwarding lab (generator → DUT → receiver).
//!
//! - [`netns`]: namespaces, veth pairs, running code inside a namespace;
//! - [`observe`]: what a namespace holds (links, addresses, routes,
//!   neighbours, sysctls, counters);
//! - [`BuiltinLab`]: the lab itself: `up`, `down`, `status`, `counters`;
//! - [`dut`]: DUT configurations and where their commands run;
//! - [`knobs`]: what the configurations of Linux's fast paths and knobs do
//!   on the DUT (host sysctls restored even after a kill, threaded NAPI,
//!   the state their revert is checked against);
//! - [`sweep`]: one knob over a list of values, each value a DUT
//!   configuration;
//! - [`ports`]: labs on existing interfaces;
//! - [`ifstat`]: interface counters interval by interval;
//! - [`cpuload`], [`interrupts`], [`softnet`], [`envinfo`]: per-CPU load, NIC
//!   interrupts, per-CPU backlog drops and the facts (kernel, CPU, drivers)
//!   that go with results.

mod builtin;
pub mod cidr;
pub mod cpuload;
pub mod dut;
pub mod dutroute;
pub mod envinfo;
mod error;
pub mod ifstat;
pub mod interrupts;
pub mod knobs;
pub mod mac;
pub mod neigh;
pub mod netns;
pub mod observe;
pub mod ports;
pub mod runner;
pub mod softnet;
pub mod sweep;
pub mod sysctl;

pub use builtin::{
    gen_side_nets, mask_cpus, mask_text, online_cpus, parse_mask, rcv_side_nets, BuiltinLab,
    CpuMode, CpuPlan, CpuStatus, IfRole, IfStatus, IfSteering, LabIfCounters, LabIface, LabSpec,
    LabState, LabStatus, NapiThread, NsRole, NsStatus, Queues, RcvNapi, ReverseXdp, UpOutcome,
    DEFAULT_PREFIX, GEN_SIDE_NEXT_HOP4, GEN_SIDE_NEXT_HOP6, IPV4_PREFIX_LEN, IPV6_PREFIX_LEN,
    MAX_PREFIX_LEN, RCV_SIDE_NEXT_HOP4, RCV_SIDE_NEXT_HOP6,
};
pub use error::LabError;
pub use netns::MAX_QUEUES;
