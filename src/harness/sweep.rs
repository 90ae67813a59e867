//! The sweep: what `run`, `compare`, `baseline update` and `ci` measure, as a library value.
//!
//! A [`SweepRequest`] (what to run, where, with which kernels, how many samples and rounds)
//! becomes a [`Sweep`] with [`Sweep::prepare`]: the selection is resolved into [`Job`]s against
//! the configuration, the backends are opened (wgpu, falling back to cpu when no adapter
//! exists and none was asked for), the kernel choice is resolved (forced, tuned, heuristic)
//! and a forced user kernel is verified on random shapes. [`Sweep::run`] then measures round
//! by round, each round over every benchmark, so drift during the run touches them all alike;
//! each benchmark is verified against the f64 reference once, before its first round. It
//! reports progress as [`SweepEvent`]s (the binary draws them) and returns the record beside
//! the error that stopped it, so an interrupted or failed sweep keeps what it finished.

use super::plan::PlanOptions;
use super::select::{KernelChoice, has_variants};
use super::tune::TuneCache;
use super::{
    Event, Interrupt, Interrupted, RunOptions, SweepError, Target, check_holds, conformance, measure,
    unsupported, verify_target,
};
use crate::backend::cpu::CpuBackend;
use crate::backend::wgpu::WgpuBackend;
use crate::backend::{Backend, BackendKind};
use crate::baseline::git_state;
use crate::calibration::Calibration;
use crate::config::{Config, Workspace};
use crate::kernels::Variant;
use crate::kernels::shader_set::ShaderSet;
use crate::kernels::user::KernelSet;
use crate::model::{Precision, network, suite};
use crate::results::{RunRecord, RunSettings, Stage};
use crate::roofline::Peak;
use crate::{Error, Result};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to benchmark: models, suites and a shape list, at batches, precisions and stages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Models of the zoo or of the configuration, by name.
    pub models: Vec<String>,
    /// Layer suites by name: `layers`, `deepbench`.
    pub suites: Vec<String>,
    /// Batch sizes; empty: the configuration's, else each target's default.
    pub batches: Vec<usize>,
    /// Storage precisions; empty: the configuration's, else f32.
    pub precisions: Vec<Precision>,
    /// Train steps or forward-only evaluations, in the order given; empty: train.
    pub stages: Vec<Stage>,
    /// A CSV of single convolutions (DeepBench-style rows), a suite named after the file.
    pub shapes: Option<PathBuf>,
}

/// What `verify` checks of a [`Selection`] (see [`Selection::verify_scope`]).
#[derive(Debug, Clone)]
pub struct VerifyScope {
    /// The benchmarks to verify.
    pub selection: Selection,
    /// Whether the precisions were named (by the flags or the configuration): an adapter that
    /// cannot run one is then an error, not a notice.
    pub explicit_precisions: bool,
    /// The precisions the kernel variants are verified in.
    pub variant_precisions: Vec<Precision>,
}

impl Selection {
    /// What `verify` checks: this selection, or when neither it nor `config` names a model, a
    /// suite or a shape list, the whole zoo (at batch 1 unless batches are given); in f32 and
    /// f16 unless precisions are named.
    pub fn verify_scope(mut self, config: &crate::config::Config) -> VerifyScope {
        let configured = !config.models.is_empty() || !config.suites.is_empty();
        if !self.names_anything() && !configured {
            self.models = crate::model::model_names()
                .into_iter()
                .map(String::from)
                .collect();
            if self.batches.is_empty() {
                self.batches = vec![1];
            }
        }
        let explicit_precisions = !self.precisions.is_empty() || !config.precisions.is_empty();
        if !explicit_precisions {
            self.precisions = vec![Precision::F32, Precision::F16];
        }
        let variant_precisions = if self.precisions.is_empty() {
            config.precisions.iter().filter_map(|p| p.parse().ok()).collect()
        } else {
            self.precisions.clone()
        };
        VerifyScope {
            selection: self,
            explicit_precisions,
            variant_precisions,
        }
    }
}

/// One benchmark to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// What.
    pub target: Target,
    /// Images per iteration.
    pub batch: usize,
    /// Storage precision.
    pub precision: Precision,
    /// Train step or forward-only evaluation.
    pub stage: Stage,
}

impl Job {
    /// Whether `jobs` are of more than one stage (their labels then say which).
    pub fn stages_differ(jobs: &[Job]) -> bool {
        jobs.iter().any(|job| job.stage != jobs[0].stage)
    }

    /// `lenet/b8/f32` for progress lines, with `/eval` or `/train` after it when `with_stage`
    /// (a selection of several stages).
    pub fn label(&self, with_stage: bool) -> String {
        let label = format!("{}/b{}/{}", self.target.name(), self.batch, self.precision);
        match with_stage {
            true => format!("{label}/{}", self.stage.as_str()),
            false => label,
        }
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

/// The default batch of a model when none is given.
fn default_model_batch(name: &str, real_gpu: bool) -> usize {
    match (real_gpu, name.starts_with("vgg")) {
        (false, _) => 1,
        (true, true) => 64,
        (true, false) => 128,
    }
}

impl Selection {
    /// The stages to run, each once in the order given: train unless any is named.
    pub fn stages(&self) -> Vec<Stage> {
        match self.stages.is_empty() {
            true => vec![Stage::Train],
            false => unique(&self.stages),
        }
    }

    /// Whether anything is named (models, suites or a shape list).
    pub fn names_anything(&self) -> bool {
        !self.models.is_empty() || !self.suites.is_empty() || self.shapes.is_some()
    }

    /// The benchmarks this selection names, or the configuration's, or a default set when
    /// neither names any (the convnet-benchmarks set on a real GPU, LeNet elsewhere; a notice
    /// says which).
    pub fn jobs(&self, config: &Config, real_gpu: bool, notices: &mut Vec<String>) -> Result<Vec<Job>> {
        let precisions = if !self.precisions.is_empty() {
            self.precisions.clone()
        } else if !config.precisions.is_empty() {
            config
                .precisions
                .iter()
                .map(|p| {
                    p.parse::<Precision>().map_err(|source| {
                        Error::from(SweepError::ConfiguredPrecision {
                            source: source.into(),
                        })
                    })
                })
                .collect::<Result<_>>()?
        } else {
            vec![Precision::F32]
        };
        let batches_given = if self.batches.is_empty() {
            config.batches.clone()
        } else {
            self.batches.clone()
        };
        let selected = self.names_anything();
        let configured = !config.models.is_empty() || !config.suites.is_empty();
        let suites = if selected {
            self.suites.clone()
        } else {
            config.suites.clone()
        };
        let (models, default_batches): (Vec<String>, Option<Vec<usize>>) = if selected {
            (self.models.clone(), None)
        } else if configured {
            (config.models.clone(), None)
        } else if real_gpu {
            notices.push(
                "running the convnet-benchmarks set (alexnet, overfeat, googlenet at batch 128, vgg-a at 64)"
                    .into(),
            );
            (
                ["alexnet", "overfeat", "googlenet", "vgg-a"]
                    .map(String::from)
                    .to_vec(),
                None,
            )
        } else {
            notices.push(
                "software or CPU adapter: running the quick set (lenet at batch 1, 8, 64); \
                 name models to run more, e.g. `--model alexnet,vgg16 --batch 8`"
                    .into(),
            );
            (vec!["lenet".into()], Some(vec![1, 8, 64]))
        };
        let mut targets: Vec<(Target, Vec<usize>)> = Vec::new();
        for name in &unique(&models) {
            let net = match config.model.iter().find(|net| &net.name == name) {
                Some(net) => net.clone(),
                None => network(name).map_err(|e| match config.model.is_empty() {
                    true => e,
                    false => SweepError::UnknownModel {
                        source: Box::new(e),
                        configured: config.model.iter().map(|n| n.name.clone()).collect(),
                    }
                    .into(),
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
        let listed = self
            .shapes
            .as_deref()
            .map(crate::model::custom::shape_list)
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
        // Every benchmark of one stage before the next stage's, as the seeds' tables are laid out.
        for stage in self.stages() {
            for (target, batches) in &targets {
                for &batch in &unique(batches) {
                    if batch == 0 {
                        return Err(SweepError::ZeroBatch.into());
                    }
                    for &precision in &precisions {
                        jobs.push(Job {
                            target: target.clone(),
                            batch,
                            precision,
                            stage,
                        });
                    }
                }
            }
        }
        Ok(jobs)
    }
}

/// Where to run: backends, adapter and the WGSL they compile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceRequest {
    /// Backends; empty: wgpu, falling back to cpu (with a notice) when no adapter exists.
    pub backends: Vec<BackendKind>,
    /// The wgpu adapter: index, backend name or part of its name.
    pub adapter: Option<String>,
    /// Let the cuda backend use TF32 tensor cores for f32.
    pub tf32: bool,
    /// Compile the wgpu kernels from this folder's `.wgsl` files instead of the embedded ones.
    pub shaders: Option<PathBuf>,
}

impl DeviceRequest {
    /// The shader set `shaders` names, `None` for the embedded one.
    pub fn shader_set(&self) -> Result<Option<ShaderSet>> {
        self.shaders.as_deref().map(ShaderSet::from_dir).transpose()
    }

    /// Opens the requested backends, each once; a fallback to cpu is pushed to `notices`.
    pub fn open(&self, notices: &mut Vec<String>) -> Result<Vec<Box<dyn Backend>>> {
        let shaders = self.shader_set()?;
        let open_wgpu = || -> Result<WgpuBackend> {
            let backend = WgpuBackend::open(self.adapter.as_deref())?;
            Ok(match &shaders {
                Some(set) => backend.with_shaders(set.clone()),
                None => backend,
            })
        };
        if self.backends.is_empty() {
            return match open_wgpu() {
                Ok(b) => Ok(vec![Box::new(b)]),
                Err(e)
                    if e.device().is_some_and(|d| d.is_unavailable())
                        && self.adapter.is_none()
                        && shaders.is_none() =>
                {
                    notices.push(format!("{e}; falling back to the cpu backend"));
                    Ok(vec![Box::new(CpuBackend::new())])
                }
                Err(e) => Err(e),
            };
        }
        let mut seen = HashSet::new();
        let mut backends: Vec<Box<dyn Backend>> = Vec::new();
        for &kind in self.backends.iter().filter(|k| seen.insert(**k)) {
            backends.push(match kind {
                BackendKind::Wgpu => Box::new(open_wgpu()?),
                BackendKind::Cpu => Box::new(CpuBackend::new()),
                // The first CUDA device; choose another with CUDA_VISIBLE_DEVICES (`adapter`
                // names wgpu adapters, whose order need not match CUDA's).
                #[cfg(feature = "cuda")]
                BackendKind::Cuda => Box::new(crate::backend::cuda::CudaBackend::open_with(
                    0,
                    crate::backend::cuda::CudaOptions { tf32: self.tf32 },
                )?),
                #[cfg(not(feature = "cuda"))]
                BackendKind::Cuda => {
                    return Err(SweepError::NoCuda.into());
                }
            });
        }
        Ok(backends)
    }
}

/// Whether the adapter is a real GPU (not a software rasterizer or the CPU backend).
pub fn is_real_gpu(backend: &dyn Backend) -> bool {
    backend.kind() != BackendKind::Cpu
        && crate::kernels::variant::DeviceClass::of(backend.adapter())
            == crate::kernels::variant::DeviceClass::Gpu
}

/// How kernels are chosen, as asked on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KernelRequest {
    /// The winners of `tune` for the adapter where tuned, else the shape heuristic.
    #[default]
    Auto,
    /// The shape heuristic, ignoring the tune cache.
    Heuristic,
    /// A variant by name (`direct`, `gemm_64x64x16_4x4`, `user:NAME`), wherever it implements
    /// the op.
    Named(String),
}

impl KernelChoice {
    /// The choice `request` asks for in a workspace with `kernels` (a named `user:NAME` is one
    /// of them). `Auto` uses the tune cache (under `target_dir`) of the first backend with
    /// variants when there is one; a cache that cannot be read is reported in `notices` and
    /// ignored (it is a cache: `tune` rebuilds it).
    pub fn resolve(
        request: &KernelRequest,
        kernels: &KernelSet,
        target_dir: &Path,
        backends: &[Box<dyn Backend>],
        notices: &mut Vec<String>,
    ) -> Result<KernelChoice> {
        match request {
            KernelRequest::Named(name) => {
                return Ok(KernelChoice::Force(
                    Variant::parse_in(name, kernels)
                        .map_err(|e| SweepError::UnknownKernel { source: Box::new(e) })?,
                ));
            }
            KernelRequest::Heuristic => return Ok(KernelChoice::Heuristic),
            KernelRequest::Auto => {}
        }
        let Some(backend) = backends.iter().find(|b| has_variants(b.kind())) else {
            return Ok(KernelChoice::Heuristic);
        };
        let path = TuneCache::path(target_dir, &backend.adapter().slug());
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
                // A winner this build or workspace lacks (a user kernel removed or renamed, a
                // variant of another convbench version) leaves its ops to the heuristic: said.
                let mut unknown: Vec<&str> = cache
                    .entries
                    .values()
                    .map(|entry| entry.winner.as_str())
                    .filter(|winner| Variant::parse_in(winner, kernels).is_err())
                    .collect();
                unknown.sort_unstable();
                unknown.dedup();
                if !unknown.is_empty() {
                    notices.push(format!(
                        "the tune cache names {} winner{} this build or workspace does not have ({}); \
                         their ops use the shape heuristic until `cargo convbench tune` runs again",
                        unknown.len(),
                        if unknown.len() == 1 { "" } else { "s" },
                        unknown.join(", ")
                    ));
                }
                Ok(KernelChoice::Tuned {
                    cache,
                    kernels: kernels.clone(),
                })
            }
            Ok(None) => Ok(KernelChoice::Heuristic),
            Err(e) => {
                notices.push(format!("ignoring the tune cache: {e}"));
                Ok(KernelChoice::Heuristic)
            }
        }
    }
}

/// With a forced variant (`--kernel NAME`), fails when it implements no op of any job: it would
/// run nowhere, and every benchmark would time the other kernels under its name. Planning is
/// cheap (no tensor is allocated), so this runs before anything is verified or timed.
pub fn check_forced_variant_runs(choice: &KernelChoice, jobs: &[Job], data_grad: bool) -> Result<()> {
    let KernelChoice::Force(variant) = choice else {
        return Ok(());
    };
    // `direct` implements every op: no job need be planned to know it runs.
    if matches!(variant, Variant::Direct) && !jobs.is_empty() {
        return Ok(());
    }
    for job in jobs {
        let options = PlanOptions {
            stage: job.stage,
            data_grad,
            max_tensor_bytes: u64::MAX,
        };
        let plan = job.target.plan(job.batch, job.precision, options)?;
        if plan
            .program
            .ops
            .iter()
            .any(|op| variant.implements_at(&op.op, job.precision))
        {
            return Ok(());
        }
    }
    let with_stage = Job::stages_differ(jobs);
    let mut labels: Vec<String> = jobs.iter().take(4).map(|job| job.label(with_stage)).collect();
    if jobs.len() > labels.len() {
        labels.push(format!("{} more", jobs.len() - labels.len()));
    }
    let (implements, widen) = match variant {
        Variant::User(kernel) => {
            let precision = if kernel.0.f16 { "" } else { ", f32 only" };
            (
                format!("{} ({}{precision})", kernel.0.op, kernel.0.only.describe()),
                ", or widen its `only` in the configuration",
            )
        }
        Variant::Winograd => (
            "conv2d_forward and conv2d_backward_data with 3x3 stride-1 undilated kernels".to_string(),
            "",
        ),
        Variant::Gemm(_) => ("convolutions and fully connected layers".to_string(), ""),
        Variant::Direct => ("every op".to_string(), ""),
    };
    Err(SweepError::KernelRunsNowhere {
        variant: variant.id(),
        implements,
        selection: labels.join(", "),
        widen,
    }
    .into())
}

/// With a forced variant, a notice for each backend that does not run WGSL variants (cpu,
/// cuda): there the variant is not what runs.
pub fn forced_kernel_notices(
    choice: &KernelChoice,
    backends: &[Box<dyn Backend>],
    notices: &mut Vec<String>,
) {
    let KernelChoice::Force(variant) = choice else {
        return;
    };
    for backend in backends.iter().filter(|b| !has_variants(b.kind())) {
        notices.push(if variant.is_user() {
            format!(
                "{variant} is WGSL: the {} backend runs its own kernels",
                backend.kind().as_str()
            )
        } else {
            format!(
                "--kernel {variant}: the {} backend runs its own kernels",
                backend.kind().as_str()
            )
        });
    }
}

/// Random shapes each user kernel is verified on before it runs (per op and precision).
pub const USER_KERNEL_SHAPES: usize = 4;

/// With a forced user kernel, verifies it on random shapes at the jobs' precisions on every
/// backend with variants, before anything is timed; on other backends it does not run (a
/// notice says so).
pub fn verify_forced_user_kernel(
    choice: &KernelChoice,
    backends: &[Box<dyn Backend>],
    jobs: &[Job],
    notices: &mut Vec<String>,
) -> Result<()> {
    let KernelChoice::Force(variant) = choice else {
        return Ok(());
    };
    forced_kernel_notices(choice, backends, notices);
    if !variant.is_user() {
        return Ok(());
    }
    let mut precisions: Vec<Precision> = jobs.iter().map(|j| j.precision).collect();
    precisions.sort_unstable();
    precisions.dedup();
    let seed: u64 = rand::random();
    for backend in backends.iter().filter(|b| has_variants(b.kind())) {
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

/// Everything a run asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRequest {
    /// What to benchmark.
    pub selection: Selection,
    /// Where.
    pub device: DeviceRequest,
    /// With which kernels.
    pub kernels: KernelRequest,
    /// Timed iterations per round.
    pub samples: usize,
    /// Rounds per benchmark, each re-warmed, interleaved across the sweep.
    pub rounds: usize,
    /// Minimum warm-up iterations.
    pub warmup_iterations: usize,
    /// Minimum warm-up time (ms).
    pub warmup_min_ms: u64,
    /// Verify every op against the reference before timing.
    pub verify: bool,
    /// Compute the first layer's input gradient.
    pub data_grad: bool,
    /// Record the per-layer breakdown.
    pub layers: bool,
}

/// Warm-up iterations before a benchmark's samples, by default (and at least
/// [`WARMUP_MIN_MS`]): a run times one side alone, so it waits out the first iterations'
/// compilation, first touches and clock ramp. A/B comparisons warm less (see
/// [`super::ab::WARMUP_ITERATIONS`]).
pub const WARMUP_ITERATIONS: usize = 3;

/// Minimum warm-up time (ms), by default.
pub const WARMUP_MIN_MS: u64 = 200;

impl Default for SweepRequest {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            device: DeviceRequest::default(),
            kernels: KernelRequest::Auto,
            samples: 10,
            rounds: 3,
            warmup_iterations: WARMUP_ITERATIONS,
            warmup_min_ms: WARMUP_MIN_MS,
            verify: true,
            data_grad: false,
            layers: false,
        }
    }
}

/// Largest `samples × rounds` of one benchmark: every sample's times are kept in the record, and
/// beyond this the record alone takes gigabytes.
pub const MAX_SAMPLES_PER_BENCHMARK: usize = 1_000_000;

impl SweepRequest {
    /// Checks the counts before anything is opened.
    pub fn validate(&self) -> Result<()> {
        if self.samples == 0 {
            return Err(SweepError::ZeroCount { flag: "--samples" }.into());
        }
        if self.rounds == 0 {
            return Err(SweepError::ZeroCount { flag: "--rounds" }.into());
        }
        if self.samples.saturating_mul(self.rounds) > MAX_SAMPLES_PER_BENCHMARK {
            return Err(SweepError::TooManySamples {
                samples: self.samples,
                rounds: self.rounds,
            }
            .into());
        }
        Ok(())
    }

    /// The settings a record of this request carries.
    fn settings(&self) -> RunSettings {
        RunSettings {
            samples: self.samples,
            warmup_iterations: self.warmup_iterations,
            warmup_min_ms: self.warmup_min_ms,
            verify: self.verify,
            data_grad: self.data_grad,
            layers: self.layers,
            rounds: self.rounds,
            shaders: None,
            kernels: Vec::new(),
        }
    }
}

/// Refuses a precision one of the backends cannot run before anything is measured: `--precision
/// f32,f16` on an adapter without `SHADER_F16` used to time every f32 benchmark first and then
/// stop, exit 3, at the first f16 one.
fn check_precisions(backends: &[Box<dyn Backend>], jobs: &[Job]) -> Result<()> {
    for backend in backends {
        if let Some(job) = jobs.iter().find(|job| !backend.supports(job.precision)) {
            return Err(unsupported(backend.as_ref(), job.precision));
        }
    }
    Ok(())
}

/// Progress of a sweep, for the binary to draw.
#[derive(Debug)]
pub enum SweepEvent<'a> {
    /// Something the user should know (a calibration missing, a driver changed).
    Notice(String),
    /// Progress of one benchmark, named by `label`.
    Benchmark {
        /// `model/bBATCH/PRECISION/BACKEND`.
        label: &'a str,
        /// What happened.
        event: Event,
    },
    /// One round of one benchmark was measured; `record` holds everything finished so far
    /// (marked incomplete), for a checkpoint that survives the process being killed.
    Measured {
        /// What is finished so far.
        record: &'a RunRecord,
    },
}

/// A sweep ready to run: jobs, opened backends, options, and the record to fill.
pub struct Sweep {
    /// The benchmarks, in order.
    pub jobs: Vec<Job>,
    /// The backends each job runs on.
    pub backends: Vec<Box<dyn Backend>>,
    /// How each benchmark is measured.
    pub options: RunOptions,
    /// Rounds per benchmark.
    pub rounds: usize,
    /// Notices from preparing (fallbacks, tune caches, default selections).
    pub notices: Vec<String>,
    /// Where the calibrations of `--layers` are cached (cargo's target directory).
    target_dir: PathBuf,
    record: RunRecord,
}

impl Sweep {
    /// Resolves `request` in `workspace`: jobs, backends, kernel choice. `interrupt` stops the
    /// run early when set.
    pub fn prepare(request: &SweepRequest, workspace: &Workspace, interrupt: Interrupt) -> Result<Sweep> {
        request.validate()?;
        let (commit, dirty) = git_state(&workspace.root);
        let mut record = RunRecord::new(commit);
        record.git_dirty = dirty;
        record.settings = request.settings();
        if let Some(set) = request.device.shader_set()? {
            record.settings.shaders = Some(format!("{}, digest {}", set.describe(), set.digest()));
        }
        let kernels = workspace.kernel_set()?;
        record.settings.kernels = kernels.iter().map(|k| k.record(&workspace.root)).collect();
        let mut notices = Vec::new();
        let backends = request.device.open(&mut notices)?;
        let real_gpu = backends.iter().any(|b| is_real_gpu(b.as_ref()));
        let choice = KernelChoice::resolve(
            &request.kernels,
            &kernels,
            &workspace.target_dir,
            &backends,
            &mut notices,
        )?;
        let jobs = request
            .selection
            .jobs(&workspace.config, real_gpu, &mut notices)?;
        check_precisions(&backends, &jobs)?;
        check_forced_variant_runs(&choice, &jobs, request.data_grad)?;
        verify_forced_user_kernel(&choice, &backends, &jobs, &mut notices)?;
        let options = RunOptions {
            // Each job's own stage replaces it ([`RunOptions::at`]).
            stage: Stage::Train,
            samples: request.samples,
            warmup_iterations: request.warmup_iterations,
            warmup_min: Duration::from_millis(request.warmup_min_ms),
            verify: request.verify,
            data_grad: request.data_grad,
            layers: request.layers,
            kernels: choice,
            interrupt,
        };
        Ok(Sweep {
            jobs,
            backends,
            options,
            rounds: request.rounds,
            notices,
            target_dir: workspace.target_dir.clone(),
            record,
        })
    }

    /// How many benchmark rounds the sweep measures (its progress total).
    pub fn len(&self) -> usize {
        self.jobs.len() * self.backends.len() * self.rounds
    }

    /// Whether there is nothing to measure.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Measures every job on every backend, round by round. Returns the record and, when the
    /// sweep stopped early (an interrupt, a failed verification, a device error), the error
    /// beside what was finished before it, marked incomplete.
    pub fn run(self, on_event: &mut dyn FnMut(SweepEvent<'_>)) -> (RunRecord, Option<Error>) {
        let Sweep {
            jobs,
            backends,
            options,
            rounds,
            target_dir,
            mut record,
            ..
        } = self;
        let mut verified: HashSet<(String, Precision, Stage, BackendKind)> = HashSet::new();
        let several_stages = Job::stages_differ(&jobs);
        for backend in &backends {
            let peak = if options.layers {
                calibrated_peak(&target_dir, backend.as_ref(), on_event)
            } else {
                None
            };
            let first_of_backend = record.benchmarks.len();
            for round in 0..rounds {
                for (index, job) in jobs.iter().enumerate() {
                    if let Err(e) = options.interrupt.check(&Interrupted::Sweep) {
                        record.complete = false;
                        return (record, Some(e));
                    }
                    let name = job.target.name();
                    let label = format!("{}/{}", job.label(several_stages), backend.kind().as_str());
                    let mut forward = |event: Event| on_event(SweepEvent::Benchmark { label: &label, event });
                    let options = options.at(job.stage);
                    let key = (name, job.precision, job.stage, backend.kind());
                    if options.verify && !verified.contains(&key) {
                        // Precisions were checked by `prepare`; a batch the backend cannot hold is refused before it is verified.
                        if let Err(e) =
                            check_holds(backend.as_ref(), &job.target, job.batch, job.precision, &options)
                        {
                            record.complete = false;
                            return (record, Some(e));
                        }
                        if let Err(e) = verify_target(
                            backend.as_ref(),
                            &job.target,
                            job.batch,
                            job.precision,
                            &options,
                            &mut forward,
                        ) {
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
                        &mut forward,
                    ) {
                        Ok(mut result) if round == 0 => {
                            result.peak = peak;
                            record.benchmarks.push(result);
                        }
                        Ok(result) => record.benchmarks[first_of_backend + index].append_round(result),
                        Err(e) => {
                            record.complete = false;
                            return (record, Some(e));
                        }
                    }
                    let partial = RunRecord {
                        complete: false,
                        ..record.clone()
                    };
                    on_event(SweepEvent::Measured { record: &partial });
                }
            }
        }
        (record, None)
    }
}

/// The calibrated peaks of `backend`'s adapter (`adapters --calibrate`), for the roofline
/// columns of `--layers`; `None` (with a notice) when there are none, or when they were measured
/// under another driver. A calibration that cannot be read is reported and ignored: it is a
/// cache, `adapters --calibrate` rebuilds it.
fn calibrated_peak(
    target_dir: &Path,
    backend: &dyn Backend,
    on_event: &mut dyn FnMut(SweepEvent<'_>),
) -> Option<Peak> {
    let adapter = backend.adapter();
    let path = Calibration::path(target_dir, &adapter.slug());
    let mut notice = |text: String| on_event(SweepEvent::Notice(text));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn config() -> Config {
        Config::default()
    }

    /// The sweep error under `error`, if it is one.
    fn sweep_error(error: &Error) -> Option<&SweepError> {
        match error {
            Error::Sweep(error) => Some(error),
            _ => None,
        }
    }

    #[test]
    fn verify_checks_the_whole_zoo_in_both_precisions_unless_told_otherwise() {
        let scope = Selection::default().verify_scope(&config());
        assert_eq!(scope.selection.models.len(), crate::model::model_names().len());
        assert_eq!(scope.selection.batches, vec![1]);
        assert_eq!(scope.selection.precisions, vec![Precision::F32, Precision::F16]);
        assert_eq!(scope.variant_precisions, vec![Precision::F32, Precision::F16]);
        assert!(!scope.explicit_precisions);
        let named = Selection {
            models: vec!["lenet".into()],
            precisions: vec![Precision::F16],
            ..Selection::default()
        };
        let scope = named.verify_scope(&config());
        assert_eq!(scope.selection.models, vec!["lenet".to_string()]);
        assert!(scope.selection.batches.is_empty());
        assert_eq!(scope.variant_precisions, vec![Precision::F16]);
        assert!(scope.explicit_precisions);
        let mut configured = config();
        configured.models = vec!["alexnet".into()];
        configured.precisions = vec!["f32".into()];
        let scope = Selection::default().verify_scope(&configured);
        assert!(
            scope.selection.models.is_empty(),
            "the configuration's models are jobs' business"
        );
        assert!(scope.selection.precisions.is_empty());
        assert_eq!(scope.variant_precisions, vec![Precision::F32]);
        assert!(scope.explicit_precisions);
    }

    #[test]
    fn an_empty_selection_runs_the_quick_set_on_a_software_adapter() {
        let mut notices = Vec::new();
        let jobs = Selection::default()
            .jobs(&config(), false, &mut notices)
            .expect("jobs");
        let batches: Vec<usize> = jobs.iter().map(|j| j.batch).collect();
        assert_eq!(batches, [1, 8, 64]);
        assert!(jobs.iter().all(|j| j.target.name() == "lenet"));
        assert_eq!(notices.len(), 1, "{notices:?}");
    }

    #[test]
    fn repeated_batches_and_precisions_run_once() {
        let selection = Selection {
            models: vec!["lenet".into(), "lenet".into()],
            batches: vec![2, 2, 4],
            precisions: vec![Precision::F32, Precision::F32],
            ..Selection::default()
        };
        let jobs = selection.jobs(&config(), false, &mut Vec::new()).expect("jobs");
        assert_eq!(jobs.len(), 2);
    }

    #[test]
    fn several_stages_run_every_benchmark_of_each_in_turn() {
        let selection = Selection {
            models: vec!["lenet".into()],
            batches: vec![1, 8],
            stages: vec![Stage::Eval, Stage::Train, Stage::Eval],
            ..Selection::default()
        };
        let jobs = selection.jobs(&config(), false, &mut Vec::new()).expect("jobs");
        let order: Vec<(Stage, usize)> = jobs.iter().map(|job| (job.stage, job.batch)).collect();
        assert_eq!(
            order,
            [
                (Stage::Eval, 1),
                (Stage::Eval, 8),
                (Stage::Train, 1),
                (Stage::Train, 8)
            ]
        );
        assert_eq!(jobs[1].label(true), "lenet/b8/f32/eval");
        assert_eq!(jobs[1].label(false), "lenet/b8/f32");
        let default = Selection {
            models: vec!["lenet".into()],
            batches: vec![1],
            ..Selection::default()
        };
        let jobs = default.jobs(&config(), false, &mut Vec::new()).expect("jobs");
        assert_eq!(
            jobs.iter().map(|job| job.stage).collect::<Vec<_>>(),
            [Stage::Train]
        );
    }

    #[test]
    fn a_batch_of_zero_is_invalid_input() {
        let selection = Selection {
            models: vec!["lenet".into()],
            batches: vec![0],
            ..Selection::default()
        };
        let error = selection
            .jobs(&config(), false, &mut Vec::new())
            .expect_err("a batch of zero");
        assert!(
            matches!(sweep_error(&error), Some(SweepError::ZeroBatch)),
            "{error:?}"
        );
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert_eq!(error.to_string(), "--batch 0: a batch needs at least one image");
    }

    #[test]
    fn zero_or_unbounded_counts_are_refused_before_anything_opens() {
        for (samples, rounds) in [(0, 1), (1, 0), (usize::MAX, 2), (4_294_967_296, 1)] {
            let request = SweepRequest {
                samples,
                rounds,
                ..SweepRequest::default()
            };
            let error = request.validate().expect_err("refused");
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{samples} x {rounds}");
            match (samples, rounds) {
                (0, _) => assert!(
                    matches!(
                        sweep_error(&error),
                        Some(SweepError::ZeroCount { flag: "--samples" })
                    ),
                    "{error:?}"
                ),
                (_, 0) => assert_eq!(error.to_string(), "--rounds must be at least 1"),
                _ => assert!(
                    matches!(sweep_error(&error), Some(SweepError::TooManySamples { samples: s, rounds: r })
                        if (*s, *r) == (samples, rounds)),
                    "{error:?}"
                ),
            }
        }
        assert!(SweepRequest::default().validate().is_ok());
    }

    #[test]
    fn a_forced_variant_that_implements_no_op_of_the_selection_is_refused() {
        let job = |model: &str, stage: Stage| Job {
            target: Target::Model(network(model).expect("a zoo model")),
            batch: 1,
            precision: Precision::F32,
            stage,
        };
        let winograd = KernelChoice::Force(Variant::Winograd);
        // LeNet's convolutions are 5x5: Winograd's 3x3 stride-1 kernels run in none of its ops.
        let lenet = [job("lenet", Stage::Eval), job("lenet", Stage::Train)];
        let error = check_forced_variant_runs(&winograd, &lenet, false).expect_err("runs nowhere");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(sweep_error(&error), Some(SweepError::KernelRunsNowhere { .. })),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.starts_with("--kernel winograd")
                && message.contains("lenet/b1/f32/eval, lenet/b1/f32/train"),
            "{message}"
        );
        // One job where it runs is enough; other choices never fail here.
        let mixed = [job("lenet", Stage::Eval), job("alexnet", Stage::Eval)];
        check_forced_variant_runs(&winograd, &mixed, false).expect("AlexNet has 3x3 stride-1 layers");
        for choice in [KernelChoice::Force(Variant::Direct), KernelChoice::Heuristic] {
            check_forced_variant_runs(&choice, &lenet, false).expect("runs everywhere");
        }
    }

    #[test]
    fn a_named_kernel_that_does_not_exist_is_invalid_input() {
        let request = KernelRequest::Named("no_such_variant".into());
        let error = KernelChoice::resolve(
            &request,
            &KernelSet::default(),
            Path::new("."),
            &[],
            &mut Vec::new(),
        )
        .expect_err("no such variant");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            matches!(sweep_error(&error), Some(SweepError::UnknownKernel { .. })),
            "{error:?}"
        );
        assert!(error.to_string().starts_with("--kernel: "), "{error}");
        assert!(error.to_string().ends_with(", or `auto`"), "{error}");
    }
}
