//! `cargo convbench report FILE...`: re-render a saved record, or pivot several.

use crate::cli::Args;
use crate::output::print;
use convbench::report::{self, DashboardFormat, Format, PivotAxis, PivotRows, PivotSpec};
use convbench::results::RunRecord;
use convbench::{Error, Result};
use std::path::PathBuf;

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A record written by `run --format json` or `run --out`; several only with `--pivot`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// table, json, csv or md; or for a benchmark dashboard, bmf (Bencher Metric Format) or
    /// github-action-benchmark (its customSmallerIsBetter JSON).
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Also show the per-layer breakdown (table format); with --pivot, use --rows layer.
    #[arg(long, conflicts_with = "pivot")]
    pub layers: bool,
    /// Show one grid of median times of the records' benchmarks (rows by columns) instead.
    #[arg(long)]
    pub pivot: bool,
    /// Pivot rows: `model`, or `layer` (one row per layer of a `run --layers` record).
    #[arg(long, default_value = "model", requires = "pivot")]
    pub rows: String,
    /// Pivot columns: batch, precision, backend, comma-separated (e.g. `backend,batch`).
    #[arg(long, default_value = "backend", requires = "pivot")]
    pub columns: String,
    /// The phase the pivot shows: total, forward, grad-input, grad-params, update, ...
    #[arg(long, default_value = "total", requires = "pivot")]
    pub phase: String,
    /// Also show each pivot cell's ratio to this backend's cell (this / reference, <1 faster).
    #[arg(long, value_name = "BACKEND", requires = "pivot")]
    pub ratio_to: Option<String>,
}

/// What `--format` names: a text format, or a dashboard's.
enum ReportFormat {
    Text(Format),
    Dashboard(DashboardFormat),
}

impl ReportFormat {
    fn parse(name: &str) -> Result<Self> {
        if let Ok(format) = name.parse() {
            return Ok(Self::Text(format));
        }
        if let Ok(format) = name.parse() {
            return Ok(Self::Dashboard(format));
        }
        let names: Vec<&str> = (Format::ALL.iter().map(|format| format.as_str()))
            .chain(DashboardFormat::ALL.iter().map(|format| format.as_str()))
            .collect();
        Err(Error::InvalidInput(format!(
            "unknown report format `{name}`; use one of {}",
            names.join(", ")
        )))
    }
}

/// Renders the record, or the pivot of the records.
pub fn run(_args: &Args, a: &ReportArgs) -> Result<u8> {
    let format = match ReportFormat::parse(&a.format)? {
        ReportFormat::Text(format) => format,
        ReportFormat::Dashboard(format) => return dashboard(a, format),
    };
    if a.pivot {
        print(&pivot_text(a, format)?);
        return Ok(0);
    }
    let [file] = a.files.as_slice() else {
        return Err(Error::InvalidInput(format!(
            "report renders one record, got {} files; pass one FILE, or add --pivot to show \
             several records in one grid",
            a.files.len()
        )));
    };
    let record = RunRecord::read(file)?;
    let mut text = report::render(&record, format);
    if a.layers && format == Format::Table {
        for b in record.benchmarks.iter().filter(|b| !b.layers.is_empty()) {
            text.push_str(&format!("\n{}\n{}", b.id, report::layers_table(b)));
        }
    }
    print(&text);
    Ok(0)
}

/// One record in a dashboard's format.
fn dashboard(a: &ReportArgs, format: DashboardFormat) -> Result<u8> {
    let [file] = a.files.as_slice() else {
        return Err(Error::InvalidInput(format!(
            "--format {format} renders one record, got {} files; run it once per record",
            a.files.len()
        )));
    };
    if a.pivot || a.layers {
        return Err(Error::InvalidInput(format!(
            "--format {format} exports every benchmark and phase of the record; --pivot and --layers \
             are for table, md, csv and json"
        )));
    }
    // Plain `print`, not `print_untrusted`: the JSON is meant for `> file`, and no line of
    // pretty JSON can start a workflow command (each opens with a space or a bracket, and
    // JSON escapes line breaks in strings).
    print(&report::render_dashboard(&RunRecord::read(file)?, format));
    Ok(0)
}

fn pivot_text(a: &ReportArgs, format: Format) -> Result<String> {
    let spec = PivotSpec {
        rows: a.rows.parse()?,
        columns: PivotAxis::parse_list(&a.columns)?,
        phase: report::parse_phase(&a.phase)?,
        ratio_to: a.ratio_to.clone(),
    };
    let mut records = Vec::with_capacity(a.files.len());
    for file in &a.files {
        let record = RunRecord::read(file)?;
        if spec.rows == PivotRows::Layer && record.benchmarks.iter().all(|b| b.layers.is_empty()) {
            return Err(Error::InvalidInput(format!(
                "record {} has no per-layer breakdown; re-run it with `run --layers`, or pivot \
                 with --rows model",
                file.display()
            )));
        }
        records.push(record);
    }
    let grid = report::pivot(&records, &spec)?;
    Ok(report::render_pivot(&grid, format))
}
