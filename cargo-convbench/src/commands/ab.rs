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

use super::run::{KernelArgs, Selection, StageArg, jobs, kernel_choice};
use crate::cli::{Args, EXIT_REGRESSION};
use crate::output::{print, write_atomic};
use crate::progress::Progress;
use comfy_table::Table;
use convbench::backend::Backend;
use convbench::backend::wgpu::WgpuBackend;
use convbench::compare::ab::{AbInput, AbRow, judge_pairs};
use convbench::compare::{CompareConfig, Verdict};
use convbench::config::{self, Workspace};
use convbench::github::{format_change, format_duration_ns};
use convbench::harness::{AbSamples, RunOptions, measure_ab, verify_target};
use convbench::kernels::shader_set::ShaderSet;
use convbench::results::{BenchmarkResult, Phase, RunRecord};
use convbench::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    pub selection: Selection,
    /// Adapter: index, backend name (vulkan, metal, dx12, gl) or part of its name.
    #[arg(long, env = "CONVBENCH_ADAPTER")]
    pub adapter: Option<String>,
    /// Pairs of interleaved iterations per benchmark (shader mode), or pairs of rounds
    /// (process mode).
    #[arg(long, default_value_t = 60)]
    pub pairs: usize,
    /// Timed iterations per round (process mode).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Minimum warm-up iterations per side.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Minimum warm-up time in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub warmup_ms: u64,
    /// Which kernels run (the same on both sides).
    #[command(flatten)]
    pub kernels: KernelArgs,
    /// Slowdown that counts as a regression, as a fraction (default: the config's threshold).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Write the verdicts and every raw pair as JSON to this file (atomically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// One benchmark's pairs, whichever mode measured them.
struct Measured {
    id: String,
    base_ns: Vec<u64>,
    head_ns: Vec<u64>,
    base_first: Vec<bool>,
}

/// What an A/B comparison measured and decided.
pub struct AbOutcome {
    /// Which mode, which sides, which shader files differ.
    pub description: String,
    /// One verdict per benchmark.
    pub rows: Vec<AbRow>,
    /// The adapter, e.g. `llvmpipe (vulkan)`.
    pub adapter_label: String,
    measured: Vec<Measured>,
}

impl AbOutcome {
    /// Whether a row is a regression.
    pub fn has_regression(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Regression)
    }

    /// The verdicts and every raw pair, as JSON.
    pub fn to_json(&self, alpha: f64) -> String {
        let samples: BTreeMap<&str, serde_json::Value> = self
            .measured
            .iter()
            .map(|m| {
                (
                    m.id.as_str(),
                    serde_json::json!({"base_ns": m.base_ns, "head_ns": m.head_ns, "base_first": m.base_first}),
                )
            })
            .collect();
        let json = serde_json::json!({
            "mode": self.description,
            "adapter": self.adapter_label,
            "alpha": alpha,
            "rows": self.rows,
            "samples": samples,
        });
        let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Measures both sides as `a` says and judges the pairs with `config`'s threshold and alpha.
pub fn measure_and_judge(
    args: &Args,
    a: &AbArgs,
    workspace: &Workspace,
    config: &CompareConfig,
) -> Result<AbOutcome> {
    if a.pairs == 0 {
        return Err(Error::InvalidInput(
            "--pairs must be at least 1; the default is 30".into(),
        ));
    }
    let (description, adapter_label, measured) = match &a.base_bin {
        Some(bin) => {
            let (label, measured) = process_mode(args, a, bin)?;
            (
                format!("process mode: {} (A) against this build (B)", bin.display()),
                label,
                measured,
            )
        }
        None => shader_mode(args, a, workspace)?,
    };
    let inputs: Vec<AbInput<'_>> = measured
        .iter()
        .map(|m| AbInput {
            benchmark_id: &m.id,
            base_ns: &m.base_ns,
            head_ns: &m.head_ns,
            threshold: config.threshold_for(&m.id),
        })
        .collect();
    let rows = judge_pairs(&inputs, config.alpha);
    Ok(AbOutcome {
        description,
        rows,
        adapter_label,
        measured,
    })
}

/// `cargo convbench ab`.
pub fn run(args: &Args, a: &AbArgs) -> Result<u8> {
    let workspace = config::load(args.manifest_path.as_deref())?;
    super::run::register_kernels(&workspace)?;
    let mut config = workspace.config.compare_config();
    if let Some(threshold) = a.threshold {
        config.threshold = threshold;
    }
    config.validate()?;
    let outcome = measure_and_judge(args, a, &workspace, &config)?;
    print(&render(&outcome.description, &outcome.rows));
    if let Some(out) = &a.out {
        write_atomic(out, &outcome.to_json(config.alpha))?;
    }
    Ok(if outcome.has_regression() {
        EXIT_REGRESSION
    } else {
        0
    })
}

/// The table of verdicts, then each row's evidence.
fn render(description: &str, rows: &[AbRow]) -> String {
    let mut table = Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header([
            "benchmark",
            "pairs",
            "base",
            "head",
            "change",
            "95% CI",
            "verdict",
        ]);
    for row in rows {
        table.add_row([
            row.benchmark_id.clone(),
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
    for row in rows {
        text.push_str(&format!(
            "{}: {} (threshold {:.1}%)\n",
            row.benchmark_id,
            row.evidence,
            row.threshold * 100.0
        ));
    }
    text
}

/// Shader mode: the base revision's `shaders/` against the working tree's, interleaved.
fn shader_mode(args: &Args, a: &AbArgs, workspace: &Workspace) -> Result<(String, String, Vec<Measured>)> {
    let repo_dir = workspace.root.join("shaders");
    let dir = a.shaders.clone().unwrap_or_else(|| repo_dir.clone());
    for folder in [&repo_dir, &dir] {
        if !folder.is_dir() {
            return Err(Error::InvalidInput(format!(
                "{} is not a folder; `ab` compares the WGSL of the checkout's shaders/ at the base \
                 revision with the working tree (or --shaders DIR): run it in convbench's repository, \
                 or use --base-bin PATH for a whole build",
                folder.display()
            )));
        }
    }
    let head_set = ShaderSet::from_dir(&dir)?;
    let github_base_ref = std::env::var("GITHUB_BASE_REF").ok().filter(|r| !r.is_empty());
    let base_set = ShaderSet::from_git(&repo_dir, a.base.as_deref(), github_base_ref.as_deref())?;
    let changed = head_set.differing_files(&base_set);
    let description = format!(
        "{} (A) against the working tree's {} (B); {}",
        base_set.describe(),
        dir.display(),
        if changed.is_empty() {
            "no shader differs".to_string()
        } else {
            format!("changed: {}", changed.join(", "))
        }
    );
    let device = WgpuBackend::open(a.adapter.as_deref())?;
    let base = device.with_shaders(base_set);
    let head = device.with_shaders(head_set);
    let mut notices = Vec::new();
    let backends: Vec<Box<dyn Backend>> = vec![Box::new(device.with_shaders(ShaderSet::embedded()))];
    let selected = jobs(
        &a.selection,
        &workspace.config,
        super::run::is_real_gpu(backends[0].as_ref()),
        &mut notices,
    )?;
    let options = RunOptions {
        stage: a.selection.stage(),
        samples: a.pairs,
        warmup_iterations: a.warmup,
        warmup_min: Duration::from_millis(a.warmup_ms),
        verify: true,
        data_grad: false,
        layers: false,
        kernels: kernel_choice(&a.kernels, workspace, &backends, &mut notices)?,
        interrupt: crate::interrupt::install(),
    };
    let progress = Progress::new(selected.len(), args.quiet);
    for notice in &notices {
        progress.println(&format!("notice: {notice}"));
    }
    let mut measured = Vec::new();
    for job in &selected {
        let id = BenchmarkResult::make_id(
            &job.target.name(),
            options.stage,
            job.batch,
            job.precision,
            "wgpu",
        );
        let mut verified = 0;
        for (side, backend) in [("base", &base), ("head", &head)] {
            verify_target(
                backend,
                &job.target,
                job.batch,
                job.precision,
                &options,
                &mut |event| progress.event(&format!("{id} ({side})"), &event, &mut verified),
            )
            .map_err(|error| with_side(error, side))?;
        }
        let AbSamples {
            base_ns,
            head_ns,
            base_first,
            ..
        } = measure_ab(
            &base,
            &head,
            &job.target,
            job.batch,
            job.precision,
            &options,
            a.pairs,
            &mut |event| progress.event(&id, &event, &mut verified),
        )?;
        progress.finish_one();
        measured.push(Measured {
            id,
            base_ns,
            head_ns,
            base_first,
        });
    }
    progress.finish();
    Ok((description, device.gpu().summary().fingerprint.label(), measured))
}

/// A verification error of one side, saying which.
fn with_side(error: Error, side: &str) -> Error {
    let revision = if side == "base" {
        "the base revision's shaders"
    } else {
        "the working tree's shaders"
    };
    match error {
        Error::InvalidInput(message) => Error::InvalidInput(format!("{revision}: {message}")),
        Error::Environment(message) => Error::Environment(format!("{revision}: {message}")),
        Error::Verification(message) => Error::Verification(format!("{revision}: {message}")),
        other => other,
    }
}

/// Process mode: `pairs` rounds of each binary, alternating ABBA, each round one `run
/// --rounds 1` writing a record; a pair is the two rounds' total medians per benchmark.
fn process_mode(args: &Args, a: &AbArgs, base_bin: &Path) -> Result<(String, Vec<Measured>)> {
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
    for index in 0..a.pairs {
        let order = if index % 2 == 0 {
            ["base", "head"]
        } else {
            ["head", "base"]
        };
        let mut records: BTreeMap<&str, RunRecord> = BTreeMap::new();
        for side in order {
            interrupt.check(&format!("{index} pairs of rounds were run"))?;
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
            if !status.success() {
                return Err(Error::Environment(format!(
                    "the {side} build ({}) failed its run with {status}; run it alone to see why",
                    bin.display()
                )));
            }
            records.insert(side, super::report::read_record(&out)?);
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
            });
            entry.base_ns.push(total(base));
            entry.head_ns.push(total(benchmark));
            entry.base_first.push(order[0] == "base");
        }
        if !args.quiet {
            eprintln!("round pair {} of {} done", index + 1, a.pairs);
        }
    }
    Ok((adapter_label, by_id.into_values().collect()))
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
