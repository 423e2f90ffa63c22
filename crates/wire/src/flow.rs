//! Flows: every combination of a source and a destination endpoint, in a
//! fixed order, and how TX threads share them.
//!
//! The order is pkt-gen's odometer (its `update_ip()`): the source port turns
//! fastest, then the source address, then the destination port, and the
//! destination address slowest. Flow index `i` is therefore
//! `sport + nsport × (saddr + nsaddr × (dport + ndport × daddr))`, each term
//! counted from the start of its range. The flow index is also the stream id
//! of the test payload, so there are at most [`MAX_FLOWS`] flows.

use std::net::IpAddr;

use crate::fastdiv::FastDiv;
use crate::range::{addr_raw, EndpointRange, Family};
use crate::WireError;

/// The stream id in the test payload is 24 bits.
pub const MAX_FLOWS: u32 = 1 << 24;

/// The built-in lab's source range (as in BSDRP's forwarding lab): 20 addresses, port 2000.
pub const LAB_SRC_V4: &str = "198.18.10.1:2000-198.18.10.20";
/// The built-in lab's destination range: 100 addresses, port 2000 (2000 flows).
pub const LAB_DST_V4: &str = "198.19.10.1:2000-198.19.10.100";
/// The IPv6 counterpart of [`LAB_SRC_V4`].
pub const LAB_SRC_V6: &str = "[2001:2::1]:2000-[2001:2::14]:2000";
/// The IPv6 counterpart of [`LAB_DST_V4`].
pub const LAB_DST_V6: &str = "[2001:2:0:8000::1]:2000-[2001:2:0:8000::64]:2000";

/// One flow: a UDP 4-tuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flow {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
}

/// A flow with its addresses as integers, for the generator's hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawFlow {
    pub(crate) src: u128,
    pub(crate) dst: u128,
    pub(crate) sport: u16,
    pub(crate) dport: u16,
}

/// The flows between a source and a destination range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSet {
    src: EndpointRange,
    dst: EndpointRange,
    count: u32,
    /// Radices of the three fastest odometer digits: sport, saddr, dport.
    sport_div: FastDiv,
    saddr_div: FastDiv,
    dport_div: FastDiv,
}

impl FlowSet {
    /// All flows from `src` to `dst`. Both must be of one family, and there
    /// must be at most [`MAX_FLOWS`] flows.
    pub fn new(src: EndpointRange, dst: EndpointRange) -> Result<FlowSet, WireError> {
        if src.family() != dst.family() {
            return Err(WireError::MixedFamilies {
                src: src.to_string(),
                src_family: src.family().name(),
                dst: dst.to_string(),
                dst_family: dst.family().name(),
            });
        }
        for r in [&src, &dst] {
            if r.ports.count() == 0 {
                return Err(WireError::Invalid(format!(
                    "port range {}-{} is empty",
                    r.ports.start, r.ports.end
                )));
            }
        }
        let count = src.count().saturating_mul(dst.count());
        if count > u128::from(MAX_FLOWS) {
            return Err(WireError::TooManyFlows {
                count,
                max: MAX_FLOWS,
                src: src.to_string(),
                dst: dst.to_string(),
            });
        }
        // Every factor is at most MAX_FLOWS now, so the u32 casts are exact.
        Ok(FlowSet {
            src,
            dst,
            count: count as u32,
            sport_div: FastDiv::new(src.ports.count()),
            saddr_div: FastDiv::new(src.addrs.count() as u32),
            dport_div: FastDiv::new(dst.ports.count()),
        })
    }

    /// The built-in lab's 2000 flows ([`LAB_SRC_V4`] → [`LAB_DST_V4`] or the IPv6 pair).
    pub fn lab(family: Family) -> FlowSet {
        let (src, dst) = match family {
            Family::Inet4 => (LAB_SRC_V4, LAB_DST_V4),
            Family::Inet6 => (LAB_SRC_V6, LAB_DST_V6),
        };
        let parse = |s: &str| {
            s.parse::<EndpointRange>()
                .expect("lab range constant parses")
        };
        FlowSet::new(parse(src), parse(dst)).expect("lab flows are valid")
    }

    /// How many flows: source addresses × source ports × destination addresses × destination ports.
    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn family(&self) -> Family {
        self.src.family()
    }

    pub fn src(&self) -> &EndpointRange {
        &self.src
    }

    pub fn dst(&self) -> &EndpointRange {
        &self.dst
    }

    /// The flow with index `index` in odometer order. Panics if `index >= count()`.
    pub fn flow(&self, index: u32) -> Flow {
        let raw = self.flow_raw(index);
        let family = self.family();
        Flow {
            src: family.addr(raw.src),
            dst: family.addr(raw.dst),
            sport: raw.sport,
            dport: raw.dport,
        }
    }

    /// The index of `flow`, if it is one of this set's flows.
    pub fn index_of(&self, flow: &Flow) -> Option<u32> {
        let (s, d) = (&self.src, &self.dst);
        let ok = s.addrs.contains(flow.src)
            && d.addrs.contains(flow.dst)
            && (s.ports.start..=s.ports.end).contains(&flow.sport)
            && (d.ports.start..=d.ports.end).contains(&flow.dport);
        if !ok {
            return None;
        }
        // All digits are below their radix, so the sums stay below count().
        let sport = u32::from(flow.sport - s.ports.start);
        let saddr = (addr_raw(flow.src) - s.addrs.start_raw()) as u32;
        let dport = u32::from(flow.dport - d.ports.start);
        let daddr = (addr_raw(flow.dst) - d.addrs.start_raw()) as u32;
        let (nsport, nsaddr, ndport) = (s.ports.count(), s.addrs.count() as u32, d.ports.count());
        Some(sport + nsport * (saddr + nsaddr * (dport + ndport * daddr)))
    }

    /// [`FlowSet::flow`] without building `IpAddr`s.
    #[inline]
    pub(crate) fn flow_raw(&self, index: u32) -> RawFlow {
        assert!(
            index < self.count,
            "flow index {index} out of {} flows",
            self.count
        );
        let (rest, sport) = self.sport_div.div_rem(index);
        let (rest, saddr) = self.saddr_div.div_rem(rest);
        let (daddr, dport) = self.dport_div.div_rem(rest);
        RawFlow {
            src: self.src.addrs.start_raw() + u128::from(saddr),
            dst: self.dst.addrs.start_raw() + u128::from(daddr),
            sport: self.src.ports.start + sport as u16,
            dport: self.dst.ports.start + dport as u16,
        }
    }
}

/// The order in which flows are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowOrder {
    /// Odometer order: 0, 1, 2, ...
    Sequential,
    /// A seeded permutation: every flow exactly once per cycle, the same seed
    /// gives the same order.
    Random { seed: u64 },
}

/// One TX thread's endless walk over its share of the flows.
///
/// The global order is a sequence of positions 0..N, mapped to flow indices
/// (the identity for [`FlowOrder::Sequential`], a permutation for
/// [`FlowOrder::Random`]). Thread `t` of `T` owns the positions `p ≡ t (mod T)`
/// and visits them in increasing order, cycling forever: threads never share
/// a flow, and together they send every flow once per cycle. O(1) memory.
#[derive(Debug, Clone)]
pub struct FlowCursor {
    count: u32,
    first: u32,
    step: u32,
    /// The next position of the global order.
    pos: u32,
    /// Which of this thread's flows `pos` is (0.. flows_owned()).
    slot: u32,
    owned: u32,
    perm: Option<Permutation>,
}

impl FlowCursor {
    /// The cursor of thread `thread` of `nthreads` (0-based).
    ///
    /// Panics if `thread >= nthreads` or if the thread owns no flow
    /// (`thread >= flows.count()`): callers start at most `count()` threads.
    pub fn new(flows: &FlowSet, order: FlowOrder, thread: u32, nthreads: u32) -> FlowCursor {
        assert!(thread < nthreads, "thread {thread} of {nthreads}");
        let count = flows.count();
        assert!(
            thread < count,
            "thread {thread} owns no flow: only {count} flows"
        );
        FlowCursor {
            count,
            first: thread,
            step: nthreads,
            pos: thread,
            slot: 0,
            owned: (count - thread).div_ceil(nthreads),
            perm: match order {
                FlowOrder::Sequential => None,
                FlowOrder::Random { seed } => Some(Permutation::new(count, seed)),
            },
        }
    }

    /// The next flow index.
    #[inline]
    #[allow(clippy::should_implement_trait)] // never ends; an Iterator would suggest otherwise
    pub fn next(&mut self) -> u32 {
        self.next_slot().1
    }

    /// The next flow as `(slot, flow index)`, where `slot` numbers this
    /// thread's flows 0..[`FlowCursor::flows_owned`] in visiting order (a
    /// dense index for per-flow state such as sequence numbers).
    #[inline(always)]
    pub fn next_slot(&mut self) -> (u32, u32) {
        let (pos, slot) = (self.pos, self.slot);
        let next = pos.saturating_add(self.step);
        if next >= self.count {
            self.pos = self.first;
            self.slot = 0;
        } else {
            self.pos = next;
            self.slot = slot + 1;
        }
        let flow = match &self.perm {
            None => pos,
            Some(perm) => perm.apply(pos),
        };
        (slot, flow)
    }

    /// How many flows this thread owns: the length of its cycle.
    pub fn flows_owned(&self) -> u32 {
        self.owned
    }
}

/// A seeded bijection of `0..n`.
///
/// A few rounds of invertible k-bit operations (xor with a key, multiply by
/// an odd key, xorshift) permute `0..2^k`, with `2^k` the power of two at or
/// above `n`. Cycle-walking (apply again until the value is below `n`) turns
/// that into a permutation of `0..n`; since `2^k < 2n`, it takes fewer than two
/// steps on average.
#[derive(Debug, Clone)]
struct Permutation {
    n: u32,
    mask: u32,
    shift: u32,
    xor_keys: [u32; ROUNDS],
    mul_keys: [u32; ROUNDS],
}

const ROUNDS: usize = 4;

impl Permutation {
    fn new(n: u32, seed: u64) -> Permutation {
        let bits = 32 - n.saturating_sub(1).leading_zeros(); // ceil(log2(n))
        let mask = if bits == 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        };
        let mut state = seed;
        let mut keys = [(0u32, 0u32); ROUNDS];
        for key in keys.iter_mut() {
            let r = splitmix64(&mut state);
            *key = (r as u32 & mask, (r >> 32) as u32 | 1);
        }
        Permutation {
            n,
            mask,
            shift: bits.div_ceil(2).max(1),
            xor_keys: keys.map(|k| k.0),
            mul_keys: keys.map(|k| k.1),
        }
    }

    /// One pass of the k-bit bijection.
    #[inline(always)]
    fn mix(&self, mut x: u32) -> u32 {
        for r in 0..ROUNDS {
            x ^= self.xor_keys[r];
            x = x.wrapping_mul(self.mul_keys[r]) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    #[inline]
    fn apply(&self, pos: u32) -> u32 {
        let mut x = self.mix(pos);
        while x >= self.n {
            x = self.mix(x);
        }
        x
    }
}

/// Sebastiano Vigna's SplitMix64: spreads a seed into independent round
/// keys here, and draws RFC 4814 ports in [`crate::rfc4814`].
#[inline(always)]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// SplitMix64's published outputs for the seed 1234567 (Sebastiano
    /// Vigna's splitmix64.c): any change to a constant or a shift shows.
    #[test]
    fn splitmix64_matches_the_reference_outputs() {
        let mut state = 1_234_567;
        let got: Vec<u64> = (0..5).map(|_| splitmix64(&mut state)).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    /// The random order is part of a run's identity (a seed must give the
    /// same frames on every version): these orders come from a separate
    /// Python rewrite of the construction documented on `Permutation`.
    #[test]
    fn seeded_orders_are_stable() {
        let p = Permutation::new(10, 42);
        let order: Vec<u32> = (0..10).map(|i| p.apply(i)).collect();
        assert_eq!(order, [6, 9, 7, 0, 8, 2, 5, 4, 1, 3]);
        let p = Permutation::new(2000, 7);
        let first: Vec<u32> = (0..8).map(|i| p.apply(i)).collect();
        assert_eq!(first, [1346, 833, 1393, 222, 1312, 1357, 1352, 1774]);
    }

    fn set(src: &str, dst: &str) -> FlowSet {
        FlowSet::new(src.parse().unwrap(), dst.parse().unwrap()).unwrap()
    }

    fn tuple(f: Flow) -> (String, u16, String, u16) {
        (f.src.to_string(), f.sport, f.dst.to_string(), f.dport)
    }

    #[test]
    fn odometer_order_by_hand() {
        // 2 source addresses × 3 source ports × 3 destination addresses × 2 destination ports.
        let flows = set("10.0.0.1:100-10.0.0.2:102", "10.1.0.1:200-10.1.0.3:201");
        assert_eq!(flows.count(), 36);
        let want = [
            ("10.0.0.1", 100, "10.1.0.1", 200),
            ("10.0.0.1", 101, "10.1.0.1", 200),
            ("10.0.0.1", 102, "10.1.0.1", 200),
            ("10.0.0.2", 100, "10.1.0.1", 200),
            ("10.0.0.2", 101, "10.1.0.1", 200),
            ("10.0.0.2", 102, "10.1.0.1", 200),
            ("10.0.0.1", 100, "10.1.0.1", 201),
            ("10.0.0.1", 101, "10.1.0.1", 201),
            ("10.0.0.1", 102, "10.1.0.1", 201),
            ("10.0.0.2", 100, "10.1.0.1", 201),
            ("10.0.0.2", 101, "10.1.0.1", 201),
            ("10.0.0.2", 102, "10.1.0.1", 201),
            ("10.0.0.1", 100, "10.1.0.2", 200),
            ("10.0.0.1", 101, "10.1.0.2", 200),
            ("10.0.0.1", 102, "10.1.0.2", 200),
            ("10.0.0.2", 100, "10.1.0.2", 200),
            ("10.0.0.2", 101, "10.1.0.2", 200),
            ("10.0.0.2", 102, "10.1.0.2", 200),
            ("10.0.0.1", 100, "10.1.0.2", 201),
            ("10.0.0.1", 101, "10.1.0.2", 201),
            ("10.0.0.1", 102, "10.1.0.2", 201),
            ("10.0.0.2", 100, "10.1.0.2", 201),
            ("10.0.0.2", 101, "10.1.0.2", 201),
            ("10.0.0.2", 102, "10.1.0.2", 201),
            ("10.0.0.1", 100, "10.1.0.3", 200),
        ];
        for (i, w) in want.iter().enumerate() {
            let got = tuple(flows.flow(i as u32));
            assert_eq!(
                got,
                (w.0.to_string(), w.1, w.2.to_string(), w.3),
                "flow {i}"
            );
        }
        assert_eq!(
            tuple(flows.flow(35)),
            ("10.0.0.2".into(), 102, "10.1.0.3".into(), 201)
        );
        for i in 0..36 {
            assert_eq!(flows.index_of(&flows.flow(i)), Some(i));
        }
        // One field outside its range is enough to be no flow of the set.
        let f = flows.flow(0);
        let outside = [
            Flow {
                src: "10.0.0.3".parse().unwrap(),
                ..f
            },
            Flow { sport: 103, ..f },
            Flow {
                dst: "10.1.0.4".parse().unwrap(),
                ..f
            },
            Flow { dport: 199, ..f },
        ];
        for flow in outside {
            assert_eq!(flows.index_of(&flow), None, "{flow:?}");
        }
    }

    #[test]
    fn lab_ranges_give_2000_distinct_flows() {
        for family in [Family::Inet4, Family::Inet6] {
            let flows = FlowSet::lab(family);
            assert_eq!(flows.count(), 2000);
            assert_eq!(flows.family(), family);
            let all: HashSet<Flow> = (0..2000).map(|i| flows.flow(i)).collect();
            assert_eq!(all.len(), 2000);
            for f in &all {
                assert_eq!((f.sport, f.dport), (2000, 2000));
            }
        }
        let v4 = FlowSet::lab(Family::Inet4);
        assert_eq!(
            tuple(v4.flow(0)),
            ("198.18.10.1".into(), 2000, "198.19.10.1".into(), 2000)
        );
        assert_eq!(
            tuple(v4.flow(1)),
            ("198.18.10.2".into(), 2000, "198.19.10.1".into(), 2000)
        );
        assert_eq!(
            tuple(v4.flow(20)),
            ("198.18.10.1".into(), 2000, "198.19.10.2".into(), 2000)
        );
        assert_eq!(
            tuple(v4.flow(1999)),
            ("198.18.10.20".into(), 2000, "198.19.10.100".into(), 2000)
        );
        let v6 = FlowSet::lab(Family::Inet6);
        assert_eq!(
            tuple(v6.flow(0)),
            ("2001:2::1".into(), 2000, "2001:2:0:8000::1".into(), 2000)
        );
        assert_eq!(
            tuple(v6.flow(1999)),
            ("2001:2::14".into(), 2000, "2001:2:0:8000::64".into(), 2000)
        );
    }

    #[test]
    fn seed_000_firewall_ranges() {
        // 2001 destination ports to one address from one source.
        let flows = set("1.3.3.1", "2.3.3.1:2000-2.3.3.1:4000");
        assert_eq!(flows.count(), 2001);
        assert_eq!(
            tuple(flows.flow(0)),
            ("1.3.3.1".into(), 1234, "2.3.3.1".into(), 2000)
        );
        assert_eq!(
            tuple(flows.flow(2000)),
            ("1.3.3.1".into(), 1234, "2.3.3.1".into(), 4000)
        );
    }

    #[test]
    fn flow_set_errors() {
        let e = FlowSet::new(
            "10.0.0.1".parse().unwrap(),
            "[2001:2::1]:80".parse().unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "source range '10.0.0.1:1234' is IPv4 but destination range '[2001:2::1]:80' is IPv6"
        );
        let ports = crate::range::PortRange { start: 9, end: 8 };
        let mut dst: EndpointRange = "10.1.0.1".parse().unwrap();
        dst.ports = ports;
        let e = FlowSet::new("10.0.0.1".parse().unwrap(), dst).unwrap_err();
        assert_eq!(e.to_string(), "port range 9-8 is empty");
    }

    #[test]
    fn flow_limit_is_2_pow_24() {
        // Exactly 2^24 is allowed, one more source port is not.
        let ok = set("10.0.0.0-10.0.255.255", "10.1.0.1:1-10.1.0.1:256");
        assert_eq!(ok.count(), MAX_FLOWS);
        assert_eq!(ok.index_of(&ok.flow(MAX_FLOWS - 1)), Some(MAX_FLOWS - 1));
        let e = FlowSet::new(
            "10.0.0.0-10.0.255.255".parse().unwrap(),
            "10.1.0.1:1-10.1.0.1:257".parse().unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "16842752 flows from '10.0.0.0:1234-10.0.255.255:1234' to '10.1.0.1:1-10.1.0.1:257' is more than 16777216: the stream id in the test payload is 24 bits"
        );
        // A whole IPv6 /64 saturates rather than overflows.
        let e = FlowSet::new(
            "[2001:2::]-[2001:2::ffff:ffff:ffff:ffff]".parse().unwrap(),
            "2001:2::1".parse().unwrap(),
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("18446744073709551616 flows"),
            "{e}"
        );
    }

    fn cycle(flows: &FlowSet, order: FlowOrder, t: u32, n: u32) -> Vec<u32> {
        let mut c = FlowCursor::new(flows, order, t, n);
        (0..c.flows_owned()).map(|_| c.next()).collect()
    }

    #[test]
    fn one_thread_sequential_cycles() {
        let flows = set("10.0.0.1-10.0.0.5", "10.1.0.1");
        let mut c = FlowCursor::new(&flows, FlowOrder::Sequential, 0, 1);
        let got: Vec<(u32, u32)> = (0..12).map(|_| c.next_slot()).collect();
        let want: Vec<(u32, u32)> = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
            .iter()
            .map(|&i| (i, i))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn threads_partition_the_flows() {
        let flows = FlowSet::lab(Family::Inet4);
        for order in [FlowOrder::Sequential, FlowOrder::Random { seed: 7 }] {
            for nthreads in [2, 3] {
                let mut union = Vec::new();
                for t in 0..nthreads {
                    let mut c = FlowCursor::new(&flows, order, t, nthreads);
                    let owned = c.flows_owned();
                    assert_eq!(owned, (2000 - t).div_ceil(nthreads));
                    let first: Vec<(u32, u32)> = (0..owned).map(|_| c.next_slot()).collect();
                    let second: Vec<(u32, u32)> = (0..owned).map(|_| c.next_slot()).collect();
                    assert_eq!(first, second, "each cycle repeats");
                    for (i, (slot, _)) in first.iter().enumerate() {
                        assert_eq!(*slot, i as u32);
                    }
                    union.extend(first.iter().map(|&(_, f)| f));
                }
                let distinct: HashSet<u32> = union.iter().copied().collect();
                assert_eq!(union.len(), 2000, "{order:?} {nthreads}");
                assert_eq!(distinct.len(), 2000, "disjoint {order:?} {nthreads}");
                assert!(distinct.iter().all(|&f| f < 2000));
            }
        }
        // Sequential: thread t of 3 sends t, t+3, t+6, ...
        assert_eq!(
            &cycle(&flows, FlowOrder::Sequential, 1, 3)[..4],
            &[1, 4, 7, 10]
        );
        assert_eq!(
            cycle(&flows, FlowOrder::Sequential, 2, 3).last(),
            Some(&1997)
        );
        assert_eq!(
            cycle(&flows, FlowOrder::Sequential, 0, 3).last(),
            Some(&1998)
        );
    }

    #[test]
    fn random_order_is_a_seeded_permutation() {
        let flows = FlowSet::lab(Family::Inet4);
        let a = cycle(&flows, FlowOrder::Random { seed: 1 }, 0, 1);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..2000).collect::<Vec<_>>());
        assert_eq!(a, cycle(&flows, FlowOrder::Random { seed: 1 }, 0, 1));
        let b = cycle(&flows, FlowOrder::Random { seed: 2 }, 0, 1);
        assert_ne!(a, b);
        assert_ne!(a, (0..2000).collect::<Vec<_>>());
        // Not sorted nor nearly so: count positions that keep their flow.
        let fixed = a
            .iter()
            .enumerate()
            .filter(|(i, &f)| *i as u32 == f)
            .count();
        assert!(fixed < 20, "{fixed} fixed points");
        // Thread t gets the global order's positions t, t+T, ...
        let t1 = cycle(&flows, FlowOrder::Random { seed: 1 }, 1, 3);
        let want: Vec<u32> = a.iter().skip(1).step_by(3).copied().collect();
        assert_eq!(t1, want);
    }

    #[test]
    fn permutation_of_awkward_sizes() {
        for n in [1, 2, 3, 5, 64, 65, 1000, 4096, 4097, 65537] {
            for seed in [0, 1, u64::MAX] {
                let p = Permutation::new(n, seed);
                let mut seen = vec![false; n as usize];
                for pos in 0..n {
                    let f = p.apply(pos);
                    assert!(!seen[f as usize], "n {n} seed {seed}: {f} twice");
                    seen[f as usize] = true;
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "owns no flow")]
    fn more_threads_than_flows_panics() {
        let flows = set("10.0.0.1", "10.1.0.1-10.1.0.2");
        FlowCursor::new(&flows, FlowOrder::Sequential, 2, 3);
    }
}
