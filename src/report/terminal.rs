//! Terminal tables (comfy-table, UTF-8 borders, no colours), as the seed benchmarks print
//! their results.

use super::cells::{self, Column};
use crate::harness::verify::Summary;
use crate::model::Precision;
use crate::results::{BenchmarkResult, RunRecord};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

/// An empty table with these headers, numeric columns right-aligned. It never looks at the
/// terminal (no width detection, no styling), so its text depends only on its cells.
pub(super) fn new_table(columns: &[Column]) -> Table {
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(columns.iter().map(|column| column.header));
    for (index, column) in columns.iter().enumerate() {
        if let Some(table_column) = table.column_mut(index).filter(|_| column.numeric) {
            table_column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// An empty table with these headers and borders only (no lines between rows): the listings
/// and verdict tables of `history`, `tune`, `verify`, `ab`, `adapters`, `kernels` and `list`.
pub(super) fn bordered(headers: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header(headers.iter().copied());
    table
}

/// The table followed by one line per footer entry, newline-terminated.
pub(super) fn with_footer(table: &Table, footer: &[String]) -> String {
    let mut text = table.to_string();
    text.push('\n');
    for line in footer {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// One row per benchmark: model, stage, batch, precision, backend, the median of forward,
/// grad-input, grad-params, update and total (ms), images/s, GFLOP/s and device memory
/// (MiB); then one line per adapter: `adapter: <label>, timing: <method>, samples: N`.
pub fn table(record: &RunRecord) -> String {
    if record.benchmarks.is_empty() {
        return "no benchmarks in this record\n".to_string();
    }
    let mut table = new_table(&cells::BENCHMARK_COLUMNS);
    table.add_rows(record.benchmarks.iter().map(cells::benchmark_row));
    let mut text = with_footer(&table, &cells::adapter_lines(record));
    if let Some(ratios) = super::vendor_ratio_table(record) {
        text.push('\n');
        text.push_str(&ratios);
    }
    text
}

/// The per-layer breakdown of one benchmark, as the PaddlePaddle seed's per-op table: layer,
/// op, phase, median (ms), share of the total median (%), GFLOP/s (the layer's FLOPs over
/// its median) and kernel variant; then a line with the total and the layers' sum.
pub fn layers_table(benchmark: &BenchmarkResult) -> String {
    if benchmark.layers.is_empty() {
        return format!(
            "no per-layer timings in {}; run the benchmark with `--layers`\n",
            benchmark.id
        );
    }
    let (rows, footer) = cells::layer_rows(benchmark);
    let mut table = new_table(&cells::LAYER_COLUMNS);
    table.add_rows(rows);
    with_footer(&table, &footer)
}

/// Columns of [`verification_table`].
const VERIFICATION_COLUMNS: [Column; 5] = [
    Column {
        header: "op",
        numeric: false,
    },
    Column {
        header: "precision",
        numeric: false,
    },
    Column {
        header: "checked",
        numeric: true,
    },
    Column {
        header: "worst error/bound",
        numeric: true,
    },
    Column {
        header: "at",
        numeric: false,
    },
];

/// The result of verifying ops against the reference, one row per op name and precision: how
/// many were checked, the worst ratio of error to rounding bound (at most 1 passes; see
/// [`crate::harness::verify`]) and which op had it; then a line with the worst overall.
pub fn verification_table(summaries: &[(Precision, &Summary)]) -> String {
    let mut table = new_table(&VERIFICATION_COLUMNS);
    let mut worst = 0.0f64;
    for (precision, summary) in summaries {
        for (op, line) in &summary.ops {
            worst = worst.max(line.worst_ratio);
            table.add_row(vec![
                (*op).to_string(),
                precision.to_string(),
                line.checked.to_string(),
                format!("{:.4}", line.worst_ratio),
                line.worst_at.clone(),
            ]);
        }
    }
    with_footer(
        &table,
        &[format!(
            "worst error/bound overall: {worst:.4} (at most 1 passes)"
        )],
    )
}
