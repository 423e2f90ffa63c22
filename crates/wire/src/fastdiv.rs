//! Division by a run-time constant without a divide instruction.
//!
//! Flow indices are split into their address and port digits for every
//! frame; a hardware 32-bit division costs 20-40 cycles, this one a multiply.
//! The method is Lemire, Kaser and Kurz, "Faster remainder by direct
//! computation" (2019): with `m = ceil(2^64 / d)`, `floor(m × n / 2^64)` is
//! exactly `n / d` for every 32-bit `n` and `d`.

/// A divisor with its precomputed reciprocal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastDiv {
    d: u32,
    /// ceil(2^64 / d); 0 for d = 1, which is handled apart (2^64 overflows).
    m: u64,
}

impl FastDiv {
    /// Panics if `d` is 0.
    pub(crate) fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        let m = if d == 1 {
            0
        } else {
            u64::MAX / u64::from(d) + 1
        };
        FastDiv { d, m }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub(crate) fn div_rem(self, n: u32) -> (u32, u32) {
        if self.d == 1 {
            return (n, 0);
        }
        let q = ((u128::from(self.m) * u128::from(n)) >> 64) as u32;
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hardware_division() {
        let mut divisors: Vec<u32> = (1..=300).collect();
        divisors.extend([
            641,
            1000,
            2000,
            2001,
            4096,
            65535,
            65536,
            65537,
            16_777_216,
            0x7fff_ffff,
            u32::MAX - 1,
            u32::MAX,
        ]);
        // A cheap deterministic sequence of numerators (an LCG) plus the edges.
        let mut x: u32 = 12345;
        let mut numerators: Vec<u32> = vec![0, 1, 2, u32::MAX, u32::MAX - 1, 1 << 31, 16_777_215];
        for _ in 0..2000 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            numerators.push(x);
            numerators.push(x >> 8);
        }
        for &d in &divisors {
            let fd = FastDiv::new(d);
            for &n in numerators
                .iter()
                .chain(&[d, d.wrapping_sub(1), d.wrapping_mul(3)])
            {
                assert_eq!(fd.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
