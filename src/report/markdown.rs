//! GitHub-flavoured Markdown, for job summaries and PR comments.

use super::cells::{self, Column};
use crate::results::{BenchmarkResult, RunRecord};

/// Escapes text from a record for a GitHub Markdown table cell or paragraph.
///
/// `|` would end the cell; `<`, `>` and `&` would let a name open HTML (`<script>`, `<img>`)
/// or an entity in a PR comment; `\`, `` ` ``, `*`, `_`, `~`, `[`, `]` and `$` would start an
/// escape, code, emphasis, strikethrough, a link or math (the punctuation the PR comment's
/// [`crate::github::escape_markdown`] escapes, which also disarms mentions and links). Line
/// breaks and other control characters would end the table row, so they become spaces.
pub fn escape_markdown(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '~' | '[' | ']' | '$' => {
                escaped.push('\\');
                escaped.push(ch);
            }
            ch if ch.is_control() => escaped.push(' '),
            _ => escaped.push(ch),
        }
    }
    escaped
}

/// A Markdown table: the header, the alignment row (numbers right-aligned) and the rows.
/// Text cells are escaped with [`escape_markdown`]; numeric cells are formatted here from
/// numbers, so they are left as they are (an interval's `[` stays readable).
pub(super) fn table_text<'a>(columns: &[Column], rows: impl IntoIterator<Item = &'a [String]>) -> String {
    let mut text = String::new();
    let header: Vec<&str> = columns.iter().map(|column| column.header).collect();
    push_row(&mut text, header.iter().map(|header| escape_markdown(header)));
    push_row(
        &mut text,
        columns
            .iter()
            .map(|column| if column.numeric { "---:" } else { ":---" }.to_string()),
    );
    for row in rows {
        push_row(
            &mut text,
            row.iter().zip(columns).map(|(cell, column)| {
                if column.numeric {
                    cell.clone()
                } else {
                    escape_markdown(cell)
                }
            }),
        );
    }
    text
}

fn push_row(text: &mut String, cells: impl Iterator<Item = String>) {
    text.push('|');
    for cell in cells {
        text.push(' ');
        text.push_str(&cell);
        text.push_str(" |");
    }
    text.push('\n');
}

/// The benchmark table of [`table`](super::table) as a GitHub Markdown table, then the
/// adapter lines, each its own paragraph. Names are escaped with [`escape_markdown`].
pub fn markdown(record: &RunRecord) -> String {
    if record.benchmarks.is_empty() {
        return "No benchmarks in this record.\n".to_string();
    }
    let rows: Vec<Vec<String>> = record.benchmarks.iter().map(cells::benchmark_row).collect();
    let mut text = table_text(&cells::BENCHMARK_COLUMNS, rows.iter().map(Vec::as_slice));
    for line in cells::adapter_lines(record) {
        text.push('\n');
        text.push_str(&escape_markdown(&line));
        text.push('\n');
    }
    text
}

/// The per-layer table of `benchmark` ([`layers_table`](super::layers_table)) as a GitHub
/// Markdown table, then its footer lines (the total, the roof), each its own paragraph.
pub fn layers_markdown(benchmark: &BenchmarkResult) -> String {
    let (rows, footer) = cells::layer_rows(benchmark);
    let mut text = table_text(&cells::LAYER_COLUMNS, rows.iter().map(Vec::as_slice));
    for line in footer {
        text.push('\n');
        text.push_str(&escape_markdown(&line));
        text.push('\n');
    }
    text
}
