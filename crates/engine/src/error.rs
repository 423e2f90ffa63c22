//! The engine's error type.

use pktlab_io::IoError;

/// A failure of a run. Messages are one line.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A port failed to open or failed while running.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Frames that cannot be built (bad input).
    #[error(transparent)]
    Wire(#[from] pktlab_wire::WireError),
    /// A CPU list that cannot be used (bad input).
    #[error("{0}")]
    BadCpus(String),
    /// The plan itself is inconsistent (bad input), e.g. zero threads.
    #[error("{0}")]
    BadPlan(String),
    /// Pinning a thread or entering a namespace failed at run time.
    #[error("{0}")]
    System(String),
    /// A worker thread panicked; this is a bug.
    #[error("a {0} worker thread panicked (this is a bug in pktlab)")]
    WorkerPanicked(&'static str),
    /// Frames were built but did not all go out (`--io xdp`).
    #[error("{0}")]
    Undelivered(Undelivered),
}

/// The frames of an `--io xdp` run that did not go out, by cause, as the
/// kernel's XDP tracepoints and the program's counters tell them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Undelivered {
    /// The interface the frames were for.
    pub iface: String,
    /// Frames the program built (and aborted).
    pub built: u64,
    /// Dropped by the interface's driver (a full ring).
    pub driver_drops: u64,
    /// Refused by the redirect.
    pub redirect_errors: u64,
    /// Aborted by the program.
    pub aborted: u64,
    /// Built but never seen by the tracepoints.
    pub unseen: u64,
    /// The last error the tracepoints saw (a negative errno), 0 for none.
    pub last_errno: i64,
}

impl Undelivered {
    /// Frames that did not go out, all causes together.
    pub fn lost(&self) -> u64 {
        self.driver_drops + self.redirect_errors + self.aborted + self.unseen
    }
}

impl std::fmt::Display for Undelivered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let iface = &self.iface;
        let mut causes = Vec::new();
        if self.driver_drops > 0 {
            causes.push(format!(
                "{} dropped by {iface}'s driver (a full ring)",
                self.driver_drops
            ));
        }
        if self.redirect_errors > 0 {
            causes.push(format!("{} refused by the redirect", self.redirect_errors));
        }
        if self.aborted > 0 {
            causes.push(format!("{} aborted by the program", self.aborted));
        }
        if self.unseen > 0 {
            causes.push(format!(
                "{} not seen by the kernel's XDP tracepoints",
                self.unseen
            ));
        }
        write!(
            f,
            "{} of {} frames did not go out on {iface}: {}",
            self.lost(),
            self.built,
            causes.join(", ")
        )?;
        if self.last_errno != 0 {
            let e = std::io::Error::from_raw_os_error(-self.last_errno as i32);
            write!(f, " (last error: {})", pktlab_io::os_message(&e))?;
        }
        Ok(())
    }
}

impl EngineError {
    /// True when the user's input caused it (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            EngineError::Io(e) => e.is_usage(),
            EngineError::Wire(_) | EngineError::BadCpus(_) | EngineError::BadPlan(_) => true,
            EngineError::System(_)
            | EngineError::WorkerPanicked(_)
            | EngineError::Undelivered { .. } => false,
        }
    }
}
