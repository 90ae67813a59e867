//! `cargo convbench report FILE...`: re-render a saved record, or pivot several.

use crate::args::Global;
use crate::output::print;
use convbench::report::{self, DashboardFormat, PivotSpec, ReportFormat};
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

/// Renders the record, or the pivot of the records.
pub fn run(_args: &Global, a: &ReportArgs) -> Result<u8> {
    let format = match a.format.parse()? {
        ReportFormat::Text(format) => format,
        ReportFormat::Dashboard(format) => return dashboard(a, format),
    };
    if a.pivot {
        let spec = PivotSpec::parse(&a.rows, &a.columns, &a.phase, a.ratio_to.clone())?;
        let mut records = Vec::with_capacity(a.files.len());
        for file in &a.files {
            let record = RunRecord::read(file)?;
            spec.check_record(&record, file)?;
            records.push(record);
        }
        print(&report::render_pivot(&report::pivot(&records, &spec)?, format));
        return Ok(0);
    }
    let [file] = a.files.as_slice() else {
        return Err(Error::InvalidInput(format!(
            "report renders one record, got {} files; pass one FILE, or add --pivot to show \
             several records in one grid",
            a.files.len()
        )));
    };
    print(&report::render_with_layers(
        &RunRecord::read(file)?,
        format,
        a.layers,
    ));
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
