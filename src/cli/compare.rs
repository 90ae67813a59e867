//! Flags of `cargo convbench compare`.

use crate::cli::{BaselineArgs, RunArgs};
use std::path::PathBuf;

/// Arguments of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// A saved record to judge; without it, the benchmarks run now (the flags that shape a run
    /// are then refused).
    #[arg(long, value_name = "FILE", conflicts_with_all = crate::cli::FRESH_RUN_FLAGS)]
    pub results: Option<PathBuf>,
    /// Baseline and verdict options.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// Benchmarks to run when no --results is given.
    #[command(flatten)]
    pub run: RunArgs,
}
