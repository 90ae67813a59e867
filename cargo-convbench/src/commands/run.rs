//! `cargo convbench run`: benchmark models and suites, sweeping batches, precisions and
//! backends; print a table (or JSON, CSV, Markdown) and optionally write the record.

use crate::output::{check_writable, print, refuse_out_over_inputs, write_atomic};
use crate::progress::run_sweep;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::RunArgs;
use convbench::report::{self, Format};

/// `cargo convbench run`.
pub fn run(args: &Global, a: &RunArgs) -> Result<u8> {
    let format: Format = a.format.parse()?;
    if let Some(out) = &a.out {
        check_writable(out)?;
    }
    let workspace = super::workspace(args)?;
    if let Some(out) = &a.out {
        refuse_out_over_inputs(out, a, &workspace)?;
    }
    if a.layers && format == Format::Csv && !args.quiet {
        eprintln!(
            "notice: the CSV has one row per benchmark and phase, without the layers; {}",
            match &a.out {
                Some(out) => format!(
                    "`cargo convbench report --pivot --rows layer --format csv {}` gives one row per layer",
                    out.display()
                ),
                None => "keep the record with --out FILE, and `cargo convbench report --pivot --rows \
                         layer --format csv FILE` gives one row per layer"
                    .to_string(),
            }
        );
    }
    let (record, error) = run_sweep(&a.request(), &workspace, args.quiet, a.out.as_deref())?;
    if !record.benchmarks.is_empty() {
        print(&report::render_with_layers(&record, format, a.layers));
        if let Some(out) = &a.out {
            write_atomic(out, &record.to_json())?;
            if !args.quiet {
                let state = if record.complete {
                    String::new()
                } else {
                    // Rounds are interleaved across benchmarks, so a stop in the first round
                    // leaves every benchmark short, not only the one it interrupted.
                    let rounds = record.benchmarks.iter().map(|b| b.round_sizes().len());
                    let (fewest, most) = (rounds.clone().min().unwrap_or(0), rounds.max().unwrap_or(0));
                    let held = if fewest == most {
                        format!("{fewest}")
                    } else {
                        format!("{fewest} to {most}")
                    };
                    format!(
                        " (incomplete: the run stopped early; its benchmarks hold {held} of the {} \
                         rounds asked for)",
                        a.request().rounds
                    )
                };
                eprintln!("wrote {}{state}", out.display());
            }
        }
    }
    // Nothing finished (an interruption or a failure in the first round): say so, rather than
    // leave the user to look for a file that was never written.
    if record.benchmarks.is_empty()
        && error.is_some()
        && let Some(out) = &a.out
    {
        eprintln!(
            "no benchmark finished a round, so {} was not written",
            out.display()
        );
    }
    match error {
        Some(e) => Err(e),
        None => Ok(0),
    }
}
