//! Flags of `cargo convbench compare`.

use crate::cli::{BaselineArgs, RunArgs};
use std::path::PathBuf;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// A saved record to judge; without it, the benchmarks run now.
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// Benchmarks to run when no --results is given.
    #[command(flatten)]
    pub run: RunArgs,
}
