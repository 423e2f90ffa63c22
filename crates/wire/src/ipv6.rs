//! IPv6 fixed headers (RFC 8200).

use std::net::Ipv6Addr;
use std::ops::Range;

/// The fixed header.
pub const HEADER_LEN: usize = 40;

pub(crate) mod field {
    use super::Range;
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    pub const PAYLOAD_LEN: Range<usize> = 4..6;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Range<usize> = 8..24;
    pub const DST: Range<usize> = 24..40;
}

/// A typed view of an IPv6 packet.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view of `buffer` if it holds the fixed header.
    pub fn new_checked(buffer: T) -> Option<Packet<T>> {
        (buffer.as_ref().len() >= HEADER_LEN).then_some(Packet { buffer })
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn ver_tc_flow(&self) -> u32 {
        u32::from_be_bytes(
            self.bytes()[field::VER_TC_FLOW]
                .try_into()
                .expect("4 bytes"),
        )
    }

    pub fn version(&self) -> u8 {
        (self.ver_tc_flow() >> 28) as u8
    }

    pub fn traffic_class(&self) -> u8 {
        (self.ver_tc_flow() >> 20) as u8
    }

    pub fn flow_label(&self) -> u32 {
        self.ver_tc_flow() & 0x000f_ffff
    }

    pub fn payload_len(&self) -> u16 {
        u16::from_be_bytes([self.bytes()[4], self.bytes()[5]])
    }

    pub fn next_header(&self) -> u8 {
        self.bytes()[field::NEXT_HEADER]
    }

    pub fn hop_limit(&self) -> u8 {
        self.bytes()[field::HOP_LIMIT]
    }

    pub fn src(&self) -> Ipv6Addr {
        Ipv6Addr::from(<[u8; 16]>::try_from(&self.bytes()[field::SRC]).expect("16 bytes"))
    }

    pub fn dst(&self) -> Ipv6Addr {
        Ipv6Addr::from(<[u8; 16]>::try_from(&self.bytes()[field::DST]).expect("16 bytes"))
    }

    /// The payload: up to the payload length, or the end of the buffer if
    /// that comes first (a truncated capture).
    pub fn payload(&self) -> &[u8] {
        let end = (HEADER_LEN + usize::from(self.payload_len())).min(self.bytes().len());
        &self.bytes()[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// A view for building a header in `buffer` (at least 40 bytes).
    pub fn new_unchecked_mut(buffer: T) -> Packet<T> {
        assert!(
            buffer.as_ref().len() >= HEADER_LEN,
            "an IPv6 header needs 40 bytes"
        );
        Packet { buffer }
    }

    /// Version 6 with a traffic class and flow label.
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        let word = (6u32 << 28) | (u32::from(traffic_class) << 20) | (flow_label & 0x000f_ffff);
        self.buffer.as_mut()[field::VER_TC_FLOW].copy_from_slice(&word.to_be_bytes());
    }

    pub fn set_payload_len(&mut self, len: u16) {
        self.buffer.as_mut()[field::PAYLOAD_LEN].copy_from_slice(&len.to_be_bytes());
    }

    pub fn set_next_header(&mut self, next: u8) {
        self.buffer.as_mut()[field::NEXT_HEADER] = next;
    }

    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = hop_limit;
    }

    pub fn set_src(&mut self, addr: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.octets());
    }

    pub fn set_dst(&mut self, addr: Ipv6Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.octets());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of a UDP datagram 2001:2::1 → 2001:2:0:8000::1, hop limit 64,
    /// traffic class 0xb8 (DSCP EF), flow label 0x12345, 22 bytes of payload.
    const HEADER: [u8; 40] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x16, 0x11, 0x40, 0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x20, 0x01, 0x00, 0x02, 0x00, 0x00,
        0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&HEADER[..]).unwrap();
        assert_eq!(
            (p.version(), p.traffic_class(), p.flow_label()),
            (6, 0xb8, 0x12345)
        );
        assert_eq!(
            (p.payload_len(), p.next_header(), p.hop_limit()),
            (22, 17, 64)
        );
        assert_eq!(p.src(), "2001:2::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.dst(), "2001:2:0:8000::1".parse::<Ipv6Addr>().unwrap());
        assert!(p.payload().is_empty());
        assert!(Packet::new_checked(&HEADER[..39]).is_none());
        // The 22 bytes the header announces, and not the 3 of padding
        // after them (an Ethernet frame's minimum size adds some).
        let mut packet = HEADER.to_vec();
        packet.extend(1..=22u8);
        packet.extend([0xee; 3]);
        let p = Packet::new_checked(&packet[..]).unwrap();
        assert_eq!(p.payload(), (1..=22u8).collect::<Vec<_>>());
        // Cut after 10 of them: the 10.
        let p = Packet::new_checked(&packet[..50]).unwrap();
        assert_eq!(p.payload(), (1..=10u8).collect::<Vec<_>>());
    }

    #[test]
    fn construct() {
        let mut buf = [0u8; 40];
        let mut p = Packet::new_unchecked_mut(&mut buf[..]);
        p.set_version_tc_flow(0xb8, 0x12345);
        p.set_payload_len(22);
        p.set_next_header(17);
        p.set_hop_limit(64);
        p.set_src("2001:2::1".parse().unwrap());
        p.set_dst("2001:2:0:8000::1".parse().unwrap());
        assert_eq!(buf, HEADER);
    }
}
