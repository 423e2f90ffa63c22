//! `ln Γ(x)` for x > 0, computed as CPython's `math.lgamma` computes it,
//! so that the bit counts of [`super::bits`] agree with FD.io CSIT's
//! `jumpavg` (which runs on CPython) to the last bit: the Lanczos
//! approximation with g = 6.024680040776729583740234375 and the 13-term
//! rational sum of Boost's `lanczos13m53` coefficients. The system's
//! `lgamma` (or musl's) differs from it by an ulp or two, which would
//! show in the last digits of every bit count.

// The coefficients as published, to more digits than an f64 holds: the
// compiler rounds each to its nearest f64, as C's compiler does.
#![allow(clippy::excessive_precision)]

const G: f64 = 6.024680040776729583740234375;

const NUM: [f64; 13] = [
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
];

const DEN: [f64; 13] = [
    0.0,
    39916800.0,
    120543840.0,
    150917976.0,
    105258076.0,
    45995730.0,
    13339535.0,
    2637558.0,
    357423.0,
    32670.0,
    1925.0,
    66.0,
    1.0,
];

/// The rational sum: Horner's rule in x below 5, in 1/x from 5 on (where
/// the powers of x would overflow the accuracy).
fn lanczos_sum(x: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    if x < 5.0 {
        for i in (0..13).rev() {
            num = num * x + NUM[i];
            den = den * x + DEN[i];
        }
    } else {
        for i in 0..13 {
            num = num / x + NUM[i];
            den = den / x + DEN[i];
        }
    }
    num / den
}

/// `ln Γ(x)` for finite x > 0 (the only arguments jumpavg gives: half the
/// size of a group less one).
pub fn lgamma(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    // Γ(1) = Γ(2) = 1 exactly.
    if x == x.floor() && x <= 2.0 {
        return 0.0;
    }
    if x < 1e-20 {
        return -x.ln();
    }
    let r = lanczos_sum(x).ln() - G;
    r + (x - 0.5) * ((x + G - 0.5).ln() - 1.0)
}

#[cfg(test)]
mod tests {
    use super::lgamma;

    #[test]
    fn factorials_and_half_integers() {
        // ln Γ(n) = ln (n−1)!, ln Γ(1/2) = ln √π, ln Γ(5/2) = ln (3√π/4).
        assert_eq!(lgamma(1.0), 0.0);
        assert_eq!(lgamma(2.0), 0.0);
        assert!((lgamma(5.0) - 24f64.ln()).abs() < 1e-14);
        assert!((lgamma(11.0) - 3_628_800f64.ln()).abs() < 1e-12);
        let pi = std::f64::consts::PI;
        assert!((lgamma(0.5) - pi.sqrt().ln()).abs() < 1e-14);
        assert!((lgamma(2.5) - (3.0 * pi.sqrt() / 4.0).ln()).abs() < 1e-14);
        // Γ(x+1) = xΓ(x), from Γ(1/2) up to Γ(100.5).
        let by_recurrence: f64 =
            pi.sqrt().ln() + (0..100).map(|k| (k as f64 + 0.5).ln()).sum::<f64>();
        assert!((lgamma(100.5) - by_recurrence).abs() < 1e-10);
    }

    // lgamma(3) = ln 2, which CPython gets one ulp below LN_2: the point.
    #[allow(clippy::approx_constant)]
    #[test]
    fn bit_for_bit_as_cpython() {
        // Printed by CPython 3.11: python3 -c 'import math;
        // print([math.lgamma(x) for x in (0.5, 1.5, 2.5, 3.0, 7.5, 27.0, 250.5)])'
        // (the system's lgamma gives 0.5723649429247001 for the first).
        let want = [
            (0.5, 0.5723649429247004),
            (1.5, -0.12078223763524543),
            (2.5, 0.2846828704729196),
            (3.0, 0.693147180559945),
            (7.5, 7.534364236758734),
            (27.0, 61.26170176100201),
            (250.5, 1131.284001332255),
        ];
        for (x, v) in want {
            assert_eq!(lgamma(x), v, "lgamma({x})");
        }
    }
}
