//! Writing outputs: stdout, and files written atomically (temporary file, then rename).

use convbench::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Exit code when a regression was found (the gate failed); the others are
/// [`convbench::ErrorKind::exit_code`]'s.
pub const EXIT_REGRESSION: u8 = 1;

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

/// Fails early when `path`, given as `--out`, cannot be written, before any long work: a
/// folder, a device, a FIFO, a symbolic link, a name too long or a folder that is missing or
/// read-only is an input error (exit 2) naming the path and what to pass instead.
pub fn check_writable(path: &Path) -> Result<()> {
    check_output("--out", path)
}

/// [`check_writable`] for the output named by `flag`: a path that cannot be written says
/// `{flag}: ...`; an I/O error names its own path.
pub fn check_output(flag: &str, path: &Path) -> Result<()> {
    convbench::fs::check_output_path(path).map_err(|error| match error {
        Error::File(_) => error.context(flag),
        other => other,
    })
}

/// Writes `text` to `path` atomically (see [`convbench::fs::write_atomically`]): a reader sees
/// the old file or the new one, never half, and only a regular file or a new path is written.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    convbench::fs::write_atomically(path, text.as_bytes())
}
