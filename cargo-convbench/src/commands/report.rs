//! `cargo convbench report FILE`: re-render a saved record.

use crate::cli::Args;
use crate::output::print;
use convbench::report::{self, Format};
use convbench::results::RunRecord;
use convbench::{Error, Result};
use std::path::PathBuf;

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A record written by `run --format json` or `run --out`.
    pub file: PathBuf,
    /// table, json, csv or md.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Also show the per-layer breakdown (table format).
    #[arg(long)]
    pub layers: bool,
}

/// Reads a record file with a clear error for a missing, corrupt or future-version file.
pub fn read_record(path: &std::path::Path) -> Result<RunRecord> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::InvalidInput(format!("cannot read record {}: {e}", path.display())))?;
    Ok(RunRecord::from_json(&text, &path.display().to_string())?)
}

/// Renders the record.
pub fn run(_args: &Args, a: &ReportArgs) -> Result<u8> {
    let format: Format = a.format.parse()?;
    let record = read_record(&a.file)?;
    let mut text = report::render(&record, format);
    if a.layers && format == Format::Table {
        for b in record.benchmarks.iter().filter(|b| !b.layers.is_empty()) {
            text.push_str(&format!("\n{}\n{}", b.id, report::layers_table(b)));
        }
    }
    print(&text);
    Ok(0)
}
