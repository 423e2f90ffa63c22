//! `pktlab ministat`: FreeBSD's ministat(1). The statistics and the text come
//! from `pktlab_stats::ministat`; this module reads the options and files and
//! reports bad input with ministat's own lines on stderr (exit code 2).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::os::unix::ffi::OsStrExt;

use pktlab_stats::ministat::{self, Dataset, ParseOptions, RenderOptions, MAX_DATASETS};
use pktlab_stats::{parse_c_long, Confidence, StatsError};

use crate::cmd::common;
use crate::error::{os_message, Exit};

#[derive(clap::Args)]
#[command(
    args_override_self = true,
    after_help = "Compares up to 7 data sets with Student's t test, like FreeBSD's ministat(1).\n\
                  The first data set is the baseline of every comparison."
)]
pub struct Args {
    /// Statistics and comparisons only: no plot
    #[arg(short = 'A')]
    no_plot: bool,

    /// Column of the data to use, starting at 1
    #[arg(short = 'C', value_name = "COLUMN", allow_hyphen_values = true)]
    column: Option<String>,

    /// Confidence level: 80, 90, 95, 98, 99 or 99.5 [default: 95]
    #[arg(short = 'c', value_name = "CONFIDENCE", allow_hyphen_values = true)]
    confidence: Option<String>,

    /// Field delimiter characters [default: space and tab]
    #[arg(short = 'd', value_name = "DELIMITERS", allow_hyphen_values = true)]
    delimiters: Option<OsString>,

    /// Statistics only: no plot and no comparisons
    #[arg(short = 'n')]
    stats_only: bool,

    /// Legend and plot only: no table and no comparisons (pktlab's addition)
    #[arg(short = 'P')]
    plot_only: bool,

    /// Leave out the data set names and the table header
    #[arg(short = 'q')]
    quiet: bool,

    /// One average/median/stddev bar per data set
    #[arg(short = 's')]
    separate_bars: bool,

    /// Plot width in characters [default: 74, or the terminal's width]
    #[arg(short = 'w', value_name = "WIDTH", allow_hyphen_values = true)]
    width: Option<String>,

    /// One JSON document with every data set's statistics and the comparisons
    #[arg(long)]
    json: bool,

    /// Data files, one value per line; none or `-` reads standard input
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
}

/// Plot widths we draw: ministat has no limit, but a width below 2 divides
/// by zero and a huge one only exhausts memory.
const WIDTH_RANGE: std::ops::RangeInclusive<i64> = 2..=10_000;

pub fn run(args: Args) -> anyhow::Result<()> {
    let parse = parse_options(&args)?;
    let confidence = match &args.confidence {
        None => Confidence::default(),
        Some(text) => text.parse().map_err(|err| match err {
            StatsError::ConfidenceNotANumber(_) => usage("Not a floating point number"),
            _ => usage("No support for confidence level"),
        })?,
    };
    let width = plot_width(args.width.as_deref())?;
    if args.files.len() > MAX_DATASETS {
        return Err(usage("Too many datasets."));
    }

    let datasets = read_datasets(&args.files, &parse)?;
    let text = if args.json {
        let mut analysis = ministat::analyze(&datasets, confidence);
        if args.stats_only {
            analysis.comparisons.clear();
        }
        serde_json::to_string_pretty(&analysis)? + "\n"
    } else {
        let options = RenderOptions {
            width,
            confidence,
            separate_bars: args.separate_bars,
            show_plot: !(args.no_plot || args.stats_only),
            show_table: !args.plot_only,
            show_comparisons: !(args.stats_only || args.plot_only),
            quiet: args.quiet,
        };
        ministat::render(&datasets, &options)
    };
    common::write_stdout(&text)
}

fn parse_options(args: &Args) -> anyhow::Result<ParseOptions> {
    let mut options = ParseOptions::default();
    if let Some(text) = &args.column {
        let column = parse_c_long(text).ok_or_else(|| usage("Invalid column number."))?;
        if column <= 0 {
            return Err(usage("Column number should be positive."));
        }
        options.column = usize::try_from(column).unwrap_or(usize::MAX);
    }
    if let Some(delimiters) = &args.delimiters {
        if delimiters.is_empty() {
            return Err(usage("Can't use empty delimiter string"));
        }
        options.delimiters = delimiters.as_bytes().to_vec();
    }
    Ok(options)
}

/// `-w`, else the terminal's width like ministat (`$COLUMNS`, or the window
/// width minus the two borders), else 74.
fn plot_width(option: Option<&str>) -> anyhow::Result<usize> {
    let width = match option {
        Some(text) => {
            let width = parse_c_long(text).ok_or_else(|| usage("Invalid width, not a number."))?;
            if width < 0 {
                return Err(usage("Unable to move beyond left margin."));
            }
            width
        }
        None => terminal_width().unwrap_or(74),
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

fn terminal_width() -> Option<i64> {
    let stdout = io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    // A width we cannot draw (COLUMNS=0, a 1-column window) falls back to 74.
    let from_env = std::env::var("COLUMNS")
        .ok()
        .filter(|columns| !columns.is_empty())
        .map(|columns| c_atoi(&columns))
        .filter(|width| WIDTH_RANGE.contains(width));
    from_env.or_else(|| {
        let (terminal_size::Width(columns), _) = terminal_size::terminal_size_of(&stdout)?;
        Some(i64::from(columns) - 2).filter(|width| WIDTH_RANGE.contains(width))
    })
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

/// Opens every file first (ministat reports a missing file before reading
/// any), then reads and checks the data sets in order.
fn read_datasets(files: &[OsString], options: &ParseOptions) -> anyhow::Result<Vec<Dataset>> {
    let stdin_name = OsString::from("<stdin>");
    let named: Vec<(&OsStr, bool)> = if files.is_empty() {
        vec![(&stdin_name, true)]
    } else {
        files.iter().map(|f| (f.as_os_str(), f == "-")).collect()
    };

    let mut sources = Vec::with_capacity(named.len());
    for &(name, is_stdin) in &named {
        let source = if is_stdin {
            Source::Stdin
        } else {
            let file = File::open(name).map_err(|err| {
                fail(&format!(
                    "ministat: Cannot open {}: {}",
                    name.to_string_lossy(),
                    os_message(&err)
                ))
            })?;
            Source::File(file)
        };
        sources.push(source);
    }

    let mut datasets = Vec::with_capacity(named.len());
    for ((name, _), source) in named.iter().zip(sources) {
        let name = name.to_string_lossy();
        let mut data = Vec::new();
        let read = match source {
            Source::Stdin => io::stdin().lock().read_to_end(&mut data),
            Source::File(mut file) => file.read_to_end(&mut data),
        };
        read.map_err(|err| {
            fail(&format!(
                "ministat: Cannot read {name}: {}",
                os_message(&err)
            ))
        })?;
        let dataset = ministat::read_dataset(&name, &data, options).map_err(|err| match err {
            // ministat reports bad data with errx(3), which prefixes its name.
            StatsError::InvalidData { .. } => fail(&format!("ministat: {err}")),
            _ => fail(&err.to_string()),
        })?;
        datasets.push(dataset);
    }
    Ok(datasets)
}

/// Prints ministat's complaint and a usage line; exit code 2.
fn usage(whine: &str) -> anyhow::Error {
    fail(&format!(
        "{whine}\nUsage: pktlab ministat [-AnPqs] [-C column] [-c confidence] [-d delimiters] [-w width] [--json] [file ...]\n\
         \tconfidence = {{80%, 90%, 95%, 98%, 99%, 99.5%}}"
    ))
}

/// Prints `message` on stderr as ministat would and ends with exit code 2.
fn fail(message: &str) -> anyhow::Error {
    eprintln!("{message}");
    Exit(2).into()
}
