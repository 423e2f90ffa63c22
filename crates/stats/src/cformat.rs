//! printf's `%g` conversion, as C libraries do it.
//!
//! ministat prints every figure with `%g` (`%13.8g` in the table, plain `%g`
//! in the comparisons), and its output must be reproduced byte for byte.
//! Rust's `{:e}` and `{:.N}` are exact and round ties to even, like glibc's
//! and FreeBSD's printf, so `%g` is built on top of them: only the choice
//! between fixed and exponent notation and the trailing-zero removal are ours.

/// `%.{precision}g` of `x`: `precision` significant digits, trailing zeros
/// removed, exponent notation when the exponent is below -4 or at least the
/// precision. NaN prints as `nan` (FreeBSD drops a NaN's sign), infinities as
/// `inf` and `-inf`.
pub fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let precision = precision.max(1);
    let scientific = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("Rust's {:e} output always has an exponent");
    let exponent: i32 = exponent
        .parse()
        .expect("Rust's {:e} exponent is an integer");

    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{}{:02}",
            strip_fraction_zeros(mantissa),
            sign,
            exponent.unsigned_abs()
        )
    } else {
        // Same rounding position as the exponent form: precision - 1 - exponent
        // digits after the point.
        let decimals = (precision as i32 - 1 - exponent) as usize;
        strip_fraction_zeros(&format!("{:.*}", decimals, x)).to_string()
    }
}

/// `%{width}.{precision}g`: `format_g` right-aligned in `width` columns.
pub fn format_g_width(x: f64, width: usize, precision: usize) -> String {
    format!("{:>width$}", format_g(x, precision), width = width)
}

/// Removes trailing zeros after a decimal point, and the point itself if
/// nothing is left after it ("2.500" -> "2.5", "3.000" -> "3", "40" -> "40").
fn strip_fraction_zeros(number: &str) -> &str {
    if !number.contains('.') {
        return number;
    }
    number.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_notation_drops_trailing_zeros() {
        assert_eq!(format_g(2230250.6, 8), "2230250.6");
        assert_eq!(format_g(20946.73, 8), "20946.73");
        assert_eq!(format_g(300.0, 8), "300");
        assert_eq!(format_g(0.0, 6), "0");
        assert_eq!(format_g(-0.0, 6), "-0");
        assert_eq!(format_g(35554.9, 6), "35554.9");
        assert_eq!(format_g(0.0001, 6), "0.0001");
    }

    #[test]
    fn exponent_notation_when_too_large_or_small() {
        assert_eq!(format_g(6004794.6, 6), "6.00479e+06");
        assert_eq!(format_g(4815200.0, 6), "4.8152e+06");
        assert_eq!(format_g(0.00001234, 6), "1.234e-05");
        assert_eq!(format_g(1e100, 6), "1e+100");
        assert_eq!(format_g(123456789.0, 8), "1.2345679e+08");
        assert_eq!(format_g(-1.5e-7, 6), "-1.5e-07");
    }

    #[test]
    fn rounding_can_move_into_exponent_notation() {
        // 999999.5 rounds to 1e+06 at six digits: the exponent is taken after rounding.
        assert_eq!(format_g(999999.5, 6), "1e+06");
        assert_eq!(format_g(99999.95, 6), "99999.9"); // 99999.95 is below the tie in binary
        assert_eq!(format_g(0.000099999999, 6), "0.0001");
    }

    #[test]
    fn exact_ties_round_to_even_like_libc() {
        assert_eq!(format_g(24494912.5, 8), "24494912");
        assert_eq!(format_g(24494913.5, 8), "24494914");
        assert_eq!(format_g(2.5, 1), "2");
        assert_eq!(format_g(0.125, 2), "0.12");
    }

    #[test]
    fn special_values() {
        assert_eq!(format_g(f64::NAN, 8), "nan");
        assert_eq!(format_g(-f64::NAN, 8), "nan");
        assert_eq!(format_g(f64::INFINITY, 8), "inf");
        assert_eq!(format_g(f64::NEG_INFINITY, 8), "-inf");
    }

    #[test]
    fn width_pads_on_the_left() {
        assert_eq!(format_g_width(45711.484, 13, 8), "    45711.484");
        assert_eq!(format_g_width(1.0, 13, 8), "            1");
    }
}
