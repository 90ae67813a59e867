//! `cargo convbench plot FILE... --kind KIND -o chart.svg`: the seeds' comparison charts of
//! saved records (throughput against batch, phases, backends, precision, layers).

use crate::output::write_atomic;
use convbench::Result;
use convbench::cli::Global;
use convbench::cli::plot::PlotArgs;
use convbench::report::{ChartKind, ChartSpec};

/// Draws the chart.
pub fn run(args: &Global, a: &PlotArgs) -> Result<u8> {
    crate::output::check_output("--output", &a.output)?;
    convbench::fs::refuse_overwriting_an_input(&a.output, &a.files)
        .map_err(|error| error.context("--output"))?;
    let spec = ChartSpec {
        kind: a.kind.parse::<ChartKind>()?,
        benchmark: a.benchmark.clone(),
    };
    let records = a
        .files
        .iter()
        .map(|file| convbench::report::read_record(file))
        .collect::<Result<Vec<_>>>()?;
    let svg = convbench::report::chart_svg(&records, &spec)?;
    write_atomic(&a.output, &svg)?;
    // A warning, not a notice, as `report` gives it: it shows under --quiet too.
    for (file, record) in a.files.iter().zip(&records) {
        if !record.complete {
            eprintln!(
                "warning: {} comes from an interrupted run: benchmarks or rounds it did not \
                 finish are missing from the chart, which does not say so",
                file.display()
            );
        }
    }
    if !args.quiet {
        eprintln!("wrote {}", a.output.display());
    }
    Ok(0)
}
