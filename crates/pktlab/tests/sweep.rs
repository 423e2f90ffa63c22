//! `pktlab bench --sweep` on a built-in lab of its own: one configuration
//! per value, run interleaved, applied and reverted with the knob in the
//! state probe; `sweep.txt`, `sweep.csv`, `summary.json` and `report.html`
//! hold the same table, checked against the runs' own `.pps` files.

mod common;

use common::{one_at_a_time, pktlab, sh, Lab};
use serde_json::Value;

fn results_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pktlab-sweep-{tag}-"))
        .tempdir()
        .unwrap()
}

fn in_dut(lab: &Lab, cmd: &str) -> String {
    sh(&format!("ip netns exec {} sh -c '{cmd}'", lab.ns("dut")))
}

/// The run values of a `.pps` file.
fn pps(path: &std::path::Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn a_qdisc_sweep_gives_three_configurations_a_table_and_a_curve() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let qdiscs = "tc qdisc show dev d0 root; tc qdisc show dev d1 root";
    let before = in_dut(&lab, qdiscs);
    assert!(before.contains("noqueue"), "{before}");
    let dir = results_dir("qdisc");
    let out = dir.path().join("out");
    let r = pktlab(&[
        "bench",
        "-N",
        "2",
        "-t",
        "3",
        "-R",
        "20kpps",
        "--sweep",
        "qdisc:pfifo:limit=10,100,1000",
        "--prefix",
        &lab.prefix,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Three configurations, interleaved: one run of each, then the second.
    let order: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains(": forwarded "))
        .filter_map(|l| l.split_once("] ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once(" inet4 #").map(|(c, _)| c))
        .collect();
    assert_eq!(
        order,
        [
            "pfifo-limit-10",
            "pfifo-limit-100",
            "pfifo-limit-1000",
            "pfifo-limit-10",
            "pfifo-limit-100",
            "pfifo-limit-1000"
        ],
        "{}",
        r.stdout
    );
    // The table people read closes the output, as sweep.txt has it.
    let sweep_txt = std::fs::read_to_string(out.join("sweep.txt")).unwrap();
    assert!(r.stdout.contains(&sweep_txt), "{}", r.stdout);
    // Reverted: the ports' qdiscs are what they were.
    assert_eq!(in_dut(&lab, qdiscs), before);
    // Each configuration's lines, as env.json recorded them.
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("env.json")).unwrap()).unwrap();
    let c = env["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pfifo-limit-100")
        .expect("the configuration of value 100");
    assert_eq!(
        c["config"]["apply"],
        serde_json::json!([
            "tc qdisc replace dev d0 root pfifo limit 100",
            "tc qdisc replace dev d1 root pfifo limit 100"
        ])
    );

    // summary.json's table, against the .pps files worked out by hand.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let table = &summary["knob_sweeps"][0];
    assert_eq!(table["knob"], "qdisc:pfifo:limit");
    assert_eq!(table["traffic"], "inet4");
    assert_eq!(table["numeric"], true);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let sweep_csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let csv_lines: Vec<&str> = sweep_csv.lines().collect();
    assert_eq!(csv_lines.len(), 4, "{sweep_csv}");
    assert!(csv_lines[0].starts_with("knob,traffic,value,config,runs,forwarded_median_pps,"));
    assert!(
        sweep_txt.starts_with("Sweep of qdisc:pfifo:limit on inet4 "),
        "{sweep_txt}"
    );
    for (i, value) in ["10", "100", "1000"].iter().enumerate() {
        let row = &rows[i];
        let config = format!("pfifo-limit-{value}");
        assert_eq!(row["value"], *value);
        assert_eq!(row["config"], config.as_str());
        assert_eq!(row["runs"], 2);
        let v = pps(&out.join(format!("{config}.inet4.pps")));
        assert_eq!(v.len(), 2);
        // Two runs: median = mean = their average; standard deviation
        // |a − b| / √2; the 95 % interval's half width t(1) × s / √2 with
        // ministat's t(1) = 12.706, i.e. 12.706 × |a − b| / 2.
        let mean = (v[0] + v[1]) / 2.0;
        let half = 12.706 * (v[0] - v[1]).abs() / 2.0;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(close(f(row, "forwarded_median_pps"), mean), "{row}");
        assert!(close(f(row, "forwarded_mean_pps"), mean), "{row}");
        assert!(close(f(row, "ci95_low_pps"), mean - half), "{row} {v:?}");
        assert!(close(f(row, "ci95_high_pps"), mean + half), "{row} {v:?}");
        // A real measurement: frames went through, no faster than the
        // 20 Kpps asked for (the pacer's 2 % aside).
        assert!(mean > 0.0, "{row}");
        assert!(mean <= 20_400.0, "{row}");
        // The text table and the CSV say the same.
        let line = sweep_txt
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{value} | {config} ")))
            .unwrap_or_else(|| panic!("no row for {value} in {sweep_txt}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[2], "2", "{line}");
        assert_eq!(cells[3], format!("{mean:.0}"), "{line}");
        assert_eq!(cells[5], format!("{:.0}", mean - half), "{line}");
        let csv: Vec<&str> = csv_lines[i + 1].split(',').collect();
        assert_eq!(
            &csv[..5],
            ["qdisc:pfifo:limit", "inet4", value, config.as_str(), "2"]
        );
        assert!(close(csv[5].parse().unwrap(), mean), "{}", csv_lines[i + 1]);
    }
    // The report draws it: a section with a chart and the same table.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = &html[html
        .find("<section id=\"knob-sweep\">")
        .expect("the knob sweep section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<svg"), "no chart");
    assert!(section.contains("qdisc:pfifo:limit · inet4"));
    assert!(section.contains("pfifo-limit-1000"));
}

#[test]
fn a_dut_sysctl_sweep_reverts_to_the_value_it_found() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let key = "net.ipv4.ip_default_ttl";
    in_dut(&lab, &format!("sysctl -qw {key}=77"));
    let dir = results_dir("sysctl");
    let out = dir.path().join("out");
    let r = pktlab(&[
        "bench",
        "-N",
        "1",
        "-t",
        "2",
        "--warmup",
        "0",
        "--tail",
        "0",
        "-R",
        "10kpps",
        "--sweep",
        &format!("{key}=32,128"),
        "--prefix",
        &lab.prefix,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("ip_default_ttl-32 inet4 #1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ip_default_ttl-128 inet4 #1"),
        "{}",
        r.stdout
    );
    // Back to what the DUT had before the campaign, not to a default.
    assert_eq!(in_dut(&lab, &format!("sysctl -n {key}")).trim(), "77");
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("env.json")).unwrap()).unwrap();
    let c = &env["configs"][1];
    assert_eq!(c["name"], "ip_default_ttl-128");
    assert_eq!(
        c["config"]["apply"],
        serde_json::json!([format!("sysctl -qw {key}=128")])
    );
    assert_eq!(
        c["config"]["revert"],
        serde_json::json!([format!("sysctl -qw '{key}=77'")])
    );

    // A bad sweep is a usage error, one line, before anything runs.
    let r = pktlab(&[
        "bench",
        "--sweep",
        "netdev_max_backlog=1000",
        "--prefix",
        &lab.prefix,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.trim(),
        "pktlab: invalid configuration 'netdev_max_backlog': a sweep needs at least two values"
    );
}

#[test]
fn an_rfc2544_sweep_of_a_policer_rate_finds_each_values_ndr() {
    let _alone = one_at_a_time();
    let lab = Lab::up();
    let dir = results_dir("rfc2544");
    // A command template: an nftables policer of {value} frames per second
    // with a burst of 200, so a 1 s trial passes about value + 200.
    let file = dir.path().join("police.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"polsweep\"\n[lab]\nprefix = \"{}\"\n[[sweep]]\nname = \"police\"\nvalues = [2000, 4000]\n\
             apply = [\"nft add table inet pktlabsw\", \
             \"nft add chain inet pktlabsw c '{{ type filter hook forward priority 0; }}'\", \
             \"nft add rule inet pktlabsw c limit rate over {{value}}/second burst 200 packets drop\"]\n\
             revert = [\"nft delete table inet pktlabsw\"]\n",
            lab.prefix
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = pktlab(&[
        "rfc2544",
        "-f",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--max-rate",
        "10k",
        "--duration-sum",
        "2s",
        "--width",
        "2",
        "--goal",
        "0",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("rfc2544.json")).unwrap()).unwrap();
    let table = &report["knob_sweeps"][0];
    assert_eq!(table["knob"], "police");
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{table}");
    let sweep_txt = std::fs::read_to_string(out.join("sweep.txt")).unwrap();
    let sweep_csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(sweep_csv.lines().count(), 3, "{sweep_csv}");
    let mut ndr = Vec::new();
    for (i, (value, low, high)) in [("2000", 1900.0, 2500.0), ("4000", 3800.0, 4500.0)]
        .into_iter()
        .enumerate()
    {
        let row = &rows[i];
        let config = format!("police-{value}");
        assert_eq!(
            (row["value"].as_str(), row["config"].as_str()),
            (Some(value), Some(config.as_str()))
        );
        assert_eq!(row["searches"], 1);
        // The table holds the value's one search's bounds.
        let search = report["throughput"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["config"] == config.as_str())
            .expect("the value's search");
        let goal = &row["goals"][0];
        assert_eq!(goal["loss_ratio"], 0.0);
        assert_eq!(goal["lower_pps"], search["goals"][0]["lower_pps"]);
        assert_eq!(goal["upper_pps"], search["goals"][0]["upper_pps"]);
        let (l, u) = (f(goal, "lower_pps"), f(goal, "upper_pps"));
        assert!(l < u, "{goal}");
        // The policer's rate and its burst, within the 2 % width and a 1 s
        // trial's jitter; a busy host's generator may fall short, which
        // only lowers the bound.
        assert!(
            (low..high).contains(&u) || (low..high).contains(&l),
            "{value}: [{l}, {u}]"
        );
        ndr.push(l);
        let line = sweep_txt
            .lines()
            .find(|x| x.trim_start().starts_with(&format!("{value} | {config} ")))
            .unwrap_or_else(|| panic!("no row for {value} in {sweep_txt}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[3], format!("{l:.0}"), "{line}");
        assert_eq!(cells[4], format!("{u:.0}"), "{line}");
    }
    assert!(ndr[1] > ndr[0] * 1.5, "{ndr:?}");
    assert!(sweep_txt.contains("NDR lower"), "{sweep_txt}");
    assert!(r.stdout.contains(&sweep_txt), "{}", r.stdout);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = &html[html
        .find("<section id=\"knob-sweep\">")
        .expect("the knob sweep section")..];
    assert!(section.contains("<svg"));
    assert!(section.contains("police-4000"));
}
