//! One campaign per lab at a time: a campaign holds an flock(2) on a file
//! under [`LOCK_DIR`] for each thing it drives (the built-in lab's prefix,
//! or each port of a lab on real interfaces) from before the lab is set up
//! until it ends. Two campaigns on one lab would mix their frames in each
//! other's interface counters and silently corrupt both results.
//!
//! The file holds the holder's pid and results folder, so that a second
//! campaign can name the first. The kernel drops an flock when its holder
//! dies, even by `kill -9`: a lock left by a killed campaign is simply free,
//! and the stale text in it tells who left it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use pktlab_lab::ports::Port;

use crate::plan::LabChoice;
use crate::CampaignError;

/// Where the lock files live (a tmpfs: nothing survives a reboot, as no
/// campaign does).
pub const LOCK_DIR: &str = "/run/pktlab";

/// Who holds (or held) a lock, as its file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub dir: String,
}

impl Holder {
    fn text(&self) -> String {
        format!("pid {}\ndir {}\n", self.pid, self.dir)
    }

    fn parse(text: &str) -> Option<Holder> {
        let mut pid = None;
        let mut dir = None;
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("pid", v)) => pid = v.trim().parse().ok(),
                Some(("dir", v)) => dir = Some(v.to_string()),
                _ => {}
            }
        }
        Some(Holder {
            pid: pid?,
            dir: dir?,
        })
    }
}

/// What a lock protects (`lab <prefix>`, `port <iface>`, `port <iface> in
/// namespace <ns>`) and the file name it is kept under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockKey {
    pub what: String,
    pub file: String,
}

/// The keys a campaign on `lab` must hold.
pub fn lock_keys(lab: &LabChoice) -> Vec<LockKey> {
    match lab {
        LabChoice::Builtin { prefix, .. } => vec![LockKey {
            what: format!("lab {prefix}"),
            file: format!("lab-{}.lock", safe(prefix)),
        }],
        LabChoice::Interfaces { lab, hosts, .. } => {
            // Each port where it is: a port on another host is locked here
            // under that host's name (every campaign of this controller
            // sees it; other controllers are not known).
            let gens: Vec<(Option<&str>, &Port)> = if hosts.generators.is_empty() {
                vec![(hosts.gen_host.as_deref(), &lab.gen)]
            } else {
                hosts
                    .generators
                    .iter()
                    .map(|g| (g.host.as_deref(), &g.port))
                    .collect()
            };
            let mut keys: Vec<LockKey> = gens
                .into_iter()
                .chain([(hosts.rcv_host.as_deref(), &lab.rcv)])
                .map(|(host, p)| port_key(host, p))
                .collect();
            keys.dedup();
            keys
        }
    }
}

fn port_key(host: Option<&str>, p: &Port) -> LockKey {
    let (on, on_file) = match host {
        Some(h) => (format!(" on host {h}"), format!("host-{}-", safe(h))),
        None => (String::new(), String::new()),
    };
    match &p.netns {
        Some(ns) => LockKey {
            what: format!("port {} in namespace {ns}{on}", p.iface),
            file: format!("{on_file}netns-{}-port-{}.lock", safe(ns), safe(&p.iface)),
        },
        None => LockKey {
            what: format!("port {}{on}", p.iface),
            file: format!("{on_file}port-{}.lock", safe(&p.iface)),
        },
    }
}

/// Names become file names: anything but `[A-Za-z0-9_-]` becomes `_`.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Held locks; dropping it releases them.
#[derive(Debug)]
pub struct LabLock {
    files: Vec<File>,
    /// Locks found left behind by a process that ended without releasing
    /// them (killed): what they protect, and who left them.
    pub taken_over: Vec<(String, Holder)>,
}

impl LabLock {
    /// Takes every lock of `keys` in [`LOCK_DIR`] for the campaign writing
    /// to `results`, or fails naming the campaign that holds one.
    pub fn acquire(keys: &[LockKey], results: &Path) -> Result<LabLock, CampaignError> {
        LabLock::acquire_in(Path::new(LOCK_DIR), keys, results)
    }

    /// [`LabLock::acquire`] with the lock files in `dir`.
    pub fn acquire_in(
        dir: &Path,
        keys: &[LockKey],
        results: &Path,
    ) -> Result<LabLock, CampaignError> {
        make_lock_dir(dir)?;
        let me = Holder {
            pid: std::process::id(),
            dir: std::fs::canonicalize(results)
                .unwrap_or_else(|_| results.to_path_buf())
                .display()
                .to_string(),
        };
        let mut held = LabLock {
            files: Vec::new(),
            taken_over: Vec::new(),
        };
        for key in keys {
            let path = dir.join(&key.file);
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o666)
                .open(&path)
                .map_err(|e| CampaignError::file(&path, e))?;
            // Whoever created it, every user who can drive the lab must be
            // able to lock it (the umask would leave it 0644).
            let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let holder = read_holder(&mut file);
                    return Err(CampaignError::Busy(busy_message(
                        &key.what,
                        holder.as_ref(),
                    )));
                }
                Err(TryLockError::Error(e)) => return Err(CampaignError::file(&path, e)),
            }
            // A free lock with a holder written in it was never released:
            // its campaign was killed.
            if let Some(old) = read_holder(&mut file) {
                held.taken_over.push((key.what.clone(), old));
            }
            write_holder(&mut file, &me).map_err(|e| CampaignError::file(&path, e))?;
            held.files.push(file);
        }
        Ok(held)
    }
}

impl Drop for LabLock {
    fn drop(&mut self) {
        // An empty file is a lock released cleanly; the flock itself goes
        // with the descriptor.
        for f in &self.files {
            let _ = f.set_len(0);
        }
    }
}

fn busy_message(what: &str, holder: Option<&Holder>) -> String {
    match holder {
        Some(h) => format!(
            "{what} is in use by another campaign: pid {}, results folder {} (wait for it to end, or stop it)",
            h.pid, h.dir
        ),
        None => format!("{what} is in use by another campaign that is just starting"),
    }
}

/// The lock directory, writable by every user who may run pktlab
/// (sticky, as /tmp): a lab is shared by whoever can drive it.
fn make_lock_dir(dir: &Path) -> Result<(), CampaignError> {
    if dir.is_dir() {
        return Ok(());
    }
    match std::fs::create_dir(dir) {
        Ok(()) => std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777))
            .map_err(|e| CampaignError::file(dir, e)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(CampaignError::file(dir, e)),
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    Holder::parse(&text)
}

fn write_holder(file: &mut File, me: &Holder) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(me.text().as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> LockKey {
        LockKey {
            what: format!("lab {name}"),
            file: format!("lab-{name}.lock"),
        }
    }

    #[test]
    fn holder_text_reads_back() {
        let h = Holder {
            pid: 4242,
            dir: "/srv/results/a b".into(),
        };
        assert_eq!(h.text(), "pid 4242\ndir /srv/results/a b\n");
        assert_eq!(Holder::parse(&h.text()), Some(h));
        assert_eq!(Holder::parse(""), None);
        assert_eq!(Holder::parse("pid x\ndir /a\n"), None);
    }

    #[test]
    fn keys_of_labs() {
        let lab = LabChoice::Builtin {
            prefix: "p1".into(),
            queues: 1,
            cpus: None,
        };
        assert_eq!(
            lock_keys(&lab),
            [LockKey {
                what: "lab p1".into(),
                file: "lab-p1.lock".into()
            }]
        );
        assert_eq!(safe("a/b.c"), "a_b_c");
        // A lab on real interfaces: each port, wherever it is.
        let lab = LabChoice::Interfaces {
            lab: pktlab_lab::ports::InterfaceLab {
                gen: pktlab_lab::ports::Port::new("eth1", None),
                rcv: pktlab_lab::ports::Port::new("eth2", Some("rx")),
                dut_in_mac: [2, 0, 0, 0, 0, 1],
                dut_out_mac: None,
                dut: pktlab_lab::dut::DutRunner::Local,
                dut_ifaces: Vec::new(),
            },
            hosts: Box::default(),
            state_probe: None,
        };
        assert_eq!(
            lock_keys(&lab),
            [
                LockKey {
                    what: "port eth1".into(),
                    file: "port-eth1.lock".into()
                },
                LockKey {
                    what: "port eth2 in namespace rx".into(),
                    file: "netns-rx-port-eth2.lock".into()
                }
            ]
        );
        // The receiver on another host: locked under that host's name.
        let LabChoice::Interfaces {
            lab, state_probe, ..
        } = lab
        else {
            unreachable!()
        };
        let remote = LabChoice::Interfaces {
            lab,
            hosts: Box::new(crate::plan::LabHosts {
                rcv_host: Some("root@c".into()),
                ..Default::default()
            }),
            state_probe,
        };
        assert_eq!(
            lock_keys(&remote)[1],
            LockKey {
                what: "port eth2 in namespace rx on host root@c".into(),
                file: "host-root_c-netns-rx-port-eth2.lock".into()
            }
        );
    }

    #[test]
    fn a_held_lock_refuses_a_second_holder_naming_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let results = tmp.path().join("r1");
        std::fs::create_dir(&results).unwrap();
        let first = LabLock::acquire_in(&locks, &[key("x")], &results).unwrap();
        assert!(first.taken_over.is_empty());
        let mode = std::fs::metadata(&locks).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o1777);
        // flock is per open file: a second open in this process conflicts
        // exactly as another process's would.
        let e = LabLock::acquire_in(&locks, &[key("x")], tmp.path()).unwrap_err();
        let want = format!(
            "lab x is in use by another campaign: pid {}, results folder {} (wait for it to end, or stop it)",
            std::process::id(),
            std::fs::canonicalize(&results).unwrap().display()
        );
        assert_eq!(e.to_string(), want);
        assert!(!e.is_usage());
        // Another lab is free.
        drop(LabLock::acquire_in(&locks, &[key("y")], &results).unwrap());
        drop(first);
        // Released cleanly: empty, and nothing to take over.
        assert_eq!(
            std::fs::read_to_string(locks.join("lab-x.lock")).unwrap(),
            ""
        );
        let again = LabLock::acquire_in(&locks, &[key("x")], &results).unwrap();
        assert!(again.taken_over.is_empty());
    }

    #[test]
    fn a_lock_left_written_is_taken_over_and_named() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("lab-z.lock"), "pid 999999\ndir /gone/r\n").unwrap();
        let l = LabLock::acquire_in(tmp.path(), &[key("z")], tmp.path()).unwrap();
        assert_eq!(
            l.taken_over,
            [(
                "lab z".to_string(),
                Holder {
                    pid: 999_999,
                    dir: "/gone/r".into()
                }
            )]
        );
        let text = std::fs::read_to_string(tmp.path().join("lab-z.lock")).unwrap();
        assert!(
            text.starts_with(&format!("pid {}\n", std::process::id())),
            "{text}"
        );
    }
}
