//! Flags of `cargo convbench adapters`.

use crate::cli::ListFormat;

/// Arguments of `adapters`.
#[derive(Debug, clap::Args)]
pub struct AdaptersArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Measure each adapter's peak f32 FLOP/s and memory bandwidth with calibration kernels
    /// (seconds per adapter) and cache them under the target directory for the roofline
    /// columns of `run --layers`.
    #[arg(long)]
    pub calibrate: bool,
    /// With `--calibrate`: only this adapter (index, backend name or part of its name).
    #[arg(long, requires = "calibrate")]
    pub adapter: Option<String>,
}
