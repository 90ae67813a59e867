//! The flags several subcommands share, and what each becomes in the library.

use clap::ValueEnum;
use convbench::backend::BackendKind;
use convbench::config::{MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS};
use convbench::gate::{BaselineSource, CompareOverrides};
use convbench::harness::sweep::{
    DeviceRequest, KernelRequest, MAX_SAMPLES_PER_BENCHMARK, Selection, SweepRequest, WARMUP_ITERATIONS,
    WARMUP_MIN_MS,
};
use convbench::model::{MAX_BATCH, Precision};
use convbench::results::Stage;
use std::path::PathBuf;

/// A count flag's value: a whole number from `MIN` to `MAX`. clap reports an error (exit 2)
/// naming the flag, the value and the range before anything runs: a count of zero divides or
/// measures nothing, and a huge one would allocate or run for ever.
pub fn count<const MIN: usize, const MAX: usize>(text: &str) -> Result<usize, String> {
    let value = whole_number(text, MIN as u64, MAX as u64)?;
    Ok(value as usize)
}

/// [`count`] for a 64-bit value.
pub fn count_u64<const MIN: u64, const MAX: u64>(text: &str) -> Result<u64, String> {
    whole_number(text, MIN, MAX)
}

fn whole_number(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let out_of_range = || format!("give a whole number from {min} to {max}");
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number; {}", out_of_range()))?;
    if !(min..=max).contains(&value) {
        return Err(format!("{value} is out of range; {}", out_of_range()));
    }
    Ok(value)
}

/// Train or eval, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StageArg {
    /// Forward, loss, backward (grad-input and grad-params) and SGD update.
    Train,
    /// Forward only, batch norm in inference mode.
    Eval,
}

impl From<StageArg> for Stage {
    fn from(stage: StageArg) -> Self {
        match stage {
            StageArg::Train => Stage::Train,
            StageArg::Eval => Stage::Eval,
        }
    }
}

/// Exit code when a regression was found (the gate failed).
pub const EXIT_REGRESSION: u8 = 1;

/// Options of every subcommand, given before or after its name.
#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// Path to the workspace's Cargo.toml (for `[workspace.metadata.convbench]`).
    #[arg(long, global = true, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// No progress bars or notices on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// What to benchmark: the selection flags `run`, `tune`, `verify` and `ab` share.
#[derive(Debug, Clone, clap::Args)]
pub struct SelectionArgs {
    /// Models, comma-separated (see `cargo convbench list`).
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Layer suites, comma-separated: `layers`, `deepbench`.
    #[arg(long, value_delimiter = ',')]
    pub suite: Vec<String>,
    /// Batch sizes, comma-separated, e.g. `1,8,64`.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, value_parser = count::<1, MAX_BATCH>)]
    pub batch: Vec<usize>,
    /// Precisions, comma-separated: `f32`, `f16`.
    #[arg(long, value_delimiter = ',')]
    pub precision: Vec<Precision>,
    /// Train step or forward-only evaluation.
    #[arg(long, value_enum, default_value_t = StageArg::Train)]
    pub stage: StageArg,
    /// A CSV of single convolutions to time, DeepBench-style rows `N,C,H,W,K,R,S,stride,pad`
    /// (each row's N is its batch unless --batch is given); a suite named after the file.
    #[arg(long, value_name = "FILE.csv")]
    pub shapes: Option<PathBuf>,
}

impl SelectionArgs {
    /// The library's selection.
    pub fn selection(&self) -> Selection {
        Selection {
            models: self.model.clone(),
            suites: self.suite.clone(),
            batches: self.batch.clone(),
            precisions: self.precision.clone(),
            stage: self.stage.into(),
            shapes: self.shapes.clone(),
        }
    }
}

/// The backends and adapter to run on: the flags `run` and `verify` share.
#[derive(Debug, Clone, clap::Args)]
pub struct DeviceArgs {
    /// Backends, comma-separated: `wgpu` (default), `cpu`, `cuda` (feature `cuda`).
    #[arg(long, value_delimiter = ',')]
    pub backend: Vec<BackendKind>,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// Let the cuda backend use TF32 tensor cores for f32 (off: strict f32, comparable with
    /// WGSL's f32; recorded in the adapter fingerprint).
    #[arg(long)]
    pub tf32: bool,
    /// Compile the wgpu kernels from the `.wgsl` files of DIR (every file of convbench's
    /// `shaders/`) instead of the embedded ones: edit a kernel and re-run without rebuilding.
    /// Verified against the reference like the embedded ones; recorded in the record.
    #[arg(long, value_name = "DIR")]
    pub shaders: Option<PathBuf>,
}

impl DeviceArgs {
    /// The library's device request.
    pub fn request(&self) -> DeviceRequest {
        DeviceRequest {
            backends: self.backend.clone(),
            adapter: self.adapter.clone(),
            tf32: self.tf32,
            shaders: self.shaders.clone(),
        }
    }
}

/// How each op's kernel variant is chosen: the flags `run` and `verify` share.
#[derive(Debug, Clone, clap::Args)]
pub struct KernelArgs {
    /// Kernel variant: `auto` (the winners of `cargo convbench tune` for this adapter where
    /// tuned, else a shape heuristic), `direct` (the baseline kernels) or a variant id such as
    /// `gemm_64x64x16_4x4`, used wherever it implements the op.
    #[arg(long, default_value = "auto", value_name = "VARIANT")]
    pub kernel: String,
    /// Choose kernels by the shape heuristic, ignoring the tune cache.
    #[arg(long, conflicts_with = "kernel")]
    pub no_tune: bool,
}

impl KernelArgs {
    /// The library's kernel request.
    pub fn request(&self) -> KernelRequest {
        match (self.kernel.as_str(), self.no_tune) {
            ("auto", true) => KernelRequest::Heuristic,
            ("auto", false) => KernelRequest::Auto,
            (name, _) => KernelRequest::Named(name.to_string()),
        }
    }
}

/// Arguments of `run` (also used by `compare`, `baseline update` and `ci` to run fresh).
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// What to benchmark.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Where to run it.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Timed iterations per round.
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, value_parser = count::<1, MAX_SAMPLES_PER_BENCHMARK>)]
    pub samples: usize,
    /// Rounds per benchmark: each re-warmed and timed `--samples` times, the rounds of the
    /// sweep interleaved across its benchmarks. Rounds are the gate's unit of evidence.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = count::<1, MAX_SAMPLES_PER_BENCHMARK>)]
    pub rounds: usize,
    /// Minimum warm-up iterations (default: 3; 1 per side when `ci` decides by A/B, whose pairs
    /// alternate ABBA).
    #[arg(long, allow_negative_numbers = true, value_parser = count::<0, MAX_WARMUP_ITERATIONS>)]
    pub warmup: Option<usize>,
    /// Minimum warm-up time in milliseconds (default: 200; none when `ci` decides by A/B).
    #[arg(long, allow_negative_numbers = true, value_parser = count_u64::<0, MAX_WARMUP_MS>)]
    pub warmup_ms: Option<u64>,
    /// Skip the check of every op against the CPU reference.
    #[arg(long)]
    pub no_verify: bool,
    /// Also compute the first layer's input gradient (Torch and Chainer skip it).
    #[arg(long)]
    pub data_grad: bool,
    /// Record and show the per-layer breakdown.
    #[arg(long)]
    pub layers: bool,
    /// Which kernels run.
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Output format on stdout: table, json, csv or md.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Also write the JSON record to this file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl RunArgs {
    /// The library's sweep request.
    pub fn request(&self) -> SweepRequest {
        SweepRequest {
            selection: self.selection.selection(),
            device: self.device.request(),
            kernels: self.kernels.request(),
            samples: self.samples,
            rounds: self.rounds,
            warmup_iterations: self.warmup.unwrap_or(WARMUP_ITERATIONS),
            warmup_min_ms: self.warmup_ms.unwrap_or(WARMUP_MIN_MS),
            verify: !self.no_verify,
            data_grad: self.data_grad,
            layers: self.layers,
        }
    }
}

/// Where the baseline comes from and how to judge.
#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    /// Compare against the baseline at this git revision (default: the merge-base of HEAD with
    /// the default branch, or with `GITHUB_BASE_REF` in Actions).
    #[arg(long, value_name = "REV", conflicts_with = "baseline_file")]
    pub baseline_rev: Option<String>,
    /// Compare against a plain record file instead of git.
    #[arg(long, value_name = "FILE")]
    pub baseline_file: Option<PathBuf>,
    /// Baseline set (file name under `baselines/<adapter>/`).
    #[arg(long, default_value = "default")]
    pub set: String,
    /// Slowdown that counts as a regression, as a fraction (default 0.05, or the config's).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Slowdown above which a regression fails the gate (default: the config's
    /// `compare.fail-threshold`, else every regression fails). Smaller significant slowdowns
    /// are reported as alerts, and the gate passes.
    #[arg(long, value_name = "FRACTION")]
    pub fail_threshold: Option<f64>,
    /// Compare numbers from different adapters anyway.
    #[arg(long)]
    pub allow_other_adapter: bool,
    /// Fail (exit 1) on inconclusive results too.
    #[arg(long)]
    pub fail_on_inconclusive: bool,
}

impl BaselineArgs {
    /// Where the baseline comes from.
    pub fn source(&self) -> BaselineSource {
        BaselineSource {
            rev: self.baseline_rev.clone(),
            file: self.baseline_file.clone(),
            set: self.set.clone(),
        }
    }

    /// What the flags override of the configuration's comparison settings.
    pub fn overrides(&self) -> CompareOverrides {
        CompareOverrides {
            threshold: self.threshold,
            fail_threshold: self.fail_threshold,
            allow_other_adapter: self.allow_other_adapter,
            fail_on_inconclusive: self.fail_on_inconclusive,
        }
    }
}

/// Output format of listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// A table.
    Table,
    /// JSON.
    Json,
}
