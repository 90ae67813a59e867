//! Writing outputs: stdout, and files written atomically (temporary file, then rename).

use convbench::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Prints to stdout, ignoring a closed pipe (`| head`).
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
}

/// Fails early when `path` cannot be written, before any long work.
pub fn check_writable(path: &Path) -> Result<()> {
    let dir = parent(path);
    let probe = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        Error::InvalidInput(format!(
            "cannot write {}: {e}; choose another --out path",
            path.display()
        ))
    })?;
    drop(probe);
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes `text` to `path` atomically, as the baseline store writes baselines: a reader sees
/// the old file or the new one, never half; the data is on disk (fsync) before the rename, and
/// the file gets the usual mode (0666 less the umask), not a temporary file's 0600.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    convbench::baseline::write_atomically(path, text.as_bytes())
}
