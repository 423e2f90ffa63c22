//! Network namespaces and veth pairs, through iproute2.
//!
//! Namespaces are the named ones of `ip netns` (a bind mount under
//! `/var/run/netns`), so `ip netns exec NAME ...` works on them from any shell.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use pktlab_io::netns::NetnsError;

use crate::runner;
use crate::LabError;

/// Where `ip netns` keeps its named namespaces.
pub use pktlab_io::netns::NETNS_RUN_DIR;

/// Most queues a lab veth pair may have.
pub const MAX_QUEUES: u16 = 64;

/// Longest namespace name accepted here (far below the file-name limit, so
/// that names stay readable in `ip netns list`).
pub const MAX_NAME_LEN: usize = 64;

/// A network namespace owned by a test or a lab; deleted on Drop unless `keep()`.
#[derive(Debug)]
pub struct Netns {
    name: String,
    owned: bool,
}

impl Netns {
    /// Creates the namespace `name` with `ip netns add`; fails if it exists already.
    pub fn create(name: &str) -> Result<Netns, LabError> {
        check_ns_name(name)?;
        if exists(name) {
            return Err(LabError::NamespaceExists(name.to_string()));
        }
        runner::ip(&["netns", "add", name])?;
        let ns = Netns {
            name: name.to_string(),
            owned: true,
        };
        // A fresh namespace has its loopback down; almost everything wants it up.
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Creates a namespace named `base-PID-N` that does not exist yet.
    pub fn unique(base: &str) -> Result<Netns, LabError> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        check_name("namespace base name", base, MAX_NAME_LEN - 24)?;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!("{base}-{}-{n}", std::process::id());
            if !exists(&name) {
                return Netns::create(&name);
            }
        }
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip netns exec NAME argv...`; returns stdout on success, a one-line
    /// error with the command and its stderr otherwise.
    pub fn run(&self, argv: &[&str]) -> Result<String, LabError> {
        run_in(&self.name, argv)
    }

    /// Runs `ip -n NAME args...` (cheaper than `run(["ip", ...])`).
    pub fn ip(&self, args: &[&str]) -> Result<String, LabError> {
        ip_in(&self.name, args)
    }

    /// A `Command` prefixed with `ip netns exec NAME`, for callers that spawn
    /// (for example `pktlab recv` in the background).
    pub fn command(&self, program: &str) -> Command {
        command_in(&self.name, program)
    }

    /// Runs `f` on a thread that has entered this namespace; see [`within`].
    pub fn within<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, LabError> {
        within(&self.name, f)
    }

    /// Keeps the namespace after this value is dropped and returns its name.
    pub fn keep(mut self) -> String {
        self.owned = false;
        std::mem::take(&mut self.name)
    }

    /// Deletes the namespace now, reporting failure (Drop ignores it).
    pub fn delete(mut self) -> Result<(), LabError> {
        self.owned = false;
        delete(&self.name)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.owned {
            let _ = delete(&self.name);
        }
    }
}

/// True when a named network namespace `name` exists.
pub fn exists(name: &str) -> bool {
    !name.is_empty()
        && !name.contains('/')
        && std::path::Path::new(NETNS_RUN_DIR).join(name).exists()
}

/// The named network namespaces, like `ip netns list` without the ids.
pub fn list() -> Result<Vec<String>, LabError> {
    let dir = match std::fs::read_dir(NETNS_RUN_DIR) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => {
            return Err(LabError::Sys {
                what: format!("cannot list {NETNS_RUN_DIR}"),
                err,
            })
        }
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Deletes the named namespace with `ip netns del` (which also destroys the
/// interfaces in it once no process holds it).
pub fn delete(name: &str) -> Result<(), LabError> {
    check_ns_name(name)?;
    runner::ip(&["netns", "del", name]).map(|_| ())
}

/// Runs `ip netns exec NS argv...`; returns stdout, or a one-line error with
/// the command and its stderr.
pub fn run_in(ns: &str, argv: &[&str]) -> Result<String, LabError> {
    check_ns_name(ns)?;
    let ip = runner::ip_path()?;
    let args: Vec<&str> = ["netns", "exec", ns]
        .into_iter()
        .chain(argv.iter().copied())
        .collect();
    runner::run(ip, "ip", &args)
}

/// Runs `ip -n NS args...` and returns its stdout.
pub fn ip_in(ns: &str, args: &[&str]) -> Result<String, LabError> {
    check_ns_name(ns)?;
    let full: Vec<&str> = ["-n", ns].into_iter().chain(args.iter().copied()).collect();
    runner::ip(&full)
}

/// A `Command` for `ip netns exec NS program`; add arguments and spawn it.
pub fn command_in(ns: &str, program: &str) -> Command {
    let ip = runner::ip_path()
        .map(|p| p.as_os_str())
        .unwrap_or("ip".as_ref());
    let mut cmd = Command::new(ip);
    cmd.args(["netns", "exec", ns, program]);
    cmd
}

/// Runs `f` on a new thread that has entered the network namespace `ns`
/// (`setns(2)`), and returns its result. Sockets that `f` opens belong to
/// `ns` for their whole life, wherever they are used afterwards, so this is
/// how to open a packet port on a lab interface from inside the process.
/// A panic in `f` is propagated.
pub fn within<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> Result<T, LabError> {
    check_ns_name(ns)?;
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || {
            pktlab_io::netns::enter(ns).map_err(|e| match e {
                NetnsError::NotFound(_) => LabError::NoNamespace(ns.to_string()),
                NetnsError::Open { path, err } => LabError::Sys {
                    what: format!("cannot open {}", path.display()),
                    err,
                },
                NetnsError::Enter { err, .. } => LabError::Sys {
                    what: format!("cannot enter network namespace {ns}"),
                    err,
                },
                NetnsError::BadName(_) => LabError::BadName {
                    what: "network namespace name",
                    value: ns.to_string(),
                    why: "it is not a file name".into(),
                },
            })?;
            Ok(f())
        });
        match handle.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// One end of a veth pair.
#[derive(Clone, Copy, Debug)]
pub struct VethEnd<'a> {
    /// Namespace the end lives in.
    pub ns: &'a str,
    /// Interface name (at most 15 bytes).
    pub name: &'a str,
    /// MAC address, or `None` for a random one.
    pub mac: Option<&'a str>,
}

/// MTU set on veth pairs, so frames up to 9018 bytes (9000 + Ethernet header
/// and FCS) pass.
pub const VETH_MTU: u32 = 9000;

/// Creates a veth pair with one end in each namespace (or both in one), no
/// addresses, links up, MTU 9000, `queues` tx/rx queues, random MACs.
pub fn veth_pair(
    ns_a: &str,
    if_a: &str,
    ns_b: &str,
    if_b: &str,
    queues: u16,
) -> Result<(), LabError> {
    veth_pair_with(
        VethEnd {
            ns: ns_a,
            name: if_a,
            mac: None,
        },
        VethEnd {
            ns: ns_b,
            name: if_b,
            mac: None,
        },
        queues,
    )
}

/// Like [`veth_pair`], with optional MAC addresses. Both ends are created
/// directly inside their namespaces, so nothing appears in the caller's one.
pub fn veth_pair_with(a: VethEnd<'_>, b: VethEnd<'_>, queues: u16) -> Result<(), LabError> {
    if queues == 0 || queues > MAX_QUEUES {
        return Err(LabError::BadQueues(queues));
    }
    for end in [&a, &b] {
        check_ns_name(end.ns)?;
        check_if_name(end.name)?;
        if let Some(mac) = end.mac {
            check_mac(mac)?;
        }
    }
    let q = queues.to_string();
    let mtu = VETH_MTU.to_string();
    let end_args = |end: &VethEnd<'_>| -> Vec<String> {
        let mut v: Vec<String> = [
            "netns",
            end.ns,
            "numtxqueues",
            &q,
            "numrxqueues",
            &q,
            "mtu",
            &mtu,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(mac) = end.mac {
            v.extend(["address".to_string(), mac.to_string()]);
        }
        v
    };
    let mut args: Vec<String> = vec!["link".into(), "add".into(), a.name.into()];
    args.extend(end_args(&a));
    args.extend(["type", "veth", "peer", "name", b.name].map(String::from));
    args.extend(end_args(&b));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    runner::ip(&args)?;
    ip_in(a.ns, &["link", "set", a.name, "up"])?;
    ip_in(b.ns, &["link", "set", b.name, "up"])?;
    Ok(())
}

fn check_ns_name(name: &str) -> Result<(), LabError> {
    check_name("network namespace name", name, MAX_NAME_LEN)
}

/// Accepts 1..=max letters, digits, '-' and '_', not starting with '-'.
pub(crate) fn check_name(what: &'static str, value: &str, max: usize) -> Result<(), LabError> {
    let bad = |why: String| LabError::BadName {
        what,
        value: value.to_string(),
        why,
    };
    if value.is_empty() {
        return Err(bad("it is empty".into()));
    }
    if value.len() > max {
        return Err(bad(format!("longer than {max} characters")));
    }
    if let Some(c) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(bad(format!(
            "{c:?} is not allowed (use letters, digits, '-' and '_')"
        )));
    }
    if value.starts_with('-') {
        return Err(bad("it must not start with '-'".into()));
    }
    Ok(())
}

fn check_if_name(name: &str) -> Result<(), LabError> {
    // IFNAMSIZ is 16 including the terminating NUL.
    check_name("interface name", name, 15)
}

fn check_mac(mac: &str) -> Result<(), LabError> {
    let ok = mac.len() == 17
        && mac
            .split(':')
            .all(|part| part.len() == 2 && part.bytes().all(|b| b.is_ascii_hexdigit()))
        && mac.split(':').count() == 6;
    if ok {
        Ok(())
    } else {
        Err(LabError::BadName {
            what: "MAC address",
            value: mac.to_string(),
            why: "expected six hex pairs like 02:70:6b:00:00:01".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("x", "pktlab", 40).is_ok());
        assert!(check_name("x", "t123_a-b", 40).is_ok());
        for bad in ["", "a b", "-a", "a/b", "a.b", "é", &"x".repeat(41)] {
            let err = check_name("lab prefix", bad, 40).unwrap_err();
            assert!(err.is_usage());
            assert!(!err.to_string().contains('\n'));
        }
        assert_eq!(
            check_name("lab prefix", "a b", 40).unwrap_err().to_string(),
            "invalid lab prefix 'a b': ' ' is not allowed (use letters, digits, '-' and '_')"
        );
        assert!(check_if_name("g0").is_ok());
        assert!(check_if_name("sixteen-chars-xx").is_err());
    }

    #[test]
    fn macs() {
        assert!(check_mac("02:70:6b:00:00:01").is_ok());
        assert!(check_mac("02:70:6B:0a:Ff:01").is_ok());
        for bad in [
            "02:70:6b:00:00",
            "02:70:6b:00:00:001",
            "02-70-6b-00-00-01",
            "02:70:6b:00:00:0g",
            "",
        ] {
            assert!(check_mac(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn exists_rejects_odd_names() {
        assert!(!exists(""));
        assert!(!exists("../netns"));
        assert!(!exists("pktlab-surely-not-a-namespace-xyz"));
    }

    #[test]
    fn command_in_prefixes_ip_netns_exec() {
        let cmd = command_in("lab-gen", "pktlab");
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_str().unwrap().to_string())
            .collect();
        assert_eq!(args, ["netns", "exec", "lab-gen", "pktlab"]);
    }
}
