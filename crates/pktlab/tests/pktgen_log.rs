//! `pktlab pktgen-log` on pkt-gen logs written for these tests
//! (tests/data/pktgen/). Every expected value is worked out by hand from the
//! per-second samples listed in the comments.

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

// bench.forwarding.PKTGEN.1.receiver (pkt-gen -N -f rx): 45 per-second lines.
//  1-15 (dropped): 0 0 0 104312 512077 986410 1310244 1451870 1480112 1486230
//                  1487754 1488003 1487912 1487650 1201000
// 16-35 (kept):    1488105 1488093 1488121 1487998 1488140 1488077 0 1488112
//                  1488089 1488131 1488064 1488119 1488102 1488095 1488088
//                  1488126 1488071 1488110 1488099 1488083
// 36-45 (dropped): 1487000 1488101 1488097 1488090 1488120 1488087 1302554 0 0 0
// The 19 non-zero kept samples sorted: 1487998 1488064 1488071 1488077
// 1488083 1488088 1488089 1488093 1488095 [1488099] 1488102 1488105 1488110
// 1488112 1488119 1488121 1488126 1488131 1488140: the 10th is the median.
const RECEIVER: &str = "bench.forwarding.PKTGEN.1.receiver";
const RECEIVER_VALUE: &str = "1488099";

// bench.forwarding.PKTGEN.1.sender (pkt-gen -f tx, unit prefixes): 32 lines.
// Kept samples 16-22: 1.488 M, 1.487 M, 998.421 K, 1.488 M, 1.486 M, 1.489 M,
// 1.485 M; sorted 998421 1485000 1486000 [1487000] 1488000 1488000 1489000.
const SENDER: &str = "bench.forwarding.PKTGEN.1.sender";
const SENDER_VALUE: &str = "1487000";

// bench.short.PKTGEN.1.receiver: 30 lines, samples 16-20 are
// 712345 713001 712900 0 712001: four non-zero, an even count, so the median
// is (712345 + 712900) / 2 = 712622.5.
const SHORT: &str = "bench.short.PKTGEN.1.receiver";
const SHORT_VALUE: &str = "712622.5";

// bench.down.PKTGEN.1.receiver: 40 lines, all 0 pps.
const DOWN: &str = "bench.down.PKTGEN.1.receiver";

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
fn even_sample_count_takes_the_mean_of_the_middle_two() {
    let out = pktgen_log(&[], &[SHORT]);
    assert_eq!(stdout(&out), format!("{SHORT_VALUE}\n"));
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
    assert_eq!(warning.lines().count(), 1, "{warning}");
    assert!(warning.starts_with("pktlab: warning: "), "{warning}");
    assert!(
        warning.contains(DOWN) && warning.contains("40 per-second samples"),
        "{warning}"
    );
}

#[test]
fn trimming_can_be_changed() {
    // No trimming: all 25 non-zero samples of the short log count. Sorted:
    // 331204 508113 698411 710233 711870 711934 711950 711993 712001 712003
    // 712050 712120 [712199] 712207 712275 712340 712345 712388 712410 712460
    // 712565 712612 712811 712900 713001: the 13th is the median.
    let out = pktgen_log(&["--trim-head", "0", "--trim-tail", "0"], &[SHORT]);
    assert_eq!(stdout(&out), "712199\n");

    // One more warm-up sample (15 -> 14) brings in 1201000: 20 values, median
    // (1488095 + 1488099) / 2.
    let out = pktgen_log(&["--trim-head", "14"], &[RECEIVER]);
    assert_eq!(stdout(&out), "1488097\n");

    // One sample less at the tail (10 -> 9) brings in 1487000 likewise.
    let out = pktgen_log(&["--trim-tail", "9"], &[RECEIVER]);
    assert_eq!(stdout(&out), "1488097\n");

    // Trimming everything away leaves nothing.
    let out = pktgen_log(&["--trim-head", "40", "--trim-tail", "10"], &[RECEIVER]);
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
