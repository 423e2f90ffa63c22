//! A real PostgreSQL server for the tests of one test binary, started on
//! first use from Debian's `postgresql` package (scripts/deps installs
//! it): `initdb` into a temporary folder, `postgres` listening only on a
//! unix socket in that folder. Each test gets a database of its own.
//!
//! PostgreSQL refuses to run as root: as root, the server runs as the
//! `postgres` user the package creates. The server is stopped and its
//! folder deleted when the test binary exits (an `atexit` handler, which
//! runs after failed tests too); if the binary is killed, the server gets
//! SIGQUIT from the kernel (`PR_SET_PDEATHSIG`) and stops by itself, and
//! the next test binary to start a server deletes the folder (its name
//! carries the pid of the binary that made it).
//!
//! A test that cannot have its server fails, saying why: it never passes
//! quietly.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

const PORT: u16 = 5432;
const USER: &str = "pktlab";

struct Server {
    /// The temporary folder: the data folder and the socket are in it.
    dir: PathBuf,
    pid: i32,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// The folder holding `initdb` and `postgres`: the newest under
/// /usr/lib/postgresql.
fn bin_dir() -> Result<PathBuf, String> {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map_err(|_| {
            "PostgreSQL is not installed (no /usr/lib/postgresql): install Debian's postgresql package (scripts/deps does)".to_string()
        })?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let v: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b).ok_or_else(|| {
        "no initdb under /usr/lib/postgresql/*/bin: install Debian's postgresql package".into()
    })
}

/// The uid and gid the server runs as: `postgres` when we are root.
fn server_user() -> Result<Option<(u32, u32)>, String> {
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new("postgres").unwrap();
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err("running as root and there is no 'postgres' user to run PostgreSQL as (Debian's postgresql package creates it)".into());
    }
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

fn as_server(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid).env("HOME", "/tmp");
    }
    cmd
}

const PREFIX: &str = "pktlab-pg-";

/// Deletes the folders of servers whose test binary is gone.
fn sweep() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn start() -> Result<Server, String> {
    let bin = bin_dir()?;
    let user = server_user()?;
    sweep();
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-", std::process::id()))
        .tempdir()
        .map_err(|e| format!("temporary folder: {e}"))?
        .keep();
    if let Some((uid, gid)) = user {
        let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        if unsafe { libc::chown(c.as_ptr(), uid, gid) } != 0 {
            return Err(format!("chown {} to postgres failed", dir.display()));
        }
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| e.to_string())?;
    let data = dir.join("data");
    let out = as_server(&mut Command::new(bin.join("initdb")), user)
        .args([
            "-D",
            data.to_str().unwrap(),
            "-U",
            USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        ])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    // The server is the child of a thread that lives as long as the
    // process: the parent-death signal fires when the process ends.
    let (tx, rx) = mpsc::channel();
    let postgres = bin.join("postgres");
    let (data2, dir2) = (data.clone(), dir.clone());
    std::thread::spawn(move || {
        let mut cmd = Command::new(postgres);
        as_server(&mut cmd, user)
            .args([
                "-D",
                data2.to_str().unwrap(),
                "-k",
                dir2.to_str().unwrap(),
                "-p",
            ])
            .arg(PORT.to_string())
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=40",
            ])
            .current_dir(&dir2)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT);
                Ok(())
            });
        }
        let child = cmd.spawn();
        let _ = tx.send(
            child
                .as_ref()
                .map(|c| c.id() as i32)
                .map_err(|e| e.to_string()),
        );
        let _keep = child;
        loop {
            std::thread::park();
        }
    });
    let pid = rx
        .recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("postgres: {e}"))?;
    let server = Server { dir, pid };
    unsafe {
        libc::atexit(stop_at_exit);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match postgres::Client::connect(&admin_conninfo(&server.dir), postgres::NoTls) {
            Ok(_) => return Ok(server),
            Err(e) if Instant::now() > deadline => {
                let log =
                    std::fs::read_to_string(server.dir.join("server.log")).unwrap_or_default();
                return Err(format!(
                    "the server did not answer in 60 s: {e}; its log: {}",
                    log.trim()
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn admin_conninfo(dir: &Path) -> String {
    format!(
        "host={} port={PORT} user={USER} dbname=postgres",
        dir.display()
    )
}

extern "C" fn stop_at_exit() {
    if let Some(Ok(s)) = SERVER.get() {
        unsafe {
            // A fast shutdown, then no more waiting than 20 s.
            libc::kill(s.pid, libc::SIGINT);
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut status = 0;
            while libc::waitpid(s.pid, &mut status, libc::WNOHANG) == 0 {
                if Instant::now() > deadline {
                    libc::kill(s.pid, libc::SIGKILL);
                    libc::waitpid(s.pid, &mut status, 0);
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = std::fs::remove_dir_all(&s.dir);
    }
}

/// The server, started on first use; panics with the reason when it
/// cannot be had.
fn server() -> &'static Server {
    match SERVER.get_or_init(start) {
        Ok(s) => s,
        Err(why) => panic!("the PostgreSQL test server cannot run: {why}"),
    }
}

/// A new, empty database on the test server, as a `postgresql://` URL.
pub fn new_database() -> String {
    let s = server();
    let name = format!(
        "h{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    let mut admin = postgres::Client::connect(&admin_conninfo(&s.dir), postgres::NoTls)
        .unwrap_or_else(|e| panic!("the PostgreSQL test server stopped answering: {e}"));
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    url(&name)
}

/// The URL of database `name` on the test server.
pub fn url(name: &str) -> String {
    format!(
        "postgresql://{USER}@/{name}?host={}&port={PORT}",
        server().dir.display()
    )
}

/// The folder of the server's socket.
pub fn socket_dir() -> PathBuf {
    server().dir.clone()
}
