//! The names of the kernel's drop reasons, read from its own BTF
//! (`/sys/kernel/btf/vmlinux`): the enumerators of `enum skb_drop_reason`,
//! so that a reason added by a newer kernel is named as that kernel names
//! it. aya parses BTF too, but does not expose enumerators; this walk reads
//! only what it needs (the BTF format is documented in the kernel's
//! Documentation/bpf/btf.rst).

use std::collections::BTreeMap;

/// The vmlinux BTF of the running kernel.
pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

const MAGIC: u16 = 0xeb9f;
const KIND_ENUM: u32 = 6;
const KIND_ENUM64: u32 = 19;
/// The prefix every enumerator of `skb_drop_reason` carries.
const PREFIX: &str = "SKB_DROP_REASON_";

/// Reason number to name (without `SKB_DROP_REASON_`: `NETFILTER_DROP`)
/// from the running kernel; an empty map where the kernel has no such enum
/// (before Linux 5.17).
pub fn drop_reasons() -> Result<BTreeMap<u32, String>, String> {
    let data = std::fs::read(VMLINUX_BTF).map_err(|e| {
        format!(
            "cannot read {VMLINUX_BTF}: {}",
            crate::error::os_message(&e)
        )
    })?;
    enum_values(&data, "skb_drop_reason")
        .map(|values| {
            values
                .into_iter()
                .map(|(name, v)| {
                    (
                        v as u32,
                        name.strip_prefix(PREFIX).unwrap_or(&name).to_string(),
                    )
                })
                .collect()
        })
        .map_err(|e| format!("{VMLINUX_BTF}: {e}"))
}

/// The enumerators of the enum (or enum64) called `wanted` in the BTF blob
/// `data`, in declaration order; empty if there is none.
pub fn enum_values(data: &[u8], wanted: &str) -> Result<Vec<(String, u64)>, String> {
    let u16_at = |off: usize| -> Result<u16, String> {
        data.get(off..off + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| "truncated".to_string())
    };
    let u32_at = |off: usize| -> Result<u32, String> {
        data.get(off..off + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| "truncated".to_string())
    };
    if u16_at(0)? != MAGIC {
        return Err("not little-endian BTF".to_string());
    }
    let hdr_len = u32_at(4)? as usize;
    let type_off = u32_at(8)? as usize;
    let type_len = u32_at(12)? as usize;
    let str_off = u32_at(16)? as usize;
    let str_len = u32_at(20)? as usize;
    let types = hdr_len + type_off;
    let strings = data
        .get(hdr_len + str_off..hdr_len + str_off + str_len)
        .ok_or_else(|| "string section out of bounds".to_string())?;
    let name_at = |off: u32| -> String {
        let s = strings.get(off as usize..).unwrap_or_default();
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        String::from_utf8_lossy(&s[..end]).into_owned()
    };
    let mut pos = types;
    let end = types + type_len;
    while pos + 12 <= end {
        let name_off = u32_at(pos)?;
        let info = u32_at(pos + 4)?;
        let vlen = (info & 0xffff) as usize;
        let kind = (info >> 24) & 0x1f;
        let body = pos + 12;
        // The bytes after the 12-byte common part, by kind.
        let item = match kind {
            1 | 14 | 17 => 4,
            3 => 12,
            4 | 5 | 15 | 19 => 12 * vlen,
            6 | 13 => 8 * vlen,
            2 | 7..=12 | 16 | 18 => 0,
            k => return Err(format!("unknown BTF kind {k}")),
        };
        if (kind == KIND_ENUM || kind == KIND_ENUM64) && name_at(name_off) == wanted {
            let step = if kind == KIND_ENUM { 8 } else { 12 };
            let mut out = Vec::with_capacity(vlen);
            for i in 0..vlen {
                let e = body + i * step;
                let value = if kind == KIND_ENUM {
                    u64::from(u32_at(e + 4)?)
                } else {
                    u64::from(u32_at(e + 4)?) | (u64::from(u32_at(e + 8)?) << 32)
                };
                out.push((name_at(u32_at(e)?), value));
            }
            return Ok(out);
        }
        pos = body + item;
    }
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An enum to put in a test blob: name, enum64?, enumerators.
    type EnumSpec<'a> = (&'a str, bool, &'a [(&'a str, u64)]);

    /// A BTF blob with an int, a struct of one member, and the enums given,
    /// built by hand from the format.
    fn blob(enums: &[EnumSpec<'_>]) -> Vec<u8> {
        let mut strings = vec![0u8];
        let mut add = |s: &str| {
            let off = strings.len() as u32;
            strings.extend_from_slice(s.as_bytes());
            strings.push(0);
            off
        };
        let mut types = Vec::new();
        let put = |v: u32, t: &mut Vec<u8>| t.extend_from_slice(&v.to_le_bytes());
        // int "int", 4 bytes, then its u32 encoding word.
        let int = add("int");
        for v in [int, 1 << 24, 4, 32] {
            put(v, &mut types);
        }
        // struct "s" { int a; }
        let s = add("s");
        let a = add("a");
        for v in [s, (4 << 24) | 1, 4, a, 1, 0] {
            put(v, &mut types);
        }
        for (name, wide, items) in enums {
            let n = add(name);
            let kind = if *wide { 19 } else { 6 };
            for v in [n, (kind << 24) | items.len() as u32, 4] {
                put(v, &mut types);
            }
            for (iname, value) in items.iter() {
                put(add(iname), &mut types);
                put(*value as u32, &mut types);
                if *wide {
                    put((*value >> 32) as u32, &mut types);
                }
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&[1, 0]);
        for v in [
            24u32,
            0,
            types.len() as u32,
            types.len() as u32,
            strings.len() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&types);
        out.extend_from_slice(&strings);
        out
    }

    #[test]
    fn finds_the_named_enum_past_other_types() {
        let data = blob(&[
            ("other", false, &[("X", 7)]),
            (
                "skb_drop_reason",
                false,
                &[
                    ("SKB_NOT_DROPPED_YET", 0),
                    ("SKB_DROP_REASON_NETFILTER_DROP", 11),
                ],
            ),
        ]);
        assert_eq!(
            enum_values(&data, "skb_drop_reason").unwrap(),
            vec![
                ("SKB_NOT_DROPPED_YET".to_string(), 0),
                ("SKB_DROP_REASON_NETFILTER_DROP".to_string(), 11)
            ]
        );
        assert_eq!(
            enum_values(&data, "other").unwrap(),
            vec![("X".to_string(), 7)]
        );
        assert!(enum_values(&data, "missing").unwrap().is_empty());
    }

    #[test]
    fn reads_enum64_values() {
        let data = blob(&[("wide", true, &[("BIG", (5 << 32) | 3)])]);
        assert_eq!(
            enum_values(&data, "wide").unwrap(),
            vec![("BIG".to_string(), (5 << 32) | 3)]
        );
    }

    #[test]
    fn refuses_what_is_not_btf() {
        assert!(enum_values(b"\x7fELF............................", "x").is_err());
        assert!(enum_values(&[0x9f, 0xeb, 1], "x").is_err());
    }

    /// The running kernel's enum names the reasons the faults give.
    #[test]
    fn the_running_kernel_names_its_reasons() {
        let reasons = drop_reasons().expect("kernel BTF");
        let names: Vec<&str> = reasons.values().map(String::as_str).collect();
        for want in [
            "NOT_SPECIFIED",
            "NETFILTER_DROP",
            "NEIGH_FAILED",
            "NEIGH_QUEUEFULL",
            "QDISC_DROP",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        // SKB_DROP_REASON_NOT_SPECIFIED has been 2 since Linux 6.0.
        assert_eq!(reasons.get(&2).map(String::as_str), Some("NOT_SPECIFIED"));
    }
}
