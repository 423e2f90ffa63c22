//! `pktlab ministat`, run as a program: the FreeBSD router-tuning wiki's tables reproduced byte for byte,
//! Debian's ministat as a peer on random data, plot edge cases worked out by
//! hand, errors and options.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

fn pktlab() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pktlab"));
    cmd.arg("ministat");
    cmd
}

/// Runs `cmd` in `dir` with `args`, stdin from `input`.
fn run(mut cmd: Command, dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ours(dir: &Path, args: &[&str]) -> Output {
    run(pktlab(), dir, args, "")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Writes one value per line into `dir/name`.
fn write_set(dir: &Path, name: &str, values: &[f64]) {
    let body: String = values.iter().map(|v| format!("{v}\n")).collect();
    fs::write(dir.join(name), body).unwrap();
}

fn data_file(path: &str) -> String {
    fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ministat")
            .join(path),
    )
    .unwrap()
}

// Five points per data set, rebuilt from the N, Min, Max, Median, Avg and
// Stddev the FreeBSD router-tuning wiki prints: with N = 5, Min, Median and Max are three of the
// points; the other two, b <= Median <= d, must add up to 5 * Avg minus those
// three and give the printed Stddev. Searching b in steps of 0.5 finds exactly
// one pair for every set, e.g. for "redirect=1": b + d = 11151253 - 2199966.5
// - 2210097 - 2309062 = 4432127.5, and b = 2201553.5, d = 2230574 give
// Stddev 45711.484.
#[allow(clippy::type_complexity)]
const SEED_002: &[(&str, &[(&str, [f64; 5])])] = &[
    (
        "redirect",
        &[
            (
                "net.inet.ip.redirect=1 (default)",
                [2199966.5, 2201553.5, 2210097.0, 2230574.0, 2309062.0],
            ),
            (
                "net.inet.ip.redirect=0",
                [8211578.0, 8214640.5, 8244041.0, 8245451.0, 8259515.5],
            ),
        ],
    ),
    (
        "rx-queues",
        &[
            (
                "8 RX queues (default)",
                [8160234.0, 8199632.0, 8230285.0, 8257276.0, 8261012.0],
            ),
            (
                "16 RX queues (= all cores on this setup)",
                [10787172.0, 10799389.0, 10820346.0, 10831262.0, 10913225.0],
            ),
            (
                "32 RX queues (= all threads on this setup)",
                [19034716.0, 19052505.0, 19107114.0, 19117916.0, 19176514.0],
            ),
        ],
    ),
    (
        "ht-intr-32",
        &[
            (
                "machdep.hyperthreading_intr_allowed=0 (default) and hw.cxgbe.nXxq=32",
                [19028337.0, 19090782.0, 19099721.0, 19107406.0, 19126428.0],
            ),
            (
                "machdep.hyperthreading_intr_allowed=1 and hw.cxgbe.nXxq=32",
                [24396932.0, 24484338.0, 24494912.0, 24499070.0, 24508797.0],
            ),
        ],
    ),
    (
        "ht-intr-16",
        &[
            (
                "machdep.hyperthreading_intr_allowed=0 (default) and hw.cxgbe.nXxq=16",
                [7586270.5, 7595579.0, 7616992.0, 8507746.0, 8644626.0],
            ),
            (
                "machdep.hyperthreading_intr_allowed=1 and hw.cxgbe.nXxq=16",
                [8583402.0, 8681405.5, 8689267.0, 8692833.0, 8701804.0],
            ),
        ],
    ),
    (
        "cxgbe-caps",
        &[
            (
                "hw.cxgbe.toecaps|rdmacaps|iscsicaps|fcoecaps_allowed=1 (default)",
                [12747220.0, 12770730.0, 12779478.0, 12797933.0, 12830462.0],
            ),
            (
                "hw.cxgbe.toecaps|rdmacaps|iscsicaps|fcoecaps_allowed=0",
                [24485838.0, 24485840.0, 24491950.0, 24504882.0, 24535582.0],
            ),
        ],
    ),
    (
        "flow-control",
        &[
            (
                "hw.cxgbe.pause_settings=0 (default)",
                [24440254.0, 24480964.0, 24481016.0, 24499872.0, 24536843.0],
            ),
            (
                "hw.cxgbe.pause_settings=1",
                [24477223.0, 24486890.0, 24490633.0, 24497126.0, 24513195.0],
            ),
        ],
    ),
    (
        "lro-tso",
        &[
            (
                "enabled (default)",
                [27463046.0, 27543454.0, 27568318.0, 27696886.0, 27724202.0],
            ),
            (
                "disabled (-tso4 -tso6 -lro -vlanhwtso)",
                [32355798.0, 32378720.0, 32416758.0, 32457338.0, 32463268.0],
            ),
        ],
    ),
];

#[test]
fn seed_002_outputs_are_reproduced_byte_for_byte() {
    for (block, sets) in SEED_002 {
        let dir = tempfile::tempdir().unwrap();
        // Shuffle the input order: ministat sorts, and the sums here are exact.
        for (name, values) in sets.iter() {
            let mut shuffled = values.to_vec();
            shuffled.rotate_left(2);
            write_set(dir.path(), name, &shuffled);
        }
        let names: Vec<&str> = sets.iter().map(|(name, _)| *name).collect();
        let mut args = vec!["-s"];
        args.extend(&names);
        let out = ours(dir.path(), &args);
        assert!(out.status.success(), "{block}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        // The seed's web page shows the tab before the comparison lines as 8 spaces.
        assert!(stdout
            .lines()
            .all(|l| !l.contains('\t') || l.starts_with('\t')));
        let expected = data_file(&format!("freebsd-router-wiki/{block}.txt"));
        assert_eq!(stdout.replace('\t', "        "), expected, "block {block}");
    }
}

#[test]
fn seed_002_redirect_difference_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (_, sets) = SEED_002[0];
    for (name, values) in sets.iter() {
        write_set(dir.path(), name, values);
    }
    let out = ours(dir.path(), &[sets[0].0, sets[1].0]);
    let stdout = text(&out.stdout);
    let tail: Vec<&str> = stdout.lines().rev().take(3).collect();
    assert_eq!(
        tail,
        [
            "\t(Student's t, pooled s = 35554.9)",
            "\t269.243% +/- 7.86461%",
            "\t6.00479e+06 +/- 51854.8",
        ]
    );
}

/// Debian's `ministat` package (FreeBSD's ministat of 2015).
fn debian_ministat() -> Command {
    let path = Path::new("/usr/bin/ministat");
    assert!(
        path.exists(),
        "Debian's ministat is missing: run scripts/deps (apt install ministat)"
    );
    Command::new(path)
}

/// Debian prints the percent error as `error / avg(baseline)`, modern
/// ministat accounts for the ratio of the means: that one term may differ.
fn without_percent_error(output: &str) -> String {
    output
        .lines()
        .map(
            |line| match line.strip_prefix('\t').and_then(|l| l.split_once("% +/- ")) {
                Some((percent, _)) if line.ends_with('%') => {
                    format!("\t{percent}% +/- (percent error)")
                }
                _ => line.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn random_data_matches_debian_ministat() {
    let mut rng = Pcg64::seed_from_u64(0x6d69_6e69_7374_6174);
    let mut compared = 0;
    let mut differences = 0;
    let mut percent_lines = 0;
    for case in 0..60 {
        let dir = tempfile::tempdir().unwrap();
        let sets = rng.random_range(1..=7usize);
        let decimals = rng.random_range(0..=3i32);
        let two_columns = case % 5 == 4;
        let mut names = Vec::new();
        for k in 0..sets {
            // Odd N, means that sometimes differ, a spread of a few percent
            // (large enough that Debian's one-pass variance is exact to 8 digits).
            let n = 2 * rng.random_range(1..=20usize) + 1;
            let mean = 1.0e6 * (1.0 + 0.02 * rng.random_range(0..4) as f64 * k as f64);
            let spread = mean * rng.random_range(0.005..0.05);
            let scale = 10f64.powi(decimals);
            let values: Vec<f64> = (0..n)
                .map(|_| ((mean + rng.random_range(-spread..spread)) * scale).round() / scale)
                .collect();
            let name = format!("set{k}.pps");
            let body: String = if two_columns {
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("run{i},{v}\n"))
                    .collect()
            } else {
                values.iter().map(|v| format!("{v}\n")).collect()
            };
            fs::write(dir.path().join(&name), body).unwrap();
            names.push(name);
        }
        let width = rng.random_range(20..=150u32).to_string();
        let confidence = ["80", "90", "95", "98", "99", "99.5"][rng.random_range(0..6usize)];
        let mut args: Vec<&str> = vec!["-w", &width, "-c", confidence];
        if rng.random_bool(0.5) {
            args.push("-s");
        }
        match case % 7 {
            5 => args.push("-A"),
            6 => args.push("-n"),
            _ => {}
        }
        if two_columns {
            args.extend(["-C", "2", "-d", ","]);
        }
        args.extend(names.iter().map(String::as_str));

        let theirs = run(debian_ministat(), dir.path(), &args, "");
        let mine = ours(dir.path(), &args);
        assert!(
            theirs.status.success(),
            "debian ministat {args:?}: {}",
            text(&theirs.stderr)
        );
        assert!(
            mine.status.success(),
            "pktlab ministat {args:?}: {}",
            text(&mine.stderr)
        );
        let (theirs, mine) = (text(&theirs.stdout), text(&mine.stdout));
        assert_eq!(
            without_percent_error(&mine),
            without_percent_error(&theirs),
            "case {case}: ministat {}",
            args.join(" ")
        );
        compared += 1;
        differences += mine.matches("Difference at").count();
        percent_lines += mine.lines().filter(|l| l.ends_with('%')).count();
    }
    eprintln!("compared {compared} cases, {differences} Difference blocks");
    assert_eq!(compared, 60);
    // The cases must exercise the comparison blocks too.
    assert!(differences >= 20, "only {differences} Difference blocks");
    assert_eq!(percent_lines, differences);
}

#[test]
fn errors_print_ministats_lines_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("bad.txt"), "1\n2\n# comment\n3x\n4\n").unwrap();
    fs::write(dir.path().join("few.txt"), "1\n\n2\n").unwrap();
    fs::write(dir.path().join("ok.txt"), "1\n2\n3\n").unwrap();

    for (args, stderr) in [
        (
            vec!["bad.txt"],
            "ministat: Invalid data on line 4 in bad.txt\n",
        ),
        (
            vec!["ok.txt", "few.txt"],
            "Dataset few.txt must contain at least 3 data points\n",
        ),
    ] {
        let mine = ours(dir.path(), &args);
        let theirs = run(debian_ministat(), dir.path(), &args, "");
        assert_eq!(mine.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&mine.stderr), stderr);
        assert_eq!(text(&theirs.stderr), stderr, "Debian's ministat agrees");
        assert_eq!(text(&mine.stdout), "");
    }

    // A missing file is reported before any file is read.
    let mine = ours(dir.path(), &["bad.txt", "missing.txt"]);
    assert_eq!(mine.status.code(), Some(2));
    assert_eq!(
        text(&mine.stderr),
        "ministat: Cannot open missing.txt: No such file or directory\n"
    );
}

#[test]
fn bad_options_print_ministats_complaint_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ok.txt"), "1\n2\n3\n").unwrap();
    let eight: Vec<String> = (0..8).map(|_| "ok.txt".to_string()).collect();
    let mut too_many = vec![];
    too_many.extend(eight.iter().map(String::as_str));
    for args in [
        vec!["-c", "97", "ok.txt"],
        vec!["-c", "high", "ok.txt"],
        vec!["-w", "-1", "ok.txt"],
        vec!["-w", "7x", "ok.txt"],
        vec!["-C", "0", "ok.txt"],
        vec!["-C", "two", "ok.txt"],
        vec!["-d", "", "ok.txt"],
        too_many,
    ] {
        let mine = ours(dir.path(), &args);
        let theirs = run(debian_ministat(), dir.path(), &args, "");
        assert_eq!(mine.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&mine.stdout), "");
        let (mine, theirs) = (text(&mine.stderr), text(&theirs.stderr));
        assert_eq!(mine.lines().next(), theirs.lines().next(), "{args:?}");
        assert!(
            mine.lines()
                .nth(1)
                .unwrap()
                .starts_with("Usage: pktlab ministat "),
            "{mine}"
        );
    }
    // Widths we cannot draw are refused too (ministat's behaviour is undefined there).
    let out = ours(dir.path(), &["-w", "1", "ok.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("Invalid width 1, must be 2 to 10000.\n"));
}

// a = 0 0 5 10 10: avg 5, stddev 5; b = 0 5 5 5 10: avg 5, stddev 3.5355339.
// With -w 11 the column of v is trunc(v + 0.5).
const A: &str = "10\n0\n5\n10\n0\n";
const B: &str = "5\n0\n5\n10\n5\n";
const TABLE_AB: &str = "    N           Min           Max        Median           Avg        Stddev
x   5             0            10             5             5             5
+   5             0            10             5             5     3.5355339
No difference proven at 95.0% confidence
";

fn a_and_b() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a"), A).unwrap();
    fs::write(dir.path().join("b"), B).unwrap();
    dir
}

#[test]
fn stacked_ties_and_or_ed_symbols() {
    let dir = a_and_b();
    let out = ours(dir.path(), &["-w", "11", "a", "b"]);
    let expected = format!(
        "x a\n+ b\n+-----------+\n|     +     |\n|x    +    x|\n|*    *    *|\n|||___A___|||\n+-----------+\n{TABLE_AB}"
    );
    assert_eq!(text(&out.stdout), expected);
}

#[test]
fn separate_bars_with_s() {
    let dir = a_and_b();
    let out = ours(dir.path(), &["-s", "-w", "11", "a", "b"]);
    let expected = format!(
        "x a\n+ b\n+-----------+\n|     +     |\n|x    +    x|\n|*    *    *|\n||____A____||\n| |___A___| |\n+-----------+\n{TABLE_AB}"
    );
    assert_eq!(text(&out.stdout), expected);
}

#[test]
fn narrow_and_wide_widths() {
    let dir = a_and_b();
    // -w 2, the smallest plot: bounds 0..10 in two columns 10 units wide, so
    // the column of v is trunc((v + 5) / 10): 0 -> 0, 5 and 10 -> 1.
    // a puts 2 points in column 0 and 3 in column 1, b 1 and 4: b's rows 1-3
    // of column 1 are x|+ = *, its 4th point is a lone +. Both bars are
    // |A: avg -/+ stddev in columns 0 and 1, median and avg in column 1.
    let out = ours(dir.path(), &["-w", "2", "a", "b"]);
    let stdout = text(&out.stdout);
    let plot: Vec<&str> = stdout.lines().skip(2).take(7).collect();
    assert_eq!(
        plot,
        ["+--+", "| +|", "| *|", "|x*|", "|**|", "||A|", "+--+"]
    );

    // Wide plots against Debian's ministat, which has the same plot code.
    for width in ["120", "200"] {
        let mine = ours(dir.path(), &["-w", width, "a", "b"]);
        let theirs = run(debian_ministat(), dir.path(), &["-w", width, "a", "b"], "");
        assert_eq!(text(&mine.stdout), text(&theirs.stdout));
        assert_eq!(
            text(&mine.stdout).lines().nth(2).unwrap().len(),
            width.parse::<usize>().unwrap() + 2
        );
    }
}

#[test]
fn zero_span_prints_no_plot() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("same"), "42\n42\n42\n").unwrap();
    let out = ours(dir.path(), &["same", "same"]);
    assert_eq!(
        text(&out.stdout),
        "x same\n+ same\n[no plot, span is zero width]\n    N           Min           Max        Median           Avg        Stddev\n\
         x   3            42            42            42            42             0\n\
         +   3            42            42            42            42             0\n\
         No difference proven at 95.0% confidence\n"
    );
}

#[test]
fn stdin_when_no_file_or_dash() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(pktlab(), dir.path(), &["-n"], "3\n1\n2\n");
    assert_eq!(
        text(&out.stdout),
        "x <stdin>\n    N           Min           Max        Median           Avg        Stddev\n\
         x   3             1             3             2             2             1\n"
    );
    fs::write(dir.path().join("f"), "4\n5\n6\n").unwrap();
    let out = run(pktlab(), dir.path(), &["-n", "f", "-"], "3\n1\n2\n");
    assert!(
        text(&out.stdout).starts_with("x f\n+ -\n"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn quiet_statistics_only_plot_only_and_no_plot() {
    let dir = a_and_b();
    let out = ours(dir.path(), &["-n", "-q", "a", "b"]);
    assert_eq!(
        text(&out.stdout),
        "x   5             0            10             5             5             5\n\
         +   5             0            10             5             5     3.5355339\n"
    );
    let out = ours(dir.path(), &["-A", "a", "b"]);
    assert_eq!(text(&out.stdout), format!("x a\n+ b\n{TABLE_AB}"));
    let out = ours(dir.path(), &["-P", "-w", "11", "a"]);
    assert_eq!(
        text(&out.stdout),
        "x a\n+-----------+\n|x         x|\n|x    x    x|\n||____A____||\n+-----------+\n"
    );
}

#[test]
fn json_has_the_statistics_and_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let (_, sets) = SEED_002[0];
    for (name, values) in sets.iter() {
        write_set(dir.path(), name, values);
    }
    let out = ours(dir.path(), &["--json", "-c", "99", sets[0].0, sets[1].0]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["confidence"], 99.0);
    let set = &json["datasets"][1];
    assert_eq!(set["name"], sets[1].0);
    assert_eq!(set["symbol"], "+");
    assert_eq!(set["n"], 5);
    assert_eq!(set["min"], 8211578.0);
    assert_eq!(set["median"], 8244041.0);
    assert_eq!(set["avg"], 8235045.2);
    assert!((set["stddev"].as_f64().unwrap() - 20946.73).abs() < 0.005);
    let c = &json["comparisons"][0];
    assert_eq!(c["baseline"], sets[0].0);
    assert_eq!(c["degrees_of_freedom"], 8);
    assert_eq!(c["t"], 3.355);
    assert_eq!(c["significant"], true);
    assert!((c["difference"].as_f64().unwrap() - 6004794.6).abs() < 1e-6);
    assert!((c["pooled_s"].as_f64().unwrap() - 35554.9).abs() < 0.05);
    // 99%: error and percent error are 3.355 / 2.306 times the 95% figures.
    assert!((c["error"].as_f64().unwrap() - 51854.8 * 3.355 / 2.306).abs() < 0.2);
    assert!((c["percent"].as_f64().unwrap() - 269.243).abs() < 0.001);
    assert!((c["percent_error"].as_f64().unwrap() - 7.86461 * 3.355 / 2.306).abs() < 1e-4);

    let out = ours(dir.path(), &["--json", "-n", sets[0].0, sets[1].0]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["comparisons"], serde_json::json!([]));
}

#[test]
fn terminal_width_comes_from_columns() {
    // ministat sizes the plot to the terminal only when stdout is one: run
    // under script(1) to get a pseudo-terminal.
    let dir = a_and_b();
    let command = format!("COLUMNS=40 {} ministat a b", env!("CARGO_BIN_EXE_pktlab"));
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir.path())
        .output()
        .expect("script(1) from util-linux");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let border = text(&out.stdout)
        .lines()
        .nth(2)
        .unwrap()
        .trim_end_matches('\r')
        .to_string();
    assert_eq!(border, format!("+{}+", "-".repeat(40)));

    let out = ours(dir.path(), &["a", "b"]);
    assert_eq!(
        text(&out.stdout).lines().nth(2).unwrap().len(),
        76,
        "74 when not a terminal"
    );
}
