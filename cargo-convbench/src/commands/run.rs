//! `cargo convbench run`: benchmark models and suites, sweeping batches, precisions and
//! backends; print a table (or JSON, CSV, Markdown) and optionally write the record.

use crate::args::RunArgs;
use crate::cli::Args;
use crate::output::{check_writable, print, write_atomic};
use crate::progress::run_sweep;
use convbench::Result;
use convbench::config;
use convbench::report::{self, Format};
use convbench::results::RunRecord;

/// Renders the record as asked, with the per-layer tables when `--layers`.
fn render(record: &RunRecord, format: Format, layers: bool) -> String {
    let mut text = report::render(record, format);
    if layers && format == Format::Table {
        for b in record.benchmarks.iter().filter(|b| !b.layers.is_empty()) {
            text.push_str(&format!("\n{}\n{}", b.id, report::layers_table(b)));
        }
    }
    text
}

/// `cargo convbench run`.
pub fn run(args: &Args, a: &RunArgs) -> Result<u8> {
    let format: Format = a.format.parse()?;
    if let Some(out) = &a.out {
        check_writable(out)?;
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let (record, error) = run_sweep(&a.request(), &workspace, args.quiet, a.out.as_deref())?;
    if !record.benchmarks.is_empty() {
        print(&render(&record, format, a.layers));
        if let Some(out) = &a.out {
            write_atomic(out, &record.to_json())?;
            if !args.quiet {
                let state = if record.complete {
                    ""
                } else {
                    " (incomplete: the run stopped early)"
                };
                eprintln!("wrote {}{state}", out.display());
            }
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(0),
    }
}
