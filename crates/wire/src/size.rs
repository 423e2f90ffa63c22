//! Frame sizes and size mixes (README.md, "Conventions": frame sizes, Simple IMIX).
//!
//! A size is the Ethernet frame including its 4-byte FCS, 64 to 9018 bytes.
//! A mix repeats an exact pattern, so that every cycle of it holds exactly
//! the requested proportions:
//!
//! - `64`: one size;
//! - `imix`: Simple IMIX, 64, 594 and 1518 bytes in a 7:4:1 ratio (IP packets
//!   of 40, 576 and 1500 bytes);
//! - `64:7,570:4,1518:1` or `64,128` (weight 1 each): weighted sizes, spread
//!   smoothly through the cycle (smooth weighted round-robin), so 7:4:1 never
//!   sends more than two 64-byte frames in a row;
//! - `aaaag`: an RFC 6985 IMIX genome, sent in the order written. pktlab knows
//!   the letters a-g (64, 128, 256, 512, 1024, 1280, 1518). RFC 6985's other
//!   letters are not Ethernet sizes pktlab can send as written (its `z` is
//!   "the MTU"), so they are refused; give such sizes as a weighted list.

use std::fmt;
use std::str::FromStr;

use crate::WireError;

/// The smallest Ethernet frame, FCS included.
pub const MIN_FRAME_SIZE: u16 = 64;
/// The largest (jumbo) frame pktlab sends, FCS included.
pub const MAX_FRAME_SIZE: u16 = 9018;
/// Bytes of the Ethernet frame check sequence.
pub const FCS_LEN: u16 = 4;

/// Simple IMIX as weighted sizes.
const SIMPLE_IMIX: [(u16, u32); 3] = [(64, 7), (594, 4), (1518, 1)];
/// RFC 6985 size letters a-g.
const GENOME_LETTERS: [(char, u16); 7] = [
    ('a', 64),
    ('b', 128),
    ('c', 256),
    ('d', 512),
    ('e', 1024),
    ('f', 1280),
    ('g', 1518),
];
/// Longest pattern: a bound on memory, far above any useful mix.
const MAX_PATTERN: usize = 1 << 20;

/// A repeating sequence of frame sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeMix {
    spec: MixSpec,
    pattern: Vec<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum MixSpec {
    /// Distinct sizes with weights reduced by their gcd, in the order given.
    Weighted(Vec<(u16, u32)>),
    /// Lowercase genome letters.
    Genome(String),
}

impl SizeMix {
    /// One size.
    pub fn single(size: u16) -> Result<SizeMix, WireError> {
        SizeMix::weighted(&[(u32::from(size), 1)], &size.to_string())
    }

    /// Simple IMIX: 64, 594 and 1518 bytes, 7:4:1.
    pub fn imix() -> SizeMix {
        let entries: Vec<(u32, u32)> = SIMPLE_IMIX
            .iter()
            .map(|&(s, w)| (u32::from(s), w))
            .collect();
        SizeMix::weighted(&entries, "imix").expect("Simple IMIX is valid")
    }

    /// The sizes of one cycle, in sending order.
    pub fn pattern(&self) -> &[u16] {
        &self.pattern
    }

    /// The mean frame size over a cycle.
    pub fn mean(&self) -> f64 {
        let total: u64 = self.pattern.iter().map(|&s| u64::from(s)).sum();
        total as f64 / self.pattern.len() as f64
    }

    pub fn min(&self) -> u16 {
        *self.pattern.iter().min().expect("a mix is never empty")
    }

    pub fn max(&self) -> u16 {
        *self.pattern.iter().max().expect("a mix is never empty")
    }

    /// The distinct sizes, ascending.
    pub fn distinct(&self) -> Vec<u16> {
        let mut sizes = self.pattern.clone();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// True for a single size.
    pub fn is_single(&self) -> bool {
        self.min() == self.max()
    }

    /// Builds a weighted mix from `(size, weight)` pairs; `text` names it in errors.
    fn weighted(entries: &[(u32, u32)], text: &str) -> Result<SizeMix, WireError> {
        let invalid = |reason: String| WireError::InvalidSize {
            text: text.to_string(),
            reason,
        };
        let mut sizes: Vec<(u16, u32)> = Vec::with_capacity(entries.len());
        for &(size, weight) in entries {
            let size = check_size(size)?;
            if weight == 0 {
                return Err(invalid(format!("size {size} has weight 0")));
            }
            if sizes.iter().any(|&(s, _)| s == size) {
                return Err(invalid(format!("size {size} appears twice")));
            }
            sizes.push((size, weight));
        }
        let g = sizes.iter().fold(0, |g, &(_, w)| gcd(g, w));
        for entry in sizes.iter_mut() {
            entry.1 /= g;
        }
        let total: u64 = sizes.iter().map(|&(_, w)| u64::from(w)).sum();
        if total > MAX_PATTERN as u64 {
            return Err(invalid(format!(
                "the weights add up to {total} frames per cycle, more than {MAX_PATTERN}"
            )));
        }
        let pattern = smooth_pattern(&sizes, total as usize);
        Ok(SizeMix {
            spec: MixSpec::Weighted(sizes),
            pattern,
        })
    }

    fn genome(text: &str) -> Result<SizeMix, WireError> {
        let letters = text.to_ascii_lowercase();
        if letters.len() > MAX_PATTERN {
            return Err(WireError::InvalidSize {
                text: text.to_string(),
                reason: format!("a genome of more than {MAX_PATTERN} letters"),
            });
        }
        let mut pattern = Vec::with_capacity(letters.len());
        for c in letters.chars() {
            let size = GENOME_LETTERS
                .iter()
                .find(|&&(l, _)| l == c)
                .map(|&(_, s)| s);
            pattern.push(size.ok_or_else(|| WireError::InvalidSize {
                text: text.to_string(),
                reason: format!(
                    "unknown genome letter '{c}': pktlab knows RFC 6985's a-g (64, 128, 256, 512, 1024, 1280, 1518 bytes); give other sizes as a list such as 64:7,9018:1"
                ),
            })?);
        }
        Ok(SizeMix {
            spec: MixSpec::Genome(letters),
            pattern,
        })
    }
}

/// Checks one frame size; sizes 60-63 get a hint about the FCS.
pub fn check_size(size: u32) -> Result<u16, WireError> {
    match size {
        60..=63 => Err(WireError::FrameSizeWithoutFcs {
            size,
            plus_fcs: size + u32::from(FCS_LEN),
        }),
        s if s < u32::from(MIN_FRAME_SIZE) || s > u32::from(MAX_FRAME_SIZE) => {
            Err(WireError::FrameSizeRange(s))
        }
        s => Ok(s as u16),
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Smooth weighted round-robin (as nginx balances upstreams): each step every
/// size earns its weight, the richest is sent and pays the total. Over
/// `total` steps each size is sent exactly `weight` times, evenly spread.
fn smooth_pattern(sizes: &[(u16, u32)], total: usize) -> Vec<u16> {
    let mut credit = vec![0i64; sizes.len()];
    let mut pattern = Vec::with_capacity(total);
    for _ in 0..total {
        let mut best = 0;
        for (i, &(_, weight)) in sizes.iter().enumerate() {
            credit[i] += i64::from(weight);
            if credit[i] > credit[best] {
                best = i;
            }
        }
        credit[best] -= total as i64;
        pattern.push(sizes[best].0);
    }
    pattern
}

impl FromStr for SizeMix {
    type Err = WireError;

    /// `64`, `imix`, `64:7,570:4,1518:1`, `64,128` or a genome such as `aaaag`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.eq_ignore_ascii_case("imix") {
            return Ok(SizeMix::imix());
        }
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphabetic()) {
            return SizeMix::genome(text);
        }
        let invalid = |reason: String| WireError::InvalidSize {
            text: text.to_string(),
            reason,
        };
        let number = |part: &str, what: &str| -> Result<u32, WireError> {
            let digits =
                !part.is_empty() && part.len() <= 9 && part.bytes().all(|b| b.is_ascii_digit());
            if digits {
                Ok(part.parse().expect("at most 9 digits"))
            } else {
                Err(invalid(format!(
                    "'{part}' is not a {what}: use a size in bytes (64-9018), imix, a list such as 64:7,570:4,1518:1 or an RFC 6985 genome such as aaaag"
                )))
            }
        };
        let mut entries = Vec::new();
        for item in text.split(',') {
            let (size, weight) = match item.split_once(':') {
                Some((size, weight)) => (number(size, "size")?, number(weight, "weight")?),
                None => (number(item, "size")?, 1),
            };
            entries.push((size, weight));
        }
        SizeMix::weighted(&entries, text)
    }
}

impl fmt::Display for SizeMix {
    /// Canonical: `64`, `imix`, `64,128` (equal weights), `64:7,570:4,1518:1`,
    /// or the genome's letters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.spec {
            MixSpec::Genome(letters) => f.write_str(letters),
            MixSpec::Weighted(sizes) if sizes[..] == SIMPLE_IMIX[..] => f.write_str("imix"),
            MixSpec::Weighted(sizes) => {
                let unweighted = sizes.iter().all(|&(_, w)| w == 1);
                for (i, &(size, weight)) in sizes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    if unweighted {
                        write!(f, "{size}")?;
                    } else {
                        write!(f, "{size}:{weight}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(text: &str) -> SizeMix {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn err(text: &str) -> String {
        text.parse::<SizeMix>().unwrap_err().to_string()
    }

    fn count(m: &SizeMix, size: u16) -> usize {
        m.pattern().iter().filter(|&&s| s == size).count()
    }

    #[test]
    fn single_sizes() {
        for size in [64u16, 128, 1518, 9018] {
            let m = mix(&size.to_string());
            assert_eq!(m.pattern(), &[size]);
            assert_eq!((m.min(), m.max(), m.mean()), (size, size, f64::from(size)));
            assert!(m.is_single());
            assert_eq!(m.to_string(), size.to_string());
            assert_eq!(m, SizeMix::single(size).unwrap());
        }
    }

    #[test]
    fn simple_imix_is_exactly_7_4_1_and_smooth() {
        let m = mix("imix");
        // Smooth weighted round-robin by hand (ties go to the first size).
        assert_eq!(
            m.pattern(),
            &[64, 594, 64, 64, 594, 64, 1518, 64, 594, 64, 594, 64]
        );
        assert_eq!((count(&m, 64), count(&m, 594), count(&m, 1518)), (7, 4, 1));
        assert_eq!(m.mean(), 4342.0 / 12.0);
        assert_eq!((m.min(), m.max()), (64, 1518));
        assert_eq!(m.distinct(), vec![64, 594, 1518]);
        assert_eq!(m.to_string(), "imix");
        assert_eq!(mix("IMIX"), m);
        assert_eq!(mix("64:7,594:4,1518:1"), m);
        assert_eq!(SizeMix::imix(), m);
    }

    #[test]
    fn weighted_lists() {
        let m = mix("64:7,570:4,1518:1");
        assert_eq!(m.pattern().len(), 12);
        assert_eq!((count(&m, 64), count(&m, 570), count(&m, 1518)), (7, 4, 1));
        assert_eq!(m.to_string(), "64:7,570:4,1518:1");
        assert_eq!(mix(&m.to_string()), m);
        let m = mix("64,128");
        assert_eq!(m.pattern(), &[64, 128]);
        assert_eq!(m.to_string(), "64,128");
        // Weights are reduced by their gcd: 2:2 is 1:1, 64:5 is just 64.
        assert_eq!(mix("64:2,128:2"), m);
        assert_eq!(mix("64:5"), mix("64"));
        let m = mix("64:50,128:30,256:15,1518:5");
        assert_eq!(m.pattern().len(), 20);
        assert_eq!(m.to_string(), "64:10,128:6,256:3,1518:1");
        let m = mix("1518:1,64:3");
        assert_eq!(m.pattern(), &[64, 1518, 64, 64]);
        assert_eq!(m.to_string(), "1518:1,64:3");
        assert_eq!(m.distinct(), vec![64, 1518]);
    }

    #[test]
    fn weighted_lists_are_spread_evenly() {
        // Any window of the cycle (wrapping) holds each size within one of its share.
        let m = mix("64:50,128:30,256:15,1518:4");
        let p = m.pattern();
        assert_eq!(p.len(), 99);
        for (size, weight) in [(64, 50), (128, 30), (256, 15), (1518, 4)] {
            assert_eq!(count(&m, size), weight);
            for window in [10usize, 20, 33] {
                for start in 0..p.len() {
                    let n = (0..window)
                        .filter(|k| p[(start + k) % p.len()] == size)
                        .count() as f64;
                    let share = window as f64 * weight as f64 / 99.0;
                    assert!(
                        (n - share).abs() <= 1.5,
                        "{size} in {window} from {start}: {n} vs {share}"
                    );
                }
            }
        }
    }

    #[test]
    fn genomes() {
        let m = mix("aaaag");
        assert_eq!(m.pattern(), &[64, 64, 64, 64, 1518]);
        assert_eq!(m.mean(), (4.0 * 64.0 + 1518.0) / 5.0);
        assert_eq!(m.to_string(), "aaaag");
        let m = mix("abcdefg");
        assert_eq!(m.pattern(), &[64, 128, 256, 512, 1024, 1280, 1518]);
        assert_eq!(mix("GAA").pattern(), &[1518, 64, 64]);
        assert_eq!(mix("GAA").to_string(), "gaa");
    }

    #[test]
    fn size_errors() {
        assert_eq!(err("20"), "frame size 20 is not between 64 and 9018 bytes");
        assert_eq!(err("0"), "frame size 0 is not between 64 and 9018 bytes");
        assert_eq!(
            err("9019"),
            "frame size 9019 is not between 64 and 9018 bytes"
        );
        assert_eq!(
            err("60"),
            "frame size 60 is below 64: pktlab sizes include the 4-byte FCS (pkt-gen's -l 60 is -l 64)"
        );
        assert_eq!(
            err("62"),
            "frame size 62 is below 64: pktlab sizes include the 4-byte FCS (pkt-gen's -l 62 is -l 66)"
        );
        assert_eq!(
            err("64:7,60:1"),
            "frame size 60 is below 64: pktlab sizes include the 4-byte FCS (pkt-gen's -l 60 is -l 64)"
        );
        assert_eq!(
            err("64:0"),
            "invalid frame size '64:0': size 64 has weight 0"
        );
        assert_eq!(
            err("64,128,64"),
            "invalid frame size '64,128,64': size 64 appears twice"
        );
        let usage = "use a size in bytes (64-9018), imix, a list such as 64:7,570:4,1518:1 or an RFC 6985 genome such as aaaag";
        assert_eq!(
            err(""),
            format!("invalid frame size '': '' is not a size: {usage}")
        );
        assert_eq!(
            err("64,"),
            format!("invalid frame size '64,': '' is not a size: {usage}")
        );
        assert_eq!(
            err("64:x"),
            format!("invalid frame size '64:x': 'x' is not a weight: {usage}")
        );
        assert_eq!(
            err("64b"),
            format!("invalid frame size '64b': '64b' is not a size: {usage}")
        );
        assert_eq!(
            err("-64"),
            format!("invalid frame size '-64': '-64' is not a size: {usage}")
        );
        assert_eq!(
            err("aaah"),
            "invalid frame size 'aaah': unknown genome letter 'h': pktlab knows RFC 6985's a-g (64, 128, 256, 512, 1024, 1280, 1518 bytes); give other sizes as a list such as 64:7,9018:1"
        );
        assert_eq!(
            err("64:1048576,128:1"),
            "invalid frame size '64:1048576,128:1': the weights add up to 1048577 frames per cycle, more than 1048576"
        );
    }

    #[test]
    fn a_cycle_of_exactly_2_pow_20_frames_is_the_largest() {
        let m = mix("64:1048575,128:1");
        assert_eq!(m.pattern().len(), 1 << 20);
        assert_eq!((count(&m, 64), count(&m, 128)), ((1 << 20) - 1, 1));
        let genome = "a".repeat(1 << 20);
        assert_eq!(mix(&genome).pattern().len(), 1 << 20);
        let longer = "a".repeat((1 << 20) + 1);
        assert_eq!(
            err(&longer),
            format!("invalid frame size '{longer}': a genome of more than 1048576 letters")
        );
    }

    #[test]
    fn a_mix_is_not_a_single_size() {
        for text in ["imix", "64,128", "64:7,9018:1", "ag"] {
            assert!(!mix(text).is_single(), "{text}");
        }
    }
}
