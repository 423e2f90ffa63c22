//! Names for the XDP drop tracer's keys: namespaces by inode (`ip netns`
//! names, `host` for this process's own), interfaces by index within their
//! namespace, errors by their text, actions and map types by the kernel's
//! names, a CPUMAP by its map's name.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{XdpDropCause, XdpDropCounts};
use crate::droptrace::NetnsNames;

/// One place where XDP dropped frames, named.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NamedXdpDrop {
    /// The place's namespace (`-` for a CPU queue of unknown owner).
    pub netns: String,
    /// The place's interface, or `cpu N` for a CPU queue of unknown owner.
    pub iface: String,
    /// The other port (`-`: none); for a CPU queue, `cpu N` (known owner)
    /// or the map.
    pub peer: String,
    pub cause: XdpDropCause,
    /// The kernel's error text (`-`: none given).
    pub error: String,
    /// The error's symbolic name (`ENETDOWN`; `-`: none given).
    #[serde(default)]
    pub errno: String,
    /// The action of an exception, the map type of a redirect, the map of
    /// a CPU queue of known owner (`-`: none).
    pub detail: String,
    pub frames: u64,
}

/// `counts` by named place, most frames first; the map's overflow, if
/// any, as one place whose interface is `overflow`. A CPU queue's drops
/// have no place of their own: namespace `-`, interface `cpu N`.
pub fn name(counts: &XdpDropCounts) -> Vec<NamedXdpDrop> {
    name_with(counts, &BTreeMap::new())
}

/// [`name`], placing the drops of the CPU queues in `owners` (CPUMAP id →
/// the namespace and port whose program steers into it, as
/// `crate::fastpath::queue_map` finds them) at that port, the queue's CPU
/// as the peer (`cpu N`).
pub fn name_with(
    counts: &XdpDropCounts,
    owners: &BTreeMap<u32, (String, String)>,
) -> Vec<NamedXdpDrop> {
    let namespaces = NetnsNames::load();
    let mut ifnames = IfNames::default();
    let mut out: Vec<NamedXdpDrop> = Vec::new();
    for (k, &frames) in &counts.frames {
        let Some(cause) = k.cause() else { continue };
        let cpumap = matches!(cause, XdpDropCause::CpuQueueFull | XdpDropCause::CpuAlloc);
        let owner = owners.get(&k.peer).filter(|_| cpumap);
        let netns = match (cpumap, owner) {
            (true, Some((ns, _))) => ns.clone(),
            (true, None) => "-".to_string(),
            _ => namespaces.name(k.netns),
        };
        let (iface, peer, detail) = if let Some((_, port)) = owner {
            (port.clone(), format!("cpu {}", k.detail), map_name(k.peer))
        } else if cpumap {
            (
                format!("cpu {}", k.detail),
                map_name(k.peer),
                "-".to_string(),
            )
        } else {
            (
                ifnames.get(k.netns, &netns, k.ifindex),
                ifnames.get(k.netns, &netns, k.peer),
                detail_name(cause, k.detail),
            )
        };
        let error = if k.err == 0 {
            "-".to_string()
        } else {
            crate::os_message(&std::io::Error::from_raw_os_error(
                k.err.unsigned_abs() as i32
            ))
        };
        let place = NamedXdpDrop {
            netns,
            iface,
            peer,
            cause,
            error,
            errno: errno_name(k.err),
            detail,
            frames,
        };
        match out.iter_mut().find(|d| same_place(d, &place)) {
            Some(d) => d.frames += frames,
            None => out.push(place),
        }
    }
    if counts.overflow > 0 {
        out.push(NamedXdpDrop {
            netns: "-".into(),
            iface: "overflow".into(),
            peer: "-".into(),
            cause: XdpDropCause::Exception,
            error: "-".into(),
            errno: "-".into(),
            detail: "-".into(),
            frames: counts.overflow,
        });
    }
    out.sort_by(|a, b| b.frames.cmp(&a.frames).then_with(|| a.cmp(b)));
    out
}

fn same_place(a: &NamedXdpDrop, b: &NamedXdpDrop) -> bool {
    (&a.netns, &a.iface, &a.peer, a.cause, &a.error, &a.detail)
        == (&b.netns, &b.iface, &b.peer, b.cause, &b.error, &b.detail)
}

/// The kernel's names of XDP actions (`enum xdp_action`) and of the map
/// types a redirect goes through (`enum bpf_map_type`).
fn detail_name(cause: XdpDropCause, v: u32) -> String {
    match cause {
        XdpDropCause::Exception => match v {
            0 => "XDP_ABORTED".into(),
            1 => "XDP_DROP".into(),
            2 => "XDP_PASS".into(),
            3 => "XDP_TX".into(),
            4 => "XDP_REDIRECT".into(),
            _ => format!("action {v}"),
        },
        XdpDropCause::RedirectError => match v {
            0 => "ifindex".into(),
            14 => "devmap".into(),
            16 => "cpumap".into(),
            17 => "xskmap".into(),
            25 => "devmap_hash".into(),
            _ => format!("map type {v}"),
        },
        _ => "-".into(),
    }
}

/// The symbolic name of a negative errno as the xdp tracepoints give it
/// (`-100`: `ENETDOWN`), for the errors a redirect or a transmit returns;
/// `errno N` for another, `-` for none.
pub fn errno_name(err: i32) -> String {
    let name = match err.unsigned_abs() as i32 {
        0 => "-",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::ENOMEM => "ENOMEM",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EINVAL => "EINVAL",
        libc::ENOSPC => "ENOSPC",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENETDOWN => "ENETDOWN",
        libc::ENODEV => "ENODEV",
        n => return format!("errno {n}"),
    };
    name.to_string()
}

/// `map <name> (id N)`, or `map id N` when it is gone.
fn map_name(id: u32) -> String {
    match aya::maps::MapInfo::from_id(id)
        .ok()
        .and_then(|m| m.name_as_str().map(str::to_string))
    {
        Some(n) if !n.is_empty() => format!("map {n} (id {id})"),
        _ => format!("map id {id}"),
    }
}

/// Interface names by (namespace inode, index), looked up once each.
#[derive(Default)]
struct IfNames {
    known: BTreeMap<(u32, u32), String>,
}

impl IfNames {
    fn get(&mut self, inode: u32, netns: &str, index: u32) -> String {
        if index == 0 {
            return "-".to_string();
        }
        if let Some(n) = self.known.get(&(inode, index)) {
            return n.clone();
        }
        let found = if netns == crate::droptrace::HOST {
            index_to_name(index)
        } else if inode != 0 && !netns.starts_with("netns:") && netns != "-" {
            let ns = netns.to_string();
            std::thread::spawn(move || {
                crate::netns::enter(&ns).ok()?;
                index_to_name(index)
            })
            .join()
            .ok()
            .flatten()
        } else {
            None
        };
        let name = found.unwrap_or_else(|| format!("if{index}"));
        self.known.insert((inode, index), name.clone());
        name
    }
}

/// if_indextoname(3) in the calling thread's namespace.
fn index_to_name(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: buf has IF_NAMESIZE bytes, as if_indextoname requires.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success buf holds a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xdpdrops::XdpDropKey;

    #[test]
    fn places_are_named_and_merged() {
        let own = crate::droptrace::netns_inode(None).unwrap();
        let key = |cause, err, detail, ifindex| XdpDropKey {
            netns: own,
            ifindex,
            peer: 0,
            cause,
            err,
            detail,
        };
        let counts = XdpDropCounts {
            frames: [
                (key(2, -95, 0, 1), 7),
                (key(1, 0, 0, 1), 3),
                (
                    XdpDropKey {
                        peer: u32::MAX,
                        cause: 5,
                        detail: 1,
                        ..XdpDropKey::default()
                    },
                    4,
                ),
            ]
            .into_iter()
            .collect(),
            overflow: 0,
        };
        let named = name(&counts);
        assert_eq!(named.len(), 3);
        assert_eq!(named[0].netns, "host");
        assert_eq!(named[0].iface, "lo");
        assert_eq!(named[0].cause, XdpDropCause::RedirectError);
        assert_eq!(named[0].error, "Operation not supported");
        assert_eq!(named[0].errno, "EOPNOTSUPP");
        assert_eq!(named[0].detail, "ifindex");
        assert_eq!(named[0].frames, 7);
        assert_eq!(named[1].iface, "cpu 1");
        assert_eq!(named[1].peer, format!("map id {}", u32::MAX));
        assert_eq!(named[2].detail, "XDP_ABORTED");
        assert_eq!(named[2].error, "-");
        assert_eq!(named[2].errno, "-");
        assert_eq!(errno_name(-100), "ENETDOWN");
        assert_eq!(errno_name(-4095), "errno 4095");
    }
}
