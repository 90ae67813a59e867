//! Flags of `cargo convbench tune`.

use crate::cli::{SelectionArgs, count};
use crate::config::{MAX_REPETITIONS, MAX_WARMUP_ITERATIONS};
use crate::harness::tune_run::TuneRequest;

/// Arguments of `tune`.
#[derive(Debug, Clone, clap::Args)]
pub struct TuneArgs {
    /// What to tune: the ops of the benchmarks `run` would run with the same flags.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Also tune the first layer's input gradient (as `run --data-grad` computes it).
    #[arg(long)]
    pub data_grad: bool,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// Timed runs of each variant (the median is compared).
    #[arg(long, default_value_t = TuneRequest::default().samples, allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub samples: usize,
    /// Untimed runs of each variant first (at least 1).
    #[arg(long, default_value_t = TuneRequest::default().warmup_iterations, allow_negative_numbers = true, value_parser = count::<1, MAX_WARMUP_ITERATIONS>)]
    pub warmup: usize,
    /// Time variants without verifying them against the CPU reference first.
    #[arg(long)]
    pub no_verify: bool,
}

impl TuneArgs {
    /// The library's tune request.
    pub fn request(&self) -> TuneRequest {
        TuneRequest {
            selection: self.selection.selection(),
            data_grad: self.data_grad,
            adapter: self.adapter.clone(),
            samples: self.samples,
            warmup_iterations: self.warmup,
            verify: !self.no_verify,
        }
    }
}
