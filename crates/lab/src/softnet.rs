//! Per-CPU packet-processing counters of `/proc/net/softnet_stat`: how many
//! packets each CPU's backlog processed, how many it dropped because the
//! backlog was full (`net.core.netdev_max_backlog`), and how often its
//! receive work ran out of budget or time (`time_squeeze`).
//!
//! A DUT whose receive work runs on CPUs of its own (the built-in lab's CPU
//! plan) and that cannot keep up drops at those CPUs' backlogs: the drops
//! say where the loss happened. The file is the same in every network
//! namespace: the counters are the whole host's.

use serde::{Deserialize, Serialize};

use crate::LabError;

pub const SOFTNET_STAT: &str = "/proc/net/softnet_stat";

/// One CPU's counters, or their change over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SoftnetCpu {
    pub cpu: usize,
    pub processed: u64,
    pub dropped: u64,
    pub time_squeeze: u64,
}

/// Parses the file's text. Each line is a CPU, its fields 32-bit hex; the
/// 13th field is the CPU's number (kernels since 5.10), otherwise the line's
/// position is (older kernels skip offline CPUs, so it may be wrong there).
pub fn parse(text: &str) -> Result<Vec<SoftnetCpu>, String> {
    let mut cpus = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<u32> = line
            .split_whitespace()
            .map(|f| u32::from_str_radix(f, 16))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("line {} is not hexadecimal fields: '{line}'", i + 1))?;
        if fields.len() < 3 {
            return Err(format!("line {} has fewer than 3 fields: '{line}'", i + 1));
        }
        cpus.push(SoftnetCpu {
            cpu: fields.get(12).map_or(i, |&c| c as usize),
            processed: fields[0].into(),
            dropped: fields[1].into(),
            time_squeeze: fields[2].into(),
        });
    }
    Ok(cpus)
}

/// The host's counters now.
pub fn read() -> Result<Vec<SoftnetCpu>, LabError> {
    let text = std::fs::read_to_string(SOFTNET_STAT).map_err(|err| LabError::Sys {
        what: format!("cannot read {SOFTNET_STAT}"),
        err,
    })?;
    parse(&text).map_err(|why| LabError::Output {
        command: format!("cat {SOFTNET_STAT}"),
        why,
    })
}

/// The frames waiting in every CPU's backlog now: the 12th field
/// (`softnet_backlog_len`, kernels since 5.10). None on older kernels,
/// whose lines stop before it.
pub fn backlog_len(text: &str) -> Option<u64> {
    let mut total = 0;
    for line in text.lines() {
        let field = line.split_whitespace().nth(11)?;
        total += u64::from(u32::from_str_radix(field, 16).ok()?);
    }
    Some(total)
}

/// [`backlog_len`] of the host now (None: unreadable or an older kernel).
pub fn backlog_now() -> Option<u64> {
    backlog_len(&std::fs::read_to_string(SOFTNET_STAT).ok()?)
}

/// What changed from `before` to `after`, per CPU present in both. The
/// kernel's counters are 32 bits wide and wrap.
pub fn deltas(before: &[SoftnetCpu], after: &[SoftnetCpu]) -> Vec<SoftnetCpu> {
    let diff = |a: u64, b: u64| u64::from((a as u32).wrapping_sub(b as u32));
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.cpu == a.cpu)?;
            Some(SoftnetCpu {
                cpu: a.cpu,
                processed: diff(a.processed, b.processed),
                dropped: diff(a.dropped, b.dropped),
                time_squeeze: diff(a.time_squeeze, b.time_squeeze),
            })
        })
        .collect()
}

/// Backlog drops on `cpus`, summed.
pub fn dropped_on(deltas: &[SoftnetCpu], cpus: &[usize]) -> u64 {
    deltas
        .iter()
        .filter(|d| cpus.contains(&d.cpu))
        .map(|d| d.dropped)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_is_the_twelfth_field_summed_over_cpus() {
        let text = "00f4ca92 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 000000e2 00000000 0000001a 00000000 00000010 0000000a\n\
                    00e4bc23 0017b3a0 00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000136 00000000 00000003 00000001 00000003 00000000\n";
        assert_eq!(backlog_len(text), Some(0x1a + 3));
        // A 4.x kernel's eleven fields have no backlog length.
        let old = "00f4ca92 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 000000e2 00000000\n";
        assert_eq!(backlog_len(old), None);
        assert_eq!(backlog_len("00f4ca92 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 000000e2 00000000 zz\n"), None);
    }

    #[test]
    fn parses_this_kernels_format() {
        // Two CPUs of a 6.x kernel: 15 fields, the 13th the CPU number.
        let text = "00f4ca92 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 000000e2 00000000 00000000 00000000 00000000 00000000\n\
                    00e4bc23 0017b3a0 00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000136 00000000 00000000 00000001 00000000 00000000\n";
        let cpus = parse(text).unwrap();
        assert_eq!(
            cpus,
            [
                SoftnetCpu {
                    cpu: 0,
                    processed: 0xf4ca92,
                    dropped: 0,
                    time_squeeze: 1
                },
                SoftnetCpu {
                    cpu: 1,
                    processed: 0xe4bc23,
                    dropped: 1_553_312,
                    time_squeeze: 16
                },
            ]
        );
        // An older kernel's 11 fields: the CPU is the line's position.
        let old = "00000010 00000002 00000003 0 0 0 0 0 0 0 0\n";
        assert_eq!(parse(old).unwrap()[0].cpu, 0);
        assert_eq!(parse(old).unwrap()[0].dropped, 2);
        assert!(parse("zz 00 00\n").unwrap_err().contains("line 1"));
        assert!(parse("00 00\n").unwrap_err().contains("fewer than 3"));
    }

    #[test]
    fn deltas_wrap_and_sum_per_cpu() {
        let at = |cpu, processed, dropped| SoftnetCpu {
            cpu,
            processed,
            dropped,
            time_squeeze: 0,
        };
        let before = [at(0, 100, 5), at(1, 0xffff_fff0, 7)];
        let after = [at(0, 150, 5), at(1, 0x10, 1007), at(2, 9, 9)];
        let d = deltas(&before, &after);
        // CPU 1's processed counter wrapped: 0x10 - 0xfffffff0 = 0x20.
        assert_eq!(d, [at(0, 50, 0), at(1, 0x20, 1000)]);
        assert_eq!(dropped_on(&d, &[1]), 1000);
        assert_eq!(dropped_on(&d, &[0]), 0);
        assert_eq!(dropped_on(&d, &[0, 1]), 1000);
        assert!(!read().unwrap().is_empty());
    }
}
