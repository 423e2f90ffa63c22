//! What names a record: the hash of the files it comes from, and its
//! label.

use sha2::{Digest, Sha256};

use crate::HistoryError;

/// The hex SHA-256 of `parts`, each preceded by its length (so that
/// moving bytes from one part to the next changes the hash).
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The longest label kept.
pub const MAX_LABEL: usize = 200;

/// A label names a kernel, firmware or ruleset: one line of printable
/// text.
pub fn check_label(label: &str) -> Result<(), HistoryError> {
    let bad = |why: &str| {
        HistoryError::Usage(format!("invalid label '{}': {why}", label.escape_default()))
    };
    if label.trim().is_empty() {
        return Err(bad("give some text, such as a kernel release"));
    }
    if label.chars().any(char::is_control) {
        return Err(bad("control characters are not allowed"));
    }
    if label.len() > MAX_LABEL {
        return Err(bad(&format!("longer than {MAX_LABEL} bytes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_text() {
        // printf '\x03\0\0\0\0\0\0\0abc' | sha256sum
        assert_eq!(
            sha256_hex(&[b"abc"]),
            "ce91dc5eec0139adf091900d225971d6ad246a845bad791b5693a9d0d55dd391"
        );
    }

    #[test]
    fn labels() {
        assert!(check_label("6.1.0-18-amd64").is_ok());
        assert!(check_label("r296435").is_ok());
        assert!(check_label("").unwrap_err().is_usage());
        assert!(check_label("a\nb")
            .unwrap_err()
            .to_string()
            .contains("a\\nb"));
        assert!(check_label(&"x".repeat(201)).is_err());
    }
}
