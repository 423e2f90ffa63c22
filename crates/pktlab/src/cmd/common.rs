//! Argument groups and small helpers shared by the subcommands.

use std::io::Write;

/// The drop tracer in `mode`; where it cannot start in auto mode, one
/// line saying why and what the run does without it (`fallback`).
pub fn drop_tracer(
    mode: pktlab_loss::drops::DropTrace,
    fallback: &str,
) -> anyhow::Result<pktlab_loss::tracer::Tracer> {
    let (tracer, off) = pktlab_loss::tracer::Tracer::start(mode)?;
    if let Some(why) = off {
        eprintln!("drop trace off: {why}; {fallback}");
    }
    Ok(tracer)
}

/// `--json` and `--quiet`, shared by every command that reports a run.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Output {
    /// Print JSON lines (one object per interval, then a summary) instead of text
    #[arg(long = "json")]
    pub json: bool,
    /// Print only the summary
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

/// Installs the Ctrl-C / SIGTERM handlers: the first stops cleanly and
/// keeps the summary, the second exits at once.
pub fn install_signals() -> anyhow::Result<()> {
    pktlab_engine::stop::install_signal_handlers()?;
    Ok(())
}

impl Output {
    /// Prints a progress line (an interval), as JSON or text, unless quiet.
    pub fn progress(
        &self,
        json: impl FnOnce() -> serde_json::Value,
        text: impl FnOnce() -> String,
    ) {
        if self.json {
            print_json(&json());
        } else if !self.quiet {
            println!("{}", text());
        }
    }

    /// Prints the closing summary, as JSON or text (text ends with a newline).
    pub fn summary(&self, json: impl FnOnce() -> serde_json::Value, text: impl FnOnce() -> String) {
        if self.json {
            print_json(&json());
        } else {
            print!("{}", text());
        }
    }
}

/// Writes `text` to standard output and flushes; a closed pipe (`| head`)
/// is not an error, where `print!` would panic.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to standard output"),
    }
}

/// Writes a line and flushes (so a pipe sees each interval); true when the
/// reader has gone away.
pub fn emit_line(out: &mut impl Write, line: &str) -> anyhow::Result<bool> {
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Ok(()) => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(true),
        Err(e) => Err(e.into()),
    }
}

/// Prints one JSON line and flushes, so that a reader sees each interval
/// as it happens.
pub fn print_json(v: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

/// A hyperfine-style progress bar with an ETA on a terminal; on anything
/// else, nothing but the lines printed through it.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    run: String,
}

impl Progress {
    /// `total` is in the units `tick` counts (seconds of traffic).
    pub fn new(enabled: bool, total: u64) -> Progress {
        use std::io::IsTerminal;
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total);
            let style = indicatif::ProgressStyle::with_template(
                "{msg:40} {wide_bar:.cyan/blue} {elapsed}/{duration} ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("━╸ ");
            bar.set_style(style);
            bar
        });
        Progress {
            bar,
            run: String::new(),
        }
    }

    /// Names the part of the work under way (`run 2/5`).
    pub fn message(&mut self, run: String) {
        self.run = run;
        if let Some(b) = &self.bar {
            b.set_message(self.run.clone());
        }
    }

    /// One more second of traffic, forwarded at `pps`.
    pub fn tick(&mut self, pps: f64) {
        if let Some(b) = &self.bar {
            b.inc(1);
            b.set_message(format!(
                "{}: {}",
                self.run,
                pktlab_report::units::rate(pps, "pps")
            ));
        }
    }

    /// Prints a line above the bar (or just prints it).
    pub fn println(&self, line: String) {
        match &self.bar {
            Some(b) => b.println(line),
            None => println!("{line}"),
        }
    }

    /// A diagnostic line on stderr, above the bar.
    pub fn eprintln(&self, line: String) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
