//! Entering a named network namespace (`ip netns` name) from the calling
//! thread: the one `setns(2)` of the workspace. The engine's worker threads
//! and the lab's `within` both come here, so the namespace a socket lands in
//! is decided in one place.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Where `ip netns` keeps its named namespaces.
pub const NETNS_RUN_DIR: &str = "/var/run/netns";

/// Why a thread could not enter a namespace.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// The name cannot be a file name under [`NETNS_RUN_DIR`].
    #[error("invalid network namespace name '{0}'")]
    BadName(String),
    /// No namespace of that name.
    #[error("network namespace {0} does not exist")]
    NotFound(String),
    /// The namespace file exists but cannot be opened.
    #[error("cannot open {}: {}", path.display(), crate::os_message(err))]
    Open { path: PathBuf, err: std::io::Error },
    /// `setns(2)` refused.
    #[error("cannot enter network namespace {ns}: {}", crate::os_message(err))]
    Enter { ns: String, err: std::io::Error },
}

/// The file that stands for namespace `name`, if `name` is a plain file name.
pub fn path_of(name: &str) -> Result<PathBuf, NetnsError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(NetnsError::BadName(name.to_string()));
    }
    Ok(Path::new(NETNS_RUN_DIR).join(name))
}

/// Moves the calling thread into the named network namespace. Sockets
/// opened afterwards belong to it for their whole life, wherever they are
/// used; other threads of the process stay where they are.
pub fn enter(name: &str) -> Result<(), NetnsError> {
    let path = path_of(name)?;
    let file = std::fs::File::open(&path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            NetnsError::NotFound(name.to_string())
        } else {
            NetnsError::Open { path, err }
        }
    })?;
    // SAFETY: the descriptor stays open for the whole call; setns only
    // changes the calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(NetnsError::Enter {
            ns: name.to_string(),
            err: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Moves the calling thread into the network namespace of file `path`
/// (`/proc/PID/ns/net`, a bind mount of one).
pub fn enter_path(path: &Path) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the descriptor stays open for the whole call; setns only
    // changes the calling thread's network namespace.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::process::Command;

    #[test]
    fn names_that_are_not_plain_file_names_are_refused() {
        for bad in ["", ".", "..", "a/b", "/etc"] {
            let e = enter(bad).unwrap_err();
            assert!(matches!(e, NetnsError::BadName(_)), "{bad}: {e:?}");
            assert_eq!(
                e.to_string(),
                format!("invalid network namespace name '{bad}'")
            );
        }
        assert_eq!(path_of("gen").unwrap(), Path::new("/var/run/netns/gen"));
    }

    #[test]
    fn a_missing_namespace_is_named() {
        let name = format!("pktio-{}-absent", std::process::id());
        let e = enter(&name).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("network namespace {name} does not exist")
        );
    }

    #[test]
    fn setns_failure_reads_without_os_error_suffix() {
        let e = NetnsError::Enter {
            ns: "x".into(),
            err: std::io::Error::from_raw_os_error(libc::EPERM),
        };
        assert_eq!(
            e.to_string(),
            "cannot enter network namespace x: Operation not permitted"
        );
    }

    /// Needs root and `ip` (iproute2), as the crate's other namespace tests.
    #[test]
    fn the_calling_thread_and_only_it_moves() {
        let name = format!("pktio-{}-netns", std::process::id());
        let ip = |args: &[&str]| Command::new("ip").args(args).status().expect("run ip");
        assert!(
            ip(&["netns", "add", &name]).success(),
            "ip netns add {name}"
        );
        struct Del(String);
        impl Drop for Del {
            fn drop(&mut self) {
                let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
            }
        }
        let _del = Del(name.clone());

        let ns_inode = |p: &str| std::fs::metadata(p).unwrap().ino();
        let target = ns_inode(&format!("{NETNS_RUN_DIR}/{name}"));
        let before = ns_inode("/proc/thread-self/ns/net");
        assert_ne!(before, target);
        let inside = std::thread::scope(|s| {
            s.spawn(|| {
                enter(&name).unwrap();
                ns_inode("/proc/thread-self/ns/net")
            })
            .join()
            .unwrap()
        });
        assert_eq!(inside, target);
        assert_eq!(ns_inode("/proc/thread-self/ns/net"), before);
    }
}
