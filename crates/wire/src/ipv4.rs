//! IPv4 headers (RFC 791).

use std::net::Ipv4Addr;
use std::ops::Range;

use crate::checksum;

/// A header without options.
pub const HEADER_LEN: usize = 20;
/// Don't Fragment.
pub const FLAG_DF: u16 = 0x4000;
/// More Fragments.
pub const FLAG_MF: u16 = 0x2000;
/// The fragment offset bits of the flags/offset word.
pub const FRAG_OFFSET_MASK: u16 = 0x1fff;

pub(crate) mod field {
    use super::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

/// A typed view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view of `buffer` if it holds at least the header its IHL announces
    /// (and at least 20 bytes).
    pub fn new_checked(buffer: T) -> Option<Packet<T>> {
        let len = buffer.as_ref().len();
        if len < HEADER_LEN {
            return None;
        }
        let packet = Packet { buffer };
        (packet.header_len() >= HEADER_LEN && packet.header_len() <= len).then_some(packet)
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn u16_at(&self, range: Range<usize>) -> u16 {
        u16::from_be_bytes([self.bytes()[range.start], self.bytes()[range.start + 1]])
    }

    pub fn version(&self) -> u8 {
        self.bytes()[field::VER_IHL] >> 4
    }

    /// IHL × 4.
    pub fn header_len(&self) -> usize {
        usize::from(self.bytes()[field::VER_IHL] & 0x0f) * 4
    }

    pub fn tos(&self) -> u8 {
        self.bytes()[field::TOS]
    }

    pub fn total_len(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }

    pub fn ident(&self) -> u16 {
        self.u16_at(field::IDENT)
    }

    /// Flags (3 bits) and fragment offset (13 bits).
    pub fn flags_frag(&self) -> u16 {
        self.u16_at(field::FLAGS_FRAG)
    }

    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & FLAG_DF != 0
    }

    /// True for any fragment: MF set or a non-zero offset.
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (FLAG_MF | FRAG_OFFSET_MASK) != 0
    }

    pub fn ttl(&self) -> u8 {
        self.bytes()[field::TTL]
    }

    pub fn protocol(&self) -> u8 {
        self.bytes()[field::PROTOCOL]
    }

    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.bytes()[field::SRC]).expect("4 bytes"))
    }

    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.bytes()[field::DST]).expect("4 bytes"))
    }

    /// The header, options included.
    pub fn header(&self) -> &[u8] {
        &self.bytes()[..self.header_len()]
    }

    /// True if the header checksum is right.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum_bytes(self.header())) == 0xffff
    }

    /// The payload: up to the total length, or the end of the buffer if that
    /// comes first (a truncated capture).
    pub fn payload(&self) -> &[u8] {
        let end = usize::from(self.total_len()).clamp(self.header_len(), self.bytes().len());
        &self.bytes()[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// A view for building a header in `buffer` (at least 20 bytes).
    pub fn new_unchecked_mut(buffer: T) -> Packet<T> {
        assert!(
            buffer.as_ref().len() >= HEADER_LEN,
            "an IPv4 header needs 20 bytes"
        );
        Packet { buffer }
    }

    fn set_u16(&mut self, range: Range<usize>, value: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&value.to_be_bytes());
    }

    /// Version 4 and a header of `header_len` bytes (a multiple of 4).
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        self.buffer.as_mut()[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
    }

    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[field::TOS] = tos;
    }

    pub fn set_total_len(&mut self, len: u16) {
        self.set_u16(field::LENGTH, len);
    }

    pub fn set_ident(&mut self, ident: u16) {
        self.set_u16(field::IDENT, ident);
    }

    pub fn set_flags_frag(&mut self, value: u16) {
        self.set_u16(field::FLAGS_FRAG, value);
    }

    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::TTL] = ttl;
    }

    pub fn set_protocol(&mut self, protocol: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = protocol;
    }

    pub fn set_checksum(&mut self, checksum: u16) {
        self.set_u16(field::CHECKSUM, checksum);
    }

    pub fn set_src(&mut self, addr: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.octets());
    }

    pub fn set_dst(&mut self, addr: Ipv4Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.octets());
    }

    /// Computes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        let checksum = checksum::ipv4_header_checksum(self.header());
        self.set_checksum(checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IGMPv3 report's header with one option word (router alert, RFC
    /// 2113): 192.168.1.10 to 224.0.0.22, TTL 1, checksum 0x4247.
    const WITH_OPTION: [u8; 24] = [
        0x46, 0xc0, 0x00, 0x28, 0x00, 0x00, 0x40, 0x00, 0x01, 0x02, 0x42, 0x47, 0xc0, 0xa8, 0x01,
        0x0a, 0xe0, 0x00, 0x00, 0x16, 0x94, 0x04, 0x00, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&WITH_OPTION[..]).unwrap();
        assert_eq!(
            (p.version(), p.header_len(), p.tos(), p.total_len()),
            (4, 24, 0xc0, 40)
        );
        assert_eq!(
            (p.ident(), p.dont_frag(), p.is_fragment()),
            (0, true, false)
        );
        assert_eq!((p.ttl(), p.protocol()), (1, 2));
        assert_eq!(p.src(), Ipv4Addr::new(192, 168, 1, 10));
        assert_eq!(p.dst(), Ipv4Addr::new(224, 0, 0, 22));
        assert_eq!(p.checksum(), 0x4247);
        assert_eq!(checksum::ipv4_header_checksum(&WITH_OPTION), 0x4247);
        assert!(p.verify_checksum());
        // Truncated: the payload stops at the buffer's end.
        assert_eq!(p.payload(), &[] as &[u8]);
    }

    #[test]
    fn construct() {
        let mut buf = [0u8; 24];
        let mut p = Packet::new_unchecked_mut(&mut buf[..]);
        p.set_version_and_header_len(24);
        p.set_tos(0xc0);
        p.set_total_len(40);
        p.set_ident(0);
        p.set_flags_frag(FLAG_DF);
        p.set_ttl(1);
        p.set_protocol(2);
        p.set_src(Ipv4Addr::new(192, 168, 1, 10));
        p.set_dst(Ipv4Addr::new(224, 0, 0, 22));
        buf[20..24].copy_from_slice(&[0x94, 0x04, 0x00, 0x00]);
        let mut p = Packet::new_unchecked_mut(&mut buf[..]);
        p.fill_checksum();
        assert_eq!(buf, WITH_OPTION);
    }

    /// 192.168.0.1 to 192.168.0.199, UDP, TTL 64, ident 0xabcd, no flag,
    /// 32 bytes in all: 20 of header and 12 of payload (here 1 to 12),
    /// then 2 bytes of padding. Its checksum, summed by hand: the words
    /// add up to 0x2b316, folded 0xb318, complemented 0x4ce7.
    const UDP: [u8; 34] = [
        0x45, 0x00, 0x00, 0x20, 0xab, 0xcd, 0x00, 0x00, 0x40, 0x11, 0x4c, 0xe7, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xee, 0xee,
    ];

    #[test]
    fn a_plain_header_with_a_payload() {
        let p = Packet::new_checked(&UDP[..]).unwrap();
        assert_eq!(
            (p.ident(), p.dont_frag(), p.is_fragment(), p.ttl()),
            (0xabcd, false, false, 64)
        );
        assert!(p.verify_checksum());
        // Up to the total length: the padding is not payload.
        assert_eq!(p.payload(), &UDP[20..32]);
        // A TTL changed after the checksum was made fails it.
        let mut bad = UDP;
        bad[8] = 0x3f;
        assert!(!Packet::new_checked(&bad[..]).unwrap().verify_checksum());
        // Exactly a header is enough.
        assert_eq!(
            Packet::new_checked(&UDP[..20]).unwrap().payload(),
            &[] as &[u8]
        );
        // Built field by field, it is the same header.
        let mut buf = [0u8; 20];
        let mut b = Packet::new_unchecked_mut(&mut buf[..]);
        b.set_version_and_header_len(20);
        b.set_total_len(32);
        b.set_ident(0xabcd);
        b.set_ttl(64);
        b.set_protocol(17);
        b.set_src(Ipv4Addr::new(192, 168, 0, 1));
        b.set_dst(Ipv4Addr::new(192, 168, 0, 199));
        b.fill_checksum();
        assert_eq!(buf, UDP[..20]);
    }

    #[test]
    fn fragments_and_bad_lengths() {
        let mut buf = WITH_OPTION;
        buf[6..8].copy_from_slice(&FLAG_MF.to_be_bytes());
        assert!(Packet::new_checked(&buf[..]).unwrap().is_fragment());
        buf[6..8].copy_from_slice(&0x0001u16.to_be_bytes());
        assert!(Packet::new_checked(&buf[..]).unwrap().is_fragment());
        buf[0] = 0x44; // IHL 4: shorter than a header
        assert!(Packet::new_checked(&buf[..]).is_none());
        buf[0] = 0x47; // IHL 7: longer than the buffer
        assert!(Packet::new_checked(&buf[..]).is_none());
        assert!(Packet::new_checked(&WITH_OPTION[..19]).is_none());
    }
}
