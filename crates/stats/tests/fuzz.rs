//! Fuzz harnesses for ministat's input (data files of any bytes) and the
//! pkt-gen log reader (`pktlab pktgen-log`). Seeds in
//! `fuzz/corpus/ministat/` and `fuzz/corpus/pktgen_log/`; `bench/fuzz`
//! runs the same harnesses with millions of cases.

#[path = "../../../fuzz/harness.rs"]
mod harness;

use pktlab_stats::ministat::{parse_values, read_dataset, ParseOptions, MIN_POINTS};
use pktlab_stats::pktgen::{bsdrp_run_value, bsdrp_values, kept_samples, pps_samples, Trim};
use proptest::prelude::*;

fn check_ministat(data: &[u8], column: usize, delimiters: &[u8]) {
    let options = ParseOptions {
        column,
        delimiters: delimiters.to_vec(),
    };
    let values = parse_values("fuzz", data, &options);
    match read_dataset("fuzz", data, &options) {
        Ok(set) => {
            assert!(set.values.len() >= MIN_POINTS);
            assert_eq!(set.values.len(), values.unwrap().len());
        }
        Err(e) => {
            // One line naming the file.
            let text = e.to_string();
            assert!(!text.contains('\n') && text.contains("fuzz"), "{text}");
        }
    }
}

fn check_pktgen(log: &str, head: usize, tail: usize) {
    let trim = Trim { head, tail };
    let samples = pps_samples(log);
    assert!(kept_samples(&samples, trim).len() <= samples.len());
    if let Ok(values) = bsdrp_values(log, trim) {
        assert!(!values.is_empty());
    }
    if let Ok(v) = bsdrp_run_value(log, trim) {
        assert!(!v.is_nan(), "{v}");
    }
}

#[test]
fn regressions() {
    check_ministat(b"", 1, b" ");
    check_ministat(b"1 2\n3 4\n", usize::MAX, b"\n");
    check_ministat(b"\xff\xfe 1e999999\n-0\nnan\n", 1, b" \t");
    check_pktgen("", 0, 0);
    check_pktgen("Sent 1 packets 64 bytes 1 events\n", usize::MAX, usize::MAX);
}

proptest! {
    #![proptest_config(harness::config())]

    #[test]
    fn fuzz_ministat_input(
        data in harness::inputs(harness::corpus("ministat")),
        // What `pktlab ministat` accepts: -C from 1, -d not empty.
        column in prop_oneof![Just(1usize), 1usize..5, 1usize..],
        delimiters in prop_oneof![
            Just(b" \t".to_vec()),
            Just(b",".to_vec()),
            prop::collection::vec(any::<u8>(), 1..4),
        ],
    ) {
        check_ministat(&data, column, &delimiters);
    }

    #[test]
    fn fuzz_pktgen_log(
        log in harness::text_inputs(harness::corpus("pktgen_log")),
        head in prop_oneof![Just(15usize), 0usize..40, any::<usize>()],
        tail in prop_oneof![Just(10usize), 0usize..40, any::<usize>()],
    ) {
        check_pktgen(&log, head, tail);
    }
}
