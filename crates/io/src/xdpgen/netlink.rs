//! The few netlink requests the generator's checks and its anchor need:
//! link facts (RTM_GETLINK), namespace ids (RTM_GETNSID), a veth pair
//! (RTM_NEWLINK), and the "netdev" generic netlink family's device and NAPI
//! facts (xdp-features, threaded NAPI).
//!
//! `netlink-packet-route` builds and decodes the rtnetlink messages
//! (`LinkMessage` with its veth `LinkInfo`, `NsidMessage`),
//! `netlink-packet-generic` the generic netlink ones (`GenlCtrl` resolves the
//! family id, [`super::netdev`] defines the netdev family), and
//! [`crate::netlink`] sends them through a `netlink-sys` socket. Every
//! socket belongs to the network namespace of the thread that opens it.

use std::io;
use std::os::fd::RawFd;

use netlink_packet_core::{NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL};
use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use netlink_packet_generic::GenlMessage;
use netlink_packet_route::link::{
    InfoData, InfoKind, InfoVeth, LinkAttribute, LinkInfo, LinkMessage,
};
use netlink_packet_route::nsid::{NsidAttribute, NsidMessage};
use netlink_packet_route::RouteNetlinkMessage;

use super::netdev::{DevAttr, NapiAttr, NetdevMessage};
use crate::netlink::{Socket, NETLINK_GENERIC, NETLINK_ROUTE};

/// `NETDEV_XDP_ACT_NDO_XMIT`: the device takes frames redirected to it.
pub const XDP_ACT_NDO_XMIT: u64 = 1 << 2;

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
    let sock = Socket::open(NETLINK_ROUTE)?;
    let mut get = LinkMessage::default();
    get.header.index = index;
    let answers = sock.request(RouteNetlinkMessage::GetLink(get), 0)?;
    let link = answers
        .into_iter()
        .find_map(|m| match m {
            RouteNetlinkMessage::NewLink(link) => Some(link),
            _ => None,
        })
        .ok_or_else(|| io::Error::other("no answer to RTM_GETLINK"))?;
    let mut facts = LinkFacts::default();
    for attribute in link.attributes {
        match attribute {
            LinkAttribute::Mtu(mtu) => facts.mtu = mtu,
            // Present only when it differs from the device itself, or when
            // it lives in another namespace (where the same index may be the
            // peer).
            LinkAttribute::Link(link) if link != 0 => facts.link = Some(link),
            LinkAttribute::LinkNetNsId(id) if id >= 0 => facts.link_netnsid = Some(id),
            _ => {}
        }
    }
    Ok(facts)
}

/// The id the calling thread's namespace gives the namespace `fd` refers
/// to, if it has given it one.
pub fn nsid_of(fd: RawFd) -> io::Result<Option<i32>> {
    let sock = Socket::open(NETLINK_ROUTE)?;
    let mut get = NsidMessage::default();
    get.attributes.push(NsidAttribute::Fd(fd as u32));
    let answers = sock.request(RouteNetlinkMessage::GetNsId(get), 0)?;
    Ok(answers
        .iter()
        .filter_map(|m| match m {
            RouteNetlinkMessage::NewNsId(ns) => Some(&ns.attributes),
            _ => None,
        })
        .flatten()
        .find_map(|a| match a {
            // -1: the namespace has no id here.
            NsidAttribute::Id(id) => Some(*id),
            _ => None,
        })
        .filter(|&id| id >= 0))
}

/// Creates the veth pair `name` <-> `peer` (down) in the calling thread's
/// namespace.
pub fn create_veth(name: &str, peer: &str) -> io::Result<()> {
    let mut peer_link = LinkMessage::default();
    peer_link
        .attributes
        .push(LinkAttribute::IfName(peer.to_string()));
    let mut new = LinkMessage::default();
    new.attributes.push(LinkAttribute::IfName(name.to_string()));
    new.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Veth),
        LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(peer_link))),
    ]));
    let sock = Socket::open(NETLINK_ROUTE)?;
    sock.request(RouteNetlinkMessage::NewLink(new), NLM_F_CREATE | NLM_F_EXCL)?;
    Ok(())
}

/// The "netdev" generic netlink family's id (Linux 6.3+); `None` before it.
fn netdev_family(sock: &Socket) -> io::Result<Option<u16>> {
    let get = GenlMessage::from_payload(GenlCtrl {
        cmd: GenlCtrlCmd::GetFamily,
        nlas: vec![GenlCtrlAttrs::FamilyName("netdev".to_string())],
    });
    match sock.request(get, 0).map_err(io::Error::from) {
        Ok(answers) => Ok(answers
            .iter()
            .flat_map(|m| &m.payload.nlas)
            .find_map(|a| match a {
                GenlCtrlAttrs::FamilyId(id) => Some(*id),
                _ => None,
            })),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A netdev family request, `family` being the id the kernel gave it.
fn netdev_request(
    sock: &Socket,
    family: u16,
    payload: NetdevMessage,
    flags: u16,
) -> io::Result<Vec<NetdevMessage>> {
    let mut msg = GenlMessage::from_payload(payload);
    msg.set_resolved_family_id(family);
    let answers = sock.request(msg, flags)?;
    Ok(answers.into_iter().map(|m| m.payload).collect())
}

/// The XDP features of interface `index` (`enum netdev_xdp_act` bits),
/// `None` on kernels without the netdev family.
pub fn xdp_features(index: u32) -> io::Result<Option<u64>> {
    let sock = Socket::open(NETLINK_GENERIC)?;
    let Some(family) = netdev_family(&sock)? else {
        return Ok(None);
    };
    let get = NetdevMessage::DevGet(vec![DevAttr::Ifindex(index)]);
    let answers = netdev_request(&sock, family, get, 0)?;
    Ok(answers.iter().find_map(|m| match m {
        NetdevMessage::DevGet(attrs) => attrs.iter().find_map(|a| match a {
            DevAttr::XdpFeatures(f) => Some(*f),
            _ => None,
        }),
        _ => None,
    }))
}

/// True when some NAPI instance of interface `index` runs in threaded
/// mode (it has a kernel thread's pid), false when none does, `None` when
/// the kernel does not say (before Linux 6.8).
pub fn napi_threaded(index: u32) -> io::Result<Option<bool>> {
    Ok(napi_pids(index)?.map(|pids| !pids.is_empty()))
}

/// The pids of the kernel threads of interface `index`'s NAPI instances
/// (one per instance in threaded mode, none otherwise), `None` when the
/// kernel does not say (before Linux 6.8).
pub(crate) fn napi_pids(index: u32) -> io::Result<Option<Vec<u32>>> {
    let sock = Socket::open(NETLINK_GENERIC)?;
    let Some(family) = netdev_family(&sock)? else {
        return Ok(None);
    };
    let dump = NetdevMessage::NapiGet(vec![NapiAttr::Ifindex(index)]);
    match netdev_request(&sock, family, dump, NLM_F_DUMP) {
        Ok(napis) => Ok(Some(
            napis
                .iter()
                .filter_map(|m| {
                    let NetdevMessage::NapiGet(attrs) = m else {
                        return None;
                    };
                    if !attrs.contains(&NapiAttr::Ifindex(index)) {
                        return None;
                    }
                    attrs.iter().find_map(|a| match a {
                        NapiAttr::Pid(pid) => Some(*pid),
                        _ => None,
                    })
                })
                .collect(),
        )),
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
