//! `pktlab pktgen-log` on pkt-gen logs written for these tests
//! (tests/data/pktgen/), whose expected values are worked out by hand from
//! the lines listed in the comments, and on real BSDRP result sets
//! (tests/data/netbenches/) against the `.pps` values BSDRP published.

use std::path::PathBuf;
use std::process::{Command, Output};

fn log(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pktgen")
        .join(name)
}

fn pktgen_log(args: &[&str], logs: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pktlab"))
        .arg("pktgen-log")
        .args(args)
        .args(logs.iter().map(|name| log(name)))
        .output()
        .expect("run pktlab")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

// bench.forwarding.PKTGEN.1.receiver (pkt-gen -N -f rx): 60 lines, 10 of
// header, 45 per-second lines (11-58, with receiver_body lines among them),
// 2 of summary. BSDRP's method keeps lines 16-50 of the file; their rate
// lines that start with 1-9 are lines 17-34 and 36-50 (line 35 is 0 pps):
//   104312 512077 986410 1310244 1451870 1480112 1486230 1487754 1488003
//   1487912 1487650 1201000 1488105 1488093 1488121 1487998 1488140 1488077
//   1488112 1488089 1488131 1488064 1488119 1488102 1488095 1488088 1488126
//   1488071 1488110 1488099 1488083 1487000 1488101
// 33 values; 16 are below 1488077 (the first 12 above, 1487998, 1487000,
// 1488064, 1488071) and 16 above: 1488077 is the median.
const RECEIVER: &str = "bench.forwarding.PKTGEN.1.receiver";
const RECEIVER_VALUE: &str = "1488077";

// bench.forwarding.PKTGEN.1.sender (pkt-gen -f tx, unit prefixes): 45 lines.
// Lines 16-35 are 20 rates: 1 × 998.421 K, 1.485 M, 1.486 M, 4 × 1.487 M,
// 10 × 1.488 M, 3 × 1.489 M; the 10th and 11th sorted are both 1.488 M.
const SENDER: &str = "bench.forwarding.PKTGEN.1.sender";
const SENDER_VALUE: &str = "1488000";

// bench.short.PKTGEN.1.receiver: 34 lines; lines 16-24 hold 711993 712460
// 712275 712345 713001 712900 0 712001 712388: eight non-zero, sorted
// 711993 712001 712275 [712345 712388] 712460 712900 713001, an even count,
// so the median is (712345 + 712388) / 2 = 712366.5.
const SHORT: &str = "bench.short.PKTGEN.1.receiver";
const SHORT_VALUE: &str = "712366.5";

// bench.down.PKTGEN.1.receiver: 84 lines, every rate 0 pps.
const DOWN: &str = "bench.down.PKTGEN.1.receiver";

// The same logs with --trim samples (15 and 10 per-second samples dropped,
// then the zero samples):
// - RECEIVER: samples 16-35 are 1488105 1488093 1488121 1487998 1488140
//   1488077 0 1488112 1488089 1488131 1488064 1488119 1488102 1488095
//   1488088 1488126 1488071 1488110 1488099 1488083; the 19 non-zero sorted
//   put 1488099 10th, the median.
// - SENDER: samples 16-22 are 1.488 M, 1.487 M, 998.421 K, 1.488 M, 1.486 M,
//   1.489 M, 1.485 M; sorted 998421 1485000 1486000 [1487000] 1488000 1488000
//   1489000.
// - SHORT: samples 16-20 are 712345 713001 712900 0 712001: four non-zero,
//   (712345 + 712900) / 2 = 712622.5.
const RECEIVER_BY_SAMPLES: &str = "1488099";
const SENDER_BY_SAMPLES: &str = "1487000";
const SHORT_BY_SAMPLES: &str = "712622.5";

#[test]
fn one_receiver_log_prints_its_median() {
    let out = pktgen_log(&[], &[RECEIVER]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{RECEIVER_VALUE}\n"));
    assert_eq!(stderr(&out), "");
}

#[test]
fn unit_prefixed_sender_log() {
    let out = pktgen_log(&[], &[SENDER]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{SENDER_VALUE}\n"));
}

#[test]
fn even_value_count_takes_the_mean_of_the_middle_two() {
    let out = pktgen_log(&[], &[SHORT]);
    assert_eq!(stdout(&out), format!("{SHORT_VALUE}\n"));
}

#[test]
fn per_sample_trim_is_an_option() {
    for (log, value) in [
        (RECEIVER, RECEIVER_BY_SAMPLES),
        (SENDER, SENDER_BY_SAMPLES),
        (SHORT, SHORT_BY_SAMPLES),
    ] {
        let out = pktgen_log(&["--trim", "samples"], &[log]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), format!("{value}\n"), "{log}");
    }
    let out = pktgen_log(&["--trim", "seconds"], &[RECEIVER]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn several_logs_print_one_line_each_in_order() {
    let out = pktgen_log(&[], &[SHORT, RECEIVER, SENDER]);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = format!(
        "{} {SHORT_VALUE}\n{} {RECEIVER_VALUE}\n{} {SENDER_VALUE}\n",
        log(SHORT).display(),
        log(RECEIVER).display(),
        log(SENDER).display()
    );
    assert_eq!(stdout(&out), expected);
}

#[test]
fn a_log_without_traffic_warns_and_prints_no_value() {
    let out = pktgen_log(&[], &[RECEIVER, DOWN, SHORT]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            format!("{} {RECEIVER_VALUE}", log(RECEIVER).display()),
            format!("{} {SHORT_VALUE}", log(SHORT).display()),
        ]
    );
    let warning = stderr(&out);
    assert_eq!(
        warning,
        format!(
            "pktlab: warning: {}: 0 non-zero rate line(s) left of 84 lines \
             (ministat needs 3), first 15 and last 10 lines dropped\n",
            log(DOWN).display()
        )
    );

    let out = pktgen_log(&["--trim", "samples"], &[DOWN]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("no non-zero pps sample left (40 per-second samples"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn trimming_can_be_changed() {
    // No trimming: every non-zero rate line of the short log counts, 25 of
    // them. Sorted: 331204 508113 698411 710233 711870 711934 711950 711993
    // 712001 712003 712050 712120 [712199] 712207 712275 712340 712345 712388
    // 712410 712460 712565 712612 712811 712900 713001: the 13th.
    for unit in ["lines", "samples"] {
        let out = pktgen_log(
            &["--trim", unit, "--trim-head", "0", "--trim-tail", "0"],
            &[SHORT],
        );
        assert_eq!(stdout(&out), "712199\n", "{unit}");
    }

    // Line 17 (104312) dropped too: 32 values, the 16th and 17th sorted are
    // 1488077 and 1488083.
    let out = pktgen_log(&["--trim-head", "17"], &[RECEIVER]);
    assert_eq!(stdout(&out), "1488080\n");

    // Line 51 (1488097) kept too: 34 values, same two in the middle.
    let out = pktgen_log(&["--trim-tail", "9"], &[RECEIVER]);
    assert_eq!(stdout(&out), "1488080\n");

    // Per sample: one more warm-up sample (15 -> 14) brings in 1201000: 20
    // values, median (1488095 + 1488099) / 2.
    let out = pktgen_log(&["--trim", "samples", "--trim-head", "14"], &[RECEIVER]);
    assert_eq!(stdout(&out), "1488097\n");

    // Trimming everything away leaves nothing.
    let out = pktgen_log(&["--trim-head", "50", "--trim-tail", "10"], &[RECEIVER]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("warning"));
}

#[test]
fn all_prints_every_per_second_value() {
    let out = pktgen_log(&["--all"], &[SENDER]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let values: Vec<&str> = text.lines().collect();
    assert_eq!(values.len(), 32);
    assert_eq!(values[0], "120411");
    assert_eq!(values[1], "811200");
    assert_eq!(values[2], "1402000");
    assert_eq!(values[17], "998421");
    assert_eq!(values[30], "1301000");
    assert_eq!(values[31], "0");

    let out = pktgen_log(&["--all"], &[RECEIVER, SHORT]);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 45 + 30);
    let receiver = log(RECEIVER).display().to_string();
    assert_eq!(text.lines().nth(3).unwrap(), format!("{receiver} 104312"));
    assert_eq!(text.lines().nth(21).unwrap(), format!("{receiver} 0"));
}

#[test]
fn missing_log_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_pktlab"))
        .args(["pktgen-log", "/nonexistent/bench.x.receiver"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "pktlab: cannot read /nonexistent/bench.x.receiver: No such file or directory\n"
    );
}

#[test]
fn a_file_is_required() {
    let out = Command::new(env!("CARGO_BIN_EXE_pktlab"))
        .arg("pktgen-log")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Every published `.pps` value of the netbenches sets, one line per
/// receiver log in `ls` order, equals ours exactly.
#[test]
fn netbenches_published_values_are_reproduced() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/netbenches");
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    sets.sort();
    assert_eq!(sets.len(), 5, "{sets:?}");
    let mut values_checked = 0;
    let mut samples_disagree = 0;
    for set in &sets {
        let pps: Vec<PathBuf> = std::fs::read_dir(set)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "pps"))
            .collect();
        assert_eq!(pps.len(), 1, "{set:?}");
        let config = pps[0].file_stem().unwrap().to_str().unwrap();
        let published = std::fs::read_to_string(&pps[0]).unwrap();
        let mut receivers: Vec<PathBuf> = std::fs::read_dir(set.join("RAW"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_str().unwrap();
                name.starts_with(&format!("bench.{config}.")) && name.ends_with(".receiver")
            })
            .collect();
        receivers.sort();
        assert_eq!(receivers.len(), published.lines().count(), "{set:?}");

        for (receiver, expected) in receivers.iter().zip(published.lines()) {
            let out = Command::new(env!("CARGO_BIN_EXE_pktlab"))
                .arg("pktgen-log")
                .arg(receiver)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(stdout(&out), format!("{expected}\n"), "{receiver:?}");
            values_checked += 1;

            let by_samples = Command::new(env!("CARGO_BIN_EXE_pktlab"))
                .args(["pktgen-log", "--trim", "samples"])
                .arg(receiver)
                .output()
                .unwrap();
            if stdout(&by_samples) != format!("{expected}\n") {
                samples_disagree += 1;
            }
        }
    }
    assert_eq!(values_checked, 25);
    // The per-sample trim is a different method: it must not reproduce them.
    assert!(samples_disagree >= 20, "{samples_disagree} of 25 differ");
}
