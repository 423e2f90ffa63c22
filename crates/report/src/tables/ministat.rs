//! ministat's comparisons of a campaign's configurations, per traffic
//! profile, as ministat prints them.

use pktlab_campaign::plan::Plan;
use pktlab_campaign::summary::{dataset_name, Cell};
use pktlab_stats::ministat::{self, Dataset, RenderOptions, MAX_DATASETS};

/// ministat's comparisons, in blocks of at most seven data sets (its
/// limit), the first configuration heading each.
pub fn text(campaign: &Plan, cells: &[Cell]) -> String {
    let names: Vec<String> = campaign.traffics.iter().map(|t| t.name.clone()).collect();
    text_for(&names, cells)
}

/// [`text`] for the traffic profiles named `traffics`.
pub fn text_for(traffics: &[String], cells: &[Cell]) -> String {
    let mut out = String::new();
    for t in traffics {
        let sets: Vec<Dataset> = cells
            .iter()
            .filter(|c| &c.traffic == t && !c.values.is_empty())
            .map(|c| Dataset {
                name: dataset_name(&c.config, &c.traffic),
                values: c.values.clone(),
            })
            .collect();
        if sets.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out += &format!("Forwarded packets per second, traffic {t}:\n");
        let (first, rest) = sets.split_first().expect("not empty");
        if rest.is_empty() {
            out += &ministat::render(&sets, &RenderOptions::default());
        }
        for chunk in rest.chunks(MAX_DATASETS - 1) {
            let mut block = vec![first.clone()];
            block.extend_from_slice(chunk);
            out += &ministat::render(&block, &RenderOptions::default());
        }
    }
    out
}
