//! MAC addresses as text, and the fixed MACs of a lab.

use pktlab_wire::MacAddr;

/// `02:70:6b:00:00:01` style text (lower-case hex, colons), as
/// [`MacAddr`] prints it.
pub fn format_mac(mac: [u8; 6]) -> String {
    MacAddr(mac).to_string()
}

/// Parses a MAC address by [`MacAddr`]'s rules (six hex bytes, `:` or `-`);
/// `None` for anything else.
pub fn parse_mac(text: &str) -> Option<[u8; 6]> {
    text.parse::<MacAddr>().ok().map(|m| m.octets())
}

/// A locally administered unicast MAC that depends only on `seed` and `id`:
/// `02:h0:h1:h2:h3:id` with `h` the FNV-1a hash of `seed`.
///
/// Lab interfaces get fixed MACs so that saved results (which name MACs, and
/// `pktlab gen -D` commands) stay valid across `lab down` and `lab up`; the
/// hash of the lab prefix keeps two labs' MACs apart.
pub fn derived_mac(seed: &str, id: u8) -> [u8; 6] {
    let h = fnv1a32(seed.as_bytes()).to_be_bytes();
    // 0x02: the "locally administered" bit set, the "multicast" bit clear.
    [0x02, h[0], h[1], h[2], h[3], id]
}

/// 32-bit FNV-1a. Hand-written (five lines) because the value must never
/// change between Rust or crate versions: std's hashers promise no stability.
fn fnv1a32(bytes: &[u8]) -> u32 {
    const OFFSET_BASIS: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    bytes
        .iter()
        .fold(OFFSET_BASIS, |h, &b| (h ^ b as u32).wrapping_mul(PRIME))
}

/// Serializes a MAC as its text form (for `#[serde(serialize_with)]`).
pub(crate) fn serialize_mac<S: serde::Serializer>(mac: &[u8; 6], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_mac(*mac))
}

/// Reads a MAC from its text form (for `#[serde(deserialize_with)]`).
pub(crate) fn deserialize_mac<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[u8; 6], D::Error> {
    let text = <String as serde::Deserialize>::deserialize(d)?;
    parse_mac(&text).ok_or_else(|| serde::de::Error::custom(format!("invalid MAC '{text}'")))
}

/// Reads an optional MAC from its text form or `null`.
pub(crate) fn deserialize_opt_mac<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<[u8; 6]>, D::Error> {
    match <Option<String> as serde::Deserialize>::deserialize(d)? {
        Some(text) => parse_mac(&text)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid MAC '{text}'"))),
        None => Ok(None),
    }
}

/// Serializes an optional MAC as its text form or `null`.
pub(crate) fn serialize_opt_mac<S: serde::Serializer>(
    mac: &Option<[u8; 6]>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match mac {
        Some(mac) => s.serialize_str(&format_mac(*mac)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_reference_values() {
        // Test vectors from the FNV reference (draft-eastlake-fnv).
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn text_round_trip() {
        let mac = [0x02, 0x70, 0x6b, 0x0a, 0xff, 0x01];
        assert_eq!(format_mac(mac), "02:70:6b:0a:ff:01");
        assert_eq!(parse_mac("02:70:6b:0a:ff:01"), Some(mac));
        assert_eq!(parse_mac("02:70:6B:0A:FF:01"), Some(mac));
        assert_eq!(parse_mac("02-70-6b-0a-ff-01"), Some(mac));
        assert_eq!(parse_mac("2:70:6b:a:ff:1"), Some(mac));
        for bad in [
            "",
            "02:70:6b:0a:ff",
            "02:70:6b:0a:ff:01:02",
            "002:70:6b:0a:ff:01",
            "02:70:6b:0a:ff:0g",
            "02:70-6b:0a:ff:01",
            "+2:70:6b:0a:ff:01",
        ] {
            assert_eq!(parse_mac(bad), None, "{bad}");
        }
    }

    #[test]
    fn derived_macs_are_local_unicast_and_stable() {
        let m = derived_mac("pktlab", 1);
        assert_eq!(m[0] & 0x02, 0x02, "locally administered");
        assert_eq!(m[0] & 0x01, 0, "unicast");
        assert_eq!(m[5], 1);
        // fnv1a32("pktlab") = 0x94e4ae2f, computed independently (Python);
        // pinned so that a change, which would make saved results name the
        // wrong MACs, fails here.
        assert_eq!(m, [0x02, 0x94, 0xe4, 0xae, 0x2f, 0x01]);
        assert_eq!(derived_mac("pktlab", 1), m);
        assert_ne!(derived_mac("pktlab2", 1), m);
        assert_ne!(derived_mac("pktlab", 2), m);
    }
}
