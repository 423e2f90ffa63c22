//! Two labels compared: ministat's statistics of their runs, for every
//! configuration, traffic, frame size and metric both have.

use std::collections::HashMap;

use pktlab_stats::ministat::Dataset;

use crate::record::StoredRun;
use crate::series::{self, Filter, OrderBy, SeriesKey};
use crate::HistoryError;

/// The runs of the two labels in one series.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelComparison {
    pub key: SeriesKey,
    /// Label A's runs first (the baseline), then label B's.
    pub datasets: [Dataset; 2],
}

/// Every series in which both labels have runs. A label the history does
/// not hold is a usage error that lists the labels it does hold.
pub fn compare(
    runs: &[StoredRun],
    a: &str,
    b: &str,
    filter: &Filter,
) -> Result<Vec<LabelComparison>, HistoryError> {
    for label in [a, b] {
        if !runs.iter().any(|r| r.label == label) {
            let known = series::labels(runs, &HashMap::new());
            let mut shown = known
                .iter()
                .take(12)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if known.len() > 12 {
                shown += &format!(", ... ({} in all)", known.len());
            }
            if known.is_empty() {
                shown = "none: the history is empty".into();
            }
            return Err(HistoryError::Usage(format!(
                "label '{label}' is not in the history (labels: {shown})"
            )));
        }
    }
    let mine: Vec<StoredRun> = runs
        .iter()
        .filter(|r| r.label == a || r.label == b)
        .cloned()
        .collect();
    let all = series::build(&mine, filter, OrderBy::Label, &HashMap::new());
    Ok(all
        .into_iter()
        .filter_map(|s| {
            let of = |label: &str| {
                s.points
                    .iter()
                    .find(|p| p.label == label)
                    .map(|p| p.values.clone())
            };
            let (va, vb) = (of(a)?, of(b)?);
            Some(LabelComparison {
                key: s.key,
                datasets: [
                    Dataset {
                        name: a.to_string(),
                        values: va,
                    },
                    Dataset {
                        name: b.to_string(),
                        values: vb,
                    },
                ],
            })
        })
        .collect())
}
