//! Interface facts: index, MAC, MTU and counters, in the calling thread's
//! network namespace.
//!
//! Nothing here reads `/sys/class/net`: sysfs reflects the namespace it was
//! mounted in, not the thread's. Lookups use ioctls on a socket and counters
//! use an rtnetlink `RTM_GETLINK` query, and sockets belong to the network
//! namespace of the thread that creates them, so a thread that called
//! `setns(CLONE_NEWNET)` sees its new namespace.

use std::io;
use std::os::fd::AsRawFd;

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
#[derive(Clone, Copy, Debug, Default, serde::Serialize, PartialEq, Eq)]
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
    let sock = sys::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", name, e))?;
    let fd = sock.as_raw_fd();

    // struct nlmsghdr (16 bytes) + struct ifinfomsg (16 bytes), native endian.
    const SEQ: u32 = 0x706b_746c;
    let mut req = [0u8; 32];
    req[0..4].copy_from_slice(&32u32.to_ne_bytes());
    req[4..6].copy_from_slice(&libc::RTM_GETLINK.to_ne_bytes());
    req[6..8].copy_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req[8..12].copy_from_slice(&SEQ.to_ne_bytes());
    req[16] = libc::AF_UNSPEC as u8; // ifi_family
    req[20..24].copy_from_slice(&(index as i32).to_ne_bytes()); // ifi_index
                                                                // SAFETY: `req` is a readable buffer of the length we pass; a netlink
                                                                // socket that is not bound gets an automatic address on send.
    let rc = unsafe { libc::send(fd, req.as_ptr().cast(), req.len(), 0) };
    if rc < 0 {
        return Err(IoError::last_os(
            "sending a netlink RTM_GETLINK request",
            name,
        ));
    }

    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: `buf` is a writable buffer of the length we pass.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(IoError::sys(
                "reading the netlink RTM_GETLINK answer",
                name,
                e,
            ));
        }
        let mut msgs = &buf[..n as usize];
        while msgs.len() >= 16 {
            let len = u32::from_ne_bytes(msgs[0..4].try_into().unwrap()) as usize;
            let ty = u16::from_ne_bytes(msgs[4..6].try_into().unwrap());
            let seq = u32::from_ne_bytes(msgs[8..12].try_into().unwrap());
            if len < 16 || len > msgs.len() {
                return Err(IoError::Other(format!(
                    "malformed netlink answer for interface {name}"
                )));
            }
            let body = &msgs[16..len];
            if seq == SEQ {
                if ty == libc::NLMSG_ERROR as u16 && body.len() >= 4 {
                    let errno = -i32::from_ne_bytes(body[0..4].try_into().unwrap());
                    if errno == libc::ENODEV {
                        return Err(IoError::NoSuchInterface(name.to_string()));
                    }
                    return Err(IoError::sys(
                        "querying link statistics",
                        name,
                        io::Error::from_raw_os_error(errno),
                    ));
                }
                if ty == libc::RTM_NEWLINK {
                    return parse_link_stats(body).ok_or_else(|| {
                        IoError::Other(format!("no link statistics for interface {name}"))
                    });
                }
            }
            msgs = &msgs[align4(len).min(msgs.len())..];
        }
    }
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Finds IFLA_STATS64 (or IFLA_STATS) in an RTM_NEWLINK body.
fn parse_link_stats(body: &[u8]) -> Option<IfCounters> {
    const IFINFOMSG_LEN: usize = 16;
    let mut attrs = body.get(IFINFOMSG_LEN..)?;
    let mut stats32 = None;
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let ty = u16::from_ne_bytes([attrs[2], attrs[3]]) & 0x3fff; // strip NLA_F_* flags
        if len < 4 || len > attrs.len() {
            break;
        }
        let payload = &attrs[4..len];
        if ty == libc::IFLA_STATS64 {
            return stats_from(payload, 8);
        }
        if ty == libc::IFLA_STATS {
            stats32 = Some(payload);
        }
        attrs = &attrs[align4(len).min(attrs.len())..];
    }
    stats_from(stats32?, 4)
}

/// Decodes struct rtnl_link_stats64 (`width` 8) or rtnl_link_stats (`width` 4).
fn stats_from(p: &[u8], width: usize) -> Option<IfCounters> {
    // Field order of both structs: rx_packets, tx_packets, rx_bytes, tx_bytes,
    // rx_errors, tx_errors, rx_dropped, tx_dropped, multicast, collisions,
    // rx_length_errors, rx_over_errors, rx_crc_errors, rx_frame_errors,
    // rx_fifo_errors, rx_missed_errors, ...
    let field = |i: usize| -> Option<u64> {
        let b = p.get(i * width..(i + 1) * width)?;
        Some(if width == 8 {
            u64::from_ne_bytes(b.try_into().ok()?)
        } else {
            u32::from_ne_bytes(b.try_into().ok()?) as u64
        })
    };
    Some(IfCounters {
        rx_packets: field(0)?,
        tx_packets: field(1)?,
        rx_bytes: field(2)?,
        tx_bytes: field(3)?,
        rx_errors: field(4)?,
        tx_errors: field(5)?,
        rx_dropped: field(6)?,
        tx_dropped: field(7)?,
        rx_fifo_errors: field(14)?,
        rx_missed_errors: field(15)?,
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

    #[test]
    fn stats64_decoding() {
        let mut p = Vec::new();
        for i in 0..24u64 {
            p.extend_from_slice(&(i + 1).to_ne_bytes());
        }
        let c = stats_from(&p, 8).unwrap();
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
}
