//! Frame templates and the generator's hot path.
//!
//! [`FrameGen`] builds, once, one template per distinct frame size: Ethernet
//! (+ 802.1Q) + IPv4 (DF, id 0) or IPv6 (flow label 0) + UDP + test payload +
//! fill, with every per-frame field (addresses, ports, stream, sequence,
//! timestamp) zero and the checksums of that zeroed frame precomputed. Each
//! [`FrameGen::write_next`] then copies the template's headers, patches the
//! per-frame fields and finishes both checksums with RFC 1624's incremental
//! update: with the fields zero in the template, eqn. 3 `HC' = ~(~HC + ~m + m')`
//! reduces to `~(~HC + m')`, a handful of additions instead of a sum over the
//! frame. Nothing is allocated, parsed or formatted per frame.

use crate::checksum::{self, sum_u128_words, sum_u64_words, PROTO_UDP};
use crate::ethernet::{self, ethertype, VlanTag};
use crate::flow::{FlowCursor, FlowOrder, FlowSet};
use crate::payload::{TestPayload, MAGIC, PAYLOAD_LEN};
use crate::range::Family;
use crate::rfc4814::{PortMode, PortRng};
use crate::size::{SizeMix, FCS_LEN, MIN_FRAME_SIZE};
use crate::{ipv4, ipv6, udp, MacAddr, WireError};

/// What the generator sends.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpec {
    pub src_mac: MacAddr,
    pub dst_mac: MacAddr,
    /// An 802.1Q tag with this VLAN id (1-4094), priority 0.
    pub vlan: Option<u16>,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    pub flows: FlowSet,
    pub order: FlowOrder,
    pub sizes: SizeMix,
    /// The ranges' ports, or RFC 4814's pseudorandom ones per frame (then
    /// a flow, and a stream, is an address pair).
    pub ports: PortMode,
}

impl FrameSpec {
    /// Checks what the types cannot: VLAN id 1..=4094, TTL ≥ 1, a unicast
    /// source MAC, and every size at least [`min_frame_size`].
    pub fn validate(&self) -> Result<(), WireError> {
        if let Some(vid) = self.vlan {
            if vid == 0 || vid >= 4095 {
                return Err(WireError::InvalidVlan(vid));
            }
        }
        if self.ttl == 0 {
            return Err(WireError::InvalidTtl(0));
        }
        if self.src_mac.is_multicast() {
            return Err(WireError::Invalid(format!(
                "source MAC {} is a multicast address",
                self.src_mac
            )));
        }
        self.validate_ports()?;
        let family = self.flows.family();
        let min = min_frame_size(family, self.vlan.is_some());
        if self.sizes.min() < min {
            return Err(WireError::FrameSizeTooSmall {
                size: self.sizes.min(),
                family: family.name(),
                vlan: if self.vlan.is_some() {
                    " with a VLAN tag"
                } else {
                    ""
                },
                min,
                payload: PAYLOAD_LEN,
            });
        }
        Ok(())
    }

    /// With RFC 4814 ports each range has one port (its flows are address
    /// pairs): a port range would only multiply the streams.
    fn validate_ports(&self) -> Result<(), WireError> {
        if self.ports == PortMode::Ranges {
            return Ok(());
        }
        for (what, range) in [
            ("source", self.flows.src()),
            ("destination", self.flows.dst()),
        ] {
            if range.ports.count() > 1 {
                return Err(WireError::Invalid(format!(
                    "the {what} range '{range}' has {} ports, but RFC 4814 ports are drawn per frame: give one port or none",
                    range.ports.count()
                )));
            }
        }
        Ok(())
    }

    /// Checks that `nthreads` TX threads can each own at least one flow.
    pub fn validate_threads(&self, nthreads: u32) -> Result<(), WireError> {
        if nthreads == 0 || nthreads > self.flows.count() {
            return Err(WireError::TooFewFlows {
                threads: nthreads,
                flows: self.flows.count(),
            });
        }
        Ok(())
    }
}

/// The smallest frame (FCS included) that holds the headers and the test
/// payload: IPv4 64 (with or without a VLAN tag), IPv6 80, IPv6 + VLAN 84.
pub fn min_frame_size(family: Family, vlan: bool) -> u16 {
    let layout = Layout::new(family, vlan);
    (layout.header_end as u16 + FCS_LEN).max(MIN_FRAME_SIZE)
}

/// The byte at frame offset `offset` after the test payload. It depends on
/// the offset only, not on the frame's size, so a slot that held a longer
/// frame of the same generator already holds the right fill.
#[inline(always)]
pub fn fill_byte(offset: usize) -> u8 {
    offset as u8
}

/// Where the headers sit; the same for every size of one generator.
#[derive(Debug, Clone, Copy)]
struct Layout {
    family: Family,
    /// Start of the IP header.
    l3: usize,
    /// Start of the UDP header.
    l4: usize,
    /// Start of the test payload.
    payload: usize,
    /// End of the test payload: the fill starts here.
    header_end: usize,
}

impl Layout {
    fn new(family: Family, vlan: bool) -> Layout {
        let l3 = ethernet::HEADER_LEN + if vlan { ethernet::VLAN_TAG_LEN } else { 0 };
        let ip_len = match family {
            Family::Inet4 => ipv4::HEADER_LEN,
            Family::Inet6 => ipv6::HEADER_LEN,
        };
        let l4 = l3 + ip_len;
        let payload = l4 + udp::HEADER_LEN;
        Layout {
            family,
            l3,
            l4,
            payload,
            header_end: payload + PAYLOAD_LEN,
        }
    }
}

/// One frame size, ready to copy.
#[derive(Debug, Clone)]
struct Template {
    /// The whole frame without FCS, per-frame fields zero.
    bytes: Vec<u8>,
    /// The IPv4 header checksum of `bytes` (unused for IPv6).
    ip_checksum: u16,
    /// The UDP checksum of `bytes` with zero addresses in the pseudo-header,
    /// before UDP's 0 → 0xffff rule.
    udp_checksum: u16,
}

impl Template {
    fn new(spec: &FrameSpec, layout: &Layout, size: u16) -> Template {
        let len = usize::from(size - FCS_LEN);
        let mut bytes = vec![0u8; len];
        let l3_type = match layout.family {
            Family::Inet4 => ethertype::IPV4,
            Family::Inet6 => ethertype::IPV6,
        };
        let mut eth = ethernet::Frame::new_checked(&mut bytes[..]).expect("frame ≥ 64 bytes");
        eth.set_dst(spec.dst_mac);
        eth.set_src(spec.src_mac);
        match spec.vlan {
            Some(vid) => {
                eth.set_ethertype(ethertype::VLAN);
                let mut tag = VlanTag::new_checked(eth.payload_mut()).expect("room for the tag");
                tag.set_tci(vid);
                tag.set_inner_ethertype(l3_type);
            }
            None => eth.set_ethertype(l3_type),
        }
        let udp_len = (len - layout.l4) as u16;
        let mut ip_checksum = 0;
        match layout.family {
            Family::Inet4 => {
                let mut ip = ipv4::Packet::new_unchecked_mut(&mut bytes[layout.l3..]);
                ip.set_version_and_header_len(ipv4::HEADER_LEN);
                ip.set_total_len((len - layout.l3) as u16);
                ip.set_flags_frag(ipv4::FLAG_DF);
                ip.set_ttl(spec.ttl);
                ip.set_protocol(PROTO_UDP);
                ip.fill_checksum();
                ip_checksum = ip.checksum();
            }
            Family::Inet6 => {
                let mut ip = ipv6::Packet::new_unchecked_mut(&mut bytes[layout.l3..]);
                ip.set_version_tc_flow(0, 0);
                ip.set_payload_len(udp_len);
                ip.set_next_header(PROTO_UDP);
                ip.set_hop_limit(spec.ttl);
            }
        }
        udp::Packet::new_unchecked_mut(&mut bytes[layout.l4..]).set_len(udp_len);
        bytes[layout.payload..layout.payload + 2].copy_from_slice(&MAGIC.to_be_bytes());
        for (offset, byte) in bytes.iter_mut().enumerate().skip(layout.header_end) {
            *byte = fill_byte(offset);
        }
        // Pseudo-header with zero addresses: protocol and length (the same
        // words for IPv4 and IPv6 while the length fits 16 bits).
        let pseudo = u64::from(PROTO_UDP) + u64::from(udp_len);
        let udp_checksum = checksum::finish(pseudo + checksum::sum_bytes(&bytes[layout.l4..]));
        Template {
            bytes,
            ip_checksum,
            udp_checksum,
        }
    }
}

/// Writes the frames of one TX thread.
///
/// Frames follow the thread's [`FlowCursor`] and the size pattern of the
/// [`SizeMix`]; each flow has its own sequence number, from 0. Deterministic:
/// the same spec, thread and thread count give the same bytes, apart from the
/// timestamps passed in.
#[derive(Debug, Clone)]
pub struct FrameGen {
    layout: Layout,
    flows: FlowSet,
    cursor: FlowCursor,
    templates: Vec<Template>,
    /// The size pattern as indices into `templates`.
    pattern: Vec<u16>,
    pattern_pos: usize,
    /// Next sequence number of each flow this thread owns, by cursor slot.
    seqs: Vec<u32>,
    max_len: usize,
    /// RFC 4814 ports: this thread's generator.
    port_rng: Option<PortRng>,
}

impl FrameGen {
    /// The generator of thread `thread` (0-based) of `nthreads`.
    ///
    /// Panics if `spec` fails [`FrameSpec::validate`] or
    /// [`FrameSpec::validate_threads`], or if `thread >= nthreads`; use
    /// [`FrameGen::try_new`] to get the error instead.
    pub fn new(spec: &FrameSpec, thread: u32, nthreads: u32) -> FrameGen {
        FrameGen::try_new(spec, thread, nthreads)
            .unwrap_or_else(|e| panic!("invalid frame spec: {e}"))
    }

    /// [`FrameGen::new`] that returns validation errors.
    pub fn try_new(spec: &FrameSpec, thread: u32, nthreads: u32) -> Result<FrameGen, WireError> {
        spec.validate()?;
        spec.validate_threads(nthreads)?;
        assert!(thread < nthreads, "thread {thread} of {nthreads}");
        let layout = Layout::new(spec.flows.family(), spec.vlan.is_some());
        let sizes = spec.sizes.distinct();
        let templates: Vec<Template> = sizes
            .iter()
            .map(|&s| Template::new(spec, &layout, s))
            .collect();
        let pattern = spec
            .sizes
            .pattern()
            .iter()
            .map(|s| {
                sizes
                    .binary_search(s)
                    .expect("pattern sizes are distinct sizes") as u16
            })
            .collect();
        let cursor = FlowCursor::new(&spec.flows, spec.order, thread, nthreads);
        Ok(FrameGen {
            layout,
            flows: spec.flows.clone(),
            seqs: vec![0; cursor.flows_owned() as usize],
            cursor,
            max_len: templates
                .iter()
                .map(|t| t.bytes.len())
                .max()
                .expect("a size"),
            templates,
            pattern,
            pattern_pos: 0,
            port_rng: match spec.ports {
                PortMode::Ranges => None,
                PortMode::Rfc4814 { seed } => Some(PortRng::new(seed, thread)),
            },
        })
    }

    /// Writes the next frame (without FCS) into `buf[..len]` and returns `len`.
    ///
    /// `buf[..prev_len]` must hold the frame this generator last wrote into
    /// this same buffer, or `prev_len` be 0 (unknown or fresh). The headers
    /// and payload are always written; the fill after them only where
    /// `prev_len` does not already cover it. `ts_realtime_ns` is the
    /// CLOCK_REALTIME time to stamp, in nanoseconds.
    ///
    /// Panics if `buf` is shorter than the frame; a buffer of at least
    /// [`FrameGen::max_len`] bytes always suffices.
    #[inline]
    pub fn write_next(&mut self, buf: &mut [u8], prev_len: usize, ts_realtime_ns: u64) -> usize {
        // One copy of the body per header layout, so that every offset and
        // the header copy's length are constants (no memcpy call).
        const V4: usize = ethernet::HEADER_LEN;
        const V4_VLAN: usize = V4 + ethernet::VLAN_TAG_LEN;
        match (self.layout.family, self.layout.l3) {
            (Family::Inet4, V4) => self.write::<false, V4>(buf, prev_len, ts_realtime_ns),
            (Family::Inet4, V4_VLAN) => self.write::<false, V4_VLAN>(buf, prev_len, ts_realtime_ns),
            (Family::Inet6, V4) => self.write::<true, V4>(buf, prev_len, ts_realtime_ns),
            (Family::Inet6, V4_VLAN) => self.write::<true, V4_VLAN>(buf, prev_len, ts_realtime_ns),
            _ => unreachable!("the IP header starts after 0 or 1 VLAN tag"),
        }
    }

    /// [`FrameGen::write_next`] for IPv6 or IPv4 headers at offset `L3`.
    #[inline(always)]
    fn write<const V6: bool, const L3: usize>(
        &mut self,
        buf: &mut [u8],
        prev_len: usize,
        ts_realtime_ns: u64,
    ) -> usize {
        let l4 = L3
            + if V6 {
                ipv6::HEADER_LEN
            } else {
                ipv4::HEADER_LEN
            };
        let payload_at = l4 + udp::HEADER_LEN;
        let header_end = payload_at + PAYLOAD_LEN;
        debug_assert_eq!(header_end, self.layout.header_end);

        let template = &self.templates[usize::from(self.pattern[self.pattern_pos])];
        self.pattern_pos += 1;
        if self.pattern_pos == self.pattern.len() {
            self.pattern_pos = 0;
        }
        let len = template.bytes.len();
        let frame = &mut buf[..len];
        frame[..header_end].copy_from_slice(&template.bytes[..header_end]);
        if prev_len < len {
            let from = prev_len.max(header_end);
            frame[from..].copy_from_slice(&template.bytes[from..]);
        }

        let (slot, index) = self.cursor.next_slot();
        let seq_slot = &mut self.seqs[slot as usize];
        let seq = *seq_slot;
        *seq_slot = seq.wrapping_add(1);
        let flow = self.flows.flow_raw(index);

        let addr_sum = if V6 {
            let src = L3 + ipv6::field::SRC.start;
            let dst = L3 + ipv6::field::DST.start;
            frame[src..src + 16].copy_from_slice(&flow.src.to_be_bytes());
            frame[dst..dst + 16].copy_from_slice(&flow.dst.to_be_bytes());
            sum_u128_words(flow.src) + sum_u128_words(flow.dst)
        } else {
            // Source and destination are adjacent: one 8-byte store.
            let addrs = (flow.src as u64) << 32 | (flow.dst as u64 & 0xffff_ffff);
            let at = L3 + ipv4::field::SRC.start;
            frame[at..at + 8].copy_from_slice(&addrs.to_be_bytes());
            let addr_sum = sum_u64_words(addrs);
            let ip_checksum = checksum::update_from_zero(template.ip_checksum, addr_sum);
            let at = L3 + ipv4::field::CHECKSUM.start;
            frame[at..at + 2].copy_from_slice(&ip_checksum.to_be_bytes());
            addr_sum
        };

        let (sport, dport) = match &mut self.port_rng {
            None => (flow.sport, flow.dport),
            Some(rng) => rng.next_ports(),
        };
        let ports = (u32::from(sport) << 16) | u32::from(dport);
        frame[l4..l4 + 4].copy_from_slice(&ports.to_be_bytes());
        let payload = TestPayload::new(index, seq, ts_realtime_ns).variable_value();
        frame[payload_at + 2..header_end].copy_from_slice(&payload.to_be_bytes()[4..]);

        let new_words = addr_sum + sum_u64_words(u64::from(ports)) + sum_u128_words(payload);
        let udp_checksum = match checksum::update_from_zero(template.udp_checksum, new_words) {
            0 => 0xffff,
            c => c,
        };
        let at = l4 + udp::field::CHECKSUM.start;
        frame[at..at + 2].copy_from_slice(&udp_checksum.to_be_bytes());
        len
    }

    /// The longest frame (without FCS) this generator writes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The length (without FCS) of the frame the next `write_next` writes.
    pub fn next_len(&self) -> usize {
        self.templates[usize::from(self.pattern[self.pattern_pos])]
            .bytes
            .len()
    }

    /// Frames until the (flow, size) sequence repeats: the lcm of the size
    /// pattern's length and the number of flows this thread owns (RFC 4814
    /// ports do not repeat with it).
    pub fn frames_per_cycle(&self) -> u64 {
        let (a, b) = (
            self.pattern.len() as u64,
            u64::from(self.cursor.flows_owned()),
        );
        a / gcd(a, b) * b
    }

    /// Frames per cycle of the size pattern: counts that are multiples of it
    /// hold the mix's proportions exactly.
    pub fn sizes_per_cycle(&self) -> usize {
        self.pattern.len()
    }

    /// How many flows this thread sends.
    pub fn flows_owned(&self) -> u32 {
        self.cursor.flows_owned()
    }

    /// The flows this generator's thread shares with the others.
    pub fn flows(&self) -> &FlowSet {
        &self.flows
    }

    /// Bytes of Ethernet, IP and UDP headers and the test payload.
    pub fn header_len(&self) -> usize {
        self.layout.header_end
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::range::EndpointRange;

    /// The first frame of the lab's IPv4 flows at 64 bytes (198.18.10.1:2000
    /// → 198.19.10.1:2000, stream 0, seq 0, TX time 0x0123456789), built
    /// independently by a script from RFC 791/768.
    pub(crate) const LAB_V4_64: [u8; 60] = [
        0x00, 0x1b, 0x21, 0xc4, 0x95, 0x7a, 0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11, 0x08, 0x00, 0x45,
        0x00, 0x00, 0x2e, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x9a, 0x97, 0xc6, 0x12, 0x0a, 0x01,
        0xc6, 0x13, 0x0a, 0x01, 0x07, 0xd0, 0x07, 0xd0, 0x00, 0x1a, 0x02, 0x62, 0x50, 0x4c, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0x38, 0x39, 0x3a, 0x3b,
    ];

    /// The same for IPv6 with VLAN 100 at the smallest size, 84 bytes.
    const LAB_V6_VLAN_84: [u8; 80] = [
        0x00, 0x1b, 0x21, 0xc4, 0x95, 0x7a, 0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11, 0x81, 0x00, 0x00,
        0x64, 0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x16, 0x11, 0x40, 0x20, 0x01, 0x00, 0x02,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x01, 0x00,
        0x02, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x07, 0xd0,
        0x07, 0xd0, 0x00, 0x16, 0x54, 0xfe, 0x50, 0x4c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x23, 0x45, 0x67, 0x89,
    ];

    pub(crate) fn spec(family: Family, sizes: &str) -> FrameSpec {
        FrameSpec {
            src_mac: "0c:c4:7a:da:3c:11".parse().unwrap(),
            dst_mac: "00:1b:21:c4:95:7a".parse().unwrap(),
            vlan: None,
            ttl: 64,
            flows: FlowSet::lab(family),
            order: FlowOrder::Sequential,
            sizes: sizes.parse().unwrap(),
            ports: PortMode::Ranges,
        }
    }

    #[test]
    fn first_frames_match_independent_bytes() {
        let mut buf = [0u8; 128];
        let mut g = FrameGen::new(&spec(Family::Inet4, "64"), 0, 1);
        assert_eq!((g.next_len(), g.max_len(), g.header_len()), (60, 60, 56));
        assert_eq!(g.write_next(&mut buf, 0, 0x0123456789), 60);
        assert_eq!(buf[..60], LAB_V4_64);

        let mut s = spec(Family::Inet6, "84");
        s.vlan = Some(100);
        let mut g = FrameGen::new(&s, 0, 1);
        let mut buf = [0xeeu8; 80];
        assert_eq!(g.write_next(&mut buf, 0, 0x0123456789), 80);
        assert_eq!(buf, LAB_V6_VLAN_84);
    }

    #[test]
    fn minimum_sizes() {
        assert_eq!(min_frame_size(Family::Inet4, false), 64);
        assert_eq!(min_frame_size(Family::Inet4, true), 64);
        assert_eq!(min_frame_size(Family::Inet6, false), 80);
        assert_eq!(min_frame_size(Family::Inet6, true), 84);
    }

    #[test]
    fn validation_errors() {
        let ok = spec(Family::Inet4, "64");
        assert_eq!(ok.validate(), Ok(()));
        let mut s = ok.clone();
        s.vlan = Some(0);
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "VLAN id 0 is not between 1 and 4094"
        );
        s.vlan = Some(4095);
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "VLAN id 4095 is not between 1 and 4094"
        );
        s.vlan = Some(4094);
        assert_eq!(s.validate(), Ok(()));
        let mut s = ok.clone();
        s.ttl = 0;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "TTL 0 is not between 1 and 255"
        );
        let mut s = ok.clone();
        s.src_mac = MacAddr::BROADCAST;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "source MAC ff:ff:ff:ff:ff:ff is a multicast address"
        );
        let s = spec(Family::Inet6, "imix");
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "frame size 64 is too small for IPv6: the smallest is 80 bytes (headers, the 14-byte test payload and the FCS)"
        );
        let mut s = spec(Family::Inet6, "80");
        assert_eq!(s.validate(), Ok(()));
        s.vlan = Some(7);
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "frame size 80 is too small for IPv6 with a VLAN tag: the smallest is 84 bytes (headers, the 14-byte test payload and the FCS)"
        );
        let few = FrameSpec {
            flows: FlowSet::new(
                "10.0.0.1".parse().unwrap(),
                "10.1.0.1-10.1.0.2".parse().unwrap(),
            )
            .unwrap(),
            ..ok.clone()
        };
        assert_eq!(few.validate_threads(2), Ok(()));
        assert_eq!(
            few.validate_threads(3).unwrap_err().to_string(),
            "3 threads need at least 3 flows, but the ranges give 2: each thread sends its own flows"
        );
        assert!(FrameGen::try_new(&few, 0, 3).is_err());
        assert!(FrameGen::try_new(&few, 1, 2).is_ok());
    }

    #[test]
    fn one_thread_sends_every_flow_in_order_with_per_flow_sequences() {
        let flows = FlowSet::new(
            "10.0.0.1:100-10.0.0.2:101"
                .parse::<EndpointRange>()
                .unwrap(),
            "10.1.0.1-10.1.0.3".parse().unwrap(),
        )
        .unwrap();
        let s = FrameSpec {
            flows: flows.clone(),
            ..spec(Family::Inet4, "64")
        };
        let mut g = FrameGen::new(&s, 0, 1);
        assert_eq!(g.frames_per_cycle(), 12);
        let mut buf = vec![0u8; g.max_len()];
        let mut prev = 0;
        for k in 0..5u32 {
            for f in 0..12u32 {
                prev = g.write_next(&mut buf, prev, 1000);
                let t = crate::parse::parse_test_frame(&buf[..prev]).unwrap();
                assert_eq!(
                    (t.payload.stream, t.payload.seq, t.payload.ts40),
                    (f, k, 1000)
                );
                assert_eq!(t.key, crate::parse::FlowKey::from_flow(&flows.flow(f)));
            }
        }
    }

    #[test]
    fn patching_in_place_equals_writing_fresh() {
        for (family, sizes, vlan) in [
            (Family::Inet4, "imix", None),
            (Family::Inet4, "1518:1,64:3,9018:1,128:2", Some(3)),
            (Family::Inet6, "80,1518,84,9018", None),
            (Family::Inet6, "gdfce", Some(4094)),
        ] {
            let mut s = spec(family, sizes);
            s.vlan = vlan;
            s.order = FlowOrder::Random { seed: 9 };
            let mut patched = FrameGen::new(&s, 1, 2);
            let mut fresh = FrameGen::new(&s, 1, 2);
            // Seven reused slots, as in a TX ring, and one fresh buffer.
            let mut slots = vec![(vec![0u8; patched.max_len()], 0usize); 7];
            for i in 0..500u64 {
                let (slot, prev) = &mut slots[(i % 7) as usize];
                let ts = i * 1_000_003;
                let len = patched.write_next(slot, *prev, ts);
                *prev = len;
                let mut zeroed = vec![0u8; fresh.max_len()];
                assert_eq!(fresh.write_next(&mut zeroed, 0, ts), len);
                assert_eq!(slot[..len], zeroed[..len], "{sizes} frame {i}");
                // prev_len 0 over garbage rewrites everything.
                let mut garbage = vec![0xa5u8; patched.max_len()];
                let mut twin = fresh.clone();
                let mut again = fresh.clone();
                let l2 = twin.write_next(&mut garbage, 0, ts);
                let mut clean = vec![0u8; l2];
                again.write_next(&mut clean, 0, ts);
                assert_eq!(garbage[..l2], clean[..]);
            }
        }
    }

    #[test]
    fn deterministic() {
        let mut s = spec(Family::Inet6, "80:3,200:1");
        s.order = FlowOrder::Random { seed: 42 };
        let mut a = FrameGen::new(&s, 2, 3);
        let mut b = FrameGen::new(&s, 2, 3);
        let (mut fa, mut fb) = (vec![0u8; a.max_len()], vec![0u8; b.max_len()]);
        for i in 0..3000 {
            let la = a.write_next(&mut fa, 0, i);
            let lb = b.write_next(&mut fb, 0, i);
            assert_eq!(fa[..la], fb[..lb]);
        }
    }

    #[test]
    fn sizes_follow_the_pattern() {
        let s = spec(Family::Inet4, "imix");
        let mut g = FrameGen::new(&s, 0, 1);
        assert_eq!((g.sizes_per_cycle(), g.frames_per_cycle()), (12, 6000));
        let mut buf = vec![0u8; g.max_len()];
        let want: Vec<usize> = s
            .sizes
            .pattern()
            .iter()
            .map(|&s| usize::from(s) - 4)
            .collect();
        for round in 0..3 {
            for (i, &len) in want.iter().enumerate() {
                assert_eq!(g.next_len(), len, "round {round} frame {i}");
                assert_eq!(g.write_next(&mut buf, 0, 0), len);
            }
        }
    }

    #[test]
    #[should_panic]
    fn short_buffer_panics() {
        let mut g = FrameGen::new(&spec(Family::Inet4, "128"), 0, 1);
        let mut buf = [0u8; 100];
        g.write_next(&mut buf, 0, 0);
    }
}
