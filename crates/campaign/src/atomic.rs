//! Writing a results file so that a reader (or a resumed campaign) sees
//! either the old content or the new one, never half of it: write a
//! temporary file in the same directory, fsync it, rename it over the
//! target, fsync the directory.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::CampaignError;

/// Prefix of the temporary files, so that leftovers of a killed process are
/// recognised (and never taken for results). tempfile's own default.
pub const TEMP_PREFIX: &str = ".tmp";

/// Replaces `path` with `bytes` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CampaignError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // 0666 less the umask, as any file the user creates: tempfile's own
    // 0600 would hide the results from everyone but their writer.
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        // A missing or unreadable folder is said plainly (tempfile's message
        // would name its random file instead).
        .map_err(|e| CampaignError::file(dir, std::fs::metadata(dir).err().unwrap_or(e)))?;
    // Through the File itself: NamedTempFile's own writes wrap errors with
    // the temporary file's name, which would end up in the message (a
    // full disk must read "DIR: No space left on device").
    tmp.as_file()
        .write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| CampaignError::file(dir, e))?;
    // On failure the temporary file is removed when the error drops it.
    tmp.persist(path)
        .map_err(|e| CampaignError::file(path, e.error))?;
    // The rename itself is durable only once the directory is.
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| CampaignError::file(dir, e))
}

/// Removes temporary files a killed process left in `dir`.
pub fn remove_leftovers(dir: &Path) -> Result<usize, CampaignError> {
    let mut n = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| CampaignError::file(dir, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            std::fs::remove_file(entry.path()).map_err(|e| CampaignError::file(entry.path(), e))?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_get_the_mode_of_any_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"{}").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), mode(&plain));
    }

    #[test]
    fn replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        write_atomic(&p, b"one\n").unwrap();
        write_atomic(&p, b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[test]
    fn leftovers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".tmpX1y2"), "half").unwrap();
        std::fs::write(dir.path().join("kept.jsonl"), "{}").unwrap();
        assert_eq!(remove_leftovers(dir.path()).unwrap(), 1);
        assert!(dir.path().join("kept.jsonl").exists());
    }

    #[test]
    fn errors_name_the_path() {
        let e = write_atomic(Path::new("/nonexistent-dir-pktlab/x"), b"x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/nonexistent-dir-pktlab: No such file or directory"
        );
    }
}
