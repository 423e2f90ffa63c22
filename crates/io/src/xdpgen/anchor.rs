//! The anchor: the generator program attached to an idle interface for the
//! whole run.
//!
//! BPF_PROG_RUN with `repeat > 1` puts an XDP program into the kernel's XDP
//! dispatcher at the start of every call and takes it out at the end, two
//! RCU grace periods of 25-30 ms each (200 calls measured 6.3 s).
//! While the program is attached to any device it stays in the dispatcher,
//! and a call costs microseconds (the same 200 calls: 11 ms).
//!
//! The idle device is one end of a veth pair in a network namespace of its
//! own, made with `unshare(CLONE_NEWNET)` on a short-lived thread: it has no
//! name, nothing else can see or reach it, and only a file descriptor of
//! ours keeps it alive. Dropping the [`Anchor`] detaches the program (its
//! bpf_link) and closes that descriptor, which deletes the namespace and
//! the veth pair with it; so does the end of the process, however it ends
//! (Ctrl-C, SIGKILL, a crash): nothing is ever left behind. The program
//! passes anything really received there (`ingress_ifindex != 1`).

use std::os::fd::{FromRawFd, OwnedFd};

use crate::loader::{AttachMode, XdpAttachment, XdpObject};
use crate::IoError;

/// The attached program; the namespace goes when this is dropped.
pub struct Anchor {
    // Field order is drop order: detach first, then let the namespace go.
    _attachment: XdpAttachment,
    _netns: OwnedFd,
}

impl std::fmt::Debug for Anchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Anchor")
    }
}

const VETH: &str = "xg0";
const PEER: &str = "xg1";

/// Attaches `program` of `obj` natively to a veth in a new private
/// namespace (generic mode on its loopback if veth cannot be made).
pub fn attach(obj: &mut XdpObject, program: &str) -> Result<Anchor, IoError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: unshare only changes this thread's network namespace;
            // the thread ends when this closure returns.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return Err(IoError::last_os(
                    "creating a private namespace for",
                    "the XDP anchor",
                ));
            }
            let netns = open_own_netns()?;
            let attachment = match super::netlink::create_veth(VETH, PEER) {
                Ok(()) => obj.attach(program, &crate::iface::lookup(VETH)?, AttachMode::Native)?,
                // No veth driver: the loopback device takes generic XDP.
                Err(_) => obj.attach(program, &crate::iface::lookup("lo")?, AttachMode::Generic)?,
            };
            Ok(Anchor {
                _attachment: attachment,
                _netns: netns,
            })
        })
        .join()
        .map_err(|_| IoError::Other("attaching the XDP anchor panicked".into()))?
    })
}

/// A descriptor of the calling thread's network namespace, which keeps it
/// alive after the thread ends.
fn open_own_netns() -> Result<OwnedFd, IoError> {
    let path = c"/proc/thread-self/ns/net";
    // SAFETY: a valid NUL-terminated path; the descriptor is fresh and
    // owned by the OwnedFd from here on.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(IoError::last_os(
            "opening the namespace of",
            "the XDP anchor",
        ));
    }
    // SAFETY: see above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
