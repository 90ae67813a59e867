//! `cargo convbench ab`: interleaved A/B of two revisions.
//!
//! Shader mode (the default): in ONE process on ONE device, the WGSL of `shaders/` as committed
//! at the base revision (read with git2) and as it is in the working tree run the same plan on
//! the same inputs, both verified against the f64 reference first, alternating sample by sample
//! in ABBA order; the verdict rests on the pairs' ratios (see `convbench::compare::ab`), so the
//! machine's drift cancels.
//!
//! Process mode (`--base-bin PATH`, see `convbench::harness::ab_process`): for changes outside
//! the shaders, a `cargo-convbench` built from the base revision and this one alternate whole
//! `run` invocations, round by round.

use crate::args::{EXIT_REGRESSION, Global};
use crate::args::{KernelArgs, SelectionArgs, count, count_u64};
use crate::output::{print, write_atomic};
use crate::progress::run_ab;
use convbench::compare::CompareConfig;
use convbench::config::parse_duration;
use convbench::config::{self, MAX_PAIRS, MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS, Workspace};
use convbench::gate::{CompareOverrides, compare_config};
use convbench::harness::ab::{AbOutcome, AbRequest, DEFAULT_PAIRS, FIRST_LOOK};
use convbench::harness::ab_process::{PROCESS_PAIRS, PROCESS_SAMPLES, ProcessRequest};
use convbench::harness::sweep::MAX_SAMPLES_PER_BENCHMARK;
use convbench::harness::{AbError, Interrupted};
use convbench::{Error, Result};
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
    /// Slowdown that counts as a regression, as a fraction (default: the config's threshold).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Write the verdicts and every raw pair as JSON to this file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl AbArgs {
    /// The library's request for shader mode.
    pub fn request(&self) -> AbRequest {
        AbRequest {
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
            ..AbRequest::default()
        }
    }
}

/// Measures both sides as `a` says and judges the pairs with `config`'s threshold and alpha.
/// Process mode stops at SIGINT or SIGTERM after the round in flight: the outcome judges the
/// pairs finished, and the interruption comes beside it.
fn measure_and_judge(
    args: &Global,
    a: &AbArgs,
    workspace: &Workspace,
    config: &CompareConfig,
) -> Result<(AbOutcome, Option<Error>)> {
    let Some(base_bin) = &a.base_bin else {
        let mut request = a.request();
        request.budget = a
            .budget
            .as_deref()
            .map(|text| parse_duration(text, "--budget"))
            .transpose()?;
        return run_ab(&request, workspace, config, args.quiet);
    };
    let head_bin = std::env::current_exe().map_err(|source| AbError::CurrentExe { source })?;
    let request = ProcessRequest {
        manifest_path: args.manifest_path.clone(),
        selection: a.selection.selection(),
        adapter: a.adapter.clone(),
        pairs: a.pairs.unwrap_or(PROCESS_PAIRS),
        samples: a.samples,
        warmup_iterations: a.warmup,
        warmup_min_ms: a.warmup_ms,
        kernels: a.kernels.request(),
        ..ProcessRequest::new(base_bin.clone(), head_bin)
    };
    let interrupt = crate::interrupt::install();
    request.run(config, &|| interrupt.requested(), &mut |done| {
        if !args.quiet {
            eprintln!("round pair {done} of {} done", request.pairs);
        }
    })
}

/// `cargo convbench ab`.
pub fn run(args: &Global, a: &AbArgs) -> Result<u8> {
    if let Some(out) = &a.out {
        crate::output::check_writable(out)?;
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let overrides = CompareOverrides {
        threshold: a.threshold,
        ..CompareOverrides::default()
    };
    let config = compare_config(&workspace, &overrides)?;
    let (outcome, interrupted) = measure_and_judge(args, a, &workspace, &config)?;
    if interrupted.is_some() && outcome.measured.is_empty() {
        return Err(interrupted.unwrap_or_else(|| Interrupted::FirstPair.into()));
    }
    print(&convbench::report::ab_table(&outcome.description, &outcome.rows));
    if let Some(out) = &a.out {
        write_atomic(out, &outcome.to_json(config.alpha))?;
        if !args.quiet && interrupted.is_some() {
            eprintln!(
                "wrote the pairs finished before the interruption to {}",
                out.display()
            );
        }
    }
    if let Some(error) = interrupted {
        return Err(error);
    }
    Ok(if outcome.has_regression() {
        EXIT_REGRESSION
    } else {
        0
    })
}
