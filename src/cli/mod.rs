//! The command line of `cargo convbench` as clap [`Args`](clap::Args) (feature `cli`): one
//! flag group per subcommand, and the groups several share, each beside the library request
//! it becomes (`RunArgs::request` is a [`SweepRequest`]), so a flag and the field it fills
//! are edited in one place and the mapping is unit-tested here. The binary keeps the command
//! tree, dispatch, progress, printing and exit codes; another tool (an `xtask`) can flatten
//! these groups into its own parser.

pub mod ab;
pub mod adapters;
pub mod baseline;
pub mod bisect;
pub mod ci;
pub mod compare;
pub mod history;
pub mod init;
pub mod kernels;
pub mod list;
pub mod peers;
pub mod plot;
pub mod report;
pub mod tune;
pub mod verify;

use crate::backend::BackendKind;
use crate::config::{MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS};
use crate::gate::{BaselineSource, CompareOverrides};
use crate::harness::sweep::{
    DeviceRequest, KernelRequest, MAX_SAMPLES_PER_BENCHMARK, Selection, SweepRequest, WARMUP_ITERATIONS,
    WARMUP_MIN_MS,
};
use crate::model::{MAX_BATCH, Precision};
use crate::results::Stage;
use clap::ValueEnum;
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

/// A slowdown flag's value (`--threshold`, `--fail-threshold`): a fraction (`0.05`) or a
/// percentage (`5%`), as a fraction, refused here, in the user's words, when negative or 1 or more
/// (so that `--threshold 5`, meant as 5%, is not read as 500%); the config's are checked by
/// [`crate::compare::CompareConfig::validate`].
pub fn fraction(text: &str) -> Result<f64, String> {
    let value = crate::compare::parse_fraction(text)?;
    let text = text.trim();
    if value < 0.0 {
        return Err(format!(
            "`{text}` is negative: a slowdown threshold is 0 or more, e.g. 5%"
        ));
    }
    // 5 meant as 5% would silently be 500%.
    if value >= 1.0 {
        return Err(format!(
            "`{text}` is 100% or more: a threshold is a fraction below 1, e.g. 0.05 or 5%"
        ));
    }
    Ok(value)
}

/// A percentage flag's value (`history --min-step`): a number, with or without `%`.
pub fn percent(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let number = text.strip_suffix('%').unwrap_or(text).trim();
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        Ok(_) => Err(format!(
            "`{text}` is not a finite percentage of 0 or more, e.g. 5 or 5%"
        )),
        Err(_) => Err(format!(
            "`{text}` is not a number; give a percentage such as 5 or 5%"
        )),
    }
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

/// Options of every subcommand, given before or after its name.
#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// Path to the workspace's Cargo.toml (for `[workspace.metadata.convbench]`).
    #[arg(long, global = true, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// No progress bars or notices on stderr (warnings and errors still show).
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
    /// Train steps or forward-only evaluations, comma-separated (`eval,train`: every benchmark
    /// of each); default train.
    #[arg(long, value_enum, value_delimiter = ',', alias = "stages")]
    pub stage: Vec<StageArg>,
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
            stages: self.stage.iter().map(|&stage| stage.into()).collect(),
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

/// The ids of the [`RunArgs`] flags that only shape a fresh run. A subcommand that can take a
/// saved record instead (`baseline update --from`, `compare --results`, `ci --results`)
/// declares its record flag in conflict with each, so none of them is silently ignored: clap
/// names both flags and exits 2. `--adapter` is left out (it is also read from
/// `CONVBENCH_ADAPTER`, which a saved record should not make an error), and so is `--format`,
/// which renders the saved record too.
pub const FRESH_RUN_FLAGS: &[&str] = &[
    "model",
    "suite",
    "batch",
    "precision",
    "stage",
    "shapes",
    "backend",
    "tf32",
    "shaders",
    "samples",
    "rounds",
    "warmup",
    "warmup_ms",
    "no_verify",
    "data_grad",
    "layers",
    "kernel",
    "no_tune",
    "out",
];

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
    /// Record and show the per-layer breakdown (shown in the table and md formats; json holds
    /// it; csv has one row per benchmark and phase, so `report --pivot --rows layer` gives it).
    #[arg(long)]
    pub layers: bool,
    /// Which kernels run.
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Output format on stdout: table, json, csv or md (`compare`: table, json or md).
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
    #[arg(long, default_value = crate::baseline::DEFAULT_SET)]
    pub set: String,
    /// Slowdown that counts as a regression, as a fraction or a percentage (`0.05` or `5%`;
    /// default: the config's, else 5%).
    #[arg(long, value_parser = fraction, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Slowdown above which a regression fails the gate (default: the config's
    /// `compare.fail-threshold`, else every regression fails). Smaller significant slowdowns
    /// are reported as alerts, and the gate passes.
    #[arg(long, value_name = "FRACTION", value_parser = fraction, allow_hyphen_values = true)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CiMode, ConfigError};
    use crate::harness::sweep::KernelRequest;
    use clap::Parser;
    use std::time::Duration;

    /// One flag group parsed alone, as a subcommand would flatten it.
    #[derive(Debug, Parser)]
    #[command(no_binary_name = true)]
    struct Line<T: clap::Args> {
        #[command(flatten)]
        args: T,
    }

    fn parse<T: clap::Args>(line: &str) -> T {
        match Line::<T>::try_parse_from(line.split_whitespace()) {
            Ok(parsed) => parsed.args,
            Err(e) => panic!("`{line}` does not parse: {e}"),
        }
    }

    #[test]
    fn thresholds_are_refused_in_the_users_words() {
        let parsed = parse::<BaselineArgs>("--threshold 5% --fail-threshold 0.1");
        assert!((parsed.threshold.expect("given") - 0.05).abs() < 1e-12);
        assert_eq!(parsed.fail_threshold, Some(0.1));
        for (line, says) in [
            ("--threshold 100%", "`100%` is 100% or more"),
            ("--threshold 5", "`5` is 100% or more"),
            // A leading `-` reaches the parser, with or without `=`.
            ("--threshold -5%", "`-5%` is negative"),
            ("--fail-threshold -0.1", "`-0.1` is negative"),
            ("--threshold five", "`five` is not a number"),
        ] {
            let error = Line::<BaselineArgs>::try_parse_from(line.split_whitespace())
                .expect_err(line)
                .to_string();
            assert!(error.contains(says), "{line}: {error}");
        }
        assert_eq!(percent("5%"), Ok(5.0));
        assert!(percent("-5").expect_err("negative").contains("0 or more"));
    }

    #[test]
    fn run_flags_become_the_sweep_request() {
        let request = parse::<RunArgs>(
            "--model lenet,alexnet --batch 1,8 --precision f16 --stage eval --no-verify --warmup 0 \
             --rounds 2 --samples 4 --layers --data-grad --backend cpu --tf32",
        )
        .request();
        assert_eq!(request.selection.models, ["lenet", "alexnet"]);
        assert_eq!(request.selection.batches, [1, 8]);
        assert_eq!(request.selection.precisions, [Precision::F16]);
        assert_eq!(request.selection.stages, [Stage::Eval]);
        assert_eq!(request.device.backends, [BackendKind::Cpu]);
        assert!(request.device.tf32);
        assert!(!request.verify && request.layers && request.data_grad);
        assert_eq!((request.samples, request.rounds), (4, 2));
        // A warm-up given is kept, one not given is the library's default.
        assert_eq!(
            (request.warmup_iterations, request.warmup_min_ms),
            (0, WARMUP_MIN_MS)
        );
        let defaults = parse::<RunArgs>("").request();
        assert_eq!(defaults.warmup_iterations, WARMUP_ITERATIONS);
        assert!(defaults.verify);
        assert_eq!(defaults.selection.stages(), [Stage::Train]);
        // Several stages, spelled as a list or (as `peers` once took them) `--stages`.
        for flag in [
            "--stage eval,train",
            "--stages eval,train",
            "--stage eval --stage train",
        ] {
            let both = parse::<RunArgs>(flag).request();
            assert_eq!(both.selection.stages(), [Stage::Eval, Stage::Train], "{flag}");
        }
    }

    #[test]
    fn kernel_flags_say_auto_heuristic_or_a_name() {
        assert_eq!(parse::<KernelArgs>("").request(), KernelRequest::Auto);
        assert_eq!(
            parse::<KernelArgs>("--no-tune").request(),
            KernelRequest::Heuristic
        );
        assert_eq!(
            parse::<KernelArgs>("--kernel user:mine").request(),
            KernelRequest::Named("user:mine".into())
        );
    }

    #[test]
    fn ci_decides_by_ab_in_every_spelling_and_measures_what_the_run_flags_select() {
        let mode = |line: &str| parse::<ci::CiArgs>(line).request().mode;
        assert_eq!(mode(""), None, "no flag: the configuration decides");
        assert_eq!(mode("--ab"), Some(CiMode::Ab));
        assert_eq!(mode("--ab-base main"), Some(CiMode::Ab));
        assert_eq!(mode("--mode baseline"), Some(CiMode::Baseline));
        let request =
            parse::<ci::CiArgs>("--ab-base main --model lenet --kernel direct --pairs 16 --layers").request();
        assert_eq!(request.ab.base.as_deref(), Some("main"));
        assert_eq!(request.ab.selection, request.sweep.selection);
        assert_eq!(request.ab.selection.models, ["lenet"]);
        assert_eq!(request.ab.kernels, KernelRequest::Named("direct".into()));
        assert_eq!(request.ab.pairs, 16);
        assert!(request.ab.layers);
        // A/B warms less than a run unless told: the flag's absence stays absent.
        assert_eq!(request.ab.warmup_iterations, None);
    }

    #[test]
    fn comment_takes_the_run_from_its_flags_and_the_claimed_base_only_as_a_claim() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let args = parse::<ci::CommentArgs>(&format!(
            "--pr 7 --head-sha {sha} --default-branch main --baseline-rev feature --run-id 9 \
             --run-conclusion failure --on-gap neutral"
        ));
        let request = args.request(Some("https://example.org/history".into()));
        assert_eq!(request.run.head_sha.as_deref(), Some(sha));
        assert_eq!(request.run.default_branch.as_deref(), Some("main"));
        assert_eq!(request.run.claimed_base.as_deref(), Some("feature"));
        assert_eq!(
            (request.run.run_id, request.run.run_conclusion.as_deref()),
            (Some(9), Some("failure"))
        );
        assert_eq!(request.on_gap, crate::gate::OnGap::Neutral);
        assert!(request.results.is_empty());
        assert_eq!(
            request.dashboard_url.as_deref(),
            Some("https://example.org/history")
        );
    }

    #[test]
    fn a_budget_is_a_duration_and_one_that_is_not_names_its_flag() {
        let request = parse::<ab::AbArgs>("--budget 90s --model lenet").request();
        assert_eq!(request.ok().and_then(|r| r.budget), Some(Duration::from_secs(90)));
        for args in [
            parse::<ab::AbArgs>("--budget soon").request().err(),
            parse::<bisect::BisectArgs>("--good a --bad b --budget soon")
                .request()
                .err(),
        ] {
            let Some(crate::Error::Config(error)) = args else {
                panic!("--budget soon was accepted: {args:?}");
            };
            assert!(
                matches!(&*error, ConfigError::NotADuration { what, text, .. } if what == "--budget" && text == "soon"),
                "{error:?}"
            );
        }
    }

    #[test]
    fn process_mode_counts_rounds_and_runs_the_named_workspace() {
        let args = parse::<ab::AbArgs>("--base-bin /old/cargo-convbench --model lenet --samples 5");
        let request = args.process_request(
            Some("ws/Cargo.toml".into()),
            "/old/cargo-convbench".into(),
            "/new".into(),
        );
        assert_eq!(request.pairs, crate::harness::ab_process::PROCESS_PAIRS);
        assert_eq!(request.samples, 5);
        assert_eq!(request.manifest_path, Some(PathBuf::from("ws/Cargo.toml")));
        assert_eq!(request.selection.models, ["lenet"]);
    }

    #[test]
    fn a_count_is_a_whole_number_in_its_range() {
        assert_eq!(count::<1, 10>(" 7 "), Ok(7));
        assert!(count::<1, 10>("0").is_err_and(|e| e.contains("out of range") && e.contains("from 1 to 10")));
        assert!(count::<1, 10>("-3").is_err_and(|e| e.contains("`-3` is not a whole number")));
        assert!(count_u64::<0, 5>("6").is_err());
    }
}
