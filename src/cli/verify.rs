//! Flags of `cargo convbench verify`.

use crate::cli::{DeviceArgs, KernelArgs, SelectionArgs, count, count_u64};
use crate::config::MAX_REPETITIONS;
use crate::harness::verify_run::RANDOM_SHAPES;
use crate::harness::verify_run::VerifyRequest;

/// Arguments of `verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// What to verify; with no model or suite named (here or in the configuration), every
    /// model of the zoo at batch 1, in every precision the adapter has.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Where to run it.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Which kernels run.
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Verify this many times, each with fresh random data.
    #[arg(long, default_value_t = 1, value_name = "N", allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub repeat: usize,
    /// Random shapes per op, variant and precision in the kernel-variant table (at least 1;
    /// a demanding shape, and a wide one where none spans 3 workgroups, come on top).
    #[arg(long, default_value_t = RANDOM_SHAPES, value_name = "N", allow_negative_numbers = true, value_parser = count::<1, MAX_REPETITIONS>)]
    pub random_shapes: usize,
    /// Seed of the variant table's shapes and data (default: fresh each run, printed; the
    /// environment's `CONVBENCH_SEED`, which replays the tests' random inputs, when set).
    #[arg(long, value_name = "SEED", env = "CONVBENCH_SEED")]
    pub seed: Option<u64>,
    /// Only the kernel-variant table: every variant of every op with variants (convbench's and
    /// the workspace's own kernels) on random shapes, not the networks.
    #[arg(long)]
    pub variants: bool,
    /// With `--variants`: a seed sweep, the table over this many seeds (`--seed`, `--seed` + 1,
    /// ...), with the worst ratio of each line, its seed, and every seed that failed.
    #[arg(
        long,
        value_name = "N",
        requires = "variants",
        allow_negative_numbers = true, value_parser = count_u64::<1, { MAX_REPETITIONS as u64 }>
    )]
    pub seeds: Option<u64>,
}

impl VerifyArgs {
    /// The library's verify request.
    pub fn request(&self) -> VerifyRequest {
        VerifyRequest {
            selection: self.selection.selection(),
            device: self.device.request(),
            kernels: self.kernels.request(),
            repeat: self.repeat,
            random_shapes: self.random_shapes,
            seed: self.seed,
            seeds: self.seeds,
        }
    }
}
