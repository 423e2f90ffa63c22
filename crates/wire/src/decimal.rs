//! Exact decimal numbers from the command line (`1.5`, `10`, `0.25`).
//!
//! Counts and durations must not go through `f64`: `1.1k` packets is exactly
//! 1100 and `0.1s` exactly 100 ms. This parser keeps the digits as an integer
//! and a power of ten.

/// `mantissa / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    mantissa: u128,
    scale: u32,
}

/// Most significant digits accepted: keeps `mantissa * 10^9 * 3600` far below u128::MAX.
const MAX_DIGITS: usize = 20;

impl Decimal {
    /// Parses `DIGITS[.DIGITS]`; nothing else (no sign, exponent, spaces, `inf`).
    pub(crate) fn parse(text: &str) -> Option<Decimal> {
        let (int, frac) = match text.split_once('.') {
            Some((int, frac)) => (int, frac),
            None => (text, ""),
        };
        if int.is_empty() || (text.contains('.') && frac.is_empty()) {
            return None;
        }
        let digits = || int.bytes().chain(frac.bytes());
        if !digits().all(|b| b.is_ascii_digit()) || int.len() + frac.len() > MAX_DIGITS {
            return None;
        }
        let mantissa = digits().fold(0u128, |m, b| m * 10 + u128::from(b - b'0'));
        Some(Decimal {
            mantissa,
            scale: frac.len() as u32,
        })
    }

    /// `self × factor` if that is a whole number, else `None`.
    pub(crate) fn times_exact(self, factor: u128) -> Option<u128> {
        let scaled = self.mantissa.checked_mul(factor)?;
        let div = 10u128.pow(self.scale);
        (scaled % div == 0).then_some(scaled / div)
    }

    /// `self × factor`, rounded down.
    pub(crate) fn times_floor(self, factor: u128) -> Option<u128> {
        Some(self.mantissa.checked_mul(factor)? / 10u128.pow(self.scale))
    }

    pub(crate) fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    pub(crate) fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale as i32)
    }
}

/// Splits `123.5kpps` into `("123.5", "kpps")`.
pub(crate) fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_integers_and_fractions() {
        assert_eq!(Decimal::parse("10").unwrap().times_exact(1), Some(10));
        assert_eq!(Decimal::parse("1.5").unwrap().times_exact(1000), Some(1500));
        assert_eq!(
            Decimal::parse("0.1").unwrap().times_exact(1_000_000_000),
            Some(100_000_000)
        );
        assert_eq!(Decimal::parse("1.2345").unwrap().times_exact(1000), None);
        assert_eq!(
            Decimal::parse("1.2345").unwrap().times_floor(1000),
            Some(1234)
        );
        assert_eq!(Decimal::parse("12.5").unwrap().to_f64(), 12.5);
        assert!(Decimal::parse("0.000").unwrap().is_zero());
    }

    #[test]
    fn refuses_other_syntax() {
        for bad in [
            "",
            ".",
            ".5",
            "5.",
            "1.2.3",
            "-1",
            "+1",
            "1e3",
            "inf",
            "NaN",
            " 1",
            "1_000",
            "123456789012345678901",
        ] {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn splits_number_and_unit() {
        assert_eq!(split_number("1.5Mpps"), ("1.5", "Mpps"));
        assert_eq!(split_number("100%"), ("100", "%"));
        assert_eq!(split_number("30"), ("30", ""));
        assert_eq!(split_number("fast"), ("", "fast"));
        assert_eq!(split_number("-5"), ("", "-5"));
    }
}
