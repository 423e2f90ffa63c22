//! CPU lists (`--cpus 0-3,6`) and pinning threads to CPUs.

use crate::EngineError;

/// Parses a CPU list like `taskset -c` and `/sys/.../cpulist` write it:
/// `2`, `0-3`, `0,2,4-6`. Order is kept (thread i goes to the i-th CPU);
/// duplicates are an error.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, EngineError> {
    let bad = |why: &str| EngineError::BadCpus(format!("invalid CPU list '{text}': {why}"));
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(bad("empty element"));
        }
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let num = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| bad(&format!("'{s}' is not a CPU number")))
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if hi < lo {
            return Err(bad(&format!("range {lo}-{hi} is backwards")));
        }
        if hi >= libc::CPU_SETSIZE as usize {
            return Err(bad(&format!(
                "CPU {hi} is beyond {}",
                libc::CPU_SETSIZE - 1
            )));
        }
        for c in lo..=hi {
            if cpus.contains(&c) {
                return Err(bad(&format!("CPU {c} appears twice")));
            }
            cpus.push(c);
        }
    }
    Ok(cpus)
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most sizeof(cpu_set_t) bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Checks that every CPU of `cpus` is one this process may use.
pub fn check_cpus(cpus: &[usize]) -> Result<(), EngineError> {
    let allowed = allowed_cpus();
    match cpus.iter().find(|c| !allowed.contains(c)) {
        Some(c) => Err(EngineError::BadCpus(format!(
            "CPU {c} is not available (usable CPUs: {})",
            format_cpu_list(&allowed)
        ))),
        None => Ok(()),
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> Result<(), EngineError> {
    // SAFETY: as in allowed_cpus; CPU_SET is given an index below
    // CPU_SETSIZE (checked by parse_cpu_list/check_cpus, and again here).
    let rc = unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(EngineError::BadCpus(format!("CPU {cpu} does not exist")));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(EngineError::System(format!(
            "cannot pin a thread to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// `0-3,6` from `[0, 1, 2, 3, 6]`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(parse_cpu_list("2").unwrap(), [2]);
        assert_eq!(parse_cpu_list("0-3").unwrap(), [0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("3,0-1, 5").unwrap(), [3, 0, 1, 5]);
        for bad in ["", "a", "1,,2", "3-1", "1,1", "0-99999"] {
            let e = parse_cpu_list(bad).unwrap_err();
            assert!(e.is_usage());
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
    }

    #[test]
    fn pin_to_an_allowed_cpu() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let cpu = *allowed.last().unwrap();
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(allowed_cpus(), [cpu]);
        })
        .join()
        .unwrap();
        assert!(
            check_cpus(&[100_000 % libc::CPU_SETSIZE as usize]).is_err() || allowed.len() > 1000
        );
    }
}
