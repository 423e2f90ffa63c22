//! Host-wide sysctls (`net.core.netdev_budget`, ..., and
//! `net.netfilter.nf_conntrack_max`) set by a DUT configuration, always
//! restored.
//!
//! These knobs belong to the host's initial network namespace, not to the
//! DUT's: a built-in lab that changes one changes it for the whole host.
//! Their old values are saved to [`STATE_FILE`] *before* the change, with
//! the process that asked for it (the campaign), so that a revert restores
//! them and, after a campaign killed with SIGKILL, the next `lab up`,
//! `lab down` or campaign start does ([`restore_saved_host_sysctls`]),
//! leaving alone the changes of campaigns still running.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::LabError;

/// The host-wide knobs a built-in configuration may set, by short name.
pub const HOST_KNOBS: [(&str, &str); 5] = [
    ("netdev_budget", "net.core.netdev_budget"),
    ("netdev_budget_usecs", "net.core.netdev_budget_usecs"),
    ("dev_weight", "net.core.dev_weight"),
    ("netdev_max_backlog", "net.core.netdev_max_backlog"),
    ("nf_conntrack_max", "net.netfilter.nf_conntrack_max"),
];

/// Where pktlab keeps its run-time state (cleared by a reboot, as the
/// values it records are).
pub const STATE_DIR: &str = "/run/pktlab";
/// The saved values of host sysctls changed and not yet restored.
pub const STATE_FILE: &str = "/run/pktlab/host-sysctls.json";
const LOCK_FILE: &str = "/run/pktlab/host-sysctls.lock";

/// The environment variable through which the process that runs a DUT
/// configuration's lines names itself as the owner of the changes.
pub const OWNER_ENV: &str = "PKTLAB_OWNER_PID";

/// The environment variable that names the host's network namespace
/// (`/proc/PID/ns/net`) to a process running in another one: the DUT's
/// lines learn it from the pktlab that runs them.
pub const HOST_NETNS_ENV: &str = "PKTLAB_HOST_NETNS";

/// The host's network namespace when nobody names it: the first process's.
const FIRST_NETNS: &str = "/proc/1/ns/net";

/// A sysctl that only the host's initial namespace has: where it is
/// visible, this thread is in the host's namespace.
const HOST_ONLY: &str = "/proc/sys/net/core/netdev_max_backlog";

/// The full key of a short knob name.
pub fn host_knob(short: &str) -> Option<&'static str> {
    HOST_KNOBS
        .iter()
        .find(|(s, _)| *s == short)
        .map(|(_, k)| *k)
}

/// Whether `key` is one of [`HOST_KNOBS`]' full keys.
pub fn is_host_key(key: &str) -> bool {
    HOST_KNOBS.iter().any(|(_, k)| *k == key)
}

/// A process, told apart from a later one of the same pid by its start
/// time (`/proc/PID/stat`'s 22nd field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    pub start: u64,
}

impl Owner {
    /// Process `pid`, if it is running.
    pub fn of(pid: u32) -> Option<Owner> {
        Some(Owner {
            pid,
            start: start_time(pid)?,
        })
    }

    /// The owner named by [`OWNER_ENV`], if it is running.
    pub fn from_env() -> Option<Owner> {
        std::env::var(OWNER_ENV)
            .ok()?
            .trim()
            .parse()
            .ok()
            .and_then(Owner::of)
    }

    /// True while that very process runs.
    pub fn is_alive(&self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// One saved value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// The value before pktlab changed it.
    pub value: String,
    /// The value pktlab set.
    pub set_to: String,
    /// The process whose configuration set it (None: nobody to wait for).
    pub owner: Option<Owner>,
}

/// A value put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    pub key: String,
    pub value: String,
    /// What pktlab had set it to.
    pub was: String,
}

/// What one change did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostChange {
    pub key: String,
    pub old: String,
    pub new: String,
}

/// The one line said when a configuration changes a host sysctl.
pub fn host_notice(key: &str, value: &str) -> String {
    format!(
        "note: {key} is host-wide: setting it to {value} changes the whole host, not only the lab \
         (its old value is saved and restored)"
    )
}

/// The key and value of a setting a user typed as `KEY=VALUE`, trimmed.
pub fn parse_setting(setting: &str) -> Result<(&str, &str), LabError> {
    match setting.split_once('=') {
        Some((key, value)) => Ok((key.trim(), value.trim())),
        None => Err(LabError::Usage(format!(
            "invalid setting '{setting}': use KEY=VALUE, as in net.core.netdev_max_backlog=2000"
        ))),
    }
}

/// Sets host sysctl `key` (one of [`HOST_KNOBS`]) to `value` for `owner`,
/// saving its old value first (the first saved value is kept while a
/// change is pending). A value the kernel refuses is an error with the
/// kernel's reason, and nothing stays changed.
pub fn set_host_sysctl(
    key: &str,
    value: &str,
    owner: Option<Owner>,
) -> Result<HostChange, LabError> {
    check_key(key)?;
    let _lock = StateLock::take()?;
    let mut state = read_state()?;
    if let Some(other) = state.get(key).and_then(|s| s.owner) {
        if other.is_alive() && Some(other) != owner {
            return Err(LabError::Knob {
                knob: format!("{key}={value}"),
                why: format!(
                    "process {} (another campaign) has changed it and not restored it yet",
                    other.pid
                ),
            });
        }
    }
    let old = read_host(key)?.ok_or_else(|| missing(key))?;
    let added = !state.contains_key(key);
    let saved = state.entry(key.to_string()).or_insert_with(|| Saved {
        value: old.clone(),
        set_to: value.to_string(),
        owner,
    });
    saved.set_to = value.to_string();
    saved.owner = owner;
    write_state(&state)?;
    if let Err(why) = write_host(key, value) {
        if added {
            state.remove(key);
            write_state(&state)?;
        }
        return Err(LabError::Knob {
            knob: format!("{key}={value}"),
            why: format!("the kernel refused it: {why}"),
        });
    }
    Ok(HostChange {
        key: key.to_string(),
        old,
        new: value.to_string(),
    })
}

/// Restores host sysctl `key` from the saved value, whoever changed it (a
/// configuration's revert); None when nothing was saved for it.
pub fn restore_host_sysctl(key: &str) -> Result<Option<Restored>, LabError> {
    check_key(key)?;
    let _lock = StateLock::take()?;
    let mut state = read_state()?;
    let Some(saved) = state.get(key).cloned() else {
        return Ok(None);
    };
    put_back(key, &saved)?;
    state.remove(key);
    write_state(&state)?;
    Ok(Some(Restored {
        key: key.to_string(),
        value: saved.value,
        was: saved.set_to,
    }))
}

/// Restores every saved host sysctl whose owner is no longer running (a
/// campaign killed before its revert): what the built-in lab's `up` and
/// `down` and a campaign's start call. Changes of running campaigns stay.
pub fn restore_saved_host_sysctls() -> Result<Vec<Restored>, LabError> {
    if !Path::new(STATE_FILE).exists() {
        return Ok(Vec::new());
    }
    let _lock = StateLock::take()?;
    let mut state = read_state()?;
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for (key, saved) in state.clone() {
        if saved.owner.is_some_and(|o| o.is_alive()) {
            continue;
        }
        match put_back(&key, &saved) {
            Ok(()) => {
                state.remove(&key);
                done.push(Restored {
                    key,
                    value: saved.value,
                    was: saved.set_to,
                });
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    if !done.is_empty() {
        write_state(&state)?;
    }
    if !failed.is_empty() {
        return Err(LabError::Knob {
            knob: "saved host sysctls".into(),
            why: format!("cannot restore: {}", failed.join("; ")),
        });
    }
    Ok(done)
}

/// The current values of every host knob (None where the kernel has no
/// such sysctl, e.g. nf_conntrack not loaded).
pub fn read_host_sysctls() -> Result<Vec<(String, Option<String>)>, LabError> {
    HOST_KNOBS
        .iter()
        .map(|(_, k)| Ok((k.to_string(), read_host(k)?)))
        .collect()
}

fn put_back(key: &str, saved: &Saved) -> Result<(), LabError> {
    write_host(key, &saved.value).map_err(|why| LabError::Knob {
        knob: format!("{key}={}", saved.value),
        why: format!("restoring it failed: {why}"),
    })
}

fn check_key(key: &str) -> Result<(), LabError> {
    if is_host_key(key) {
        return Ok(());
    }
    Err(LabError::BadName {
        what: "host sysctl",
        value: key.to_string(),
        why: format!(
            "pktlab sets only {}",
            HOST_KNOBS
                .iter()
                .map(|(_, k)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn missing(key: &str) -> LabError {
    let hint = if key.starts_with("net.netfilter.") {
        " (nf_conntrack is not loaded)"
    } else {
        ""
    };
    LabError::Knob {
        knob: key.to_string(),
        why: format!("this kernel has no such sysctl{hint}"),
    }
}

/// Runs `f` where `/proc/sys/net` shows the host's values: here when this
/// thread is in the host's namespace, else in a thread that enters it
/// ([`HOST_NETNS_ENV`], else the first process's).
fn in_host<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, LabError> {
    if Path::new(HOST_ONLY).exists() {
        return Ok(f());
    }
    let path = std::env::var_os(HOST_NETNS_ENV)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| FIRST_NETNS.into());
    std::thread::scope(|s| {
        s.spawn(|| {
            pktlab_io::netns::enter_path(&path).map_err(|e| LabError::Sys {
                what: format!(
                    "cannot enter the host's network namespace ({})",
                    path.display()
                ),
                err: e,
            })?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|_| {
            Err(LabError::Knob {
                knob: "host sysctls".into(),
                why: "the thread reading them failed".into(),
            })
        })
    })
}

fn read_host(key: &str) -> Result<Option<String>, LabError> {
    let path = crate::sysctl::path_of(key)?;
    in_host(|| {
        std::fs::read_to_string(&path)
            .ok()
            .map(|v| v.trim().to_string())
    })
}

fn write_host(key: &str, value: &str) -> Result<(), String> {
    let path = crate::sysctl::path_of(key).map_err(|e| e.to_string())?;
    in_host(|| std::fs::write(&path, format!("{value}\n")))
        .map_err(|e| e.to_string())?
        .map_err(|e| pktlab_io::os_message(&e))
}

type State = BTreeMap<String, Saved>;

fn read_state() -> Result<State, LabError> {
    match std::fs::read(STATE_FILE) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| LabError::Knob {
            knob: STATE_FILE.into(),
            why: format!("unreadable saved values ({e}): restore them by hand and remove it"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::new()),
        Err(err) => Err(LabError::Sys {
            what: format!("cannot read {STATE_FILE}"),
            err,
        }),
    }
}

/// Replaces the state file (or removes it when empty) atomically: a
/// temporary file, fsynced, renamed over it.
fn write_state(state: &State) -> Result<(), LabError> {
    let sys = |what: String| move |err| LabError::Sys { what, err };
    if state.is_empty() {
        return match std::fs::remove_file(STATE_FILE) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(sys(format!("cannot remove {STATE_FILE}"))(e))
            }
            _ => Ok(()),
        };
    }
    let tmp = format!("{STATE_FILE}.tmp{}", std::process::id());
    let text = serde_json::to_vec_pretty(state).map_err(|e| LabError::Knob {
        knob: STATE_FILE.into(),
        why: e.to_string(),
    })?;
    let mut f = File::create(&tmp).map_err(sys(format!("cannot write {tmp}")))?;
    f.write_all(&text)
        .and_then(|()| f.sync_all())
        .map_err(sys(format!("cannot write {tmp}")))?;
    std::fs::rename(&tmp, STATE_FILE).map_err(sys(format!("cannot write {STATE_FILE}")))?;
    if let Ok(dir) = File::open(STATE_DIR) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// An flock(2) on [`LOCK_FILE`]: one reader-writer of the state at a time
/// (several labs and campaigns share the host). The kernel drops it when
/// its holder dies.
struct StateLock {
    _file: File,
}

impl StateLock {
    fn take() -> Result<StateLock, LabError> {
        std::fs::create_dir_all(STATE_DIR).map_err(|err| LabError::Sys {
            what: format!("cannot create {STATE_DIR}"),
            err,
        })?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(LOCK_FILE)
            .map_err(|err| LabError::Sys {
                what: format!("cannot open {LOCK_FILE}"),
                err,
            })?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(LabError::Sys {
                what: format!("cannot lock {LOCK_FILE}"),
                err: std::io::Error::last_os_error(),
            });
        }
        Ok(StateLock { _file: f })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_as_typed() {
        assert_eq!(
            parse_setting(" net.core.netdev_budget = 600").unwrap(),
            ("net.core.netdev_budget", "600")
        );
        let e = parse_setting("netdev_budget").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "invalid setting 'netdev_budget': use KEY=VALUE, as in net.core.netdev_max_backlog=2000"
        );
    }

    #[test]
    fn knobs_by_short_name() {
        assert_eq!(
            host_knob("netdev_max_backlog"),
            Some("net.core.netdev_max_backlog")
        );
        assert_eq!(
            host_knob("nf_conntrack_max"),
            Some("net.netfilter.nf_conntrack_max")
        );
        assert_eq!(host_knob("ip_forward"), None);
        assert!(is_host_key("net.core.dev_weight"));
        assert!(!is_host_key("net.ipv4.ip_forward"));
        let e = check_key("net.ipv4.ip_forward").unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().starts_with(
            "invalid host sysctl 'net.ipv4.ip_forward': pktlab sets only net.core.netdev_budget,"
        ));
    }

    #[test]
    fn owners_are_told_apart_by_start_time() {
        let me = Owner::of(std::process::id()).unwrap();
        assert!(me.is_alive());
        let reused = Owner {
            pid: me.pid,
            start: me.start + 1,
        };
        assert!(!reused.is_alive());
        assert_eq!(Owner::of(u32::MAX), None);
    }

    #[test]
    fn the_state_file_reads_back() {
        let mut s = State::new();
        s.insert(
            "net.core.dev_weight".into(),
            Saved {
                value: "64".into(),
                set_to: "128".into(),
                owner: Some(Owner { pid: 7, start: 9 }),
            },
        );
        let text = serde_json::to_string(&s).unwrap();
        let back: State = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }
}
