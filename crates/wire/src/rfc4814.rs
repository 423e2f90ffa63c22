//! RFC 4814 pseudorandom UDP ports.
//!
//! RFC 4814 ("Hash and Stuffing", section 4.5) asks testers to vary the
//! UDP and TCP port numbers pseudorandomly, so that a device that hashes
//! on them (a flow table, RSS, a link aggregate) sees the spread real
//! traffic has: source ports uniformly over 1024-65535, destination ports
//! over 1-49151. Its section 3 asks for repeatable patterns: the same
//! seed gives the same ports.
//!
//! With [`PortMode::Rfc4814`] a stream is an address pair (its sequence
//! numbers stay consecutive), and every frame's two ports are drawn from
//! one 64-bit output of Sebastiano Vigna's SplitMix64: its high half
//! picks the source port, its low half the destination port, each by
//! Lemire's multiply-shift (`(r × n) >> 32`, no division). Each port then
//! has ⌊2³²/n⌋ or ⌈2³²/n⌉ of the 2³² values, a bias below 1 in 65,000.
//!
//! The generator is written by hand rather than taken from a crate because
//! the XDP live-frame generator (crates/io/bpf/xdpgen.c) must draw exactly
//! the same ports in BPF: two multiplications, three shifts and an
//! addition per frame, the same in Rust and in C.

use crate::flow::splitmix64;

/// The source ports RFC 4814 section 4.5 asks for.
pub const SRC_PORTS: std::ops::RangeInclusive<u16> = 1024..=65535;
/// The destination ports RFC 4814 section 4.5 asks for.
pub const DST_PORTS: std::ops::RangeInclusive<u16> = 1..=49151;

const SRC_FIRST: u64 = 1024;
const SRC_COUNT: u64 = 65535 - 1024 + 1;
const DST_FIRST: u64 = 1;
const DST_COUNT: u64 = 49151;

/// SplitMix64's increment (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// How the generator chooses each frame's UDP ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PortMode {
    /// The ports of the source and destination ranges, as flows of the
    /// odometer (pkt-gen's way).
    #[default]
    Ranges,
    /// Pseudorandom ports over RFC 4814's ranges, every frame, from `seed`.
    Rfc4814 { seed: u64 },
}

impl PortMode {
    /// The word of `--ports` and of a campaign's `ports` key.
    pub fn name(&self) -> &'static str {
        match self {
            PortMode::Ranges => "ranges",
            PortMode::Rfc4814 { .. } => "rfc4814",
        }
    }

    /// `ranges` or `rfc4814` (seeded by `seed`).
    pub fn parse(word: &str, seed: u64) -> Result<PortMode, crate::WireError> {
        match word {
            "ranges" => Ok(PortMode::Ranges),
            "rfc4814" => Ok(PortMode::Rfc4814 { seed }),
            other => Err(crate::WireError::Invalid(format!(
                "invalid port choice '{other}': use ranges or rfc4814"
            ))),
        }
    }
}

/// One TX thread's port generator: SplitMix64 from the thread's own
/// starting state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRng {
    state: u64,
}

impl PortRng {
    /// Thread `thread`'s generator for `seed`.
    pub fn new(seed: u64, thread: u32) -> PortRng {
        PortRng {
            state: thread_state(seed, thread),
        }
    }

    /// The state the next draw starts from (what the XDP generator keeps
    /// per CPU).
    pub fn state(&self) -> u64 {
        self.state
    }

    /// The next frame's (source port, destination port).
    #[inline(always)]
    pub fn next_ports(&mut self) -> (u16, u16) {
        ports_of(splitmix64(&mut self.state))
    }
}

/// Thread `thread`'s starting state: the `thread`-th output (from 0) of
/// SplitMix64 seeded with `seed`. The states of different threads are far
/// apart on SplitMix64's one cycle of 2⁶⁴, so their ports differ.
pub fn thread_state(seed: u64, thread: u32) -> u64 {
    let mut state = seed.wrapping_add(u64::from(thread).wrapping_mul(GAMMA));
    splitmix64(&mut state)
}

/// The ports one 64-bit draw gives.
#[inline(always)]
fn ports_of(r: u64) -> (u16, u16) {
    let sport = SRC_FIRST + (((r >> 32) * SRC_COUNT) >> 32);
    let dport = DST_FIRST + (((r & 0xffff_ffff) * DST_COUNT) >> 32);
    (sport as u16, dport as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of Sebastiano Vigna's splitmix64.c for the seed
    /// 1234567 (its published test values): thread t starts at output t.
    #[test]
    fn thread_states_are_splitmix64_outputs() {
        assert_eq!(thread_state(1_234_567, 0), 6457827717110365317);
        assert_eq!(thread_state(1_234_567, 1), 3203168211198807973);
        assert_eq!(thread_state(1_234_567, 4), 16408922859458223821);
    }

    /// Ports by hand: the draw after state 0 is SplitMix64's first output
    /// for seed 0, 0xe220a8397b1dcdaf; high half 0xe220a839 = 3793791033,
    /// 3793791033 × 64512 >> 32 = 56984, + 1024 = 58008; low half
    /// 0x7b1dcdaf = 2065550767, × 49151 >> 32 = 23637, + 1 = 23638.
    #[test]
    fn ports_of_a_draw_by_hand() {
        let mut rng = PortRng { state: 0 };
        assert_eq!(rng.next_ports(), (58008, 23638));
        assert_eq!(rng.state(), GAMMA);
        // The ends of each range come from the ends of the halves.
        assert_eq!(ports_of(0), (1024, 1));
        assert_eq!(ports_of(u64::MAX), (65535, 49151));
    }

    #[test]
    fn words_and_errors() {
        assert_eq!(PortMode::parse("ranges", 9), Ok(PortMode::Ranges));
        assert_eq!(
            PortMode::parse("rfc4814", 9),
            Ok(PortMode::Rfc4814 { seed: 9 })
        );
        assert_eq!(PortMode::Rfc4814 { seed: 9 }.name(), "rfc4814");
        assert_eq!(
            PortMode::parse("random", 1).unwrap_err().to_string(),
            "invalid port choice 'random': use ranges or rfc4814"
        );
    }
}
