//! Flags of `cargo convbench ab`.

use crate::Result;
use crate::cli::{KernelArgs, SelectionArgs, count, count_u64};
use crate::config::parse_duration;
use crate::config::{MAX_PAIRS, MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS};
use crate::gate::CompareOverrides;
use crate::harness::ab::{AbRequest, DEFAULT_PAIRS, FIRST_LOOK};
use crate::harness::ab_process::{PROCESS_PAIRS, PROCESS_SAMPLES, ProcessRequest};
use crate::harness::sweep::MAX_SAMPLES_PER_BENCHMARK;
use std::path::PathBuf;

/// Arguments of `ab`.
#[derive(Debug, Clone, clap::Args)]
pub struct AbArgs {
    /// The base revision (A): its `shaders/` are read from git. Default: the merge-base of HEAD
    /// with the default branch (with `GITHUB_BASE_REF` in Actions).
    #[arg(long, value_name = "REV", conflicts_with = "base_bin")]
    pub base: Option<String>,
    /// Process mode: a `cargo-convbench` binary built from the base revision. Rounds of
    /// `run --rounds 1` alternate between it and this binary.
    #[arg(long, value_name = "PATH")]
    pub base_bin: Option<PathBuf>,
    /// The head's shaders (B): a directory holding every file of convbench's `shaders/`.
    /// Default: `shaders/` at the workspace root, whose committed state at the base revision
    /// is always the base (A).
    #[arg(long, value_name = "DIR")]
    pub shaders: Option<PathBuf>,
    /// What to benchmark.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// The most pairs of interleaved iterations per benchmark (shader mode; fewer when the
    /// verdict settles sooner, default 240), or the pairs of rounds (process mode, default 20).
    #[arg(long, allow_negative_numbers = true, value_parser = count::<1, MAX_PAIRS>)]
    pub pairs: Option<usize>,
    /// Pairs before the first look at the verdict (shader mode, default 8); `--first-look N
    /// --pairs N` takes exactly N pairs.
    #[arg(long, value_name = "PAIRS", default_value_t = FIRST_LOOK, allow_negative_numbers = true,
          value_parser = count::<1, MAX_PAIRS>)]
    pub first_look: usize,
    /// Time for the whole comparison in shader mode, e.g. `5m` or `90s` (default: no limit but
    /// --pairs); each benchmark gets an equal share of what is left when it starts.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Timed iterations per round (process mode).
    #[arg(long, default_value_t = PROCESS_SAMPLES, allow_negative_numbers = true, value_parser = count::<1, MAX_SAMPLES_PER_BENCHMARK>)]
    pub samples: usize,
    /// Minimum warm-up iterations per side (default: 1 in shader mode, whose pairs alternate
    /// ABBA; 3 per process in process mode).
    #[arg(long, allow_negative_numbers = true, value_parser = count::<0, MAX_WARMUP_ITERATIONS>)]
    pub warmup: Option<usize>,
    /// Minimum warm-up time in milliseconds (default: none in shader mode; 200 in process mode).
    #[arg(long, allow_negative_numbers = true, value_parser = count_u64::<0, MAX_WARMUP_MS>)]
    pub warmup_ms: Option<u64>,
    /// Which kernels run (the same on both sides).
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Judge each layer too (shader mode): times every op, on both sides alike.
    #[arg(long)]
    pub layers: bool,
    /// Time a benchmark whose every op runs the same code on both sides too (shader mode): an
    /// A/A run, which measures this machine's false alarms. Without it such a benchmark is "no
    /// change", not timed.
    #[arg(long, conflicts_with = "base_bin")]
    pub time_identical: bool,
    /// Slowdown that counts as a regression, as a fraction or a percentage (`0.05` or `5%`;
    /// default: the config's threshold).
    #[arg(long, value_parser = crate::cli::fraction, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Write the verdicts and every raw pair as JSON to this file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl AbArgs {
    /// The library's request for shader mode; an unreadable `--budget` is an error naming it.
    pub fn request(&self) -> Result<AbRequest> {
        Ok(AbRequest {
            base: self.base.clone(),
            github_base_ref: AbRequest::github_base_ref_from_env(),
            shaders: self.shaders.clone(),
            selection: self.selection.selection(),
            adapter: self.adapter.clone(),
            pairs: self.pairs.unwrap_or(DEFAULT_PAIRS),
            first_look: self.first_look,
            warmup_iterations: self.warmup,
            warmup_min_ms: self.warmup_ms,
            kernels: self.kernels.request(),
            layers: self.layers,
            time_identical: self.time_identical,
            budget: (self.budget.as_deref())
                .map(|text| parse_duration(text, "--budget"))
                .transpose()?,
            ..AbRequest::default()
        })
    }

    /// The library's request for process mode: `base_bin` against `head_bin`, each run with
    /// the workspace at `manifest_path`.
    pub fn process_request(
        &self,
        manifest_path: Option<PathBuf>,
        base_bin: PathBuf,
        head_bin: PathBuf,
    ) -> ProcessRequest {
        ProcessRequest {
            manifest_path,
            selection: self.selection.selection(),
            adapter: self.adapter.clone(),
            pairs: self.pairs.unwrap_or(PROCESS_PAIRS),
            samples: self.samples,
            warmup_iterations: self.warmup,
            warmup_min_ms: self.warmup_ms,
            kernels: self.kernels.request(),
            ..ProcessRequest::new(base_bin, head_bin)
        }
    }

    /// What the flags override of the configuration's comparison settings.
    pub fn overrides(&self) -> CompareOverrides {
        CompareOverrides {
            threshold: self.threshold,
            ..CompareOverrides::default()
        }
    }
}
