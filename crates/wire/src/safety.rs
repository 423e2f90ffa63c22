//! Where the generator may send without `--allow-public` (README.md, "Conventions").
//!
//! Benchmark (RFC 2544/5180), private (RFC 1918, RFC 6598 shared, RFC 4193
//! unique local) and documentation (RFC 5737, RFC 3849) ranges only, so that
//! a mistyped destination never floods someone else's network.

use std::net::IpAddr;

use crate::flow::FlowSet;
use crate::range::{AddrRange, Family};
use crate::WireError;

/// Allowed IPv4 prefixes: (network, prefix length).
const ALLOWED_V4: [([u8; 4], u32); 8] = [
    ([198, 18, 0, 0], 15),   // benchmarking, RFC 2544
    ([10, 0, 0, 0], 8),      // RFC 1918
    ([172, 16, 0, 0], 12),   // RFC 1918
    ([192, 168, 0, 0], 16),  // RFC 1918
    ([100, 64, 0, 0], 10),   // shared address space, RFC 6598
    ([192, 0, 2, 0], 24),    // TEST-NET-1, RFC 5737
    ([198, 51, 100, 0], 24), // TEST-NET-2
    ([203, 0, 113, 0], 24),  // TEST-NET-3
];

/// Allowed IPv6 prefixes.
const ALLOWED_V6: [(u128, u32); 3] = [
    (0x2001_0002_0000 << 80, 48), // benchmarking, RFC 5180
    (0xfc00 << 112, 7),           // unique local, RFC 4193
    (0x2001_0db8 << 96, 32),      // documentation, RFC 3849
];

/// The allowed prefixes of a family as inclusive integer intervals.
fn allowed(family: Family) -> impl Iterator<Item = (u128, u128)> {
    let (v4, v6) = match family {
        Family::Inet4 => (&ALLOWED_V4[..], &[][..]),
        Family::Inet6 => (&[][..], &ALLOWED_V6[..]),
    };
    let v4 = v4.iter().map(|&(net, len)| {
        let start = u32::from_be_bytes(net);
        let host = u32::MAX >> len;
        (u128::from(start), u128::from(start | host))
    });
    let v6 = v6
        .iter()
        .map(|&(start, len)| (start, start | (u128::MAX >> len)));
    v4.chain(v6)
}

/// True if `addr` lies in an allowed range.
pub fn is_allowed(addr: IpAddr) -> bool {
    check_range(&AddrRange::single(addr)).is_ok()
}

/// Refuses a destination range unless every address of it is allowed. The
/// error names the first address outside.
pub fn check_range(range: &AddrRange) -> Result<(), WireError> {
    let family = range.family();
    let mut next = range.start_raw();
    loop {
        let Some((_, end)) = allowed(family).find(|&(s, e)| (s..=e).contains(&next)) else {
            let in_range = if range.count() > 1 {
                format!(" (in range {range})")
            } else {
                String::new()
            };
            return Err(WireError::PublicDestination {
                addr: family.addr(next),
                in_range,
            });
        };
        if end >= range.end_raw() {
            return Ok(());
        }
        // Adjacent allowed prefixes may cover the rest.
        next = end + 1;
    }
}

/// [`check_range`] for the destinations of a flow set. The caller skips
/// this with `--allow-public`.
pub fn check_destinations(flows: &FlowSet) -> Result<(), WireError> {
    check_range(&flows.dst().addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dst(text: &str) -> Result<(), WireError> {
        check_range(&text.parse::<crate::range::EndpointRange>().unwrap().addrs)
    }

    #[test]
    fn checks_the_destinations_of_flow_sets() {
        assert_eq!(check_destinations(&FlowSet::lab(Family::Inet4)), Ok(()));
        assert_eq!(check_destinations(&FlowSet::lab(Family::Inet6)), Ok(()));
        // Only destinations count: a public source is fine.
        let flows =
            FlowSet::new("1.2.3.4".parse().unwrap(), "198.19.0.1".parse().unwrap()).unwrap();
        assert_eq!(check_destinations(&flows), Ok(()));
        let flows =
            FlowSet::new("198.18.0.1".parse().unwrap(), "8.8.8.8:53".parse().unwrap()).unwrap();
        assert_eq!(
            check_destinations(&flows).unwrap_err().to_string(),
            "destination 8.8.8.8 is outside the benchmark, private and documentation ranges (use --allow-public to send there anyway)"
        );
    }

    #[test]
    fn allowed_ranges() {
        for ok in [
            "198.19.10.1-198.19.10.100",
            "198.18.0.0-198.19.255.255",
            "10.0.0.0-10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1-100.127.255.255",
            "192.0.2.7",
            "198.51.100.255",
            "203.0.113.0",
            "[2001:2:0:8000::1]-[2001:2:0:8000::64]",
            "[2001:2::]-[2001:2:0:ffff:ffff:ffff:ffff:ffff]",
            "[fc00::1]",
            "[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]",
            "[2001:db8::1]",
        ] {
            assert_eq!(dst(ok), Ok(()), "{ok}");
        }
        assert!(is_allowed("10.1.2.3".parse().unwrap()));
        assert!(!is_allowed("1.1.1.1".parse().unwrap()));
    }

    #[test]
    fn refused_ranges() {
        assert_eq!(
            dst("8.8.8.8").unwrap_err().to_string(),
            "destination 8.8.8.8 is outside the benchmark, private and documentation ranges (use --allow-public to send there anyway)"
        );
        for (range, first_out) in [
            ("198.17.255.255", "198.17.255.255"),
            ("198.20.0.0", "198.20.0.0"),
            ("172.32.0.0", "172.32.0.0"),
            ("100.128.0.1", "100.128.0.1"),
            ("192.0.3.1", "192.0.3.1"),
            ("[2001:3::1]", "2001:3::1"),
            ("[2001:2:1::1]", "2001:2:1::1"),
            ("[fe80::1]", "fe80::1"),
            ("[2001:db9::1]", "2001:db9::1"),
            ("[::ffff:10.0.0.1]", "::ffff:10.0.0.1"),
        ] {
            let err = dst(range).unwrap_err();
            assert_eq!(
                err,
                WireError::PublicDestination {
                    addr: first_out.parse().unwrap(),
                    in_range: String::new()
                }
            );
        }
    }

    #[test]
    fn straddling_ranges_are_refused() {
        // Starts inside 10/8 and ends outside: names the first address out.
        assert_eq!(
            dst("10.255.255.250-11.0.0.5").unwrap_err().to_string(),
            "destination 11.0.0.0 (in range 10.255.255.250-11.0.0.5) is outside the benchmark, private and documentation ranges (use --allow-public to send there anyway)"
        );
        // Starts outside, ends inside.
        assert_eq!(
            dst("198.17.255.254-198.18.0.5").unwrap_err(),
            WireError::PublicDestination {
                addr: "198.17.255.254".parse().unwrap(),
                in_range: " (in range 198.17.255.254-198.18.0.5)".into()
            }
        );
        // The benchmark /15 ends at 198.19.255.255.
        assert_eq!(
            dst("198.19.255.200-198.20.0.1").unwrap_err(),
            WireError::PublicDestination {
                addr: "198.20.0.0".parse().unwrap(),
                in_range: " (in range 198.19.255.200-198.20.0.1)".into()
            }
        );
        assert_eq!(
            dst("[2001:2:0:ffff:ffff:ffff:ffff:fff0]-[2001:2:1::5]").unwrap_err(),
            WireError::PublicDestination {
                addr: "2001:2:1::".parse().unwrap(),
                in_range: " (in range [2001:2:0:ffff:ffff:ffff:ffff:fff0]-[2001:2:1::5])".into()
            }
        );
    }
}
