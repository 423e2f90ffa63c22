//! The built-in lab's CPU plan: which CPUs do the DUT's forwarding and
//! which run the tester (generator and receiver).
//!
//! Separate machines is how BSDRP's bench lab measures: a generator that
//! outruns the DUT makes the DUT drop at its receive queue, and the
//! forwarded rate is the DUT's capacity. In one host the same happens when
//! the DUT's receive work runs on CPUs of its own (RPS masks on its veths)
//! and the tester's threads are pinned to the others. With one CPU there is
//! nothing to split: the lab stays in shared mode, where every figure is
//! the speed of generator, DUT and receiver together.

use std::fmt;

use serde::{Deserialize, Serialize};

use pktlab_engine::affinity::{format_cpu_list, parse_cpu_list};

use crate::LabError;

/// How the lab's CPUs are split.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlan {
    /// `isolated`, or `shared` when the DUT and the tester share every CPU.
    pub mode: CpuMode,
    /// CPUs that do the DUT's forwarding (every allowed CPU when shared).
    pub dut_cpus: Vec<usize>,
    /// CPUs of the generator's and receiver's threads.
    pub tester_cpus: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuMode {
    Isolated,
    Shared,
}

impl CpuPlan {
    /// The default split of `allowed` (sorted, no duplicates): the last CPU
    /// for the DUT, or the last quarter of them from 8 CPUs on; the rest
    /// for the tester. Shared mode with fewer than 2 CPUs.
    pub fn default_for(allowed: &[usize]) -> CpuPlan {
        let n = allowed.len();
        if n < 2 {
            return CpuPlan::shared(allowed);
        }
        let dut = if n >= 8 { n / 4 } else { 1 };
        CpuPlan {
            mode: CpuMode::Isolated,
            dut_cpus: allowed[n - dut..].to_vec(),
            tester_cpus: allowed[..n - dut].to_vec(),
        }
    }

    /// Every CPU for everyone: no steering at all.
    pub fn shared(allowed: &[usize]) -> CpuPlan {
        CpuPlan {
            mode: CpuMode::Shared,
            dut_cpus: allowed.to_vec(),
            tester_cpus: allowed.to_vec(),
        }
    }

    /// The plan for `--dut-cpus LIST` (None: the default; `all`: shared
    /// mode on purpose, for comparing with it) given the CPUs that exist
    /// (`online`) and those this process may use (`allowed`). A CPU that
    /// does not exist or is not allowed, or a list that leaves the tester
    /// no CPU, is a usage error.
    pub fn choose(
        dut_cpus: Option<&str>,
        online: &[usize],
        allowed: &[usize],
    ) -> Result<CpuPlan, LabError> {
        let mut allowed = allowed.to_vec();
        allowed.sort_unstable();
        allowed.dedup();
        let Some(text) = dut_cpus else {
            return Ok(CpuPlan::default_for(&allowed));
        };
        if text == "all" {
            return Ok(CpuPlan::shared(&allowed));
        }
        let bad = |why: String| LabError::BadCpus(format!("--dut-cpus {text}: {why}"));
        let mut dut = parse_cpu_list(text).map_err(|e| LabError::BadCpus(e.to_string()))?;
        dut.sort_unstable();
        if let Some(c) = dut.iter().find(|c| !online.contains(c)) {
            return Err(bad(format!(
                "CPU {c} does not exist (this machine's CPUs: {})",
                format_cpu_list(online)
            )));
        }
        if let Some(c) = dut.iter().find(|c| !allowed.contains(c)) {
            return Err(bad(format!(
                "CPU {c} is not allowed for this process (allowed CPUs: {})",
                format_cpu_list(&allowed)
            )));
        }
        let tester: Vec<usize> = allowed
            .iter()
            .copied()
            .filter(|c| !dut.contains(c))
            .collect();
        if tester.is_empty() {
            return Err(bad(format!(
                "that leaves no CPU for the generator and receiver (allowed CPUs: {})",
                format_cpu_list(&allowed)
            )));
        }
        Ok(CpuPlan {
            mode: CpuMode::Isolated,
            dut_cpus: dut,
            tester_cpus: tester,
        })
    }

    /// [`CpuPlan::choose`] for this machine and process.
    pub fn for_this_process(dut_cpus: Option<&str>) -> Result<CpuPlan, LabError> {
        let allowed = pktlab_engine::affinity::allowed_cpus();
        let online = online_cpus().unwrap_or_else(|| allowed.clone());
        CpuPlan::choose(dut_cpus, &online, &allowed)
    }

    pub fn is_shared(&self) -> bool {
        self.mode == CpuMode::Shared
    }

    /// The RPS/XPS mask of the DUT's ports: its CPUs, or none (`0`, the
    /// kernel's default: work stays where the packet arrived) when shared.
    pub fn dut_mask(&self) -> String {
        self.mask_of(&self.dut_cpus)
    }

    /// The RPS/XPS mask of the generator's and receiver's ports.
    pub fn tester_mask(&self) -> String {
        self.mask_of(&self.tester_cpus)
    }

    fn mask_of(&self, cpus: &[usize]) -> String {
        if self.is_shared() {
            "0".into()
        } else {
            mask_text(cpus)
        }
    }

    /// The built-in DUT's state with this plan applied, which DUT
    /// configurations revert to.
    pub fn builtin_base(&self) -> crate::dut::BuiltinBase {
        crate::dut::BuiltinBase {
            rps_mask: self.dut_mask(),
            gro_on: Some(super::plan::IfRole::DutIn.name().to_string()),
        }
    }

    /// The one line printed in shared mode.
    pub fn shared_notice(&self) -> Option<String> {
        if self.is_shared() && self.tester_cpus.len() > 1 {
            return Some(format!(
                "shared mode (--dut-cpus all): the generator, DUT and receiver share CPUs {}, so \
                 figures are the whole machine's speed",
                format_cpu_list(&self.tester_cpus)
            ));
        }
        self.is_shared().then(|| {
            format!(
                "only {} CPU ({}) is available: the generator, DUT and receiver share it, so the \
                 DUT cannot be isolated and figures are the whole machine's speed (shared mode)",
                self.tester_cpus.len(),
                format_cpu_list(&self.tester_cpus)
            )
        })
    }
}

impl fmt::Display for CpuPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            CpuMode::Isolated => write!(
                f,
                "isolated: DUT CPUs {}, tester CPUs {}",
                format_cpu_list(&self.dut_cpus),
                format_cpu_list(&self.tester_cpus)
            ),
            CpuMode::Shared => write!(
                f,
                "shared: DUT and tester on CPUs {}",
                format_cpu_list(&self.tester_cpus)
            ),
        }
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`).
pub fn online_cpus() -> Option<Vec<usize>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    parse_cpu_list(text.trim()).ok()
}

/// A CPU set as sysfs writes bitmaps (`rps_cpus`, `xps_cpus`): hexadecimal,
/// in 32-bit groups separated by commas, most significant first.
pub fn mask_text(cpus: &[usize]) -> String {
    let Some(&top) = cpus.iter().max() else {
        return "0".into();
    };
    let mut groups = vec![0u32; top / 32 + 1];
    for &c in cpus {
        groups[c / 32] |= 1 << (c % 32);
    }
    let mut text = format!("{:x}", groups[groups.len() - 1]);
    for g in groups.iter().rev().skip(1) {
        text += &format!(",{g:08x}");
    }
    text
}

/// The CPUs of a sysfs bitmap (`00000000,00000003` or `3`), ascending.
pub fn parse_mask(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for (i, group) in text.trim().rsplit(',').enumerate() {
        let bits = u32::from_str_radix(group, 16).ok()?;
        cpus.extend((0..32).filter(|b| bits & (1 << b) != 0).map(|b| i * 32 + b));
    }
    cpus.sort_unstable();
    Some(cpus)
}

/// The CPUs of the hexadecimal mask a user typed (`2`, `ff,ffffffff`);
/// None for no mask.
pub fn mask_cpus(mask: Option<&str>) -> Result<Option<Vec<usize>>, LabError> {
    let Some(mask) = mask else { return Ok(None) };
    match parse_mask(mask) {
        Some(cpus) if !cpus.is_empty() => Ok(Some(cpus)),
        _ => Err(LabError::Usage(format!(
            "invalid CPU mask '{mask}': use hexadecimal groups of 32 bits, as in 2 or ff,ffffffff"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_masks_as_typed() {
        assert_eq!(mask_cpus(None).unwrap(), None);
        assert_eq!(mask_cpus(Some("6")).unwrap(), Some(vec![1, 2]));
        assert_eq!(mask_cpus(Some("1,0")).unwrap(), Some(vec![32]));
        for bad in ["0", "xyz", ""] {
            let e = mask_cpus(Some(bad)).unwrap_err();
            assert!(e.is_usage());
            assert!(
                e.to_string()
                    .starts_with(&format!("invalid CPU mask '{bad}'")),
                "{e}"
            );
        }
    }

    fn isolated(dut: &[usize], tester: &[usize]) -> CpuPlan {
        CpuPlan {
            mode: CpuMode::Isolated,
            dut_cpus: dut.to_vec(),
            tester_cpus: tester.to_vec(),
        }
    }

    #[test]
    fn defaults() {
        assert_eq!(CpuPlan::default_for(&[0, 1]), isolated(&[1], &[0]));
        assert_eq!(
            CpuPlan::default_for(&[0, 1, 2, 3]),
            isolated(&[3], &[0, 1, 2])
        );
        // 7 CPUs: still one for the DUT; 8: a quarter, 2.
        let seven: Vec<usize> = (0..7).collect();
        assert_eq!(CpuPlan::default_for(&seven).dut_cpus, [6]);
        let eight: Vec<usize> = (0..8).collect();
        assert_eq!(
            CpuPlan::default_for(&eight),
            isolated(&[6, 7], &[0, 1, 2, 3, 4, 5])
        );
        // 18 CPUs: 18 / 4 = 4 for the DUT.
        let eighteen: Vec<usize> = (0..18).collect();
        assert_eq!(CpuPlan::default_for(&eighteen).dut_cpus, [14, 15, 16, 17]);
        // Allowed CPUs need not start at 0 nor be contiguous.
        assert_eq!(CpuPlan::default_for(&[2, 5, 9]), isolated(&[9], &[2, 5]));
        let one = CpuPlan::default_for(&[3]);
        assert!(one.is_shared());
        assert_eq!(
            (one.dut_mask(), one.tester_mask()),
            ("0".into(), "0".into())
        );
        let notice = one.shared_notice().unwrap();
        assert!(
            notice.starts_with("only 1 CPU (3) is available"),
            "{notice}"
        );
        assert!(!notice.contains('\n'));
        assert_eq!(CpuPlan::default_for(&[0, 1]).shared_notice(), None);
    }

    #[test]
    fn chosen_by_the_user() {
        let online: Vec<usize> = (0..4).collect();
        let p = CpuPlan::choose(Some("2,1"), &online, &online).unwrap();
        assert_eq!(p, isolated(&[1, 2], &[0, 3]));
        assert_eq!((p.dut_mask(), p.tester_mask()), ("6".into(), "9".into()));
        assert_eq!(p.to_string(), "isolated: DUT CPUs 1-2, tester CPUs 0,3");
        let p = CpuPlan::choose(None, &online, &[0, 1]).unwrap();
        assert_eq!(p, isolated(&[1], &[0]));
        // `all`: shared mode by choice, on every allowed CPU, no masks.
        let p = CpuPlan::choose(Some("all"), &online, &[2, 0]).unwrap();
        assert_eq!(p, CpuPlan::shared(&[0, 2]));
        assert_eq!((p.dut_mask(), p.tester_mask()), ("0".into(), "0".into()));
        assert_eq!(p.to_string(), "shared: DUT and tester on CPUs 0,2");

        let err = |list: &str, allowed: &[usize]| {
            let e = CpuPlan::choose(Some(list), &online, allowed).unwrap_err();
            assert!(e.is_usage(), "{e}");
            e.to_string()
        };
        assert_eq!(
            err("7", &online),
            "--dut-cpus 7: CPU 7 does not exist (this machine's CPUs: 0-3)"
        );
        assert_eq!(
            err("3", &[0, 1]),
            "--dut-cpus 3: CPU 3 is not allowed for this process (allowed CPUs: 0-1)"
        );
        assert_eq!(
            err("0-3", &online),
            "--dut-cpus 0-3: that leaves no CPU for the generator and receiver (allowed CPUs: 0-3)"
        );
        assert_eq!(
            err("0", &[0]),
            "--dut-cpus 0: that leaves no CPU for the generator and receiver (allowed CPUs: 0)"
        );
        assert!(err("x", &online).contains("'x' is not a CPU number"));
    }

    #[test]
    fn masks() {
        assert_eq!(mask_text(&[]), "0");
        assert_eq!(mask_text(&[1]), "2");
        assert_eq!(mask_text(&[0, 3]), "9");
        assert_eq!(mask_text(&[4, 5, 6, 7]), "f0");
        assert_eq!(mask_text(&[0, 33]), "2,00000001");
        assert_eq!(mask_text(&[64]), "1,00000000,00000000");
        assert_eq!(parse_mask("2"), Some(vec![1]));
        assert_eq!(parse_mask("00000000,00000003\n"), Some(vec![0, 1]));
        assert_eq!(parse_mask("2,00000001"), Some(vec![0, 33]));
        assert_eq!(parse_mask("0"), Some(vec![]));
        assert_eq!(parse_mask("zz"), None);
    }
}
