//! `RunRecord`: the versioned, serde-serialised result of a run, with raw samples.
//!
//! A record is what `cargo convbench run --format json` writes, what baselines store and what
//! `compare` reads. Its `format_version` is checked on load: a newer version than this build
//! understands is a clear error, never a silent misreading.

use crate::model::Precision;
use serde::{Deserialize, Serialize};

/// The record format this build writes and the newest it reads. Version 2 added rounds and
/// runs ([`BenchmarkResult::rounds`], [`BenchmarkResult::runs`]) and [`RunRecord::complete`];
/// version 1 records read as one round of one complete run.
pub const FORMAT_VERSION: u32 = 2;

pub use crate::adapter::{AdapterFingerprint, MAX_SLUG_LEN};

#[cfg(any(test, feature = "testing"))]
pub mod fixtures;

/// How durations were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMethod {
    /// GPU timestamp queries around each op, each op in its own compute pass.
    GpuTimestamps,
    /// Device events (CUDA events with timing enabled).
    DeviceEvents,
    /// Host wall clock around submit and wait (synchronised).
    WallClock,
}

impl TimingMethod {
    /// Human label.
    pub const fn as_str(self) -> &'static str {
        match self {
            TimingMethod::GpuTimestamps => "gpu timestamps",
            TimingMethod::DeviceEvents => "device events",
            TimingMethod::WallClock => "synchronized wall clock",
        }
    }
}

/// Forward only with inference-mode batch norm, or a full training step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Forward, loss, backward, update.
    Train,
    /// Forward only.
    Eval,
}

impl Stage {
    /// `"train"` or `"eval"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Stage::Train => "train",
            Stage::Eval => "eval",
        }
    }
}

/// A timed phase, named as the classic benchmarks name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// `updateOutput`: the forward pass.
    Forward,
    /// Softmax cross-entropy forward.
    LossForward,
    /// Softmax cross-entropy backward.
    LossBackward,
    /// `updateGradInput`: gradients with respect to activations.
    GradInput,
    /// `accGradParameters`: gradients with respect to weights and biases.
    GradParams,
    /// SGD with momentum and weight decay.
    Update,
    /// Everything above, per iteration.
    Total,
}

impl Phase {
    /// Every phase in report order.
    pub const ALL: [Phase; 7] = [
        Phase::Forward,
        Phase::LossForward,
        Phase::LossBackward,
        Phase::GradInput,
        Phase::GradParams,
        Phase::Update,
        Phase::Total,
    ];

    /// Stable snake_case name used in ids and files.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::LossForward => "loss_forward",
            Phase::LossBackward => "loss_backward",
            Phase::GradInput => "grad_input",
            Phase::GradParams => "grad_params",
            Phase::Update => "update",
            Phase::Total => "total",
        }
    }

    /// The name people read in tables, comments and annotations, e.g. `grad-input`
    /// ([`Phase::as_str`] with hyphens; files and ids keep the snake_case name).
    pub const fn label(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::LossForward => "loss-forward",
            Phase::LossBackward => "loss-backward",
            Phase::GradInput => "grad-input",
            Phase::GradParams => "grad-params",
            Phase::Update => "update",
            Phase::Total => "total",
        }
    }
}

/// Summary statistics of a sample, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Median (ns).
    pub median_ns: f64,
    /// Arithmetic mean (ns).
    pub mean_ns: f64,
    /// Minimum (ns).
    pub min_ns: f64,
    /// Maximum (ns).
    pub max_ns: f64,
    /// Sample standard deviation (ns), 0 for fewer than two samples.
    pub stddev_ns: f64,
}

impl Summary {
    /// Summarises raw samples; `None` when there are none.
    pub fn of(samples_ns: &[u64]) -> Option<Self> {
        if samples_ns.is_empty() {
            return None;
        }
        let mut sorted: Vec<f64> = samples_ns.iter().map(|&s| s as f64).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ns = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean_ns = sorted.iter().sum::<f64>() / n as f64;
        let stddev_ns = if n > 1 {
            (sorted.iter().map(|x| (x - mean_ns).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Self {
            median_ns,
            mean_ns,
            min_ns: sorted[0],
            max_ns: sorted[n - 1],
            stddev_ns,
        })
    }
}

/// The samples of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Which phase.
    pub phase: Phase,
    /// Raw per-iteration durations (ns), in measurement order.
    pub samples_ns: Vec<u64>,
    /// Summary of `samples_ns`.
    pub summary: Summary,
}

/// Per-layer timings of one phase (the `--layers` breakdown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerResult {
    /// Layer name.
    pub layer: String,
    /// Operation, e.g. `conv2d`.
    pub op: String,
    /// Which phase these samples belong to.
    pub phase: Phase,
    /// Raw durations (ns), one per sample.
    pub samples_ns: Vec<u64>,
    /// Summary of `samples_ns`.
    pub summary: Summary,
    /// FLOPs of the layer in this phase for the whole batch (`2 x` multiply-adds), 0 when
    /// the op is not counted.
    pub flops: u64,
    /// Kernel variant that ran, e.g. `direct`.
    pub variant: String,
    /// Bytes the layer's ops must move at least in this phase: every binding read or written
    /// once in full (twice when read and written), the denominator of its arithmetic
    /// intensity. 0 in records written before it was counted.
    #[serde(default)]
    pub bytes: u64,
}

/// One benchmark: a model or suite entry at a batch, precision, stage and backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    /// Stable id: `<model>/<stage>/b<batch>/<precision>/<backend>`.
    pub id: String,
    /// Model or suite entry name.
    pub model: String,
    /// Train or eval.
    pub stage: Stage,
    /// Images per iteration.
    pub batch: usize,
    /// Storage precision.
    pub precision: Precision,
    /// `wgpu`, `cpu` or `cuda`.
    pub backend: String,
    /// Adapter the numbers come from.
    pub adapter: AdapterFingerprint,
    /// How the durations were measured.
    pub timing_method: TimingMethod,
    /// Warm-up iterations run before sampling.
    pub warmup_iterations: usize,
    /// Whether the first iteration was checked against the CPU reference.
    pub verified: bool,
    /// Learnable parameters.
    pub params: usize,
    /// Forward FLOPs for the whole batch (`2 x` multiply-adds of conv and linear layers).
    pub forward_flops: u64,
    /// FLOPs of the whole measured iteration (forward, and backward when training).
    pub iteration_flops: u64,
    /// Bytes of device memory allocated for the plan.
    pub device_memory_bytes: u64,
    /// Phases with raw samples.
    pub phases: Vec<PhaseResult>,
    /// Optional per-layer breakdown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerResult>,
    /// The adapter's calibrated peaks (`cargo convbench adapters --calibrate`) when they were
    /// known at run time: the roofline of the per-layer breakdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<crate::roofline::Peak>,
    /// The kernel variant of every layer and phase that has a choice of variants (convolutions
    /// and fully connected layers on wgpu), keyed `"<layer> <phase>"`, e.g.
    /// `"conv2 grad_input" -> "gemm_64x64x16_4x4"`, or on the cuda backend what ran them
    /// (`cudnn_implicit_precomp_gemm`, `cublas`); recorded with or without `--layers`, so that
    /// `compare` can say when a change of time came with a change of kernel.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub kernels: std::collections::BTreeMap<String, String>,
    /// Samples in each round, in measurement order; they add up to every phase's (and
    /// layer's) sample count. A round is one warm-up and its samples, and the rounds of a sweep
    /// are interleaved across its benchmarks, so drift during the run touches every benchmark
    /// alike. Empty in records from before rounds: all samples are one round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<usize>,
    /// Rounds of each run, oldest first, when the result gathers several runs (a baseline keeps
    /// the last few blessed runs, see [`BenchmarkResult::append_run`]). Empty: one run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<usize>,
}

/// The sum of round or run sizes, saturating: a record's sizes are read from a file, and one
/// that overflows is a record [`RunRecord::validate`] refuses (its sizes cannot add up to a
/// sample count), not a panic or a wrapped sum that happens to.
fn total(sizes: &[usize]) -> usize {
    sizes.iter().fold(0, |sum, &size| sum.saturating_add(size))
}

impl BenchmarkResult {
    /// The id of a benchmark.
    pub fn make_id(model: &str, stage: Stage, batch: usize, precision: Precision, backend: &str) -> String {
        format!("{model}/{}/b{batch}/{precision}/{backend}", stage.as_str())
    }

    /// The phase's result, if measured.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// Samples per round ([`BenchmarkResult::rounds`], or one round of every sample).
    pub fn round_sizes(&self) -> Vec<usize> {
        if self.rounds.is_empty() {
            vec![self.phases.first().map_or(0, |p| p.samples_ns.len())]
        } else {
            self.rounds.clone()
        }
    }

    /// Rounds per run ([`BenchmarkResult::runs`], or one run of every round).
    pub fn run_sizes(&self) -> Vec<usize> {
        if self.runs.is_empty() {
            vec![self.round_sizes().len()]
        } else {
            self.runs.clone()
        }
    }

    /// The median of each round of `phase`, in order (empty when the phase was not measured).
    pub fn round_medians(&self, phase: Phase) -> Vec<f64> {
        let Some(result) = self.phase(phase) else {
            return Vec::new();
        };
        let mut start = 0usize;
        let mut medians = Vec::new();
        for size in self.round_sizes() {
            let end = start.saturating_add(size).min(result.samples_ns.len());
            if let Some(summary) = Summary::of(&result.samples_ns[start..end]) {
                medians.push(summary.median_ns);
            }
            start = end;
        }
        medians
    }

    /// The median of the samples of each run of `phase`, oldest first (one value when the result
    /// holds one run; empty when the phase was not measured). In a baseline these are the
    /// blessed runs it keeps, whose spread is the drift between runs that `compare` measures.
    pub fn run_medians(&self, phase: Phase) -> Vec<f64> {
        let Some(result) = self.phase(phase) else {
            return Vec::new();
        };
        let rounds = self.round_sizes();
        let mut round_start = 0usize;
        let mut sample_start = 0usize;
        let mut medians = Vec::new();
        for run_rounds in self.run_sizes() {
            let round_end = round_start.saturating_add(run_rounds).min(rounds.len());
            let samples = total(&rounds[round_start..round_end]);
            let sample_end = sample_start.saturating_add(samples).min(result.samples_ns.len());
            if let Some(summary) = Summary::of(&result.samples_ns[sample_start..sample_end]) {
                medians.push(summary.median_ns);
            }
            round_start = round_end;
            sample_start = sample_end;
        }
        medians
    }

    /// The median of the samples of `phase` in the last run (the newest blessed run of a
    /// baseline; the whole result when it holds one run).
    pub fn last_run_median(&self, phase: Phase) -> Option<f64> {
        let samples = &self.phase(phase)?.samples_ns;
        let rounds = self.round_sizes();
        let last_rounds = self
            .run_sizes()
            .last()
            .copied()
            .unwrap_or(rounds.len())
            .min(rounds.len());
        let last_samples = total(&rounds[rounds.len() - last_rounds..]);
        Summary::of(&samples[samples.len().saturating_sub(last_samples)..]).map(|s| s.median_ns)
    }

    /// Adds the samples of `round`, another round of the same benchmark, as a new round.
    pub fn append_round(&mut self, round: BenchmarkResult) {
        let mut rounds = self.round_sizes();
        rounds.extend(round.round_sizes());
        let mut runs = self.run_sizes();
        if let Some(last) = runs.last_mut() {
            *last = last.saturating_add(round.round_sizes().len());
        }
        self.append_samples(round);
        self.rounds = rounds;
        self.runs = if runs.len() > 1 { runs } else { Vec::new() };
    }

    /// Adds the rounds of `run`, a later run of the same benchmark, as a new run, keeping the
    /// last `keep_runs` runs (at least one): how a baseline becomes a short history of blessed
    /// runs, from which `compare` learns how much runs differ. The newest run's metadata
    /// (adapter, kernels, memory) wins.
    pub fn append_run(&mut self, run: BenchmarkResult, keep_runs: usize) {
        let mut rounds = self.round_sizes();
        let mut runs = self.run_sizes();
        rounds.extend(run.round_sizes());
        runs.extend(run.run_sizes());
        let meta = BenchmarkResult {
            phases: Vec::new(),
            layers: Vec::new(),
            ..run.clone()
        };
        self.append_samples(run);
        let drop_runs = runs.len().saturating_sub(keep_runs.max(1));
        let drop_rounds = total(&runs[..drop_runs]).min(rounds.len());
        let drop_samples = total(&rounds[..drop_rounds]);
        for phase in &mut self.phases {
            phase.samples_ns.drain(..drop_samples.min(phase.samples_ns.len()));
            phase.summary = Summary::of(&phase.samples_ns).unwrap_or(phase.summary);
        }
        for layer in &mut self.layers {
            layer.samples_ns.drain(..drop_samples.min(layer.samples_ns.len()));
            layer.summary = Summary::of(&layer.samples_ns).unwrap_or(layer.summary);
        }
        // A layer measured only in the runs dropped has nothing left to show.
        self.layers.retain(|layer| !layer.samples_ns.is_empty());
        let (phases, layers) = (std::mem::take(&mut self.phases), std::mem::take(&mut self.layers));
        *self = BenchmarkResult {
            phases,
            layers,
            rounds: rounds[drop_rounds..].to_vec(),
            runs: runs[drop_runs..].to_vec(),
            ..meta
        };
        if self.runs.len() == 1 {
            self.runs.clear();
        }
    }

    /// Whether this (history) result already holds `run`: from the start of one of its runs,
    /// the same rounds and the same samples of every phase, so blessing `run` again would
    /// repeat it (blessing a record twice, whichever run it became, must not count it twice).
    pub fn contains_run(&self, run: &BenchmarkResult) -> bool {
        let rounds = self.round_sizes();
        let theirs = run.round_sizes();
        let len = total(&theirs);
        let mut round_start = 0usize;
        let mut sample_start = 0usize;
        for size in self.run_sizes() {
            if rounds.get(round_start..round_start + theirs.len()) == Some(theirs.as_slice())
                && run.phases.iter().all(|p| {
                    self.phase(p.phase).is_some_and(|mine| {
                        mine.samples_ns
                            .get(sample_start..sample_start.saturating_add(len))
                            == Some(p.samples_ns.as_slice())
                    })
                })
            {
                return true;
            }
            let end = round_start.saturating_add(size).min(rounds.len());
            sample_start = sample_start.saturating_add(total(&rounds[round_start.min(end)..end]));
            round_start = end;
        }
        false
    }

    /// Appends the phase and layer samples of `other` to those of `self` and recomputes the
    /// summaries (phases or layers only in `other` are added).
    fn append_samples(&mut self, other: BenchmarkResult) {
        for phase in other.phases {
            match self.phases.iter_mut().find(|p| p.phase == phase.phase) {
                Some(mine) => {
                    mine.samples_ns.extend(phase.samples_ns);
                    mine.summary = Summary::of(&mine.samples_ns).unwrap_or(mine.summary);
                }
                None => self.phases.push(phase),
            }
        }
        for layer in other.layers {
            match self
                .layers
                .iter_mut()
                .find(|l| l.layer == layer.layer && l.phase == layer.phase)
            {
                Some(mine) => {
                    mine.samples_ns.extend(layer.samples_ns);
                    mine.summary = Summary::of(&mine.samples_ns).unwrap_or(mine.summary);
                }
                None => self.layers.push(layer),
            }
        }
    }

    /// Images per second at the median total time.
    pub fn images_per_sec(&self) -> Option<f64> {
        let total = self.phase(Phase::Total)?.summary.median_ns;
        (total > 0.0).then(|| self.batch as f64 * 1e9 / total)
    }

    /// Achieved GFLOP/s of the iteration at the median total time.
    pub fn gflops_per_sec(&self) -> Option<f64> {
        let total = self.phase(Phase::Total)?.summary.median_ns;
        (total > 0.0).then(|| self.iteration_flops as f64 / total)
    }
}

/// The machine a run happened on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Host {
    /// Operating system (`linux`, `macos`, `windows`).
    pub os: String,
    /// CPU architecture (`x86_64`, `aarch64`).
    pub arch: String,
    /// Logical CPUs.
    pub cpus: usize,
}

impl Host {
    /// The machine this process runs on.
    pub fn current() -> Self {
        Self {
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// The measurement settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Timed iterations per benchmark.
    pub samples: usize,
    /// Minimum warm-up iterations.
    pub warmup_iterations: usize,
    /// Minimum warm-up duration (ms).
    pub warmup_min_ms: u64,
    /// Whether each benchmark was verified against the CPU reference first.
    pub verify: bool,
    /// Whether the first layer's input gradient was computed.
    pub data_grad: bool,
    /// Whether per-layer timings were recorded.
    pub layers: bool,
    /// Rounds per benchmark (each re-warmed, interleaved across the sweep); written only when
    /// above 1, so records from before rounds read and write back unchanged.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub rounds: usize,
    /// The WGSL the wgpu benchmarks ran when it was not the embedded set: where it came from
    /// and its digest (see [`crate::kernels::shader_set::ShaderSet::digest`]), e.g.
    /// `shaders of ./shaders, digest 1a2b3c4d5e6f7a8b`. Absent for the embedded shaders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaders: Option<String>,
    /// The user's kernels declared in the workspace (each a variant `user:NAME`), with the
    /// digest of each source: a change of numbers can be traced to a change of kernel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<UserKernelRecord>,
}

/// A user kernel as a record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserKernelRecord {
    /// Its variant id, `user:NAME`.
    pub id: String,
    /// The op it implements.
    pub op: String,
    /// Its source file.
    pub source: String,
    /// 16 hex digits of FNV-1a over its source and configuration.
    pub digest: String,
}

const fn one() -> usize {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)]
const fn is_one(value: &usize) -> bool {
    *value == 1
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            samples: 10,
            warmup_iterations: 3,
            warmup_min_ms: 200,
            verify: true,
            data_grad: false,
            layers: false,
            rounds: 1,
            shaders: None,
            kernels: Vec::new(),
        }
    }
}

/// The result of one `cargo convbench run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Format version, [`FORMAT_VERSION`] when written by this build.
    pub format_version: u32,
    /// convbench version that wrote the record.
    pub convbench_version: String,
    /// Unix time (seconds) when the run started.
    pub created_unix_s: u64,
    /// Git commit of the benchmarked workspace, when known.
    #[serde(default)]
    pub git_commit: Option<String>,
    /// Whether the workspace had uncommitted changes, when known.
    #[serde(default)]
    pub git_dirty: Option<bool>,
    /// Machine the run happened on.
    #[serde(default)]
    pub host: Host,
    /// How the run was configured.
    #[serde(default)]
    pub settings: RunSettings,
    /// The benchmarks.
    pub benchmarks: Vec<BenchmarkResult>,
    /// `false` when the run was interrupted (SIGINT, SIGTERM) before every selected benchmark
    /// was measured: the record holds the ones that finished, and a gate judging it fails.
    /// Written only when `false`; records without it are complete.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub complete: bool,
}

const fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)]
const fn is_true(value: &bool) -> bool {
    *value
}

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not JSON, or not a record.
    #[error("{origin} is not a convbench record: {source}")]
    Parse {
        /// File or stream the record came from.
        origin: String,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// JSON, but not an object (an array, a string, a number...).
    #[error(
        "{origin} is not a convbench record: it is a JSON {found}, not an object; pass a file \
         written by `cargo convbench run --out`"
    )]
    NotAnObject {
        /// File or stream the record came from.
        origin: String,
        /// What the JSON is.
        found: &'static str,
    },
    /// Written by a newer convbench.
    #[error(
        "{origin} has record format version {found}, newer than the {supported} this convbench reads; \
         upgrade convbench (`cargo install cargo-convbench`)"
    )]
    FutureVersion {
        /// File or stream the record came from.
        origin: String,
        /// Version in the file.
        found: u32,
        /// Newest version this build reads.
        supported: u32,
    },
    /// A record file that could not be read (the path is a file, but reading it failed).
    #[error("cannot read record {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: std::path::PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A record with no benchmark, given to be judged.
    #[error(
        "{origin} holds no benchmarks, so there is nothing to judge; run some with \
         `cargo convbench run --out FILE`"
    )]
    NoBenchmarks {
        /// The record, e.g. `the record to bless`.
        origin: String,
    },
    /// A record whose benchmarks contradict themselves (a sample of 0 ns, rounds that do not add
    /// up, an id or phase twice): edited or broken, not measured.
    #[error(
        "{origin} cannot be judged: {}; re-run the benchmarks rather than editing a record",
        problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Unjudgeable {
        /// The record, e.g. `the record to bless`.
        origin: String,
        /// Every offender, in the record's order (ids repeated last).
        problems: Vec<RecordProblem>,
    },
}

/// Why a record cannot be judged ([`RecordError::Unjudgeable`] lists every one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    /// A phase with a sample of zero nanoseconds: no op runs in no time.
    #[error("{id} {} has a sample of 0 ns", phase.as_str())]
    ZeroSample {
        /// The benchmark id.
        id: String,
        /// The phase.
        phase: Phase,
    },
    /// A phase without a single sample: nothing was measured, whatever its summary says.
    #[error("{id} {} has no samples", phase.as_str())]
    NoSamples {
        /// The benchmark id.
        id: String,
        /// The phase.
        phase: Phase,
    },
    /// A benchmark without a single phase.
    #[error("{id} has no phases")]
    NoPhases {
        /// The benchmark id.
        id: String,
    },
    /// A benchmark whose runs' round counts do not sum to its rounds.
    #[error("{id}: its runs do not add up to its rounds")]
    RunsNotRounds {
        /// The benchmark id.
        id: String,
    },
    /// A benchmark whose rounds' sizes do not sum to the samples of every phase.
    #[error("{id}: its rounds do not add up to the samples of every phase")]
    RoundsNotSamples {
        /// The benchmark id.
        id: String,
    },
    /// A phase a benchmark holds more than once.
    #[error("{id} has phase {} {count} times", phase.as_str())]
    PhaseRepeated {
        /// The benchmark id.
        id: String,
        /// The phase.
        phase: Phase,
        /// How often it appears.
        count: usize,
    },
    /// A benchmark whose id is not the one its fields make: the record was edited by hand, and
    /// a report, a chart or a baseline would show one benchmark under another's name.
    #[error("{id}: its model, stage, batch, precision and backend make the id {fields}")]
    IdDisagrees {
        /// The benchmark id.
        id: String,
        /// The id its fields make ([`BenchmarkResult::make_id`]).
        fields: String,
    },
    /// A benchmark of batch 0: nothing was run.
    #[error("{id} has batch 0")]
    ZeroBatch {
        /// The benchmark id.
        id: String,
    },
    /// A layer's breakdown a benchmark holds more than once in one phase: a table would show it
    /// twice and a pivot add the two.
    #[error("{id} has layer {layer} {} {count} times", phase.as_str())]
    LayerRepeated {
        /// The benchmark id.
        id: String,
        /// The layer's name.
        layer: String,
        /// The phase.
        phase: Phase,
        /// How often it appears.
        count: usize,
    },
    /// A benchmark id the record holds more than once.
    #[error("benchmark {id} appears {count} times")]
    BenchmarkRepeated {
        /// The benchmark id.
        id: String,
        /// How often it appears.
        count: usize,
    },
}

impl RunRecord {
    /// An empty record stamped with this build's version and the current time.
    pub fn new(git_commit: Option<String>) -> Self {
        let created_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            format_version: FORMAT_VERSION,
            convbench_version: env!("CARGO_PKG_VERSION").to_string(),
            created_unix_s,
            git_commit,
            git_dirty: None,
            host: Host::current(),
            settings: RunSettings::default(),
            benchmarks: Vec::new(),
            complete: true,
        }
    }

    /// Reads a record file, with a clear error for a missing, corrupt or future-version file.
    pub fn read(path: &std::path::Path) -> crate::Result<Self> {
        let text =
            crate::fs::read_text(path, crate::fs::MAX_RECORD_FILE_BYTES).map_err(|error| match error {
                crate::Error::Io { source, .. } => RecordError::Unreadable {
                    path: path.to_path_buf(),
                    source,
                }
                .into(),
                other => other,
            })?;
        Ok(Self::from_json(&text, &path.display().to_string())?)
    }

    /// Parses a record, checking its version first so a future format fails clearly; the
    /// summaries are derived from the samples.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, RecordError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            format_version: u32,
        }
        let parse = |source| RecordError::Parse {
            origin: origin.to_string(),
            source,
        };
        let found = match text.trim_start().chars().next() {
            Some('[') => Some("array"),
            Some('"') => Some("string"),
            Some('-' | '0'..='9') => Some("number"),
            Some('t' | 'f') => Some("boolean"),
            Some('n') => Some("null"),
            _ => None,
        };
        if let Some(found) = found
            && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
        {
            return Err(RecordError::NotAnObject {
                origin: origin.to_string(),
                found,
            });
        }
        let version: VersionOnly = serde_json::from_str(text).map_err(parse)?;
        if version.format_version > FORMAT_VERSION {
            return Err(RecordError::FutureVersion {
                origin: origin.to_string(),
                found: version.format_version,
                supported: FORMAT_VERSION,
            });
        }
        let mut record: Self = serde_json::from_str(text).map_err(parse)?;
        record.derive_summaries();
        Ok(record)
    }

    /// Replaces every stored summary by the one its raw samples give (a phase without samples
    /// keeps its own, and [`RunRecord::validate`] refuses it; a layer without samples is dropped,
    /// as a claim no sample backs): the samples are the record's one truth, so `report`, `plot`,
    /// `compare` and `baseline update` all see the same numbers, even in a record whose summary
    /// was edited or written by a buggy tool.
    fn derive_summaries(&mut self) {
        for benchmark in &mut self.benchmarks {
            for phase in &mut benchmark.phases {
                phase.summary = Summary::of(&phase.samples_ns).unwrap_or(phase.summary);
            }
            benchmark.layers.retain(|layer| !layer.samples_ns.is_empty());
            for layer in &mut benchmark.layers {
                layer.summary = Summary::of(&layer.samples_ns).unwrap_or(layer.summary);
            }
        }
    }

    /// Checks that the record can be judged: it holds at least one benchmark, every benchmark's
    /// id is the one its fields make and its batch is not 0, no benchmark id appears twice, no
    /// layer twice in a phase, every benchmark has phases, no phase twice within a benchmark, every
    /// phase has samples and none of zero nanoseconds (no op runs in no time: such a record was
    /// not measured). `origin` names the record in the error, which lists every offender.
    pub fn validate(&self, origin: &str) -> Result<(), RecordError> {
        if self.benchmarks.is_empty() {
            return Err(RecordError::NoBenchmarks {
                origin: origin.to_string(),
            });
        }
        let mut problems = Vec::new();
        let mut ids = std::collections::BTreeMap::<&str, usize>::new();
        for benchmark in &self.benchmarks {
            *ids.entry(benchmark.id.as_str()).or_default() += 1;
            let fields = BenchmarkResult::make_id(
                &benchmark.model,
                benchmark.stage,
                benchmark.batch,
                benchmark.precision,
                &benchmark.backend,
            );
            if fields != benchmark.id {
                problems.push(RecordProblem::IdDisagrees {
                    id: benchmark.id.clone(),
                    fields,
                });
            }
            if benchmark.batch == 0 {
                problems.push(RecordProblem::ZeroBatch {
                    id: benchmark.id.clone(),
                });
            }
            let mut phases = std::collections::BTreeMap::<Phase, usize>::new();
            if benchmark.phases.is_empty() {
                problems.push(RecordProblem::NoPhases {
                    id: benchmark.id.clone(),
                });
            }
            for phase in &benchmark.phases {
                *phases.entry(phase.phase).or_default() += 1;
                if phase.samples_ns.is_empty() {
                    problems.push(RecordProblem::NoSamples {
                        id: benchmark.id.clone(),
                        phase: phase.phase,
                    });
                }
                if phase.samples_ns.contains(&0) {
                    problems.push(RecordProblem::ZeroSample {
                        id: benchmark.id.clone(),
                        phase: phase.phase,
                    });
                }
            }
            let rounds = benchmark.round_sizes();
            if total(&benchmark.run_sizes()) != rounds.len() {
                problems.push(RecordProblem::RunsNotRounds {
                    id: benchmark.id.clone(),
                });
            }
            let samples = total(&rounds);
            if benchmark.phases.iter().any(|p| p.samples_ns.len() != samples) {
                problems.push(RecordProblem::RoundsNotSamples {
                    id: benchmark.id.clone(),
                });
            }
            for (phase, count) in phases.into_iter().filter(|(_, count)| *count > 1) {
                problems.push(RecordProblem::PhaseRepeated {
                    id: benchmark.id.clone(),
                    phase,
                    count,
                });
            }
            let mut layers = std::collections::BTreeMap::<(&str, Phase), usize>::new();
            for layer in &benchmark.layers {
                *layers.entry((layer.layer.as_str(), layer.phase)).or_default() += 1;
            }
            for ((layer, phase), count) in layers.into_iter().filter(|(_, count)| *count > 1) {
                problems.push(RecordProblem::LayerRepeated {
                    id: benchmark.id.clone(),
                    layer: layer.to_string(),
                    phase,
                    count,
                });
            }
        }
        for (id, count) in ids.into_iter().filter(|(_, count)| *count > 1) {
            problems.push(RecordProblem::BenchmarkRepeated {
                id: id.to_string(),
                count,
            });
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(RecordError::Unjudgeable {
            origin: origin.to_string(),
            problems,
        })
    }

    /// Pretty JSON with a trailing newline (stable diffs in baselines).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a RunRecord always serialises to JSON");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{benchmark, phase, record};
    use super::*;

    #[test]
    fn a_record_that_cannot_be_judged_lists_every_offender() {
        let empty = record(Vec::new())
            .validate("the record")
            .expect_err("no benchmarks");
        assert!(matches!(&empty, RecordError::NoBenchmarks { origin } if origin == "the record"));
        assert_eq!(
            empty.to_string(),
            "the record holds no benchmarks, so there is nothing to judge; run some with `cargo \
             convbench run --out FILE`"
        );

        let zero = benchmark("a/train/b1/f32/wgpu", vec![phase(Phase::Total, vec![5, 0, 7])]);
        let twice = benchmark("b/train/b1/f32/wgpu", vec![phase(Phase::Total, vec![5, 6, 7])]);
        let error = record(vec![zero, twice.clone(), twice])
            .validate("the record")
            .expect_err("a zero sample and an id twice");
        let RecordError::Unjudgeable { origin, problems } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(origin, "the record");
        assert_eq!(
            problems,
            &[
                RecordProblem::ZeroSample {
                    id: "a/train/b1/f32/wgpu".into(),
                    phase: Phase::Total,
                },
                RecordProblem::BenchmarkRepeated {
                    id: "b/train/b1/f32/wgpu".into(),
                    count: 2,
                },
            ]
        );
        assert_eq!(
            error.to_string(),
            "the record cannot be judged: a/train/b1/f32/wgpu total has a sample of 0 ns; benchmark \
             b/train/b1/f32/wgpu appears 2 times; re-run the benchmarks rather than editing a record"
        );
        assert_eq!(crate::Error::from(error).kind(), crate::ErrorKind::InvalidInput);

        // A summary without samples is a claim, not a measurement.
        let hollow = benchmark("c/train/b1/f32/wgpu", vec![phase(Phase::Total, Vec::new())]);
        let bare = benchmark("d/train/b1/f32/wgpu", Vec::new());
        let error = record(vec![hollow, bare])
            .validate("the record")
            .expect_err("no samples, no phases");
        let RecordError::Unjudgeable { problems, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(
            problems,
            &[
                RecordProblem::NoSamples {
                    id: "c/train/b1/f32/wgpu".into(),
                    phase: Phase::Total,
                },
                RecordProblem::NoPhases {
                    id: "d/train/b1/f32/wgpu".into(),
                },
            ]
        );

        // Fields edited apart from the id: a report would show one benchmark under another's name.
        let zero_batch = BenchmarkResult {
            batch: 0,
            ..benchmark("e/train/b1/f32/wgpu", vec![phase(Phase::Total, vec![5])])
        };
        let other_stage = BenchmarkResult {
            stage: Stage::Eval,
            ..benchmark("f/train/b1/f32/wgpu", vec![phase(Phase::Total, vec![5])])
        };
        let error = record(vec![zero_batch, other_stage])
            .validate("the record")
            .expect_err("fields that contradict the id");
        assert_eq!(
            error.to_string(),
            "the record cannot be judged: e/train/b1/f32/wgpu: its model, stage, batch, precision \
             and backend make the id e/train/b0/f32/wgpu; e/train/b1/f32/wgpu has batch 0; \
             f/train/b1/f32/wgpu: its model, stage, batch, precision and backend make the id \
             f/eval/b1/f32/wgpu; re-run the benchmarks rather than editing a record"
        );
    }

    /// Sizes and layers read from a hostile file: rounds or runs whose sum overflows are refused
    /// (not a panic, nor a wrapped sum that adds up), a layer twice in a phase is refused, and a
    /// layer without samples is dropped on load rather than shown with its stored summary.
    #[test]
    fn overflowing_sizes_and_repeated_or_hollow_layers_are_refused_or_dropped() {
        let samples = vec![5, 6, 7, 8];
        let layer = |name: &str, samples_ns: Vec<u64>| LayerResult {
            layer: name.to_string(),
            op: "conv2d".to_string(),
            phase: Phase::Forward,
            summary: Summary::of(&samples_ns).unwrap_or(Summary {
                median_ns: 1e9,
                mean_ns: 1e9,
                min_ns: 1e9,
                max_ns: 1e9,
                stddev_ns: 0.0,
            }),
            samples_ns,
            flops: 0,
            variant: "direct".to_string(),
            bytes: 0,
        };
        for (rounds, runs) in [
            (vec![usize::MAX, 5], Vec::new()),
            (vec![2, 2], vec![usize::MAX, 3]),
            (vec![usize::MAX, usize::MAX, 6], Vec::new()),
        ] {
            let wrapped = BenchmarkResult {
                rounds: rounds.clone(),
                runs: runs.clone(),
                ..benchmark("a/train/b1/f32/wgpu", vec![phase(Phase::Total, samples.clone())])
            };
            // Every reader of sizes gives an answer; validation says the record cannot be judged.
            let _ = (
                wrapped.round_medians(Phase::Total),
                wrapped.run_medians(Phase::Total),
            );
            let _ = (
                wrapped.last_run_median(Phase::Total),
                wrapped.contains_run(&wrapped),
            );
            let error = record(vec![wrapped])
                .validate("the record")
                .expect_err("sizes that overflow");
            assert!(
                error.to_string().contains("do not add up"),
                "{rounds:?} {runs:?}: {error}"
            );
        }

        let mut twice = benchmark("b/eval/b1/f32/wgpu", vec![phase(Phase::Total, samples.clone())]);
        twice.layers = vec![layer("conv1", samples.clone()), layer("conv1", samples.clone())];
        let error = record(vec![twice])
            .validate("the record")
            .expect_err("a layer twice");
        assert!(
            error
                .to_string()
                .contains("b/eval/b1/f32/wgpu has layer conv1 forward 2 times"),
            "{error}"
        );

        let mut hollow = benchmark("c/eval/b1/f32/wgpu", vec![phase(Phase::Total, samples.clone())]);
        hollow.layers = vec![layer("conv1", Vec::new()), layer("conv2", samples)];
        let read = RunRecord::from_json(&record(vec![hollow]).to_json(), "r.json").expect("read");
        let names: Vec<&str> = read.benchmarks[0]
            .layers
            .iter()
            .map(|l| l.layer.as_str())
            .collect();
        assert_eq!(names, ["conv2"]);
        read.validate("r.json").expect("a valid record");
    }

    #[test]
    fn json_that_is_not_an_object_says_what_it_is() {
        for (text, found) in [
            ("[{}]", "array"),
            (" \"x\"", "string"),
            ("7", "number"),
            ("null", "null"),
        ] {
            let error = RunRecord::from_json(text, "r.json").expect_err(text);
            assert!(
                matches!(&error, RecordError::NotAnObject { found: f, .. } if *f == found),
                "{text}: {error:?}"
            );
            assert!(error.to_string().contains("not an object"), "{error}");
        }
        // Broken JSON keeps the parser's line and column.
        let broken = RunRecord::from_json("[{", "r.json").expect_err("truncated");
        assert!(matches!(broken, RecordError::Parse { .. }), "{broken:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_record_that_cannot_be_read_is_input_naming_the_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("record.json");
        std::fs::write(&path, "{}").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        if std::fs::read(&path).is_ok() {
            return; // root reads anything; nothing to test here
        }
        let error = RunRecord::read(&path).expect_err("unreadable");
        assert!(
            matches!(&error, crate::Error::Record(RecordError::Unreadable { path: p, .. }) if p == &path),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    }
}
