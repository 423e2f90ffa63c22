//! The order of frame sizes on the page: `pktlab rfc2544` names a size as
//! text (`64`, or a mix such as `imix`); sizes in bytes sort by value,
//! before mixes.

/// A frame size as a search names it, ordered for display.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SizeLabel(pub String);

impl SizeLabel {
    fn bytes(&self) -> Option<u32> {
        self.0.parse().ok()
    }
}

impl Ord for SizeLabel {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let key = |s: &SizeLabel| (s.bytes().unwrap_or(u32::MAX), s.0.clone());
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for SizeLabel {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for SizeLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_bytes_sort_by_value_before_mixes() {
        let mut sizes: Vec<SizeLabel> = ["1518", "64", "imix", "128"]
            .iter()
            .map(|s| SizeLabel(s.to_string()))
            .collect();
        sizes.sort();
        let names: Vec<String> = sizes.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["64", "128", "1518", "imix"]);
    }
}
