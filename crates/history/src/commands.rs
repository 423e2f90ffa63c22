//! What `pktlab history`'s subcommands do: each reads or writes the
//! database and hands back what to show (the binary prints it).

use std::path::{Path, PathBuf};

use pktlab_stats::Confidence;

use crate::compare::LabelComparison;
use crate::import::{folder, pps};
use crate::record::StoredCampaign;
use crate::series::{self, Filter, Metric, OrderBy};
use crate::trend::{self, Trend};
use crate::{html, text, Database, DbTarget, HistoryError};

/// `history import`: records each folder; every folder is read first, so
/// that a bad one stops the import before any is recorded. One line per
/// folder.
pub fn import_folders(
    target: &DbTarget,
    dirs: &[PathBuf],
    label: Option<&str>,
) -> Result<String, HistoryError> {
    if let Some(l) = label {
        crate::import::check_label(l)?;
    }
    let records = dirs
        .iter()
        .map(|d| folder::read_folder(d, label))
        .collect::<Result<Vec<_>, _>>()?;
    let mut db = Database::open(target, true)?;
    let mut out = String::new();
    for (dir, rec) in dirs.iter().zip(&records) {
        let r = db.record(rec)?;
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
    Ok(out)
}

/// `history import-pps`: a BSDRP/netbenches folder, one campaign per
/// label, the labels in the order of `order` (a file) when given. One line.
pub fn import_pps(
    target: &DbTarget,
    dir: &Path,
    traffic: &str,
    size: &str,
    order: Option<&Path>,
) -> Result<String, HistoryError> {
    let order = order.map(crate::order::read_order_file).transpose()?;
    let options = pps::PpsOptions {
        traffic: traffic.to_string(),
        size: size.to_string(),
        order: order.clone(),
    };
    let f = pps::read_pps_folder(dir, &options)?;
    let mut db = Database::open(target, true)?;
    let (mut added, mut there, mut runs) = (0, 0, 0);
    for rec in &f.records {
        let r = db.record(rec)?;
        runs += r.runs_added;
        if r.new_campaign {
            added += 1;
        } else {
            there += 1;
        }
    }
    if let Some(order) = &order {
        db.set_label_order(order)?;
    }
    Ok(format!(
        "{}: {} labels from {} .pps files: {added} added ({runs} runs), {there} already in the history; {} other files ignored\n",
        dir.display(),
        f.records.len(),
        f.files,
        f.ignored
    ))
}

/// Which series, as the command line words them.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub config: Option<String>,
    pub traffic: Option<String>,
    pub size: Option<String>,
    pub metric: Option<String>,
}

impl Selection {
    fn filter(&self) -> Result<Filter, HistoryError> {
        Ok(Filter {
            config: self.config.clone(),
            traffic: self.traffic.clone(),
            size: self.size.clone(),
            metric: self.metric.as_deref().map(Metric::parse).transpose()?,
        })
    }
}

/// The trends of the series `selection` picks, in `by` order (`label` or
/// `time`), and notes on those that cannot be split.
pub struct Trends {
    pub trends: Vec<Trend>,
    pub notes: Vec<String>,
    db: Database,
}

/// `history trend`, and the page's content.
pub fn trends(target: &DbTarget, selection: &Selection, by: &str) -> Result<Trends, HistoryError> {
    let filter = selection.filter()?;
    let by = match by {
        "label" => OrderBy::Label,
        "time" => OrderBy::Time,
        other => {
            return Err(HistoryError::Usage(format!(
                "invalid --by '{other}': use label or time"
            )))
        }
    };
    let mut db = Database::open(target, false)?;
    let runs = db.runs()?;
    let positions = db.label_positions()?;
    let all = series::build(&runs, &filter, by, &positions);
    if all.is_empty() {
        let mut configs: Vec<&str> = runs.iter().map(|r| r.run.config.as_str()).collect();
        configs.sort();
        configs.dedup();
        return Err(HistoryError::Usage(if runs.is_empty() {
            format!("the history {} holds no run yet", target.display())
        } else {
            format!(
                "no series in the history matches (configurations: {})",
                configs.join(", ")
            )
        }));
    }
    let mut trends = Vec::new();
    let mut notes = Vec::new();
    for s in &all {
        match trend::trend(s) {
            Ok(t) => trends.push(t),
            Err(e) => notes.push(format!(
                "{}: {}: not split: {e}",
                s.key.title(),
                s.key.metric
            )),
        }
    }
    Ok(Trends { trends, notes, db })
}

/// `history report`: writes the page of `trends` to `output`; one line
/// saying what it holds.
pub fn write_report(target: &DbTarget, t: Trends, output: &Path) -> Result<String, HistoryError> {
    let Trends {
        trends,
        notes,
        mut db,
    } = t;
    let campaigns = db.campaigns()?;
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
    pktlab_campaign::atomic::write_atomic(output, page.as_bytes())
        .map_err(|e| HistoryError::Runtime(e.to_string()))?;
    let changes: usize = trends.iter().map(|t| t.changes.len()).sum();
    Ok(format!(
        "Wrote {}: {} series, {changes} changes.\n",
        output.display(),
        trends.len()
    ))
}

/// `history compare`: the series in which labels `a` and `b` both have
/// runs.
pub fn compare(
    target: &DbTarget,
    a: &str,
    b: &str,
    selection: &Selection,
) -> Result<Vec<LabelComparison>, HistoryError> {
    let filter = selection.filter()?;
    let mut db = Database::open(target, false)?;
    let runs = db.runs()?;
    let found = crate::compare::compare(&runs, a, b, &filter)?;
    if found.is_empty() {
        return Err(HistoryError::Usage(format!(
            "labels '{a}' and '{b}' share no configuration, traffic and metric to compare"
        )));
    }
    Ok(found)
}

/// One comparison as a JSON object: ministat's analysis and the series.
pub fn comparison_json(c: &LabelComparison, confidence: Confidence) -> serde_json::Value {
    let analysis = pktlab_stats::ministat::analyze(&c.datasets, confidence);
    let mut v = serde_json::to_value(&analysis).expect("serialisable");
    v["series"] = serde_json::to_value(&c.key).expect("serialisable");
    v
}

/// One JSON line of `v`.
fn json_line(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("serialisable") + "\n"
}

/// What `history list` prints: one JSON line per campaign, or a line of
/// text each.
pub fn list_output(campaigns: &[StoredCampaign], json: bool) -> String {
    match json {
        true => campaigns.iter().map(json_line).collect(),
        false => text::list_text(campaigns),
    }
}

/// What `history trend` prints: one JSON line per series, or each
/// series' text, a blank line between two.
pub fn trends_output(trends: &[Trend], json: bool) -> String {
    match json {
        true => trends.iter().map(json_line).collect(),
        false => {
            let texts: Vec<String> = trends.iter().map(text::trend_text).collect();
            texts.join("\n")
        }
    }
}

/// What `history compare` prints: one JSON line per comparison, or
/// ministat's text.
pub fn compare_output(found: &[LabelComparison], confidence: Confidence, json: bool) -> String {
    match json {
        true => found
            .iter()
            .map(|c| json_line(&comparison_json(c, confidence)))
            .collect(),
        false => text::compare_text(found, confidence),
    }
}

/// `history list`: the recorded campaigns.
pub fn list(target: &DbTarget) -> Result<Vec<StoredCampaign>, HistoryError> {
    Database::open(target, false)?.campaigns()
}
