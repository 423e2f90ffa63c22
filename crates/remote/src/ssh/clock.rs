//! How well the lab's hosts' clocks agree, from their synchronisation
//! daemons' own estimates: chrony (`chronyc tracking`), or PTP (ptp4l's
//! offset from its grandmaster through `pmc`, and phc2sys's offset of the
//! system clock from the NIC's clock, from its log). One-way latency
//! between two hosts is only as exact as their clocks.

use serde::{Deserialize, Serialize};

/// One host's clock as its synchronisation daemon reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostClock {
    /// `here`, or the ssh destination.
    pub host: String,
    /// Seconds the clock is ahead of its reference (negative: behind);
    /// None: unknown (no daemon, or not synchronised).
    pub offset_s: Option<f64>,
    /// A bound on the clock's error (chronyc(1)'s: |offset| + root
    /// dispersion + root delay / 2; for PTP: |ptp4l's offset| +
    /// |phc2sys's offset| + phc2sys's delay / 2). None: unknown.
    pub error_s: Option<f64>,
    /// Who said so: `chrony` or `ptp`; absent when nobody did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The clocks of every host of a lab, and what they mean for latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    pub hosts: Vec<HostClock>,
    /// One line on one-way latency between the generator's and the
    /// receiver's hosts.
    pub latency: String,
}

/// The shell lines that print what a host's clock daemons say, in
/// sections [`HostClock::from_report`] reads; a daemon that is absent
/// prints nothing that parses. chronyc asks chronyd's socket in /run/chrony,
/// then 127.0.0.1:323; without a daemon it prints "506 Cannot talk to
/// daemon". pmc's `-b 0` keeps the question to the local ptp4l (at its
/// default /var/run/ptp4l); without one it prints only the line it sent.
/// phc2sys's log is read only while a phc2sys runs, and only from this
/// boot: the journal keeps the last words of one that stopped long ago.
pub const CLOCK_SCRIPT: &str = "chronyc -n tracking 2>/dev/null; \
echo '--- pmc'; pmc -u -b 0 'GET TIME_STATUS_NP' 2>/dev/null; \
echo '--- phc2sys'; pgrep -x phc2sys >/dev/null 2>&1 && \
journalctl -b -t phc2sys -n 20 -o cat --no-pager 2>/dev/null; true";

/// `chronyc tracking` text: (offset, error bound) in seconds, or None
/// when chrony does not say or is not synchronised.
pub fn parse_tracking(text: &str) -> Option<(f64, f64)> {
    let mut offset = None;
    let mut delay = None;
    let mut dispersion = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let words: Vec<&str> = value.split_whitespace().collect();
        let number = words.first().and_then(|w| w.parse::<f64>().ok());
        match key.trim() {
            // "0.000001234 seconds slow of NTP time"
            "System time" => {
                offset = number.map(|n| match words.get(2) {
                    Some(&"slow") => -n,
                    _ => n,
                })
            }
            "Root delay" => delay = number,
            "Root dispersion" => dispersion = number,
            "Leap status" if value.trim() == "Not synchronised" => return None,
            _ => {}
        }
    }
    let (o, d, e) = (offset?, delay?, dispersion?);
    Some((o, o.abs() + e + d / 2.0))
}

/// ptp4l's offset from its grandmaster in seconds, from `pmc`'s answer
/// to `GET TIME_STATUS_NP`; None without a grandmaster. The grandmaster's
/// own ptp4l says `gmPresent false` too (linuxptp's clock.c sets it when
/// the grandmaster identity is the clock's own), as a lone ptp4l that
/// hears no master does: the two cannot be told apart, so both count as
/// unknown (crates/pktlab/tests/clocks.rs shows it on a real pair).
pub fn parse_time_status(text: &str) -> Option<f64> {
    let mut offset = None;
    let mut gm = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("master_offset"), Some(n)) => offset = n.parse::<f64>().ok(),
            (Some("gmPresent"), Some(v)) => gm = v == "true",
            _ => {}
        }
    }
    offset.filter(|_| gm).map(|ns| ns * 1e-9)
}

/// phc2sys's last word on the system clock: (offset, delay) in seconds,
/// from its log lines (`CLOCK_REALTIME phc offset -8 s2 freq +12 delay
/// 512`, or with `-u` its summaries `CLOCK_REALTIME rms 5 max 9 freq ...
/// delay 512 +/- 3`, whose `max` is taken). The formats are those of
/// update_clock() and update_clock_stats() in phc2sys.c of linuxptp 3.1.1
/// (Debian 12's): they leave the delay out when there is none to say (a
/// PPS source), read here as 0. In the journal a line starts with
/// `[monotonic seconds]`, on stdout (`-m`) with `phc2sys[...]: `.
pub fn parse_phc2sys(text: &str) -> Option<(f64, f64)> {
    text.lines().rev().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = |key: &str| {
            words
                .windows(2)
                .find(|w| w[0] == key)
                .and_then(|w| w[1].parse::<f64>().ok())
        };
        if !words.contains(&"CLOCK_REALTIME") {
            return None;
        }
        let offset = at("offset").or_else(|| at("max"))?;
        Some((offset * 1e-9, at("delay").unwrap_or(0.0) * 1e-9))
    })
}

/// The sections of [`CLOCK_SCRIPT`]'s output: (chrony, pmc, phc2sys).
fn sections(text: &str) -> (&str, &str, &str) {
    let (chrony, rest) = text.split_once("--- pmc\n").unwrap_or((text, ""));
    let (pmc, phc) = rest.split_once("--- phc2sys\n").unwrap_or((rest, ""));
    (chrony, pmc, phc)
}

impl HostClock {
    pub fn from_tracking(host: &str, text: &str) -> HostClock {
        let parsed = parse_tracking(text);
        HostClock {
            host: host.to_string(),
            offset_s: parsed.map(|p| p.0),
            error_s: parsed.map(|p| p.1),
            source: parsed.map(|_| "chrony".into()),
        }
    }

    /// From [`CLOCK_SCRIPT`]'s output: chrony when it is synchronised,
    /// else PTP when ptp4l has a grandmaster and phc2sys steers the
    /// system clock (pktlab's timestamps are the system clock's).
    pub fn from_report(host: &str, text: &str) -> HostClock {
        let (chrony, pmc, phc) = sections(text);
        let c = HostClock::from_tracking(host, chrony);
        if c.source.is_some() {
            return c;
        }
        match (parse_time_status(pmc), parse_phc2sys(phc)) {
            (Some(nic), Some((sys, delay))) => HostClock {
                host: host.to_string(),
                offset_s: Some(nic + sys),
                error_s: Some(nic.abs() + sys.abs() + delay / 2.0),
                source: Some("ptp".into()),
            },
            _ => c,
        }
    }
}

/// The note on latency between the generator's host `gen` and the
/// receiver's `rcv` (both among `hosts`).
pub fn latency_note(hosts: &[HostClock], gen: &str, rcv: &str) -> String {
    if gen == rcv {
        return format!(
            "generator and receiver share the clock of {gen}: one-way latency is exact"
        );
    }
    match pair_error(hosts, gen, rcv) {
        Ok((error, sources)) => format!(
            "clocks of {gen} and {rcv} synchronised to ±{} µs ({sources}): one-way latency below that is not comparable",
            round_us(error)
        ),
        Err(unknown) => format!(
            "one-way latency between {gen} and {rcv} is not comparable: {unknown}"
        ),
    }
}

/// How far apart the clocks of `gen` and `rcv` may be (the sum of their
/// error bounds) and who said so; or why that is unknown.
fn pair_error(hosts: &[HostClock], gen: &str, rcv: &str) -> Result<(f64, String), String> {
    let of = |h: &str| hosts.iter().find(|c| c.host == h);
    let error = |h: &str| of(h).and_then(|c| c.error_s);
    match (error(gen), error(rcv)) {
        (Some(a), Some(b)) => {
            let mut sources: Vec<String> = [gen, rcv]
                .iter()
                .filter_map(|h| of(h).and_then(|c| c.source.clone()))
                .collect();
            sources.dedup();
            Ok((a + b, sources.join(" and ")))
        }
        _ => Err(format!(
            "the clocks' error is unknown (no synchronised chrony or PTP on {})",
            [gen, rcv]
                .iter()
                .filter(|h| error(h).is_none())
                .copied()
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

/// What a trial's one-way latency between the generator's host `gen`
/// and the receiver's `rcv` is worth, given the smallest latency the
/// receiver measured: None when both share one clock (exact, as on one
/// host); else a note that says the clocks are synchronised to ±X, or that
/// the latency is not comparable because their error is unknown or
/// larger than that smallest latency.
pub fn run_latency_note(
    hosts: &[HostClock],
    gen: &str,
    rcv: &str,
    min_latency_ns: u64,
) -> Option<String> {
    if gen == rcv {
        return None;
    }
    let latency = min_latency_ns as f64 * 1e-9;
    // Compared in whole nanoseconds, the timestamps' own unit, so that a
    // bound equal to the latency is equal and not a rounding away.
    let ns = |s: f64| (s * 1e9).round() as u64;
    Some(match pair_error(hosts, gen, rcv) {
        Ok((error, sources)) if ns(error) < min_latency_ns => format!(
            "clocks of {gen} and {rcv} synchronised to ±{} µs ({sources})",
            round_us(error)
        ),
        Ok((error, sources)) => format!(
            "not comparable: the clocks of {gen} and {rcv} may be ±{} µs apart ({sources}), more than the smallest latency measured ({} µs)",
            round_us(error),
            round_us(latency)
        ),
        Err(unknown) => format!("not comparable: {unknown}"),
    })
}

fn round_us(s: f64) -> String {
    format!("{:.1}", s * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACKING: &str = "Reference ID    : C0A80101 (192.168.1.1)
Stratum         : 3
Ref time (UTC)  : Mon Nov 23 12:00:00 2026
System time     : 0.000012000 seconds slow of NTP time
Last offset     : +0.000001000 seconds
RMS offset      : 0.000010000 seconds
Frequency       : 1.234 ppm fast
Residual freq   : +0.000 ppm
Skew            : 0.012 ppm
Root delay      : 0.000400000 seconds
Root dispersion : 0.000050000 seconds
Update interval : 64.2 seconds
Leap status     : Normal
";

    #[test]
    fn chrony_tracking() {
        let (offset, error) = parse_tracking(TRACKING).unwrap();
        assert_eq!(offset, -0.000012);
        // 12 µs + 50 µs + 400 µs / 2 = 262 µs.
        assert!((error - 0.000262).abs() < 1e-12, "{error}");
        let fast = TRACKING.replace("slow", "fast");
        assert_eq!(parse_tracking(&fast).unwrap().0, 0.000012);
        let unsync = TRACKING.replace(
            "Leap status     : Normal",
            "Leap status     : Not synchronised",
        );
        assert_eq!(parse_tracking(&unsync), None);
        assert_eq!(parse_tracking(""), None);
        assert_eq!(parse_tracking("506 Cannot talk to daemon\n"), None);
    }

    #[test]
    fn latency_notes() {
        let a = HostClock::from_tracking("hosta", TRACKING);
        let c = HostClock::from_tracking("hostc", TRACKING);
        let none = HostClock::from_tracking("hostd", "");
        assert_eq!(
            latency_note(&[a.clone(), c], "hosta", "hostc"),
            "clocks of hosta and hostc synchronised to ±524.0 µs (chrony): one-way latency below that is not comparable"
        );
        assert_eq!(
            latency_note(&[a, none], "hosta", "hostd"),
            "one-way latency between hosta and hostd is not comparable: the clocks' error is unknown (no synchronised chrony or PTP on hostd)"
        );
        assert_eq!(
            latency_note(&[], "here", "here"),
            "generator and receiver share the clock of here: one-way latency is exact"
        );
    }

    // pmc's answer (linuxptp 3.1.1, Debian 12's) on a host whose ptp4l
    // follows a grandmaster; its RESPONSE line ends in a space.
    const PMC: &str = "sending: GET TIME_STATUS_NP
\t0c42a1.fffe.0b7e25-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP \n\
\t\tmaster_offset              -11
\t\tingress_time               1700000000123456789
\t\tcumulativeScaledRateOffset +0.000000000
\t\tscaledLastGmPhaseChange    0
\t\tgmTimeBaseIndicator        0
\t\tlastGmPhaseChange          0x0000'0000000000000000.0000
\t\tgmPresent                  true
\t\tgmIdentity                 001122.fffe.334455
";

    // phc2sys's lines as `journalctl -o cat` shows them (syslog's
    // `[monotonic seconds] message`, linuxptp 3.1.1's print.c), the last
    // one the newest; widths as phc2sys.c's update_clock() prints them.
    const PHC2SYS: &str =
        "[100.000] CLOCK_REALTIME phc offset       -40 s2 freq   +1200 delay    700
[101.000] CLOCK_REALTIME phc offset        25 s2 freq   +1234 delay    500
";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-15
    }

    #[test]
    fn ptp_offsets() {
        assert!(close(parse_time_status(PMC).unwrap(), -11e-9));
        assert_eq!(parse_time_status(&PMC.replace("true", "false")), None);
        assert_eq!(parse_time_status(""), None);
        let (o, d) = parse_phc2sys(PHC2SYS).unwrap();
        assert!(close(o, 25e-9) && close(d, 500e-9), "{o} {d}");
        let summary =
            "[5.000] CLOCK_REALTIME rms    4 max    9 freq  +1230 +/-   2 delay   480 +/-   3\n";
        let (o, d) = parse_phc2sys(summary).unwrap();
        assert!(close(o, 9e-9) && close(d, 480e-9), "{o} {d}");
        // On stdout (-m) the program's name comes first.
        let stdout =
            "phc2sys[6.000]: CLOCK_REALTIME phc offset        -7 s2 freq   +1234 delay    300\n";
        let (o, d) = parse_phc2sys(stdout).unwrap();
        assert!(close(o, -7e-9) && close(d, 300e-9), "{o} {d}");
        // From a PPS source phc2sys says no delay: none to add. Its newest
        // line wins over the older one that had a delay.
        let pps =
            format!("{PHC2SYS}[102.000] CLOCK_REALTIME pps offset        -3 s2 freq   +1230\n");
        let (o, d) = parse_phc2sys(&pps).unwrap();
        assert!(close(o, -3e-9) && d == 0.0, "{o} {d}");
        let pps_summary = "[7.000] CLOCK_REALTIME rms    2 max    5 freq  +1230 +/-   1\n";
        let (o, d) = parse_phc2sys(pps_summary).unwrap();
        assert!(close(o, 5e-9) && d == 0.0, "{o} {d}");
        // A PHC steered from the system clock (phc2sys -a's other
        // direction) says nothing about the system clock.
        assert_eq!(
            parse_phc2sys("[8.000] eth0 sys offset        12 s2 freq    -40 delay   1100\n"),
            None
        );
        assert_eq!(
            parse_phc2sys("phc2sys[1.0]: reconfiguring after port state change\n"),
            None
        );
    }

    #[test]
    fn a_host_report_prefers_chrony_then_ptp() {
        let report = |chrony: &str| format!("{chrony}--- pmc\n{PMC}--- phc2sys\n{PHC2SYS}");
        let c = HostClock::from_report("h", &report(TRACKING));
        assert_eq!(c.source.as_deref(), Some("chrony"));
        assert_eq!(c.offset_s, Some(-0.000012));
        let p = HostClock::from_report("h", &report(""));
        assert_eq!(p.source.as_deref(), Some("ptp"));
        // -11 ns + 25 ns; error 11 + 25 + 500 / 2 = 286 ns.
        assert!(close(p.offset_s.unwrap(), 14e-9), "{p:?}");
        assert!(close(p.error_s.unwrap(), 286e-9), "{p:?}");
        // ptp4l without phc2sys does not steer the system clock.
        let alone = HostClock::from_report("h", &format!("--- pmc\n{PMC}--- phc2sys\n"));
        assert_eq!((alone.error_s, alone.source), (None, None));
        // Nothing at all: the script's bare section marks.
        let none = HostClock::from_report("h", "--- pmc\n--- phc2sys\n");
        assert_eq!(
            none,
            HostClock {
                host: "h".into(),
                offset_s: None,
                error_s: None,
                source: None
            }
        );
        let text = serde_json::to_string(&none).unwrap();
        assert_eq!(text, r#"{"host":"h","offset_s":null,"error_s":null}"#);
    }

    #[test]
    fn whether_a_run_latency_is_comparable() {
        let clock = |host: &str, error_s: Option<f64>| HostClock {
            host: host.into(),
            offset_s: error_s.map(|_| 0.0),
            error_s,
            source: error_s.map(|_| "ptp".into()),
        };
        // 2 µs + 3 µs = ±5 µs between A and C.
        let hosts = [
            clock("a", Some(2e-6)),
            clock("c", Some(3e-6)),
            clock("d", None),
        ];
        // The smallest latency 40 µs: the clocks' ±5 µs is well below it.
        assert_eq!(
            run_latency_note(&hosts, "a", "c", 40_000).as_deref(),
            Some("clocks of a and c synchronised to ±5.0 µs (ptp)")
        );
        // 4.5 µs: less than the ±5 µs the clocks may be apart.
        assert_eq!(
            run_latency_note(&hosts, "a", "c", 4_500).as_deref(),
            Some("not comparable: the clocks of a and c may be ±5.0 µs apart (ptp), more than the smallest latency measured (4.5 µs)")
        );
        // Exactly the error is not below it either.
        assert!(run_latency_note(&hosts, "a", "c", 5_000)
            .unwrap()
            .starts_with("not comparable"));
        assert_eq!(
            run_latency_note(&hosts, "a", "d", 1_000_000).as_deref(),
            Some(
                "not comparable: the clocks' error is unknown (no synchronised chrony or PTP on d)"
            )
        );
        // One host, one clock: nothing to say, the latency is as it was.
        assert_eq!(run_latency_note(&hosts, "d", "d", 10), None);
    }
}
