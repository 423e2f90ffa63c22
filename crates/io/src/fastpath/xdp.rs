//! XDP programs attached through netlink (RTM_SETLINK's IFLA_XDP), which
//! the device holds until they are detached: a DUT configuration's program
//! outlives the short `pktlab` process that attached it, as `ip link set
//! dev IF xdp obj ...` does. (The generator's and receiver's programs use
//! a bpf_link instead, which goes with their process: `crate::loader`.)

use std::os::fd::{AsRawFd, BorrowedFd};

use netlink_packet_route::link::{LinkAttribute, LinkMessage, LinkXdp, XdpAttached};
use netlink_packet_route::RouteNetlinkMessage;

use crate::netlink::{RequestError, Socket, NETLINK_ROUTE};
use crate::IoError;

const XDP_FLAGS_UPDATE_IF_NOEXIST: u32 = 1 << 0;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
const XDP_FLAGS_REPLACE: u32 = 1 << 4;

/// The XDP program attached to an interface, as RTM_GETLINK says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XdpProg {
    pub id: u32,
    /// Native (driver) mode; false for generic (skb) or offloaded.
    pub native: bool,
}

/// The program attached to interface `index`, if any.
pub fn attached(index: u32, name: &str) -> Result<Option<XdpProg>, IoError> {
    let sock = Socket::open(NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", name, e))?;
    let mut get = LinkMessage::default();
    get.header.index = index;
    let answers = sock
        .request(RouteNetlinkMessage::GetLink(get), 0)
        .map_err(|e| refused("reading the XDP program", name, e, None))?;
    let mut prog = None;
    let mut native = false;
    for a in answers.iter().flat_map(|m| match m {
        RouteNetlinkMessage::NewLink(l) => l.attributes.as_slice(),
        _ => &[],
    }) {
        if let LinkAttribute::Xdp(xdp) = a {
            for x in xdp {
                match x {
                    LinkXdp::ProgId(id) if *id != 0 => prog = Some(*id),
                    LinkXdp::Attached(XdpAttached::Driver) => native = true,
                    _ => {}
                }
            }
        }
    }
    Ok(prog.map(|id| XdpProg { id, native }))
}

/// Attaches `prog` to interface `index` in native mode, unless a program
/// is there already.
pub fn attach(index: u32, name: &str, prog: BorrowedFd<'_>) -> Result<(), IoError> {
    set(
        index,
        name,
        vec![
            LinkXdp::Fd(prog.as_raw_fd()),
            LinkXdp::Flags(XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST),
        ],
        "attaching XDP in native mode",
    )
}

/// Detaches the program `expected` (an fd of the program attached now) from
/// interface `index`; another program attached meanwhile is left alone.
pub fn detach(
    index: u32,
    name: &str,
    expected: BorrowedFd<'_>,
    native: bool,
) -> Result<(), IoError> {
    let mode = if native {
        XDP_FLAGS_DRV_MODE
    } else {
        XDP_FLAGS_SKB_MODE
    };
    set(
        index,
        name,
        vec![
            LinkXdp::Fd(-1),
            LinkXdp::ExpectedFd(expected.as_raw_fd() as u32),
            LinkXdp::Flags(mode | XDP_FLAGS_REPLACE),
        ],
        "detaching XDP",
    )
}

fn set(index: u32, name: &str, xdp: Vec<LinkXdp>, op: &str) -> Result<(), IoError> {
    let sock = Socket::open(NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", name, e))?;
    let mut msg = LinkMessage::default();
    msg.header.index = index;
    msg.attributes.push(LinkAttribute::Xdp(xdp));
    sock.request_explained(RouteNetlinkMessage::SetLink(msg), 0)
        .map(|_| ())
        .map_err(|(e, why)| refused(op, name, e, why))
}

/// One line for a refused request: the kernel's own words when it gave
/// some, then the errno's text.
pub(crate) fn refused(op: &str, name: &str, e: RequestError, why: Option<String>) -> IoError {
    match e {
        RequestError::Kernel(err)
            if matches!(err.raw_os_error(), Some(libc::EBUSY) | Some(libc::EEXIST)) =>
        {
            IoError::XdpBusy(name.to_string())
        }
        RequestError::Kernel(err) => IoError::Xdp {
            op: op.to_string(),
            iface: name.to_string(),
            reason: match why {
                Some(w) => format!("{w} ({})", crate::os_message(&err)),
                None => crate::os_message(&err),
            },
        },
        RequestError::Send(err) | RequestError::Recv(err) => IoError::sys(op, name, err),
        RequestError::Malformed => IoError::Other(format!("{op} on {name}: malformed answer")),
    }
}
