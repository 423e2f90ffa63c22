//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! Sums are ones'-complement sums of big-endian 16-bit words, kept in a wide
//! integer and folded at the end: a `u64` accumulator cannot overflow for any
//! frame, and folding handles the end-around carries all at once.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// The unfolded sum of `data` as big-endian 16-bit words; an odd last byte is
/// padded with a zero byte. Add sums of evenly aligned pieces freely.
pub fn sum_bytes(data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    let mut sum: u64 = chunks
        .by_ref()
        .map(|w| u64::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

/// The sum of the 16-bit words of a 64-bit big-endian value.
#[inline(always)]
pub fn sum_u64_words(x: u64) -> u64 {
    const LANES: u64 = 0x0000_ffff_0000_ffff;
    let pairs = (x & LANES) + ((x >> 16) & LANES);
    (pairs & 0xffff_ffff) + (pairs >> 32)
}

/// The sum of the 16-bit words of a 128-bit big-endian value (an IPv6 address).
#[inline(always)]
pub fn sum_u128_words(x: u128) -> u64 {
    sum_u64_words((x >> 64) as u64) + sum_u64_words(x as u64)
}

/// Folds the carries of a sum into 16 bits (the ones'-complement sum).
#[inline(always)]
pub fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The checksum field for data whose words add up to `sum`: `!fold(sum)`.
#[inline(always)]
pub fn finish(sum: u64) -> u16 {
    !fold(sum)
}

/// RFC 1624 eqn. 3: the new checksum after one 16-bit word of the covered
/// data changes from `old` to `new`: `HC' = ~(~HC + ~m + m')`.
pub fn update(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(u64::from(!checksum) + u64::from(!old) + u64::from(new))
}

/// RFC 1624 eqn. 3 for words that were zero when `checksum` was computed:
/// `~m` is then `0xffff`, ones'-complement zero, so `HC' = ~(~HC + Σm')`,
/// where `new_words` is the (unfolded) sum of the words now written.
#[inline(always)]
pub fn update_from_zero(checksum: u16, new_words: u64) -> u16 {
    !fold(u64::from(!checksum) + new_words)
}

/// The IPv4 header checksum of `header` (IHL × 4 bytes), with the checksum
/// field (bytes 10-11) counted as zero.
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    finish(sum_bytes(&header[..10]) + sum_bytes(&header[12..]))
}

/// The sum of the IPv4 pseudo-header.
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, length: u16) -> u64 {
    sum_bytes(&src.octets()) + sum_bytes(&dst.octets()) + u64::from(protocol) + u64::from(length)
}

/// The sum of the IPv6 pseudo-header (RFC 8200 section 8.1).
pub fn pseudo_header_v6(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, length: u32) -> u64 {
    sum_u128_words(u128::from(src))
        + sum_u128_words(u128::from(dst))
        + sum_u64_words(u64::from(length))
        + u64::from(next_header)
}

/// The UDP checksum of `segment` (header and payload) over IPv4, with the
/// checksum field (bytes 6-7) counted as zero. A computed 0 is returned as
/// 0xffff, since 0 on the wire means "no checksum".
pub fn udp_ipv4_checksum(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> u16 {
    let pseudo = pseudo_header_v4(src, dst, PROTO_UDP, segment.len() as u16);
    udp_finish(pseudo + sum_bytes(&segment[..6]) + sum_bytes(&segment[8..]))
}

/// The UDP checksum of `segment` over IPv6, like [`udp_ipv4_checksum`].
pub fn udp_ipv6_checksum(src: Ipv6Addr, dst: Ipv6Addr, segment: &[u8]) -> u16 {
    let pseudo = pseudo_header_v6(src, dst, PROTO_UDP, segment.len() as u32);
    udp_finish(pseudo + sum_bytes(&segment[..6]) + sum_bytes(&segment[8..]))
}

/// [`finish`] with UDP's rule: a checksum of 0 is sent as 0xffff (RFC 768).
#[inline(always)]
pub fn udp_finish(sum: u64) -> u16 {
    match finish(sum) {
        0 => 0xffff,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real IPv4 header (192.168.0.1 → 192.168.0.199, UDP, 115 bytes, DF)
    /// whose checksum is 0xb861.
    const IPV4_HEADER: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn ipv4_header_by_hand() {
        assert_eq!(ipv4_header_checksum(&IPV4_HEADER), 0xb861);
        // A correct header sums to 0xffff with its checksum.
        assert_eq!(fold(sum_bytes(&IPV4_HEADER)), 0xffff);
    }

    #[test]
    fn udp_over_ipv4_by_hand() {
        // 192.0.2.1:1234 → 198.51.100.2:2000, payload 50 4c 00 01, length 12.
        // Pseudo-header c000+0201+c633+6402+0011+000c, UDP 04d2+07d0+000c,
        // payload 504c+0001: 0x2494e, folded 0x4950, complemented 0xb6af.
        let segment = [
            0x04, 0xd2, 0x07, 0xd0, 0x00, 0x0c, 0x00, 0x00, 0x50, 0x4c, 0x00, 0x01,
        ];
        let (src, dst) = (Ipv4Addr::new(192, 0, 2, 1), Ipv4Addr::new(198, 51, 100, 2));
        assert_eq!(udp_ipv4_checksum(src, dst, &segment), 0xb6af);
        // The checksum field itself is ignored.
        let mut with_sum = segment;
        with_sum[6..8].copy_from_slice(&0xb6afu16.to_be_bytes());
        assert_eq!(udp_ipv4_checksum(src, dst, &with_sum), 0xb6af);
        let pseudo = pseudo_header_v4(src, dst, PROTO_UDP, 12);
        assert_eq!(fold(pseudo + sum_bytes(&with_sum)), 0xffff);
    }

    #[test]
    fn udp_zero_is_sent_as_ffff() {
        // Choose the payload word so that everything sums to 0xffff.
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut segment = [0x00, 0x01, 0x00, 0x02, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00];
        let rest = fold(pseudo_header_v4(src, dst, PROTO_UDP, 10) + sum_bytes(&segment));
        segment[8..10].copy_from_slice(&(0xffff - rest).to_be_bytes());
        assert_eq!(
            finish(pseudo_header_v4(src, dst, PROTO_UDP, 10) + sum_bytes(&segment)),
            0
        );
        assert_eq!(udp_ipv4_checksum(src, dst, &segment), 0xffff);
    }

    #[test]
    fn odd_lengths_pad_with_zero() {
        assert_eq!(sum_bytes(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
        assert_eq!(sum_bytes(&[]), 0);
    }

    #[test]
    fn wide_word_sums() {
        let x: u64 = 0x1234_5678_9abc_def0;
        assert_eq!(sum_u64_words(x), 0x1234 + 0x5678 + 0x9abc + 0xdef0);
        assert_eq!(sum_u64_words(u64::MAX), 4 * 0xffff);
        let a = u128::from("2001:2:0:8000::64".parse::<Ipv6Addr>().unwrap());
        assert_eq!(sum_u128_words(a), 0x2001 + 0x2 + 0x8000 + 0x64);
        assert_eq!(sum_u128_words(a), sum_bytes(&a.to_be_bytes()));
    }

    #[test]
    fn incremental_update_matches_recomputation() {
        // Change the destination 192.168.0.199 to 192.168.1.200 word by word.
        let mut header = IPV4_HEADER;
        let mut checksum = 0xb861;
        for (i, new) in [(16, 0xc0a8u16), (18, 0x01c8)] {
            let old = u16::from_be_bytes([header[i], header[i + 1]]);
            header[i..i + 2].copy_from_slice(&new.to_be_bytes());
            checksum = update(checksum, old, new);
        }
        assert_eq!(checksum, ipv4_header_checksum(&header));
        // From zeroed fields: zero the addresses, then add them back.
        let mut zeroed = header;
        zeroed[12..20].fill(0);
        let base = ipv4_header_checksum(&zeroed);
        assert_eq!(update_from_zero(base, sum_bytes(&header[12..20])), checksum);
    }

    #[test]
    fn rfc_1624_worked_example() {
        // RFC 1624 section 4: the other header words sum to 0xCD7A, so the
        // checksum is ~(0xCD7A + 0x5555) = 0xDD2F; m = 0x5555 becomes
        // m' = 0x3285 and the new checksum is ~(0xCD7A + 0x3285) = 0x0000.
        assert_eq!(update(0xdd2f, 0x5555, 0x3285), 0x0000);
        // And back.
        assert_eq!(update(0x0000, 0x3285, 0x5555), 0xdd2f);
    }
}
