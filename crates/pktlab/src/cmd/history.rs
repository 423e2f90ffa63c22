//! `pktlab history`: every campaign in a database (SQLite by default,
//! PostgreSQL with `--db postgresql://...`), trends split into groups by
//! FD.io CSIT's jumpavg, their page, and two labels compared.

use std::path::PathBuf;

use pktlab_history::import::{folder, pps};
use pktlab_history::series::{self, Filter, Metric, OrderBy};
use pktlab_history::{html, text, trend, Database, DbTarget};
use pktlab_stats::Confidence;

use crate::cmd::common::{print_json, write_stdout};
use crate::cmd::recording::fail;
use crate::error::usage;

/// The results history: every campaign of bench and rfc2544 in a database,
/// trends over labels (kernels, firmwares, rulesets) with regressions and
/// progressions found as FD.io CSIT finds them (jumpavg), a page of charts,
/// and two labels compared with ministat.
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
    /// Results folders of pktlab bench or rfc2544
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

/// Which series.
#[derive(clap::Args, Debug, Clone)]
pub struct SeriesArgs {
    /// Only this configuration
    #[arg(long = "config", value_name = "NAME")]
    pub config: Option<String>,
    /// Only this traffic profile
    #[arg(long = "traffic", value_name = "NAME")]
    pub traffic: Option<String>,
    /// Only this frame size or mix
    #[arg(long = "size", value_name = "SIZE")]
    pub size: Option<String>,
    /// forwarded_pps, offered_pps, ndr, pdr, lower_pps@LOSS%,
    /// upper_pps@LOSS%, or a latency such as p99_ns@90% [default: each
    /// run's forwarded_pps, each search's lower bounds]
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
    /// Only this configuration
    #[arg(long = "config", value_name = "NAME")]
    pub config: Option<String>,
    /// Only this traffic profile
    #[arg(long = "traffic", value_name = "NAME")]
    pub traffic: Option<String>,
    /// Only this frame size or mix
    #[arg(long = "size", value_name = "SIZE")]
    pub size: Option<String>,
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

pub fn run(args: Args) -> anyhow::Result<()> {
    let target = DbTarget::resolve(args.db.as_deref()).map_err(fail)?;
    match args.command {
        Sub::Import(a) => import(&target, a),
        Sub::ImportPps(a) => import_pps(&target, a),
        Sub::Trend(a) => trend_cmd(&target, a),
        Sub::Report(a) => report(&target, a),
        Sub::Compare(a) => compare(&target, a),
        Sub::List(a) => list(&target, a),
    }
}

fn import(target: &DbTarget, a: ImportArgs) -> anyhow::Result<()> {
    if let Some(l) = &a.label {
        pktlab_history::import::check_label(l).map_err(fail)?;
    }
    // Every folder read first: a bad one stops the import before any is
    // recorded.
    let records = a
        .dirs
        .iter()
        .map(|d| folder::read_folder(d, a.label.as_deref()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    let mut db = Database::open(target, true).map_err(fail)?;
    let mut out = String::new();
    for (dir, rec) in a.dirs.iter().zip(&records) {
        let r = db.record(rec).map_err(fail)?;
        out += &format!(
            "{}: {} ({} '{}', label '{}')\n",
            dir.display(),
            match (r.new_campaign, r.runs_added) {
                (true, n) => format!("added, {}", text::plural(n, "run")),
                (false, 0) => "already in the history, nothing added".to_string(),
                (false, n) => format!(
                    "already in the history, {} more added",
                    text::plural(n, "run")
                ),
            },
            rec.source.as_str(),
            rec.name,
            r.label
        );
    }
    write_stdout(&out)
}

fn import_pps(target: &DbTarget, a: ImportPpsArgs) -> anyhow::Result<()> {
    let order = match &a.order {
        Some(p) => Some(pktlab_history::order::read_order_file(p).map_err(fail)?),
        None => None,
    };
    let options = pps::PpsOptions {
        traffic: a.traffic.clone(),
        size: a.size.clone(),
        order: order.clone(),
    };
    let f = pps::read_pps_folder(&a.dir, &options).map_err(fail)?;
    let mut db = Database::open(target, true).map_err(fail)?;
    let (mut added, mut there, mut runs) = (0, 0, 0);
    for rec in &f.records {
        let r = db.record(rec).map_err(fail)?;
        runs += r.runs_added;
        if r.new_campaign {
            added += 1;
        } else {
            there += 1;
        }
    }
    if let Some(order) = &order {
        db.set_label_order(order).map_err(fail)?;
    }
    write_stdout(&format!(
        "{}: {} labels from {} .pps files: {added} added ({runs} runs), {there} already in the history; {} other files ignored\n",
        a.dir.display(),
        f.records.len(),
        f.files,
        f.ignored
    ))
}

/// The trends of the series `s` selects, and notes on those that cannot
/// be split.
fn trends(
    target: &DbTarget,
    s: &SeriesArgs,
) -> anyhow::Result<(Vec<trend::Trend>, Vec<String>, Database)> {
    let filter = Filter {
        config: s.config.clone(),
        traffic: s.traffic.clone(),
        size: s.size.clone(),
        metric: s
            .metric
            .as_deref()
            .map(Metric::parse)
            .transpose()
            .map_err(fail)?,
    };
    let by = match s.by.as_str() {
        "label" => OrderBy::Label,
        "time" => OrderBy::Time,
        other => return Err(usage(format!("invalid --by '{other}': use label or time"))),
    };
    let mut db = Database::open(target, false).map_err(fail)?;
    let runs = db.runs().map_err(fail)?;
    let positions = db.label_positions().map_err(fail)?;
    let all = series::build(&runs, &filter, by, &positions);
    if all.is_empty() {
        let mut configs: Vec<&str> = runs.iter().map(|r| r.run.config.as_str()).collect();
        configs.sort();
        configs.dedup();
        return Err(usage(if runs.is_empty() {
            format!("the history {} holds no run yet", target.display())
        } else {
            format!(
                "no series in the history matches (configurations: {})",
                configs.join(", ")
            )
        }));
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for s in &all {
        match trend::trend(s) {
            Ok(t) => out.push(t),
            Err(e) => notes.push(format!(
                "{}: {}: not split: {e}",
                s.key.title(),
                s.key.metric
            )),
        }
    }
    Ok((out, notes, db))
}

fn trend_cmd(target: &DbTarget, a: TrendArgs) -> anyhow::Result<()> {
    let (trends, notes, _) = trends(target, &a.series)?;
    let mut out = String::new();
    for (i, t) in trends.iter().enumerate() {
        if a.json {
            print_json(&serde_json::to_value(t)?);
        } else {
            if i > 0 {
                out.push('\n');
            }
            out += &text::trend_text(t);
        }
    }
    for n in &notes {
        eprintln!("pktlab: {n}");
    }
    write_stdout(&out)
}

fn report(target: &DbTarget, a: ReportArgs) -> anyhow::Result<()> {
    let (trends, notes, mut db) = trends(target, &a.series)?;
    let campaigns = db.campaigns().map_err(fail)?;
    let mut labels: Vec<&str> = campaigns.iter().map(|c| c.label.as_str()).collect();
    labels.sort();
    labels.dedup();
    let info = html::PageInfo {
        database: target.display(),
        campaigns: campaigns.len(),
        labels: labels.len(),
        notes,
    };
    let page = html::render(&trends, &info);
    pktlab_campaign::atomic::write_atomic(&a.output, page.as_bytes())?;
    let changes: usize = trends.iter().map(|t| t.changes.len()).sum();
    write_stdout(&format!(
        "Wrote {}: {} series, {changes} changes.\n",
        a.output.display(),
        trends.len()
    ))
}

fn compare(target: &DbTarget, a: CompareArgs) -> anyhow::Result<()> {
    let confidence: Confidence = a.confidence.parse().map_err(|_| {
        usage(format!(
            "invalid confidence level '{}': use 80, 90, 95, 98, 99 or 99.5",
            a.confidence
        ))
    })?;
    let filter = Filter {
        config: a.config.clone(),
        traffic: a.traffic.clone(),
        size: a.size.clone(),
        metric: a
            .metric
            .as_deref()
            .map(Metric::parse)
            .transpose()
            .map_err(fail)?,
    };
    let mut db = Database::open(target, false).map_err(fail)?;
    let runs = db.runs().map_err(fail)?;
    let found = pktlab_history::compare::compare(&runs, &a.a, &a.b, &filter).map_err(fail)?;
    if found.is_empty() {
        return Err(usage(format!(
            "labels '{}' and '{}' share no configuration, traffic and metric to compare",
            a.a, a.b
        )));
    }
    if a.json {
        for c in &found {
            let analysis = pktlab_stats::ministat::analyze(&c.datasets, confidence);
            let mut v = serde_json::to_value(&analysis)?;
            v["series"] = serde_json::to_value(&c.key)?;
            print_json(&v);
        }
        return Ok(());
    }
    write_stdout(&text::compare_text(&found, confidence))
}

fn list(target: &DbTarget, a: ListArgs) -> anyhow::Result<()> {
    let mut db = Database::open(target, false).map_err(fail)?;
    let campaigns = db.campaigns().map_err(fail)?;
    if a.json {
        for c in &campaigns {
            print_json(&serde_json::to_value(c)?);
        }
        return Ok(());
    }
    write_stdout(&text::list_text(&campaigns))
}
