//! The generator program's configuration, built from a [`FrameSpec`] with
//! the wire crate's own frames.
//!
//! For each distinct size, [`FrameGen`] writes a real frame (flow 0, seq 0,
//! ts 0); its per-frame fields are then zeroed and both checksums
//! recomputed, which gives exactly the template the program patches with
//! RFC 1624's update from zero, as `FrameGen` itself does. `data_in` is the
//! largest size's template: smaller sizes are made by shrinking its tail
//! (fill bytes depend only on the offset, so a shorter frame's fill is a
//! prefix of the longer one's).

use pktlab_wire::checksum::{self, PROTO_UDP};
use pktlab_wire::flow::{FlowCursor, FlowOrder};
use pktlab_wire::{Family, FrameGen, FrameSpec, PortMode, SizeMix, PAYLOAD_LEN};

use crate::IoError;

/// Distinct frame sizes the program holds (`MAX_SIZES` in crates/io/bpf/xdpgen.c).
pub const MAX_SIZES: usize = 16;
/// Longest size pattern (`MAX_PATTERN`).
pub const MAX_PATTERN: usize = 4096;
/// Header bytes the program rewrites at most (`MAX_HDR`).
pub const MAX_HDR: usize = 80;
/// Ethernet and the test payload around the IP and UDP headers.
const ETH_LEN: usize = 14;
const VLAN_LEN: usize = 4;
const UDP_LEN: usize = 8;

/// `struct size_tmpl` in crates/io/bpf/xdpgen.c.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct SizeTmpl {
    pub len: u16,
    pub ip_csum: u16,
    pub udp_csum: u16,
    pub l3_len: u16,
}

/// `struct cfg` in crates/io/bpf/xdpgen.c, the program's `.rodata`.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct Cfg {
    pub tx_ifindex: u32,
    pub v6: u32,
    pub l3: u32,
    pub random: u32,
    pub nflows: u32,
    pub nsport: u32,
    pub nsaddr: u32,
    pub ndport: u32,
    pub ndaddr: u32,
    pub sport0: u32,
    pub dport0: u32,
    pub saddr0: [u32; 4],
    pub daddr0: [u32; 4],
    pub nsizes: u32,
    pub npattern: u32,
    pub ts_every: u32,
    pub hdr_len: u32,
    /// 1: RFC 4814 ports, drawn per frame from the CPU's `port_rng`.
    pub rfc4814: u32,
    pub sizes: [SizeTmpl; MAX_SIZES],
    pub hdr: Hdr,
}

/// The header template, 8-byte aligned as in the C struct.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug)]
pub struct Hdr(pub [u8; MAX_HDR]);

impl Default for Hdr {
    fn default() -> Self {
        Hdr([0; MAX_HDR])
    }
}

// SAFETY: plain old data: integers and byte arrays only, with explicit
// padding fields, so every bit pattern is valid and none is uninitialised.
unsafe impl aya::Pod for Cfg {}

/// Everything the program needs besides the per-CPU state.
#[derive(Clone, Debug)]
pub struct Templates {
    pub cfg: Cfg,
    /// The largest size's frame with every per-frame field zero:
    /// BPF_PROG_RUN's `data_in`.
    pub data_in: Vec<u8>,
    /// The size pattern as indices into `cfg.sizes`.
    pub pattern: Vec<u32>,
    /// Random order: the flow index at each position of the global order.
    pub flow_table: Option<Vec<u32>>,
    /// RFC 4814 ports: the seed each CPU's port generator starts from.
    pub rfc4814_seed: Option<u64>,
}

fn words(x: u128) -> [u32; 4] {
    [
        (x >> 96) as u32,
        (x >> 64) as u32,
        (x >> 32) as u32,
        x as u32,
    ]
}

/// The generator's configuration for `spec` sending on interface `tx_ifindex`.
/// Fails (a usage error) for mixes the program cannot hold.
pub fn build(spec: &FrameSpec, tx_ifindex: u32) -> Result<Templates, IoError> {
    spec.validate()
        .map_err(|e| IoError::XdpSetting(e.to_string()))?;
    let flows = &spec.flows;
    let v6 = flows.family() == Family::Inet6;
    let l3 = ETH_LEN + if spec.vlan.is_some() { VLAN_LEN } else { 0 };
    let l4 = l3 + if v6 { 40 } else { 20 };
    let hdr_len = l4 + UDP_LEN + PAYLOAD_LEN;
    let sizes = spec.sizes.distinct();
    if sizes.len() > MAX_SIZES {
        return Err(IoError::XdpSetting(format!(
            "{} distinct frame sizes: --io xdp holds at most {MAX_SIZES}",
            sizes.len()
        )));
    }
    let pattern_len = spec.sizes.pattern().len();
    if pattern_len > MAX_PATTERN {
        return Err(IoError::XdpSetting(format!(
            "a size mix of {pattern_len} frames per cycle: --io xdp holds at most {MAX_PATTERN}"
        )));
    }
    let (src, dst) = (flows.src(), flows.dst());
    let mut cfg = Cfg {
        tx_ifindex,
        v6: u32::from(v6),
        l3: l3 as u32,
        random: u32::from(matches!(spec.order, FlowOrder::Random { .. })),
        nflows: flows.count(),
        nsport: src.ports.count(),
        // Each factor of the flow count is at most MAX_FLOWS (2^24).
        nsaddr: src.addrs.count() as u32,
        ndport: dst.ports.count(),
        ndaddr: dst.addrs.count() as u32,
        sport0: u32::from(src.ports.start),
        dport0: u32::from(dst.ports.start),
        saddr0: words(src.addrs.start_raw()),
        daddr0: words(dst.addrs.start_raw()),
        nsizes: sizes.len() as u32,
        npattern: pattern_len as u32,
        hdr_len: hdr_len as u32,
        rfc4814: u32::from(spec.ports != PortMode::Ranges),
        ..Default::default()
    };
    let mut data_in = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let one = FrameSpec {
            sizes: SizeMix::single(size).map_err(|e| IoError::XdpSetting(e.to_string()))?,
            order: FlowOrder::Sequential,
            ..spec.clone()
        };
        let mut g =
            FrameGen::try_new(&one, 0, 1).map_err(|e| IoError::XdpSetting(e.to_string()))?;
        let mut buf = vec![0u8; g.max_len()];
        let len = g.write_next(&mut buf, 0, 0);
        let f = &mut buf[..len];
        // Zero what the program writes per frame, then recompute the
        // checksums of that zeroed frame.
        if v6 {
            f[l3 + 8..l3 + 40].fill(0);
        } else {
            f[l3 + 10..l3 + 20].fill(0); // checksum, source, destination
            let c = checksum::ipv4_header_checksum(&f[l3..l3 + 20]);
            f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
        }
        f[l4..l4 + 4].fill(0); // ports
        f[l4 + 6..l4 + 8].fill(0); // UDP checksum
        f[l4 + UDP_LEN + 2..hdr_len].fill(0); // stream, seq, ts
        let udp_len = (len - l4) as u16;
        let udp_csum = checksum::finish(
            u64::from(PROTO_UDP) + u64::from(udp_len) + checksum::sum_bytes(&f[l4..]),
        );
        let ip_csum = if v6 {
            0
        } else {
            u16::from_be_bytes([f[l3 + 10], f[l3 + 11]])
        };
        let l3_len = if v6 { len - l3 - 40 } else { len - l3 } as u16;
        cfg.sizes[i] = SizeTmpl {
            len: len as u16,
            ip_csum,
            udp_csum,
            l3_len,
        };
        if i == sizes.len() - 1 {
            data_in = f.to_vec();
            cfg.hdr.0[..hdr_len].copy_from_slice(&f[..hdr_len]);
        }
    }
    let pattern = spec
        .sizes
        .pattern()
        .iter()
        .map(|s| sizes.binary_search(s).map(|i| i as u32))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| IoError::Other("a pattern size is not among the distinct sizes".into()))?;
    // The wire crate's permutation, position by position: one thread
    // owning every position visits them in order.
    let flow_table = matches!(spec.order, FlowOrder::Random { .. }).then(|| {
        let mut c = FlowCursor::new(flows, spec.order, 0, 1);
        (0..flows.count()).map(|_| c.next()).collect()
    });
    Ok(Templates {
        cfg,
        data_in,
        pattern,
        flow_table,
        rfc4814_seed: match spec.ports {
            PortMode::Ranges => None,
            PortMode::Rfc4814 { seed } => Some(seed),
        },
    })
}

/// Odometer digits of flow index `i` (source port fastest), as the program
/// keeps them.
pub fn digits(cfg: &Cfg, i: u32) -> [u32; 4] {
    let mut r = i;
    let sport = r % cfg.nsport;
    r /= cfg.nsport;
    let saddr = r % cfg.nsaddr;
    r /= cfg.nsaddr;
    let dport = r % cfg.ndport;
    r /= cfg.ndport;
    [sport, saddr, dport, r]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_wire::{FlowSet, MacAddr};

    fn spec(family: Family, sizes: &str, vlan: Option<u16>) -> FrameSpec {
        FrameSpec {
            src_mac: MacAddr([2, 0, 0, 0, 0, 1]),
            dst_mac: MacAddr([2, 0, 0, 0, 0, 2]),
            vlan,
            ttl: 64,
            flows: FlowSet::lab(family),
            order: FlowOrder::Sequential,
            sizes: sizes.parse().unwrap(),
            ports: pktlab_wire::PortMode::Ranges,
        }
    }

    // The program patching this template is tested itself, run by the
    // kernel (BPF_PROG_TEST_RUN) on dirty pages and compared byte for byte
    // with FrameGen, in crates/io/tests/xdpgen.rs.

    #[test]
    fn layout_and_limits() {
        let t = build(&spec(Family::Inet6, "84", Some(9)), 5).unwrap();
        assert_eq!((t.cfg.l3, t.cfg.hdr_len, t.cfg.v6), (18, 80, 1));
        assert_eq!((t.cfg.nflows, t.cfg.nsaddr, t.cfg.ndaddr), (2000, 20, 100));
        assert!(t.flow_table.is_none());
        let t = build(&spec(Family::Inet4, "64", None), 5).unwrap();
        assert_eq!((t.cfg.l3, t.cfg.hdr_len, t.data_in.len()), (14, 56, 60));
        assert_eq!(digits(&t.cfg, 1999), [0, 19, 0, 99]);
        let many: String = (0..17).map(|i| format!("{},", 64 + i)).collect();
        let e = build(&spec(Family::Inet4, many.trim_end_matches(','), None), 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "17 distinct frame sizes: --io xdp holds at most 16"
        );
        assert!(e.is_usage());
        let e = build(&spec(Family::Inet4, "64:4096,128:1", None), 5).unwrap_err();
        assert!(e.to_string().contains("4097 frames per cycle"), "{e}");
    }

    #[test]
    fn random_order_table_is_the_wire_permutation() {
        let mut s = spec(Family::Inet4, "64", None);
        s.order = FlowOrder::Random { seed: 5 };
        let t = build(&s, 1).unwrap();
        let table = t.flow_table.unwrap();
        assert_eq!(t.cfg.random, 1);
        let mut c = FlowCursor::new(&s.flows, s.order, 1, 3);
        let want: Vec<u32> = (0..c.flows_owned()).map(|_| c.next()).collect();
        let got: Vec<u32> = table.iter().skip(1).step_by(3).copied().collect();
        assert_eq!(got, want);
    }
}
