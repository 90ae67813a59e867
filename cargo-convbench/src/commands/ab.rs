//! `cargo convbench ab`: interleaved A/B of two revisions.
//!
//! Shader mode (the default): in ONE process on ONE device, the WGSL of `shaders/` as committed
//! at the base revision (read with git2) and as it is in the working tree run the same plan on
//! the same inputs, both verified against the f64 reference first, alternating sample by sample
//! in ABBA order; the verdict rests on the pairs' ratios (see `convbench::compare::ab`), so the
//! machine's drift cancels.
//!
//! Process mode (`--base-bin PATH`): for changes outside the shaders (the harness, the
//! planner), a `cargo-convbench` built from the base revision and this one alternate whole
//! `run --rounds 1` invocations, round by round (ABBA), and each round's medians make a pair.

use crate::args::{KernelArgs, SelectionArgs, StageArg, count, count_u64};
use crate::cli::{Args, EXIT_REGRESSION};
use crate::output::{print, write_atomic};
use crate::progress::run_ab;
use comfy_table::Table;
use convbench::compare::ab::AbRow;
use convbench::compare::{CompareConfig, Verdict};
use convbench::config::parse_duration;
use convbench::config::{self, MAX_PAIRS, MAX_WARMUP_ITERATIONS, MAX_WARMUP_MS, Workspace};
use convbench::github::{format_change, format_duration_ns};
use convbench::harness::ab::{AbOutcome, AbRequest, DEFAULT_PAIRS, FIRST_LOOK, Measured};
use convbench::harness::sweep::MAX_SAMPLES_PER_BENCHMARK;
use convbench::results::{BenchmarkResult, Phase, RunRecord};
use convbench::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Pairs of rounds in process mode by default: each is two whole `run` processes.
const PROCESS_PAIRS: usize = 20;

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
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, value_parser = count::<1, MAX_SAMPLES_PER_BENCHMARK>)]
    pub samples: usize,
    /// Minimum warm-up iterations per side.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = count::<0, MAX_WARMUP_ITERATIONS>)]
    pub warmup: usize,
    /// Minimum warm-up time in milliseconds.
    #[arg(long, default_value_t = 200, allow_negative_numbers = true, value_parser = count_u64::<0, MAX_WARMUP_MS>)]
    pub warmup_ms: u64,
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
            github_base_ref: std::env::var("GITHUB_BASE_REF").ok().filter(|r| !r.is_empty()),
            shaders: self.shaders.clone(),
            head: None,
            selection: self.selection.selection(),
            adapter: self.adapter.clone(),
            pairs: self.pairs.unwrap_or(DEFAULT_PAIRS),
            first_look: self.first_look,
            budget: None,
            warmup_iterations: self.warmup,
            warmup_min_ms: self.warmup_ms,
            kernels: self.kernels.request(),
            layers: self.layers,
        }
    }
}

/// Measures both sides as `a` says and judges the pairs with `config`'s threshold and alpha.
/// Process mode stops at SIGINT or SIGTERM after the round in flight: the outcome judges the
/// pairs finished, and the interruption comes beside it.
pub fn measure_and_judge(
    args: &Args,
    a: &AbArgs,
    workspace: &Workspace,
    config: &CompareConfig,
) -> Result<(AbOutcome, Option<Error>)> {
    let Some(bin) = &a.base_bin else {
        let mut request = a.request();
        request.budget = a
            .budget
            .as_deref()
            .map(|text| parse_duration(text, "--budget"))
            .transpose()?;
        return run_ab(&request, workspace, config, args.quiet);
    };
    let (label, measured, interrupted) = process_mode(args, a, bin)?;
    let mut description = format!("process mode: {} (A) against this build (B)", bin.display());
    if interrupted.is_some() {
        let pairs = measured.first().map_or(0, |m| m.base_ns.len());
        description.push_str(&format!("; interrupted after {pairs} pairs of rounds"));
    }
    Ok((
        AbOutcome::judge(description, label, measured, config, 1),
        interrupted,
    ))
}

/// `cargo convbench ab`.
pub fn run(args: &Args, a: &AbArgs) -> Result<u8> {
    if let Some(out) = &a.out {
        crate::output::check_writable(out)?;
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let mut config = workspace.config.compare_config();
    if let Some(threshold) = a.threshold {
        config.threshold = threshold;
    }
    config.validate()?;
    let (outcome, interrupted) = measure_and_judge(args, a, &workspace, &config)?;
    if interrupted.is_some() && outcome.measured.is_empty() {
        return Err(interrupted.unwrap_or_else(|| Error::Interrupted("a pair was measured".into())));
    }
    print(&render(&outcome.description, &outcome.rows));
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

/// Whether a row moved beyond its threshold (a regression or an improvement).
fn moved(row: &AbRow) -> bool {
    matches!(row.verdict, Verdict::Regression | Verdict::Improvement)
}

/// The table of verdicts, the rows that moved first (a phase that moved says where a change
/// of the whole iteration came from), then the evidence of each benchmark and of each row that
/// moved.
fn render(description: &str, rows: &[AbRow]) -> String {
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "benchmark",
            "phase",
            "pairs",
            "base",
            "head",
            "change",
            "95% CI",
            "verdict",
        ]);
    let ordered: Vec<&AbRow> = rows
        .iter()
        .filter(|r| moved(r))
        .chain(rows.iter().filter(|r| !moved(r)))
        .collect();
    for row in &ordered {
        table.add_row([
            row.benchmark_id.clone(),
            row.layer.as_ref().map_or_else(
                || row.phase.as_str().to_string(),
                |layer| format!("layer {layer}"),
            ),
            row.pairs.to_string(),
            format_duration_ns(row.base_median_ns),
            format_duration_ns(row.head_median_ns),
            if row.estimated() {
                format_change(row.change)
            } else {
                "–".to_string()
            },
            if row.estimated() {
                format!("{} to {}", format_change(row.ci.0), format_change(row.ci.1))
            } else {
                "–".to_string()
            },
            row.verdict.as_str().to_string(),
        ]);
    }
    let mut text = format!("A/B, {description}\n{table}\n");
    for row in ordered
        .iter()
        .filter(|r| (r.phase == Phase::Total && r.layer.is_none()) || moved(r))
    {
        text.push_str(&format!(
            "{} {}: {} (threshold {:.1}%)\n",
            row.benchmark_id,
            row.phase.as_str(),
            row.evidence,
            row.threshold * 100.0
        ));
    }
    text
}

/// Process mode: `pairs` rounds of each binary, alternating ABBA, each round one `run
/// --rounds 1` writing a record; a pair is the two rounds' total medians per benchmark.
/// SIGINT or SIGTERM ends the loop after the round in flight; the third value is then the
/// interruption, beside the pairs finished.
fn process_mode(args: &Args, a: &AbArgs, base_bin: &Path) -> Result<(String, Vec<Measured>, Option<Error>)> {
    if !base_bin.is_file() {
        return Err(Error::InvalidInput(format!(
            "--base-bin {} is not a file; build the base revision first (`git worktree add ../base REV && \
             cargo build --release --manifest-path ../base/Cargo.toml`) and pass its target/release/cargo-convbench",
            base_bin.display()
        )));
    }
    let head_bin = std::env::current_exe()
        .map_err(|e| Error::Environment(format!("cannot find this binary to run it again: {e}")))?;
    let dir = tempfile::tempdir()
        .map_err(|e| Error::Environment(format!("cannot create a temporary folder: {e}")))?;
    let interrupt = crate::interrupt::install();
    let mut by_id: BTreeMap<String, Measured> = BTreeMap::new();
    let mut adapter_label = String::new();
    let pairs = a.pairs.unwrap_or(PROCESS_PAIRS);
    let finished = |by_id: BTreeMap<String, Measured>, label: String, index: usize| {
        let stop = Error::Interrupted(format!("all {pairs} pairs of rounds were run ({index} were)"));
        Ok((label, by_id.into_values().collect(), Some(stop)))
    };
    for index in 0..pairs {
        let order = if index % 2 == 0 {
            ["base", "head"]
        } else {
            ["head", "base"]
        };
        let mut records: BTreeMap<&str, RunRecord> = BTreeMap::new();
        for side in order {
            if interrupt.requested() {
                return finished(by_id, adapter_label, index);
            }
            let bin = if side == "base" {
                base_bin
            } else {
                head_bin.as_path()
            };
            let out = dir.path().join(format!("{side}-{index}.json"));
            let status = std::process::Command::new(bin)
                .args(run_args(args, a, &out))
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| Error::Environment(format!("cannot start {}: {e}", bin.display())))?;
            // Ctrl-C reaches the round's process too: its failure is the interruption.
            if interrupt.requested() {
                return finished(by_id, adapter_label, index);
            }
            if !status.success() {
                return Err(Error::Environment(format!(
                    "the {side} build ({}) failed its run with {status}; run it alone to see why",
                    bin.display()
                )));
            }
            if !out.is_file() {
                return Err(Error::Environment(format!(
                    "the {side} build ({}) ended without writing a record; --base-bin must be a \
                     cargo-convbench binary built from the base revision",
                    bin.display()
                )));
            }
            records.insert(side, RunRecord::read(&out)?);
        }
        for benchmark in &records["head"].benchmarks {
            adapter_label = benchmark.adapter.label();
            let Some(base) = records["base"].benchmarks.iter().find(|b| b.id == benchmark.id) else {
                continue;
            };
            let total = |b: &BenchmarkResult| {
                b.phases
                    .iter()
                    .find(|p| p.phase == Phase::Total)
                    .map_or(0, |p| p.summary.median_ns.round() as u64)
            };
            let entry = by_id.entry(benchmark.id.clone()).or_insert_with(|| Measured {
                id: benchmark.id.clone(),
                base_ns: Vec::new(),
                head_ns: Vec::new(),
                base_first: Vec::new(),
                phases: Vec::new(),
                layers: Vec::new(),
            });
            entry.base_ns.push(total(base));
            entry.head_ns.push(total(benchmark));
            entry.base_first.push(order[0] == "base");
        }
        if !args.quiet {
            eprintln!("round pair {} of {pairs} done", index + 1);
        }
    }
    Ok((adapter_label, by_id.into_values().collect(), None))
}

/// The `run` arguments of one round in process mode: the same selection on both builds.
fn run_args(args: &Args, a: &AbArgs, out: &Path) -> Vec<String> {
    let mut list: Vec<String> = vec!["run".into(), "--quiet".into(), "--rounds".into(), "1".into()];
    if let Some(manifest) = &args.manifest_path {
        list.extend(["--manifest-path".into(), manifest.display().to_string()]);
    }
    let join = |values: Vec<String>| values.join(",");
    let s = &a.selection;
    if !s.model.is_empty() {
        list.extend(["--model".into(), join(s.model.clone())]);
    }
    if !s.suite.is_empty() {
        list.extend(["--suite".into(), join(s.suite.clone())]);
    }
    if !s.batch.is_empty() {
        list.extend([
            "--batch".into(),
            join(s.batch.iter().map(ToString::to_string).collect()),
        ]);
    }
    if !s.precision.is_empty() {
        list.extend([
            "--precision".into(),
            join(s.precision.iter().map(ToString::to_string).collect()),
        ]);
    }
    if s.stage == StageArg::Eval {
        list.extend(["--stage".into(), "eval".into()]);
    }
    if let Some(adapter) = &a.adapter {
        list.extend(["--adapter".into(), adapter.clone()]);
    }
    list.extend([
        "--samples".into(),
        a.samples.to_string(),
        "--warmup".into(),
        a.warmup.to_string(),
        "--warmup-ms".into(),
        a.warmup_ms.to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    if a.kernels.kernel != "auto" {
        list.extend(["--kernel".into(), a.kernels.kernel.clone()]);
    }
    if a.kernels.no_tune {
        list.push("--no-tune".into());
    }
    list
}
