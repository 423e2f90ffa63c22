//! Number parsing with the C library's rules, for ministat-compatible input.
//!
//! ministat accepts a data token when `strtod(3)` consumes all of it, and its
//! `-C` and `-w` arguments when `strtol(3)` does. Rust's `parse` accepts a
//! different language (no hex floats, no leading blanks, no "nan(...)"), so the
//! grammar is checked here and only the decimal conversion itself, which Rust
//! rounds correctly like libc, is delegated to `str::parse`.

/// The bytes C's `isspace` accepts in the C locale.
pub fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The value of `token` if `strtod` would convert the whole of it: optional
/// leading blanks, a sign, then a decimal number with optional exponent, a
/// hexadecimal number with optional binary exponent, `inf`/`infinity` or
/// `nan`/`nan(chars)` (case-insensitive).
pub fn parse_c_double(token: &[u8]) -> Option<f64> {
    let start = token.iter().position(|&b| !is_c_space(b))?;
    let body = &token[start..];
    let (negative, unsigned) = match body.first()? {
        b'-' => (true, &body[1..]),
        b'+' => (false, &body[1..]),
        _ => (false, body),
    };
    let magnitude = if let Some(hex) = strip_prefix_ignore_case(unsigned, b"0x") {
        parse_hex_float(hex)?
    } else if unsigned.eq_ignore_ascii_case(b"inf") || unsigned.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else if is_c_nan(unsigned) {
        f64::NAN
    } else {
        parse_decimal(unsigned)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// The value of `text` if `strtol(text, &end, 10)` leaves nothing behind.
///
/// Like C: leading blanks and a sign are allowed, an empty string is 0 (no
/// conversion, but nothing is left either), and values beyond `i64` saturate.
pub fn parse_c_long(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !is_c_space(b))
        .unwrap_or(bytes.len());
    let body = &bytes[start..];
    if body.is_empty() {
        // Blank-only input: strtol converts nothing and leaves the end pointer
        // at the start, which is not the end unless the string was empty.
        return if bytes.is_empty() { Some(0) } else { None };
    }
    let (negative, digits) = match body[0] {
        b'-' => (true, &body[1..]),
        b'+' => (false, &body[1..]),
        _ => (false, body),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: i64 = 0;
    for &digit in digits {
        let digit = i64::from(digit - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(digit)
        } else {
            value.saturating_mul(10).saturating_add(digit)
        };
    }
    Some(value)
}

fn strip_prefix_ignore_case<'a>(bytes: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix) {
        Some(&bytes[prefix.len()..])
    } else {
        None
    }
}

/// "nan" or "nan(" [A-Za-z0-9_]* ")".
fn is_c_nan(bytes: &[u8]) -> bool {
    let Some(rest) = strip_prefix_ignore_case(bytes, b"nan") else {
        return false;
    };
    match rest {
        [] => true,
        [b'(', inner @ .., b')'] => inner
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_'),
        _ => false,
    }
}

/// digits [. digits] [e [sign] digits], at least one mantissa digit.
fn parse_decimal(bytes: &[u8]) -> Option<f64> {
    let int_len = count_while(bytes, u8::is_ascii_digit);
    let mut pos = int_len;
    let mut frac_len = 0;
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        frac_len = count_while(&bytes[pos..], u8::is_ascii_digit);
        pos += frac_len;
    }
    if int_len + frac_len == 0 {
        return None;
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(bytes.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let exp_len = count_while(&bytes[pos..], u8::is_ascii_digit);
        if exp_len == 0 {
            return None;
        }
        pos += exp_len;
    }
    if pos != bytes.len() {
        return None;
    }
    // The grammar above is a subset of what Rust's parser accepts.
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// hexdigits [. hexdigits] [p [sign] digits], after the "0x".
fn parse_hex_float(bytes: &[u8]) -> Option<f64> {
    // Keep 120 bits of mantissa; anything further only matters as a sticky
    // bit for rounding, which we keep in the lowest bit.
    let mut mantissa: u128 = 0;
    let mut kept_bits = 0u32;
    let mut sticky = false;
    let mut scale: i64 = 0; // power of two applied to `mantissa`
    let mut digits = 0usize;
    let mut pos = 0;
    let mut seen_point = false;
    while let Some(&b) = bytes.get(pos) {
        if b == b'.' && !seen_point {
            seen_point = true;
            pos += 1;
            continue;
        }
        let Some(nibble) = (b as char).to_digit(16) else {
            break;
        };
        digits += 1;
        if kept_bits <= 116 {
            mantissa = (mantissa << 4) | u128::from(nibble);
            if mantissa != 0 {
                kept_bits += 4;
            }
            if seen_point {
                scale -= 4;
            }
        } else {
            sticky |= nibble != 0;
            if !seen_point {
                scale += 4;
            }
        }
        pos += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(bytes.get(pos), Some(b'p' | b'P')) {
        pos += 1;
        let sign_len = usize::from(matches!(bytes.get(pos), Some(b'+' | b'-')));
        let exp_digits = &bytes[pos + sign_len..];
        if exp_digits.is_empty() || !exp_digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let text = std::str::from_utf8(&bytes[pos..]).ok()?;
        let exponent: i64 = text.parse().unwrap_or(if text.starts_with('-') {
            i64::MIN / 2
        } else {
            i64::MAX / 2
        });
        scale = scale.saturating_add(exponent);
        pos = bytes.len();
    }
    if pos != bytes.len() {
        return None;
    }
    if sticky {
        mantissa |= 1;
    }
    // u128 -> f64 rounds to nearest even; the power of two is exact unless the
    // result leaves the normal range.
    let value = mantissa as f64;
    let scale = scale.clamp(-3000, 3000) as i32;
    Some(scale_by_power_of_two(value, scale))
}

fn scale_by_power_of_two(mut value: f64, mut exponent: i32) -> f64 {
    // Step in chunks that stay within f64's exponent range.
    while exponent > 1000 {
        value *= 2f64.powi(1000);
        exponent -= 1000;
    }
    while exponent < -1000 {
        value *= 2f64.powi(-1000);
        exponent += 1000;
    }
    value * 2f64.powi(exponent)
}

fn count_while(bytes: &[u8], pred: impl Fn(&u8) -> bool) -> usize {
    bytes.iter().take_while(|b| pred(b)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Option<f64> {
        parse_c_double(text.as_bytes())
    }

    #[test]
    fn decimal_forms_strtod_accepts() {
        assert_eq!(d("12"), Some(12.0));
        assert_eq!(d("-12.5"), Some(-12.5));
        assert_eq!(d("+3"), Some(3.0));
        assert_eq!(d("1."), Some(1.0));
        assert_eq!(d(".5"), Some(0.5));
        assert_eq!(d("1e3"), Some(1000.0));
        assert_eq!(d("2.5E-1"), Some(0.25));
        assert_eq!(d("  7"), Some(7.0));
        assert_eq!(d("7586270.5"), Some(7586270.5));
        assert_eq!(d("1e400"), Some(f64::INFINITY));
    }

    #[test]
    fn tokens_strtod_leaves_something_behind_are_rejected() {
        for bad in [
            "", " ", "abc", "12abc", "1e", "1e+", ".", "-", "+.", "1.2.3", "12 ", "0x", "1,5",
            "--1",
        ] {
            assert_eq!(d(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn infinities_and_nans() {
        assert_eq!(d("inf"), Some(f64::INFINITY));
        assert_eq!(d("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(d("NaN").unwrap().is_nan());
        assert!(d("nan(0x1_f)").unwrap().is_nan());
        assert_eq!(d("nan("), None);
        assert_eq!(d("infin"), None);
    }

    #[test]
    fn hexadecimal_floats() {
        assert_eq!(d("0x10"), Some(16.0));
        assert_eq!(d("0x1p3"), Some(8.0));
        assert_eq!(d("-0X1.8p1"), Some(-3.0));
        assert_eq!(d("0x.8"), Some(0.5));
        assert_eq!(d("0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(d("0x1p"), None);
        assert_eq!(d("0xg"), None);
    }

    #[test]
    fn strtol_rules() {
        assert_eq!(parse_c_long("74"), Some(74));
        assert_eq!(parse_c_long(" -3"), Some(-3));
        assert_eq!(parse_c_long("+9"), Some(9));
        assert_eq!(parse_c_long(""), Some(0));
        assert_eq!(parse_c_long("  "), None);
        assert_eq!(parse_c_long("7x"), None);
        assert_eq!(parse_c_long("1.5"), None);
        assert_eq!(parse_c_long("-"), None);
        assert_eq!(parse_c_long("99999999999999999999999"), Some(i64::MAX));
    }
}
