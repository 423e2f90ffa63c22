//! `pktlab compare`'s output: ministat's comparison of each block, and
//! where its lost frames went.

use pktlab_campaign::compare::Block;
use pktlab_stats::ministat::{self, RenderOptions};
use pktlab_stats::Confidence;

/// What `pktlab compare` prints: one JSON line per block, or ministat's
/// text.
pub fn blocks_output(blocks: &[Block], confidence: Confidence, json: bool) -> String {
    match json {
        true => blocks
            .iter()
            .map(|b| format!("{}\n", block_json(b, confidence)))
            .collect(),
        false => blocks_text(blocks, confidence),
    }
}

/// The blocks as ministat's text, a blank line between two.
pub fn blocks_text(blocks: &[Block], confidence: Confidence) -> String {
    let options = RenderOptions {
        confidence,
        ..RenderOptions::default()
    };
    let mut texts = Vec::new();
    for b in blocks {
        let mut text = format!("{}\n", b.title);
        text += &ministat::render(&b.datasets, &options);
        if !b.losses.is_empty() {
            text += "Where the lost frames went (summed over the runs):\n";
            for (name, sum) in &b.losses {
                text += &format!("{}\n", crate::drops::loss_sum_text(name, sum));
            }
        }
        texts.push(text);
    }
    texts.join("\n")
}

/// One block as a JSON object: ministat's analysis, its title, and where
/// each data set's lost frames went.
pub fn block_json(b: &Block, confidence: Confidence) -> serde_json::Value {
    let analysis = ministat::analyze(&b.datasets, confidence);
    let mut v = serde_json::to_value(&analysis).expect("serialisable");
    v["title"] = serde_json::json!(b.title);
    v["drops"] = b
        .losses
        .iter()
        .map(|(name, sum)| {
            let mut l = serde_json::to_value(sum).expect("serialisable");
            l["name"] = serde_json::json!(name);
            l
        })
        .collect::<Vec<_>>()
        .into();
    v
}
