//! The few netlink requests the generator's checks and its anchor need:
//! link facts (RTM_GETLINK), namespace ids (RTM_GETNSID), a veth pair
//! (RTM_NEWLINK), and the "netdev" generic netlink family's device and NAPI
//! facts (xdp-features, threaded NAPI).
//!
//! Hand-written like [`crate::iface::read_counters`]: a handful of fixed
//! messages, where a netlink crate would bring four dependencies and a
//! family definition of its own for "netdev". Every socket belongs to the
//! network namespace of the thread that opens it.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;

const NETLINK_GET_STRICT_CHK: libc::c_int = 12;
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_GETNSID: u16 = 90;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_LINK: u16 = 5;
const IFLA_LINKINFO: u16 = 18;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const VETH_INFO_PEER: u16 = 1;
const IFLA_LINK_NETNSID: u16 = 37;
const NETNSA_NSID: u16 = 1;
const NETNSA_FD: u16 = 3;
const NLA_F_NESTED: u16 = 1 << 15;

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const NETDEV_CMD_DEV_GET: u8 = 1;
const NETDEV_CMD_NAPI_GET: u8 = 11;
const NETDEV_A_DEV_IFINDEX: u16 = 1;
const NETDEV_A_DEV_XDP_FEATURES: u16 = 3;
const NETDEV_A_NAPI_IFINDEX: u16 = 1;
const NETDEV_A_NAPI_PID: u16 = 4;

/// `NETDEV_XDP_ACT_NDO_XMIT`: the device takes frames redirected to it.
pub const XDP_ACT_NDO_XMIT: u64 = 1 << 2;

/// A netlink attribute, padded to 4 bytes.
fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + payload.len() + 3);
    v.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    v.extend_from_slice(&ty.to_ne_bytes());
    v.extend_from_slice(payload);
    v.resize((v.len() + 3) & !3, 0);
    v
}

/// The attributes in `buf`: (type without flags, payload).
pub(crate) fn attrs(mut buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        if buf.len() < 4 {
            return None;
        }
        let len = u16::from_ne_bytes([buf[0], buf[1]]) as usize;
        let ty = u16::from_ne_bytes([buf[2], buf[3]]) & 0x3fff;
        if len < 4 || len > buf.len() {
            return None;
        }
        let payload = &buf[4..len];
        buf = &buf[((len + 3) & !3).min(buf.len())..];
        Some((ty, payload))
    })
}

fn find(buf: &[u8], ty: u16) -> Option<&[u8]> {
    attrs(buf).find(|(t, _)| *t == ty).map(|(_, p)| p)
}

fn u32_of(p: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(p.get(..4)?.try_into().ok()?))
}

/// A netlink socket of `protocol` in the calling thread's namespace.
struct Socket(OwnedFd);

impl Socket {
    fn open(protocol: i32) -> io::Result<Socket> {
        let fd = crate::sys::socket(libc::AF_NETLINK, libc::SOCK_RAW, protocol)?;
        // Strict checking makes the kernel honour dump filters (the NAPI
        // dump's ifindex); older kernels ignore the option, which is fine.
        let one: libc::c_int = 1;
        let _ = crate::sys::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_NETLINK,
            NETLINK_GET_STRICT_CHK,
            &one,
        );
        Ok(Socket(fd))
    }

    /// Sends one request and collects the bodies of its answers (after the
    /// netlink header) until the ack, the end of a dump, or an error.
    fn request(&self, ty: u16, flags: u16, body: &[u8]) -> io::Result<Vec<Vec<u8>>> {
        const SEQ: u32 = 0x7867_656e;
        let fd: RawFd = self.0.as_raw_fd();
        let mut msg = Vec::with_capacity(NLMSG_HDRLEN + body.len());
        msg.extend_from_slice(&((NLMSG_HDRLEN + body.len()) as u32).to_ne_bytes());
        msg.extend_from_slice(&ty.to_ne_bytes());
        let flags = flags | libc::NLM_F_REQUEST as u16 | libc::NLM_F_ACK as u16;
        msg.extend_from_slice(&flags.to_ne_bytes());
        msg.extend_from_slice(&SEQ.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body);
        // SAFETY: `msg` is a readable buffer of the length we pass.
        if unsafe { libc::send(fd, msg.as_ptr().cast(), msg.len(), 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: `buf` is a writable buffer of the length we pass.
            let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            let mut msgs = &buf[..n as usize];
            while msgs.len() >= NLMSG_HDRLEN {
                let len = u32::from_ne_bytes(msgs[0..4].try_into().expect("4 bytes")) as usize;
                let ty = u16::from_ne_bytes([msgs[4], msgs[5]]);
                let seq = u32::from_ne_bytes(msgs[8..12].try_into().expect("4 bytes"));
                if len < NLMSG_HDRLEN || len > msgs.len() {
                    return Err(io::Error::other("malformed netlink answer"));
                }
                let body = &msgs[NLMSG_HDRLEN..len];
                if seq == SEQ {
                    if ty == libc::NLMSG_DONE as u16 {
                        return Ok(out);
                    }
                    if ty == libc::NLMSG_ERROR as u16 {
                        let err = body.get(..4).and_then(u32_of).map_or(0, |e| e as i32);
                        return if err == 0 {
                            Ok(out)
                        } else {
                            Err(io::Error::from_raw_os_error(-err))
                        };
                    }
                    out.push(body.to_vec());
                }
                msgs = &msgs[((len + 3) & !3).min(msgs.len())..];
            }
        }
    }
}

/// `struct ifinfomsg` for interface `index`.
fn ifinfomsg(index: u32) -> [u8; 16] {
    let mut m = [0u8; 16];
    m[0] = libc::AF_UNSPEC as u8;
    m[4..8].copy_from_slice(&(index as i32).to_ne_bytes());
    m
}

/// What RTM_GETLINK says about an interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkFacts {
    pub mtu: u32,
    /// The ifindex of the other end (a veth's peer), in its own namespace.
    pub link: Option<u32>,
    /// The id, in the caller's namespace, of the namespace where `link`
    /// lives; `None` when it is the caller's.
    pub link_netnsid: Option<i32>,
}

/// RTM_GETLINK for interface `index` in the calling thread's namespace.
pub fn link_facts(index: u32) -> io::Result<LinkFacts> {
    let sock = Socket::open(libc::NETLINK_ROUTE)?;
    let answers = sock.request(RTM_GETLINK, 0, &ifinfomsg(index))?;
    let body = answers
        .first()
        .ok_or_else(|| io::Error::other("no answer to RTM_GETLINK"))?;
    let a = body.get(16..).unwrap_or_default();
    Ok(LinkFacts {
        mtu: find(a, IFLA_MTU).and_then(u32_of).unwrap_or(0),
        // Present only when it differs from the device itself, or when it
        // lives in another namespace (where the same index may be the peer).
        link: find(a, IFLA_LINK).and_then(u32_of).filter(|&i| i != 0),
        link_netnsid: find(a, IFLA_LINK_NETNSID)
            .and_then(u32_of)
            .map(|v| v as i32)
            .filter(|&v| v >= 0),
    })
}

/// The id the calling thread's namespace gives the namespace `fd` refers
/// to, if it has given it one.
pub fn nsid_of(fd: RawFd) -> io::Result<Option<i32>> {
    let sock = Socket::open(libc::NETLINK_ROUTE)?;
    let mut body = vec![0u8; 4]; // struct rtgenmsg, padded
    body[0] = libc::AF_UNSPEC as u8;
    body.extend(attr(NETNSA_FD, &(fd as u32).to_ne_bytes()));
    let answers = sock.request(RTM_GETNSID, 0, &body)?;
    Ok(answers
        .first()
        .and_then(|b| find(b.get(4..)?, NETNSA_NSID))
        .and_then(u32_of)
        .map(|v| v as i32)
        .filter(|&v| v >= 0))
}

/// Creates the veth pair `name` <-> `peer` (down) in the calling thread's
/// namespace.
pub fn create_veth(name: &str, peer: &str) -> io::Result<()> {
    let cname = |s: &str| {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        v
    };
    let mut peer_info = ifinfomsg(0).to_vec();
    peer_info.extend(attr(IFLA_IFNAME, &cname(peer)));
    let data = attr(VETH_INFO_PEER | NLA_F_NESTED, &peer_info);
    let mut info = attr(IFLA_INFO_KIND, b"veth");
    info.extend(attr(IFLA_INFO_DATA | NLA_F_NESTED, &data));
    let mut body = ifinfomsg(0).to_vec();
    body.extend(attr(IFLA_IFNAME, &cname(name)));
    body.extend(attr(IFLA_LINKINFO | NLA_F_NESTED, &info));
    let sock = Socket::open(libc::NETLINK_ROUTE)?;
    let flags = (libc::NLM_F_CREATE | libc::NLM_F_EXCL) as u16;
    sock.request(RTM_NEWLINK, flags, &body).map(|_| ())
}

/// A generic netlink request: command `cmd` of family `family`.
fn genl(sock: &Socket, family: u16, cmd: u8, flags: u16, attrs: &[u8]) -> io::Result<Vec<Vec<u8>>> {
    let mut body = vec![cmd, 1, 0, 0];
    body.extend_from_slice(attrs);
    let answers = sock.request(family, flags, &body)?;
    Ok(answers
        .into_iter()
        .map(|a| a.get(GENL_HDRLEN..).unwrap_or_default().to_vec())
        .collect())
}

/// The "netdev" generic netlink family (Linux 6.3+); `None` before it.
fn netdev_family(sock: &Socket) -> io::Result<Option<u16>> {
    match genl(
        sock,
        GENL_ID_CTRL,
        CTRL_CMD_GETFAMILY,
        0,
        &attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"),
    ) {
        Ok(a) => Ok(a
            .first()
            .and_then(|b| find(b, CTRL_ATTR_FAMILY_ID))
            .and_then(|p| Some(u16::from_ne_bytes(p.get(..2)?.try_into().ok()?)))),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The XDP features of interface `index` (`enum netdev_xdp_act` bits),
/// `None` on kernels without the netdev family.
pub fn xdp_features(index: u32) -> io::Result<Option<u64>> {
    let sock = Socket::open(libc::NETLINK_GENERIC)?;
    let Some(family) = netdev_family(&sock)? else {
        return Ok(None);
    };
    let a = genl(
        &sock,
        family,
        NETDEV_CMD_DEV_GET,
        0,
        &attr(NETDEV_A_DEV_IFINDEX, &index.to_ne_bytes()),
    )?;
    Ok(a.first()
        .and_then(|b| find(b, NETDEV_A_DEV_XDP_FEATURES))
        .and_then(|p| Some(u64::from_ne_bytes(p.get(..8)?.try_into().ok()?))))
}

/// True when some NAPI instance of interface `index` runs in threaded
/// mode (it has a kernel thread's pid), false when none does, `None` when
/// the kernel does not say (before Linux 6.8).
pub fn napi_threaded(index: u32) -> io::Result<Option<bool>> {
    let sock = Socket::open(libc::NETLINK_GENERIC)?;
    let Some(family) = netdev_family(&sock)? else {
        return Ok(None);
    };
    let flags = libc::NLM_F_DUMP as u16;
    let filter = attr(NETDEV_A_NAPI_IFINDEX, &index.to_ne_bytes());
    match genl(&sock, family, NETDEV_CMD_NAPI_GET, flags, &filter) {
        Ok(napis) => Ok(Some(napis.iter().any(|n| {
            find(n, NETDEV_A_NAPI_IFINDEX).and_then(u32_of) == Some(index)
                && find(n, NETDEV_A_NAPI_PID).is_some()
        }))),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP) | Some(libc::EINVAL)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip() {
        let mut buf = attr(3, b"abc\0");
        buf.extend(attr(4 | NLA_F_NESTED, &7u32.to_ne_bytes()));
        buf.extend(attr(5, b"x"));
        let got: Vec<(u16, Vec<u8>)> = attrs(&buf).map(|(t, p)| (t, p.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                (3, b"abc\0".to_vec()),
                (4, 7u32.to_ne_bytes().to_vec()),
                (5, b"x".to_vec())
            ]
        );
        assert_eq!(buf.len(), 8 + 8 + 8);
        // A truncated attribute ends the walk instead of reading past it.
        assert_eq!(attrs(&buf[..6]).count(), 0);
    }

    #[test]
    fn loopback_facts() {
        // Every namespace has lo as ifindex 1; it is not a veth.
        let f = link_facts(1).unwrap();
        assert_eq!(f.link, None);
        assert!(f.mtu >= 1500, "{f:?}");
        if let Some(features) = xdp_features(1).unwrap() {
            assert_eq!(features & XDP_ACT_NDO_XMIT, 0, "{features:#x}");
        }
    }
}
