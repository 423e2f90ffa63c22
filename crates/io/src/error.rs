//! The io layer's error type.

use std::path::PathBuf;

/// A failure of a packet port or an interface query.
///
/// Every message is one line that names the offending value. Operating-system
/// errors are shown without Rust's `(os error N)` suffix, and none of the
/// variants carries a `source()`, so an error chain printer never repeats the
/// reason.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The interface does not exist in the current thread's network namespace.
    #[error("no such interface: {0}")]
    NoSuchInterface(String),
    /// The interface exists but is administratively down.
    #[error("interface {0} is down")]
    InterfaceDown(String),
    /// socket(AF_PACKET) was refused with EPERM/EACCES.
    #[error("opening an AF_PACKET socket needs root or CAP_NET_RAW")]
    PermissionDenied,
    /// A kernel feature is missing, e.g. `PACKET_TX_RING` or `TPACKET_V3`.
    #[error("{0} not supported by this kernel")]
    Unsupported(&'static str),
    /// A ring geometry that we or the kernel refuse.
    #[error("bad ring size: {0}")]
    BadRing(String),
    /// The pcap output file cannot be created.
    #[error("cannot create pcap file {}: {}", path.display(), os_message(err))]
    PcapCreate { path: PathBuf, err: std::io::Error },
    /// The pcap input file cannot be opened.
    #[error("cannot open pcap file {}: {}", path.display(), os_message(err))]
    PcapOpen { path: PathBuf, err: std::io::Error },
    /// The pcap input file is not a classic Ethernet pcap file, or it is corrupt.
    #[error("bad pcap file {}: {reason}", path.display())]
    PcapFormat { path: PathBuf, reason: String },
    /// Writing the pcap output failed (disk full, ...).
    #[error("cannot write pcap file {}: {}", path.display(), os_message(err))]
    PcapWrite { path: PathBuf, err: std::io::Error },
    /// Reading the pcap input failed at the operating-system level.
    #[error("cannot read pcap file {}: {}", path.display(), os_message(err))]
    PcapRead { path: PathBuf, err: std::io::Error },
    /// A system call on an interface's socket failed, e.g.
    /// `sending on eth0: Network is down`.
    #[error("{op} on {iface}: {}", os_message(err))]
    Sys {
        op: String,
        iface: String,
        err: std::io::Error,
    },
    /// A privileged operation other than opening an AF_PACKET socket was
    /// refused (EPERM/EACCES), e.g. opening an AF_XDP socket.
    #[error("{what} needs root or {caps}")]
    NotPermitted {
        what: &'static str,
        caps: &'static str,
    },
    /// An AF_XDP socket was asked for a queue the interface does not have.
    #[error("no queue {queue} on {iface}: it has {count} queue(s), 0 to {}", count.saturating_sub(1))]
    NoSuchQueue {
        iface: String,
        queue: u32,
        count: u32,
    },
    /// An AF_XDP receiver with fewer sockets than the interface has queues:
    /// frames on the other queues would go uncounted.
    #[error(
        "{iface} has {queues} receive queues: --io afxdp needs one thread per queue (-p {queues}), or frames on the others would go uncounted"
    )]
    QueuesUncovered {
        iface: String,
        queues: u32,
        threads: usize,
    },
    /// Zero-copy AF_XDP was required but the driver cannot do it (veth,
    /// most virtual devices).
    #[error("zero-copy AF_XDP is not available on {iface} queue {queue}: its driver has no zero-copy support (use zero-copy auto or off)")]
    ZeroCopyUnavailable { iface: String, queue: u32 },
    /// Another AF_XDP socket (of any process) is bound to the queue.
    #[error("queue {queue} of {iface} is busy: another AF_XDP socket is bound to it")]
    QueueBusy { iface: String, queue: u32 },
    /// Another XDP program is attached to the interface (by another
    /// process, a tool, or another part of this process).
    #[error("{0} already has another XDP program attached")]
    XdpBusy(String),
    /// Loading or attaching an XDP program failed.
    #[error("{op} on {iface}: {reason}")]
    Xdp {
        op: String,
        iface: String,
        reason: String,
    },
    /// `--io xdp` refused before sending: the command line asks for what
    /// the interface cannot deliver (a batch, a frame size, a thread count).
    #[error("{0}")]
    XdpSetting(String),
    /// `--io xdp` refused before sending: the system would lose frames
    /// (the TX device takes no redirected frames, a veth peer polls in
    /// threaded mode, ...); the message says what to change.
    #[error("{0}")]
    XdpDelivery(String),
    #[error("{0}")]
    Other(String),
}

impl IoError {
    /// True when the user's input caused it (exit code 2), false for runtime failures.
    ///
    /// Usage errors: no such interface, a pcap file that cannot be created or
    /// opened or is not a valid pcap file, bad ring sizes, a queue the
    /// interface does not have, and zero-copy required on an interface
    /// without it (the command line asks for something this interface cannot
    /// do). Permission, missing kernel features, a busy queue or interface
    /// and failures while running are not.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            IoError::NoSuchInterface(_)
                | IoError::BadRing(_)
                | IoError::NoSuchQueue { .. }
                | IoError::QueuesUncovered { .. }
                | IoError::ZeroCopyUnavailable { .. }
                | IoError::PcapCreate { .. }
                | IoError::PcapOpen { .. }
                | IoError::PcapFormat { .. }
                | IoError::XdpSetting(_)
        )
    }

    /// A [`IoError::Sys`] from the calling thread's `errno`.
    pub(crate) fn last_os(op: impl Into<String>, iface: &str) -> IoError {
        IoError::sys(op, iface, std::io::Error::last_os_error())
    }

    pub(crate) fn sys(op: impl Into<String>, iface: &str, err: std::io::Error) -> IoError {
        IoError::Sys {
            op: op.into(),
            iface: iface.to_string(),
            err,
        }
    }
}

/// The operating system's text for `err`, without Rust's " (os error N)" suffix.
pub fn os_message(err: &std::io::Error) -> String {
    let s = err.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_without_os_error_suffix() {
        let e = IoError::PcapCreate {
            path: "/nonexistent/dir/x.pcap".into(),
            err: std::io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(
            e.to_string(),
            "cannot create pcap file /nonexistent/dir/x.pcap: No such file or directory"
        );
        assert!(e.is_usage());
        let e = IoError::sys(
            "sending",
            "eth0",
            std::io::Error::from_raw_os_error(libc::ENETDOWN),
        );
        assert_eq!(e.to_string(), "sending on eth0: Network is down");
        assert!(!e.is_usage());
        assert_eq!(
            IoError::Unsupported("PACKET_TX_RING").to_string(),
            "PACKET_TX_RING not supported by this kernel"
        );
        assert!(!IoError::Unsupported("PACKET_TX_RING").is_usage());
        assert!(!IoError::PermissionDenied.is_usage());
        assert!(IoError::NoSuchInterface("eth9".into()).is_usage());
        assert_eq!(
            IoError::NoSuchInterface("eth9".into()).to_string(),
            "no such interface: eth9"
        );
        assert!(IoError::BadRing("x".into()).is_usage());
    }

    #[test]
    fn af_xdp_errors() {
        let e = IoError::NoSuchQueue {
            iface: "veth0".into(),
            queue: 2,
            count: 2,
        };
        assert_eq!(
            e.to_string(),
            "no queue 2 on veth0: it has 2 queue(s), 0 to 1"
        );
        assert!(e.is_usage());
        let e = IoError::ZeroCopyUnavailable {
            iface: "veth0".into(),
            queue: 0,
        };
        assert!(e.is_usage());
        let e = IoError::QueueBusy {
            iface: "veth0".into(),
            queue: 1,
        };
        assert_eq!(
            e.to_string(),
            "queue 1 of veth0 is busy: another AF_XDP socket is bound to it"
        );
        assert!(!e.is_usage());
        let e = IoError::NotPermitted {
            what: "opening an AF_XDP socket",
            caps: "CAP_NET_RAW",
        };
        assert_eq!(
            e.to_string(),
            "opening an AF_XDP socket needs root or CAP_NET_RAW"
        );
        assert!(!e.is_usage());
        assert!(!IoError::XdpBusy("veth0".into()).is_usage());
        assert!(!IoError::Unsupported("AF_XDP").is_usage());
    }
}
