//! One `pktlab worker --stdio` on a host, seen from the controller: the job
//! sent, `ready` awaited, `start` sent, then replies read until a summary,
//! with `stop` sent when the controller's stop signal fires.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use pktlab_engine::StopSignal;
use pktlab_io::clock::realtime_ns;

use pktlab_engine::tx::{TxEvent, TxSummary};

use super::host::{last_line, shell_quote, SshHost};
use crate::worker::protocol::{Command, Job, Reply, PROTOCOL_VERSION};
use crate::RemoteError;

/// How long a worker may take to answer the job with `ready` (ssh's own
/// connect timeout and keep-alives bound the rest).
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How far ahead of "now" a lone worker is told to start.
const START_MARGIN: Duration = Duration::from_millis(50);
/// How often the stop signal is looked at while replies are awaited.
const TICK: Duration = Duration::from_millis(20);

/// What a worker adds to its run before it stops on its own: time for a
/// late start, the receiver's drain and a slow link.
pub const GRACE: Duration = Duration::from_secs(15);

/// An interface's facts on a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortFacts {
    pub mac: [u8; 6],
    pub up: bool,
    pub mtu: u32,
    /// It has a device, whose interrupts can be counted.
    pub device: bool,
}

/// A generator's replies until its summary.
pub fn follow_gen(
    s: &mut Session,
    stop: &StopSignal,
    on_event: &mut dyn FnMut(TxEvent),
) -> Result<TxSummary, RemoteError> {
    loop {
        match s.next(stop)? {
            Reply::Started { backend } => on_event(TxEvent::Started { backend }),
            Reply::TxInterval(iv) => on_event(TxEvent::Interval(iv)),
            Reply::TxSummary(summary) => return Ok(summary),
            other => return Err(unexpected(s.host(), &other)),
        }
    }
}

/// A reply the controller did not expect at this point of the job.
pub fn unexpected(host: &SshHost, r: &Reply) -> RemoteError {
    RemoteError::Failed(format!(
        "{}: unexpected reply from the worker: {r:?}",
        host.label()
    ))
}

/// A running worker.
pub struct Session {
    host: SshHost,
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<Result<Reply, String>>,
    stderr: Arc<Mutex<String>>,
    stop_sent: bool,
    /// The worker's clock minus ours, from its `ready` (ns).
    pub offset_ns: i64,
}

impl Session {
    /// Starts a worker on `host` and hands it `job`; returns once it is
    /// ready, not yet started.
    pub fn open(host: &SshHost, job: &Job) -> Result<Session, RemoteError> {
        let sent_at = realtime_ns();
        let mut s = Session::spawn(host, job)?;
        match s.first_reply()? {
            Reply::Ready {
                version,
                pktlab,
                clock_unix_ns,
            } => {
                if version != PROTOCOL_VERSION {
                    return Err(s.fail(&format!(
                        "its pktlab {pktlab} speaks protocol version {version}, this one (pktlab {}) {PROTOCOL_VERSION}",
                        env!("CARGO_PKG_VERSION")
                    )));
                }
                // Its reading against the middle of our round trip.
                let mid = sent_at / 2 + realtime_ns() / 2;
                s.offset_ns = clock_unix_ns as i64 - mid as i64;
                Ok(s)
            }
            Reply::Error { message } => Err(s.fail(&message)),
            other => Err(s.fail(&format!("unexpected first reply {other:?}"))),
        }
    }

    pub fn host(&self) -> &SshHost {
        &self.host
    }

    /// Runs a worker with `job` sent.
    fn spawn(host: &SshHost, job: &Job) -> Result<Session, RemoteError> {
        host.connect()?;
        let pktlab = host.pktlab()?;
        let mut child = host
            .command(&format!("exec {} worker --stdio", shell_quote(&pktlab)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a terminal's Ctrl-C reaches pktlab,
            // which stops the worker with a `stop` line and keeps its
            // summary, instead of killing ssh under it.
            .process_group(0)
            .spawn()
            .map_err(|e| RemoteError::Failed(format!("{}: cannot run ssh: {e}", host.label())))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || read_replies(stdout, tx));
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = stderr.clone();
            std::thread::spawn(move || collect(stderr_pipe, &stderr));
        }
        let mut s = Session {
            host: host.clone(),
            stdin: child.stdin.take(),
            child,
            replies,
            stderr,
            stop_sent: false,
            offset_ns: 0,
        };
        s.send_line(&serde_json::to_string(job).expect("a job serialises"))?;
        Ok(s)
    }

    fn first_reply(&mut self) -> Result<Reply, RemoteError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match self.replies.recv_timeout(TICK) {
                Ok(r) => return r.map_err(|e| self.fail(&e)),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => continue,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(self.fail("no answer from the worker within 30 s"))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(self.lost()),
            }
        }
    }

    /// Tells the worker to start `START_MARGIN` from now.
    pub fn start_now(&mut self) -> Result<(), RemoteError> {
        let at = realtime_ns() + START_MARGIN.as_nanos() as u64;
        self.start_at(at)
    }

    /// Tells the worker to start when our clock reads `at` (its own
    /// reading is shifted by the offset measured at `ready`).
    pub fn start_at(&mut self, at: u64) -> Result<(), RemoteError> {
        let theirs = (at as i64 + self.offset_ns).max(0) as u64;
        let line = serde_json::to_string(&Command::Start { at_unix_ns: theirs })
            .expect("a command serialises");
        self.send_line(&line)
    }

    /// The next reply; sends `stop` once when `stop` fires. A worker whose
    /// connection ends before its summary is an error naming the host.
    pub fn next(&mut self, stop: &StopSignal) -> Result<Reply, RemoteError> {
        loop {
            if stop.is_set() && !self.stop_sent {
                self.stop_sent = true;
                let line = serde_json::to_string(&Command::Stop).expect("a command serialises");
                // A worker already gone shows up as the end of its replies.
                let _ = self.send_line(&line);
            }
            match self.replies.recv_timeout(TICK) {
                Ok(Ok(Reply::Error { message })) => return Err(self.fail(&message)),
                Ok(Ok(r)) => return Ok(r),
                Ok(Err(e)) => return Err(self.fail(&e)),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(self.lost()),
            }
        }
    }

    /// Waits for the worker's ssh to end (after its summary).
    pub fn finish(mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }

    fn send_line(&mut self, line: &str) -> Result<(), RemoteError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(self.lost());
        };
        let ok = writeln!(stdin, "{line}").and_then(|_| stdin.flush());
        ok.map_err(|_| self.lost())
    }

    fn fail(&self, why: &str) -> RemoteError {
        RemoteError::Failed(format!("{}: {why}", self.host.label()))
    }

    /// The connection ended: say why as ssh or the worker did.
    fn lost(&mut self) -> RemoteError {
        // ssh's last words come with its exit.
        let end = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < end => std::thread::sleep(TICK),
                _ => break None,
            }
        };
        std::thread::sleep(Duration::from_millis(50));
        let err = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        let why = match (last_line(&err), status) {
            (Some(l), _) => l,
            (None, Some(s)) => format!("ssh ended ({s})"),
            (None, None) => "no more output".into(),
        };
        self.fail(&format!(
            "the worker's connection ended before its summary ({why})"
        ))
    }
}

impl Drop for Session {
    /// The end of its input stops a worker that is still running; its ssh
    /// goes too.
    fn drop(&mut self) {
        self.stdin.take();
        if let Ok(None) = self.child.try_wait() {
            let end = Instant::now() + Duration::from_secs(3);
            while Instant::now() < end {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(TICK);
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read_replies(out: impl Read, tx: mpsc::Sender<Result<Reply, String>>) {
    for line in BufReader::new(out).lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let r = serde_json::from_str::<Reply>(&line)
            .map_err(|e| format!("unexpected output from the worker ({e}): {line}"));
        if tx.send(r).is_err() {
            break;
        }
    }
}

fn collect(err: impl Read, into: &Mutex<String>) {
    for line in BufReader::new(err).lines() {
        let Ok(line) = line else { break };
        if let Ok(mut s) = into.lock() {
            // The last lines are the ones that explain.
            if s.len() > 16_384 {
                s.clear();
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
}

/// A probe job's answer: the interface's facts, or why there are none.
pub fn probe(host: &SshHost, job: &Job) -> Result<PortFacts, RemoteError> {
    let mut s = Session::spawn(host, job)?;
    match s.first_reply()? {
        Reply::Port {
            mac,
            up,
            mtu,
            device,
        } => {
            s.finish();
            Ok(PortFacts {
                mac,
                up,
                mtu,
                device,
            })
        }
        Reply::Error { message } => Err(s.fail(&message)),
        other => Err(s.fail(&format!("unexpected answer to a probe {other:?}"))),
    }
}
