//! `report.html`: one self-contained page per results folder (or one page
//! comparing folders), with SVG charts drawn in Rust and every number
//! beside its chart.
//!
//! - [`data`]: the folder, from a campaign's results or read back;
//! - [`sections`], [`rfc_section`], [`losses`], [`across`]: the page's sections;
//! - [`charts`]: the SVG charts; [`page`]: the page around them;
//! - [`stateful`]: the page of an rfc9693 campaign.

pub mod across;
pub mod charts;
pub mod data;
pub mod escape;
pub mod knob_sweep;
pub mod losses;
pub mod numbers;
pub mod page;
pub mod rfc_section;
pub mod sections;
pub mod sizes;
pub mod stateful;

use std::path::{Path, PathBuf};

use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Exporter, Finished};
use pktlab_campaign::CampaignError;
use pktlab_search::mlr::Searches;
use pktlab_search::stateful::StatefulReport;

pub use data::{Folder, LoadError};

pub const REPORT_FILE: &str = "report.html";

/// Writes the page of `folders` to `output`, else into the one folder
/// (its `report.html`), else (several folders) to `report.html` here;
/// the file written.
pub fn write_page(folders: &[Folder], output: Option<&Path>) -> Result<PathBuf, CampaignError> {
    let target = match (output, folders) {
        (Some(o), _) => o.to_path_buf(),
        (None, [one]) => one.path.join(REPORT_FILE),
        (None, _) => PathBuf::from(REPORT_FILE),
    };
    pktlab_campaign::atomic::write_atomic(&target, render(folders).as_bytes())?;
    Ok(target)
}

/// Why `folders` cannot be reported together (an rfc9693 folder's page
/// is its own, with no table for `--csv` to export); None when they can.
pub fn refusal(folders: &[Folder], csv: bool) -> Option<String> {
    let f = folders.iter().find(|f| f.stateful.is_some())?;
    let dir = f.path.display();
    if folders.len() > 1 {
        return Some(format!(
            "{dir} holds rfc9693 results, which are reported alone: give it without the other folders"
        ));
    }
    csv.then(|| {
        format!(
            "--csv has no tables for {dir}: its rfc9693 results are in {}",
            pktlab_search::stateful::results::REPORT_FILE
        )
    })
}

/// The page of the folders: one folder's report (an rfc9693 folder's as
/// its campaign wrote it), or a comparison.
pub fn render(folders: &[Folder]) -> String {
    match folders {
        [one] => match &one.stateful {
            Some(r) => stateful::stateful_page(&one.path, r),
            None => page::folder_page(one),
        },
        many => page::comparison_page(many),
    }
}

/// The campaign's `report.html`, rewritten after each run and at the end.
pub struct HtmlReport;

impl Exporter<Runs> for HtmlReport {
    fn file_name(&self) -> &'static str {
        REPORT_FILE
    }

    fn render(&self, f: &Finished<'_, Runs>) -> Option<String> {
        let folder = Folder::of_runs(&f.folder.path, f.plan, f.env, f.results);
        Some(page::folder_page(&folder))
    }
}

impl Exporter<Searches> for HtmlReport {
    fn file_name(&self) -> &'static str {
        REPORT_FILE
    }

    fn render(&self, f: &Finished<'_, Searches>) -> Option<String> {
        let folder = Folder::of_searches(&f.folder.path, f.plan, f.env, f.results);
        Some(page::folder_page(&folder))
    }
}

impl Exporter<StatefulReport> for HtmlReport {
    fn file_name(&self) -> &'static str {
        REPORT_FILE
    }

    fn render(&self, f: &Finished<'_, StatefulReport>) -> Option<String> {
        Some(stateful::stateful_page(&f.folder.path, f.results))
    }
}
