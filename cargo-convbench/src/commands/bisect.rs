//! `cargo convbench bisect --good REV --bad REV`: the first commit that slowed a benchmark beyond
//! its threshold, by interleaved A/B of each commit tried against `good` (see
//! `convbench::harness::bisect`); nothing is rebuilt. Exit 1 when a slower commit is found, 0
//! when `bad` is not slower than `good`.

use crate::args::{EXIT_REGRESSION, Global};
use crate::args::{KernelArgs, SelectionArgs, count, count_u64};
use crate::output::print;
use crate::progress::Progress;
use convbench::Result;
use convbench::config::{self, MAX_PAIRS, MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS, parse_duration};
use convbench::gate::{CompareOverrides, compare_config};
use convbench::harness::ab::{AbRequest, DEFAULT_PAIRS};
use convbench::harness::bisect;

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
    /// Slowdown that counts, as a fraction (default: the config's threshold).
    #[arg(long)]
    pub threshold: Option<f64>,
}

/// `cargo convbench bisect`.
pub fn run(args: &Global, a: &BisectArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    let overrides = CompareOverrides {
        threshold: a.threshold,
        ..CompareOverrides::default()
    };
    let config = compare_config(&workspace, &overrides)?;
    let request = AbRequest {
        selection: a.selection.selection(),
        adapter: a.adapter.clone(),
        pairs: a.pairs,
        budget: a
            .budget
            .as_deref()
            .map(|text| parse_duration(text, "--budget"))
            .transpose()?,
        warmup_iterations: a.warmup,
        warmup_min_ms: a.warmup_ms,
        kernels: a.kernels.request(),
        ..AbRequest::default()
    };
    let progress = Progress::new(0, args.quiet);
    let mut verified = 0;
    let outcome = bisect::run(
        &request,
        &a.good,
        &a.bad,
        &workspace,
        &config,
        crate::interrupt::install(),
        &mut |event| progress.ab_event(event, &mut verified),
    );
    progress.finish();
    let outcome = outcome?;
    print(&convbench::report::bisect_text(&outcome));
    Ok(if outcome.first_slow.is_some() {
        EXIT_REGRESSION
    } else {
        0
    })
}
