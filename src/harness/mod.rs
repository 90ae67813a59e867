//! The harness: plans a network or suite layer on a backend, verifies every op against the
//! CPU reference at a small batch, warms up, then samples the phases (and optionally every
//! layer) of an iteration, producing a [`BenchmarkResult`] with raw samples.
//!
//! Timing: with GPU timestamps, one submission per iteration and a timestamp pair around each
//! op's compute pass give every op's duration, phase times are sums of their ops, and the
//! total runs from the first op's start to the last op's end. With the wall clock (CPU backend,
//! or adapters without `TIMESTAMP_QUERY`), each phase is submitted and waited for separately;
//! with `--layers` each op is, which adds a synchronisation per op (recorded as the method).
//!
//! Kernel variants: on backends with variants (wgpu), each op's variant is chosen when the
//! target is planned ([`select`]: forced, tuned by [`tune`], or the shape heuristic), the
//! verification plan at the small batch runs the variants chosen for the measured batch, and
//! the per-layer results record them.
//!
//! [`sweep`] turns a request (selection, device, kernels, counts) into the rounds of a run and
//! its record; the binary only draws its events.

pub mod ab;
mod ab_error;
pub mod ab_process;
pub mod bisect;
pub mod conformance;
mod interrupted;
pub mod plan;
mod plan_error;
pub mod select;
pub mod sweep;
mod sweep_error;
pub mod tune;
pub mod tune_run;
mod verification_error;
pub mod verify;
pub mod verify_run;

pub use ab_error::AbError;
pub use interrupted::Interrupted;
pub use plan_error::PlanError;
pub use sweep_error::SweepError;
pub use verification_error::{Culprit, VerificationError};

use crate::backend::{Backend, Loaded, OpCall};
use crate::kernels::variant::DeviceClass;
use crate::kernels::{Access, Op};
use crate::model::{MAX_BATCH, Network, Precision, SuiteEntry};
use crate::results::{BenchmarkResult, LayerResult, Phase, PhaseResult, Stage, Summary, TimingMethod};
use crate::{Error, Result};
use plan::{Init, Plan, PlanOptions, plan_network, plan_suite_entry};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use select::KernelChoice;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What is benchmarked.
#[derive(Debug, Clone)]
pub enum Target {
    /// A whole network.
    Model(Network),
    /// One convolution of a layer suite; the name is `<suite>/<entry>`.
    SuiteLayer {
        /// Suite name.
        suite: String,
        /// The entry.
        entry: SuiteEntry,
    },
}

impl Target {
    /// The name used in benchmark ids.
    pub fn name(&self) -> String {
        match self {
            Target::Model(n) => n.name.clone(),
            Target::SuiteLayer { suite, entry } => format!("{suite}/{}", entry.name),
        }
    }

    /// Learnable parameters.
    pub fn params(&self) -> usize {
        match self {
            Target::Model(n) => n.param_count(),
            Target::SuiteLayer { entry, .. } => entry.conv.param_count(),
        }
    }

    /// Plans an iteration.
    pub fn plan(&self, batch: usize, precision: Precision, options: PlanOptions) -> Result<Plan> {
        match self {
            Target::Model(n) => plan_network(n, batch, precision, options),
            Target::SuiteLayer { entry, .. } => plan_suite_entry(entry, batch, precision, options.stage),
        }
    }
}

/// A request to stop, set from outside (the binary's SIGINT and SIGTERM handlers) and checked
/// by the harness before every sample and every verified op, so an interrupted sweep stops
/// within one iteration and keeps what it finished. The default is never set.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);

impl Interrupt {
    /// Stops when `flag` becomes true.
    pub fn new(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        Self(Some(flag))
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// [`Error::Interrupted`] with the work it stops `before` when a stop was requested.
    pub fn check(&self, before: &Interrupted) -> Result<()> {
        if self.requested() {
            return Err(before.clone().into());
        }
        Ok(())
    }
}

/// How to measure.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Train or eval.
    pub stage: Stage,
    /// Timed iterations.
    pub samples: usize,
    /// Minimum warm-up iterations.
    pub warmup_iterations: usize,
    /// Minimum warm-up time.
    pub warmup_min: Duration,
    /// Verify every op against the reference first.
    pub verify: bool,
    /// Compute the first layer's input gradient.
    pub data_grad: bool,
    /// Record the per-layer breakdown.
    pub layers: bool,
    /// How each op's kernel variant is chosen (backends with variants only).
    pub kernels: KernelChoice,
    /// Stops the work early when set (see [`Interrupt`]).
    pub interrupt: Interrupt,
}

impl RunOptions {
    /// These options at `stage`: a sweep's for one of its jobs.
    pub fn at(&self, stage: Stage) -> RunOptions {
        RunOptions {
            stage,
            ..self.clone()
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            stage: Stage::Train,
            samples: 10,
            warmup_iterations: sweep::WARMUP_ITERATIONS,
            warmup_min: Duration::from_millis(sweep::WARMUP_MIN_MS),
            verify: true,
            data_grad: false,
            layers: false,
            kernels: KernelChoice::Heuristic,
            interrupt: Interrupt::default(),
        }
    }
}

/// Progress of one benchmark, for progress bars.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Verification of `ops` ops started.
    Verifying {
        /// Ops to verify.
        ops: usize,
    },
    /// One more op verified.
    VerifiedOp,
    /// Warm-up started.
    WarmingUp,
    /// Sample `index` (from 1) of `total` done.
    Sample {
        /// Samples done.
        index: usize,
        /// Samples wanted.
        total: usize,
    },
}

/// Batch at which networks are verified before timing.
pub const VERIFY_BATCH: usize = 2;

fn fill(loaded: &mut dyn Loaded, plan: &Plan, rng: &mut StdRng) -> Result<()> {
    for &(tensor, init) in &plan.inits {
        let len = plan.program.tensors[tensor].len;
        match init {
            Init::Uniform(scale) => {
                let values: Vec<f32> = (0..len).map(|_| rng.random_range(-scale..scale)).collect();
                loaded.write(tensor, &values)?;
            }
            Init::Constant(v) => loaded.write(tensor, &vec![v; len])?,
            Init::Labels(classes) => {
                let labels: Vec<u32> = (0..len).map(|_| rng.random_range(0..classes.max(1))).collect();
                loaded.write_u32(tensor, &labels)?;
            }
        }
    }
    Ok(())
}

/// The error of a precision the backend cannot run.
pub fn unsupported(backend: &dyn Backend, precision: Precision) -> Error {
    SweepError::UnsupportedPrecision {
        adapter: backend.adapter().label(),
        precision,
    }
    .into()
}

fn check_batch(batch: usize) -> Result<()> {
    if batch == 0 || batch > MAX_BATCH {
        return Err(SweepError::BatchOutOfRange { batch }.into());
    }
    Ok(())
}

/// Verifies every op of `target` on `backend` at [`VERIFY_BATCH`] (or `batch` if smaller).
/// Returns the worst ratio of error to bound of each op (see [`verify`]).
pub fn verify_target(
    backend: &dyn Backend,
    target: &Target,
    batch: usize,
    precision: Precision,
    options: &RunOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<verify::Summary> {
    let plan = verification_plan(backend, target, batch, precision, options)?;
    verify_plan(backend, target, &plan, &|_| false, options, on_event)
}

/// The plan [`verify_target`] checks: `target` at [`VERIFY_BATCH`] (or `batch` if smaller),
/// running the variants chosen for `batch`.
pub fn verification_plan(
    backend: &dyn Backend,
    target: &Target,
    batch: usize,
    precision: Precision,
    options: &RunOptions,
) -> Result<Plan> {
    check_batch(batch)?;
    let plan_options = PlanOptions {
        stage: options.stage,
        data_grad: options.data_grad,
        max_tensor_bytes: backend.max_tensor_bytes(),
    };
    let mut plan = target.plan(batch.min(VERIFY_BATCH), precision, plan_options)?;
    if select::has_variants(backend.kind()) {
        let mut measured = target.plan(batch, precision, plan_options)?;
        let device = DeviceClass::of(backend.adapter());
        select::choose(&mut measured.program, &options.kernels, device);
        select::copy_variants(&measured.program, &mut plan.program, &options.kernels, device);
    }
    Ok(plan)
}

/// Checks every op of `plan` (from [`verification_plan`]) on `backend` against the reference,
/// except those `skip` names (by index): `ab` verifies an op whose kernel is the same code on
/// both sides once.
pub fn verify_plan(
    backend: &dyn Backend,
    target: &Target,
    plan: &Plan,
    skip: &dyn Fn(usize) -> bool,
    options: &RunOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<verify::Summary> {
    if (0..plan.program.ops.len()).all(skip) {
        on_event(Event::Verifying { ops: 0 });
        return Ok(verify::Summary::default());
    }
    let mut loaded = backend.load(&plan.program)?;
    let seed: u64 = rand::rng().random();
    fill(loaded.as_mut(), plan, &mut StdRng::seed_from_u64(seed))?;
    on_event(Event::Verifying {
        ops: (0..plan.program.ops.len()).filter(|&index| !skip(index)).count(),
    });
    let name = target.name();
    let describe = |index: usize| {
        let label = &plan.labels[index];
        let layer = &plan.layers[label.layer];
        format!(
            "{name}: layer {} ({}, {})",
            layer.name,
            layer.op,
            label.phase.as_str()
        )
    };
    let verifying = Interrupted::Verifying { target: name.clone() };
    let mut summary = verify::Summary::default();
    for index in (0..plan.program.ops.len()).filter(|&index| !skip(index)) {
        options.interrupt.check(&verifying)?;
        let check = verify::check_op(loaded.as_mut(), &plan.program, index)?;
        if !check.passed() {
            return Err(verify::mismatch(
                loaded.as_ref(),
                &plan.program,
                index,
                &describe(index),
                &check,
                Some(seed),
            ));
        }
        summary.record(plan.program.ops[index].op.name(), &check, || describe(index));
        on_event(Event::VerifiedOp);
    }
    Ok(summary)
}

/// `KIND (ADAPTER)`: how verification tables name a backend.
pub fn backend_label(backend: &dyn Backend) -> String {
    format!("{} ({})", backend.kind().as_str(), backend.adapter().label())
}

/// Progress of [`verify_jobs`], for the binary to draw.
#[derive(Debug)]
pub enum VerifyEvent<'a> {
    /// Something the user should know (a backend lacks a precision the selection defaulted to).
    Notice(String),
    /// Progress of one verification of one benchmark, named by `label`
    /// (`model/bBATCH/PRECISION`).
    Benchmark {
        /// The benchmark.
        label: &'a str,
        /// What happened.
        event: Event,
    },
    /// One verification of one benchmark passed.
    Verified,
}

/// What [`verify_jobs`] found on one backend: per precision, the worst ratio of error to bound
/// of each op over every job and repetition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendSummary {
    /// The backend, as [`backend_label`] names it.
    pub label: String,
    /// Per precision verified, the merged summary.
    pub precisions: BTreeMap<Precision, verify::Summary>,
}

/// Verifies every op of every job on every backend against the reference, `repeat` times
/// (each with fresh random data), without timing anything: `cargo convbench verify`'s networks.
/// A job in a precision a backend lacks is an error when `explicit_precisions` (the user named
/// the precisions), else skipped with a notice (once per backend and precision). Returns the
/// summaries of the backends that verified anything, in order, and beside them the error that
/// stopped the checking, if one did: the first op beyond its bound, a device error, or
/// `options.interrupt` set ([`Interrupted::Verifications`]); the summaries then hold what was
/// verified before it. A request that cannot start (`repeat` 0) is the `Err`.
pub fn verify_jobs(
    backends: &[Box<dyn Backend>],
    jobs: &[sweep::Job],
    options: &RunOptions,
    repeat: usize,
    explicit_precisions: bool,
    on_event: &mut dyn FnMut(VerifyEvent<'_>),
) -> Result<(Vec<BackendSummary>, Option<Error>)> {
    if repeat == 0 {
        return Err(SweepError::ZeroCount { flag: "--repeat" }.into());
    }
    // A batch a backend cannot hold is refused before anything is verified, as `run` refuses
    // it: verification runs at a small batch, and would pass a benchmark `run` cannot time.
    for backend in backends {
        for job in jobs.iter().filter(|job| backend.supports(job.precision)) {
            check_holds(
                backend.as_ref(),
                &job.target,
                job.batch,
                job.precision,
                &options.at(job.stage),
            )?;
        }
    }
    let several_stages = sweep::Job::stages_differ(jobs);
    let total = jobs.len() * backends.len() * repeat;
    let mut verified = 0;
    let mut summaries = Vec::new();
    for backend in backends {
        let mut found = BackendSummary {
            label: backend_label(backend.as_ref()),
            precisions: BTreeMap::new(),
        };
        let mut missing = Vec::new();
        let mut stopped = None;
        'jobs: for job in jobs {
            if !backend.supports(job.precision) {
                if explicit_precisions {
                    stopped = Some(unsupported(backend.as_ref(), job.precision));
                    break;
                }
                if !missing.contains(&job.precision) {
                    missing.push(job.precision);
                    on_event(VerifyEvent::Notice(format!(
                        "{} has no {}; not verified in it",
                        found.label, job.precision
                    )));
                }
                continue;
            }
            let label = job.label(several_stages);
            for _ in 0..repeat {
                let summary = options
                    .interrupt
                    .check(&Interrupted::Verifications { verified, total })
                    .and_then(|()| {
                        verify_target(
                            backend.as_ref(),
                            &job.target,
                            job.batch,
                            job.precision,
                            &options.at(job.stage),
                            &mut |event| on_event(VerifyEvent::Benchmark { label: &label, event }),
                        )
                    });
                match summary {
                    Ok(summary) => {
                        found.precisions.entry(job.precision).or_default().merge(summary);
                        verified += 1;
                        on_event(VerifyEvent::Verified);
                    }
                    Err(e) => {
                        // An interrupt inside the benchmark says how far the whole run got.
                        stopped = Some(if e.kind() == crate::ErrorKind::Interrupted {
                            Interrupted::Verifications { verified, total }.into()
                        } else {
                            e
                        });
                        break 'jobs;
                    }
                }
            }
        }
        if !found.precisions.is_empty() {
            summaries.push(found);
        }
        if stopped.is_some() {
            return Ok((summaries, stopped));
        }
    }
    Ok((summaries, None))
}

/// One timed iteration: nanoseconds per phase (in plan order), per op (may be empty), total.
struct Sample {
    phases_ns: Vec<u64>,
    per_op_ns: Vec<u64>,
    total_ns: u64,
}

fn iterate(loaded: &mut dyn Loaded, plan: &Plan, method: TimingMethod, per_op: bool) -> Result<Sample> {
    let ops = plan.program.ops.len();
    if method == TimingMethod::WallClock && !per_op {
        let mut phases_ns = Vec::with_capacity(plan.phases.len());
        for (_, range) in &plan.phases {
            phases_ns.push(loaded.run(range.clone(), false)?.total_ns);
        }
        let total_ns = phases_ns.iter().sum();
        return Ok(Sample {
            phases_ns,
            per_op_ns: Vec::new(),
            total_ns,
        });
    }
    let timings = loaded.run(0..ops, true)?;
    let phases_ns = plan
        .phases
        .iter()
        .map(|(_, range)| timings.per_op_ns.get(range.clone()).map_or(0, |s| s.iter().sum()))
        .collect();
    Ok(Sample {
        phases_ns,
        per_op_ns: timings.per_op_ns,
        total_ns: timings.total_ns,
    })
}

/// Fails when `backend` could not hold the program of `target` at `batch` ([`Backend::check_holds`]),
/// planned as [`measure`] plans it; nothing is allocated.
pub fn check_holds(
    backend: &dyn Backend,
    target: &Target,
    batch: usize,
    precision: Precision,
    options: &RunOptions,
) -> Result<()> {
    check_batch(batch)?;
    let plan = target.plan(batch, precision, plan_options(backend, options))?;
    holds(backend, &plan.program, target, batch, precision)
}

/// [`Backend::check_holds`] of `program`, a shortfall naming the benchmark.
fn holds(
    backend: &dyn Backend,
    program: &crate::backend::Program,
    target: &Target,
    batch: usize,
    precision: Precision,
) -> Result<()> {
    backend.check_holds(program, &|| {
        format!(
            "{} at batch {batch} in {precision} on the {} backend",
            target.name(),
            backend.kind().as_str()
        )
    })
}

/// How [`measure`] and [`check_holds`] plan a target: the run's stage and data-gradient choice,
/// and the backend's largest tensor.
fn plan_options(backend: &dyn Backend, options: &RunOptions) -> PlanOptions {
    PlanOptions {
        stage: options.stage,
        data_grad: options.data_grad,
        max_tensor_bytes: backend.max_tensor_bytes(),
    }
}

/// Measures `target` at `batch` and `precision` on `backend` (verify first with
/// [`verify_target`] when wanted; this function only times).
pub fn measure(
    backend: &dyn Backend,
    target: &Target,
    batch: usize,
    precision: Precision,
    options: &RunOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<BenchmarkResult> {
    check_batch(batch)?;
    if !backend.supports(precision) {
        return Err(unsupported(backend, precision));
    }
    if options.samples == 0 {
        return Err(SweepError::ZeroCount { flag: "--samples" }.into());
    }
    let mut plan = target.plan(batch, precision, plan_options(backend, options))?;
    if select::has_variants(backend.kind()) {
        select::choose(
            &mut plan.program,
            &options.kernels,
            DeviceClass::of(backend.adapter()),
        );
    }
    holds(backend, &plan.program, target, batch, precision)?;
    let mut loaded = backend.load(&plan.program)?;
    fill(loaded.as_mut(), &plan, &mut StdRng::seed_from_u64(0x00C0_FFEE))?;
    let method = backend.timing_method();

    on_event(Event::WarmingUp);
    let warm_start = Instant::now();
    let mut warm = 0;
    let measuring = Interrupted::Measuring {
        target: target.name(),
        batch,
    };
    while warm < options.warmup_iterations || warm_start.elapsed() < options.warmup_min {
        options.interrupt.check(&measuring)?;
        iterate(loaded.as_mut(), &plan, method, options.layers)?;
        warm += 1;
    }

    let mut samples = Vec::with_capacity(options.samples);
    for index in 0..options.samples {
        options.interrupt.check(&measuring)?;
        samples.push(iterate(loaded.as_mut(), &plan, method, options.layers)?);
        on_event(Event::Sample {
            index: index + 1,
            total: options.samples,
        });
    }

    let summarize = |values: Vec<u64>, phase: Phase| PhaseResult {
        phase,
        summary: Summary::of(&values).unwrap_or(Summary {
            median_ns: 0.0,
            mean_ns: 0.0,
            min_ns: 0.0,
            max_ns: 0.0,
            stddev_ns: 0.0,
        }),
        samples_ns: values,
    };
    let mut phases: Vec<PhaseResult> = plan
        .phases
        .iter()
        .enumerate()
        .map(|(k, (phase, _))| summarize(samples.iter().map(|s| s.phases_ns[k]).collect(), *phase))
        .collect();
    phases.push(summarize(
        samples.iter().map(|s| s.total_ns).collect(),
        Phase::Total,
    ));

    let layers = if options.layers {
        layer_results(&plan, &samples, &|index| loaded.kernel_name(index))
    } else {
        Vec::new()
    };
    let forward_flops = plan
        .program
        .ops
        .iter()
        .zip(&plan.labels)
        .filter(|(_, l)| l.phase == Phase::Forward)
        .map(|(c, _)| c.op.flops())
        .sum();
    let iteration_flops = plan.program.ops.iter().map(|c| c.op.flops()).sum();
    let backend_name = backend.kind().as_str();
    let name = target.name();
    Ok(BenchmarkResult {
        id: BenchmarkResult::make_id(&name, options.stage, batch, precision, backend_name),
        model: name,
        stage: options.stage,
        batch,
        precision,
        backend: backend_name.to_string(),
        adapter: backend.adapter().clone(),
        timing_method: if method == TimingMethod::WallClock && options.layers {
            TimingMethod::WallClock
        } else {
            method
        },
        warmup_iterations: warm,
        verified: options.verify,
        params: target.params(),
        forward_flops,
        iteration_flops,
        device_memory_bytes: loaded.memory_bytes(),
        phases,
        layers,
        peak: None,
        kernels: if select::has_variants(backend.kind()) {
            kernel_choices(&plan, None)
        } else {
            kernel_choices(&plan, Some(&|i| loaded.kernel_name(i)))
        },
        rounds: Vec::new(),
        runs: Vec::new(),
    })
}

/// The variant of every layer and phase whose ops have a choice of variants (those with a GEMM
/// form: the only ops user kernels implement), keyed `"<layer> <phase>"` (see
/// [`BenchmarkResult::kernels`]). With `backend_names`, for a backend that chooses its own
/// kernels (cuDNN's algorithm, cuBLAS), what it names as running them instead, and only the
/// layers and phases whose ops it names.
fn kernel_choices(
    plan: &Plan,
    backend_names: Option<&dyn Fn(usize) -> Option<String>>,
) -> BTreeMap<String, String> {
    op_groups(plan, |call| crate::kernels::Variant::has_gemm(&call.op))
        .into_iter()
        .filter_map(|((layer, phase), ops)| {
            let ids = match backend_names {
                None => variants_of(plan, &ops, &|_| None),
                Some(name) if ops.iter().all(|&i| name(i).is_some()) => variants_of(plan, &ops, name),
                Some(_) => return None,
            };
            Some((format!("{} {}", plan.layers[layer].name, phase.as_str()), ids))
        })
        .collect()
}

/// The indices of the plan's ops that `keep` accepts, by (layer, phase).
fn op_groups(plan: &Plan, keep: impl Fn(&OpCall) -> bool) -> BTreeMap<(usize, Phase), Vec<usize>> {
    let mut groups: BTreeMap<(usize, Phase), Vec<usize>> = BTreeMap::new();
    for (index, (label, call)) in plan.labels.iter().zip(&plan.program.ops).enumerate() {
        if keep(call) {
            groups.entry((label.layer, label.phase)).or_default().push(index);
        }
    }
    groups
}

/// Per-layer, per-phase sums of op durations, in plan order.
fn layer_results(
    plan: &Plan,
    samples: &[Sample],
    kernel_name: &dyn Fn(usize) -> Option<String>,
) -> Vec<LayerResult> {
    let mut ordered: Vec<((usize, Phase), Vec<usize>)> = op_groups(plan, |_| true).into_iter().collect();
    ordered.sort_by_key(|((layer, phase), ops)| (*phase, ops.first().copied().unwrap_or(*layer)));
    ordered
        .into_iter()
        .filter(|_| samples.iter().all(|s| !s.per_op_ns.is_empty()))
        .map(|((layer, phase), ops)| {
            let values: Vec<u64> = samples
                .iter()
                .map(|s| ops.iter().map(|&i| s.per_op_ns[i]).sum())
                .collect();
            let info = &plan.layers[layer];
            LayerResult {
                layer: info.name.clone(),
                op: info.op.clone(),
                phase,
                summary: Summary::of(&values).unwrap_or(Summary {
                    median_ns: 0.0,
                    mean_ns: 0.0,
                    min_ns: 0.0,
                    max_ns: 0.0,
                    stddev_ns: 0.0,
                }),
                samples_ns: values,
                flops: ops.iter().map(|&i| plan.program.ops[i].op.flops()).sum(),
                variant: variants_of(plan, &ops, kernel_name),
                bytes: ops
                    .iter()
                    .map(|&i| compulsory_bytes(&plan.program.ops[i].op, plan.program.precision))
                    .sum(),
            }
        })
        .collect()
}

/// Bytes `op` must move at least: each binding read or written once in full, twice when it is
/// both read and written (the roofline's denominator; see [`crate::roofline`]). A binding is
/// counted whole even where an op touches part of it (a column slice of a fully connected
/// layer and its output rows, a concatenation's channel slice): small beside the weights or
/// activations of the layers the roofline is for.
fn compulsory_bytes(op: &Op, precision: Precision) -> u64 {
    op.bindings()
        .iter()
        .zip(op.binding_lens())
        .zip(op.dtypes())
        .map(|((access, len), dtype)| {
            let passes = if *access == Access::ReadWrite { 2 } else { 1 };
            passes * (dtype.bytes(precision) * len) as u64
        })
        .sum()
}

/// The distinct variants of `ops`, in order, joined with `+` (a layer split into column slices
/// may run slices with different variants); an op the backend runs with a routine of its own
/// choosing is named by `kernel_name` (cuDNN's algorithm).
fn variants_of(plan: &Plan, ops: &[usize], kernel_name: &dyn Fn(usize) -> Option<String>) -> String {
    let mut ids: Vec<String> = Vec::new();
    for &i in ops {
        let id = kernel_name(i).unwrap_or_else(|| plan.program.ops[i].variant.id());
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids.join("+")
}

/// The interleaved samples of one benchmark on two backends, `base` and `head` (the same
/// device with two shader sets, see [`crate::backend::wgpu::WgpuBackend::with_shaders`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbSamples {
    /// Whole-iteration nanoseconds on the base, one per pair.
    pub base_ns: Vec<u64>,
    /// Whole-iteration nanoseconds on the head, one per pair.
    pub head_ns: Vec<u64>,
    /// Whether the base ran first in each pair (ABBA: alternating).
    pub base_first: Vec<bool>,
    /// How the durations were measured.
    pub timing_method: TimingMethod,
    /// Each phase's times, in plan order: `(phase, base_ns, head_ns)`, one of each per pair.
    pub phases: Vec<(Phase, Vec<u64>, Vec<u64>)>,
    /// With [`RunOptions::layers`], each layer's times (its ops in every phase), in plan
    /// order: `(layer name, base_ns, head_ns)`, one of each per pair; else empty.
    pub layers: Vec<(String, Vec<u64>, Vec<u64>)>,
}

/// Both sides of an interleaved A/B, loaded and warmed up: the same plan and the same inputs on
/// `base` and `head`, each side with its own kernel choice (the base revision's user kernels
/// on side A), both loaded at once. [`AbSession::take`] adds pairs in ABBA order, one
/// whole-iteration time of each side per pair, so the caller can stop as soon as the verdict
/// is settled.
pub struct AbSession<'a> {
    plan: Plan,
    sides: [Box<dyn Loaded + 'a>; 2],
    method: TimingMethod,
    /// What an interruption stops before.
    comparing: Interrupted,
    interrupt: Interrupt,
    /// Whether each op is timed (`--layers`), for [`AbSamples::layers`].
    per_op: bool,
    /// Every pair so far.
    pub samples: AbSamples,
}

impl<'a> AbSession<'a> {
    /// Plans `target` once, chooses each side's kernels (`base_kernels` for the base, the
    /// options' for the head), loads both, fills both with the same inputs and warms both up.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        base: &'a dyn Backend,
        head: &'a dyn Backend,
        base_kernels: &KernelChoice,
        target: &Target,
        batch: usize,
        precision: Precision,
        options: &RunOptions,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Self> {
        check_batch(batch)?;
        for side in [base, head] {
            if !side.supports(precision) {
                return Err(unsupported(side, precision));
            }
        }
        let plan_options = PlanOptions {
            stage: options.stage,
            data_grad: options.data_grad,
            max_tensor_bytes: head.max_tensor_bytes().min(base.max_tensor_bytes()),
        };
        let plan = target.plan(batch, precision, plan_options)?;
        let mut base_program = plan.program.clone();
        let mut head_program = plan.program.clone();
        if select::has_variants(head.kind()) {
            select::choose(&mut base_program, base_kernels, DeviceClass::of(base.adapter()));
            select::choose(
                &mut head_program,
                &options.kernels,
                DeviceClass::of(head.adapter()),
            );
        }
        let mut sides = [base.load(&base_program)?, head.load(&head_program)?];
        for loaded in &mut sides {
            fill(loaded.as_mut(), &plan, &mut StdRng::seed_from_u64(0x00C0_FFEE))?;
        }
        let method = head.timing_method();
        let comparing = Interrupted::Comparing {
            target: target.name(),
            batch,
        };
        on_event(Event::WarmingUp);
        let warm_start = Instant::now();
        let mut warm = 0;
        while warm < options.warmup_iterations || warm_start.elapsed() < options.warmup_min {
            for loaded in &mut sides {
                options.interrupt.check(&comparing)?;
                iterate(loaded.as_mut(), &plan, method, false)?;
            }
            warm += 1;
        }
        let phases = plan
            .phases
            .iter()
            .map(|(phase, _)| (*phase, Vec::new(), Vec::new()))
            .collect();
        let layers = if options.layers {
            plan.layers
                .iter()
                .map(|layer| (layer.name.clone(), Vec::new(), Vec::new()))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            plan,
            sides,
            method,
            comparing,
            interrupt: options.interrupt.clone(),
            per_op: options.layers,
            samples: AbSamples {
                base_ns: Vec::new(),
                head_ns: Vec::new(),
                base_first: Vec::new(),
                timing_method: method,
                phases,
                layers,
            },
        })
    }

    /// Measures `pairs` more pairs; `total` is what the progress events count to.
    pub fn take(&mut self, pairs: usize, total: usize, on_event: &mut dyn FnMut(Event)) -> Result<()> {
        for _ in 0..pairs {
            let index = self.samples.base_ns.len();
            let base_first = index.is_multiple_of(2);
            let order = if base_first { [0, 1] } else { [1, 0] };
            let mut times = [0u64; 2];
            let mut phases: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            let mut layers: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            for side in order {
                self.interrupt.check(&self.comparing)?;
                let sample = iterate(self.sides[side].as_mut(), &self.plan, self.method, self.per_op)?;
                times[side] = sample.total_ns;
                phases[side] = sample.phases_ns;
                if self.per_op {
                    layers[side] = vec![0; self.plan.layers.len()];
                    for (label, ns) in self.plan.labels.iter().zip(&sample.per_op_ns) {
                        layers[side][label.layer] += ns;
                    }
                }
            }
            for (index, (_, base, head)) in self.samples.layers.iter_mut().enumerate() {
                base.push(layers[0].get(index).copied().unwrap_or(0));
                head.push(layers[1].get(index).copied().unwrap_or(0));
            }
            self.samples.base_ns.push(times[0]);
            self.samples.head_ns.push(times[1]);
            for (index, (_, base, head)) in self.samples.phases.iter_mut().enumerate() {
                base.push(phases[0].get(index).copied().unwrap_or(0));
                head.push(phases[1].get(index).copied().unwrap_or(0));
            }
            self.samples.base_first.push(base_first);
            on_event(Event::Sample {
                index: index + 1,
                total: total.max(index + 1),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;

    #[test]
    fn repeated_verifications_merge_per_backend_and_precision() {
        let backends: Vec<Box<dyn Backend>> = vec![Box::new(CpuBackend::new())];
        let network = crate::model::network("lenet").expect("lenet");
        let jobs = [sweep::Job {
            target: Target::Model(network),
            batch: 1,
            precision: Precision::F32,
            stage: Stage::Train,
        }];
        let options = RunOptions::default();
        let mut verified = 0;
        let (summaries, error) = verify_jobs(&backends, &jobs, &options, 2, true, &mut |event| {
            verified += usize::from(matches!(event, VerifyEvent::Verified));
        })
        .expect("lenet verifies on the cpu");
        assert!(error.is_none(), "{error:?}");
        assert_eq!(verified, 2);
        assert_eq!(summaries.len(), 1);
        assert_eq!(summaries[0].label, backend_label(backends[0].as_ref()));
        let twice = &summaries[0].precisions[&Precision::F32];
        let once = verify_target(
            backends[0].as_ref(),
            &jobs[0].target,
            1,
            Precision::F32,
            &options,
            &mut |_| {},
        )
        .expect("lenet verifies on the cpu");
        assert_eq!(twice.ops.len(), once.ops.len());
        for (op, line) in &once.ops {
            assert_eq!(twice.ops[op].checked, 2 * line.checked, "{op}");
        }
        let refused = verify_jobs(&backends, &jobs, &options, 0, true, &mut |_| {});
        assert_eq!(
            refused.err().map(|e| e.kind()),
            Some(crate::ErrorKind::InvalidInput)
        );
    }

    #[test]
    fn a_backend_that_names_its_kernels_is_recorded_by_them_and_only_where_it_names_all() {
        let target = Target::Model(crate::model::network("lenet").expect("lenet"));
        let options = PlanOptions {
            stage: Stage::Train,
            data_grad: false,
            max_tensor_bytes: u64::MAX,
        };
        let plan = target.plan(2, Precision::F32, options).expect("lenet plans");
        let variants = kernel_choices(&plan, None);
        assert!(variants.contains_key("conv1 forward"), "{variants:?}");
        assert!(variants.values().all(|v| !v.is_empty()), "{variants:?}");
        // Named everywhere: every layer and phase takes the backend's name.
        let named = kernel_choices(&plan, Some(&|i| Some(format!("algo{}", i % 2))));
        assert_eq!(
            named.keys().collect::<Vec<_>>(),
            variants.keys().collect::<Vec<_>>()
        );
        assert!(
            named
                .values()
                .all(|v| v.split('+').all(|id| id.starts_with("algo"))),
            "{named:?}"
        );
        // Named nowhere (the cpu backend): nothing is recorded, no plan variant in its place.
        assert!(kernel_choices(&plan, Some(&|_| None)).is_empty());
        // Named for some ops only: only layers and phases whose ops all have a name.
        let first = plan
            .program
            .ops
            .iter()
            .position(|c| crate::kernels::Variant::has_gemm(&c.op))
            .expect("a GEMM op");
        let partial = kernel_choices(&plan, Some(&|i| (i == first).then(|| "cublas".to_string())));
        assert_eq!(partial.values().collect::<Vec<_>>(), ["cublas"], "{partial:?}");
    }

    #[test]
    fn a_stop_requested_before_measuring_says_which_benchmark_it_cut_short() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let options = RunOptions {
            verify: false,
            warmup_iterations: 1,
            interrupt: Interrupt::new(flag),
            ..RunOptions::default()
        };
        let target = Target::Model(crate::model::network("lenet").expect("lenet"));
        let error = measure(
            &CpuBackend::new(),
            &target,
            2,
            Precision::F32,
            &options,
            &mut |_| {},
        )
        .expect_err("stopped");
        assert!(
            matches!(&error, Error::Interrupted(Interrupted::Measuring { target, batch: 2 }) if target == "lenet"),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::Interrupted);
        assert_eq!(
            error.to_string(),
            "interrupted before lenet at batch 2 was measured in full"
        );
    }

    #[test]
    fn a_batch_beyond_the_limit_is_refused_naming_the_limit() {
        let target = Target::Model(crate::model::network("lenet").expect("lenet"));
        let options = RunOptions::default();
        let error = measure(
            &CpuBackend::new(),
            &target,
            MAX_BATCH + 1,
            Precision::F32,
            &options,
            &mut |_| {},
        )
        .expect_err("too large");
        assert!(
            matches!(&error, Error::Sweep(e) if matches!(**e, SweepError::BatchOutOfRange { batch } if batch == MAX_BATCH + 1)),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "batch {} is out of range; use a batch between 1 and {MAX_BATCH}",
                MAX_BATCH + 1
            )
        );
    }
}
