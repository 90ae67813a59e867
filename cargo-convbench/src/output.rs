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

/// Prints text that may carry hostile content (a record's strings) to stdout. Inside GitHub
/// Actions (`GITHUB_ACTIONS=true`) it is wrapped in `::stop-commands::` with a fresh random
/// token, so no line of it can run a workflow command (`::add-mask::`, `::error::`, ...).
pub fn print_untrusted(text: &str) {
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|value| value == "true") {
        let token = format!("{:032x}", rand::random::<u128>());
        print(&format!("::stop-commands::{token}"));
        print(text);
        print(&format!("::{token}::"));
    } else {
        print(text);
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
