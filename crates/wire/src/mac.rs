//! Ethernet MAC addresses.

use std::fmt;
use std::str::FromStr;

use crate::WireError;

/// A 48-bit Ethernet MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// True for group addresses (the I/G bit, bit 0 of the first byte), which
    /// includes broadcast.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    /// True for 00:00:00:00:00:00.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 6]
    }

    /// The six bytes.
    pub fn octets(&self) -> [u8; 6] {
        self.0
    }
}

impl FromStr for MacAddr {
    type Err = WireError;

    /// Six hex bytes separated by `:` or `-` (one kind throughout), one or two
    /// digits each, any case: `02:00:5e:10:00:01`, `02-00-5E-10-00-01`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || WireError::InvalidMac(text.to_string());
        let sep = if text.contains(':') { ':' } else { '-' };
        let mut out = [0u8; 6];
        let mut parts = text.split(sep);
        for byte in out.iter_mut() {
            let part = parts.next().ok_or_else(bad)?;
            let valid =
                (1..=2).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_hexdigit());
            if !valid {
                return Err(bad());
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(MacAddr(out))
    }
}

impl fmt::Display for MacAddr {
    /// Lowercase, colon-separated: `02:00:5e:10:00:01`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl From<[u8; 6]> for MacAddr {
    fn from(bytes: [u8; 6]) -> Self {
        MacAddr(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_colons_dashes_and_any_case() {
        let want = MacAddr([0x0c, 0xc4, 0x7a, 0xda, 0x3c, 0x11]);
        assert_eq!("0c:c4:7a:da:3c:11".parse::<MacAddr>().unwrap(), want);
        assert_eq!("0C:C4:7A:DA:3C:11".parse::<MacAddr>().unwrap(), want);
        assert_eq!("0c-c4-7a-da-3c-11".parse::<MacAddr>().unwrap(), want);
        assert_eq!("c:c4:7a:da:3c:11".parse::<MacAddr>().unwrap(), want);
    }

    #[test]
    fn displays_lowercase_with_colons() {
        let mac: MacAddr = "00-1B-21-C4-95-7A".parse().unwrap();
        assert_eq!(mac.to_string(), "00:1b:21:c4:95:7a");
        assert_eq!(mac.to_string().parse::<MacAddr>().unwrap(), mac);
    }

    #[test]
    fn refuses_malformed_text() {
        for bad in [
            "",
            "00:1b:21:c4:95",
            "00:1b:21:c4:95:7a:01",
            "00:1b:21:c4:95:7g",
            "00:1b:21-c4:95:7a",
            "001:b:21:c4:95:7a",
            "00::21:c4:95:7a",
            "+0:1b:21:c4:95:7a",
            "001b21c4957a",
        ] {
            let err = bad.parse::<MacAddr>().unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid MAC address '{bad}': use six hex bytes such as 02:00:00:00:00:01")
            );
        }
    }

    #[test]
    fn multicast_and_zero() {
        assert!(MacAddr::BROADCAST.is_multicast());
        assert!("01:00:5e:00:00:01"
            .parse::<MacAddr>()
            .unwrap()
            .is_multicast());
        assert!("33:33:00:00:00:01"
            .parse::<MacAddr>()
            .unwrap()
            .is_multicast());
        assert!(!"02:00:00:00:00:01"
            .parse::<MacAddr>()
            .unwrap()
            .is_multicast());
        assert!(MacAddr::default().is_zero());
        assert!(!MacAddr::BROADCAST.is_zero());
    }
}
