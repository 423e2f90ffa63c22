//! `report.html`: one self-contained page per results folder (or one page
//! comparing folders), with SVG charts drawn in Rust and every number
//! beside its chart.
//!
//! - [`data`]: the folder read back (summary, runs, env, RFC 2544 files);
//! - [`sections`], [`rfc_section`], [`losses`], [`across`]: the page's sections;
//! - [`charts`]: the SVG charts; [`page`]: the page around them.

pub mod across;
pub mod charts;
pub mod data;
pub mod escape;
pub mod losses;
pub mod numbers;
pub mod page;
pub mod rfc2544;
pub mod rfc_section;
pub mod sections;

use pktlab_campaign::export::{Exporter, Finished};

pub use data::{Folder, LoadError};

pub const REPORT_FILE: &str = "report.html";

/// The page of the folders: one folder's report, or a comparison.
pub fn render(folders: &[Folder]) -> String {
    match folders {
        [one] => page::folder_page(one),
        many => page::comparison_page(many),
    }
}

/// The campaign's `report.html`, rewritten after each run and at the end.
pub struct HtmlReport;

impl Exporter for HtmlReport {
    fn file_name(&self) -> &'static str {
        REPORT_FILE
    }

    fn render(&self, f: &Finished<'_>) -> Option<String> {
        let folder = Folder::from_parts(
            f.dir,
            f.summary.clone(),
            Some(f.campaign.clone()),
            Vec::new(),
        );
        Some(match folder {
            Ok(folder) => page::folder_page(&folder),
            // A run file the campaign wrote but cannot read back: the page
            // says so rather than the campaign failing.
            Err(e) => format!(
                "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"><title>pktlab report</title></head><body><p>The report could not be made: {}</p></body></html>\n",
                escape::html(&e.to_string())
            ),
        })
    }
}
