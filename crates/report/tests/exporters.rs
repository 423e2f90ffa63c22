//! The campaign's exporters write, for the same runs, the very bytes the
//! files had before presentation moved to the report layer: the expected
//! files in `fixtures/golden/` were written by that earlier code from the
//! run files beside them.

use std::path::Path;

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::{ResultsDir, RUNS_DIR};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::EnvRecord;
use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Finished, Stage};
use pktlab_campaign::summary::CampaignSummary;
use pktlab_report::export::runs_exporters;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden");

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn files_are_byte_identical_to_the_earlier_ones() {
    let golden = Path::new(GOLDEN);
    let text = std::fs::read_to_string(golden.join("campaign.toml")).unwrap();
    let campaign = Plan::from_file(&CampaignFile::parse(&text).unwrap(), 2).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let dir = ResultsDir::create(&out).unwrap();
    dir.make_runs_dir().unwrap();
    for name in names(&golden.join(RUNS_DIR)) {
        std::fs::copy(
            golden.join(RUNS_DIR).join(&name),
            out.join(RUNS_DIR).join(&name),
        )
        .unwrap();
    }
    // The fixed-rate method's own files (.pps, summary.json), then the
    // exporters' (the page aside: the HTML tests check it).
    let runs = Runs::read(&campaign, &dir).unwrap();
    runs.write_summaries(&dir).unwrap();
    let env: EnvRecord = serde_json::from_value(serde_json::json!({
        "configs": [], "created_at": 0, "dut_uname": null, "interrupts": null,
        "lab": "lab", "nics": [], "pktlab_version": "0.1.0", "virtual_lab": true,
        "host": {"hostname": "h", "kernel": "6.1", "kernel_build": "#1", "os": null,
            "cpu_model": null, "cpus": 2}
    }))
    .unwrap();
    let finished = Finished {
        plan: &campaign,
        env: &env,
        env_text: "",
        folder: &dir,
        results: &runs,
        stage: Stage::End,
    };
    for e in runs_exporters(false) {
        e.take(&finished).unwrap();
    }
    let summary = &runs.summary;
    assert_eq!(summary.runs_finished, 12);
    assert_eq!(summary.runs_planned, 18);

    let mut expected = names(golden);
    expected.retain(|n| n != "campaign.toml");
    expected.push("runs.csv".into());
    expected.sort();
    assert_eq!(names(&out), expected);
    for name in expected.iter().filter(|n| *n != "runs" && *n != "runs.csv") {
        let want = std::fs::read(golden.join(name)).unwrap();
        let got = std::fs::read(out.join(name)).unwrap();
        assert!(
            want == got,
            "{name} differs:\n--- expected\n{}\n--- written\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got)
        );
    }

    // summary.json reads back as the summary written: one run of
    // nft-stateless has no standard deviation (null in JSON, NaN here).
    let back = CampaignSummary::read(&dir).unwrap().unwrap();
    assert_eq!(back.traffics, ["inet4-64", "inet4-1518"]);
    assert_eq!(back.configs, ["forwarding", "rps", "nft-stateless"]);
    assert_eq!(back.cells.len(), 6);
    let one = back.cells[4].forwarded.unwrap();
    assert_eq!(
        (back.cells[4].config.as_str(), one.n, one.avg),
        ("nft-stateless", 1, 520000.0)
    );
    assert!(one.stddev.is_nan());
    assert_eq!(back.cells[0].values, summary.cells[0].values);
    assert_eq!(back.sweeps, summary.sweeps);

    // runs.csv: a header and the twelve runs, sorted, figures as the run
    // files hold them.
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 13, "{csv}");
    assert_eq!(
        lines[0],
        "config,traffic,iteration,started_at,forwarded_pps,offered_pps,loss_ratio"
    );
    // forwarding inet4-1518 #1: 639000 of 725000 offered, started at 1001.
    let loss = 1.0 - 639000.0 / 725000.0;
    assert_eq!(
        lines[1],
        format!("forwarding,inet4-1518,1,1001,639000.0,725000.0,{loss}")
    );
    assert!(lines[4].starts_with("forwarding,inet4-64,1,1001,630112.5,755000.0,"));
    assert!(lines[7].starts_with("nft-stateless,inet4-64,1,1001,520000.0,755000.0,"));
    assert!(lines[12].starts_with("rps,inet4-64,3,1003,698800.5,754900.0,"));
}
