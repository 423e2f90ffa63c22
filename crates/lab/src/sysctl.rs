//! Reading and writing `net.*` sysctls of a network namespace.
//!
//! `/proc/sys/net` shows the network namespace of the thread that opens a
//! file there, so a thread that entered the namespace ([`netns::within`])
//! reads and writes that namespace's values directly: no `sysctl` program and
//! no `ip netns exec` (which also remounts /sys) per value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::netns;
use crate::LabError;

/// One sysctl and the value it should have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// Dotted name, e.g. `net.ipv4.conf.d0.send_redirects`.
    pub key: String,
    pub value: String,
}

impl Setting {
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
        }
    }
}

/// `net.ipv4.ip_forward` → `/proc/sys/net/ipv4/ip_forward`. Only `net.*`
/// keys made of letters, digits, `_` and `-` are accepted, so a key can never
/// name a file outside `/proc/sys/net`.
pub fn path_of(key: &str) -> Result<PathBuf, LabError> {
    let parts: Vec<&str> = key.split('.').collect();
    let ok = parts.len() >= 2
        && parts[0] == "net"
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
    if !ok {
        return Err(LabError::BadName {
            what: "sysctl name",
            value: key.to_string(),
            why: "expected net.<a>.<b>... with letters, digits, '_' and '-'".into(),
        });
    }
    Ok(PathBuf::from("/proc/sys").join(parts.join("/")))
}

/// Writes every setting, in order, inside namespace `ns`.
pub fn write_in(ns: &str, settings: &[Setting]) -> Result<(), LabError> {
    let paths = settings
        .iter()
        .map(|s| path_of(&s.key))
        .collect::<Result<Vec<_>, _>>()?;
    netns::within(ns, || {
        for (setting, path) in settings.iter().zip(&paths) {
            std::fs::write(path, format!("{}\n", setting.value)).map_err(|err| LabError::Sys {
                what: format!("cannot set {}={} in {ns}", setting.key, setting.value),
                err,
            })?;
        }
        Ok(())
    })?
}

/// Reads `keys` inside namespace `ns`; a key that does not exist there (an
/// interface that is gone, an older kernel) maps to `None`.
pub fn read_in(ns: &str, keys: &[String]) -> Result<BTreeMap<String, Option<String>>, LabError> {
    let paths = keys
        .iter()
        .map(|k| path_of(k))
        .collect::<Result<Vec<_>, _>>()?;
    netns::within(ns, || read_paths(keys, &paths))?
}

fn read_paths(
    keys: &[String],
    paths: &[PathBuf],
) -> Result<BTreeMap<String, Option<String>>, LabError> {
    let mut values = BTreeMap::new();
    for (key, path) in keys.iter().zip(paths) {
        let value = match std::fs::read_to_string(path) {
            Ok(text) => Some(text.trim().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(LabError::Sys {
                    what: format!("cannot read {key}"),
                    err,
                })
            }
        };
        values.insert(key.clone(), value);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            path_of("net.ipv4.conf.d0.send_redirects").unwrap(),
            PathBuf::from("/proc/sys/net/ipv4/conf/d0/send_redirects")
        );
        assert_eq!(
            path_of("net.ipv4.ip_forward").unwrap(),
            PathBuf::from("/proc/sys/net/ipv4/ip_forward")
        );
        for bad in [
            "",
            "net",
            "kernel.panic",
            "net..ipv4",
            "net.ipv4./etc",
            "net.ipv4.conf.a/b.x",
            "net.ipv4 .x",
        ] {
            let e = path_of(bad).unwrap_err();
            assert!(e.is_usage(), "{bad}");
        }
    }

    #[test]
    fn reads_this_namespace() {
        // Readable without root: the keys exist in every namespace, and a
        // missing one reads as None.
        let keys = vec![
            "net.ipv4.ip_forward".to_string(),
            "net.ipv4.conf.nosuchif0.forwarding".to_string(),
        ];
        let paths: Vec<PathBuf> = keys.iter().map(|k| path_of(k).unwrap()).collect();
        let v = read_paths(&keys, &paths).unwrap();
        let fwd = v["net.ipv4.ip_forward"].as_deref().unwrap();
        assert!(fwd == "0" || fwd == "1", "{fwd}");
        assert_eq!(v["net.ipv4.conf.nosuchif0.forwarding"], None);
    }
}
