//! The RX side's XDP program: one `xsk_redirect` program and XSKMAP per
//! interface, shared by every RX socket of this process on that interface.
//!
//! The first RX socket on an interface loads and attaches the program; each
//! socket puts itself in the map at its queue index; the program is
//! detached when the last socket using it is dropped.

use std::sync::{Arc, Mutex, Weak};

use aya::maps::{MapData, XskMap};

use crate::iface::Iface;
use crate::loader::{builtin_object, AttachMode, Attached, XdpAttachment, XdpObject};
use crate::IoError;

/// Where a program is attached: network namespace (device, inode) and
/// interface index.
type Key = ((u64, u64), u32);

/// Map size when the driver does not report its queue count.
const DEFAULT_MAP_ENTRIES: u32 = 256;

static ATTACHED: Mutex<Vec<(Key, Weak<Redirect>)>> = Mutex::new(Vec::new());

/// An attached `xsk_redirect` program and its XSKMAP.
pub(super) struct Redirect {
    map: Mutex<XskMap<MapData>>,
    entries: u32,
    attachment: XdpAttachment,
    iface: String,
}

impl Redirect {
    /// The redirect program on `iface` in the calling thread's network
    /// namespace, attached now in `mode` unless this process has it there
    /// already (then its mode stays as it was).
    pub(super) fn acquire(
        iface: &Iface,
        queues: Option<u32>,
        mode: AttachMode,
    ) -> Result<Arc<Redirect>, IoError> {
        let netns = super::sys::netns_id()
            .map_err(|e| IoError::sys("identifying the network namespace", &iface.name, e))?;
        let key = (netns, iface.index);
        // Held while loading, so that two threads opening queues of one
        // interface at once do not both try to attach.
        let mut attached = ATTACHED.lock().unwrap_or_else(|p| p.into_inner());
        attached.retain(|(_, w)| w.strong_count() > 0);
        if let Some(r) = attached
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(r);
        }
        let entries = queues.unwrap_or(DEFAULT_MAP_ENTRIES).max(1);
        let mut obj = XdpObject::load(builtin_object(), &[("xsks", entries)], &iface.name)?;
        let map = obj.take_map("xsks").ok_or_else(|| IoError::Xdp {
            op: "finding the XSKMAP".to_string(),
            iface: iface.name.clone(),
            reason: "not in the object".to_string(),
        })?;
        let map = XskMap::try_from(map).map_err(|e| IoError::Xdp {
            op: "opening the XSKMAP".to_string(),
            iface: iface.name.clone(),
            reason: e.to_string(),
        })?;
        let attachment = obj.attach("xsk_redirect", iface, mode)?;
        let r = Arc::new(Redirect {
            map: Mutex::new(map),
            entries,
            attachment,
            iface: iface.name.clone(),
        });
        attached.push((key, Arc::downgrade(&r)));
        Ok(r)
    }

    /// Sends the frames of `queue` to the AF_XDP socket `fd`.
    pub(super) fn insert(&self, queue: u32, fd: std::os::fd::RawFd) -> Result<(), IoError> {
        if queue >= self.entries {
            return Err(IoError::NoSuchQueue {
                iface: self.iface.clone(),
                queue,
                count: self.entries,
            });
        }
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.set(queue, fd, 0).map_err(|e| IoError::Xdp {
            op: format!("adding the socket of queue {queue} to the XSKMAP"),
            iface: self.iface.clone(),
            reason: e.to_string(),
        })
    }

    /// Stops redirecting `queue` (its frames go to the kernel's stack).
    pub(super) fn remove(&self, queue: u32) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        // The kernel also removes a socket from every map when it closes.
        let _ = map.unset(queue);
    }

    pub(super) fn mode(&self) -> Attached {
        self.attachment.mode()
    }

    pub(super) fn warning(&self) -> Option<&str> {
        self.attachment.warning()
    }
}
