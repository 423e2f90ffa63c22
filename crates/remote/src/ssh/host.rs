//! One host reached with the system's OpenSSH client.
//!
//! Every ssh pktlab runs has `BatchMode=yes` (never a prompt), keep-alives
//! (`ServerAliveInterval=5`, `ServerAliveCountMax=3`: a dead link is noticed
//! within about 15 s), a connect timeout, and shares one connection per host
//! (`ControlMaster`/`ControlPersist`) whose socket sits in a directory only
//! this user can enter, made for this process. The user's own `ssh_config`
//! (or the campaign's `ssh_config`, as `-F`) supplies keys, ports, users
//! and jump hosts.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

use crate::RemoteError;

/// The sockets of the shared connections of this process's hosts.
#[derive(Debug)]
pub struct ControlDir {
    dir: tempfile::TempDir,
}

impl ControlDir {
    pub fn new() -> Result<Arc<ControlDir>, RemoteError> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("pktlab-ssh-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| RemoteError::file(std::env::temp_dir(), e))?;
        Ok(Arc::new(ControlDir { dir }))
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// An ssh destination (`user@host`, or a `Host` of the ssh config) and how
/// to reach it.
#[derive(Clone, Debug)]
pub struct SshHost {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dest: String,
    config: Option<PathBuf>,
    options: Vec<String>,
    control: Arc<ControlDir>,
    /// The master connection is up.
    connected: OnceLock<()>,
    /// How pktlab is started there (`pktlab`, or the copy in the cache).
    pktlab: OnceLock<String>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.connected.get().is_some() {
            let _ = Command::new("ssh")
                .args(base_args(&self.control, &self.config, &self.options))
                .args(["-O", "exit", &self.dest])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The options of every ssh pktlab runs.
fn base_args(control: &ControlDir, config: &Option<PathBuf>, options: &[String]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if let Some(f) = config {
        v.push("-F".into());
        v.push(f.display().to_string());
    }
    for o in [
        "BatchMode=yes".to_string(),
        format!("ControlPath={}/%C", control.path().display()),
        "ServerAliveInterval=5".into(),
        "ServerAliveCountMax=3".into(),
        "ConnectTimeout=10".into(),
    ] {
        v.push("-o".into());
        v.push(o);
    }
    v.extend(options.iter().cloned());
    v
}

/// `'text'` for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The version line `pktlab --version` prints.
pub fn version_line() -> String {
    format!("pktlab {}", env!("CARGO_PKG_VERSION"))
}

/// What `pktlab worker --protocol` prints.
pub fn protocol_line() -> String {
    format!("protocol {}", crate::worker::protocol::PROTOCOL_VERSION)
}

/// How a pktlab on a host is told apart: its version and its worker's
/// protocol (two builds of one version may speak different ones; a
/// pktlab without `worker --protocol` speaks none this one knows).
fn identity() -> String {
    format!("{} {}", version_line(), protocol_line())
}

/// Shell words that print `PROGRAM`'s identity (empty when it is absent).
fn identity_probe(program: &str) -> String {
    format!("$({program} --version 2>/dev/null) $({program} worker --protocol 2>/dev/null)")
}

impl SshHost {
    pub fn new(
        dest: &str,
        config: Option<PathBuf>,
        options: Vec<String>,
        control: Arc<ControlDir>,
    ) -> SshHost {
        SshHost {
            inner: Arc::new(Inner {
                dest: dest.to_string(),
                config,
                options,
                control,
                connected: OnceLock::new(),
                pktlab: OnceLock::new(),
            }),
        }
    }

    pub fn dest(&self) -> &str {
        &self.inner.dest
    }

    /// `host root@dut`: how messages name it.
    pub fn label(&self) -> String {
        format!("host {}", self.inner.dest)
    }

    fn err(&self, why: impl std::fmt::Display) -> RemoteError {
        RemoteError::Failed(format!("{}: {why}", self.label()))
    }

    /// An ssh command running `remote` (a shell command line) on the host,
    /// over the shared connection.
    pub fn command(&self, remote: &str) -> Command {
        let i = &self.inner;
        let mut c = Command::new("ssh");
        c.args(base_args(&i.control, &i.config, &i.options)).args([
            "-o",
            "ControlMaster=no",
            "-T",
            &i.dest,
            "--",
            remote,
        ]);
        c
    }

    /// Opens the shared connection: the check that the host is reachable,
    /// knows us, and is who the known hosts say. Its log goes to a file, so
    /// that the master, which stays in the background, holds none of our
    /// pipes; the error is its last line.
    pub fn connect(&self) -> Result<(), RemoteError> {
        if self.inner.connected.get().is_some() {
            return Ok(());
        }
        let i = &self.inner;
        let log = i
            .control
            .path()
            .join(format!("connect-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let status = Command::new("ssh")
            .args(base_args(&i.control, &i.config, &i.options))
            .args([
                "-o",
                "ControlMaster=yes",
                "-o",
                "ControlPersist=60",
                "-E",
                &log.display().to_string(),
                "-f",
                "-N",
                &i.dest,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| self.err(format!("cannot run ssh: {e}")))?;
        if !status.success() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let _ = std::fs::remove_file(&log);
            return Err(self.err(last_line(&text).unwrap_or("ssh failed".into())));
        }
        let _ = std::fs::remove_file(&log);
        let _ = i.connected.set(());
        Ok(())
    }

    /// Runs `remote` and returns its standard output; a failure is one line
    /// naming the host.
    pub fn run(&self, remote: &str) -> Result<String, RemoteError> {
        self.connect()?;
        let out = self
            .command(remote)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.err(format!("cannot run ssh: {e}")))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(self.err(
                last_line(&err).unwrap_or_else(|| format!("'{remote}' failed ({})", out.status)),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// How to start pktlab on the host: its own `pktlab` when it is this
    /// version and speaks this protocol, else a copy of this binary in the per-user cache
    /// (`${XDG_CACHE_HOME:-~/.cache}/pktlab/VERSION/pktlab`), put there
    /// over the same connection when missing. Nothing else is written or
    /// removed.
    pub fn pktlab(&self) -> Result<String, RemoteError> {
        if let Some(p) = self.inner.pktlab.get() {
            return Ok(p.clone());
        }
        let version = env!("CARGO_PKG_VERSION");
        let probe = format!(
            "echo \"arch $(uname -m)\"; echo \"path {}\"; \
             d=\"${{XDG_CACHE_HOME:-$HOME/.cache}}/pktlab/{version}\"; echo \"cache $d\"; \
             echo \"cached {}\"",
            identity_probe("pktlab"),
            identity_probe("\"$d/pktlab\"")
        );
        let facts = Probe::parse(&self.run(&probe)?);
        let want = identity();
        let path = if facts.path == want {
            "pktlab".to_string()
        } else {
            let cached = format!("{}/pktlab", facts.cache);
            if facts.cached != want {
                if facts.arch != std::env::consts::ARCH {
                    return Err(self.err(format!(
                        "has no pktlab {version}, and this one is built for {} while the host is {}",
                        std::env::consts::ARCH,
                        facts.arch
                    )));
                }
                self.copy_self(&facts.cache)?;
                let check = self.run(&format!("echo {}", identity_probe(&shell_quote(&cached))))?;
                if check.trim() != want {
                    return Err(self.err(format!(
                        "the copy of pktlab in {} says '{}', not '{want}'",
                        facts.cache,
                        check.trim()
                    )));
                }
            }
            cached
        };
        let _ = self.inner.pktlab.set(path.clone());
        Ok(path)
    }

    /// Copies this process's own binary into `dir` on the host (through a
    /// temporary name, so that a cut copy is never run).
    fn copy_self(&self, dir: &str) -> Result<(), RemoteError> {
        let exe = std::env::current_exe()
            .map_err(|e| self.err(format!("cannot find pktlab's own binary: {e}")))?;
        let file = File::open(&exe).map_err(|e| RemoteError::file(&exe, e))?;
        let d = shell_quote(dir);
        let part = format!("{dir}/.pktlab.part.$$");
        let remote = format!(
            "mkdir -p {d} && cat > \"{part}\" && chmod 755 \"{part}\" && mv -f \"{part}\" {d}/pktlab"
        );
        let out = self
            .command(&remote)
            .stdin(Stdio::from(file))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                let mut err = String::new();
                if let Some(mut e) = c.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                c.wait().map(|s| (s, err))
            })
            .map_err(|e| self.err(format!("cannot run ssh: {e}")))?;
        if !out.0.success() {
            return Err(self.err(format!(
                "cannot copy pktlab into {dir}: {}",
                last_line(&out.1).unwrap_or_else(|| out.0.to_string())
            )));
        }
        Ok(())
    }
}

/// What the install probe printed.
#[derive(Debug, Default, PartialEq)]
struct Probe {
    arch: String,
    path: String,
    cache: String,
    cached: String,
}

impl Probe {
    fn parse(text: &str) -> Probe {
        let mut p = Probe::default();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            let value = value.trim().to_string();
            match key {
                "arch" => p.arch = value,
                "path" => p.path = value,
                "cache" => p.cache = value,
                "cached" => p.cached = value,
                _ => {}
            }
        }
        p
    }
}

/// The last non-empty line of `text`, trimmed.
pub fn last_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_output() {
        let p = Probe::parse(
            "arch x86_64\npath \ncache /root/.cache/pktlab/0.1.0\ncached pktlab 0.1.0\n",
        );
        assert_eq!(
            p,
            Probe {
                arch: "x86_64".into(),
                path: "".into(),
                cache: "/root/.cache/pktlab/0.1.0".into(),
                cached: "pktlab 0.1.0".into(),
            }
        );
    }

    #[test]
    fn quoting_and_lines() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(last_line("x\n  y  \n\n").as_deref(), Some("y"));
        assert_eq!(last_line("\n \n"), None);
    }

    #[test]
    fn every_ssh_is_batch_with_keepalives_and_a_private_socket() {
        let control = ControlDir::new().unwrap();
        let h = SshHost::new(
            "root@dut",
            Some(PathBuf::from("/etc/lab/ssh_config")),
            vec!["-p".into(), "2222".into()],
            control.clone(),
        );
        let c = h.command("uname -a");
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let sock = format!("ControlPath={}/%C", control.path().display());
        let want: Vec<&str> = vec![
            "-F",
            "/etc/lab/ssh_config",
            "-o",
            "BatchMode=yes",
            "-o",
            &sock,
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ConnectTimeout=10",
            "-p",
            "2222",
            "-o",
            "ControlMaster=no",
            "-T",
            "root@dut",
            "--",
            "uname -a",
        ];
        assert_eq!(args, want);
        // Only this user can reach the sockets.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(control.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(h.label(), "host root@dut");
    }
}
