//! Names for the tracer's keys: network namespaces by inode (`ip netns`
//! names; this process's own namespace is `host`), interfaces by index
//! within their namespace, reasons from the kernel's BTF, locations from
//! `/proc/kallsyms`.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;

use super::kallsyms::Kallsyms;
use super::DropCounts;
use crate::netns::NETNS_RUN_DIR;

/// The name this process's own network namespace is shown under.
pub const HOST: &str = "host";

/// The inode of network namespace `name` (`ip netns` name), or of this
/// process's namespace when `None`.
pub fn netns_inode(name: Option<&str>) -> Result<u32, String> {
    let path = match name {
        Some(n) => crate::netns::path_of(n).map_err(|e| e.to_string())?,
        None => "/proc/self/ns/net".into(),
    };
    let meta = std::fs::metadata(&path).map_err(|e| match (name, e.kind()) {
        (Some(n), std::io::ErrorKind::NotFound) => format!("network namespace {n} does not exist"),
        _ => format!("cannot read {}: {}", path.display(), crate::os_message(&e)),
    })?;
    Ok(meta.ino() as u32)
}

/// Namespace names by inode.
#[derive(Clone, Debug, Default)]
pub struct NetnsNames {
    by_inode: BTreeMap<u32, String>,
}

impl NetnsNames {
    /// This process's namespace and every `ip netns` namespace now.
    pub fn load() -> NetnsNames {
        let mut by_inode = BTreeMap::new();
        if let Ok(dir) = std::fs::read_dir(NETNS_RUN_DIR) {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Ok(ino) = netns_inode(Some(&name)) {
                    by_inode.insert(ino, name);
                }
            }
        }
        if let Ok(ino) = netns_inode(None) {
            by_inode.entry(ino).or_insert_with(|| HOST.to_string());
        }
        NetnsNames { by_inode }
    }

    /// The name of namespace `inode`: its `ip netns` name, `host`, or
    /// `netns:<inode>` (`-` for an unknown namespace).
    pub fn name(&self, inode: u32) -> String {
        match (self.by_inode.get(&inode), inode) {
            (Some(n), _) => n.clone(),
            (None, 0) => "-".to_string(),
            (None, i) => format!("netns:{i}"),
        }
    }
}

/// One place where frames were dropped, named.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct NamedDrop {
    pub netns: String,
    pub iface: String,
    pub reason: String,
    pub location: String,
    pub frames: u64,
}

/// Everything needed to name the tracer's keys, read once.
pub struct Places {
    netns: NetnsNames,
    reasons: BTreeMap<u32, String>,
    syms: Kallsyms,
    ifnames: BTreeMap<(u32, u32), String>,
}

impl Places {
    /// Reads the namespaces, the kernel's reasons and symbols. What cannot
    /// be read is shown as numbers, never an error.
    pub fn load() -> Places {
        Places {
            netns: NetnsNames::load(),
            reasons: super::btf::drop_reasons().unwrap_or_default(),
            syms: Kallsyms::load().unwrap_or_default(),
            ifnames: BTreeMap::new(),
        }
    }

    /// The reason's name from the kernel's enum, or `reason <n>`.
    pub fn reason(&self, reason: u32) -> String {
        self.reasons
            .get(&reason)
            .cloned()
            .unwrap_or_else(|| format!("reason {reason}"))
    }

    /// `counts` by named place (keys naming the same function merged),
    /// most frames first; the map overflow, if any, as one place named
    /// `overflow`.
    pub fn name(&mut self, counts: &DropCounts) -> Vec<NamedDrop> {
        let mut merged: BTreeMap<(String, String, String, String), u64> = BTreeMap::new();
        for (k, &n) in &counts.frames {
            let netns = self.netns.name(k.netns);
            let iface = self.iface(k.netns, &netns, k.ifindex);
            let place = (
                netns,
                iface,
                self.reason(k.reason),
                self.syms.name(k.location),
            );
            *merged.entry(place).or_insert(0) += n;
        }
        if counts.overflow > 0 {
            merged.insert(
                ("-".into(), "-".into(), "overflow".into(), "-".into()),
                counts.overflow,
            );
        }
        let mut out: Vec<NamedDrop> = merged
            .into_iter()
            .map(|((netns, iface, reason, location), frames)| NamedDrop {
                netns,
                iface,
                reason,
                location,
                frames,
            })
            .collect();
        out.sort_by(|a, b| b.frames.cmp(&a.frames).then_with(|| a.cmp(b)));
        out
    }

    /// The interface's name in its namespace, or `if<index>`.
    fn iface(&mut self, inode: u32, netns: &str, index: u32) -> String {
        if index == 0 {
            return "-".to_string();
        }
        if let Some(n) = self.ifnames.get(&(inode, index)) {
            return n.clone();
        }
        let found = if netns == HOST {
            index_to_name(index)
        } else if inode != 0 && !netns.starts_with("netns:") {
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
        self.ifnames.insert((inode, index), name.clone());
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

    #[test]
    fn own_namespace_is_host_and_loopback_is_named() {
        let names = NetnsNames::load();
        let own = netns_inode(None).unwrap();
        assert_eq!(names.name(own), HOST);
        assert_eq!(names.name(0), "-");
        assert_eq!(index_to_name(1).as_deref(), Some("lo"));
    }

    #[test]
    fn a_missing_namespace_is_one_line() {
        assert_eq!(
            netns_inode(Some("pktlab-no-such-ns")).unwrap_err(),
            "network namespace pktlab-no-such-ns does not exist"
        );
    }
}
