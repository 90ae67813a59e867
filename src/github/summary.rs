//! The job summary: Markdown appended to the file named by `$GITHUB_STEP_SUMMARY`.

use super::GitHubError;
use std::io::Write;
use std::path::Path;

/// Appends `markdown` to the job summary file at `path`, creating it if needed, and ends it
/// with a newline. A file that cannot be written is [`GitHubError::StepSummary`], naming the
/// variable: callers report it as a warning, since the summary never decides the gate.
///
/// GitHub gives every step its own summary file and shows them in step order, so appending
/// (never truncating) is what keeps the summaries of earlier steps, as GitHub documents.
pub fn write_step_summary(path: &Path, markdown: &str) -> crate::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| unwritable(path, source))?;
    let mut text = String::with_capacity(markdown.len() + 1);
    text.push_str(markdown);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .map_err(|source| unwritable(path, source))
}

fn unwritable(path: &Path, source: std::io::Error) -> crate::Error {
    GitHubError::StepSummary {
        path: path.display().to_string(),
        source,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_keeps_earlier_content() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("summary.md");
        std::fs::write(&path, "# earlier step\n").expect("seed file");
        write_step_summary(&path, "first").expect("append");
        write_step_summary(&path, "second\n").expect("append");
        let text = std::fs::read_to_string(&path).expect("read back");
        assert_eq!(text, "# earlier step\nfirst\nsecond\n");
    }

    #[test]
    fn a_missing_directory_names_the_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("missing").join("summary.md");
        let error = write_step_summary(&path, "x").expect_err("no such directory");
        assert!(error.to_string().contains("summary.md"), "{error}");
        assert!(error.to_string().contains("GITHUB_STEP_SUMMARY"), "{error}");
    }
}
