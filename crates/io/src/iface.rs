//! Interface facts: index, MAC, MTU and counters, in the calling thread's
//! network namespace.
//!
//! Nothing here reads `/sys/class/net`: sysfs reflects the namespace it was
//! mounted in, not the thread's. Lookups use ioctls on a socket, and
//! counters an rtnetlink `RTM_GETLINK` query (built and decoded by
//! `netlink-packet-route`, sent through [`crate::netlink`]); sockets belong
//! to the network namespace of the thread that creates them, so a thread
//! that called `setns(CLONE_NEWNET)` sees its new namespace.

use std::io;

use netlink_packet_route::link::{LinkAttribute, LinkMessage};
use netlink_packet_route::RouteNetlinkMessage;

use crate::netlink::{self, RequestError};
use crate::sys;
use crate::IoError;

/// Facts about one network interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iface {
    pub name: String,
    pub index: u32,
    pub mac: [u8; 6],
    pub mtu: u32,
}

/// Looks `name` up in the current thread's network namespace.
pub fn lookup(name: &str) -> Result<Iface, IoError> {
    let index = sys::if_index(name)?;
    let sock = ioctl_socket(name)?;

    let mut ifr = sys::ifreq(name)?;
    sys::ifreq_ioctl(&sock, libc::SIOCGIFHWADDR, &mut ifr)
        .map_err(|e| map_if_err(name, "reading the MAC address", e))?;
    // SAFETY: SIOCGIFHWADDR filled the `ifru_hwaddr` member of the union.
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }

    let mut ifr = sys::ifreq(name)?;
    sys::ifreq_ioctl(&sock, libc::SIOCGIFMTU, &mut ifr)
        .map_err(|e| map_if_err(name, "reading the MTU", e))?;
    // SAFETY: SIOCGIFMTU filled the `ifru_mtu` member of the union.
    let mtu = unsafe { ifr.ifr_ifru.ifru_mtu }.max(0) as u32;

    Ok(Iface {
        name: name.to_string(),
        index,
        mac,
        mtu,
    })
}

/// True when `name` is administratively up (IFF_UP).
pub fn is_up(name: &str) -> Result<bool, IoError> {
    let sock = ioctl_socket(name)?;
    let mut ifr = sys::ifreq(name)?;
    sys::ifreq_ioctl(&sock, libc::SIOCGIFFLAGS, &mut ifr)
        .map_err(|e| map_if_err(name, "reading the flags", e))?;
    // SAFETY: SIOCGIFFLAGS filled the `ifru_flags` member of the union.
    let flags = unsafe { ifr.ifr_ifru.ifru_flags };
    Ok(flags as i32 & libc::IFF_UP != 0)
}

fn ioctl_socket(name: &str) -> Result<std::os::fd::OwnedFd, IoError> {
    // Any socket works for the SIOCGIF* ioctls; AF_UNIX needs no network
    // stack and no privilege, and still answers for its creator's netns.
    sys::socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0)
        .map_err(|e| IoError::sys("opening an ioctl socket", name, e))
}

fn map_if_err(name: &str, what: &str, e: io::Error) -> IoError {
    match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => IoError::NoSuchInterface(name.to_string()),
        _ => IoError::sys(what, name, e),
    }
}

/// Interface counters, as in `ip -s link` (struct rtnl_link_stats64).
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct IfCounters {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub rx_errors: u64,
    pub rx_dropped: u64,
    pub rx_missed_errors: u64,
    pub rx_fifo_errors: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub tx_errors: u64,
    pub tx_dropped: u64,
}

impl IfCounters {
    /// `self - earlier`, field by field, saturating at 0 (counters can be
    /// reset when a driver reloads).
    pub fn delta(&self, earlier: &IfCounters) -> IfCounters {
        IfCounters {
            rx_packets: self.rx_packets.saturating_sub(earlier.rx_packets),
            rx_bytes: self.rx_bytes.saturating_sub(earlier.rx_bytes),
            rx_errors: self.rx_errors.saturating_sub(earlier.rx_errors),
            rx_dropped: self.rx_dropped.saturating_sub(earlier.rx_dropped),
            rx_missed_errors: self
                .rx_missed_errors
                .saturating_sub(earlier.rx_missed_errors),
            rx_fifo_errors: self.rx_fifo_errors.saturating_sub(earlier.rx_fifo_errors),
            tx_packets: self.tx_packets.saturating_sub(earlier.tx_packets),
            tx_bytes: self.tx_bytes.saturating_sub(earlier.tx_bytes),
            tx_errors: self.tx_errors.saturating_sub(earlier.tx_errors),
            tx_dropped: self.tx_dropped.saturating_sub(earlier.tx_dropped),
        }
    }
}

/// Reads `name`'s counters in the calling thread's network namespace with an
/// rtnetlink RTM_GETLINK query (IFLA_STATS64, or IFLA_STATS on old kernels).
pub fn read_counters(name: &str) -> Result<IfCounters, IoError> {
    let index = sys::if_index(name)?;
    let sock = netlink::Socket::open(netlink::NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", name, e))?;
    let mut get = LinkMessage::default();
    get.header.index = index;
    let answers = sock
        .request(RouteNetlinkMessage::GetLink(get), 0)
        .map_err(|e| match e {
            RequestError::Send(e) => IoError::sys("sending a netlink RTM_GETLINK request", name, e),
            RequestError::Recv(e) => {
                IoError::sys("reading the netlink RTM_GETLINK answer", name, e)
            }
            RequestError::Malformed => {
                IoError::Other(format!("malformed netlink answer for interface {name}"))
            }
            RequestError::Kernel(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                IoError::NoSuchInterface(name.to_string())
            }
            RequestError::Kernel(e) => IoError::sys("querying link statistics", name, e),
        })?;
    answers
        .iter()
        .find_map(|m| match m {
            RouteNetlinkMessage::NewLink(link) => link_counters(&link.attributes),
            _ => None,
        })
        .ok_or_else(|| IoError::Other(format!("no link statistics for interface {name}")))
}

/// The counters in a link's attributes: IFLA_STATS64, or IFLA_STATS when
/// the kernel sends only the 32-bit ones.
fn link_counters(attributes: &[LinkAttribute]) -> Option<IfCounters> {
    // Stats64 and Stats share field names but not types; this copies the
    // fields we keep from either.
    macro_rules! counters {
        ($s:expr) => {
            IfCounters {
                rx_packets: u64::from($s.rx_packets),
                rx_bytes: u64::from($s.rx_bytes),
                rx_errors: u64::from($s.rx_errors),
                rx_dropped: u64::from($s.rx_dropped),
                rx_missed_errors: u64::from($s.rx_missed_errors),
                rx_fifo_errors: u64::from($s.rx_fifo_errors),
                tx_packets: u64::from($s.tx_packets),
                tx_bytes: u64::from($s.tx_bytes),
                tx_errors: u64::from($s.tx_errors),
                tx_dropped: u64::from($s.tx_dropped),
            }
        };
    }
    let stats64 = attributes.iter().find_map(|a| match a {
        LinkAttribute::Stats64(s) => Some(counters!(s)),
        _ => None,
    });
    stats64.or_else(|| {
        attributes.iter().find_map(|a| match a {
            LinkAttribute::Stats(s) => Some(counters!(s)),
            _ => None,
        })
    })
}

/// True when this process may open AF_PACKET sockets: effective uid 0, or
/// CAP_NET_RAW (bit 13) in the effective capability set.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    const CAP_NET_RAW: u32 = 13;
    std::fs::read_to_string("/proc/thread-self/status")
        .or_else(|_| std::fs::read_to_string("/proc/self/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_NET_RAW) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::link::{Stats, Stats64};

    #[test]
    fn lookup_loopback() {
        let lo = lookup("lo").unwrap();
        assert_eq!(lo.name, "lo");
        assert!(lo.index >= 1);
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.mtu >= 1500);
        assert!(is_up("lo").is_ok());
    }

    #[test]
    fn bad_names_are_no_such_interface() {
        for n in ["nosuchif0", "", "waytoolonginterfacename", "a\0b"] {
            let e = lookup(n).unwrap_err();
            assert!(matches!(e, IoError::NoSuchInterface(_)), "{n:?}: {e}");
            assert!(e.is_usage());
            let e = read_counters(n).unwrap_err();
            assert!(matches!(e, IoError::NoSuchInterface(_)), "{n:?}: {e}");
        }
    }

    #[test]
    fn counters_of_loopback() {
        let a = read_counters("lo").unwrap();
        let b = read_counters("lo").unwrap();
        assert!(b.rx_packets >= a.rx_packets);
        assert_eq!(a.delta(&b).rx_packets, 0); // saturating
    }

    #[test]
    fn delta_saturates() {
        let a = IfCounters {
            rx_packets: 10,
            tx_bytes: 5,
            ..Default::default()
        };
        let b = IfCounters {
            rx_packets: 3,
            tx_bytes: 9,
            ..Default::default()
        };
        let d = a.delta(&b);
        assert_eq!(d.rx_packets, 7);
        assert_eq!(d.tx_bytes, 0);
    }

    /// struct rtnl_link_stats64 / rtnl_link_stats with fields numbered 1..=24
    /// in their kernel order, native endian.
    fn numbered_stats(width: usize) -> Vec<u8> {
        let mut p = Vec::new();
        for i in 1..=24u64 {
            if width == 8 {
                p.extend_from_slice(&i.to_ne_bytes());
            } else {
                p.extend_from_slice(&(i as u32).to_ne_bytes());
            }
        }
        p
    }

    fn assert_numbered(c: IfCounters) {
        // Kernel order: rx_packets, tx_packets, rx_bytes, tx_bytes,
        // rx_errors, tx_errors, rx_dropped, tx_dropped, multicast,
        // collisions, rx_length_errors, rx_over_errors, rx_crc_errors,
        // rx_frame_errors, rx_fifo_errors (15), rx_missed_errors (16).
        assert_eq!(c.rx_packets, 1);
        assert_eq!(c.tx_packets, 2);
        assert_eq!(c.rx_bytes, 3);
        assert_eq!(c.tx_bytes, 4);
        assert_eq!(c.rx_errors, 5);
        assert_eq!(c.tx_errors, 6);
        assert_eq!(c.rx_dropped, 7);
        assert_eq!(c.tx_dropped, 8);
        assert_eq!(c.rx_fifo_errors, 15);
        assert_eq!(c.rx_missed_errors, 16);
    }

    #[test]
    fn stats64_decoding() {
        let s64 = Stats64::parse(&numbered_stats(8)).unwrap();
        let s32 = Stats::parse(&numbered_stats(4)).unwrap();
        // IFLA_STATS64 wins over IFLA_STATS, whatever their order.
        let zeros = Stats::parse(&[0; 24 * 4]).unwrap();
        let attrs = [LinkAttribute::Stats(zeros), LinkAttribute::Stats64(s64)];
        assert_numbered(link_counters(&attrs).unwrap());
        // Without IFLA_STATS64, the 32-bit counters.
        assert_numbered(link_counters(&[LinkAttribute::Stats(s32)]).unwrap());
        assert_eq!(link_counters(&[LinkAttribute::Mtu(1500)]), None);
    }
}
