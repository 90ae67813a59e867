//! Interleaved A/B of two revisions in one process on one device (`ab`, and `ci`'s A/B mode).
//!
//! Side A is the base revision, side B the working tree. Both run the same plan on the same
//! inputs, both are verified against the f64 reference first (an op whose code is the same on
//! both sides, by [`WgpuBackend::kernel_digests`], once, on the head), and they alternate iteration by
//! iteration in ABBA order ([`super::AbSession`]); the verdict rests on the pairs' ratios
//! ([`crate::compare::ab`]), so the machine's drift cancels.
//!
//! What differs between the sides is read from git at the base revision: convbench's WGSL
//! under `shaders/` when the workspace is convbench's own repository (elsewhere both sides run
//! the embedded shaders of this build), and the workspace's own kernels and networks: the base
//! revision's tree is exported to a temporary folder and its configuration read there, so side
//! A runs the kernel sources and network definitions as committed at the base. A user kernel or
//! a network that exists on one side only, or a network whose layers changed, is reported as
//! such ([`Verdict::New`] with the reason), never compared with itself.
//!
//! # Adaptive pairs
//!
//! Pairs are taken in batches and judged at fixed looks (after [`FIRST_LOOK`] pairs, then
//! doubling, up to `pairs`); a benchmark stops at the first look whose verdict is settled
//! (regression, improvement, or no change within the threshold), or when its share of the time
//! budget is spent. Repeated looks would inflate the false-alarm rate of a test run at each
//! one, so every look tests at `alpha / K`, where `K` is the number of looks the schedule can
//! make: by the union bound the chance of any false alarm over all looks stays below `alpha`
//! (a Bonferroni group-sequential design: conservative, but valid for any stopping rule and
//! simple to state). A clear change settles at the first looks; a borderline one uses the
//! budget.

use super::plan::Plan;
use super::select::{KernelChoice, has_variants};
use super::sweep::{KernelRequest, Selection, is_real_gpu};
use super::{AbError, Event, Interrupt, RunOptions, verification_plan, verify_plan};
use super::{AbSession, Target};
use crate::backend::Backend;
use crate::backend::wgpu::WgpuBackend;
use crate::baseline::GitBaselineStore;
use crate::compare::ab::{AbInput, AbRow, judge_pairs};
use crate::compare::{CompareConfig, Verdict};
use crate::config::Workspace;
use crate::kernels::Variant;
use crate::kernels::shader_set::ShaderSet;
use crate::kernels::user::{KernelSet, UserKernel, UserRef};
use crate::model::Network;
use crate::results::{BenchmarkResult, Phase, Stage, TimingMethod};
use crate::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What an A/B run asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct AbRequest {
    /// The base revision; `None`: the merge-base of HEAD with the default branch (with
    /// `github_base_ref` when set).
    pub base: Option<String>,
    /// `GITHUB_BASE_REF` in Actions: the branch a pull request merges into.
    pub github_base_ref: Option<String>,
    /// The head's shaders: a folder with every file of convbench's `shaders/`. Default: the
    /// workspace's `shaders/`, whose committed state at the base is side A.
    pub shaders: Option<PathBuf>,
    /// Side B as committed at this revision instead of the working tree (`bisect`).
    pub head: Option<String>,
    /// What to benchmark.
    pub selection: Selection,
    /// The wgpu adapter.
    pub adapter: Option<String>,
    /// The most pairs of interleaved iterations per benchmark; fewer when the verdict settles
    /// sooner (see the module docs).
    pub pairs: usize,
    /// Pairs before the first look ([`FIRST_LOOK`] by default; at least the judge's fewest
    /// pairs, at most `pairs`); equal to `pairs` or more, every benchmark takes exactly `pairs`
    /// pairs (one look, no early stop).
    pub first_look: usize,
    /// Time for the whole comparison (verification and warm-up included); `None`: no limit but
    /// `pairs`.
    pub budget: Option<Duration>,
    /// Minimum warm-up iterations per side; `None`: [`WARMUP_ITERATIONS`].
    pub warmup_iterations: Option<usize>,
    /// Minimum warm-up time (ms); `None`: [`WARMUP_MIN_MS`].
    pub warmup_min_ms: Option<u64>,
    /// Which kernels run (the same choice on both sides).
    pub kernels: KernelRequest,
    /// Time every op and judge each layer too (attribution; adds a synchronisation per op on
    /// both sides alike).
    pub layers: bool,
    /// Time (and verify) a benchmark whose every op runs the same code on both sides too, and
    /// judge it like any other: an A/A run, which measures this machine's false alarms. Without
    /// it such a benchmark is [`AbRow::same_code`], not timed.
    pub time_identical: bool,
}

impl Default for AbRequest {
    /// The working tree against the merge-base, nothing selected, every count at its default:
    /// commands fill in what their flags say with struct update syntax.
    fn default() -> Self {
        Self {
            base: None,
            github_base_ref: None,
            shaders: None,
            head: None,
            selection: Selection::default(),
            adapter: None,
            pairs: DEFAULT_PAIRS,
            first_look: FIRST_LOOK,
            budget: None,
            warmup_iterations: None,
            warmup_min_ms: None,
            kernels: KernelRequest::Auto,
            layers: false,
            time_identical: false,
        }
    }
}

impl AbRequest {
    /// `GITHUB_BASE_REF` of the environment, unset when empty (as on a push): the branch a
    /// pull request merges into, which the base defaults to in Actions.
    pub fn github_base_ref_from_env() -> Option<String> {
        std::env::var("GITHUB_BASE_REF").ok().filter(|r| !r.is_empty())
    }
}

/// One benchmark's pairs, however they were measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// Benchmark id.
    pub id: String,
    /// Base times (ns), pair by pair.
    pub base_ns: Vec<u64>,
    /// Head times (ns), pair by pair.
    pub head_ns: Vec<u64>,
    /// Whether the base ran first in each pair.
    pub base_first: Vec<bool>,
    /// Each phase's pairs, in plan order (empty in process mode, which sees totals only).
    pub phases: Vec<PhasePairs>,
    /// Each layer's pairs with `--layers`, in plan order; else empty.
    pub layers: Vec<LayerPairs>,
}

/// One layer's pairs of a benchmark: the sum of its ops in every phase.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct LayerPairs {
    /// The layer's name.
    pub layer: String,
    /// Base times (ns), pair by pair.
    pub base_ns: Vec<u64>,
    /// Head times (ns), pair by pair.
    pub head_ns: Vec<u64>,
}

/// One phase's pairs of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PhasePairs {
    /// The phase.
    pub phase: Phase,
    /// Base times (ns), pair by pair.
    pub base_ns: Vec<u64>,
    /// Head times (ns), pair by pair.
    pub head_ns: Vec<u64>,
}

/// Progress of an A/B run.
#[derive(Debug)]
pub enum AbEvent<'a> {
    /// The benchmarks are chosen: this many will be measured.
    Planned {
        /// Benchmarks to measure.
        benchmarks: usize,
    },
    /// Something the user should know.
    Notice(String),
    /// Progress of one benchmark (`label` says which, and which side while verifying).
    Benchmark {
        /// The benchmark and step.
        label: &'a str,
        /// What happened.
        event: Event,
    },
    /// One benchmark's pairs are measured.
    Finished,
}

/// The `format` field of an A/B outcome file ([`AbOutcome::to_json`]).
pub const AB_FORMAT: &str = "convbench-ab-1";

/// What an A/B comparison measured and decided.
#[derive(Debug, Clone)]
pub struct AbOutcome {
    /// Which mode, which sides, which files differ.
    pub description: String,
    /// One verdict per benchmark.
    pub rows: Vec<AbRow>,
    /// The adapter, e.g. `llvmpipe (vulkan)`.
    pub adapter_label: String,
    /// Every raw pair.
    pub measured: Vec<Measured>,
    /// How many looks the schedule could make: each verdict was tested at `alpha / looks`.
    pub looks: usize,
    /// Whether the run was interrupted: its benchmarks hold fewer pairs than planned, and some
    /// may be missing, so a gate treats it as an incomplete run.
    pub interrupted: bool,
    /// How the pairs were timed, when known (shader mode; a file says so since `ab-1` files
    /// began to carry it).
    pub timing: Option<TimingMethod>,
}

/// An A/B outcome file as written by [`AbOutcome::to_json`].
#[derive(serde::Deserialize)]
struct OutcomeFile {
    format: String,
    mode: String,
    adapter: String,
    looks: usize,
    #[serde(default)]
    interrupted: bool,
    #[serde(default)]
    timing: Option<TimingMethod>,
    rows: Vec<AbRow>,
    samples: BTreeMap<String, PairsFile>,
}

#[derive(serde::Deserialize)]
struct PairsFile {
    base_ns: Vec<u64>,
    head_ns: Vec<u64>,
    base_first: Vec<bool>,
    #[serde(default)]
    phases: Vec<PhasePairs>,
    #[serde(default)]
    layers: Vec<LayerPairs>,
}

impl AbOutcome {
    /// Judges `measured` with `config`'s thresholds, at `config.alpha / looks` (see the module
    /// docs).
    pub fn judge(
        description: String,
        adapter_label: String,
        measured: Vec<Measured>,
        config: &CompareConfig,
        looks: usize,
    ) -> Self {
        let looks = looks.max(1);
        let alpha = config.alpha / looks as f64;
        // Two families, each under its own false-discovery control: the whole iterations (what
        // the gate decides on, exactly as without attribution) and the phases and layers (where
        // a change came from), so attributing a change never weakens the verdict on the total.
        let totals: Vec<AbInput<'_>> = measured
            .iter()
            .map(|m| AbInput {
                benchmark_id: &m.id,
                base_ns: &m.base_ns,
                head_ns: &m.head_ns,
                threshold: config.threshold_for(&m.id),
            })
            .collect();
        let mut phase_of = Vec::new();
        let mut phase_inputs: Vec<AbInput<'_>> = Vec::new();
        for (index, m) in measured.iter().enumerate() {
            for pairs in m.phases.iter().filter(|p| p.phase != Phase::Total) {
                phase_inputs.push(AbInput {
                    benchmark_id: &m.id,
                    base_ns: &pairs.base_ns,
                    head_ns: &pairs.head_ns,
                    threshold: config.threshold_for(&m.id),
                });
                phase_of.push((index, pairs.phase, None));
            }
            for pairs in &m.layers {
                phase_inputs.push(AbInput {
                    benchmark_id: &m.id,
                    base_ns: &pairs.base_ns,
                    head_ns: &pairs.head_ns,
                    threshold: config.threshold_for(&m.id),
                });
                phase_of.push((index, Phase::Total, Some(pairs.layer.clone())));
            }
        }
        let total_rows = judge_pairs(&totals, alpha);
        let mut phase_rows = judge_pairs(&phase_inputs, alpha)
            .into_iter()
            .zip(phase_of)
            .peekable();
        let mut rows = Vec::new();
        for (index, total) in total_rows.into_iter().enumerate() {
            rows.push(total);
            while let Some((mut row, (_, phase, layer))) = phase_rows.next_if(|(_, (of, _, _))| *of == index)
            {
                row.phase = phase;
                row.layer = layer;
                rows.push(row);
            }
        }
        Self {
            description,
            rows,
            adapter_label,
            measured,
            looks,
            interrupted: false,
            timing: None,
        }
    }

    /// Whether a row is a regression.
    pub fn has_regression(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Regression)
    }

    /// The verdicts and every raw pair, as JSON (`format` is [`AB_FORMAT`]).
    pub fn to_json(&self, alpha: f64) -> String {
        let samples: BTreeMap<&str, serde_json::Value> = self
            .measured
            .iter()
            .map(|m| {
                (
                    m.id.as_str(),
                    serde_json::json!({"base_ns": m.base_ns, "head_ns": m.head_ns, "base_first": m.base_first, "phases": m.phases, "layers": m.layers}),
                )
            })
            .collect();
        let json = serde_json::json!({
            "format": AB_FORMAT,
            "mode": self.description,
            "adapter": self.adapter_label,
            "alpha": alpha,
            "looks": self.looks,
            "interrupted": self.interrupted,
            "timing": self.timing,
            "rows": self.rows,
            "samples": samples,
        });
        let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Whether `text` is an A/B outcome file rather than a run record.
    pub fn is_outcome_json(text: &str) -> bool {
        #[derive(serde::Deserialize)]
        struct Format {
            format: Option<String>,
        }
        serde_json::from_str::<Format>(text).is_ok_and(|f| f.format.as_deref() == Some(AB_FORMAT))
    }

    /// Reads an A/B outcome file and judges its raw pairs again with `config` (the verdicts a
    /// file claims are never trusted: a pull request's run wrote it). Rows the file reports as
    /// not compared (no pairs) are kept as they are, as new.
    pub fn from_json(text: &str, origin: &str, config: &CompareConfig) -> Result<Self> {
        let file: OutcomeFile = serde_json::from_str(text).map_err(|source| AbError::NotOutcomeFile {
            origin: origin.to_string(),
            source,
        })?;
        if file.format != AB_FORMAT {
            return Err(AbError::OutcomeFormat {
                origin: origin.to_string(),
                format: file.format,
            }
            .into());
        }
        let measured: Vec<Measured> = file
            .samples
            .into_iter()
            .map(|(id, pairs)| Measured {
                id,
                base_ns: pairs.base_ns,
                head_ns: pairs.head_ns,
                base_first: pairs.base_first,
                phases: pairs.phases,
                layers: pairs.layers,
            })
            .collect();
        // A row the run reports as the same code on both sides is its word, like every pair in
        // the file: the run that measured could as well have written equal pairs.
        let not_compared: Vec<AbRow> = file
            .rows
            .into_iter()
            .filter(|row| {
                row.pairs == 0
                    && row.phase == Phase::Total
                    && !measured.iter().any(|m| m.id == row.benchmark_id)
            })
            .map(|row| {
                let threshold = config.threshold_for(&row.benchmark_id);
                if row.same_code {
                    AbRow::same_code(&row.benchmark_id, threshold)
                } else {
                    AbRow::not_compared(&row.benchmark_id, threshold, row.evidence)
                }
            })
            .collect();
        // The description is the run's word, not convbench's: say so, and keep it short.
        let description = format!(
            "as the run that measured describes itself: {}",
            file.mode.chars().take(300).collect::<String>()
        );
        let mut outcome = Self::judge(description, file.adapter, measured, config, file.looks);
        outcome.rows.extend(not_compared);
        outcome.interrupted = file.interrupted;
        outcome.timing = file.timing;
        Ok(outcome)
    }
}

/// The two shader sets and how they differ: the base revision's `shaders/` against the working
/// tree's (or `request.shaders`) in convbench's repository; the embedded set on both sides in any
/// other workspace.
fn shader_sides(request: &AbRequest, workspace: &Workspace) -> Result<(ShaderSet, ShaderSet, String)> {
    let repo_dir = workspace.root.join("shaders");
    if request.shaders.is_none() && !ShaderSet::is_shader_dir(&repo_dir) {
        if let Some(rev) = &request.base {
            // The shaders are the same on both sides here, but a base named on the command
            // line must exist: an A/B against a revision that is not there is no comparison.
            GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?
                .resolve_base_from(Some(rev), None)?;
        }
        let embedded = ShaderSet::embedded()?;
        return Ok((
            embedded.clone(),
            embedded,
            "convbench's embedded shaders on both sides".to_string(),
        ));
    }
    if let Some(head_rev) = &request.head {
        let base = ShaderSet::from_git(
            &repo_dir,
            request.base.as_deref(),
            request.github_base_ref.as_deref(),
        )?;
        let head = ShaderSet::from_git(&repo_dir, Some(head_rev), None)?;
        let changed = head.differing_files(&base);
        let description = format!(
            "{} (A) against {} (B); {}",
            base.describe(),
            head.describe(),
            if changed.is_empty() {
                "no shader differs".to_string()
            } else {
                format!("changed: {}", changed.join(", "))
            }
        );
        return Ok((base, head, description));
    }
    let dir = request.shaders.clone().unwrap_or_else(|| repo_dir.clone());
    // The folder given first: when both are missing, it is the one the user typed.
    for folder in [&dir, &repo_dir] {
        if !folder.is_dir() {
            return Err(AbError::ShadersNotAFolder {
                folder: folder.clone(),
            }
            .into());
        }
    }
    let head = ShaderSet::from_dir(&dir)?;
    let base = ShaderSet::from_git(
        &repo_dir,
        request.base.as_deref(),
        request.github_base_ref.as_deref(),
    )?;
    let changed = head.differing_files(&base);
    let description = format!(
        "{} (A) against the working tree's {} (B); {}",
        base.describe(),
        dir.display(),
        if changed.is_empty() {
            "no shader differs".to_string()
        } else {
            format!("changed: {}", changed.join(", "))
        }
    );
    Ok((base, head, description))
}

/// Pairs at the first look of the adaptive schedule.
pub const FIRST_LOOK: usize = 8;

/// Untimed iterations per side before the first pair, by default: one. Both sides were just
/// verified and loaded (their pipelines compiled), so what is left to warm is each side's first
/// touch of its buffers, which one iteration does. A slower drift (clocks, caches, the load of
/// a shared machine) hits both sides alike, because the pairs alternate ABBA and each verdict
/// is a statistic of the pairs' ratios; a fixed warm-up time, as `run` has (which times one
/// side and must wait the ramp out), would only lengthen every comparison. Measured in
/// `docs/ab-gate-trials.md`: with this warm-up, unchanged code failed no more often than with
/// three iterations and 200 ms.
pub const WARMUP_ITERATIONS: usize = 1;

/// Minimum warm-up time per comparison, by default: none (see [`WARMUP_ITERATIONS`]).
pub const WARMUP_MIN_MS: u64 = 0;

/// The looks of the schedule for at most `pairs` pairs, the first after `first` pairs, each
/// later one half as many pairs again (rounded up), and `pairs` itself: by default 8, 12, 18,
/// 27, 41, 62, 93, 140, 210, 240.
///
/// Why one and a half and not twice: a clear change settles at the first look or the next, so
/// the next look's distance is what such a change waits for. Looks twice as far apart (8, 16,
/// 32, ...; six looks to 240) made a 20% slowdown that missed the first look take 16 pairs,
/// about 0.4 s more than 12 on a loaded 2-core runner; the extra four looks cost each one its
/// share of alpha (alpha/10 instead of alpha/6), which moves the smallest change a look can
/// settle by a few percent of itself (`simulation_of_adaptive_looks`).
pub fn looks(first: usize, pairs: usize) -> Vec<usize> {
    let mut looks = Vec::new();
    let mut at = first.max(1);
    while at < pairs {
        looks.push(at);
        at = (at * 3).div_ceil(2).max(at + 1);
    }
    looks.push(pairs);
    looks
}

/// What the workspace declares at one revision: its user kernels (loaded and validated; their
/// names are the working tree's too) and its networks.
#[derive(Default)]
struct Declarations {
    kernels: BTreeMap<String, UserRef>,
    models: Vec<Network>,
}

/// Reads the workspace's configuration, kernels and networks as committed at `rev` (resolved
/// as the base is, see [`GitBaselineStore::resolve_base_from`]), from an export of its tree into
/// a temporary folder. A revision whose configuration or kernels do not load is reported in
/// `notices` and declares nothing (every kernel and network of the other side is then new).
fn declarations_at(
    workspace: &Workspace,
    rev: Option<&str>,
    github_base_ref: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<Declarations> {
    let store = GitBaselineStore::open(&workspace.root, &workspace.baseline_dir())?;
    let at = store.resolve_base_from(rev, github_base_ref)?;
    let folder = tempfile::tempdir().map_err(|source| AbError::DeclarationsFolder {
        revision: at.description.clone(),
        source,
    })?;
    store.export_at(&at, folder.path())?;
    let canonical = |path: &std::path::Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let relative = canonical(&workspace.root)
        .strip_prefix(canonical(store.workdir()))
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let root = folder.path().join(relative);
    let manifest = root.join("Cargo.toml");
    let loaded = crate::config::load_in(&root, manifest.is_file().then_some(manifest.as_path()));
    let at_workspace = match loaded {
        Ok(w) => w,
        Err(e) => {
            notices.push(format!(
                "the configuration at {} does not load ({e}); its kernels and networks count as new",
                at.description
            ));
            return Ok(Declarations::default());
        }
    };
    let mut declarations = Declarations {
        models: at_workspace.config.model.clone(),
        ..Declarations::default()
    };
    for declared in &at_workspace.kernels {
        match UserKernel::load(declared) {
            Ok(kernel) => {
                // Leaked like every loaded kernel: kernels live as long as the run.
                let kernel: &'static UserKernel = Box::leak(Box::new(kernel));
                declarations.kernels.insert(kernel.name.clone(), UserRef(kernel));
            }
            Err(e) => notices.push(format!(
                "kernel `{}` at {} does not load ({e}); it counts as new",
                declared.name, at.description
            )),
        }
    }
    Ok(declarations)
}

/// The working tree's side: its `kernels` and configured networks.
fn working_tree_declarations(workspace: &Workspace, kernels: &KernelSet) -> Declarations {
    Declarations {
        kernels: kernels.iter().map(|k| (k.name.clone(), UserRef(k))).collect(),
        models: workspace.config.model.clone(),
    }
}

/// The kernels whose source or configuration differs between the sides.
fn changed_kernels(base: &Declarations, head: &Declarations) -> Vec<String> {
    base.kernels
        .iter()
        .filter(|(name, kernel)| {
            head.kernels
                .get(*name)
                .is_some_and(|h| h.0.digest != kernel.0.digest)
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Why `target` cannot be compared between the sides, when it cannot: a network of the
/// workspace that is absent from one side or differs between them, or a forced user kernel
/// absent from one side.
fn not_comparable(
    target: &Target,
    base: &Declarations,
    head: &Declarations,
    kernels: &KernelChoice,
) -> Option<String> {
    if let Target::Model(net) = target {
        let at_base = base.models.iter().find(|m| m.name == net.name);
        let at_head = head.models.iter().find(|m| m.name == net.name);
        match (at_base, at_head) {
            (None, None) => {}
            (None, Some(_)) => {
                return Some(format!(
                    "network `{}` is not at the base revision: not compared",
                    net.name
                ));
            }
            (Some(_), None) => {
                return Some(format!(
                    "network `{}` is not on the head's side: not compared",
                    net.name
                ));
            }
            (Some(a), Some(b)) if a != b => {
                return Some(format!(
                    "network `{}` changed between the revisions: not compared",
                    net.name
                ));
            }
            (Some(_), Some(_)) => {}
        }
    }
    if let KernelChoice::Force(Variant::User(kernel)) = kernels {
        for (side, declared) in [("the base revision", base), ("the head's side", head)] {
            if !declared.kernels.contains_key(&kernel.0.name) {
                return Some(format!("kernel {} is not on {side}: not compared", kernel.0.id()));
            }
        }
    }
    None
}

/// Verifies and measures every selected benchmark on both sides, interleaved, taking pairs
/// until each verdict settles (see the module docs), and judges them.
///
/// An interruption while pairs are taken ends the run with what finished: the outcome judges
/// the pairs measured so far (its description says it was interrupted) and the error comes
/// beside it, as [`super::sweep::Sweep::run`] returns a partial record.
pub fn run(
    request: &AbRequest,
    workspace: &Workspace,
    config: &CompareConfig,
    interrupt: Interrupt,
    on_event: &mut dyn FnMut(AbEvent<'_>),
) -> Result<(AbOutcome, Option<Error>)> {
    if request.pairs < MIN_PAIRS_PER_BENCHMARK {
        return Err(AbError::TooFewPairs { pairs: request.pairs }.into());
    }
    let started = Instant::now();
    // Opening the device (loading the driver, tens of milliseconds on a software adapter) overlaps
    // reading the base revision's declarations (a tree export and `cargo metadata`).
    std::thread::scope(|scope| {
        let open = || WgpuBackend::open(request.adapter.as_deref());
        // Where the system refuses a thread, the device opens when it is needed instead.
        let mut opening = std::thread::Builder::new().spawn_scoped(scope, open).ok();
        let device = || match opening.take() {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(crate::DeviceError::OpenPanicked.into())),
            None => open(),
        };
        let outcome = run_opened(request, workspace, config, interrupt, on_event, started, device);
        // An error before the device was needed leaves the opening to finish here, its result
        // (a panic included) dropped: the first error is the one reported.
        if let Some(handle) = opening {
            let _ = handle.join();
        }
        outcome
    })
}

/// [`run`] once the device is opening: `device` waits for it.
fn run_opened(
    request: &AbRequest,
    workspace: &Workspace,
    config: &CompareConfig,
    interrupt: Interrupt,
    on_event: &mut dyn FnMut(AbEvent<'_>),
    started: Instant,
    device: impl FnOnce() -> Result<WgpuBackend>,
) -> Result<(AbOutcome, Option<Error>)> {
    let kernel_set = workspace.kernel_set()?;
    let (base_set, head_set, mut description) = shader_sides(request, workspace)?;
    let mut notices = Vec::new();
    let declares = !workspace.kernels.is_empty() || !workspace.config.model.is_empty();
    let base_declared = if declares || request.head.is_some() {
        declarations_at(
            workspace,
            request.base.as_deref(),
            request.github_base_ref.as_deref(),
            &mut notices,
        )?
    } else {
        Declarations::default()
    };
    let head_declared = match &request.head {
        Some(rev) => declarations_at(workspace, Some(rev), None, &mut notices)?,
        None => working_tree_declarations(workspace, &kernel_set),
    };
    let changed = changed_kernels(&base_declared, &head_declared);
    if !changed.is_empty() {
        description.push_str(&format!("; user kernels changed: {}", changed.join(", ")));
    }
    let device = device()?;
    let base = device.with_shaders(base_set);
    let head = device.with_shaders(head_set);
    let backends: Vec<Box<dyn Backend>> = vec![Box::new(device.with_shaders(ShaderSet::embedded()?))];
    let jobs = request
        .selection
        .jobs(&workspace.config, is_real_gpu(backends[0].as_ref()), &mut notices)?;
    let kernels = KernelChoice::resolve(
        &request.kernels,
        &kernel_set,
        &workspace.target_dir,
        &backends,
        &mut notices,
    )?;
    super::sweep::check_forced_variant_runs(&kernels, &jobs, false)?;
    // A kernel of your own forced on the working tree is checked on random shapes first, as
    // `run` checks it: the networks alone exercise few of the shapes a kernel must handle.
    if request.head.is_none() {
        super::sweep::verify_forced_user_kernel(&kernels, &backends, &jobs, &mut notices)?;
    }
    debug_assert!(has_variants(backends[0].kind()));
    let base_kernels = KernelChoice::Mapped {
        inner: Box::new(kernels.clone()),
        kernels: base_declared.kernels.clone(),
    };
    let (kernels, head_kernels) = match &request.head {
        Some(_) => {
            let mapped = KernelChoice::Mapped {
                inner: Box::new(kernels.clone()),
                kernels: head_declared.kernels.clone(),
            };
            (kernels, mapped)
        }
        None => (kernels.clone(), kernels),
    };
    let options = RunOptions {
        // Each job's own stage replaces it ([`RunOptions::at`]).
        stage: Stage::Train,
        samples: request.pairs,
        warmup_iterations: request.warmup_iterations.unwrap_or(WARMUP_ITERATIONS),
        warmup_min: Duration::from_millis(request.warmup_min_ms.unwrap_or(WARMUP_MIN_MS)),
        verify: true,
        data_grad: false,
        layers: request.layers,
        kernels: head_kernels,
        interrupt,
    };
    let base_options = RunOptions {
        kernels: base_kernels.clone(),
        ..options.clone()
    };
    on_event(AbEvent::Planned {
        benchmarks: jobs.len(),
    });
    for notice in notices {
        on_event(AbEvent::Notice(notice));
    }
    // The first look comes after at least the judge's fewest pairs and at most after the last.
    let first_look = request.first_look.clamp(MIN_PAIRS_PER_BENCHMARK, request.pairs);
    let schedule = looks(first_look, request.pairs);
    // A benchmark stops early only on evidence that the final judgment (Benjamini-Hochberg at
    // alpha / K over every benchmark's total) is sure to accept: any p-value at most
    // alpha / (K * benchmarks) is a discovery there, whatever the other benchmarks show.
    let look_alpha = config.alpha / (schedule.len() * jobs.len().max(1)) as f64;
    let mut measured = Vec::new();
    let mut skipped: Vec<AbRow> = Vec::new();
    let mut stopped = None;
    // The benchmark an interruption cut short between two looks: its pairs are kept, but it
    // never reached the look that would have settled it, so it gets no settled verdict.
    let mut cut_short: Option<(String, usize)> = None;
    for (index, job) in jobs.iter().enumerate() {
        let (options, base_options) = (options.at(job.stage), base_options.at(job.stage));
        let id = BenchmarkResult::make_id(&job.target.name(), job.stage, job.batch, job.precision, "wgpu");
        if let Some(reason) = not_comparable(&job.target, &base_declared, &head_declared, &kernels) {
            skipped.push(AbRow::not_compared(&id, config.threshold_for(&id), reason));
            on_event(AbEvent::Finished);
            continue;
        }
        // The same code on both sides: nothing to verify twice, nothing a verdict could be about.
        if !request.time_identical
            && runs_the_same_code(
                &base,
                &head,
                &job.target,
                job.batch,
                job.precision,
                &base_options,
                &options,
            )?
        {
            skipped.push(AbRow::same_code(&id, config.threshold_for(&id)));
            on_event(AbEvent::Finished);
            continue;
        }
        // The head is verified in full; the base only where its code differs from the head's
        // (an op running the same code on the same device with the same kinds of inputs passes
        // or fails alike, and verifying it twice is most of an unchanged benchmark's fixed cost).
        let head_plan = verification_plan(&head, &job.target, job.batch, job.precision, &options)
            .map_err(|error| error.context(side_name("head")))?;
        let base_plan = verification_plan(&base, &job.target, job.batch, job.precision, &base_options)
            .map_err(|error| error.context(side_name("base")))?;
        let same_code = same_code(&base, &base_plan, &head, &head_plan)?;
        // The head first: a wrong kernel under review is the error. A base that is wrong where
        // the head is right (the change fixes it) has no time worth comparing with: the row is
        // not compared and says why, so a fix can pass the gate.
        let mut base_wrong = None;
        for (side, backend, plan, side_options, skip) in [
            ("head", &head, &head_plan, &options, &[][..]),
            ("base", &base, &base_plan, &base_options, same_code.as_slice()),
        ] {
            let label = format!("{id} ({side})");
            let verified = verify_plan(
                backend,
                &job.target,
                plan,
                &|index| skip.get(index).copied().unwrap_or(false),
                side_options,
                &mut |event| on_event(AbEvent::Benchmark { label: &label, event }),
            );
            match verified {
                Err(error) if side == "base" && error.kind() == crate::ErrorKind::Verification => {
                    base_wrong = Some(error);
                }
                other => {
                    other.map_err(|error| error.context(side_name(side)))?;
                }
            }
        }
        if let Some(error) = base_wrong {
            // What disagreed, without the advice meant for the author of a wrong head.
            let what = error.to_string();
            let first = what.lines().next().unwrap_or_default();
            let first = first.split("; fix the kernel").next().unwrap_or(first);
            skipped.push(AbRow::not_compared(
                &id,
                config.threshold_for(&id),
                format!(
                    "the base revision disagrees with the f64 reference where the head agrees, \
                     so its time is nothing to compare with: {first}"
                ),
            ));
            on_event(AbEvent::Finished);
            continue;
        }
        let benchmark_started = Instant::now();
        let share = request.budget.map(|budget| {
            let left = budget.saturating_sub(started.elapsed());
            left / (jobs.len() - index) as u32
        });
        let mut forward = |event| on_event(AbEvent::Benchmark { label: &id, event });
        let mut session = match AbSession::start(
            &base,
            &head,
            &base_kernels,
            &job.target,
            job.batch,
            job.precision,
            &options,
            &mut forward,
        ) {
            Ok(session) => session,
            Err(error @ Error::Interrupted(_)) => {
                stopped = Some(error);
                break;
            }
            Err(error) => return Err(error),
        };
        let threshold = config.threshold_for(&id);
        for &look in &schedule {
            let taken = session.samples.base_ns.len();
            if let Some(share) = share
                && taken > 0
            {
                // Stop before a batch that would overrun this benchmark's share of the budget.
                let per_pair = benchmark_started.elapsed() / taken as u32;
                if benchmark_started.elapsed() + per_pair * (look - taken) as u32 > share {
                    break;
                }
            }
            match session.take(look - taken, request.pairs, &mut forward) {
                Ok(()) => {}
                Err(error @ Error::Interrupted(_)) => {
                    cut_short = Some((id.clone(), session.samples.base_ns.len()));
                    stopped = Some(error);
                    break;
                }
                Err(error) => return Err(error),
            }
            let row = judge_pairs(
                &[AbInput {
                    benchmark_id: &id,
                    base_ns: &session.samples.base_ns,
                    head_ns: &session.samples.head_ns,
                    threshold,
                }],
                look_alpha,
            );
            if row[0].verdict != Verdict::Inconclusive {
                break;
            }
        }
        on_event(AbEvent::Finished);
        let samples = session.samples;
        measured.push(Measured {
            id,
            base_ns: samples.base_ns,
            head_ns: samples.head_ns,
            base_first: samples.base_first,
            phases: samples
                .phases
                .into_iter()
                .map(|(phase, base_ns, head_ns)| PhasePairs {
                    phase,
                    base_ns,
                    head_ns,
                })
                .collect(),
            layers: samples
                .layers
                .into_iter()
                .map(|(layer, base_ns, head_ns)| LayerPairs {
                    layer,
                    base_ns,
                    head_ns,
                })
                .collect(),
        });
        if stopped.is_some() {
            break;
        }
    }
    if stopped.is_some() {
        // A benchmark interrupted before its first judgeable look has no verdict to keep.
        measured.retain(|m| m.base_ns.len() >= crate::compare::ab::MIN_PAIRS);
        description.push_str(&format!(
            "; interrupted after {} of {} benchmarks had pairs",
            measured.len(),
            jobs.len()
        ));
    }
    let adapter_label = device.gpu().summary().fingerprint.label();
    let mut outcome = AbOutcome::judge(description, adapter_label, measured, config, schedule.len());
    if let Some((id, pairs)) = cut_short {
        for row in outcome.rows.iter_mut().filter(|row| row.benchmark_id == id) {
            row.verdict = Verdict::Inconclusive;
            row.evidence = format!(
                "interrupted after {pairs} pairs, before the look that would have settled it; {}",
                row.evidence
            );
        }
    }
    outcome.rows.extend(skipped);
    outcome.interrupted = stopped.is_some();
    outcome.timing = Some(head.timing_method());
    Ok((outcome, stopped))
}

/// Fewest pairs `--pairs` accepts: the judge needs [`crate::compare::ab::MIN_PAIRS`].
pub const MIN_PAIRS_PER_BENCHMARK: usize = crate::compare::ab::MIN_PAIRS;

/// The most pairs per benchmark by default.
pub const DEFAULT_PAIRS: usize = 240;

/// Whether every op of `target`'s timed program runs the same code on `base` with
/// `base_options`' kernels as on `head` with `options`' ([`WgpuBackend::kernel_digests`]).
fn runs_the_same_code(
    base: &WgpuBackend,
    head: &WgpuBackend,
    target: &Target,
    batch: usize,
    precision: crate::model::Precision,
    base_options: &RunOptions,
    options: &RunOptions,
) -> Result<bool> {
    let plan_options = super::plan::PlanOptions {
        stage: options.stage,
        data_grad: options.data_grad,
        max_tensor_bytes: head.max_tensor_bytes().min(base.max_tensor_bytes()),
    };
    let plan = target.plan(batch, precision, plan_options)?;
    let (mut base_program, mut head_program) = (plan.program.clone(), plan.program);
    super::select::choose(
        &mut base_program,
        &base_options.kernels,
        crate::kernels::variant::DeviceClass::of(base.adapter()),
    );
    super::select::choose(
        &mut head_program,
        &options.kernels,
        crate::kernels::variant::DeviceClass::of(head.adapter()),
    );
    let same_ops = base_program.ops.len() == head_program.ops.len()
        && base_program
            .ops
            .iter()
            .zip(&head_program.ops)
            .all(|(b, h)| b.op == h.op);
    Ok(same_ops && base.kernel_digests(&base_program)? == head.kernel_digests(&head_program)?)
}

/// For each op of the base's verification plan, whether it runs the same code as the head's
/// (both plans are of one target, so their ops correspond one to one).
fn same_code(
    base: &WgpuBackend,
    base_plan: &Plan,
    head: &WgpuBackend,
    head_plan: &Plan,
) -> Result<Vec<bool>> {
    let (base_digests, head_digests) = (
        base.kernel_digests(&base_plan.program)?,
        head.kernel_digests(&head_plan.program)?,
    );
    if base_digests.len() != head_digests.len() {
        return Ok(vec![false; base_digests.len()]);
    }
    Ok(base_digests
        .iter()
        .zip(&head_digests)
        .zip(base_plan.program.ops.iter().zip(&head_plan.program.ops))
        .map(|((b, h), (base_op, head_op))| b == h && base_op.op == head_op.op)
        .collect())
}

/// The side an error of verification came from, as its message names it.
fn side_name(side: &str) -> &'static str {
    if side == "base" {
        "the base revision's shaders and kernels"
    } else {
        "the working tree's shaders and kernels"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight pairs of a clear slowdown, and six noisy phases beside it.
    fn measured() -> Measured {
        let base: Vec<u64> = (0..8).map(|i| 20_000_000 + i * 300_000).collect();
        // Ratios from 1.55 to 2.2: clear, but with the spread of a loaded machine (p = 3.8e-4,
        // between alpha / K / 7 and alpha / K for the default ten looks).
        let ratios = [155, 220, 165, 210, 155, 215, 175, 195];
        let head: Vec<u64> = base.iter().zip(ratios).map(|(b, r)| b * r / 100).collect();
        let noisy = |seed: u64| -> Vec<u64> {
            (0..8)
                .map(|i| 1_000_000 + ((i * 7919 + seed * 104_729) % 9) * 90_000)
                .collect()
        };
        let phases = [
            Phase::Forward,
            Phase::LossForward,
            Phase::LossBackward,
            Phase::GradInput,
            Phase::GradParams,
            Phase::Update,
        ]
        .into_iter()
        .enumerate()
        .map(|(k, phase)| PhasePairs {
            phase,
            base_ns: noisy(k as u64),
            head_ns: noisy(k as u64 + 11),
        })
        .collect();
        Measured {
            id: "lenet/train/b1/f32/wgpu".into(),
            base_ns: base,
            head_ns: head,
            base_first: (0..8).map(|i| i % 2 == 0).collect(),
            phases,
            layers: Vec::new(),
        }
    }

    /// A benchmark that stopped early on a regression stays one in the final judgment: the
    /// phases are a family of their own and cannot dilute the total's false-discovery control.
    #[test]
    fn attribution_never_weakens_the_verdict_on_the_total() {
        let config = CompareConfig::default();
        let schedule = looks(FIRST_LOOK, DEFAULT_PAIRS);
        let m = measured();
        let alone = judge_pairs(
            &[AbInput {
                benchmark_id: &m.id,
                base_ns: &m.base_ns,
                head_ns: &m.head_ns,
                threshold: config.threshold_for(&m.id),
            }],
            config.alpha / schedule.len() as f64,
        );
        assert_eq!(alone[0].verdict, Verdict::Regression, "{:?}", alone[0]);
        // All seven rows in one family would have needed p <= alpha / K / 7 for the total.
        assert!(
            alone[0].p_value > config.alpha / schedule.len() as f64 / 7.0,
            "{:?}",
            alone[0]
        );
        let outcome = AbOutcome::judge(String::new(), String::new(), vec![m], &config, schedule.len());
        assert_eq!(outcome.rows.len(), 7, "the total and six phases");
        assert_eq!(outcome.rows[0].phase, Phase::Total);
        assert_eq!(
            outcome.rows[0].verdict,
            Verdict::Regression,
            "{:?}",
            outcome.rows[0]
        );
    }

    /// With `--layers`, each layer is judged in the attribution family: a layer slowed by half
    /// is a regression, an unchanged one is not, and both survive an outcome file.
    #[test]
    fn layers_are_judged_and_kept_in_the_outcome_file() {
        let config = CompareConfig::default();
        let mut m = measured();
        let steady: Vec<u64> = (0..8).map(|i| 500_000 + (i % 3) * 5_000).collect();
        m.layers = vec![
            LayerPairs {
                layer: "conv1".into(),
                base_ns: steady.clone(),
                head_ns: steady.iter().map(|t| t * 3 / 2).collect(),
            },
            LayerPairs {
                layer: "fc1".into(),
                base_ns: steady.clone(),
                head_ns: steady.iter().rev().copied().collect(),
            },
        ];
        let outcome = AbOutcome::judge(String::new(), String::new(), vec![m], &config, 1);
        let layer = |name: &str| {
            outcome
                .rows
                .iter()
                .find(|row| row.layer.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no row for {name}: {:?}", outcome.rows))
        };
        assert_eq!(
            layer("conv1").verdict,
            Verdict::Regression,
            "{:?}",
            layer("conv1")
        );
        assert_ne!(layer("fc1").verdict, Verdict::Regression, "{:?}", layer("fc1"));
        let again =
            AbOutcome::from_json(&outcome.to_json(config.alpha), "test", &config).expect("reads back");
        assert_eq!(again.rows.len(), outcome.rows.len());
        assert!(
            again
                .rows
                .iter()
                .any(|row| row.layer.as_deref() == Some("conv1") && row.verdict == Verdict::Regression)
        );
    }

    #[test]
    fn a_file_that_is_not_an_outcome_of_this_format_is_input_naming_it() {
        let config = CompareConfig::default();
        let ab_error = |text: &str| match AbOutcome::from_json(text, "ab.json", &config) {
            Err(Error::Ab(error)) => *error,
            Err(other) => panic!("not an A/B error: {other:?}"),
            Ok(_) => panic!("read as an outcome"),
        };
        let error = ab_error(
            r#"{"format": "convbench-ab-0", "mode": "", "adapter": "", "looks": 1, "rows": [], "samples": {}}"#,
        );
        assert!(
            matches!(&error, AbError::OutcomeFormat { origin, format } if origin == "ab.json" && format == "convbench-ab-0"),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert_eq!(
            error.to_string(),
            format!("ab.json has format `convbench-ab-0`; this convbench reads `{AB_FORMAT}`")
        );
        let error = ab_error("[]");
        assert!(matches!(&error, AbError::NotOutcomeFile { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("ab.json is not an A/B outcome file: "),
            "{error}"
        );
    }

    #[test]
    fn the_looks_grow_by_half_up_to_the_most_pairs() {
        assert_eq!(looks(FIRST_LOOK, 240), [8, 12, 18, 27, 41, 62, 93, 140, 210, 240]);
        assert_eq!(looks(FIRST_LOOK, 6), [6]);
        assert_eq!(looks(FIRST_LOOK, 8), [8]);
        assert_eq!(looks(60, 60), [60]);
        assert_eq!(looks(20, 100), [20, 30, 45, 68, 100]);
        assert_eq!(looks(1, 4), [1, 2, 3, 4]);
    }
}
