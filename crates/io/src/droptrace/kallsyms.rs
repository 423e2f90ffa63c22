//! Kernel text addresses to function names, from `/proc/kallsyms` (the
//! addresses read as zero without root or CAP_SYSLOG; then nothing
//! resolves and locations print as addresses).

/// The kernel's symbol table.
pub const KALLSYMS: &str = "/proc/kallsyms";

/// The text symbols, sorted by address.
#[derive(Debug, Default)]
pub struct Kallsyms {
    syms: Vec<(u64, String)>,
}

impl Kallsyms {
    /// Reads [`KALLSYMS`].
    pub fn load() -> Result<Kallsyms, String> {
        let text = std::fs::read_to_string(KALLSYMS)
            .map_err(|e| format!("cannot read {KALLSYMS}: {}", crate::error::os_message(&e)))?;
        Ok(Kallsyms::parse(&text))
    }

    /// Parses kallsyms text: `address type name [module]` per line; only
    /// text symbols (type t/T) with a non-zero address are kept.
    pub fn parse(text: &str) -> Kallsyms {
        let mut syms: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut f = line.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let name = f.next()?;
                (addr != 0 && (kind == "t" || kind == "T")).then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort();
        Kallsyms { syms }
    }

    /// The function holding `addr` and the offset into it; `None` below
    /// the first symbol or when no addresses were readable.
    pub fn resolve(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self.syms.partition_point(|(a, _)| *a <= addr);
        let (start, name) = self.syms.get(i.checked_sub(1)?)?;
        Some((name.as_str(), addr - start))
    }

    /// The function name of `addr`, or the address in hex.
    pub fn name(&self, addr: u64) -> String {
        match self.resolve(addr) {
            Some((name, _)) => name.to_string(),
            None => format!("{addr:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
ffffffff81e3cff0 t kfree_skbmem
ffffffff81000000 T _text
ffffffff81e3fcf0 T kfree_skb_list_reason
ffffffff82000000 D some_data
ffffffffc0001000 t nft_do_chain\t[nf_tables]
";

    #[test]
    fn resolves_addresses_inside_functions() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(k.resolve(0xffffffff81e3cff0), Some(("kfree_skbmem", 0)));
        assert_eq!(k.resolve(0xffffffff81e3d000), Some(("kfree_skbmem", 0x10)));
        // Data symbols are not functions: this stays in the function before.
        assert_eq!(
            k.resolve(0xffffffff82000010),
            Some(("kfree_skb_list_reason", 0x2000010 - 0x1e3fcf0))
        );
        assert_eq!(k.resolve(0xffffffffc0001234), Some(("nft_do_chain", 0x234)));
        assert_eq!(k.resolve(0x1000), None);
        assert_eq!(k.name(0x1000), "0x1000");
        assert_eq!(k.name(0xffffffffc0001234), "nft_do_chain");
    }

    #[test]
    fn hidden_addresses_resolve_to_nothing() {
        let k = Kallsyms::parse("0000000000000000 T _text\n0000000000000000 t nft_do_chain\n");
        assert_eq!(k.resolve(0xffffffff81000000), None);
    }
}
