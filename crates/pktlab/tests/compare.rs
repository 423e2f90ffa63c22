//! `pktlab compare` on results folders (no root needed): between the
//! configurations of one folder, and between two folders, checked against
//! Debian's ministat(1) on the same `.pps` files.

use std::path::Path;
use std::process::Command;

const PKTLAB: &str = env!("CARGO_BIN_EXE_pktlab");

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(PKTLAB).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Debian's ministat predates FreeBSD 13's formula for the error of the
/// percentage; every other line must be the same.
fn without_percent_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.contains("% +/-")).collect()
}

#[test]
fn two_folders_before_and_after() {
    let tmp = tempfile::tempdir().unwrap();
    let (before, after) = (tmp.path().join("before"), tmp.path().join("after"));
    for d in [&before, &after] {
        std::fs::create_dir(d).unwrap();
    }
    // The FreeBSD router-tuning wiki's "hyperthreading_intr_allowed" runs, before and after.
    write(
        &before,
        "forwarding.inet4.pps",
        "19028337\n19126428\n19099721\n19100000\n19098189\n",
    );
    write(
        &after,
        "forwarding.inet4.pps",
        "24396932\n24508797\n24494912\n24480000\n24503409\n",
    );
    // Only in the first folder: left out.
    write(&before, "rps.inet4.pps", "1\n2\n3\n");
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let (code, out, err) = run(&["compare", b, a]);
    assert_eq!(code, 0, "{err}");
    let (title, body) = out.split_once('\n').unwrap();
    assert_eq!(
        title,
        "Forwarded packets per second, configuration forwarding, traffic inet4:"
    );
    assert!(
        body.contains(&format!("x {b}/forwarding.inet4.pps")),
        "{body}"
    );
    assert!(
        body.contains(&format!("+ {a}/forwarding.inet4.pps")),
        "{body}"
    );
    assert!(!out.contains("rps"), "{out}");
    let debian = Command::new("ministat")
        .args([
            &format!("{b}/forwarding.inet4.pps"),
            &format!("{a}/forwarding.inet4.pps"),
        ])
        .output()
        .expect("Debian's ministat (scripts/deps installs it)");
    let debian = String::from_utf8(debian.stdout).unwrap();
    assert_eq!(without_percent_lines(body), without_percent_lines(&debian));
    // The table rows carry the hand-checkable figures.
    assert!(
        body.contains("x   5      19028337      19126428      19099721"),
        "{body}"
    );

    let (code, out, _) = run(&["compare", b, a, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["datasets"][0]["n"], 5);
    assert_eq!(v["datasets"][1]["min"], 24396932.0);
    assert_eq!(v["comparisons"][0]["significant"], true);
}

#[test]
fn configurations_of_one_folder_in_campaign_order() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "forwarding.inet4.pps", "100\n102\n98\n101\n99\n");
    write(d, "nft-stateful.inet4.pps", "90\n92\n88\n91\n89\n");
    write(d, "forwarding.inet6.pps", "50\n51\n49\n");
    // The campaign's order names nft-stateful first: it is the baseline.
    let campaign = "[[traffic]]\nname = \"inet4\"\n[[traffic]]\nname = \"inet6\"\n\
                    [[config]]\nname = \"nft-stateful\"\n[[config]]\nname = \"forwarding\"\n";
    let file = pktlab_campaign::file::CampaignFile::parse(campaign).unwrap();
    let plan = pktlab_campaign::plan::Plan::from_file(&file, 2).unwrap();
    let summary = pktlab_campaign::summary::CampaignSummary::new(&plan, &[]);
    write(d, "summary.json", &serde_json::to_string(&summary).unwrap());
    let (code, out, err) = run(&["compare", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let blocks: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(blocks.len(), 2, "{out}");
    assert!(blocks[0].starts_with(
        "Forwarded packets per second, traffic inet4:\nx nft-stateful.inet4.pps\n+ forwarding.inet4.pps\n"
    ));
    // avg 90 and 100, stddev sqrt(2.5) each: difference 10.
    assert!(
        blocks[0].contains("Difference at 95.0% confidence\n\t10 +/- "),
        "{out}"
    );
    assert!(blocks[1]
        .starts_with("Forwarded packets per second, traffic inet6:\nx forwarding.inet6.pps\n"));
    let (code, out, _) = run(&["compare", d.to_str().unwrap(), "--traffic", "inet6"]);
    assert_eq!(code, 0);
    assert!(!out.contains("inet4"));
}

#[test]
fn bad_folders_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().to_str().unwrap();
    for (args, msg) in [
        (
            vec!["compare", "/nonexistent/pktlab-r"],
            "pktlab: /nonexistent/pktlab-r: no such results folder\n".to_string(),
        ),
        (
            vec!["compare", empty],
            format!("pktlab: {empty}: no .pps files: not a pktlab or BSDRP results folder\n"),
        ),
        (
            vec!["compare", empty, "-c", "42"],
            "pktlab: invalid confidence level '42': use 80, 90, 95, 98, 99 or 99.5\n".to_string(),
        ),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err, msg);
    }
}

/// The numbers of a text block (ministat's table rows and the difference
/// lines) are those of the JSON object of the same comparison.
fn assert_text_states_json(block: &str, v: &serde_json::Value) {
    // ministat prints the table with 8 significant digits (%.8g) and the
    // difference with 6 (%g).
    let close = |text: &str, json: &serde_json::Value, what: &str, digits: i32| {
        let t: f64 = text
            .parse()
            .unwrap_or_else(|e| panic!("{what} {text:?}: {e}"));
        let j = json.as_f64().unwrap_or_else(|| panic!("{what}: {json}"));
        assert!(
            (t - j).abs() <= j.abs() * 10f64.powi(-digits) + 1e-9,
            "{what}: text {t}, JSON {j}\n{block}"
        );
    };
    let sets = v["datasets"].as_array().unwrap();
    let symbols: Vec<&str> = sets.iter().map(|s| s["symbol"].as_str().unwrap()).collect();
    let rows: Vec<Vec<&str>> = block
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 7 && symbols.contains(&w[0]))
        .collect();
    assert_eq!(rows.len(), sets.len(), "{block}");
    for (row, set) in rows.iter().zip(sets) {
        assert_eq!(row[0], set["symbol"].as_str().unwrap(), "{block}");
        assert_eq!(row[1].parse::<u64>().unwrap(), set["n"].as_u64().unwrap());
        for (i, key) in ["min", "max", "median", "avg", "stddev"].iter().enumerate() {
            close(row[2 + i], &set[*key], key, 7);
        }
    }
    // Only a proven difference prints its lines.
    let cmps: Vec<&serde_json::Value> = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["significant"] == true)
        .collect();
    assert_eq!(
        block.matches("No difference proven").count(),
        v["comparisons"].as_array().unwrap().len() - cmps.len(),
        "{block}"
    );
    let diffs: Vec<&str> = block
        .lines()
        .filter(|l| l.starts_with('\t') && l.contains(" +/- ") && !l.contains('%'))
        .collect();
    assert_eq!(diffs.len(), cmps.len(), "{block}");
    for (line, c) in diffs.iter().zip(cmps) {
        let (d, e) = line.trim().split_once(" +/- ").unwrap();
        close(d, &c["difference"], "difference", 5);
        close(e, &c["error"], "error", 5);
    }
}

#[test]
fn text_states_the_numbers_of_the_json() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // The FreeBSD router-tuning wiki's runs, and a third set of our own.
    write(
        d,
        "a.inet4.pps",
        "19028337\n19126428\n19099721\n19100000\n19098189\n",
    );
    write(
        d,
        "b.inet4.pps",
        "24396932\n24508797\n24494912\n24480000\n24503409\n",
    );
    write(d, "c.inet4.pps", "19000001\n19200003\n19100002\n");
    let dir = d.to_str().unwrap();
    let (code, text, err) = run(&["compare", dir]);
    assert_eq!(code, 0, "{err}");
    let (code, json, err) = run(&["compare", dir, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(v["datasets"].as_array().unwrap().len(), 3);
    // By hand: c's mean is 19100002, its median 19100002, n 3.
    assert_eq!(v["datasets"][2]["avg"], 19100002.0);
    assert_eq!(v["datasets"][2]["median"], 19100002.0);
    assert_text_states_json(&text, &v);
    // b against a: the means 24476810 and 19090535 (by hand), a difference
    // of 5386275, proven; c against a: 9467, not proven.
    assert_eq!(v["comparisons"][0]["difference"], 5_386_275.0);
    assert_eq!(v["comparisons"][1]["difference"], 9467.0);
    assert!(text.contains("\t5.38628e+06 +/- "), "{text}");
    assert!(
        text.ends_with("No difference proven at 95.0% confidence\n"),
        "{text}"
    );
}

/// A run file of `config` with a result line whose `drops` is `drops`
/// (the header as pktlab writes it, trimmed of nothing the reader needs).
fn run_file(config: &str, iteration: usize, fwd: u64, lost: u64, drops: &str) -> String {
    let header = format!(
        r#"{{"type":"run","campaign":"bench","config":"{config}","config_text":"","cpu_model":"Test CPU","cpus":2,"interrupts":"veth has no interrupts","iteration":{iteration},"kernel":"6.1.0","lab":"built-in lab pktlab","pktlab_version":"0.1.0","settings":{{"duration":3.0,"interval":1.0,"trim_head":1,"trim_tail":1}},"started_at":{iteration},"traffic":"inet4","traffic_profile":{{"dst":"198.18.1.1:2000","name":"inet4","rate_pps":null,"sizes":"64","src":"198.18.0.1","threads":1}},"virtual_lab":true}}"#
    );
    // The generator's and the receiver's summaries, as a run file holds
    // them (3 s at 1000 pps).
    let tx = r#"{"backend":"afpacket","packets":3000,"bytes":0,"seconds":3.0,"pps":1000.0,"l2_bps":0.0,"l1_bps":0.0,"tx_errors":0,"interrupted":false,"threads":[],"iface":null}"#;
    let rx = format!(
        r#"{{"backend":"afpacket","packets":{},"bytes":0,"seconds":3.0,"pps":0.0,"l2_bps":0.0,"l1_bps":0.0,"flows":2000,"streams":2000,"lost":{lost},"out_of_order":0,"duplicates":0,"foreign":0,"untracked":0,"ring_drops":0,"bad_stamps":0,"latency_ns":null,"interrupted":false,"threads":[],"iface":null}}"#,
        3000 - lost.min(3000)
    );
    let result = format!(
        r#"{{"type":"result","forwarded_pps":{fwd},"offered_pps":1000,"lost":{lost},"loss_ratio":0.0,"rx_samples":[],"tx_samples":[],"tx":{tx},"rx":{rx},"drops":{drops}}}"#
    );
    format!("{header}\n{result}\n")
}

/// The `drops` of a run: `places` as (side, iface, layer, reason,
/// location, frames).
fn drops(lost: u64, unexplained: u64, places: &[(&str, &str, &str, &str, &str, u64)]) -> String {
    let side = |s: &str| -> u64 { places.iter().filter(|p| p.0 == s).map(|p| p.5).sum() };
    let places: Vec<String> = places
        .iter()
        .map(|(side, iface, layer, reason, location, frames)| {
            format!(
                r#"{{"side":"{side}","host":"local","netns":"lab-{side}","iface":"{iface}","layer":"{layer}","reason":"{reason}","location":"{location}","frames":{frames}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"lost":{lost},"dut":{},"tester":{},"unexplained":{unexplained},"places":[{}],"traced":true,"tester_limited":false}}"#,
        side("dut"),
        side("tester"),
        places.join(",")
    )
}

#[test]
fn where_each_configurations_loss_went_summed_over_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::create_dir(d.join("runs")).unwrap();
    let nft = |n| ("dut", "d0", "kernel", "NETFILTER_DROP", "nft_do_chain", n);
    let runs = [
        ("forwarding", 1, 1000, 0, drops(0, 0, &[])),
        ("forwarding", 2, 1002, 0, drops(0, 0, &[])),
        ("forwarding", 3, 998, 0, drops(0, 0, &[])),
        ("seq2", 1, 900, 2000, drops(2000, 0, &[nft(2000)])),
        ("seq2", 2, 905, 2000, drops(2000, 10, &[nft(1990)])),
        (
            "seq2",
            3,
            895,
            2050,
            drops(
                2050,
                0,
                &[nft(2000), ("tester", "r0", "ring", "ring_drops", "-", 50)],
            ),
        ),
    ];
    for (config, i, fwd, lost, drops) in &runs {
        write(
            &d.join("runs"),
            &format!("{config}.inet4.{i}.jsonl"),
            &run_file(config, *i, *fwd, *lost, drops),
        );
    }
    write(d, "forwarding.inet4.pps", "1000\n1002\n998\n");
    write(d, "seq2.inet4.pps", "900\n905\n895\n");
    let dir = d.to_str().unwrap();
    let (code, out, err) = run(&["compare", dir]);
    assert_eq!(code, 0, "{err}");
    // seq2: 6050 lost, nft 2000 + 1990 + 2000 = 5990 (99.0 %), the ring 50
    // (0.83 %), 10 unexplained (0.17 %).
    assert!(
        out.ends_with(
            "Where the lost frames went (summed over the runs):\n  \
             forwarding: 3 runs, lost 0\n  \
             seq2: 3 runs, lost 6050: DUT 5990 (99%), tester 50 (0.83%), unexplained 10 (0.17%)\n    \
             DUT nft_do_chain NETFILTER_DROP 5990 (99%)\n    \
             tester r0 ring_drops 50 (0.83%)\n"
        ),
        "{out}"
    );
    let (code, json, err) = run(&["compare", dir, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let seq2 = &v["drops"][1];
    assert_eq!(seq2["name"], "seq2");
    assert_eq!(
        (
            &seq2["runs"],
            &seq2["lost"],
            &seq2["dut"],
            &seq2["tester"],
            &seq2["unexplained"]
        ),
        (
            &serde_json::json!(3),
            &serde_json::json!(6050),
            &serde_json::json!(5990),
            &serde_json::json!(50),
            &serde_json::json!(10)
        )
    );
    assert_eq!(seq2["places"][0]["frames"], 5990);
    assert_eq!(seq2["places"][1]["reason"], "ring_drops");
    assert_eq!(v["drops"][0]["lost"], 0);

    // Against another folder: each folder's sum, named by its path.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(other.join("runs")).unwrap();
    for i in 1..=3 {
        write(
            &other.join("runs"),
            &format!("seq2.inet4.{i}.jsonl"),
            &run_file("seq2", i, 950, 100, &drops(100, 100, &[])),
        );
    }
    write(&other, "seq2.inet4.pps", "950\n950\n950\n");
    let (code, out, err) = run(&["compare", dir, other.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "Where the lost frames went (summed over the runs):\n  \
             {dir}: 3 runs, lost 6050: DUT 5990 (99%), tester 50 (0.83%), unexplained 10 (0.17%)\n    \
             DUT nft_do_chain NETFILTER_DROP 5990 (99%)\n    \
             tester r0 ring_drops 50 (0.83%)\n  \
             {}: 3 runs, lost 300: DUT 0 (0.00%), tester 0 (0.00%), unexplained 300 (100%)\n",
            other.display()
        )),
        "{out}"
    );
}
