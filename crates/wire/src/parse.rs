//! The receiver's fast path: recognise a pktlab test frame and read its flow
//! and payload.

use std::net::IpAddr;

use crate::checksum::{self, PROTO_UDP};
use crate::ethernet::{self, ethertype};
use crate::flow::Flow;
use crate::payload::{TestPayload, PAYLOAD_LEN};
use crate::range::{addr_raw, Family};
use crate::{ipv4, ipv6, udp};

/// A UDP 5-tuple (the protocol is always UDP): addresses as integers with a
/// family tag, IPv4 in the low 32 bits. Cheap to hash and copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    pub family: Family,
    pub src: u128,
    pub dst: u128,
    pub sport: u16,
    pub dport: u16,
}

impl FlowKey {
    /// The key of a generated flow.
    pub fn from_flow(flow: &Flow) -> FlowKey {
        FlowKey {
            family: Family::of(flow.src),
            src: addr_raw(flow.src),
            dst: addr_raw(flow.dst),
            sport: flow.sport,
            dport: flow.dport,
        }
    }

    pub fn src_addr(&self) -> IpAddr {
        self.family.addr(self.src)
    }

    pub fn dst_addr(&self) -> IpAddr {
        self.family.addr(self.dst)
    }

    pub fn to_flow(&self) -> Flow {
        Flow {
            src: self.src_addr(),
            dst: self.dst_addr(),
            sport: self.sport,
            dport: self.dport,
        }
    }
}

/// A recognised test frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestFrame {
    pub key: FlowKey,
    pub payload: TestPayload,
    /// The length of the frame as given (without FCS).
    pub frame_len: usize,
}

/// Recognises a pktlab test frame: Ethernet, up to two VLAN tags
/// (0x8100/0x88a8), IPv4 (any IHL, not a fragment) or IPv6 (UDP as the next
/// header, no extension headers), UDP, then the test payload's magic.
/// `None` for anything else: ARP, ICMPv6, TCP, a wrong magic, a truncated
/// frame. A capture cut short after the test payload is still recognised.
///
/// Checksums are not verified here: this runs for every received frame at
/// line rate, the NIC or kernel has already dropped frames with a bad FCS,
/// and summing every byte would cost more than the rest of the receive
/// path. Use [`verify_checksums`] in tests and diagnostics.
#[inline]
pub fn parse_test_frame(frame: &[u8]) -> Option<TestFrame> {
    let (l3_type, l3) = ethernet::network_layer(frame)?;
    let ip = &frame[l3..];
    let (key_family, src, dst, l4) = match l3_type {
        ethertype::IPV4 => {
            let p = ipv4::Packet::new_checked(ip)?;
            if p.version() != 4 || p.protocol() != PROTO_UDP || p.is_fragment() {
                return None;
            }
            if usize::from(p.total_len()) < p.header_len() + udp::HEADER_LEN + PAYLOAD_LEN {
                return None;
            }
            let (src, dst) = (u32::from(p.src()), u32::from(p.dst()));
            (
                Family::Inet4,
                u128::from(src),
                u128::from(dst),
                p.header_len(),
            )
        }
        ethertype::IPV6 => {
            let p = ipv6::Packet::new_checked(ip)?;
            if p.version() != 6 || p.next_header() != PROTO_UDP {
                return None;
            }
            if usize::from(p.payload_len()) < udp::HEADER_LEN + PAYLOAD_LEN {
                return None;
            }
            let (src, dst) = (u128::from(p.src()), u128::from(p.dst()));
            (Family::Inet6, src, dst, ipv6::HEADER_LEN)
        }
        _ => return None,
    };
    let datagram = udp::Packet::new_checked(&ip[l4..])?;
    if usize::from(datagram.len()) < udp::HEADER_LEN + PAYLOAD_LEN {
        return None;
    }
    let payload = TestPayload::parse(datagram.payload())?;
    Some(TestFrame {
        key: FlowKey {
            family: key_family,
            src,
            dst,
            sport: datagram.src_port(),
            dport: datagram.dst_port(),
        },
        payload,
        frame_len: frame.len(),
    })
}

/// Why [`verify_checksums`] refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChecksumError {
    #[error("not a UDP frame over IPv4 or IPv6")]
    NotUdp,
    #[error("frame truncated: the IP or UDP length runs past its end")]
    Truncated,
    #[error("IPv4 header checksum is {found:#06x}, expected {expected:#06x}")]
    Ipv4Header { found: u16, expected: u16 },
    #[error("UDP checksum is {found:#06x}, expected {expected:#06x}")]
    Udp { found: u16, expected: u16 },
    #[error("UDP over IPv6 without a checksum")]
    UdpMissing,
}

/// Verifies the IPv4 header checksum and the UDP checksum of a UDP frame
/// (whatever its payload), for tests and diagnostics. A UDP checksum of 0 is
/// accepted over IPv4 ("none") and refused over IPv6 (mandatory there).
pub fn verify_checksums(frame: &[u8]) -> Result<(), ChecksumError> {
    let (l3_type, l3) = ethernet::network_layer(frame).ok_or(ChecksumError::NotUdp)?;
    let ip = &frame[l3..];
    match l3_type {
        ethertype::IPV4 => {
            let p = ipv4::Packet::new_checked(ip).ok_or(ChecksumError::Truncated)?;
            if p.version() != 4 || p.protocol() != PROTO_UDP || p.is_fragment() {
                return Err(ChecksumError::NotUdp);
            }
            let expected = checksum::ipv4_header_checksum(p.header());
            if p.checksum() != expected {
                return Err(ChecksumError::Ipv4Header {
                    found: p.checksum(),
                    expected,
                });
            }
            let segment = udp_segment(ip, p.header_len(), usize::from(p.total_len()))?;
            let found = udp::Packet::new_checked(segment)
                .expect("checked length")
                .checksum();
            if found == 0 {
                return Ok(());
            }
            let expected = checksum::udp_ipv4_checksum(p.src(), p.dst(), segment);
            check_udp(found, expected)
        }
        ethertype::IPV6 => {
            let p = ipv6::Packet::new_checked(ip).ok_or(ChecksumError::Truncated)?;
            if p.version() != 6 || p.next_header() != PROTO_UDP {
                return Err(ChecksumError::NotUdp);
            }
            let ip_end = ipv6::HEADER_LEN + usize::from(p.payload_len());
            let segment = udp_segment(ip, ipv6::HEADER_LEN, ip_end)?;
            let found = udp::Packet::new_checked(segment)
                .expect("checked length")
                .checksum();
            if found == 0 {
                return Err(ChecksumError::UdpMissing);
            }
            let expected = checksum::udp_ipv6_checksum(p.src(), p.dst(), segment);
            check_udp(found, expected)
        }
        _ => Err(ChecksumError::NotUdp),
    }
}

/// The UDP datagram inside `ip[l4..ip_end]`, by its own length field.
fn udp_segment(ip: &[u8], l4: usize, ip_end: usize) -> Result<&[u8], ChecksumError> {
    if ip_end > ip.len() || ip_end < l4 + udp::HEADER_LEN {
        return Err(ChecksumError::Truncated);
    }
    let datagram = udp::Packet::new_checked(&ip[l4..ip_end]).ok_or(ChecksumError::Truncated)?;
    let len = usize::from(datagram.len());
    if len < udp::HEADER_LEN || l4 + len > ip_end {
        return Err(ChecksumError::Truncated);
    }
    Ok(&ip[l4..l4 + len])
}

fn check_udp(found: u16, expected: u16) -> Result<(), ChecksumError> {
    if found == expected {
        Ok(())
    } else {
        Err(ChecksumError::Udp { found, expected })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 198.18.10.1:2000 → 198.19.10.1:2000, stream 0 seq 0.
    use crate::frame::tests::LAB_V4_64;

    /// An ARP request for 198.18.0.203 from 198.18.0.201.
    const ARP: [u8; 42] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11, 0x08, 0x06, 0x00,
        0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11, 0xc6, 0x12,
        0x00, 0xc9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc6, 0x12, 0x00, 0xcb,
    ];

    fn key_v4() -> FlowKey {
        FlowKey {
            family: Family::Inet4,
            src: u128::from(u32::from_be_bytes([198, 18, 10, 1])),
            dst: u128::from(u32::from_be_bytes([198, 19, 10, 1])),
            sport: 2000,
            dport: 2000,
        }
    }

    #[test]
    fn recognises_a_test_frame() {
        let t = parse_test_frame(&LAB_V4_64).unwrap();
        assert_eq!(t.key, key_v4());
        assert_eq!(t.key.src_addr(), "198.18.10.1".parse::<IpAddr>().unwrap());
        assert_eq!(t.key.to_flow().dport, 2000);
        assert_eq!(
            t.payload,
            TestPayload {
                stream: 0,
                seq: 0,
                ts40: 0x0123456789
            }
        );
        assert_eq!(t.frame_len, 60);
        assert_eq!(verify_checksums(&LAB_V4_64), Ok(()));
    }

    #[test]
    fn refuses_other_frames() {
        assert_eq!(parse_test_frame(&ARP), None);
        assert_eq!(verify_checksums(&ARP), Err(ChecksumError::NotUdp));
        let mut tcp = LAB_V4_64;
        tcp[23] = 6;
        assert_eq!(parse_test_frame(&tcp), None);
        let mut magic = LAB_V4_64;
        magic[43] = 0x4d;
        assert_eq!(parse_test_frame(&magic), None);
        let mut fragment = LAB_V4_64;
        fragment[20] = 0x20; // MF
        assert_eq!(parse_test_frame(&fragment), None);
        let mut later_fragment = LAB_V4_64;
        later_fragment[21] = 0x01; // offset 8
        assert_eq!(parse_test_frame(&later_fragment), None);
        let mut version = LAB_V4_64;
        version[14] = 0x65;
        assert_eq!(parse_test_frame(&version), None);
        for cut in [0, 13, 14, 33, 41, 55] {
            assert_eq!(parse_test_frame(&LAB_V4_64[..cut]), None, "cut at {cut}");
        }
        // Cut after the payload (a short capture) still counts.
        assert!(parse_test_frame(&LAB_V4_64[..56]).is_some());
        assert_eq!(
            verify_checksums(&LAB_V4_64[..56]),
            Err(ChecksumError::Truncated)
        );
    }

    #[test]
    fn handles_ip_options_and_two_vlan_tags() {
        // Insert a 4-byte option (router alert) and two tags.
        let mut f = LAB_V4_64[..12].to_vec();
        f.extend_from_slice(&[0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14, 0x08, 0x00]);
        let mut ip = LAB_V4_64[14..34].to_vec();
        ip[0] = 0x46;
        ip[2..4].copy_from_slice(&50u16.to_be_bytes());
        ip.extend_from_slice(&[0x94, 0x04, 0x00, 0x00]);
        ip[10..12].fill(0);
        let c = checksum::ipv4_header_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&LAB_V4_64[34..]);
        let t = parse_test_frame(&f).unwrap();
        assert_eq!((t.key, t.payload.seq, t.frame_len), (key_v4(), 0, 72));
        assert_eq!(verify_checksums(&f), Ok(()));
        // A third tag is not followed.
        let mut three = f[..12].to_vec();
        three.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        three.extend_from_slice(&f[12..]);
        assert_eq!(parse_test_frame(&three), None);
    }

    #[test]
    fn checksum_errors() {
        let mut bad_ip = LAB_V4_64;
        bad_ip[25] ^= 0x01;
        assert_eq!(
            verify_checksums(&bad_ip),
            Err(ChecksumError::Ipv4Header {
                found: 0x9a96,
                expected: 0x9a97
            })
        );
        // No checksum verification on the fast path.
        assert!(parse_test_frame(&bad_ip).is_some());
        // The last fill byte 0x3b becomes 0xc4: its word grows by 0x89, so
        // the right checksum shrinks by 0x89.
        let mut bad_udp = LAB_V4_64;
        bad_udp[59] ^= 0xff;
        let err = verify_checksums(&bad_udp).unwrap_err();
        let expected = 0x0262 - 0x89;
        assert_eq!(
            err,
            ChecksumError::Udp {
                found: 0x0262,
                expected
            }
        );
        assert_eq!(err.to_string(), "UDP checksum is 0x0262, expected 0x01d9");
        let mut no_udp_sum = LAB_V4_64;
        no_udp_sum[40..42].fill(0);
        assert_eq!(verify_checksums(&no_udp_sum), Ok(()));
    }
}
