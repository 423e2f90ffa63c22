//! UDP headers (RFC 768).

use std::ops::Range;

/// Source port, destination port, length, checksum.
pub const HEADER_LEN: usize = 8;

pub(crate) mod field {
    use super::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const LENGTH: Range<usize> = 4..6;
    pub const CHECKSUM: Range<usize> = 6..8;
}

/// A typed view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view of `buffer` if it holds the header.
    pub fn new_checked(buffer: T) -> Option<Packet<T>> {
        (buffer.as_ref().len() >= HEADER_LEN).then_some(Packet { buffer })
    }

    fn u16_at(&self, range: Range<usize>) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[range.start], b[range.start + 1]])
    }

    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }

    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }

    /// Header and payload length.
    pub fn len(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }

    /// True when the length field is zero (never for a valid datagram).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    /// The payload: up to the length field, or the end of the buffer if that
    /// comes first.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = usize::from(self.len()).clamp(HEADER_LEN, b.len());
        &b[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// A view for building a header in `buffer` (at least 8 bytes).
    pub fn new_unchecked_mut(buffer: T) -> Packet<T> {
        assert!(
            buffer.as_ref().len() >= HEADER_LEN,
            "a UDP header needs 8 bytes"
        );
        Packet { buffer }
    }

    fn set_u16(&mut self, range: Range<usize>, value: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_src_port(&mut self, port: u16) {
        self.set_u16(field::SRC_PORT, port);
    }

    pub fn set_dst_port(&mut self, port: u16) {
        self.set_u16(field::DST_PORT, port);
    }

    pub fn set_len(&mut self, len: u16) {
        self.set_u16(field::LENGTH, len);
    }

    pub fn set_checksum(&mut self, checksum: u16) {
        self.set_u16(field::CHECKSUM, checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1234 → 2000, 12 bytes, checksum 0xb6af (see the checksum module's
    /// hand computation), payload 50 4c 00 01.
    const DATAGRAM: [u8; 12] = [
        0x04, 0xd2, 0x07, 0xd0, 0x00, 0x0c, 0xb6, 0xaf, 0x50, 0x4c, 0x00, 0x01,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&DATAGRAM[..]).unwrap();
        assert_eq!(
            (p.src_port(), p.dst_port(), p.len(), p.checksum()),
            (1234, 2000, 12, 0xb6af)
        );
        assert_eq!(p.payload(), &[0x50, 0x4c, 0x00, 0x01]);
        assert_eq!(
            Packet::new_checked(&DATAGRAM[..10]).unwrap().payload(),
            &[0x50, 0x4c]
        );
        assert!(Packet::new_checked(&DATAGRAM[..7]).is_none());
        // Empty only when the length field says 0.
        assert!(!p.is_empty());
        let mut zero = DATAGRAM;
        zero[4..6].copy_from_slice(&[0, 0]);
        assert!(Packet::new_checked(&zero[..]).unwrap().is_empty());
    }

    #[test]
    fn construct() {
        let mut buf = [0u8; 12];
        let mut p = Packet::new_unchecked_mut(&mut buf[..]);
        p.set_src_port(1234);
        p.set_dst_port(2000);
        p.set_len(12);
        p.set_checksum(0xb6af);
        buf[8..].copy_from_slice(&[0x50, 0x4c, 0x00, 0x01]);
        assert_eq!(buf, DATAGRAM);
    }
}
