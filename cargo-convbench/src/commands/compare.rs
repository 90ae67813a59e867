//! `cargo convbench compare`: this run (or a saved record) against the baseline blessed at the
//! base revision, with a verdict per benchmark and phase; exit code 1 on a regression.

use crate::output::EXIT_REGRESSION;
use crate::output::{print, write_atomic};
use crate::progress::run_sweep;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::compare::CompareArgs;
use convbench::config;
use convbench::gate::{compare_config, judge_records, load_baseline, refuse_incomparable};
use convbench::report::{self, Format};
use convbench::results::RunRecord;

/// `cargo convbench compare`.
pub fn run(args: &Global, a: &CompareArgs) -> Result<u8> {
    let format: Format = a.run.format.parse()?;
    if let Some(out) = &a.run.out {
        crate::output::check_writable(out)?;
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let config = compare_config(&workspace, &a.baseline.overrides())?;
    let current = match &a.results {
        Some(path) => RunRecord::read(path)?,
        None => {
            let (record, error) = run_sweep(&a.run.request(), &workspace, args.quiet, a.run.out.as_deref())?;
            if let Some(out) = &a.run.out {
                write_atomic(out, &record.to_json())?;
            }
            if let Some(e) = error {
                return Err(e);
            }
            record
        }
    };
    let baseline = load_baseline(&workspace, &a.baseline.source(), &current)?;
    let what = a
        .results
        .as_ref()
        .map_or_else(|| "this run".to_string(), |p| p.display().to_string());
    let comparison = judge_records(&baseline, &current, &what, &config)?;
    print(&report::comparison_text(
        &comparison,
        &baseline.notes,
        &baseline.origin,
        format,
    )?);
    refuse_incomparable(&comparison)?;
    Ok(if comparison.gate_fails() {
        EXIT_REGRESSION
    } else {
        0
    })
}
