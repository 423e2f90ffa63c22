//! Ethernet II frames and 802.1Q/802.1ad VLAN tags.

use std::ops::Range;

use crate::MacAddr;

/// Destination, source, EtherType.
pub const HEADER_LEN: usize = 14;
/// TPID + TCI.
pub const VLAN_TAG_LEN: usize = 4;

/// EtherType values pktlab uses.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const IPV6: u16 = 0x86dd;
    /// 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
}

pub(crate) mod field {
    use super::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// In a VLAN tag, relative to the tag's start (the TPID sits in the
    /// EtherType field before it): TCI, then the inner EtherType.
    pub const TAG_TCI: Range<usize> = 0..2;
    pub const TAG_ETHERTYPE: Range<usize> = 2..4;
}

/// A typed view of an Ethernet II frame (without FCS).
#[derive(Debug, Clone)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// A view of `buffer`, which must hold at least [`HEADER_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Option<Frame<T>> {
        (buffer.as_ref().len() >= HEADER_LEN).then_some(Frame { buffer })
    }

    pub fn dst(&self) -> MacAddr {
        MacAddr(
            self.buffer.as_ref()[field::DST]
                .try_into()
                .expect("6 bytes"),
        )
    }

    pub fn src(&self) -> MacAddr {
        MacAddr(
            self.buffer.as_ref()[field::SRC]
                .try_into()
                .expect("6 bytes"),
        )
    }

    /// The outer EtherType (a TPID when the frame is tagged).
    pub fn ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::ETHERTYPE.start)
    }

    /// Everything after the outer EtherType.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_dst(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&mac.0);
    }

    pub fn set_src(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&mac.0);
    }

    pub fn set_ethertype(&mut self, ethertype: u16) {
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// A typed view of the 4 bytes after a VLAN TPID: TCI and inner EtherType.
#[derive(Debug, Clone)]
pub struct VlanTag<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> VlanTag<T> {
    /// `buffer` starts right after the TPID and holds at least 4 bytes.
    pub fn new_checked(buffer: T) -> Option<VlanTag<T>> {
        (buffer.as_ref().len() >= VLAN_TAG_LEN).then_some(VlanTag { buffer })
    }

    /// The 12-bit VLAN id.
    pub fn vid(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// The 3-bit priority code point.
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    pub fn tci(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::TAG_TCI.start)
    }

    pub fn inner_ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::TAG_ETHERTYPE.start)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanTag<T> {
    pub fn set_tci(&mut self, tci: u16) {
        self.buffer.as_mut()[field::TAG_TCI].copy_from_slice(&tci.to_be_bytes());
    }

    pub fn set_inner_ethertype(&mut self, ethertype: u16) {
        self.buffer.as_mut()[field::TAG_ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
    }
}

/// The network-layer EtherType of `frame` and the offset of its header,
/// after up to two VLAN tags (802.1Q or 802.1ad). `None` if truncated.
#[inline]
pub fn network_layer(frame: &[u8]) -> Option<(u16, usize)> {
    let mut ethertype = u16::from_be_bytes(frame.get(field::ETHERTYPE)?.try_into().ok()?);
    let mut offset = HEADER_LEN;
    for _ in 0..2 {
        if ethertype != ethertype::VLAN && ethertype != ethertype::QINQ {
            break;
        }
        let inner =
            frame.get(offset + field::TAG_ETHERTYPE.start..offset + field::TAG_ETHERTYPE.end)?;
        ethertype = u16::from_be_bytes(inner.try_into().ok()?);
        offset += VLAN_TAG_LEN;
    }
    Some((ethertype, offset))
}

#[inline(always)]
pub(crate) fn read_u16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of a real tagged frame: VLAN 100, IPv6.
    const TAGGED: [u8; 20] = [
        0x00, 0x1b, 0x21, 0xc4, 0x95, 0x7a, 0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11, 0x81, 0x00, 0x00,
        0x64, 0x86, 0xdd, 0x60, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let f = Frame::new_checked(&TAGGED[..]).unwrap();
        assert_eq!(f.dst().to_string(), "00:1b:21:c4:95:7a");
        assert_eq!(f.src().to_string(), "0c:c4:7a:da:3c:11");
        assert_eq!(f.ethertype(), ethertype::VLAN);
        let tag = VlanTag::new_checked(f.payload()).unwrap();
        assert_eq!(
            (tag.vid(), tag.pcp(), tag.inner_ethertype()),
            (100, 0, ethertype::IPV6)
        );
        assert_eq!(network_layer(&TAGGED), Some((ethertype::IPV6, 18)));
    }

    #[test]
    fn priority_and_vlan_id_split_the_tci() {
        // TCI 0xb064: PCP 5 (bits 15-13), DEI 1 (bit 12), VID 100.
        let bytes = [0xb0, 0x64, 0x08, 0x00];
        let tag = VlanTag::new_checked(&bytes[..]).unwrap();
        assert_eq!((tag.pcp(), tag.vid(), tag.tci()), (5, 100, 0xb064));
        assert_eq!(tag.inner_ethertype(), ethertype::IPV4);
    }

    #[test]
    fn construct() {
        let mut buf = [0u8; 20];
        let mut f = Frame::new_checked(&mut buf[..]).unwrap();
        f.set_dst("00:1b:21:c4:95:7a".parse().unwrap());
        f.set_src("0c:c4:7a:da:3c:11".parse().unwrap());
        f.set_ethertype(ethertype::VLAN);
        let mut tag = VlanTag::new_checked(f.payload_mut()).unwrap();
        tag.set_tci(100);
        tag.set_inner_ethertype(ethertype::IPV6);
        buf[18..20].copy_from_slice(&[0x60, 0x00]);
        assert_eq!(buf, TAGGED);
    }

    #[test]
    fn network_layer_skips_two_tags_at_most() {
        let mut qinq = vec![0u8; 12];
        qinq.extend_from_slice(&[
            0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14, 0x08, 0x00, 0x45,
        ]);
        assert_eq!(network_layer(&qinq), Some((ethertype::IPV4, 22)));
        let mut three = vec![0u8; 12];
        three.extend_from_slice(&[
            0x88, 0xa8, 0, 1, 0x81, 0x00, 0, 2, 0x81, 0x00, 0, 3, 0x08, 0x00,
        ]);
        assert_eq!(network_layer(&three), Some((ethertype::VLAN, 22)));
        assert_eq!(network_layer(&TAGGED[..13]), None);
        assert_eq!(network_layer(&TAGGED[..17]), None);
        assert!(Frame::new_checked(&TAGGED[..13]).is_none());
    }
}
