//! ministat's text (the legend, the plot, the table and the comparisons)
//! and its analysis as JSON.

use serde::Serialize;

use crate::cformat::{format_g, format_g_width};
use crate::compare::{compare_moments, Comparison, Moments};
use crate::descriptive::{Sample, Summary};
use crate::student::Confidence;

use super::dataset::{symbol, Dataset, MAX_DATASETS};
use super::plot;

/// What to print, mirroring ministat's options.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderOptions {
    /// Plot width in columns, without the two border characters (`-w`).
    /// Widths below 2 are drawn as 2.
    pub width: usize,
    /// Confidence level of the comparisons (`-c`).
    pub confidence: Confidence,
    /// One avg/median/stddev bar per data set (`-s`).
    pub separate_bars: bool,
    /// The plot (off with `-A` and `-n`).
    pub show_plot: bool,
    /// The N/Min/Max/Median/Avg/Stddev table (off with pktlab's `-P`).
    pub show_table: bool,
    /// The comparison of every set with the first (off with `-n`).
    pub show_comparisons: bool,
    /// Leave out the legend and the table header (`-q`).
    pub quiet: bool,
}

impl Default for RenderOptions {
    /// ministat's defaults when stdout is not a terminal.
    fn default() -> Self {
        RenderOptions {
            width: 74,
            confidence: Confidence::P95,
            separate_bars: false,
            show_plot: true,
            show_table: true,
            show_comparisons: true,
            quiet: false,
        }
    }
}

/// ministat's whole output for `datasets` (the first is the baseline).
pub fn render(datasets: &[Dataset], options: &RenderOptions) -> String {
    let datasets = &datasets[..datasets.len().min(MAX_DATASETS)];
    let samples: Vec<Option<Sample>> = datasets.iter().map(|d| Sample::new(&d.values)).collect();
    let mut out = String::new();

    if !options.quiet {
        for (k, dataset) in datasets.iter().enumerate() {
            out.push_str(&format!("{} {}\n", set_symbol(k), dataset.name));
        }
    }
    if options.show_plot {
        let drawable: Vec<(usize, &Sample)> = samples
            .iter()
            .enumerate()
            .filter_map(|(k, sample)| sample.as_ref().map(|s| (k + 1, s)))
            .collect();
        out.push_str(&plot::draw(&drawable, options.width, options.separate_bars));
    }
    if options.show_table && !options.quiet && !datasets.is_empty() {
        out.push_str(
            "    N           Min           Max        Median           Avg        Stddev\n",
        );
    }
    for (k, sample) in samples.iter().enumerate() {
        if options.show_table {
            out.push_str(&table_row(k, &summary_or_nan(sample.as_ref())));
        }
        if k > 0 && options.show_comparisons {
            let comparison = compare_moments(
                moments_or_nan(samples[0].as_ref()),
                moments_or_nan(sample.as_ref()),
                options.confidence,
            );
            out.push_str(&comparison_text(&comparison));
        }
    }
    out
}

/// The results for programs: every set's statistics and every set compared
/// with the first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub confidence: Confidence,
    pub datasets: Vec<DatasetStats>,
    pub comparisons: Vec<NamedComparison>,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetStats {
    pub symbol: char,
    pub name: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// One "Difference at" block: `name` compared with `baseline`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedComparison {
    pub baseline: String,
    pub name: String,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// The figures `render` prints, as data. Empty data sets get n = 0 and NaN
/// statistics.
pub fn analyze(datasets: &[Dataset], confidence: Confidence) -> Analysis {
    let datasets = &datasets[..datasets.len().min(MAX_DATASETS)];
    let samples: Vec<Option<Sample>> = datasets.iter().map(|d| Sample::new(&d.values)).collect();
    let stats = datasets
        .iter()
        .zip(&samples)
        .enumerate()
        .map(|(k, (dataset, sample))| DatasetStats {
            symbol: set_symbol(k),
            name: dataset.name.clone(),
            summary: summary_or_nan(sample.as_ref()),
        })
        .collect();
    let comparisons = datasets
        .iter()
        .zip(&samples)
        .skip(1)
        .map(|(dataset, sample)| NamedComparison {
            baseline: datasets[0].name.clone(),
            name: dataset.name.clone(),
            comparison: compare_moments(
                moments_or_nan(samples[0].as_ref()),
                moments_or_nan(sample.as_ref()),
                confidence,
            ),
        })
        .collect();
    Analysis {
        confidence,
        datasets: stats,
        comparisons,
    }
}

/// Symbol of the data set at 0-based position `k` (< MAX_DATASETS).
fn set_symbol(k: usize) -> char {
    symbol(k + 1).unwrap_or('?')
}

fn table_row(k: usize, s: &Summary) -> String {
    format!(
        "{} {:>3} {} {} {} {} {}\n",
        set_symbol(k),
        s.n,
        format_g_width(s.min, 13, 8),
        format_g_width(s.max, 13, 8),
        format_g_width(s.median, 13, 8),
        format_g_width(s.avg, 13, 8),
        format_g_width(s.stddev, 13, 8),
    )
}

fn comparison_text(c: &Comparison) -> String {
    let level = c.confidence.percent();
    if c.significant {
        format!(
            "Difference at {level:.1}% confidence\n\t{} +/- {}\n\t{}% +/- {}%\n\t(Student's t, pooled s = {})\n",
            format_g(c.difference, 6),
            format_g(c.error, 6),
            format_g(c.percent, 6),
            format_g(c.percent_error, 6),
            format_g(c.pooled_s, 6),
        )
    } else {
        format!("No difference proven at {level:.1}% confidence\n")
    }
}

fn summary_or_nan(sample: Option<&Sample>) -> Summary {
    sample.map_or(
        Summary {
            n: 0,
            min: f64::NAN,
            max: f64::NAN,
            median: f64::NAN,
            avg: f64::NAN,
            stddev: f64::NAN,
        },
        Sample::summary,
    )
}

fn moments_or_nan(sample: Option<&Sample>) -> Moments {
    sample.map_or(
        Moments {
            n: 0,
            avg: f64::NAN,
            variance: f64::NAN,
        },
        Moments::of,
    )
}
