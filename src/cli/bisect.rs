//! Flags of `cargo convbench bisect`.

use crate::Result;
use crate::cli::{KernelArgs, SelectionArgs, count, count_u64};
use crate::config::parse_duration;
use crate::config::{MAX_PAIRS, MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS};
use crate::gate::CompareOverrides;
use crate::harness::ab::AbRequest;
use crate::harness::ab::DEFAULT_PAIRS;

/// Arguments of `bisect`.
#[derive(Debug, Clone, clap::Args)]
pub struct BisectArgs {
    /// A revision known to be fast.
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later revision known (or suspected) to be slow.
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// What to benchmark.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// The most pairs per benchmark in each step (fewer when its verdict settles sooner).
    #[arg(long, default_value_t = DEFAULT_PAIRS, allow_negative_numbers = true, value_parser = count::<1, MAX_PAIRS>)]
    pub pairs: usize,
    /// Time for each step, e.g. `2m` (default: no limit but --pairs).
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Minimum warm-up iterations per side (default: 1; the pairs alternate ABBA).
    #[arg(long, allow_negative_numbers = true, value_parser = count::<0, MAX_WARMUP_ITERATIONS>)]
    pub warmup: Option<usize>,
    /// Minimum warm-up time in milliseconds (default: none).
    #[arg(long, allow_negative_numbers = true, value_parser = count_u64::<0, MAX_WARMUP_MS>)]
    pub warmup_ms: Option<u64>,
    /// Which kernels run.
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Slowdown that counts, as a fraction or a percentage (`0.05` or `5%`; default: the
    /// config's threshold).
    #[arg(long, value_parser = crate::cli::fraction, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
}

impl BisectArgs {
    /// The A/B request each commit tried runs; an unreadable `--budget` is an error naming it.
    pub fn request(&self) -> Result<AbRequest> {
        Ok(AbRequest {
            selection: self.selection.selection(),
            adapter: self.adapter.clone(),
            pairs: self.pairs,
            budget: (self.budget.as_deref())
                .map(|text| parse_duration(text, "--budget"))
                .transpose()?,
            warmup_iterations: self.warmup,
            warmup_min_ms: self.warmup_ms,
            kernels: self.kernels.request(),
            ..AbRequest::default()
        })
    }

    /// What the flags override of the configuration's comparison settings.
    pub fn overrides(&self) -> CompareOverrides {
        CompareOverrides {
            threshold: self.threshold,
            ..CompareOverrides::default()
        }
    }
}
