//! `summary.json`: the campaign summary, pretty-printed.

use pktlab_campaign::export::{Exporter, Finished};
use pktlab_campaign::results::SUMMARY_FILE;

pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        SUMMARY_FILE
    }

    fn render(&self, f: &Finished<'_>) -> Option<String> {
        Some(serde_json::to_string_pretty(f.summary).expect("the summary serialises") + "\n")
    }
}
