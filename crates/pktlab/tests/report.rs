//! `pktlab report`: bad input, the page of a real `bench` campaign on a
//! built-in lab of its own (written by bench itself, and again by the
//! command, with its CSVs), an interrupted campaign, and the pages opened
//! in a real headless browser that reads the page's self-check.
//!
//! The lab (`gl<pid>x<n>`) is removed on drop, also when a test fails;
//! packets flow only inside its namespaces. The browser runs with every
//! host name mapped to nowhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{pktlab, Lab};
use serde_json::Value;

const RFC_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/fixtures/html");

fn one_line_exit_2(args: &[&str], wanted: &str) {
    let r = pktlab(args);
    assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(wanted), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    one_line_exit_2(
        &["report", d],
        "not a results folder: it has neither summary.json nor campaign.toml",
    );
    one_line_exit_2(
        &["report", &format!("{d}/nowhere")],
        "nowhere: not a folder",
    );
    std::fs::write(tmp.path().join("summary.json"), "{\"type\": \"summ").unwrap();
    one_line_exit_2(&["report", d], "summary.json");
    std::fs::write(tmp.path().join("summary.json"), "[1, 2]").unwrap();
    one_line_exit_2(&["report", d], "summary.json");
    let r = pktlab(&["report"]);
    assert_eq!(r.code, 2);
    assert!(!tmp.path().join("report.html").exists());
}

/// A headless Chromium: Debian's chromium-headless-shell, or chromium.
fn browser() -> PathBuf {
    for name in [
        "chromium-headless-shell",
        "chrome-headless-shell",
        "chromium",
    ] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "no headless browser: install Debian's chromium-headless-shell (scripts/deps and scripts/test do)"
    );
}

/// Opens `page` in the browser, network mapped to nowhere: the DOM's
/// self-check (and a screenshot beside the page, at `width` pixels).
fn self_check(page: &Path, width: u32) -> Value {
    let url = format!("file://{}", page.display());
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--no-first-run",
    ];
    let size = format!("--window-size={width},3000");
    let shot = page.with_extension(format!("{width}.png"));
    let r = Command::new(browser())
        .args(base)
        .arg(&size)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "screenshot: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "an empty screenshot"
    );
    let r = Command::new(browser())
        .args(base)
        .arg(&size)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "dump-dom: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let dom = String::from_utf8_lossy(&r.stdout);
    let start = dom
        .find("<div id=\"selfcheck\" data-done=\"1\">")
        .unwrap_or_else(|| panic!("the self-check did not run (CSP or script error?)"));
    let rest = &dom[start..];
    let json = &rest[rest.find('>').unwrap() + 1..rest.find("</div>").unwrap()];
    serde_json::from_str(&json.replace("&quot;", "\"").replace("&amp;", "&")).unwrap()
}

fn assert_renders(page: &Path) {
    let text = std::fs::read_to_string(page).unwrap();
    let charts = text.matches("<svg class=\"chart\"").count() as u64;
    assert!(charts > 0);
    assert!(!text.contains("http:") && !text.contains("https:"));
    for width in [1280, 420] {
        let check = self_check(page, width);
        assert_eq!(check["charts"], charts, "{check}");
        assert_eq!(check["errors"], serde_json::json!([]), "{check}");
        assert_eq!(check["overflow"], serde_json::json!([]), "{check}");
        assert_eq!(check["overlaps"], serde_json::json!([]), "{check}");
    }
}

#[test]
fn a_real_campaign_and_its_page_in_a_browser() {
    browser(); // fail early, with the reason, without a browser
    let lab = Lab::up();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("real");
    let d = dir.to_str().unwrap();
    let r = pktlab(&[
        "bench",
        "--prefix",
        &lab.prefix,
        "-o",
        d,
        "--configs",
        "forwarding,nft-stateless",
        "-N",
        "2",
        "-t",
        "3s",
        "--warmup",
        "1s",
        "--tail",
        "1s",
        "--rate",
        "20kpps",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // bench wrote the page at the end, through the exporter hook.
    let page = dir.join("report.html");
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.contains("<section id=\"summary\">"));
    assert!(text.contains("<section id=\"runs\">") && text.contains("<section id=\"load\">"));
    assert!(text.contains("<section id=\"interfaces\">"));
    assert!(text.contains(&format!("{}-rcv/r0", lab.prefix)));
    assert!(text.contains("<strong>Virtual lab:</strong>"));
    assert!(!text.contains("The campaign is incomplete"));
    // 1 strip chart, 4 runs over time, 2 CPU load charts.
    assert_eq!(text.matches("<svg class=\"chart\"").count(), 7);
    // The summary's medians are the .pps files' values.
    for config in ["forwarding", "nft-stateless"] {
        let pps = std::fs::read_to_string(dir.join(format!("{config}.inet4.pps"))).unwrap();
        let v: Vec<f64> = pps.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(v.len(), 2);
        let median = (v[0] + v[1]) / 2.0;
        let shown = pktlab_report::html::numbers::pps(median);
        assert!(
            text.contains(&format!("<td>{config}</td><td>inet4</td><td class=\"num\">2</td><td class=\"num\">{shown}</td>")),
            "{config} median {shown}"
        );
        // At 20 kpps a run forwards between 1 and 20.2 kpps.
        assert!(v.iter().all(|&x| (1000.0..20_200.0).contains(&x)), "{v:?}");
    }
    assert_renders(&page);

    // The command writes the same page again, and the CSVs.
    std::fs::remove_file(&page).unwrap();
    let r = pktlab(&["report", d, "--csv"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with(&format!("Report: {d}/report.html\n")));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), text);
    let runs = std::fs::read_to_string(dir.join("csv/runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 4);
    let seconds = std::fs::read_to_string(dir.join("csv/seconds.csv")).unwrap();
    // A header and at least three seconds per run.
    assert!(seconds.lines().count() > 4 * 3, "{seconds}");
    assert!(!dir.join("csv/trials.csv").exists());

    // The page of an rfc2544 folder (its files written by hand in their
    // format, beside this campaign's own), in a browser too.
    let rfc = tmp.path().join("rfc");
    std::fs::create_dir(&rfc).unwrap();
    for f in ["campaign.toml", "env.json"] {
        std::fs::copy(dir.join(f), rfc.join(f)).unwrap();
    }
    for f in ["rfc2544-settings.json", "rfc2544.json", "trials.jsonl"] {
        std::fs::copy(Path::new(RFC_FIXTURES).join(f), rfc.join(f)).unwrap();
    }
    let out = tmp.path().join("rfc.html");
    let r = pktlab(&["report", rfc.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 4);
    assert!(html.find("<section id=\"rfc2544\"") < html.find("<section id=\"summary\""));
    assert_renders(&out);

    // --no-report: no page.
    let dir2 = tmp.path().join("quiet");
    let r = pktlab(&[
        "bench",
        "--prefix",
        &lab.prefix,
        "-o",
        dir2.to_str().unwrap(),
        "-N",
        "1",
        "-t",
        "2s",
        "--warmup",
        "0s",
        "--tail",
        "0s",
        "--rate",
        "10kpps",
        "--no-report",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(dir2.join("summary.json").exists());
    assert!(!dir2.join("report.html").exists());

    // Both folders on one comparison page.
    let cmp = tmp.path().join("cmp.html");
    let r = pktlab(&[
        "report",
        d,
        dir2.to_str().unwrap(),
        "-o",
        cmp.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let c = std::fs::read_to_string(&cmp).unwrap();
    assert!(c.contains("<h2>Folders compared</h2>"));
    assert!(c.contains("<tr><td>quiet</td><td class=\"num\">1</td>"));
    assert_renders(&cmp);
    if let Ok(keep) = std::env::var("PKTLAB_KEEP_REPORTS") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        for p in [&page, &out, &cmp] {
            for ext in ["html", "1280.png", "420.png"] {
                let from = p.with_extension(ext);
                let _ = std::fs::copy(
                    &from,
                    keep.join(format!(
                        "{}.{ext}",
                        p.file_stem().unwrap().to_string_lossy()
                    )),
                );
            }
        }
    }
}

#[test]
fn an_interrupted_campaign_still_has_its_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cut");
    std::fs::create_dir_all(dir.join("runs")).unwrap();
    std::fs::write(
        dir.join("campaign.toml"),
        "name = \"cut\"\n[run]\niterations = 2\nduration = \"3s\"\n[[config]]\nname = \"forwarding\"\n",
    )
    .unwrap();
    // Interrupted before a single run finished: no summary, no runs.
    let r = pktlab(&["report", dir.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(text.contains("summary.json is missing"));
    assert!(text.contains("The campaign is incomplete: 0 of 2 runs finished"));
    assert!(text.contains("env.json is missing"));
    assert!(r.stderr.contains("note: ") && r.stderr.contains("0 of 2 runs finished"));
    assert_eq!(text.matches("<svg ").count(), 0);
}

/// One trial of an rfc9693 search: `n` connections at `rate`, `validated`
/// of them answered.
fn stateful_trial(
    test: &str,
    n: u64,
    rate: f64,
    validated: u64,
) -> pktlab_search::stateful::phases::StatefulTrial {
    pktlab_search::stateful::phases::StatefulTrial {
        test: test.into(),
        connections: n,
        setup_rate_pps: rate,
        offered_pps: rate,
        preliminary_sent: n,
        preliminary_received: n,
        conntrack_count: Some(validated),
        validation_rate_pps: 50_000.0,
        validation_sent: n,
        validation_received: validated,
        setup_refused: Some(n - validated),
        setup_evicted: Some(0),
        validation_evicted: Some(0),
    }
}

/// `pktlab report DIR` on an rfc9693 folder reads `rfc9693.json` back and
/// writes the page its campaign wrote, byte for byte, with the figures put
/// in; it is reported alone and has no CSV tables. No lab: the folder is
/// made from known results.
#[test]
fn an_rfc9693_folder_s_page_is_the_one_its_campaign_wrote() {
    use pktlab_campaign::folder::{ResultsDir, CAMPAIGN_FILE};
    use pktlab_search::stateful::searches::Bounds;
    use pktlab_search::stateful::{StatefulReport, StatefulRun, StatefulSettings};

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("rfc9693-x");
    let dir = ResultsDir::create(&path).unwrap();
    dir.write(CAMPAIGN_FILE, b"name = \"rfc9693\"\n").unwrap();
    let mut report = StatefulReport::new(StatefulSettings::default());
    report.runs.push(StatefulRun {
        config: "nft-stateful".into(),
        traffic: "inet4".into(),
        iteration: 1,
        conntrack_max: Some(3000),
        udp_timeout_s: Some(30),
        capacity: Some(Bounds {
            lower: Some(2996.0),
            upper: Some(3002.0),
            min: 1.0,
            max: 3750.0,
            hit_max: false,
            generator_limited: false,
            complete: true,
            lower_intended: Some(2996.0),
            upper_intended: Some(3002.0),
        }),
        count_at_capacity: Some(2996),
        trials: vec![
            stateful_trial("capacity", 3750, 50_000.0, 3000),
            stateful_trial("capacity", 2996, 50_000.0, 2996),
            stateful_trial("capacity", 3002, 50_000.0, 3000),
        ],
        ..StatefulRun::default()
    });
    report.write(&dir).unwrap();
    // What the campaign's exporter wrote as the run ended.
    let written = pktlab_report::html::stateful::stateful_page(&path, &report);
    let d = path.to_str().unwrap();

    let r = pktlab(&["report", d]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, format!("Report: {d}/report.html\n"));
    // The one thing the folder lacks (no env.json here); no run file or
    // summary is asked for.
    assert_eq!(
        r.stderr,
        format!("note: {d}: env.json is missing: the host and NICs are unknown.\n")
    );
    let page = std::fs::read_to_string(path.join("report.html")).unwrap();
    assert!(page == written, "the page differs from the campaign's");
    for figure in [
        "<title>pktlab report: rfc9693-x</title>",
        "nft-stateful inet4 #1: nf_conntrack_max 3,000 (host-wide), UDP timeout 30 s, 3 trials",
        "connection tracking table capacity     2,996 connections [2,996, 3,002], the DUT counted 2,996",
        // The first trial's row: 3,750 opened, 3,000 validated, 750 failed.
        "<td class=\"num\">1</td><td class=\"num\">3,750</td><td class=\"num\">50,000</td>\
         <td class=\"num\">3,750</td><td class=\"num\">3,000</td><td class=\"num\">3,000</td>\
         <td class=\"num\">750</td><td class=\"num\">750</td>",
    ] {
        assert!(page.contains(figure), "{figure}");
    }
    assert!(!page.contains("summary.json"));

    // Reported alone, and no CSV tables: one line, exit 2, page kept.
    let other = tmp.path().join("other");
    let other_dir = ResultsDir::create(&other).unwrap();
    other_dir
        .write(CAMPAIGN_FILE, b"name = \"bench\"\n")
        .unwrap();
    let o = other.to_str().unwrap();
    one_line_exit_2(
        &["report", d, o],
        "holds rfc9693 results, which are reported alone",
    );
    one_line_exit_2(&["report", "--csv", d], "--csv has no tables for");
    assert!(!path.join("csv").exists());
    assert!(std::fs::read_to_string(path.join("report.html")).unwrap() == written);
}
