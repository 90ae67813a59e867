//! Flags of `cargo convbench report`.

use crate::report::ReportRequest;
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
    /// Also show the per-layer breakdown (table and md formats; json holds it already, csv has no
    /// room for it); with --pivot, use --rows layer.
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
    /// Also show each pivot cell's ratio to this backend's cell (this / reference, <1 faster),
    /// or to this precision's (`--ratio-to f32`: each f16 cell against the f32 one).
    #[arg(long, value_name = "BACKEND|PRECISION", requires = "pivot")]
    pub ratio_to: Option<String>,
}

impl ReportArgs {
    /// The library's report request.
    pub fn request(&self) -> ReportRequest {
        ReportRequest {
            files: self.files.clone(),
            format: self.format.clone(),
            layers: self.layers,
            pivot: self.pivot,
            rows: self.rows.clone(),
            columns: self.columns.clone(),
            phase: self.phase.clone(),
            ratio_to: self.ratio_to.clone(),
        }
    }
}
