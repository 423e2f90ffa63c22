//! Fuzz harnesses for what a campaign reads: its TOML file and the JSON of
//! a results folder (run files, `summary.json`, `env.json`). Seeds in
//! `fuzz/corpus/campaign/`, `run_jsonl/` and `results_json/`; `bench/fuzz`
//! runs the same harnesses with millions of cases.

#[path = "../../../fuzz/harness.rs"]
mod harness;

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::read_run;
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::EnvRecord;
use pktlab_campaign::summary::CampaignSummary;
use proptest::prelude::*;

fn check_campaign(text: &str) {
    match CampaignFile::parse(text) {
        Ok(file) => {
            // What parses prints back to the same file.
            assert_eq!(CampaignFile::parse(&file.to_toml()).unwrap(), file);
            if let Err(e) = Plan::from_file(&file, 2) {
                assert!(!e.to_string().contains('\n'), "{e}");
            }
        }
        Err(e) => assert!(!e.contains('\n'), "{e}"),
    }
}

fn check_run_file(bytes: &[u8]) {
    let path = harness::scratch_file("x.inet4-64.1.jsonl", bytes);
    if let Err(e) = read_run(&path) {
        {
            let text = e.to_string();
            assert!(
                !text.contains('\n') && text.contains("x.inet4-64.1.jsonl"),
                "{text}"
            );
        }
    }
}

fn check_results_json(text: &str) {
    let _ = serde_json::from_str::<CampaignSummary>(text);
    let _ = serde_json::from_str::<EnvRecord>(text);
}

#[test]
fn seeds_are_valid() {
    for seed in harness::corpus("campaign") {
        let text = String::from_utf8(seed).unwrap();
        let file = CampaignFile::parse(&text).unwrap();
        Plan::from_file(&file, 2).unwrap();
    }
    for (i, seed) in harness::corpus("run_jsonl").iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("{i}.jsonl"));
        std::fs::write(&path, seed).unwrap();
        read_run(&path).unwrap();
    }
    let summary = &harness::corpus("results_json")[0];
    serde_json::from_slice::<CampaignSummary>(summary).unwrap();
}

#[test]
fn regressions() {
    check_campaign("");
    check_campaign("\u{e9}=");
    check_campaign("[run]\niterations = -1\n");
    // Values quoted in an error keep it on one line.
    check_campaign("[run]\ndrop_trace = \"a\\nb\"\n");
    check_campaign("[run]\non_error = \"a\\nb\"\n");
    check_run_file(b"");
    check_run_file(b"\n\n");
    check_run_file(b"{}\n{}\n");
    check_results_json("{\"configs\": [\"a\", 1]}");
}

proptest! {
    #![proptest_config(harness::config())]

    #[test]
    fn fuzz_campaign_file(text in harness::text_inputs(harness::corpus("campaign"))) {
        check_campaign(&text);
    }

    #[test]
    fn fuzz_run_file(bytes in harness::inputs(harness::corpus("run_jsonl"))) {
        check_run_file(&bytes);
    }

    #[test]
    fn fuzz_results_json(text in harness::text_inputs(harness::corpus("results_json"))) {
        check_results_json(&text);
    }
}
