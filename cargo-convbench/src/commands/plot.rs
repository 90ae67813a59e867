//! `cargo convbench plot FILE -o chart.svg`: images/s per model and precision, or time versus
//! batch size when the record holds a batch sweep.

use super::report::read_record;
use crate::cli::Args;
use crate::output::write_atomic;
use convbench::Result;
use std::path::PathBuf;

/// Arguments of `plot`.
#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// A record written by `run --out`.
    pub file: PathBuf,
    /// Where to write the SVG.
    #[arg(short, long, default_value = "convbench.svg")]
    pub output: PathBuf,
}

/// Draws the chart.
pub fn run(args: &Args, a: &PlotArgs) -> Result<u8> {
    let record = read_record(&a.file)?;
    let svg = convbench::report::chart_svg(&record)?;
    write_atomic(&a.output, &svg)?;
    if !args.quiet {
        eprintln!("wrote {}", a.output.display());
    }
    Ok(0)
}
