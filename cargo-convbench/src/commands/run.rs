//! `cargo convbench run`: benchmark models and suites, sweeping batches, precisions and
//! backends; print a table (or JSON, CSV, Markdown) and optionally write the record.

use crate::cli::Args;
use crate::output::{check_writable, print, write_atomic};
use crate::progress::Progress;
use clap::ValueEnum;
use convbench::backend::cpu::CpuBackend;
use convbench::backend::wgpu::WgpuBackend;
use convbench::backend::{Backend, BackendKind};
use convbench::baseline::git_state;
use convbench::config::{self, Config, Workspace};
use convbench::harness::conformance;
use convbench::harness::select::{KernelChoice, has_variants};
use convbench::harness::tune::TuneCache;
use convbench::harness::{RunOptions, Target, measure, verify_target};
use convbench::kernels::Variant;
use convbench::kernels::shader_set::ShaderSet;
use convbench::kernels::user::{self, UserKernel};
use convbench::model::{Precision, network, suite};
use convbench::report::{self, Format};
use convbench::results::{RunRecord, RunSettings, Stage};
use convbench::roofline::{Calibration, Peak};
use convbench::{Error, ErrorKind, Result};
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

/// Train or eval, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StageArg {
    /// Forward, loss, backward (grad-input and grad-params) and SGD update.
    Train,
    /// Forward only, batch norm in inference mode.
    Eval,
}

/// Arguments of `run` (also used by `compare`, `baseline update` and `ci` to run fresh).
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// What to benchmark.
    #[command(flatten)]
    pub selection: Selection,
    /// Where to run it.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Timed iterations per round.
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Rounds per benchmark: each re-warmed and timed `--samples` times, the rounds of the
    /// sweep interleaved across its benchmarks. Rounds are the gate's unit of evidence.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Minimum warm-up iterations.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Minimum warm-up time in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub warmup_ms: u64,
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
    /// The shader set `--shaders` names, `None` for the embedded one.
    pub fn shader_set(&self) -> Result<Option<ShaderSet>> {
        self.shaders.as_deref().map(ShaderSet::from_dir).transpose()
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

/// One benchmark to run.
pub struct Job {
    /// What.
    pub target: Target,
    /// Images per iteration.
    pub batch: usize,
    /// Storage precision.
    pub precision: Precision,
}

/// What to benchmark: the selection flags `run` and `tune` share.
#[derive(Debug, Clone, clap::Args)]
pub struct Selection {
    /// Models, comma-separated (see `cargo convbench list`).
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Layer suites, comma-separated: `layers`, `deepbench`.
    #[arg(long, value_delimiter = ',')]
    pub suite: Vec<String>,
    /// Batch sizes, comma-separated, e.g. `1,8,64`.
    #[arg(long, value_delimiter = ',')]
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

impl Selection {
    /// The selected stage.
    pub fn stage(&self) -> Stage {
        match self.stage {
            StageArg::Train => Stage::Train,
            StageArg::Eval => Stage::Eval,
        }
    }
}

/// Whether the adapter is a real GPU (not a software rasterizer or the CPU backend).
pub fn is_real_gpu(backend: &dyn Backend) -> bool {
    backend.kind() != BackendKind::Cpu && backend.adapter().device_type != "cpu"
}

/// The default batch of a model when none is given.
fn default_model_batch(name: &str, real_gpu: bool) -> usize {
    match (real_gpu, name.starts_with("vgg")) {
        (false, _) => 1,
        (true, true) => 64,
        (true, false) => 128,
    }
}

/// `values` without repeats, in first-seen order (`--batch 1,1` runs batch 1 once).
fn unique<T: PartialEq + Clone>(values: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for v in values {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

/// The benchmarks `a` selects (the configuration's, or a default set, when it selects none).
pub fn jobs(a: &Selection, config: &Config, real_gpu: bool, notice: &mut Vec<String>) -> Result<Vec<Job>> {
    let precisions = if !a.precision.is_empty() {
        a.precision.to_vec()
    } else if !config.precisions.is_empty() {
        config
            .precisions
            .iter()
            .map(|p| p.parse().map_err(Error::InvalidInput))
            .collect::<Result<_>>()?
    } else {
        vec![Precision::F32]
    };
    let batches_given = if a.batch.is_empty() {
        config.batches.clone()
    } else {
        a.batch.to_vec()
    };
    let selected = !a.model.is_empty() || !a.suite.is_empty() || a.shapes.is_some();
    let configured = !config.models.is_empty() || !config.suites.is_empty();
    let suites = if selected {
        a.suite.to_vec()
    } else {
        config.suites.clone()
    };
    let mut targets: Vec<(Target, Vec<usize>)> = Vec::new();
    let (models, default_batches): (Vec<String>, Option<Vec<usize>>) = if selected {
        (a.model.to_vec(), None)
    } else if configured {
        (config.models.clone(), None)
    } else {
        if real_gpu {
            notice.push(
                "running the convnet-benchmarks set (alexnet, overfeat, googlenet at batch 128, vgg-a at 64)"
                    .into(),
            );
            (
                vec![
                    "alexnet".into(),
                    "overfeat".into(),
                    "googlenet".into(),
                    "vgg-a".into(),
                ],
                None,
            )
        } else {
            notice.push(
                "software or CPU adapter: running the quick set (lenet at batch 1, 8, 64); \
                 name models to run more, e.g. `--model alexnet,vgg16 --batch 8`"
                    .into(),
            );
            (vec!["lenet".into()], Some(vec![1, 8, 64]))
        }
    };
    for name in &unique(&models) {
        let net = match config.model.iter().find(|net| &net.name == name) {
            Some(net) => net.clone(),
            None => network(name).map_err(|e| match config.model.is_empty() {
                true => e,
                false => {
                    let mine: Vec<&str> = config.model.iter().map(|n| n.name.as_str()).collect();
                    Error::InvalidInput(format!("{e}; the configuration's models: {}", mine.join(", ")))
                }
            })?,
        };
        let batches = if !batches_given.is_empty() {
            batches_given.clone()
        } else if let Some(b) = &default_batches {
            b.clone()
        } else {
            vec![default_model_batch(&net.name, real_gpu)]
        };
        targets.push((Target::Model(net), batches));
    }
    let listed = a
        .shapes
        .as_deref()
        .map(convbench::model::custom::shape_list)
        .transpose()?;
    let named = unique(&suites)
        .iter()
        .map(|name| suite(name))
        .collect::<Result<Vec<_>>>()?;
    for s in named.into_iter().chain(listed) {
        for entry in s.entries {
            let batches = if batches_given.is_empty() {
                vec![entry.default_batch]
            } else {
                batches_given.clone()
            };
            targets.push((
                Target::SuiteLayer {
                    suite: s.name.clone(),
                    entry,
                },
                batches,
            ));
        }
    }
    let precisions = unique(&precisions);
    let mut jobs = Vec::new();
    for (target, batches) in targets {
        for &batch in &unique(&batches) {
            if batch == 0 {
                return Err(Error::InvalidInput(
                    "--batch 0: a batch needs at least one image".into(),
                ));
            }
            for &precision in &precisions {
                jobs.push(Job {
                    target: target.clone(),
                    batch,
                    precision,
                });
            }
        }
    }
    Ok(jobs)
}

/// Opens the requested backends; with none requested, wgpu, falling back to cpu (with a
/// notice) when no adapter exists.
pub fn open_backends(a: &DeviceArgs, quiet: bool) -> Result<Vec<Box<dyn Backend>>> {
    let shaders = a.shader_set()?;
    let open_wgpu = || -> Result<WgpuBackend> {
        let backend = WgpuBackend::open(a.adapter.as_deref())?;
        Ok(match &shaders {
            Some(set) => backend.with_shaders(set.clone()),
            None => backend,
        })
    };
    if a.backend.is_empty() {
        return match open_wgpu() {
            Ok(b) => Ok(vec![Box::new(b)]),
            Err(e) if e.kind() == ErrorKind::Environment && a.adapter.is_none() && shaders.is_none() => {
                if !quiet {
                    eprintln!("notice: {e}; falling back to the cpu backend");
                }
                Ok(vec![Box::new(CpuBackend::new())])
            }
            Err(e) => Err(e),
        };
    }
    let mut seen = HashSet::new();
    let mut backends: Vec<Box<dyn Backend>> = Vec::new();
    for &kind in a.backend.iter().filter(|k| seen.insert(**k)) {
        backends.push(match kind {
            BackendKind::Wgpu => Box::new(open_wgpu()?),
            BackendKind::Cpu => Box::new(CpuBackend::new()),
            // The first CUDA device; choose another with CUDA_VISIBLE_DEVICES (`--adapter` names
            // wgpu adapters, whose order need not match CUDA's).
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => Box::new(convbench::backend::cuda::CudaBackend::open_with(
                0,
                convbench::backend::cuda::CudaOptions { tf32: a.tf32 },
            )?),
            #[cfg(not(feature = "cuda"))]
            BackendKind::Cuda => {
                return Err(Error::Environment(
                    "the cuda backend is not in this build; install with `cargo install cargo-convbench --features cuda`".into(),
                ));
            }
        });
    }
    Ok(backends)
}

/// Runs the benchmarks and returns the record; on an error, the record holds what was measured
/// before it, and the error is returned beside it.
pub fn run_benchmarks(a: &RunArgs, workspace: &Workspace, quiet: bool) -> (RunRecord, Option<Error>) {
    let (commit, dirty) = git_state(&workspace.root);
    let mut record = RunRecord::new(commit);
    record.git_dirty = dirty;
    let mut options = RunOptions {
        stage: a.selection.stage(),
        samples: a.samples,
        warmup_iterations: a.warmup,
        warmup_min: Duration::from_millis(a.warmup_ms),
        verify: !a.no_verify,
        data_grad: a.data_grad,
        layers: a.layers,
        kernels: KernelChoice::Heuristic,
        interrupt: crate::interrupt::install(),
    };
    record.settings = RunSettings {
        samples: options.samples,
        warmup_iterations: options.warmup_iterations,
        warmup_min_ms: a.warmup_ms,
        verify: options.verify,
        data_grad: options.data_grad,
        layers: options.layers,
        rounds: a.rounds,
        shaders: None,
        kernels: Vec::new(),
    };
    match a.device.shader_set() {
        Ok(Some(set)) => {
            record.settings.shaders = Some(format!("{}, digest {}", set.describe(), set.digest()));
        }
        Ok(None) => {}
        Err(error) => return (record, Some(error)),
    }
    if options.samples == 0 {
        return (
            record,
            Some(Error::InvalidInput("--samples must be at least 1".into())),
        );
    }
    match register_kernels(workspace) {
        Ok(kernels) => record.settings.kernels = kernels.iter().map(|k| k.record(&workspace.root)).collect(),
        Err(e) => return (record, Some(e)),
    }
    let backends = match open_backends(&a.device, quiet) {
        Ok(b) => b,
        Err(e) => return (record, Some(e)),
    };
    let real_gpu = backends.iter().any(|b| is_real_gpu(b.as_ref()));
    let mut notices = Vec::new();
    options.kernels = match kernel_choice(&a.kernels, workspace, &backends, &mut notices) {
        Ok(k) => k,
        Err(e) => return (record, Some(e)),
    };
    let jobs = match jobs(&a.selection, &workspace.config, real_gpu, &mut notices) {
        Ok(j) => j,
        Err(e) => return (record, Some(e)),
    };
    if let Err(e) = verify_forced_user_kernel(&options.kernels, &backends, &jobs, &mut notices) {
        return (record, Some(e));
    }
    if a.rounds == 0 {
        return (
            record,
            Some(Error::InvalidInput("--rounds must be at least 1".into())),
        );
    }
    let progress = Progress::new(jobs.len() * backends.len() * a.rounds, quiet);
    for n in notices {
        if !quiet {
            progress.println(&format!("notice: {n}"));
        }
    }
    let mut verified: HashSet<(String, Precision, BackendKind)> = HashSet::new();
    for backend in &backends {
        let peak = if options.layers {
            calibrated_peak(workspace, backend.as_ref(), quiet, &progress)
        } else {
            None
        };
        // Round by round, each round over every benchmark, so drift during the run touches
        // them all alike; each benchmark is verified once, before its first round.
        let first_of_backend = record.benchmarks.len();
        for round in 0..a.rounds {
            for (index, job) in jobs.iter().enumerate() {
                if let Err(e) = options.interrupt.check("every benchmark was measured") {
                    record.complete = false;
                    progress.finish();
                    return (record, Some(e));
                }
                let name = job.target.name();
                let id = format!(
                    "{name}/b{}/{}/{}",
                    job.batch,
                    job.precision,
                    backend.kind().as_str()
                );
                let mut count = 0;
                let mut on_event = |e: convbench::harness::Event| progress.event(&id, &e, &mut count);
                let key = (name.clone(), job.precision, backend.kind());
                if options.verify && !verified.contains(&key) {
                    if !backend.supports(job.precision) {
                        progress.finish();
                        return (record, Some(unsupported(backend.as_ref(), job.precision)));
                    }
                    if let Err(e) = verify_target(
                        backend.as_ref(),
                        &job.target,
                        job.batch,
                        job.precision,
                        &options,
                        &mut on_event,
                    ) {
                        progress.finish();
                        record.complete = false;
                        return (record, Some(e));
                    }
                    verified.insert(key);
                }
                match measure(
                    backend.as_ref(),
                    &job.target,
                    job.batch,
                    job.precision,
                    &options,
                    &mut on_event,
                ) {
                    Ok(mut result) if round == 0 => {
                        result.peak = peak;
                        record.benchmarks.push(result);
                    }
                    Ok(result) => record.benchmarks[first_of_backend + index].append_round(result),
                    Err(e) => {
                        progress.finish();
                        record.complete = false;
                        return (record, Some(e));
                    }
                }
                checkpoint(a, &record, &progress, quiet);
                progress.finish_one();
            }
        }
    }
    progress.finish();
    (record, None)
}

/// Writes what is finished so far to `--out`, marked incomplete, so that even a run that is
/// killed outright leaves a valid record of the benchmarks it finished; the command writes the
/// final record over it. A failed write is reported, not fatal: the final write will say more.
fn checkpoint(a: &RunArgs, record: &RunRecord, progress: &Progress, quiet: bool) {
    let Some(out) = &a.out else { return };
    let partial = RunRecord {
        complete: false,
        ..record.clone()
    };
    if let Err(e) = write_atomic(out, &partial.to_json())
        && !quiet
    {
        progress.println(&format!(
            "warning: could not save progress to {}: {e}",
            out.display()
        ));
    }
}

/// The calibrated peaks of `backend`'s adapter (`adapters --calibrate`), for the roofline
/// columns of `--layers`; `None` (with a notice) when there are none, or when they were measured
/// under another driver. A calibration that cannot be read is reported and ignored: it is a
/// cache, `adapters --calibrate` rebuilds it.
fn calibrated_peak(
    workspace: &Workspace,
    backend: &dyn Backend,
    quiet: bool,
    progress: &Progress,
) -> Option<Peak> {
    let adapter = backend.adapter();
    let path = Calibration::path(&workspace.target_dir, &adapter.slug());
    let notice = |text: String| {
        if !quiet {
            progress.println(&format!("notice: {text}"));
        }
    };
    match Calibration::load(&path) {
        Ok(Some(c)) if &c.adapter == adapter => Some(c.peak),
        Ok(Some(c)) => {
            notice(format!(
                "{} was calibrated with another driver ({} {}); run `cargo convbench adapters --calibrate` again for the roofline",
                adapter.label(),
                c.adapter.driver,
                c.adapter.driver_info
            ));
            None
        }
        Ok(None) => {
            if backend.kind() == BackendKind::Wgpu {
                notice(format!(
                    "{} is not calibrated; `cargo convbench adapters --calibrate` adds the roofline to --layers",
                    adapter.label()
                ));
            }
            None
        }
        Err(e) => {
            notice(format!("ignoring the calibration: {e}"));
            None
        }
    }
}

/// The kernel choice `--kernel` and `--no-tune` ask for. `auto` uses the tune cache of the
/// first backend with variants when there is one; a cache that cannot be read is reported and
/// ignored (it is a cache: `tune` rebuilds it).
/// Loads, validates and registers the workspace's own kernels (see
/// [`convbench::kernels::user`]), so that `user:NAME` names a variant.
pub fn register_kernels(workspace: &Workspace) -> Result<Vec<&'static UserKernel>> {
    user::load_all(&workspace.kernels)
}

/// Random shapes each user kernel is verified on before it runs (per op and precision).
pub const USER_KERNEL_SHAPES: usize = 4;

/// With `--kernel user:NAME`, verifies the kernel on random shapes at the jobs' precisions on
/// every backend with variants, before anything is timed; on other backends it does not run
/// (a notice says so).
pub fn verify_forced_user_kernel(
    choice: &KernelChoice,
    backends: &[Box<dyn Backend>],
    jobs: &[Job],
    notices: &mut Vec<String>,
) -> Result<()> {
    let KernelChoice::Force(variant) = choice else {
        return Ok(());
    };
    if !variant.is_user() {
        return Ok(());
    }
    let mut precisions: Vec<Precision> = jobs.iter().map(|j| j.precision).collect();
    precisions.sort_unstable();
    precisions.dedup();
    let seed: u64 = rand::random();
    for backend in backends {
        if !has_variants(backend.kind()) {
            notices.push(format!(
                "{variant} is WGSL: the {} backend runs its own kernels",
                backend.kind().as_str()
            ));
            continue;
        }
        let rows = conformance::verify_user_kernel(
            backend.as_ref(),
            *variant,
            &precisions,
            USER_KERNEL_SHAPES,
            seed,
        )?;
        let shapes: usize = rows.iter().map(|r| r.shapes).sum();
        notices.push(format!(
            "{variant} verified against the f64 reference on {shapes} random shapes ({}; seed {seed})",
            backend.adapter().label()
        ));
        if let Variant::User(kernel) = variant
            && !kernel.0.f16
            && precisions.contains(&Precision::F16)
        {
            notices.push(format!(
                "{variant} does not declare f16 = true: f16 benchmarks run convbench's kernels"
            ));
        }
    }
    Ok(())
}

pub fn kernel_choice(
    a: &KernelArgs,
    workspace: &Workspace,
    backends: &[Box<dyn Backend>],
    notices: &mut Vec<String>,
) -> Result<KernelChoice> {
    if a.kernel != "auto" {
        return Ok(KernelChoice::Force(a.kernel.parse::<Variant>().map_err(|e| {
            Error::InvalidInput(format!("--kernel: {e}, or `auto`"))
        })?));
    }
    if a.no_tune {
        return Ok(KernelChoice::Heuristic);
    }
    let Some(backend) = backends.iter().find(|b| has_variants(b.kind())) else {
        return Ok(KernelChoice::Heuristic);
    };
    let path = TuneCache::path(&workspace.target_dir, &backend.adapter().slug());
    match TuneCache::load(&path) {
        Ok(Some(cache)) => {
            notices.push(format!(
                "kernels tuned for {} ({} shapes) from {}; `--no-tune` ignores them",
                backend.adapter().label(),
                cache.entries.len(),
                path.display()
            ));
            if &cache.adapter != backend.adapter() {
                notices.push(format!(
                    "they were tuned with another driver ({} {}); run `cargo convbench tune` again",
                    cache.adapter.driver, cache.adapter.driver_info
                ));
            }
            Ok(KernelChoice::Tuned(cache))
        }
        Ok(None) => Ok(KernelChoice::Heuristic),
        Err(e) => {
            notices.push(format!("ignoring the tune cache: {e}"));
            Ok(KernelChoice::Heuristic)
        }
    }
}

pub fn unsupported(backend: &dyn Backend, precision: Precision) -> Error {
    Error::Environment(format!(
        "{} cannot run {precision} (the adapter lacks SHADER_F16); use --precision f32 or another --adapter",
        backend.adapter().label()
    ))
}

/// Renders the record as asked, with the per-layer tables when `--layers`.
pub fn render(record: &RunRecord, format: Format, layers: bool) -> String {
    let mut text = report::render(record, format);
    if layers && format == Format::Table {
        for b in record.benchmarks.iter().filter(|b| !b.layers.is_empty()) {
            text.push_str(&format!("\n{}\n{}", b.id, report::layers_table(b)));
        }
    }
    text
}

/// `cargo convbench run`.
pub fn run(args: &Args, a: &RunArgs) -> Result<u8> {
    let format: Format = a.format.parse()?;
    if let Some(out) = &a.out {
        check_writable(out)?;
    }
    let workspace = config::load(args.manifest_path.as_deref())?;
    let (record, error) = run_benchmarks(a, &workspace, args.quiet);
    if !record.benchmarks.is_empty() {
        print(&render(&record, format, a.layers));
        if let Some(out) = &a.out {
            write_atomic(out, &record.to_json())?;
            if !args.quiet {
                let state = if record.complete {
                    ""
                } else {
                    " (incomplete: the run stopped early)"
                };
                eprintln!("wrote {}{state}", out.display());
            }
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(0),
    }
}
