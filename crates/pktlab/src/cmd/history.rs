//! `pktlab history`: every campaign in a database (SQLite by default,
//! PostgreSQL with `--db postgresql://...`), trends split into groups by
//! FD.io CSIT's jumpavg, their page, and two labels compared.

use std::path::PathBuf;

use pktlab_history::commands::{self, Selection};
use pktlab_history::DbTarget;
use pktlab_stats::Confidence;

use crate::cmd::common::write_stdout;

/// The results history: every campaign of bench, rfc2544 and rfc9693 in a
/// database, trends over labels (kernels, firmwares, rulesets) with
/// regressions and progressions found as FD.io CSIT finds them (jumpavg),
/// a page of charts, and two labels compared with ministat.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// History database: an SQLite file or a postgresql:// URL [default:
    /// $PKTLAB_HISTORY_DB, else $XDG_DATA_HOME/pktlab/history.sqlite,
    /// else ~/.local/share/pktlab/history.sqlite]
    #[arg(long = "db", value_name = "DB", global = true)]
    pub db: Option<String>,
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand, Debug)]
pub enum Sub {
    /// Add pktlab results folders (a folder added twice adds nothing)
    Import(ImportArgs),
    /// Add a BSDRP/netbenches folder of <label>.<config>.pps files
    #[command(name = "import-pps")]
    ImportPps(ImportPpsArgs),
    /// Each series in label order, split into groups (jumpavg), with its changes
    Trend(TrendArgs),
    /// Write an HTML page: a chart per series, its changes beside it
    Report(ReportArgs),
    /// Compare the runs of two labels with ministat
    Compare(CompareArgs),
    /// List the recorded campaigns
    List(ListArgs),
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Results folders of pktlab bench, rfc2544 or rfc9693
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Label of the campaigns [default: each DUT's kernel release]
    #[arg(long = "label", value_name = "LABEL")]
    pub label: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct ImportPpsArgs {
    /// A folder of <label>.<config>.pps files (one value per line)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The labels in order, one per line [default: natural order, so
    /// that revision numbers sort as numbers]
    #[arg(long = "order", value_name = "FILE")]
    pub order: Option<PathBuf>,
    /// The traffic the runs had (the file names do not say)
    #[arg(long = "traffic", value_name = "NAME", default_value = "")]
    pub traffic: String,
    /// The frame size the runs had
    #[arg(long = "size", value_name = "SIZE", default_value = "")]
    pub size: String,
}

/// Which configuration, traffic and size.
#[derive(clap::Args, Debug, Clone)]
pub struct FilterArgs {
    /// Only this configuration
    #[arg(long = "config", value_name = "NAME")]
    pub config: Option<String>,
    /// Only this traffic profile
    #[arg(long = "traffic", value_name = "NAME")]
    pub traffic: Option<String>,
    /// Only this frame size or mix
    #[arg(long = "size", value_name = "SIZE")]
    pub size: Option<String>,
}

/// Which series.
#[derive(clap::Args, Debug, Clone)]
pub struct SeriesArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// forwarded_pps, offered_pps, ndr, pdr, lower_pps@LOSS%,
    /// upper_pps@LOSS%, a latency such as p99_ns@90%, or rfc9693's capacity,
    /// rate, throughput, teardown (capacity_upper, rate_upper, ...)
    /// [default: each run's forwarded_pps, search bounds, rfc9693 results]
    #[arg(long = "metric", value_name = "METRIC")]
    pub metric: Option<String>,
    /// Points in label order (a point is a label's runs) or time order
    /// (a campaign's runs)
    #[arg(long = "by", value_name = "ORDER", default_value = "label")]
    pub by: String,
}

#[derive(clap::Args, Debug)]
pub struct TrendArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    /// One JSON object per series instead of text
    #[arg(long = "json")]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    /// The page to write
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The baseline label
    #[arg(value_name = "LABEL_A")]
    pub a: String,
    /// The label compared with it
    #[arg(value_name = "LABEL_B")]
    pub b: String,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The metric compared [default: as for trend]
    #[arg(long = "metric", value_name = "METRIC")]
    pub metric: Option<String>,
    /// Confidence level: 80, 90, 95, 98, 99 or 99.5
    #[arg(
        short = 'c',
        long = "confidence",
        value_name = "LEVEL",
        default_value = "95"
    )]
    pub confidence: String,
    /// One JSON object per comparison instead of text
    #[arg(long = "json")]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// One JSON object per campaign instead of text
    #[arg(long = "json")]
    pub json: bool,
}

impl FilterArgs {
    fn selection(&self, metric: &Option<String>) -> Selection {
        Selection {
            config: self.config.clone(),
            traffic: self.traffic.clone(),
            size: self.size.clone(),
            metric: metric.clone(),
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let target = DbTarget::resolve(args.db.as_deref())?;
    let text = match args.command {
        Sub::Import(a) => commands::import_folders(&target, &a.dirs, a.label.as_deref()),
        Sub::ImportPps(a) => {
            commands::import_pps(&target, &a.dir, &a.traffic, &a.size, a.order.as_deref())
        }
        Sub::Trend(a) => return trend(&target, &a),
        Sub::Report(a) => commands::trends(&target, &a.series.selection(), &a.series.by)
            .and_then(|t| commands::write_report(&target, t, &a.output)),
        Sub::Compare(a) => return compare(&target, &a),
        Sub::List(a) => commands::list(&target).map(|c| commands::list_output(&c, a.json)),
    };
    write_stdout(&text?)
}

impl SeriesArgs {
    fn selection(&self) -> Selection {
        self.filter.selection(&self.metric)
    }
}

fn trend(target: &DbTarget, a: &TrendArgs) -> anyhow::Result<()> {
    let t = commands::trends(target, &a.series.selection(), &a.series.by)?;
    for n in &t.notes {
        eprintln!("pktlab: {n}");
    }
    write_stdout(&commands::trends_output(&t.trends, a.json))
}

fn compare(target: &DbTarget, a: &CompareArgs) -> anyhow::Result<()> {
    let confidence = Confidence::parse_level(&a.confidence)?;
    let found = commands::compare(target, &a.a, &a.b, &a.filter.selection(&a.metric))?;
    write_stdout(&commands::compare_output(&found, confidence, a.json))
}
