//! Writing outputs: stdout, and files written atomically (temporary file, then rename).

use convbench::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Exit code when a regression was found (the gate failed); the others are
/// [`convbench::ErrorKind::exit_code`]'s.
pub const EXIT_REGRESSION: u8 = 1;

/// The first error writing stdout, other than a closed pipe; [`stdout_error`] takes it.
static STDOUT_ERROR: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// Prints to stdout, ignoring a closed pipe (`| head`: the reader wanted no more). Any other
/// failure (a full disk, `> /dev/full`, an I/O error) is kept for [`stdout_error`], so the run
/// goes on and keeps what it writes elsewhere, but does not end with exit 0 having lost its
/// output.
pub fn print(text: &str) {
    let text = printable(text);
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        })
        .and_then(|()| out.flush());
    if let Err(error) = written {
        keep_stdout_error(error);
    }
}

/// `text` with every control character but newline and tab replaced by `\u{fffd}`: a record's
/// or a configuration's strings could otherwise carry terminal escape sequences (recolouring,
/// moving the cursor, retitling the window) into a user's terminal. convbench's own output has
/// no other control characters, and JSON escapes its own.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let hostile = |ch: char| ch.is_control() && ch != '\n' && ch != '\t';
    if text.contains(hostile) {
        text.replace(hostile, "\u{fffd}").into()
    } else {
        text.into()
    }
}

/// Keeps the first stdout error that is not a closed pipe.
fn keep_stdout_error(error: std::io::Error) {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        return;
    }
    let mut first = STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    first.get_or_insert(error);
}

/// The first failure to write stdout during this run (a closed pipe is not one), after
/// flushing what is buffered; `None` when everything printed reached it.
pub fn stdout_error() -> Option<std::io::Error> {
    if let Err(error) = std::io::stdout().lock().flush() {
        keep_stdout_error(error);
    }
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
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

/// Fails when `out`, the record a run writes, is one of the files the run reads: the
/// workspace's manifest, configuration and kernel sources, `--shapes`, or a file of
/// `--shaders` (checked before anything is measured, so nothing is lost either way).
pub fn refuse_out_over_inputs(
    out: &Path,
    run: &convbench::cli::RunArgs,
    workspace: &convbench::config::Workspace,
) -> Result<()> {
    let mut inputs = workspace.input_files();
    inputs.extend(run.selection.shapes.clone());
    if let Some(dir) = &run.device.shaders
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        inputs.extend(entries.filter_map(|entry| entry.ok()).map(|entry| entry.path()));
    }
    convbench::fs::refuse_overwriting_an_input(out, &inputs).map_err(|error| error.context("--out"))
}

/// Writes `text` to `path` atomically (see [`convbench::fs::write_atomically`]): a reader sees
/// the old file or the new one, never half, and only a regular file or a new path is written.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    convbench::fs::write_atomically(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_but_newline_and_tab_are_replaced() {
        assert_eq!(printable("a\tb\nc"), "a\tb\nc");
        assert_eq!(printable("\u{1b}[31mred\u{1b}[0m"), "\u{fffd}[31mred\u{fffd}[0m");
        assert_eq!(printable("x\ry\u{7f}\u{9b}z"), "x\u{fffd}y\u{fffd}\u{fffd}z");
    }
}
