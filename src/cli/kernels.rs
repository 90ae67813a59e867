//! Flags of `cargo convbench kernels`.

use crate::cli::ListFormat;
use std::path::PathBuf;

/// Arguments of `kernels`.
#[derive(Debug, clap::Args)]
pub struct KernelsArgs {
    /// Print the contract of this op (e.g. `conv2d_forward`) as a WGSL skeleton.
    #[arg(long, value_name = "OP")]
    pub contract: Option<String>,
    /// Write every final WGSL source (each shader at each precision, subgroup form and
    /// specialisation, and the workspace's kernels) into this folder, one file per source.
    #[arg(long, value_name = "DIR", conflicts_with = "contract")]
    pub emit: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}
