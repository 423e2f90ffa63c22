//! The connections of one stateful trial (RFC 9693): N distinct UDP
//! 4-tuples that the Initiator opens from the inside, and the same
//! connections seen from the outside, which the Responder answers.
//!
//! Every connection comes from one inside address, from source port 1024
//! up, to as few outside addresses as hold them (at most 64,512 ports
//! each), on the traffic's destination port. One inside address keeps a
//! source NAT's translation known: Linux's masquerade keeps a source port
//! whenever the translated 4-tuple is free, and with one inside address
//! every translated 4-tuple is as distinct as the original ones. So the
//! Responder answers to the outside address, with the ports unchanged,
//! instead of learning each translated tuple from the frames it receives.
//!
//! The count is rounded up to a product of ports and addresses (at most
//! `addresses - 1` more than asked): both directions are then whole flow
//! sets, each flow sent exactly once, in any order.

use std::net::IpAddr;

use pktlab_trial::traffic::{ReverseRanges, Traffic};
use pktlab_wire::range::{AddrRange, EndpointRange, Family};

use crate::SearchError;

/// The first source port of the Initiator (below it are the ports a NAT
/// treats as privileged).
pub const FIRST_PORT: u16 = 1024;
/// Source ports per outside address.
pub const PORTS_PER_ADDRESS: u64 = 65535 - FIRST_PORT as u64 + 1;
/// The seed of the real test phase's pseudorandom order of connections
/// (fixed: every trial sends the same order, RFC 4814's repeatable
/// pattern).
pub const REAL_TEST_ORDER_SEED: u64 = 9693;
/// At most this many outside addresses.
pub const MAX_ADDRESSES: u64 = 256;
/// The most connections a trial can open.
pub const MAX_CONNECTIONS: u64 = PORTS_PER_ADDRESS * MAX_ADDRESSES;

/// Where the connections go, from a traffic profile: the first address of
/// its sources (the Initiator's), the first address and port of its
/// destinations (the Responder's), and the address the Responder answers
/// to (the inside address, or the DUT's outside address under source NAT).
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoints {
    pub inside: IpAddr,
    pub outside: IpAddr,
    pub outside_port: u16,
    /// The source address the Responder sees: None without NAT.
    pub translated: Option<IpAddr>,
    pub sizes: String,
}

impl Endpoints {
    /// The endpoints of `traffic`, answered to `translated` when a source
    /// NAT rewrites the Initiator's address.
    pub fn of(traffic: &Traffic, translated: Option<IpAddr>) -> Result<Endpoints, SearchError> {
        let parse = |text: &str| {
            text.parse::<EndpointRange>()
                .map_err(|e| SearchError(format!("traffic profile '{}': {e}", traffic.name)))
        };
        let (src, dst) = (parse(&traffic.src)?, parse(&traffic.dst)?);
        if src.family() != dst.family() {
            return Err(SearchError(format!(
                "traffic profile '{}' mixes IPv4 and IPv6",
                traffic.name
            )));
        }
        if let Some(t) = translated {
            if Family::of(t) != src.family() {
                return Err(SearchError(format!(
                    "the translated address {t} is not of the traffic's family ({})",
                    src.family().name()
                )));
            }
        }
        Ok(Endpoints {
            inside: src.addrs.start(),
            outside: dst.addrs.start(),
            outside_port: dst.ports.start,
            translated,
            sizes: traffic.sizes.clone(),
        })
    }
}

/// N connections: `ports` source ports on each of `addresses` outside
/// addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connections {
    pub ports: u64,
    pub addresses: u64,
}

impl Connections {
    /// At least `wanted` connections (at least one), as few more as the
    /// shape allows.
    pub fn at_least(wanted: u64) -> Result<Connections, SearchError> {
        if wanted > MAX_CONNECTIONS {
            return Err(SearchError(format!(
                "{wanted} connections are more than a trial can open ({MAX_CONNECTIONS}: \
                 {PORTS_PER_ADDRESS} source ports to each of {MAX_ADDRESSES} addresses)"
            )));
        }
        let wanted = wanted.max(1);
        let addresses = wanted.div_ceil(PORTS_PER_ADDRESS);
        Ok(Connections {
            ports: wanted.div_ceil(addresses),
            addresses,
        })
    }

    pub fn count(&self) -> u64 {
        self.ports * self.addresses
    }

    /// The Initiator's traffic: inside → outside, one frame per connection.
    pub fn initiator(&self, at: &Endpoints) -> Result<Traffic, SearchError> {
        let last_port = self.last_port();
        let last = self.nth_outside(at.outside, self.addresses - 1)?;
        Ok(Traffic {
            name: "initiator".into(),
            src: format!(
                "{}:{FIRST_PORT}-{}:{last_port}",
                bracketed(at.inside),
                bracketed(at.inside)
            ),
            dst: format!(
                "{}:{p}-{}:{p}",
                bracketed(at.outside),
                bracketed(last),
                p = at.outside_port
            ),
            sizes: at.sizes.clone(),
            rate_pps: None,
            threads: 1,
            rfc4814_seed: None,
            order_seed: None,
            reverse: None,
        })
    }

    /// The Responder's traffic: the same connections answered from the
    /// outside, to the translated address when there is one.
    pub fn responder(&self, at: &Endpoints) -> Result<Traffic, SearchError> {
        let last_port = self.last_port();
        let last = self.nth_outside(at.outside, self.addresses - 1)?;
        let to = at.translated.unwrap_or(at.inside);
        Ok(Traffic {
            name: "responder".into(),
            src: format!(
                "{}:{p}-{}:{p}",
                bracketed(at.outside),
                bracketed(last),
                p = at.outside_port
            ),
            dst: format!(
                "{}:{FIRST_PORT}-{}:{last_port}",
                bracketed(to),
                bracketed(to)
            ),
            sizes: at.sizes.clone(),
            rate_pps: None,
            threads: 1,
            rfc4814_seed: None,
            order_seed: None,
            reverse: None,
        })
    }

    /// The connections' own traffic both ways at once (the throughput
    /// test's real test phase): the Initiator's frames forward, the
    /// Responder's answers as the reverse stream, each direction going
    /// round the connections in a pseudorandom order (RFC 9693 draws the
    /// real test's port numbers pseudorandomly, as RFC 4814 asks, from
    /// the ones the preliminary phase set up).
    pub fn both_ways(&self, at: &Endpoints) -> Result<Traffic, SearchError> {
        let back = self.responder(at)?;
        Ok(Traffic {
            name: "connections".into(),
            order_seed: Some(REAL_TEST_ORDER_SEED),
            reverse: Some(ReverseRanges {
                src: back.src,
                dst: back.dst,
            }),
            ..self.initiator(at)?
        })
    }

    fn last_port(&self) -> u64 {
        u64::from(FIRST_PORT) + self.ports - 1
    }

    fn nth_outside(&self, first: IpAddr, n: u64) -> Result<IpAddr, SearchError> {
        let family = Family::of(first);
        let start = AddrRange::single(first).start_raw();
        let max = match family {
            Family::Inet4 => u128::from(u32::MAX),
            Family::Inet6 => u128::MAX,
        };
        match start.checked_add(u128::from(n)).filter(|r| *r <= max) {
            Some(r) => Ok(family.addr(r)),
            None => Err(SearchError(format!(
                "{} outside addresses from {first} run past the end of the address space",
                n + 1
            ))),
        }
    }
}

fn bracketed(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_wire::flow::{Flow, FlowSet};
    use std::collections::HashSet;

    fn flows(t: &Traffic) -> Vec<Flow> {
        let set = FlowSet::new(t.src.parse().unwrap(), t.dst.parse().unwrap()).unwrap();
        (0..set.count()).map(|i| set.flow(i)).collect()
    }

    fn lab(translated: Option<IpAddr>) -> Endpoints {
        Endpoints::of(&Traffic::inet4(), translated).unwrap()
    }

    #[test]
    fn shapes_by_hand() {
        assert_eq!(
            Connections::at_least(3000).unwrap(),
            Connections {
                ports: 3000,
                addresses: 1
            }
        );
        assert_eq!(Connections::at_least(0).unwrap().count(), 1);
        assert_eq!(Connections::at_least(64512).unwrap().addresses, 1);
        // 64513 = two addresses of 32257 ports: one more than asked.
        let c = Connections::at_least(64513).unwrap();
        assert_eq!((c.ports, c.addresses, c.count()), (32257, 2, 64514));
        assert!(Connections::at_least(MAX_CONNECTIONS + 1).is_err());
    }

    #[test]
    fn the_initiators_ranges() {
        let at = lab(None);
        assert_eq!(at.inside.to_string(), "198.18.10.1");
        let t = Connections::at_least(3000).unwrap().initiator(&at).unwrap();
        assert_eq!(t.src, "198.18.10.1:1024-198.18.10.1:4023");
        assert_eq!(t.dst, "198.19.10.1:2000-198.19.10.1:2000");
        let t = Connections::at_least(100_000)
            .unwrap()
            .initiator(&at)
            .unwrap();
        assert_eq!(t.src, "198.18.10.1:1024-198.18.10.1:51023");
        assert_eq!(t.dst, "198.19.10.1:2000-198.19.10.2:2000");
    }

    #[test]
    fn the_responder_answers_every_connection_once() {
        for translated in [None, Some("198.19.0.203".parse().unwrap())] {
            let at = lab(translated);
            let c = Connections::at_least(70_000).unwrap();
            let out = flows(&c.initiator(&at).unwrap());
            let back = flows(&c.responder(&at).unwrap());
            assert_eq!(out.len() as u64, c.count());
            assert_eq!(back.len(), out.len());
            let to = translated.unwrap_or(at.inside);
            // Each answer is a connection's 4-tuple reversed, with the
            // inside address translated.
            let expected: HashSet<(IpAddr, u16, IpAddr, u16)> =
                out.iter().map(|f| (f.dst, f.dport, to, f.sport)).collect();
            let got: HashSet<(IpAddr, u16, IpAddr, u16)> = back
                .iter()
                .map(|f| (f.src, f.sport, f.dst, f.dport))
                .collect();
            assert_eq!(expected.len(), out.len());
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn both_ways_each_direction_sends_the_connections_tuples() {
        for translated in [None, Some("198.19.0.203".parse().unwrap())] {
            let at = lab(translated);
            let c = Connections::at_least(3000).unwrap();
            let both = c.both_ways(&at).unwrap();
            // Forward: 198.18.10.1, ports 1024 to 4023, to 198.19.10.1:2000.
            let inside: IpAddr = "198.18.10.1".parse().unwrap();
            let outside: IpAddr = "198.19.10.1".parse().unwrap();
            let forward = flows(&both);
            assert_eq!(forward.len(), 3000);
            let want: HashSet<(IpAddr, u16, IpAddr, u16)> =
                (1024..=4023).map(|p| (inside, p, outside, 2000)).collect();
            let got: HashSet<(IpAddr, u16, IpAddr, u16)> = forward
                .iter()
                .map(|f| (f.src, f.sport, f.dst, f.dport))
                .collect();
            assert_eq!(got, want);
            // Reverse: each tuple turned round, to the NAT's address with
            // the ports unchanged.
            let to = translated.unwrap_or(inside);
            let back = flows(&both.reverse_stream().unwrap());
            assert_eq!(back.len(), 3000);
            let want: HashSet<(IpAddr, u16, IpAddr, u16)> =
                (1024..=4023).map(|p| (outside, 2000, to, p)).collect();
            let got: HashSet<(IpAddr, u16, IpAddr, u16)> = back
                .iter()
                .map(|f| (f.src, f.sport, f.dst, f.dport))
                .collect();
            assert_eq!(got, want);
            assert_eq!(both.sizes, "64");
            // Each direction in a pseudorandom order, every connection
            // once per round.
            assert_eq!(both.order_seed, Some(REAL_TEST_ORDER_SEED));
            let back_stream = both.reverse_stream().unwrap();
            for t in [&both, &back_stream] {
                let spec = t
                    .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
                    .unwrap();
                let order = pktlab_wire::flow::FlowOrder::Random {
                    seed: REAL_TEST_ORDER_SEED,
                };
                assert_eq!(spec.order, order);
            }
        }
    }

    /// One round of frames of `t` as the generator writes them, each
    /// decoded by hand from its bytes: (source, source port, destination,
    /// destination port) of Ethernet, IPv4 and UDP.
    fn frames(t: &Traffic) -> Vec<(std::net::Ipv4Addr, u16, std::net::Ipv4Addr, u16)> {
        let spec = t
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        let mut g = pktlab_wire::frame::FrameGen::new(&spec, 0, 1);
        let mut buf = vec![0u8; g.max_len()];
        (0..g.frames_per_cycle())
            .map(|_| {
                let n = g.write_next(&mut buf, 0, 0);
                let b = &buf[..n];
                assert_eq!(&b[12..14], [0x08, 0x00], "not IPv4");
                assert_eq!(b[23], 17, "not UDP");
                let ip =
                    |at: usize| std::net::Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3]);
                let port = |at: usize| u16::from_be_bytes([b[at], b[at + 1]]);
                let udp = 14 + usize::from(b[14] & 0x0f) * 4;
                (ip(26), port(udp), ip(30), port(udp + 2))
            })
            .collect()
    }

    #[test]
    fn both_ways_frames_decoded_carry_each_connection_once_a_round() {
        let at = lab(Some("198.19.0.203".parse().unwrap()));
        let both = Connections::at_least(500).unwrap().both_ways(&at).unwrap();
        let (inside, outside, nat) = (
            "198.18.10.1".parse().unwrap(),
            "198.19.10.1".parse().unwrap(),
            "198.19.0.203".parse().unwrap(),
        );
        let out = frames(&both);
        let back = frames(&both.reverse_stream().unwrap());
        assert_eq!((out.len(), back.len()), (500, 500));
        let want_out: HashSet<_> = (1024..1524).map(|p| (inside, p, outside, 2000)).collect();
        let want_back: HashSet<_> = (1024..1524).map(|p| (outside, 2000, nat, p)).collect();
        assert_eq!(out.iter().copied().collect::<HashSet<_>>(), want_out);
        assert_eq!(back.iter().copied().collect::<HashSet<_>>(), want_back);
        // A pseudorandom order, not the ports one after the other.
        let first: Vec<u16> = out.iter().take(8).map(|f| f.1).collect();
        assert_ne!(first, (1024..1032).collect::<Vec<u16>>());
    }

    #[test]
    fn ipv6_and_bad_endpoints() {
        let at = Endpoints::of(&Traffic::inet6(), None).unwrap();
        let t = Connections::at_least(10).unwrap().initiator(&at).unwrap();
        assert_eq!(t.src, "[2001:2::1]:1024-[2001:2::1]:1033");
        assert_eq!(t.dst, "[2001:2:0:8000::1]:2000-[2001:2:0:8000::1]:2000");
        let e = Endpoints::of(&Traffic::inet6(), Some("198.19.0.203".parse().unwrap()));
        assert_eq!(
            e.unwrap_err().0,
            "the translated address 198.19.0.203 is not of the traffic's family (IPv6)"
        );
        let mut top = Traffic::inet4();
        top.dst = "255.255.255.255:2000".into();
        let at = Endpoints::of(&top, None).unwrap();
        let e = Connections::at_least(70_000).unwrap().initiator(&at);
        assert!(e.unwrap_err().0.contains("run past the end"));
    }
}
