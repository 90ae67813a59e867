//! Flags of `cargo convbench plot`.

use std::path::PathBuf;

/// Arguments of `plot`.
#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Records written by `run --out`; several to plot a peer's record (e.g. a `burn-wgpu`
    /// run) beside convbench's own.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// What to chart: throughput (images/s against batch), phases (a stacked bar per training
    /// step), backends (side by side, ratio to wgpu), precision (f16 against f32), layers (per
    /// layer, with the roofline).
    #[arg(long, default_value = "throughput")]
    pub kind: String,
    /// With `--kind layers`: the id of the benchmark to break down [default: the first with
    /// a per-layer breakdown].
    #[arg(long, value_name = "ID")]
    pub benchmark: Option<String>,
    /// Where to write the SVG.
    #[arg(short, long, default_value = "convbench.svg")]
    pub output: PathBuf,
}
