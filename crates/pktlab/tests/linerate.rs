//! `pktlab linerate`: the text people read, against values worked by hand.

use std::process::Command;

fn pktlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pktlab"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn ten_gigabit_table() {
    let (code, out, _) = pktlab(&["linerate", "10G"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Line rate of 10.000 Gbps (one direction)");
    assert_eq!(lines.len(), 2 + 8, "{out}");
    // 10e9 / (84 × 8) = 14,880,952.4 pps; L2 × 512 bits = 7.619 Gbps; IP × 368 bits.
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        [
            "64",
            "14,880,952",
            "10.000",
            "Gbps",
            "7.619",
            "Gbps",
            "5.476",
            "Gbps"
        ]
    );
    // 10e9 / (1538 × 8) = 812,743.8 pps; L2 = 10e9 × 1518 / 1538 = 9.870 Gbps;
    // IP = 10e9 × 1500 / 1538 = 9.753 Gbps.
    assert_eq!(
        lines[8].split_whitespace().collect::<Vec<_>>(),
        ["1518", "812,744", "10.000", "Gbps", "9.870", "Gbps", "9.753", "Gbps"]
    );
    // Simple IMIX: 12 frames of 4342 bytes in 36656 bits: 3,273,679.6 pps.
    assert_eq!(
        lines[9].split_whitespace().collect::<Vec<_>>(),
        [
            "imix",
            "3,273,680",
            "10.000",
            "Gbps",
            "9.476",
            "Gbps",
            "9.005",
            "Gbps"
        ]
    );
}

#[test]
fn full_duplex_doubles() {
    let (code, out, _) = pktlab(&["linerate", "1G", "--fdx", "-l", "64"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Line rate of 1.000 Gbps full duplex (both directions, 2.000 Gbps in all)"
    );
    // 2 × 1e9 / 672 = 2,976,190.5 pps.
    assert_eq!(lines[2].split_whitespace().nth(1), Some("2,976,190"));
}

#[test]
fn measured_rate_against_the_line() {
    let (code, out, _) = pktlab(&["linerate", "10G", "--pps", "1.2M", "-l", "imix"]);
    assert_eq!(code, 0);
    // Mean 4342 / 12 = 361.83 bytes: L1 = 1.2e6 × 381.83 × 8 = 3.666 Gbps,
    // L2 = 1.2e6 × 361.83 × 8 = 3.474 Gbps, IP = 1.2e6 × 343.83 × 8 = 3.301 Gbps,
    // 1.2e6 / 3,273,679.6 = 36.66 %.
    assert_eq!(
        out.lines().nth(1).unwrap(),
        "1,200,000 pps of imix (361.83 bytes on average): L1 3.666 Gbps, L2 3.474 Gbps, \
         IP 3.301 Gbps; 36.66 % of the line rate (3,273,680 pps)"
    );
    let (code, out, _) = pktlab(&["linerate", "10G", "--pps", "1.2M", "-l", "imix", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["type"], "measured_rate");
    let share = v["line_percent"].as_f64().unwrap();
    assert!((share - 36.6558).abs() < 1e-3, "{share}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, msg) in [
        (
            &["linerate", "10"][..],
            "pktlab: invalid link speed '10': use a number with M or G, such as 1G, 10Gbps or 100M\n",
        ),
        (
            &["linerate", "10G", "--pps", "1.2M"][..],
            "pktlab: --pps needs the frame size or mix of the measured rate (-l 64, -l imix, ...)\n",
        ),
        (
            &["linerate", "10G", "--pps", "1Gbps", "-l", "64"][..],
            "pktlab: invalid --pps '1Gbps': give frames per second, such as 1.2M or 850kpps\n",
        ),
    ] {
        let (code, out, err) = pktlab(args);
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", msg), "{args:?}");
    }
}
