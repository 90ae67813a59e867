//! `cargo convbench compare`: this run (or a saved record) against the baseline blessed at the
//! base revision, with a verdict per benchmark and phase; exit code 1 on a regression.

use crate::output::EXIT_REGRESSION;
use crate::output::{print, write_atomic};
use crate::progress::run_sweep;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::compare::CompareArgs;
use convbench::gate::{check_base, compare_config, judge_records, load_baseline, refuse_incomparable};
use convbench::report::{self, Format};
use convbench::results::RunRecord;

/// `cargo convbench compare`.
pub fn run(args: &Global, a: &CompareArgs) -> Result<u8> {
    let format: Format = a.run.format.parse()?;
    // Before the sweep: a format compare cannot render should not cost a whole run.
    if format == Format::Csv {
        return Err(convbench::report::ReportError::CompareCsv.into());
    }
    if let Some(out) = &a.run.out {
        crate::output::check_writable(out)?;
    }
    let workspace = super::workspace(args)?;
    let config = compare_config(&workspace, &a.baseline.overrides())?;
    // Before the sweep: a missing repository or base should not cost a whole run.
    check_base(&workspace, &a.baseline.source())?;
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
    // A warning, not a notice: it shows under --quiet too.
    if nothing_compared(&comparison) {
        eprintln!(
            "warning: nothing was compared: no benchmark of {what} is in the baseline ({}); run \
             the benchmarks it holds, or bless these with `cargo convbench baseline update`",
            baseline.origin
        );
    }
    Ok(if comparison.gate_fails() {
        EXIT_REGRESSION
    } else {
        0
    })
}

/// Whether no row of `comparison` had both sides (every one new or missing): exit 0 then means
/// nothing was checked, which the user is told.
fn nothing_compared(comparison: &convbench::compare::Comparison) -> bool {
    use convbench::compare::Verdict;
    comparison
        .rows
        .iter()
        .all(|row| matches!(row.verdict, Verdict::New | Verdict::Missing))
}
