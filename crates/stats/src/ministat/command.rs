//! ministat(1)'s command line: its options checked with ministat's own
//! complaints, its files read as it reads them (every file opened before
//! any is read), and the text or JSON it prints.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};

use super::dataset::{Dataset, MAX_DATASETS};
use super::input::{read_dataset, ParseOptions};
use super::report::{analyze, render, Analysis, RenderOptions};
use crate::cparse::parse_c_long;
use crate::error::StatsError;
use crate::student::Confidence;

/// ministat's options, as words.
#[derive(Clone, Debug, Default)]
pub struct Command {
    /// `-A`: statistics and comparisons only.
    pub no_plot: bool,
    /// `-C`: the column of the data, from 1.
    pub column: Option<String>,
    /// `-c`: the confidence level.
    pub confidence: Option<String>,
    /// `-d`: the field delimiters.
    pub delimiters: Option<Vec<u8>>,
    /// `-n`: statistics only.
    pub stats_only: bool,
    /// `-P`: legend and plot only.
    pub plot_only: bool,
    /// `-q`: no names and no table header.
    pub quiet: bool,
    /// `-s`: one bar per data set.
    pub separate_bars: bool,
    /// `-w`: the plot's width.
    pub width: Option<String>,
    /// `--json`: the analysis as JSON.
    pub json: bool,
    /// The data files; none or `-` is standard input.
    pub files: Vec<OsString>,
}

/// What ministat says before it exits with code 2: its complaint, followed
/// by its usage lines for a bad option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Complaint(pub String);

impl std::fmt::Display for Complaint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// ministat's complaint about an option, and its usage lines.
fn usage(whine: &str) -> Complaint {
    Complaint(format!(
        "{whine}\nUsage: pktlab ministat [-AnPqs] [-C column] [-c confidence] [-d delimiters] [-w width] [--json] [file ...]\n\
         \tconfidence = {{80%, 90%, 95%, 98%, 99%, 99.5%}}"
    ))
}

/// Plot widths we draw: ministat has no limit, but a width below 2 divides
/// by zero and a huge one only exhausts memory.
const WIDTH_RANGE: std::ops::RangeInclusive<i64> = 2..=10_000;

/// What the command shows: ministat's text, or the analysis (`--json`).
#[derive(Clone, Debug)]
pub enum Shown {
    Text(String),
    Analysis(Analysis),
}

/// Runs the command: what to print. `terminal` is the width of the
/// terminal standard output is, if it is one: `$COLUMNS` and the window's
/// columns (see [`terminal_width`]).
pub fn run(c: &Command, terminal: Option<i64>) -> Result<Shown, Complaint> {
    let parse = parse_options(c)?;
    let confidence = match &c.confidence {
        None => Confidence::default(),
        Some(text) => text.parse().map_err(|err| match err {
            StatsError::ConfidenceNotANumber(_) => usage("Not a floating point number"),
            _ => usage("No support for confidence level"),
        })?,
    };
    let width = plot_width(c.width.as_deref(), terminal)?;
    if c.files.len() > MAX_DATASETS {
        return Err(usage("Too many datasets."));
    }
    let datasets = read_datasets(&c.files, &parse)?;
    Ok(if c.json {
        let mut analysis = analyze(&datasets, confidence);
        if c.stats_only {
            analysis.comparisons.clear();
        }
        Shown::Analysis(analysis)
    } else {
        let options = RenderOptions {
            width,
            confidence,
            separate_bars: c.separate_bars,
            show_plot: !(c.no_plot || c.stats_only),
            show_table: !c.plot_only,
            show_comparisons: !(c.stats_only || c.plot_only),
            quiet: c.quiet,
        };
        Shown::Text(render(&datasets, &options))
    })
}

fn parse_options(c: &Command) -> Result<ParseOptions, Complaint> {
    let mut options = ParseOptions::default();
    if let Some(text) = &c.column {
        let column = parse_c_long(text).ok_or_else(|| usage("Invalid column number."))?;
        if column <= 0 {
            return Err(usage("Column number should be positive."));
        }
        options.column = usize::try_from(column).unwrap_or(usize::MAX);
    }
    if let Some(delimiters) = &c.delimiters {
        if delimiters.is_empty() {
            return Err(usage("Can't use empty delimiter string"));
        }
        options.delimiters = delimiters.clone();
    }
    Ok(options)
}

/// `-w`, else the terminal's width, else 74.
fn plot_width(option: Option<&str>, terminal: Option<i64>) -> Result<usize, Complaint> {
    let width = match option {
        Some(text) => {
            let width = parse_c_long(text).ok_or_else(|| usage("Invalid width, not a number."))?;
            if width < 0 {
                return Err(usage("Unable to move beyond left margin."));
            }
            width
        }
        None => terminal.unwrap_or(74),
    };
    if !WIDTH_RANGE.contains(&width) {
        return Err(usage(&format!(
            "Invalid width {width}, must be {} to {}.",
            WIDTH_RANGE.start(),
            WIDTH_RANGE.end()
        )));
    }
    Ok(width as usize)
}

/// The plot's width on a terminal, as ministat takes it: `$COLUMNS`
/// (`columns`), else the window's width (`window`) less the two borders. A
/// width we cannot draw (COLUMNS=0, a 1-column window) is None: 74.
pub fn terminal_width(columns: Option<&str>, window: impl FnOnce() -> Option<u16>) -> Option<i64> {
    let from_env = columns
        .filter(|columns| !columns.is_empty())
        .map(c_atoi)
        .filter(|width| WIDTH_RANGE.contains(width));
    from_env.or_else(|| Some(i64::from(window()?) - 2).filter(|width| WIDTH_RANGE.contains(width)))
}

/// C's `atoi`: the leading number of `text`, 0 if there is none.
fn c_atoi(text: &str) -> i64 {
    let text = text.trim_start();
    let sign_len = usize::from(text.starts_with(['+', '-']));
    let digits = text[sign_len..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    parse_c_long(&text[..sign_len + digits]).unwrap_or(0)
}

enum Source {
    Stdin,
    File(File),
}

/// The operating system's text for `err`, without Rust's " (os error N)".
fn os_text(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Opens every file first (ministat reports a missing file before reading
/// any), then reads and checks the data sets in order.
fn read_datasets(files: &[OsString], options: &ParseOptions) -> Result<Vec<Dataset>, Complaint> {
    let stdin_name = OsString::from("<stdin>");
    let named: Vec<(&OsStr, bool)> = if files.is_empty() {
        vec![(&stdin_name, true)]
    } else {
        files.iter().map(|f| (f.as_os_str(), f == "-")).collect()
    };
    let mut sources = Vec::with_capacity(named.len());
    for &(name, is_stdin) in &named {
        sources.push(if is_stdin {
            Source::Stdin
        } else {
            Source::File(File::open(name).map_err(|err| {
                Complaint(format!(
                    "ministat: Cannot open {}: {}",
                    name.to_string_lossy(),
                    os_text(&err)
                ))
            })?)
        });
    }
    let mut datasets = Vec::with_capacity(named.len());
    for ((name, _), source) in named.iter().zip(sources) {
        let name = name.to_string_lossy();
        let mut data = Vec::new();
        let read = match source {
            Source::Stdin => io::stdin().lock().read_to_end(&mut data),
            Source::File(mut file) => file.read_to_end(&mut data),
        };
        read.map_err(|err| Complaint(format!("ministat: Cannot read {name}: {}", os_text(&err))))?;
        let dataset = read_dataset(&name, &data, options).map_err(|err| match err {
            // ministat reports bad data with errx(3), which prefixes its name.
            StatsError::InvalidData { .. } => Complaint(format!("ministat: {err}")),
            _ => Complaint(err.to_string()),
        })?;
        datasets.push(dataset);
    }
    Ok(datasets)
}
