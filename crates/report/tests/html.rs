//! The HTML report of a small results folder built here from known values:
//! the page against its golden file, every table number against the one
//! worked out by hand, the charts' axes and labels, escaping, no network
//! address, a partial folder, the page of an rfc2544 folder from files
//! written by hand in its format, and the tidy CSVs.

use std::path::{Path, PathBuf};

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::{ResultsDir, CAMPAIGN_FILE, RUNS_DIR};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::records::EnvRecord;
use pktlab_campaign::runs::Runs;
use pktlab_campaign::sink::{Finished, Stage};
use pktlab_report::export::{runs_exporters, tidy};
use pktlab_report::html::{self, Folder};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/html");
const T0: u64 = 1_700_000_000;

const CAMPAIGN: &str = r#"name = "small"
[lab]
link_speed = "1Gbps"
[run]
iterations = 3
duration = "5s"
warmup = "1s"
tail = "1s"
[[traffic]]
name = "inet4"
[[config]]
name = "forwarding"
[[config]]
name = "nft-stateful"
"#;

/// The receiver's per-second counts of a run whose kept seconds all
/// forward `v`: a slow first second and a short last one.
fn rx(v: f64) -> [f64; 5] {
    [400.0, v, v, v, 200.0]
}
const TX: [f64; 5] = [500.0, 1100.0, 1100.0, 1100.0, 300.0];

fn run_file(config: &str, iteration: usize, started_at: u64, v: f64) -> String {
    let header = format!(
        r#"{{"type":"run","campaign":"small","config":"{config}","traffic":"inet4","iteration":{iteration},"started_at":{started_at},"pktlab_version":"0.1.0","kernel":"6.1.0","cpu_model":"Test CPU","cpus":2,"lab":"built-in lab t","virtual_lab":true,"io":"afpacket","traffic_profile":{{"name":"inet4","src":"198.18.0.1","dst":"198.19.0.1:2000","sizes":"64","rate_pps":null,"threads":1}},"settings":{{"duration":5.0,"trim_head":1,"trim_tail":1,"interval":1.0}},"config_text":"","interrupts":"veth has no interrupts"}}"#
    );
    let mut text = header + "\n";
    let r = rx(v);
    for t in 0..5 {
        text += &format!(
            r#"{{"type":"second","t":{},"seconds":1.0,"ifaces":[{{"role":"gen","ns":"t-gen","iface":"g0","rx_packets":0,"rx_bytes":0,"rx_errors":0,"rx_dropped":0,"rx_missed_errors":0,"rx_fifo_errors":0,"tx_packets":{},"tx_bytes":0,"tx_errors":0,"tx_dropped":0}},{{"role":"dut","ns":"t-dut","iface":"d0","rx_packets":{},"rx_bytes":0,"rx_errors":0,"rx_dropped":2,"rx_missed_errors":0,"rx_fifo_errors":0,"tx_packets":0,"tx_bytes":0,"tx_errors":0,"tx_dropped":0}},{{"role":"rcv","ns":"t-rcv","iface":"r0","rx_packets":{},"rx_bytes":0,"rx_errors":0,"rx_dropped":0,"rx_missed_errors":0,"rx_fifo_errors":0,"tx_packets":0,"tx_bytes":0,"tx_errors":0,"tx_dropped":0}}],"cpus":[{{"cpu":0,"user":10.0,"system":20.0,"irq":1.0,"softirq":30.0,"steal":1.0,"idle":38.0}},{{"cpu":1,"user":0.0,"system":5.0,"irq":0.0,"softirq":90.0,"steal":0.0,"idle":5.0}}],"interrupts":[]}}"#,
            t + 1,
            TX[t],
            TX[t],
            r[t]
        );
        text += "\n";
    }
    let sent: f64 = TX.iter().sum();
    let got: f64 = r.iter().sum();
    let lost = sent - got;
    let tx = format!(
        r#"{{"backend":"afpacket","packets":{sent},"bytes":0,"seconds":5.0,"pps":820.0,"l2_bps":0.0,"l1_bps":0.0,"tx_errors":0,"interrupted":false,"threads":[],"iface":null}}"#
    );
    let rx = format!(
        r#"{{"backend":"afpacket","packets":{got},"bytes":0,"seconds":5.0,"pps":0.0,"l2_bps":0.0,"l1_bps":0.0,"flows":2000,"streams":2000,"lost":{lost},"out_of_order":0,"duplicates":0,"foreign":0,"untracked":0,"ring_drops":0,"bad_stamps":0,"latency_ns":null,"interrupted":false,"threads":[],"iface":null}}"#
    );
    text += &format!(
        r#"{{"type":"result","forwarded_pps":{v:.1},"offered_pps":1100.0,"lost":{lost},"loss_ratio":{},"requested_pps":null,"finished_at":{},"rx_samples":[{}],"tx_samples":[{}],"rx":{rx},"tx":{tx},"lab_counters":[]}}"#,
        lost / sent,
        started_at + 6,
        r.map(|x| format!("{x:.1}")).join(","),
        TX.map(|x| format!("{x:.1}")).join(",")
    );
    text + "\n"
}

const ENV: &str = r##"{"configs":[],"created_at":1700000000,"dut_uname":null,"host":{"hostname":"testhost","kernel":"6.1.0","kernel_build":"#1 SMP","os":"Debian GNU/Linux 12","cpu_model":"Test CPU","cpus":2},"interrupts":"veth has no interrupts","lab":"built-in lab t","nics":[{"ns":"t-gen","iface":"g0","driver":"veth","driver_version":null,"firmware":null,"bus_info":null}],"pktlab_version":"0.1.0","virtual_lab":true}"##;

/// forwarding runs forward 1000, 1020, 1040 pps; nft-stateful 700, 710,
/// 720; interleaved 20 s apart from T0. `skip` leaves runs out (an
/// interrupted campaign).
fn build(root: &Path, skip: &[(&str, usize)]) -> PathBuf {
    let path = root.join("small");
    let dir = ResultsDir::create(&path).unwrap();
    dir.make_runs_dir().unwrap();
    std::fs::write(path.join(CAMPAIGN_FILE), CAMPAIGN).unwrap();
    std::fs::write(path.join("env.json"), ENV).unwrap();
    for i in 1..=3usize {
        for (k, (config, base)) in [("forwarding", 980.0), ("nft-stateful", 690.0)]
            .iter()
            .enumerate()
        {
            if skip.contains(&(config, i)) {
                continue;
            }
            let step = if k == 0 { 20.0 } else { 10.0 };
            let started = T0 + 20 * (2 * (i as u64 - 1) + k as u64);
            std::fs::write(
                path.join(RUNS_DIR)
                    .join(format!("{config}.inet4.{i}.jsonl")),
                run_file(config, i, started, base + step * i as f64),
            )
            .unwrap();
        }
    }
    export(&dir, CAMPAIGN);
    path
}

/// What a fixed-rate campaign of `campaign` writes from the runs of `dir`:
/// its own files, then its exporters'.
fn export(dir: &ResultsDir, campaign: &str) {
    let plan = Plan::from_file(&CampaignFile::parse(campaign).unwrap(), 2).unwrap();
    let runs = Runs::read(&plan, dir).unwrap();
    runs.write_summaries(dir).unwrap();
    let env: EnvRecord = serde_json::from_str(ENV).unwrap();
    let finished = Finished {
        plan: &plan,
        env: &env,
        env_text: "",
        folder: dir,
        results: &runs,
        stage: Stage::End,
    };
    for e in runs_exporters(true) {
        e.take(&finished).unwrap();
    }
}

/// The folder of an rfc2544 campaign: its settings, trials and results as
/// `pktlab rfc2544` writes them, from `fixtures/html/`.
fn build_search(root: &Path) -> PathBuf {
    let path = root.join("rfc");
    ResultsDir::create(&path).unwrap();
    std::fs::write(
        path.join(CAMPAIGN_FILE),
        "name = \"rfc\"\n[lab]\nprefix = \"t\"\n[run]\niterations = 1\n[[traffic]]\nname = \"inet4\"\nsizes = [64, 1518]\n",
    )
    .unwrap();
    std::fs::write(path.join("env.json"), ENV).unwrap();
    for f in ["rfc2544-settings.json", "rfc2544.json", "trials.jsonl"] {
        std::fs::copy(Path::new(FIXTURES).join(f), path.join(f)).unwrap();
    }
    path
}

/// The page with the folder's temporary path replaced by `DIR`.
fn page_of(path: &Path) -> String {
    let page = html::render(&[Folder::load(path).unwrap()]);
    page.replace(&path.display().to_string(), "DIR")
}

/// The `<svg class="chart" ...>...</svg>` pieces of a page.
fn charts(page: &str) -> Vec<&str> {
    page.match_indices("<svg class=\"chart\"")
        .map(|(i, _)| {
            let end = page[i..].find("</svg>").unwrap();
            &page[i..i + end + 6]
        })
        .collect()
}

/// A text element of plotters' SVG, as it writes it.
fn t(text: &str) -> String {
    format!(">\n{text}\n</text>")
}

/// The text of the table row whose first cell is `first`, cells joined by `|`.
fn row(page: &str, section: &str, first: &str) -> String {
    let start = page.find(&format!("<section id=\"{section}\"")).unwrap();
    let s = &page[start..];
    let s = &s[..s.find("</section>").unwrap()];
    let at = s
        .find(&format!("<tr><td>{first}</td>"))
        .unwrap_or_else(|| panic!("no row {first} in {section}"));
    let r = &s[at..at + s[at..].find("</tr>").unwrap()];
    r.split("</td>")
        .filter_map(|c| c.rsplit_once('>').map(|x| x.1.to_string()))
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn the_page_of_a_small_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build(tmp.path(), &[]);
    let page = page_of(&path);

    // The exporter hook wrote the same page into the folder.
    let hooked = std::fs::read_to_string(path.join("report.html")).unwrap();
    assert_eq!(hooked.replace(&path.display().to_string(), "DIR"), page);

    let golden = Path::new(FIXTURES).join("small.report.html");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &page).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert!(want == page, "the page differs from {}", golden.display());

    // Self-contained: no network address, a CSP forbidding loads, the
    // charts inline.
    assert!(!page.contains("http:") && !page.contains("https:"));
    assert!(page.contains("content=\"default-src 'none'; style-src 'sha256-"));
    assert!(!page.contains("<link") && !page.contains(" src="));

    // Summary: the host, when, how long, per configuration the median and
    // the verdict. 2023-11-14 22:13:20 UTC is T0; the last run starts at
    // T0 + 100 and ends 6 s later.
    assert!(page.contains("<strong>Virtual lab:</strong>"));
    assert_eq!(
        row(&page, "summary", "When"),
        "When|2023-11-14 22:13:20 UTC to 2023-11-14 22:15:06 UTC"
    );
    assert_eq!(row(&page, "summary", "Took"), "Took|1 min 46 s");
    assert_eq!(row(&page, "summary", "Kernel"), "Kernel|6.1.0 #1 SMP");
    assert_eq!(
        row(&page, "summary", "Link speed"),
        "Link speed|1.000 Gbit/s"
    );
    assert_eq!(
        row(&page, "summary", "forwarding"),
        "forwarding|inet4|3|1,020.0|baseline"
    );
    // (710 − 1020) / 1020 = −30.39 %.
    let nft = row(&page, "summary", "nft-stateful");
    assert!(
        nft.starts_with("nft-stateful|inet4|3|710.0|−30.4 % ± "),
        "{nft}"
    );
    assert!(nft.ends_with(" % at 95 %"), "{nft}");

    // Configurations: min, median, avg, max, stddev, the 95 % CI of the
    // mean (t = 4.303 for 2 degrees of freedom): 1020 ± 4.303 × 20 / √3 =
    // 1020 ± 49.69; 710 ± 4.303 × 10 / √3 = 710 ± 24.84.
    assert_eq!(
        row(&page, "configurations", "forwarding"),
        "forwarding|3|1,000.0|1,020.0|1,020.0|1,040.0|20.0|970.3 to 1,069.7|1,000.0; 1,020.0; 1,040.0"
    );
    assert_eq!(
        row(&page, "configurations", "nft-stateful"),
        "nft-stateful|3|700.0|710.0|710.0|720.0|10.0|685.2 to 734.8|700.0; 710.0; 720.0"
    );
    // 1 Gbit/s / ((64 + 20) × 8) = 1,488,095.2 pps, far above the runs.
    assert!(page.contains("<p>Line rate: 1,488,095.2 pps.</p>"));
    assert!(page.contains("line rate 1.49M pps (above the chart)"));
    // ministat's text verbatim, escaped.
    assert!(page.contains("x forwarding.inet4.pps\n+ nft-stateful.inet4.pps\n"));
    assert!(page.contains("Difference at 95.0% confidence\n\t-310 +/- "));

    // Runs over time: second 1 is warm-up, 5 the tail; offered − forwarded.
    let start = page.find("Values of run 2").unwrap();
    let run2 = &page[start..start + page[start..].find("</table>").unwrap()];
    assert!(run2.contains("<tr><td class=\"num\">1</td><td class=\"num\">400.0</td><td class=\"num\">500.0</td><td class=\"num\">100.0</td><td class=\"num\">warm-up (left out)</td></tr>"), "{run2}");
    assert!(run2.contains("<tr><td class=\"num\">3</td><td class=\"num\">1,020.0</td><td class=\"num\">1,100.0</td><td class=\"num\">80.0</td><td class=\"num\">kept</td></tr>"));
    assert!(run2.contains("<tr><td class=\"num\">5</td><td class=\"num\">200.0</td><td class=\"num\">300.0</td><td class=\"num\">100.0</td><td class=\"num\">tail (left out)</td></tr>"));

    // DUT load: cpu0's constant seconds; irq + steal = 1 + 1.
    assert_eq!(row(&page, "load", "cpu0"), "cpu0|10.0|20.0|30.0|2.0|38.0");
    assert_eq!(row(&page, "load", "cpu1"), "cpu1|0.0|5.0|90.0|0.0|5.0");
    assert!(page.contains("<p>Interrupts not recorded: veth has no interrupts</p>"));

    // Interfaces, forwarding: the receiver got Σ(400 + 3v + 200) over
    // v = 1000, 1020, 1040 = 1800 + 9180; the generator sent 3 × 4100;
    // d0 dropped 2 a second for 15 seconds.
    let ifs = row(&page, "interfaces", "rcv");
    assert_eq!(ifs, "rcv|t-rcv/r0|10,980|0|0|0|0|0|0");
    assert_eq!(
        row(&page, "interfaces", "gen"),
        "gen|t-gen/g0|0|12,300|0|0|0|0|0"
    );
    assert_eq!(
        row(&page, "interfaces", "dut"),
        "dut|t-dut/d0|12,300|0|0|0|30|0|0"
    );

    // Charts: one strip chart, six runs over time, two CPU charts; each has
    // its title and both axis descriptions.
    let svgs = charts(&page);
    assert_eq!(svgs.len(), 9);
    for (svg, y) in [
        (svgs[0], "forwarded packets per second"),
        (svgs[1], "packets per second"),
        (svgs[7], "% of the CPU&apos;s time"),
    ] {
        assert!(svg.contains(&t(y)), "{y}");
    }
    assert!(svgs[1].contains(&t("second")) && svgs[1].contains(&t("forwarding inet4 run 1")));
    assert!(svgs[0].contains(&t("nft-stateful")) && svgs[0].contains(&t("forwarding")));
    for svg in &svgs {
        assert!(svg.contains("aria-label=\""), "a chart without a title");
        assert!(
            svg.matches("<text").count() >= 6,
            "a chart without tick labels"
        );
    }

    // Sections without data are left out.
    assert!(!page.contains("<section id=\"sweep\"") && !page.contains("<section id=\"rfc2544\""));
    assert!(!page.contains("<section id=\"missing\""));
}

#[test]
fn a_partial_folder_says_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build(tmp.path(), &[("nft-stateful", 2), ("nft-stateful", 3)]);
    std::fs::remove_file(path.join("env.json")).unwrap();
    let page = page_of(&path);
    assert!(page.contains("The campaign is incomplete: 4 of 6 runs finished"));
    assert!(page.contains("env.json is missing"));
    assert_eq!(
        row(&page, "summary", "nft-stateful"),
        "nft-stateful|inet4|1|700.0|not enough runs (ministat needs two of each)"
    );
    assert_eq!(
        row(&page, "summary", "Runs"),
        "Runs|4 of 6 finished (incomplete)"
    );
    // One run: no CI, no stddev.
    assert_eq!(
        row(&page, "configurations", "nft-stateful"),
        "nft-stateful|1|700.0|700.0|700.0|700.0|–|–|700.0"
    );
    // No summary.json at all: computed again from the run files.
    std::fs::remove_file(path.join("summary.json")).unwrap();
    let page = page_of(&path);
    assert!(page.contains("summary.json is missing: the summary was computed again"));
    assert_eq!(
        row(&page, "summary", "forwarding"),
        "forwarding|inet4|3|1,020.0|baseline"
    );
}

#[test]
fn names_are_escaped_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build(tmp.path(), &[]);
    // A summary and run files of another tool's making may hold any name:
    // no campaign file checks them here.
    let evil = r#"<i>fwd&\"q\"'"#;
    let shown = "&lt;i&gt;fwd&amp;&quot;q&quot;&#39;";
    std::fs::remove_file(path.join(CAMPAIGN_FILE)).unwrap();
    for entry in std::fs::read_dir(path.join(RUNS_DIR)).unwrap() {
        let p = entry.unwrap().path();
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, t.replace("\"forwarding\"", &format!("\"{evil}\""))).unwrap();
    }
    let s = std::fs::read_to_string(path.join("summary.json")).unwrap();
    std::fs::write(
        path.join("summary.json"),
        s.replace("\"forwarding\"", &format!("\"{evil}\"")),
    )
    .unwrap();
    let page = page_of(&path);
    assert!(!page.contains("<i>"), "a raw tag from a name");
    assert!(page.contains(&format!(
        "<tr><td>{shown}</td><td>inet4</td><td class=\"num\">3</td>"
    )));
    // In the SVG text too (plotters escapes its text).
    assert!(page.contains(&t("&lt;i&gt;fwd&amp;&quot;q&quot;&apos;")));
    assert!(page.contains(&format!("aria-label=\"{shown} inet4 run 1\"")));
}

#[test]
fn the_page_of_an_rfc2544_folder_leads_with_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build_search(tmp.path());
    let folder = Folder::load(&path).unwrap();
    let page = html::render(std::slice::from_ref(&folder));
    assert!(page
        .contains("<strong>Generator-limited RFC 2544 search (forwarding inet4 1518 B):</strong>"));
    // The answer (NDR and PDR) is the first section; no section of runs.
    let sections: Vec<&str> = page
        .match_indices("<section id=\"")
        .map(|(i, _)| {
            let s = &page[i + 13..];
            &s[..s.find('"').unwrap()]
        })
        .collect();
    assert_eq!(sections, ["rfc2544", "summary"]);
    assert_eq!(row(&page, "summary", "Campaign"), "Campaign|rfc");
    assert_eq!(row(&page, "summary", "Searches"), "Searches|2, 4 trials");
    let start = page.find("<section id=\"rfc2544\"").unwrap();
    let rfc = &page[start..start + page[start..].find("</section>").unwrap()];
    for r in [
        "<tr><td>64</td><td>NDR</td><td class=\"num\">50.000 %</td><td class=\"num\">90,000.0</td><td class=\"num\">91,000.0</td><td class=\"num\">95,000.0</td><td class=\"num\">7</td><td class=\"num\">no</td></tr>",
        "<tr><td>64</td><td>PDR 0.5 %</td><td class=\"num\">50.000 %</td><td class=\"num\">100,000.0</td><td class=\"num\">101,500.0</td><td class=\"num\">104,000.0</td>",
        "<tr><td>1518</td><td>NDR</td><td class=\"num\">50.000 %</td><td class=\"num\">40,000.0</td><td class=\"num\">40,000.0</td><td class=\"num\">–</td><td class=\"num\">3</td><td class=\"num\">yes: at least this</td></tr>",
        // Trace: seconds since the first trial, the class of the NDR goal.
        "<tr><td>lower</td><td class=\"num\">3.0</td><td class=\"num\">90,000.0</td>",
        "<tr><td>upper</td><td class=\"num\">5.0</td><td class=\"num\">104,000.0</td><td class=\"num\">104,000.0</td><td class=\"num\">10.0</td><td class=\"num\">1,040,000</td><td class=\"num\">1,035,840</td><td class=\"num\">4,160</td><td class=\"num\">12</td><td class=\"num\">0.400 %</td><td class=\"num\">no</td></tr>",
        // Frame loss: both curves.
        "<tr><td>frame-loss steps</td><td class=\"num\">108,000.0</td><td class=\"num\">10.000 %</td></tr>",
        "<tr><td>search trials</td><td class=\"num\">119,800.0</td><td class=\"num\">25.000 %</td></tr>",
        // Latency in µs.
        "<tr><td class=\"num\">91,000.0</td><td class=\"num\">2.50</td><td class=\"num\">8.00</td><td class=\"num\">20.00</td><td class=\"num\">60.00</td><td class=\"num\">120.00</td><td class=\"num\">250.00</td></tr>",
        // Back-to-back: 12.5 ms and 2.75 ms as µs.
        "<tr><td>forwarding</td><td>inet4</td><td class=\"num\">64</td><td class=\"num\">1,500.5</td><td class=\"num\">119,000.0</td><td class=\"num\">50</td><td class=\"num\">12,500.00</td><td class=\"num\">2,750.00</td></tr>",
    ] {
        assert!(rfc.contains(r), "missing {r}");
    }
    // Bounds, trace, frame loss and HDR latency charts.
    let svgs = charts(rfc);
    assert_eq!(svgs.len(), 4);
    assert!(
        svgs[0].contains(&t("NDR"))
            && svgs[0].contains(&t("PDR 0.5 %"))
            && svgs[0].contains(&t("64 B"))
    );
    assert!(
        svgs[1].contains(&t("seconds since the first trial"))
            && svgs[1].contains(&t("upper"))
            && svgs[1].contains(&t("lower"))
    );
    assert!(svgs[2].contains(&t("loss (%)")) && svgs[2].contains(&t("search trials")));
    assert!(svgs[3].contains(&t("latency (µs)")) && svgs[3].contains(&t("99.9%")));

    // The tidy CSVs of a search: its trials and latencies, no runs.
    let files = tidy::files(&folder);
    let names: Vec<&str> = files.iter().map(|f| f.0).collect();
    assert_eq!(names, ["trials.csv", "latency.csv"]);
    let trials: Vec<&str> = files[0].1.lines().collect();
    assert_eq!(trials.len(), 5);
    assert_eq!(trials[3], "forwarding,inet4,64,throughput,1700000205,104000.0,104000.0,10.0,1040000,1035840,4160,12,0.004,false,upper");
    let lat: Vec<&str> = files[1].1.lines().collect();
    assert_eq!(lat.len(), 1 + 2 * 6);
    assert_eq!(lat[0], "config,traffic,size,load_pps,percentile,latency_ns");
    assert_eq!(lat[11], "forwarding,inet4,64,91000.0,99.9,120000");
}

#[test]
fn the_tidy_csvs_of_a_bench_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build(tmp.path(), &[]);
    let files = tidy::files(&Folder::load(&path).unwrap());
    let names: Vec<&str> = files.iter().map(|f| f.0).collect();
    assert_eq!(names, ["runs.csv", "seconds.csv"]);
    let runs: Vec<&str> = files[0].1.lines().collect();
    assert_eq!(runs.len(), 7);
    assert_eq!(runs[0], "config,traffic,iteration,started_at,finished_at,duration_s,io,requested_pps,offered_pps,forwarded_pps,lost,loss_ratio,generator_limited,virtual_lab");
    // 4100 sent, 400 + 3 × 1000 + 200 received.
    assert_eq!(
        runs[1],
        format!(
            "forwarding,inet4,1,{T0},{},5.0,afpacket,,1100.0,1000.0,500,{},false,true",
            T0 + 6,
            500.0 / 4100.0
        )
    );
    let secs: Vec<&str> = files[1].1.lines().collect();
    assert_eq!(secs.len(), 1 + 6 * 5);
    assert_eq!(
        secs[0],
        "config,traffic,iteration,second,kept,offered_pps,forwarded_pps"
    );
    assert_eq!(secs[1], "forwarding,inet4,1,1,false,500.0,400.0");
    assert_eq!(secs[2], "forwarding,inet4,1,2,true,1100.0,1000.0");
    assert_eq!(secs[5], "forwarding,inet4,1,5,false,300.0,200.0");
}

#[test]
fn two_folders_make_one_comparison_page() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let before = build(a.path(), &[]);
    let after = build(b.path(), &[("forwarding", 3)]);
    let page = html::render(&[
        Folder::load(&before).unwrap(),
        Folder::load(&after).unwrap(),
    ]);
    assert!(page.contains("<section id=\"across\"><h2>Folders compared</h2>"));
    // The same runs but 1040: 1000 and 1020 against 1000, 1020, 1040.
    let start = page.find("<section id=\"across\"").unwrap();
    let across = &page[start..start + page[start..].find("</section>").unwrap()];
    assert!(across.contains("<tr><td>small</td><td class=\"num\">3</td><td class=\"num\">1,020.0</td><td class=\"num\">1,020.0</td><td class=\"num\">baseline</td></tr>"));
    assert!(across.contains("<tr><td>small</td><td class=\"num\">2</td><td class=\"num\">1,010.0</td><td class=\"num\">1,010.0</td><td class=\"num\">no difference proven at 95 %</td></tr>"));
    // Each folder whole below, ids kept unique.
    assert!(page.contains("id=\"f0-summary\"") && page.contains("id=\"f1-summary\""));
    assert_eq!(page.matches("id=\"summary\"").count(), 0);
    assert!(!page.contains("http:"));
}

#[test]
fn not_a_results_folder_and_a_damaged_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let e = Folder::load(tmp.path()).unwrap_err().to_string();
    assert!(
        e.ends_with("not a results folder: it has neither summary.json nor campaign.toml"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    let path = build(tmp.path(), &[]);
    std::fs::write(path.join("summary.json"), "{\"type\":\"summary\",\"name\":").unwrap();
    // The summary is only a cache of the run files: computed again, and
    // the page says so.
    let f = Folder::load(&path).unwrap();
    assert_eq!(f.summary().unwrap().name, "small");
    assert!(
        f.missing
            .iter()
            .any(|m| m.starts_with("summary.json is damaged (")
                && m.ends_with("): the summary was computed again from the run files.")),
        "{:?}",
        f.missing
    );
}

/// The `drops` of a result line: `places` as (side, netns, iface, layer,
/// reason, location, frames).
fn drops_json(
    lost: u64,
    unexplained: u64,
    traced: bool,
    places: &[(&str, &str, &str, &str, &str, &str, u64)],
) -> String {
    let side = |s: &str| -> u64 { places.iter().filter(|p| p.0 == s).map(|p| p.6).sum() };
    let list: Vec<String> = places
        .iter()
        .map(|(side, ns, iface, layer, reason, location, frames)| {
            format!(
                r#"{{"side":"{side}","host":"local","netns":"{ns}","iface":"{iface}","layer":"{layer}","reason":"{reason}","location":"{location}","frames":{frames}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"lost":{lost},"dut":{},"tester":{},"unexplained":{unexplained},"places":[{}],"traced":{traced},"tester_limited":false}}"#,
        side("dut"),
        side("tester"),
        list.join(",")
    )
}

/// Every row of section `id`'s tables, cells joined by `|`.
fn section_rows(page: &str, id: &str) -> Vec<String> {
    let start = page.find(&format!("<section id=\"{id}\"")).unwrap();
    let s = &page[start..start + page[start..].find("</section>").unwrap()];
    s.split("<tr>")
        .skip(1)
        .filter(|r| r.contains("<td"))
        .map(|r| {
            let r = &r[..r.find("</tr>").unwrap()];
            r.split("</td>")
                .filter_map(|c| c.rsplit_once('>').map(|x| x.1.to_string()))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn where_the_lost_frames_went_per_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build(tmp.path(), &[]);
    // No run recorded its drops yet: no section.
    let page = html::render(&[Folder::load(&path).unwrap()]);
    assert!(!page.contains("<section id=\"drops\""));
    let nft = |n| {
        (
            "dut",
            "t-dut",
            "d0",
            "kernel",
            "NETFILTER_DROP",
            "nft_do_chain",
            n,
        )
    };
    let drops = [
        ("forwarding", 1, drops_json(0, 0, true, &[])),
        ("forwarding", 2, drops_json(0, 0, true, &[])),
        ("forwarding", 3, drops_json(0, 0, true, &[])),
        ("nft-stateful", 1, drops_json(2000, 0, true, &[nft(2000)])),
        (
            "nft-stateful",
            2,
            drops_json(
                2100,
                0,
                true,
                &[
                    nft(2000),
                    ("tester", "t-rcv", "r0", "ring", "ring_drops", "-", 100),
                ],
            ),
        ),
        (
            "nft-stateful",
            3,
            drops_json(
                2000,
                100,
                false,
                &[("dut", "t-dut", "d0", "interface", "rx_dropped", "-", 1900)],
            ),
        ),
    ];
    for (config, i, d) in &drops {
        let file = path
            .join(RUNS_DIR)
            .join(format!("{config}.inet4.{i}.jsonl"));
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text.replace(
            r#""lab_counters":[]}"#,
            &format!(r#""lab_counters":[],"drops":{d}}}"#),
        );
        std::fs::write(&file, text).unwrap();
    }
    let page = html::render(&[Folder::load(&path).unwrap()]);
    assert!(
        page.contains("<li><a href=\"#drops\">Where the lost frames went</a></li>"),
        "no entry in the contents"
    );
    // nft-stateful: 2000 + 2100 + 2000 = 6100 lost; the DUT's 2000 + 2000
    // + 1900 = 5900 (96.7 %), the tester's 100 (1.64 %), 100 unexplained;
    // one run from counters only. Its places: nft 4000 (65.6 %), d0's
    // rx_dropped 1900 (31.1 %), the ring 100.
    assert_eq!(
        section_rows(&page, "drops"),
        [
            "forwarding|inet4|3|0|0|0|0|0|0",
            "nft-stateful|inet4|3|6,100|5,900 (97%)|100 (1.6%)|100 (1.6%)|1|0",
            "DUT|t-dut|d0|kernel|NETFILTER_DROP|nft_do_chain|4,000 (66%)",
            "DUT|t-dut|d0|interface|rx_dropped|-|1,900 (31%)",
            "tester|t-rcv|r0|ring|ring_drops|-|100 (1.6%)",
        ]
    );
    assert!(page.contains("<h3>nft-stateful · inet4</h3>"));

    // Two trials of a search: 5000 lost, nft 4800 (96 %), 200 unexplained
    // (4 %); the second trial's tracer missed 17 kernel drop events.
    let search = build_search(tmp.path());
    let trial = |lost: u64, d: &str| {
        format!(
            r#"{{"config":"police","traffic":"inet4","size":"64","test":"throughput","iteration":1,"intended_pps":10000.0,"offered_pps":10000.0,"duration_s":1.0,"tx":10000,"rx":{},"lost":{lost},"late":0,"loss_ratio":0.0,"generator_limited":false,"max_pps":20000.0,"started_at":1,"drops":{d}}}"#,
            10_000 - lost
        )
    };
    let trials = format!(
        "{}\n{}\n",
        trial(3000, &drops_json(3000, 0, true, &[nft(3000)])),
        trial(
            2000,
            &drops_json(2000, 200, true, &[nft(1800)])
                .replace(r#""traced":true"#, r#""traced":true,"tracer_missed":17"#)
        )
    );
    std::fs::write(search.join("trials.jsonl"), trials).unwrap();
    let page = html::render(&[Folder::load(&search).unwrap()]);
    assert_eq!(
        section_rows(&page, "drops"),
        [
            "police|inet4|2|5,000|4,800 (96%)|0 (0.00%)|200 (4.0%)|0|17",
            "DUT|t-dut|d0|kernel|NETFILTER_DROP|nft_do_chain|4,800 (96%)",
        ]
    );
    assert!(page.contains("<h3>RFC 2544 trials</h3>"));
}

#[test]
fn a_tester_limited_search_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let path = build_search(tmp.path());
    let text = std::fs::read_to_string(Path::new(FIXTURES).join("rfc2544.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["throughput"][0]["tester_limited"] = true.into();
    std::fs::write(path.join("rfc2544.json"), v.to_string()).unwrap();
    let page = html::render(&[Folder::load(&path).unwrap()]);
    assert!(
        page.contains("<strong>Tester-limited RFC 2544 search (forwarding inet4 64 B):</strong>"),
        "no tester-limited warning"
    );
    // The generator-limited search (1518 B) is still said apart.
    assert!(page
        .contains("<strong>Generator-limited RFC 2544 search (forwarding inet4 1518 B):</strong>"));
    // Without the flag (files written before it): no such warning.
    std::fs::copy(
        Path::new(FIXTURES).join("rfc2544.json"),
        path.join("rfc2544.json"),
    )
    .unwrap();
    let page = html::render(&[Folder::load(&path).unwrap()]);
    assert!(!page.contains("Tester-limited"));
}
