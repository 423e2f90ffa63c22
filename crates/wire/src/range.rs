//! Address and port ranges in pkt-gen's syntax.
//!
//! `IP1[:PORT1][-IP2[:PORT2]]`, as netmap's pkt-gen reads its `-s`/`-d`:
//!
//! - the first `-` splits start from end;
//! - an IPv4 endpoint is `a.b.c.d` or `a.b.c.d:port`;
//! - an IPv6 endpoint is `[addr]`, `[addr]:port` or a bare `addr` (no port:
//!   in a bare address every `:` belongs to the address);
//! - the start port defaults to 1234 (pkt-gen's default), the end port to the
//!   start port: `198.18.10.1:2000-198.18.10.20` is port 2000 only, and
//!   `10.0.0.1-10.0.0.2:3000` is ports 1234-3000.
//!
//! Where pktlab differs from pkt-gen:
//! - a range that ends before it starts is an error (pkt-gen swaps the ends
//!   silently), and so are bad addresses and ports (pkt-gen ignores the
//!   errors of `inet_pton` and `strtol`);
//! - ports are decimal only (pkt-gen's `strtol(.., 0)` also takes `0x7d0`);
//! - an IPv6 range is the whole 128-bit interval from start to end. pkt-gen
//!   only counts within one 16-bit group, chosen by a `group@` prefix (the last
//!   group by default), which pktlab does not accept.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::WireError;

/// pkt-gen's port when a range gives none.
pub const DEFAULT_PORT: u16 = 1234;

/// An address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Inet4,
    Inet6,
}

impl Family {
    /// The family of an address.
    pub fn of(addr: IpAddr) -> Family {
        match addr {
            IpAddr::V4(_) => Family::Inet4,
            IpAddr::V6(_) => Family::Inet6,
        }
    }

    /// "IPv4" or "IPv6".
    pub fn name(self) -> &'static str {
        match self {
            Family::Inet4 => "IPv4",
            Family::Inet6 => "IPv6",
        }
    }

    /// The address of `raw` in this family (an IPv4 address is the low 32 bits).
    pub fn addr(self, raw: u128) -> IpAddr {
        match self {
            Family::Inet4 => IpAddr::V4(Ipv4Addr::from(raw as u32)),
            Family::Inet6 => IpAddr::V6(Ipv6Addr::from(raw)),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An address as an integer: IPv4 in the low 32 bits.
pub(crate) fn addr_raw(addr: IpAddr) -> u128 {
    match addr {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// An inclusive range of IPv4 or IPv6 addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddrRange {
    family: Family,
    start: u128,
    end: u128,
}

impl AddrRange {
    /// The addresses from `start` to `end`, both included.
    pub fn new(start: IpAddr, end: IpAddr) -> Result<AddrRange, WireError> {
        let text = || format!("{}-{}", bracketed(start), bracketed(end));
        if Family::of(start) != Family::of(end) {
            return Err(WireError::MixedFamilyInRange { range: text() });
        }
        let (s, e) = (addr_raw(start), addr_raw(end));
        if e < s {
            return Err(WireError::ReversedRange {
                range: text(),
                start: start.to_string(),
                end: end.to_string(),
            });
        }
        Ok(AddrRange {
            family: Family::of(start),
            start: s,
            end: e,
        })
    }

    /// One address.
    pub fn single(addr: IpAddr) -> AddrRange {
        AddrRange {
            family: Family::of(addr),
            start: addr_raw(addr),
            end: addr_raw(addr),
        }
    }

    pub fn family(&self) -> Family {
        self.family
    }

    pub fn start(&self) -> IpAddr {
        self.family.addr(self.start)
    }

    pub fn end(&self) -> IpAddr {
        self.family.addr(self.end)
    }

    /// The first address as an integer (IPv4 in the low 32 bits).
    pub fn start_raw(&self) -> u128 {
        self.start
    }

    /// The last address as an integer (IPv4 in the low 32 bits).
    pub fn end_raw(&self) -> u128 {
        self.end
    }

    /// How many addresses, saturating at `u128::MAX` (only `::/0` has more).
    pub fn count(&self) -> u128 {
        (self.end - self.start).saturating_add(1)
    }

    /// The `i`-th address (0-based), if the range has one.
    pub fn nth(&self, i: u128) -> Option<IpAddr> {
        let raw = self.start.checked_add(i)?;
        (raw <= self.end).then(|| self.family.addr(raw))
    }

    pub fn contains(&self, addr: IpAddr) -> bool {
        Family::of(addr) == self.family && (self.start..=self.end).contains(&addr_raw(addr))
    }
}

impl fmt::Display for AddrRange {
    /// `a` or `a-b`; IPv6 in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", bracketed(self.start()))?;
        if self.end != self.start {
            write!(f, "-{}", bracketed(self.end()))?;
        }
        Ok(())
    }
}

/// An inclusive range of UDP ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortRange {
    pub start: u16,
    pub end: u16,
}

impl PortRange {
    /// The ports from `start` to `end`, both included.
    pub fn new(start: u16, end: u16) -> Result<PortRange, WireError> {
        if end < start {
            return Err(WireError::ReversedRange {
                range: format!("{start}-{end}"),
                start: start.to_string(),
                end: end.to_string(),
            });
        }
        Ok(PortRange { start, end })
    }

    /// One port.
    pub fn single(port: u16) -> PortRange {
        PortRange {
            start: port,
            end: port,
        }
    }

    /// How many ports (0 if `end < start`, which only direct construction allows).
    pub fn count(&self) -> u32 {
        if self.end < self.start {
            0
        } else {
            u32::from(self.end - self.start) + 1
        }
    }
}

/// Addresses and ports, as `-s` and `-d` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndpointRange {
    pub addrs: AddrRange,
    pub ports: PortRange,
}

impl EndpointRange {
    pub fn family(&self) -> Family {
        self.addrs.family
    }

    /// Addresses × ports, saturating.
    pub fn count(&self) -> u128 {
        self.addrs
            .count()
            .saturating_mul(u128::from(self.ports.count()))
    }
}

impl FromStr for EndpointRange {
    type Err = WireError;

    fn from_str(range: &str) -> Result<Self, Self::Err> {
        let (start_text, end_text) = match range.split_once('-') {
            Some((s, e)) => (s, Some(e)),
            None => (range, None),
        };
        let (start, start_port) = parse_endpoint(start_text, range)?;
        let port0 = start_port.unwrap_or(DEFAULT_PORT);
        let (end, port1) = match end_text {
            Some(text) => {
                if text.contains('-') {
                    return Err(WireError::InvalidRange {
                        range: range.to_string(),
                        reason: "more than one '-'",
                    });
                }
                let (end, end_port) = parse_endpoint(text, range)?;
                (end, end_port.unwrap_or(port0))
            }
            None => (start, port0),
        };
        if Family::of(start) != Family::of(end) {
            return Err(WireError::MixedFamilyInRange {
                range: range.to_string(),
            });
        }
        if addr_raw(end) < addr_raw(start) {
            return Err(WireError::ReversedRange {
                range: range.to_string(),
                start: start.to_string(),
                end: end.to_string(),
            });
        }
        if port1 < port0 {
            return Err(WireError::ReversedRange {
                range: range.to_string(),
                start: format!("port {port0}"),
                end: format!("port {port1}"),
            });
        }
        Ok(EndpointRange {
            addrs: AddrRange {
                family: Family::of(start),
                start: addr_raw(start),
                end: addr_raw(end),
            },
            ports: PortRange {
                start: port0,
                end: port1,
            },
        })
    }
}

impl fmt::Display for EndpointRange {
    /// A canonical form that parses back to the same range:
    /// `198.18.10.1:2000-198.18.10.20:2000`, `[2001:2::1]:2000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, p) = (self.addrs, self.ports);
        write!(f, "{}:{}", bracketed(a.start()), p.start)?;
        if a.end != a.start || p.end != p.start {
            write!(f, "-{}:{}", bracketed(a.end()), p.end)?;
        }
        Ok(())
    }
}

/// IPv6 addresses in brackets, so that a port can follow.
fn bracketed(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    }
}

/// One side of a range: an address and maybe a port.
fn parse_endpoint(text: &str, range: &str) -> Result<(IpAddr, Option<u16>), WireError> {
    let bad_addr = |family, addr: &str| WireError::InvalidAddress {
        family,
        text: addr.to_string(),
        range: range.to_string(),
    };
    if let Some(inner) = text.strip_prefix('[') {
        let (addr, rest) = inner.split_once(']').ok_or(WireError::InvalidRange {
            range: range.to_string(),
            reason: "'[' without ']'",
        })?;
        let ip = Ipv6Addr::from_str(addr).map_err(|_| bad_addr("IPv6", addr))?;
        let port = match rest {
            "" => None,
            _ => match rest.strip_prefix(':') {
                Some(port) => Some(parse_port(port, range)?),
                None => {
                    return Err(WireError::InvalidRange {
                        range: range.to_string(),
                        reason: "only ':PORT' may follow ']'",
                    })
                }
            },
        };
        return Ok((IpAddr::V6(ip), port));
    }
    match text.matches(':').count() {
        0 | 1 => {
            let (addr, port) = match text.split_once(':') {
                Some((addr, port)) => (addr, Some(parse_port(port, range)?)),
                None => (text, None),
            };
            let family = if addr.contains('.') { "IPv4" } else { "IP" };
            let ip = Ipv4Addr::from_str(addr).map_err(|_| bad_addr(family, addr))?;
            Ok((IpAddr::V4(ip), port))
        }
        _ => {
            let ip = Ipv6Addr::from_str(text).map_err(|_| bad_addr("IPv6", text))?;
            Ok((IpAddr::V6(ip), None))
        }
    }
}

fn parse_port(text: &str, range: &str) -> Result<u16, WireError> {
    let valid = !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit());
    valid
        .then(|| text.parse::<u16>().ok())
        .flatten()
        .ok_or_else(|| WireError::InvalidPort {
            text: text.to_string(),
            range: range.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> EndpointRange {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn err(text: &str) -> String {
        text.parse::<EndpointRange>().unwrap_err().to_string()
    }

    fn v4(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn families_are_named() {
        assert_eq!(Family::Inet4.to_string(), "IPv4");
        assert_eq!(Family::Inet6.to_string(), "IPv6");
    }

    #[test]
    fn seed_000_ranges() {
        let src = parse("198.18.10.1:2000-198.18.10.20");
        assert_eq!(src.addrs.start(), v4("198.18.10.1"));
        assert_eq!(src.addrs.end(), v4("198.18.10.20"));
        assert_eq!(src.addrs.count(), 20);
        assert_eq!(
            src.ports,
            PortRange {
                start: 2000,
                end: 2000
            }
        );
        assert_eq!(src.count(), 20);
        let dst = parse("198.19.10.1:2000-198.19.10.100");
        assert_eq!(dst.count(), 100);
        assert_eq!(dst.family(), Family::Inet4);
    }

    #[test]
    fn port_ranges() {
        // BSDRP's forwarding-lab firewall test: one address, 2001 destination ports.
        let r = parse("2.3.3.1:2000-2.3.3.1:4000");
        assert_eq!(r.addrs.count(), 1);
        assert_eq!(
            r.ports,
            PortRange {
                start: 2000,
                end: 4000
            }
        );
        assert_eq!(r.ports.count(), 2001);
        assert_eq!(r.count(), 2001);
        // Start without a port: pkt-gen's default 1234 up to the end port.
        let r = parse("10.0.0.1-10.0.0.2:3000");
        assert_eq!(
            r.ports,
            PortRange {
                start: 1234,
                end: 3000
            }
        );
        assert_eq!(parse("10.0.0.1:0").ports, PortRange::single(0));
        assert_eq!(parse("10.0.0.1:65535").ports, PortRange::single(65535));
    }

    #[test]
    fn addresses_without_ports_get_1234() {
        let r = parse("10.0.0.1");
        assert_eq!(r.addrs, AddrRange::single(v4("10.0.0.1")));
        assert_eq!(r.ports, PortRange::single(DEFAULT_PORT));
        assert_eq!(r.count(), 1);
        let r = parse("10.0.0.1-10.0.0.9");
        assert_eq!(r.addrs.count(), 9);
        assert_eq!(r.ports, PortRange::single(1234));
        // Ranges cross octet boundaries.
        assert_eq!(parse("10.0.0.250-10.0.1.5").addrs.count(), 12);
    }

    #[test]
    fn ipv6_forms() {
        let r = parse("[2001:2::1]:2000-[2001:2::ff]:2000");
        assert_eq!(r.family(), Family::Inet6);
        assert_eq!(r.addrs.start(), "2001:2::1".parse::<IpAddr>().unwrap());
        assert_eq!(r.addrs.end(), "2001:2::ff".parse::<IpAddr>().unwrap());
        assert_eq!(r.addrs.count(), 255);
        assert_eq!(r.ports, PortRange::single(2000));
        let r = parse("[2001:2::1]");
        assert_eq!(r.count(), 1);
        assert_eq!(r.ports, PortRange::single(1234));
        let r = parse("2001:2::1");
        assert_eq!(r.addrs, AddrRange::single("2001:2::1".parse().unwrap()));
        assert_eq!(r.ports, PortRange::single(1234));
        let r = parse("2001:2::1-2001:2::1:0");
        assert_eq!(r.addrs.count(), 0x1_0000);
        let r = parse("[2001:2::1]:7-[2001:2::2]:9");
        assert_eq!((r.addrs.count(), r.ports.count(), r.count()), (2, 3, 6));
        // A bare end after a bracketed start keeps the start port.
        let r = parse("[2001:2::1]:2000-2001:2::14");
        assert_eq!((r.addrs.count(), r.ports), (20, PortRange::single(2000)));
    }

    #[test]
    fn display_is_canonical_and_parses_back() {
        for (text, shown) in [
            (
                "198.18.10.1:2000-198.18.10.20",
                "198.18.10.1:2000-198.18.10.20:2000",
            ),
            ("10.0.0.1", "10.0.0.1:1234"),
            ("2.3.3.1:2000-2.3.3.1:4000", "2.3.3.1:2000-2.3.3.1:4000"),
            ("2001:2::1", "[2001:2::1]:1234"),
            (
                "[2001:2::1]:2000-[2001:2::ff]:2000",
                "[2001:2::1]:2000-[2001:2::ff]:2000",
            ),
        ] {
            let r = parse(text);
            assert_eq!(r.to_string(), shown);
            assert_eq!(parse(shown), r);
        }
        assert_eq!(
            parse("10.0.0.1-10.0.0.9").addrs.to_string(),
            "10.0.0.1-10.0.0.9"
        );
    }

    #[test]
    fn addr_range_helpers() {
        let r = AddrRange::new(v4("10.0.0.1"), v4("10.0.0.3")).unwrap();
        assert_eq!(r.nth(0), Some(v4("10.0.0.1")));
        assert_eq!(r.nth(2), Some(v4("10.0.0.3")));
        assert_eq!(r.nth(3), None);
        assert!(r.contains(v4("10.0.0.2")));
        assert!(!r.contains(v4("10.0.0.4")));
        assert!(!r.contains("::a00:2".parse().unwrap()));
        let all: AddrRange = AddrRange::new(
            "::".parse().unwrap(),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff".parse().unwrap(),
        )
        .unwrap();
        assert_eq!(all.count(), u128::MAX);
        assert_eq!(
            AddrRange::new(v4("10.0.0.3"), v4("10.0.0.1"))
                .unwrap_err()
                .to_string(),
            "range '10.0.0.3-10.0.0.1' ends before it starts (10.0.0.1 < 10.0.0.3)"
        );
        assert_eq!(
            AddrRange::new(v4("10.0.0.3"), "::1".parse().unwrap())
                .unwrap_err()
                .to_string(),
            "range '10.0.0.3-[::1]' mixes IPv4 and IPv6 addresses"
        );
        assert_eq!(
            PortRange::new(5, 4).unwrap_err().to_string(),
            "range '5-4' ends before it starts (4 < 5)"
        );
        assert_eq!(PortRange::new(4, 5).unwrap().count(), 2);
        assert_eq!(PortRange { start: 5, end: 4 }.count(), 0);
    }

    #[test]
    fn address_errors() {
        assert_eq!(
            err("300.1.1.1"),
            "invalid IPv4 address '300.1.1.1' in range '300.1.1.1'"
        );
        assert_eq!(
            err("10.0.0.1-10.0.0.256:80"),
            "invalid IPv4 address '10.0.0.256' in range '10.0.0.1-10.0.0.256:80'"
        );
        assert_eq!(err("foo"), "invalid IP address 'foo' in range 'foo'");
        assert_eq!(err(""), "invalid IP address '' in range ''");
        assert_eq!(
            err("-10.0.0.1"),
            "invalid IP address '' in range '-10.0.0.1'"
        );
        assert_eq!(
            err("10.0.0.1-"),
            "invalid IP address '' in range '10.0.0.1-'"
        );
        assert_eq!(
            err("[2001:2::g]:80"),
            "invalid IPv6 address '2001:2::g' in range '[2001:2::g]:80'"
        );
        assert_eq!(
            err("2001:2::g"),
            "invalid IPv6 address '2001:2::g' in range '2001:2::g'"
        );
        assert_eq!(
            err("[10.0.0.1]"),
            "invalid IPv6 address '10.0.0.1' in range '[10.0.0.1]'"
        );
        // pkt-gen's `group@` prefix is not accepted.
        assert_eq!(
            err("7@[2001:2::1]"),
            "invalid IPv6 address '7@[2001:2::1]' in range '7@[2001:2::1]'"
        );
    }

    #[test]
    fn port_errors() {
        assert_eq!(
            err("10.0.0.1:70000"),
            "invalid port '70000' in range '10.0.0.1:70000': use a number from 0 to 65535"
        );
        assert_eq!(
            err("10.0.0.1:"),
            "invalid port '' in range '10.0.0.1:': use a number from 0 to 65535"
        );
        assert_eq!(
            err("10.0.0.1:0x7d0"),
            "invalid port '0x7d0' in range '10.0.0.1:0x7d0': use a number from 0 to 65535"
        );
        // Rust's u16 parser takes a leading `+`; a port is digits only.
        assert_eq!(
            err("10.0.0.1:+80"),
            "invalid port '+80' in range '10.0.0.1:+80': use a number from 0 to 65535"
        );
        assert_eq!(
            err("[2001:2::1]:http"),
            "invalid port 'http' in range '[2001:2::1]:http': use a number from 0 to 65535"
        );
        assert_eq!(
            err("10.0.0.1:100000000"),
            "invalid port '100000000' in range '10.0.0.1:100000000': use a number from 0 to 65535"
        );
    }

    #[test]
    fn shape_errors() {
        assert_eq!(
            err("10.0.0.9-10.0.0.1"),
            "range '10.0.0.9-10.0.0.1' ends before it starts (10.0.0.1 < 10.0.0.9)"
        );
        assert_eq!(
            err("10.0.0.1:4000-10.0.0.1:2000"),
            "range '10.0.0.1:4000-10.0.0.1:2000' ends before it starts (port 2000 < port 4000)"
        );
        assert_eq!(
            err("[2001:2::ff]-[2001:2::1]"),
            "range '[2001:2::ff]-[2001:2::1]' ends before it starts (2001:2::1 < 2001:2::ff)"
        );
        assert_eq!(
            err("10.0.0.1-[2001:2::1]"),
            "range '10.0.0.1-[2001:2::1]' mixes IPv4 and IPv6 addresses"
        );
        assert_eq!(
            err("1.1.1.1-2.2.2.2-3.3.3.3"),
            "invalid range '1.1.1.1-2.2.2.2-3.3.3.3': more than one '-'"
        );
        assert_eq!(
            err("[2001:2::1"),
            "invalid range '[2001:2::1': '[' without ']'"
        );
        assert_eq!(
            err("[2001:2::1]80"),
            "invalid range '[2001:2::1]80': only ':PORT' may follow ']'"
        );
    }
}
