//! The commands the README and `docs/` show are commands this binary takes, and the outputs they
//! show of the commands whose output does not depend on the machine are what it prints.
//!
//! - Every `cargo convbench ...` line of a fenced block (with or without a `$ ` prompt, joined
//!   across `\` continuations, without its `# comment`, a redirection or a trailing
//!   `(abridged ...)` note) is run with `--help` appended. clap checks every argument before the
//!   `--help` as it reads it, so an unknown flag or a value the flag no longer takes fails the
//!   test, naming the file and line, while nothing is run.
//! - A block that shows `$ cargo convbench kernels` or `kernels --contract OP` must show lines of
//!   today's output, in its order (a line that begins with `...` marks what a block leaves out).

use crate::support::convbench;
use std::path::{Path, PathBuf};

/// A command shown in the docs: where, and its words after `cargo convbench`.
struct Shown {
    place: String,
    words: Vec<String>,
    /// The lines shown under it, up to the end of the block, when it has a `$ ` prompt.
    output: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The command of one logical line, or `None` if the line shows no `cargo convbench` command.
fn command_words(line: &str) -> Option<Vec<String>> {
    let line = line.trim_start().strip_prefix("$ ").unwrap_or(line.trim_start());
    let rest = line.strip_prefix("cargo convbench ")?;
    // What follows the command on its line is prose for the reader, not arguments.
    let mut end = rest.len();
    for marker in [" #", " >", "   ("] {
        if let Some(at) = rest.find(marker) {
            end = end.min(at);
        }
    }
    shlex::split(rest[..end].trim()).filter(|words| !words.is_empty())
}

fn shown_commands() -> Vec<Shown> {
    let mut shown = Vec::new();
    for path in documents() {
        let text = std::fs::read_to_string(&path).expect("the document is readable");
        let name = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        let mut in_block = false;
        let mut pending: Option<(usize, String)> = None;
        let mut current: Option<Shown> = None;
        for (index, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
                shown.extend(current.take());
                continue;
            }
            if !in_block {
                continue;
            }
            let (start, joined) = match pending.take() {
                Some((start, head)) => (start, format!("{head} {}", line.trim())),
                None => (index + 1, line.to_string()),
            };
            if let Some(head) = joined.strip_suffix('\\') {
                pending = Some((start, head.trim_end().to_string()));
                continue;
            }
            match command_words(&joined) {
                Some(words) => {
                    shown.extend(current.take());
                    let prompted = joined.trim_start().starts_with("$ ");
                    let entry = Shown {
                        place: format!("{name}:{start}"),
                        words,
                        output: Vec::new(),
                    };
                    if prompted {
                        current = Some(entry);
                    } else {
                        shown.push(entry);
                    }
                }
                None => {
                    if joined.trim_start().starts_with("$ ") {
                        shown.extend(current.take());
                    } else if let Some(entry) = &mut current {
                        entry.output.push(joined);
                    }
                }
            }
        }
        shown.extend(current.take());
    }
    shown
}

#[test]
fn every_command_the_docs_show_parses() {
    let shown = shown_commands();
    // The README alone shows more than 30; a parser that found few has broken.
    assert!(shown.len() > 50, "found only {} commands", shown.len());
    let mut failures = Vec::new();
    for command in &shown {
        let output = convbench()
            .args(&command.words)
            .arg("--help")
            .current_dir(root())
            .output()
            .expect("the binary runs");
        if !output.status.success() {
            failures.push(format!(
                "{}: cargo convbench {}\n{}",
                command.place,
                command.words.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_kernel_listings_the_docs_show_are_what_it_prints() {
    let mut checked = 0;
    for command in shown_commands() {
        if command.words.first().map(String::as_str) != Some("kernels")
            || !(command.words.len() == 1 || command.words[1] == "--contract")
            || command.output.is_empty()
        {
            continue;
        }
        let output = convbench()
            .args(&command.words)
            .current_dir(root())
            .output()
            .expect("the binary runs");
        assert!(
            output.status.success(),
            "{}: exit {:?}",
            command.place,
            output.status
        );
        let printed = String::from_utf8_lossy(&output.stdout);
        let mut lines = printed.lines().map(str::trim_end);
        for shown in command.output.iter().map(|line| line.trim_end()) {
            if shown.trim_start().starts_with("...") || shown.is_empty() {
                continue;
            }
            assert!(
                lines.any(|line| line == shown),
                "{}: `cargo convbench {}` no longer prints, in this order:\n{shown}\n\nIt prints:\n{printed}",
                command.place,
                command.words.join(" ")
            );
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} kernel listings found in the docs");
}
