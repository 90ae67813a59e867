//! Pure renderers: a [`RunRecord`] or a [`Comparison`] in, text out.
//!
//! Terminal tables ([`table`], [`layers_table`], [`comparison_table`]), GitHub Markdown
//! ([`markdown`], [`comparison_markdown`]), CSV ([`csv()`]), JSON ([`json`]), the formats of
//! benchmark dashboards ([`bmf`] for Bencher, [`github_action_benchmark`]), SVG charts
//! ([`chart_svg`] of a [`ChartSpec`]), the pivot of the seeds' comparisons ([`pivot`], [`render_pivot`]) and the history dashboard ([`history_svg`], [`history_html`]). No function
//! here prints, reads or writes a file: the binary decides whether the text goes to the
//! terminal, to `--out`, to `$GITHUB_STEP_SUMMARY` or into a PR comment. Every text ends with
//! exactly one newline.
//!
//! Conventions shared by every human-readable output:
//! - times are medians of the raw samples, in milliseconds with 3 decimals, and more below
//!   1 ms so that at least 3 significant digits show (`17.440`, `0.0146`);
//! - `-` stands for a value that was not measured (a phase an eval run lacks, FLOPs an op
//!   does not count, device memory a backend does not report);
//! - GFLOP/s is the direct-convolution FLOP count over the median time, so it is an
//!   "effective" rate when a fast algorithm (Winograd, FFT) ran;
//! - names from records (models, backends, adapters) are escaped for Markdown, so a record
//!   cannot inject HTML or break a table in a PR comment.
//!
//! [`RunRecord`]: crate::results::RunRecord
//! [`Comparison`]: crate::compare::Comparison

mod ab;
mod adapters;
mod cells;
mod charts;
mod comparison;
mod csv_export;
mod dashboards;
mod error;
mod history;
mod history_run;
mod kernels;
mod listing;
mod markdown;
mod pivot;
mod ratio;
mod request;
mod svg;
mod terminal;
mod tune;
mod verify;

#[cfg(test)]
mod tests;

pub use ab::{ab_table, bisect_text};
pub use adapters::{adapters_table, calibrations_table};
pub use charts::{ChartKind, ChartSpec, chart_svg};
pub use comparison::{comparison_markdown, comparison_table, comparison_text, verdict_summary};
pub use csv_export::{csv, rfc3339_utc};
pub use dashboards::{BMF_MEASURE, DashboardFormat, bmf, github_action_benchmark, render_dashboard};
pub use error::ReportError;
pub use history::{
    check_commit_url, github_commit_url, history_html, history_json, history_svg, history_svg_file_name,
    history_svg_files, history_table,
};
pub use history_run::{History, HistoryRequest};
pub use kernels::{contract_json, emitted_json, ops_table};
pub use listing::listing;
pub use markdown::{escape_markdown, layers_markdown, markdown};
pub use pivot::{
    Pivot, PivotAxis, PivotCell, PivotRows, PivotSpec, parse_phase, parse_phases, pivot, pivot_csv,
    pivot_json, pivot_markdown, pivot_table, render_pivot,
};
pub use ratio::vendor_ratio_table;
pub use request::{ReportRequest, read as read_record};
pub use svg::escape_xml;
pub use terminal::{layers_table, table, verification_table};
pub use tune::tune_table;
pub use verify::{variant_sweep_table, variant_table};

use crate::results::{BenchmarkResult, RunRecord};

/// The text formats a record can be rendered in (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Terminal table ([`table`]); the per-layer tables ([`layers_table`]) are the caller's
    /// to add, for `--layers`.
    Table,
    /// The record itself, pretty JSON ([`json`]).
    Json,
    /// One row per benchmark and phase ([`csv()`]).
    Csv,
    /// GitHub Markdown table ([`markdown`]).
    Markdown,
}

impl Format {
    /// Every format, in the order help texts list them.
    pub const ALL: [Format; 4] = [Format::Table, Format::Json, Format::Csv, Format::Markdown];

    /// The name `--format` takes: `table`, `json`, `csv` or `md`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "md",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Format {
    type Err = ReportError;

    /// Parses `table`, `json`, `csv`, `md` or `markdown`, ignoring ASCII case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.to_ascii_lowercase().as_str() {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "md" | "markdown" => Ok(Format::Markdown),
            _ => Err(ReportError::UnknownFormat {
                name: name.to_string(),
            }),
        }
    }
}

/// What `report --format` names: a text format, or a benchmark dashboard's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// A text format ([`render`]).
    Text(Format),
    /// A dashboard's format ([`render_dashboard`]).
    Dashboard(DashboardFormat),
}

impl std::str::FromStr for ReportFormat {
    type Err = ReportError;

    /// Parses a [`Format`] or a [`DashboardFormat`]; anything else is invalid input listing
    /// both.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if let Ok(format) = name.parse() {
            return Ok(Self::Text(format));
        }
        if let Ok(format) = name.parse() {
            return Ok(Self::Dashboard(format));
        }
        Err(ReportError::UnknownReportFormat {
            name: name.to_string(),
        })
    }
}

/// Every benchmark of `records`, in record order.
///
/// Fails with [`ReportError::DuplicateBenchmark`] when a benchmark id is in more than one
/// record: the two would show as one.
fn benchmarks_of(records: &[RunRecord]) -> Result<Vec<&BenchmarkResult>, ReportError> {
    let mut seen_ids = std::collections::HashSet::new();
    let mut benchmarks = Vec::new();
    for benchmark in records.iter().flat_map(|record| &record.benchmarks) {
        if !seen_ids.insert(benchmark.id.as_str()) {
            return Err(ReportError::DuplicateBenchmark {
                id: benchmark.id.clone(),
            });
        }
        benchmarks.push(benchmark);
    }
    Ok(benchmarks)
}

/// The record as pretty JSON, exactly as [`RunRecord::to_json`] writes it (the format
/// baselines and `--out` files use), so a rendered record can be read back.
pub fn json(record: &RunRecord) -> String {
    record.to_json()
}

/// Renders a record in `format`.
pub fn render(record: &RunRecord, format: Format) -> String {
    match format {
        Format::Table => table(record),
        Format::Json => json(record),
        Format::Csv => csv(record),
        Format::Markdown => markdown(record),
    }
}

/// [`render`], followed in the table and Markdown formats by each benchmark's per-layer table
/// ([`layers_table`], [`layers_markdown`]) when `layers` (`run --layers`, `report
/// --layers`). JSON holds the layers already; CSV has one row per benchmark and phase and no
/// room for them (`report --pivot --rows layer --format csv` gives one row per layer), so
/// `report` refuses `--layers` there and `run` says so.
pub fn render_with_layers(record: &RunRecord, format: Format, layers: bool) -> String {
    let mut text = render(record, format);
    if layers {
        for b in record.benchmarks.iter().filter(|b| !b.layers.is_empty()) {
            match format {
                Format::Table => text.push_str(&format!("\n{}\n{}", b.id, layers_table(b))),
                Format::Markdown => text.push_str(&format!(
                    "\n**{}**\n\n{}",
                    markdown::escape_markdown(&b.id),
                    markdown::layers_markdown(b)
                )),
                Format::Json | Format::Csv => {}
            }
        }
    }
    text
}
