//! An address with a prefix length (`198.18.0.201/24`), as `ip` prints and
//! takes them. Std has no such type and two fields do not warrant a crate.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An IPv4 or IPv6 address and a prefix length valid for its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cidr {
    addr: IpAddr,
    len: u8,
}

impl Cidr {
    /// `None` when `len` is longer than the address (33+ for IPv4, 129+ for IPv6).
    pub fn new(addr: impl Into<IpAddr>, len: u8) -> Option<Cidr> {
        let addr = addr.into();
        (len <= max_len(addr)).then_some(Cidr { addr, len })
    }

    /// A host route's destination: the whole address (/32 or /128).
    pub fn host(addr: impl Into<IpAddr>) -> Cidr {
        let addr = addr.into();
        Cidr {
            addr,
            len: max_len(addr),
        }
    }

    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    pub fn prefix_len(&self) -> u8 {
        self.len
    }

    /// The network: the address with its host bits cleared.
    pub fn network(&self) -> Cidr {
        let addr = match self.addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - self.len as u32).unwrap_or(0);
                IpAddr::from((u32::from(a) & mask).to_be_bytes())
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX.checked_shl(128 - self.len as u32).unwrap_or(0);
                IpAddr::from((u128::from(a) & mask).to_be_bytes())
            }
        };
        Cidr {
            addr,
            len: self.len,
        }
    }

    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }
}

fn max_len(addr: IpAddr) -> u8 {
    if addr.is_ipv4() {
        32
    } else {
        128
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// Not a valid `ADDRESS/LEN` (or a bare address, taken as a host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCidr(pub String);

impl fmt::Display for BadCidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an address/prefix-length: '{}'", self.0)
    }
}

impl std::error::Error for BadCidr {}

impl FromStr for Cidr {
    type Err = BadCidr;

    /// `ADDR/LEN`, or a bare `ADDR` meaning a host (`ip route` prints host
    /// routes that way).
    fn from_str(s: &str) -> Result<Cidr, BadCidr> {
        let bad = || BadCidr(s.to_string());
        match s.split_once('/') {
            Some((addr, len)) => {
                let addr: IpAddr = addr.parse().map_err(|_| bad())?;
                let len: u8 = len.parse().map_err(|_| bad())?;
                Cidr::new(addr, len).ok_or_else(bad)
            }
            None => s.parse::<IpAddr>().map(Cidr::host).map_err(|_| bad()),
        }
    }
}

impl serde::Serialize for Cidr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let c: Cidr = "198.18.0.201/24".parse().unwrap();
        assert_eq!(c.to_string(), "198.18.0.201/24");
        assert_eq!(c.network().to_string(), "198.18.0.0/24");
        let c: Cidr = "2001:2:0:8000::203/49".parse().unwrap();
        assert_eq!(c.network().to_string(), "2001:2:0:8000::/49");
        let c: Cidr = "2001:2::203/49".parse().unwrap();
        assert_eq!(c.network().to_string(), "2001:2::/49");
        let c: Cidr = "2001:2:0:8000::203/64".parse().unwrap();
        assert_eq!(c.network().to_string(), "2001:2:0:8000::/64");
        assert_eq!(
            "10.1.2.3".parse::<Cidr>().unwrap(),
            Cidr::new([10, 1, 2, 3], 32).unwrap()
        );
        assert_eq!("::1".parse::<Cidr>().unwrap().prefix_len(), 128);
        assert_eq!(
            "0.0.0.0/0".parse::<Cidr>().unwrap().network().prefix_len(),
            0
        );
        assert_eq!(
            "10.1.2.3/0".parse::<Cidr>().unwrap().network().to_string(),
            "0.0.0.0/0"
        );
        assert_eq!(
            "10.1.2.3/32".parse::<Cidr>().unwrap().network().to_string(),
            "10.1.2.3/32"
        );
        for bad in [
            "",
            "10.1.2.3/33",
            "::/129",
            "10.1.2/24",
            "10.1.2.3/x",
            "default",
        ] {
            assert_eq!(bad.parse::<Cidr>(), Err(BadCidr(bad.to_string())), "{bad}");
        }
        assert_eq!(
            serde_json::to_string(&"2001:2::201/64".parse::<Cidr>().unwrap()).unwrap(),
            "\"2001:2::201/64\""
        );
    }
}
