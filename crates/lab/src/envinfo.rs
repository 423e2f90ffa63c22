//! Facts about the machine a benchmark ran on: kernel, CPU model, NIC
//! drivers. Results without them cannot be compared later ("before and after
//! a kernel change").

use serde::{Deserialize, Serialize};

use crate::{netns, runner, LabError};

/// The host's kernel and CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// `uname -v`: the build, which tells two builds of one release apart.
    pub kernel_build: String,
    /// `PRETTY_NAME` of `/etc/os-release`.
    pub os: Option<String>,
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub cpus: usize,
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The first `model name` of a `/proc/cpuinfo` text (x86), or its
/// `Model`/`cpu model` line on other architectures.
pub fn cpu_model_of(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        let key = key.trim();
        (key == "model name" || key == "Model" || key == "cpu model")
            .then(|| value.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// `PRETTY_NAME` of an os-release text.
pub fn os_pretty_name(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|line| {
        let value = line.strip_prefix("PRETTY_NAME=")?;
        Some(value.trim().trim_matches('"').to_string())
    })
}

/// This host's facts.
pub fn host_facts() -> HostFacts {
    HostFacts {
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        kernel_build: read_trimmed("/proc/sys/kernel/version"),
        os: std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| os_pretty_name(&t)),
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpu_model_of(&t)),
        cpus: crate::cpuload::cpu_count().unwrap_or(0),
    }
}

/// One NIC's driver, as `ethtool -i` reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicFacts {
    pub ns: Option<String>,
    pub iface: String,
    pub driver: Option<String>,
    pub driver_version: Option<String>,
    pub firmware: Option<String>,
    pub bus_info: Option<String>,
}

/// Fills the driver fields from `ethtool -i` output; empty values stay `None`.
pub fn parse_ethtool_i(text: &str, facts: &mut NicFacts) {
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let value = (!value.is_empty()).then(|| value.to_string());
        match key.trim() {
            "driver" => facts.driver = value,
            "version" => facts.driver_version = value,
            "firmware-version" => facts.firmware = value,
            "bus-info" => facts.bus_info = value,
            _ => {}
        }
    }
}

/// `iface`'s driver facts, read with `ethtool -i` in namespace `ns` (or
/// here), falling back to the sysfs driver link when ethtool is missing.
pub fn nic_facts(ns: Option<&str>, iface: &str) -> Result<NicFacts, LabError> {
    let mut facts = NicFacts {
        ns: ns.map(str::to_string),
        iface: iface.to_string(),
        ..NicFacts::default()
    };
    let out = match ns {
        Some(ns) => netns::run_in(ns, &["ethtool", "-i", iface]),
        None => match runner::find_program(
            "ethtool",
            std::env::var_os("PATH").as_deref(),
            &["/usr/sbin", "/sbin"],
        ) {
            Some(path) => runner::run(&path, "ethtool", &["-i", iface]),
            None => Err(LabError::MissingProgram {
                program: "ethtool",
                package: "ethtool",
            }),
        },
    };
    match out {
        Ok(text) => parse_ethtool_i(&text, &mut facts),
        Err(_) if ns.is_none() => {
            let link = format!("/sys/class/net/{iface}/device/driver");
            facts.driver = std::fs::read_link(link)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        }
        Err(e) => return Err(e),
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_models() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Processor @ 2.00GHz\n";
        assert_eq!(
            cpu_model_of(x86).as_deref(),
            Some("Intel(R) Xeon(R) Processor @ 2.00GHz")
        );
        let arm =
            "processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(
            cpu_model_of(arm).as_deref(),
            Some("Raspberry Pi 4 Model B Rev 1.4")
        );
        assert_eq!(cpu_model_of("processor: 0\n"), None);
    }

    #[test]
    fn os_release() {
        let t = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(
            os_pretty_name(t).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }

    #[test]
    fn ethtool_i() {
        // `ethtool -i` of a veth and of an igb port.
        let mut f = NicFacts::default();
        parse_ethtool_i(
            "driver: veth\nversion: 1.0\nfirmware-version: \nexpansion-rom-version: \nbus-info: \nsupports-statistics: yes\n",
            &mut f,
        );
        assert_eq!(f.driver.as_deref(), Some("veth"));
        assert_eq!(f.driver_version.as_deref(), Some("1.0"));
        assert_eq!(f.firmware, None);
        assert_eq!(f.bus_info, None);
        let mut f = NicFacts::default();
        parse_ethtool_i(
            "driver: igb\nversion: 6.1.0-18-amd64\nfirmware-version: 3.29, 0x8000021d\nbus-info: 0000:01:00.2\n",
            &mut f,
        );
        assert_eq!(f.driver.as_deref(), Some("igb"));
        assert_eq!(f.firmware.as_deref(), Some("3.29, 0x8000021d"));
        assert_eq!(f.bus_info.as_deref(), Some("0000:01:00.2"));
    }

    #[test]
    fn this_host() {
        let h = host_facts();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
    }
}
