//! The one place that runs external commands (`ip`, and `sysctl` through
//! `ip netns exec`). Failures become one-line [`LabError`]s that name the
//! command and quote its stderr.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::LabError;

/// Directories searched for `ip` after `PATH`: a non-login root shell or a
/// `sudo` with a reduced PATH often lacks the sbin directories.
const SBIN_DIRS: [&str; 4] = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// The path of the `ip` program (iproute2), looked up once.
pub fn ip_path() -> Result<&'static Path, LabError> {
    static IP: OnceLock<Option<PathBuf>> = OnceLock::new();
    IP.get_or_init(|| find_program("ip", std::env::var_os("PATH").as_deref(), &SBIN_DIRS))
        .as_deref()
        .ok_or(LabError::MissingProgram {
            program: "ip",
            package: "iproute2",
        })
}

/// The first executable file called `name` in `path_var`'s directories, then in `extra`.
pub(crate) fn find_program(
    name: &str,
    path_var: Option<&OsStr>,
    extra: &[&str],
) -> Option<PathBuf> {
    let from_path = path_var.map(|p| std::env::split_paths(p).collect::<Vec<_>>());
    from_path
        .into_iter()
        .flatten()
        .chain(extra.iter().map(PathBuf::from))
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// True when the effective user is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `ip args...` and returns its stdout.
pub fn ip(args: &[&str]) -> Result<String, LabError> {
    let ip = ip_path()?;
    run(ip, "ip", args)
}

/// Runs `program args...` (`display` is how the program is named in errors)
/// and returns its stdout, or a one-line error with its stderr.
pub fn run(program: &Path, display: &str, args: &[&str]) -> Result<String, LabError> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    output(cmd, display, args)
}

/// Runs a prepared command and returns its stdout, or a one-line error.
pub fn output(mut cmd: Command, display: &str, args: &[&str]) -> Result<String, LabError> {
    let out = cmd.output().map_err(|err| LabError::Spawn {
        command: command_line(display, args),
        err,
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let mut stderr = one_line(&String::from_utf8_lossy(&out.stderr));
    if stderr.is_empty() {
        stderr = one_line(&String::from_utf8_lossy(&out.stdout));
    }
    if stderr.is_empty() {
        stderr = out.status.to_string();
    }
    Err(LabError::Command {
        command: command_line(display, args),
        stderr,
    })
}

/// Text on one line: trimmed lines joined with "; ".
pub(crate) fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A command line as a shell would accept it, for error messages.
pub(crate) fn command_line(program: &str, args: &[&str]) -> String {
    std::iter::once(program)
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@%+[]".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            command_line("ip", &["-n", "a b", "link", "it's", ""]),
            "ip -n 'a b' link 'it'\\''s' ''"
        );
        assert_eq!(
            command_line("ip", &["route", "add", "2001:2::/49", "via", "2001:2::208"]),
            "ip route add 2001:2::/49 via 2001:2::208"
        );
    }

    #[test]
    fn one_line_joins() {
        assert_eq!(one_line("Error: x\n\n  y \n"), "Error: x; y");
    }

    #[test]
    fn failures_name_the_command_and_stderr() {
        let err = run(
            Path::new("/bin/sh"),
            "sh",
            &["-c", "echo oops >&2; echo more >&2; exit 3"],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`sh -c 'echo oops >&2; echo more >&2; exit 3'` failed: oops; more"
        );
        let err = run(Path::new("/bin/sh"), "sh", &["-c", "exit 4"]).unwrap_err();
        assert!(err.to_string().ends_with("failed: exit status: 4"), "{err}");
        let out = run(Path::new("/bin/sh"), "sh", &["-c", "echo hi"]).unwrap();
        assert_eq!(out, "hi\n");
        let err = run(Path::new("/nonexistent/prog"), "prog", &[]).unwrap_err();
        assert!(err.to_string().starts_with("cannot run `prog`: "), "{err}");
    }

    #[test]
    fn program_lookup() {
        let dir = std::env::temp_dir().join(format!("pktlab-lab-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prog = dir.join("fakeip");
        std::fs::write(&prog, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = std::env::join_paths([dir.clone()]).unwrap();
        // Not executable: not found.
        assert_eq!(find_program("fakeip", Some(&path), &[]), None);
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program("fakeip", Some(&path), &[]), Some(prog.clone()));
        // Found through the extra directories when PATH is empty or unset.
        let d = dir.to_str().unwrap();
        assert_eq!(find_program("fakeip", None, &[d]), Some(prog.clone()));
        assert_eq!(find_program("fakeip", Some(OsStr::new("")), &[]), None);
        assert_eq!(
            find_program("no-such-program-pktlab", Some(&path), &[d]),
            None
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
