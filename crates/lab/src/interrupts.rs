//! Per-queue interrupt counts of NICs from `/proc/interrupts`, the Linux
//! counterpart of BSDRP's forwarding lab's `vmstat -i | grep igb`.
//!
//! A NIC's queue interrupts are found by name: drivers name their vectors
//! after the interface (`eth0-TxRx-0`), after the device (`virtio2-input.0`),
//! or after the PCI address (`mlx5_comp0@pci:0000:03:00.0`). veth and other
//! virtual interfaces have no device and no interrupts at all.

use serde::{Deserialize, Serialize};

use crate::{netns, LabError};

/// One line of `/proc/interrupts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqLine {
    /// `38`, or `NMI`, `LOC`, ... for the architecture's counters.
    pub irq: String,
    /// Count per CPU, in CPU order.
    pub per_cpu: Vec<u64>,
    /// The rest of the line with its spacing collapsed: the chip, the
    /// hardware IRQ and type, and the handlers' names
    /// (`PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0`).
    pub desc: String,
}

impl IrqLine {
    /// The handlers' names: the last word of the description.
    pub fn name(&self) -> &str {
        self.desc.rsplit(' ').next().unwrap_or("")
    }
}

/// Every line of a `/proc/interrupts` text. The header gives the number of
/// CPU columns; lines with fewer counts (`ERR:`) keep what they have.
pub fn parse_interrupts(text: &str) -> Vec<IrqLine> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| {
        h.split_whitespace()
            .filter(|w| w.starts_with("CPU"))
            .count()
    });
    lines
        .filter_map(|line| {
            let (irq, rest) = line.split_once(':')?;
            let mut words = rest.split_whitespace().peekable();
            let mut per_cpu = Vec::with_capacity(cpus);
            while per_cpu.len() < cpus {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(n) => {
                        per_cpu.push(n);
                        words.next();
                    }
                    None => break,
                }
            }
            Some(IrqLine {
                irq: irq.trim().to_string(),
                per_cpu,
                desc: words.collect::<Vec<_>>().join(" "),
            })
        })
        .collect()
}

/// Reads `/proc/interrupts` now.
pub fn read_interrupts() -> Result<Vec<IrqLine>, LabError> {
    let text = std::fs::read_to_string("/proc/interrupts").map_err(|err| LabError::Sys {
        what: "cannot read /proc/interrupts".into(),
        err,
    })?;
    Ok(parse_interrupts(&text))
}

/// How to recognise one NIC's interrupt lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NicIrqMatch {
    pub iface: String,
    /// The device's sysfs name (`0000:03:00.0`, `virtio2`), when it has one.
    pub device: Option<String>,
    /// The PCI address of the device or of its parent (virtio sits on a PCI
    /// function).
    pub pci: Option<String>,
}

impl NicIrqMatch {
    /// True when `line` is one of this NIC's interrupts.
    pub fn matches(&self, line: &IrqLine) -> bool {
        let name = line.name();
        let starts_word = |w: &str| {
            name == w
                || name
                    .strip_prefix(w)
                    .is_some_and(|r| r.starts_with(['-', '@', ':', '.']))
        };
        if starts_word(&self.iface) {
            return true;
        }
        if let Some(dev) = &self.device {
            if starts_word(dev) || line.desc.contains(&format!("@pci:{dev}")) {
                return true;
            }
        }
        // Only queue vectors named after the device itself: a PCI address in
        // the chip column alone may be shared by the config vector.
        self.pci
            .as_ref()
            .is_some_and(|pci| name.contains(&format!("@pci:{pci}")))
    }
}

/// A sysfs device path (`.../0000:00:03.0/virtio2`) as (device name, PCI
/// address of it or of its nearest PCI parent).
fn device_names(path: &str) -> (Option<String>, Option<String>) {
    let parts: Vec<&str> = path.trim().split('/').filter(|p| !p.is_empty()).collect();
    let device = parts.last().map(|s| s.to_string());
    let is_pci = |p: &&&str| {
        let b = p.as_bytes();
        p.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
    };
    let pci = parts.iter().rev().find(is_pci).map(|s| s.to_string());
    (device, pci)
}

/// How to find `iface`'s interrupts, or `None` when it has no device
/// (veth, bridges, dummy: nothing raises interrupts for them). `ns` is the
/// interface's network namespace (`None`: this one); sysfs is read through
/// `ip netns exec`, which mounts the namespace's own `/sys`.
pub fn nic_irq_match(ns: Option<&str>, iface: &str) -> Result<Option<NicIrqMatch>, LabError> {
    let link = format!("/sys/class/net/{iface}/device");
    let target = match ns {
        None => match std::fs::canonicalize(&link) {
            Ok(p) => Some(p.to_string_lossy().into_owned()),
            Err(_) => None,
        },
        Some(ns) => {
            // `readlink -e` fails (and prints nothing) when there is no device.
            let script = format!("readlink -e {link} 2>/dev/null; true");
            let out = netns::run_in(ns, &["sh", "-c", &script])?;
            let out = out.trim();
            (!out.is_empty() && out != link).then(|| out.to_string())
        }
    };
    let Some(target) = target else {
        return Ok(None);
    };
    let (device, pci) = device_names(&target);
    Ok(Some(NicIrqMatch {
        iface: iface.to_string(),
        device,
        pci,
    }))
}

/// One interrupt line's counts over an interval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqDelta {
    pub iface: String,
    pub irq: String,
    pub name: String,
    pub total: u64,
    pub per_cpu: Vec<u64>,
}

/// The interrupts of the NICs in `nics` between two readings, one entry per
/// matching line, in `/proc/interrupts` order.
pub fn deltas(nics: &[NicIrqMatch], before: &[IrqLine], after: &[IrqLine]) -> Vec<IrqDelta> {
    let mut out = Vec::new();
    for a in after {
        let Some(nic) = nics.iter().find(|n| n.matches(a)) else {
            continue;
        };
        let b = before.iter().find(|b| b.irq == a.irq);
        let per_cpu: Vec<u64> = a
            .per_cpu
            .iter()
            .enumerate()
            .map(|(i, &n)| n.saturating_sub(b.and_then(|b| b.per_cpu.get(i)).copied().unwrap_or(0)))
            .collect();
        out.push(IrqDelta {
            iface: nic.iface.clone(),
            irq: a.irq.clone(),
            name: a.name().to_string(),
            total: per_cpu.iter().sum(),
            per_cpu,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Excerpt of a real /proc/interrupts of a 2-CPU virtual machine whose
    // eth0 is virtio2 on PCI 0000:00:03.0, with an igb-style and an
    // mlx5-style line added.
    const TEXT: &str = "           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config
 38:          0       6551 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:       5986          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
 41:       3394          0 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx
 60:        100        200 PCI-MSI 524288-edge      igb2-TxRx-0
 61:         10         20 PCI-MSI 524289-edge      igb2
 70:          5          6 PCI-MSI 1048576-edge      mlx5_comp0@pci:0000:03:00.0
NMI:          0          0   Non-maskable interrupts
LOC:     520865     547074   Local timer interrupts
ERR:          0
";

    #[test]
    fn parses_lines() {
        let v = parse_interrupts(TEXT);
        assert_eq!(v.len(), 11);
        assert_eq!(v[2].irq, "38");
        assert_eq!(v[2].per_cpu, vec![0, 6551]);
        assert_eq!(v[2].desc, "PCI-MSIX-0000:00:03.0 1-edge virtio2-input.0");
        assert_eq!(v[2].name(), "virtio2-input.0");
        assert_eq!(v[10].irq, "ERR");
        assert_eq!(v[10].per_cpu, vec![0]);
        assert_eq!(v[9].desc, "Local timer interrupts");
    }

    #[test]
    fn device_paths() {
        assert_eq!(
            device_names("/sys/devices/pci0000:00/0000:00:03.0/virtio2"),
            (Some("virtio2".into()), Some("0000:00:03.0".into()))
        );
        assert_eq!(
            device_names("/sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0\n"),
            (Some("0000:03:00.0".into()), Some("0000:03:00.0".into()))
        );
    }

    #[test]
    fn finds_each_nics_queues() {
        let lines = parse_interrupts(TEXT);
        let names = |m: &NicIrqMatch| -> Vec<String> {
            lines
                .iter()
                .filter(|l| m.matches(l))
                .map(|l| l.name().to_string())
                .collect()
        };
        let virtio = NicIrqMatch {
            iface: "eth0".into(),
            device: Some("virtio2".into()),
            pci: Some("0000:00:03.0".into()),
        };
        assert_eq!(
            names(&virtio),
            ["virtio2-config", "virtio2-input.0", "virtio2-output.0"]
        );
        let igb = NicIrqMatch {
            iface: "igb2".into(),
            device: Some("0000:01:00.2".into()),
            pci: Some("0000:01:00.2".into()),
        };
        assert_eq!(names(&igb), ["igb2-TxRx-0", "igb2"]);
        let mlx = NicIrqMatch {
            iface: "enp3s0f0np0".into(),
            device: Some("0000:03:00.0".into()),
            pci: Some("0000:03:00.0".into()),
        };
        assert_eq!(names(&mlx), ["mlx5_comp0@pci:0000:03:00.0"]);
    }

    #[test]
    fn deltas_per_line() {
        let before = parse_interrupts(TEXT);
        let after_text = TEXT.replace(" 38:          0       6551", " 38:          7       6600");
        let after = parse_interrupts(&after_text);
        let virtio = NicIrqMatch {
            iface: "eth0".into(),
            device: Some("virtio2".into()),
            pci: None,
        };
        let d = deltas(&[virtio], &before, &after);
        assert_eq!(d.len(), 3);
        assert_eq!(
            d[1],
            IrqDelta {
                iface: "eth0".into(),
                irq: "38".into(),
                name: "virtio2-input.0".into(),
                total: 56,
                per_cpu: vec![7, 49],
            }
        );
        assert_eq!(d[0].total, 0);
    }

    #[test]
    fn veth_has_no_device() {
        // `lo` is virtual in every namespace.
        assert_eq!(nic_irq_match(None, "lo").unwrap(), None);
    }
}
