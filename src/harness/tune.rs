//! Autotuning: every kernel variant of each distinct (op, shape, precision) is verified against
//! the reference and timed alone; the fastest is cached per adapter in
//! `<target dir>/convbench/tune-<adapter slug>.json`, which `run` then uses.
//!
//! Each op is tuned in two one-op-per-variant programs whose ops all bind the same tensors:
//! one at the verification batch (the reference is computed once and every variant compared
//! with it), one at the benchmark's batch for timing. Pipelines are created when a program is
//! loaded, never inside a timed run. A variant is timed after warm-up as the median of a few
//! runs (GPU timestamps where the adapter has them); a variant whose first sample is many times
//! slower than the best median so far is not timed further (it cannot win).

use super::plan::PlanOptions;
use super::sweep::Job;
use super::{Target, VERIFY_BATCH, verify};
use crate::backend::Backend;
use crate::kernels::user::KernelSet;
use crate::kernels::variant::DeviceClass;
use crate::kernels::{Op, Variant};
use crate::model::Precision;
use crate::results::{AdapterFingerprint, Summary};
use crate::{Error, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The cache format this build writes and reads.
pub const TUNE_FORMAT_VERSION: u32 = 1;

const TUNE_CACHE: crate::cache::Kind = crate::cache::Kind {
    name: "tune cache",
    rebuild: "cargo convbench tune",
    version: TUNE_FORMAT_VERSION,
};

/// The winners of `tune` on one adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneCache {
    /// [`TUNE_FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The adapter the timings come from.
    pub adapter: AdapterFingerprint,
    /// Entries by [`TuneCache::key`].
    pub entries: BTreeMap<String, TuneEntry>,
}

/// The tuning outcome of one (op, shape, precision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneEntry {
    /// Op name, e.g. `conv2d_forward`.
    pub op: String,
    /// The op's shape ([`shape_key`]).
    pub shape: String,
    /// Storage precision.
    pub precision: Precision,
    /// Id of the fastest variant (an id this build no longer knows is ignored).
    pub winner: String,
    /// Median duration of each fully timed variant (ns), by id.
    pub median_ns: BTreeMap<String, f64>,
}

impl TuneCache {
    /// An empty cache for `adapter`.
    pub fn new(adapter: AdapterFingerprint) -> Self {
        Self {
            format_version: TUNE_FORMAT_VERSION,
            adapter,
            entries: BTreeMap::new(),
        }
    }

    /// Where the cache of the adapter with `slug` lives under a workspace's target directory.
    pub fn path(target_dir: &Path, slug: &str) -> PathBuf {
        target_dir.join("convbench").join(format!("tune-{slug}.json"))
    }

    /// Reads the cache at `path`; `None` when there is none.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        crate::cache::load(path, &TUNE_CACHE, |c: &Self| c.format_version)
    }

    /// Writes the cache to `path` atomically (a temporary file renamed over it), creating the
    /// folder.
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::cache::save(path, self, &TUNE_CACHE)
    }

    /// Adds `result` to the cache of `adapter` at `path`, under the cache's lock: the entries
    /// another `tune` wrote since this one started are kept (a cache of another adapter, or
    /// one that cannot be read, is started afresh). Returns the cache as written.
    pub fn insert_saved(path: &Path, adapter: &AdapterFingerprint, result: &TuneResult) -> Result<TuneCache> {
        crate::cache::update(
            path,
            &TUNE_CACHE,
            |c: &Self| c.format_version,
            |existing| {
                let mut cache = existing
                    .filter(|cache| &cache.adapter == adapter)
                    .unwrap_or_else(|| TuneCache::new(adapter.clone()));
                cache.insert(result);
                cache
            },
        )
    }

    /// Why the cache at `path` will be started afresh for `adapter`, if it will: it was tuned
    /// under another driver, or cannot be read.
    pub fn restart_notice(path: &Path, adapter: &AdapterFingerprint) -> Option<String> {
        match Self::load(path) {
            Ok(Some(cache)) if &cache.adapter != adapter => Some(format!(
                "{} was tuned on another driver; starting afresh",
                path.display()
            )),
            Ok(_) => None,
            Err(e) => Some(format!("{e}; starting afresh")),
        }
    }

    /// The key of `op` at `precision`: `<op name> <shape> <precision>`.
    pub fn key(op: &Op, precision: Precision) -> String {
        format!("{} {} {precision}", op.name(), shape_key(op))
    }

    /// The cached winner for `op` at `precision`, if it was tuned and its id is known: a
    /// built-in variant, or a kernel of `kernels`.
    pub fn winner(&self, op: &Op, precision: Precision, kernels: &KernelSet) -> Option<Variant> {
        let entry = self.entries.get(&Self::key(op, precision))?;
        Variant::parse_in(&entry.winner, kernels)
            .ok()
            .filter(|v| v.implements(op))
    }

    /// Records the outcome of tuning one op (replacing an older one); nothing when no variant
    /// passed.
    pub fn insert(&mut self, result: &TuneResult) {
        let Some(winner) = result.winner else { return };
        let op = &result.job.op;
        let median_ns = result
            .variants
            .iter()
            .filter_map(|v| match v.outcome {
                Outcome::Timed { median_ns, .. } => Some((v.variant.id(), median_ns)),
                _ => None,
            })
            .collect();
        self.entries.insert(
            Self::key(op, result.job.precision),
            TuneEntry {
                op: op.name().into(),
                shape: shape_key(op),
                precision: result.job.precision,
                winner: winner.id(),
                median_ns,
            },
        );
    }
}

/// A compact description of an op's shape, e.g. `1x64x64x64>128 k9x9 s1x1 p0x0 d1x1 g1 bias`
/// for a convolution (input NCHW, output channels, kernel, stride, padding, dilation, groups)
/// or `8x9216>4096 bias` for a fully connected layer (`[offset/stride]` for a column slice).
pub fn shape_key(op: &Op) -> String {
    match op {
        Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) => {
            let (c, s) = (&g.conv, &g.input);
            format!(
                "{}x{}x{}x{}>{} k{}x{} s{}x{} p{}x{} d{}x{} g{}{}",
                s.n,
                s.c,
                s.h,
                s.w,
                c.out_channels,
                c.kernel.0,
                c.kernel.1,
                c.stride.0,
                c.stride.1,
                c.padding.0,
                c.padding.1,
                c.dilation.0,
                c.dilation.1,
                c.groups,
                if c.bias { " bias" } else { "" }
            )
        }
        Op::LinearForward(g) | Op::LinearBackwardData(g) | Op::LinearBackwardParams(g) => {
            let slice = if g.is_slice() {
                format!(" [{}/{}]", g.y_offset, g.y_stride)
            } else {
                String::new()
            };
            format!(
                "{}x{}>{}{slice}{}",
                g.batch,
                g.in_features,
                g.out_features,
                if g.bias { " bias" } else { "" }
            )
        }
        other => format!("{other:?}"),
    }
}

/// One distinct op to tune.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneJob {
    /// The op at the benchmark's batch (what is timed and cached).
    pub op: Op,
    /// The same op at the verification batch.
    pub verify_op: Op,
    /// Storage precision.
    pub precision: Precision,
}

/// The distinct ops with variants of `target` at `batch` and `precision`, in plan order,
/// skipping those whose key is in `seen` (and adding the others to it).
pub fn tune_jobs(
    target: &Target,
    batch: usize,
    precision: Precision,
    options: PlanOptions,
    seen: &mut HashSet<String>,
) -> Result<Vec<TuneJob>> {
    let measured = target.plan(batch, precision, options)?.program;
    let verified = target.plan(batch.min(VERIFY_BATCH), precision, options)?.program;
    let paired = measured.ops.len() == verified.ops.len();
    let mut jobs = Vec::new();
    for (index, call) in measured.ops.iter().enumerate() {
        if !Variant::has_gemm(&call.op) || !seen.insert(TuneCache::key(&call.op, precision)) {
            continue;
        }
        let verify_op = match verified.ops.get(index) {
            Some(v) if paired && v.op.name() == call.op.name() => v.op.clone(),
            _ => call.op.clone(),
        };
        jobs.push(TuneJob {
            op: call.op.clone(),
            verify_op,
            precision,
        });
    }
    Ok(jobs)
}

/// The distinct ops with variants of every benchmark of `benchmarks` on `backend`, in order
/// ([`tune_jobs`] of each, planned at its stage, with the first layer's input gradient when
/// `data_grad`). A precision the adapter cannot run is an error naming it.
pub fn distinct_ops(backend: &dyn Backend, benchmarks: &[Job], data_grad: bool) -> Result<Vec<TuneJob>> {
    let mut seen = HashSet::new();
    let mut ops = Vec::new();
    for job in benchmarks {
        if !backend.supports(job.precision) {
            return Err(super::unsupported(backend, job.precision));
        }
        let options = PlanOptions {
            stage: job.stage,
            data_grad,
            max_tensor_bytes: backend.max_tensor_bytes(),
        };
        ops.extend(tune_jobs(
            &job.target,
            job.batch,
            job.precision,
            options,
            &mut seen,
        )?);
    }
    Ok(ops)
}

/// How variants are timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneOptions {
    /// Untimed runs of each variant before its samples (at least one: a pipeline's first
    /// dispatch can include one-time costs).
    pub warmup_iterations: usize,
    /// Timed runs of each variant; the median is compared.
    pub samples: usize,
    /// Verify each variant against the reference first (a failing one is not timed).
    pub verify: bool,
    /// A variant whose first sample is this many times slower than the best median so far is
    /// not timed further.
    pub prune_factor: f64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        Self {
            warmup_iterations: 1,
            samples: 5,
            verify: true,
            prune_factor: 3.0,
        }
    }
}

/// What happened to one variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Timed: the median and the raw samples (ns).
    Timed {
        /// Median (ns).
        median_ns: f64,
        /// Raw samples (ns).
        samples_ns: Vec<u64>,
    },
    /// Its first sample was too slow to win; not timed further.
    Pruned {
        /// Duration of the first sample (ns).
        first_ns: u64,
    },
    /// It disagrees with the reference (an error beyond its rounding bound): skipped.
    Failed {
        /// The worst ratio of error to bound (see [`verify`]).
        ratio: f64,
    },
}

/// One variant's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantResult {
    /// The variant.
    pub variant: Variant,
    /// What happened.
    pub outcome: Outcome,
}

/// The outcome of tuning one op.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneResult {
    /// The op.
    pub job: TuneJob,
    /// Every candidate, in the order tried.
    pub variants: Vec<VariantResult>,
    /// The fastest timed variant; `None` when every variant failed verification.
    pub winner: Option<Variant>,
}

/// Progress of [`tune_op`].
#[derive(Debug, Clone, PartialEq)]
pub enum TuneEvent {
    /// Verification of the variants started.
    Verifying,
    /// Timing of a variant started.
    Timing(Variant),
}

/// Progress of [`tune_all`].
#[derive(Debug, Clone, PartialEq)]
pub enum TuneProgress<'a> {
    /// Progress of one op, named by `label` (`[INDEX/COUNT] OP SHAPE PRECISION`).
    Op {
        /// The op.
        label: &'a str,
        /// What happened.
        event: TuneEvent,
    },
    /// A variant of the op `label` disagrees with the reference and was skipped.
    Rejected {
        /// The op.
        label: &'a str,
        /// The variant.
        variant: Variant,
        /// Its worst ratio of error to rounding bound.
        ratio: f64,
    },
}

/// [`tune_op`] for every op of `ops` in order (the user's `kernels` among the candidates), each
/// winner saved into the cache at `path` as soon as it is found ([`TuneCache::insert_saved`]), so
/// an interruption loses nothing finished. Returns the results of the ops tuned and, beside them, why the tuning did not
/// succeed: [`Error::Interrupted`] when `interrupt` was set before an op, or at the end a
/// [`Error::Verification`] naming the ops no variant of which agrees with the reference. An
/// error of the device or of the cache is the `Err`.
pub fn tune_all(
    backend: &dyn Backend,
    ops: &[TuneJob],
    kernels: &KernelSet,
    options: &TuneOptions,
    path: &Path,
    interrupt: &super::Interrupt,
    on_event: &mut dyn FnMut(TuneProgress<'_>),
) -> Result<(Vec<TuneResult>, Option<Error>)> {
    let adapter = backend.adapter().clone();
    let mut results = Vec::with_capacity(ops.len());
    let mut unverified = Vec::new();
    for (index, job) in ops.iter().enumerate() {
        let stop = super::Interrupted::Tuning {
            tuned: index,
            ops: ops.len(),
        };
        if let Err(e) = interrupt.check(&stop) {
            return Ok((results, Some(e)));
        }
        let label = format!(
            "[{}/{}] {} {} {}",
            index + 1,
            ops.len(),
            job.op.name(),
            shape_key(&job.op),
            job.precision
        );
        let result = match tune_op_until(backend, job, kernels, options, (interrupt, &stop), &mut |event| {
            on_event(TuneProgress::Op { label: &label, event })
        }) {
            Ok(result) => result,
            Err(e) if e.kind() == crate::ErrorKind::Interrupted => return Ok((results, Some(e))),
            Err(e) => return Err(e),
        };
        for v in &result.variants {
            if let Outcome::Failed { ratio } = v.outcome {
                on_event(TuneProgress::Rejected {
                    label: &label,
                    variant: v.variant,
                    ratio,
                });
            }
        }
        match result.winner {
            Some(_) => {
                TuneCache::insert_saved(path, &adapter, &result)?;
            }
            None => unverified.push(label),
        }
        results.push(result);
    }
    let failed = (!unverified.is_empty())
        .then(|| Error::from(super::VerificationError::NoVariantAgrees { ops: unverified }));
    Ok((results, failed))
}

/// The candidates of `op` in the order they are timed: the heuristic's choice first (a good
/// bar early prunes the slow ones), the other GEMM tiles, `direct` last (where it fits the
/// device: [`Variant::fits`]).
/// The user's `kernels` are candidates too, where they implement the op at the job's precision.
fn ordered_candidates(
    op: &Op,
    precision: Precision,
    kernels: &KernelSet,
    device: DeviceClass,
) -> Vec<Variant> {
    let first = Variant::heuristic_on(op, device);
    let mut candidates = vec![first];
    candidates.extend(
        Variant::candidates_in(op, kernels)
            .into_iter()
            .filter(|v| *v != first && *v != Variant::Direct && v.implements_at(op, precision)),
    );
    if first != Variant::Direct && Variant::Direct.fits(op, device) {
        candidates.push(Variant::Direct);
    }
    candidates
}

/// Verifies and times every variant of `job.op` on `backend`, convbench's and those of the
/// user's `kernels` that implement it.
pub fn tune_op(
    backend: &dyn Backend,
    job: &TuneJob,
    kernels: &KernelSet,
    options: &TuneOptions,
    on_event: &mut dyn FnMut(TuneEvent),
) -> Result<TuneResult> {
    tune_op_until(
        backend,
        job,
        kernels,
        options,
        (
            &super::Interrupt::default(),
            &super::Interrupted::Tuning { tuned: 0, ops: 1 },
        ),
        on_event,
    )
}

/// [`tune_op`], stopped before the next variant is timed when `interrupt` is set (an op of a
/// large network times a dozen variants for minutes on a software adapter): the `Err` is then
/// `stop` (which op of how many), and the op is not tuned.
fn tune_op_until(
    backend: &dyn Backend,
    job: &TuneJob,
    kernels: &KernelSet,
    options: &TuneOptions,
    (interrupt, stop): (&super::Interrupt, &super::Interrupted),
    on_event: &mut dyn FnMut(TuneEvent),
) -> Result<TuneResult> {
    // A variant with no timed run has no median to compare.
    if options.samples == 0 {
        return Err(crate::harness::SweepError::ZeroCount { flag: "--samples" }.into());
    }
    let seed: u64 = rand::rng().random();
    let mut rng = StdRng::seed_from_u64(seed);
    let device = DeviceClass::of(backend.adapter());
    let candidates = ordered_candidates(&job.op, job.precision, kernels, device);
    let mut variants = Vec::new();
    let mut passed = candidates.clone();
    if options.verify {
        on_event(TuneEvent::Verifying);
        let (program, mut loaded) = verify::load_variants(
            backend,
            &job.verify_op,
            job.precision,
            &candidates,
            Some(&job.op),
            &mut rng,
        )?;
        let expected = verify::reference_outputs(loaded.as_mut(), &program, 0)?;
        passed.clear();
        for (index, &variant) in candidates.iter().enumerate() {
            let check = verify::check_against(loaded.as_mut(), &program, index, &expected)?;
            if check.passed() {
                passed.push(variant);
            } else {
                variants.push(VariantResult {
                    variant,
                    outcome: Outcome::Failed { ratio: check.ratio },
                });
            }
        }
    }
    let (_, mut loaded) = verify::load_variants(backend, &job.op, job.precision, &passed, None, &mut rng)?;
    let mut best: Option<(Variant, f64)> = None;
    for (index, &variant) in passed.iter().enumerate() {
        interrupt.check(stop)?;
        on_event(TuneEvent::Timing(variant));
        for _ in 0..options.warmup_iterations.max(1) {
            loaded.run(index..index + 1, true)?;
        }
        let first_ns = loaded.run(index..index + 1, true)?.total_ns;
        if best.is_some_and(|(_, b)| first_ns as f64 > options.prune_factor * b) {
            variants.push(VariantResult {
                variant,
                outcome: Outcome::Pruned { first_ns },
            });
            continue;
        }
        let mut samples_ns = vec![first_ns];
        for _ in 1..options.samples {
            samples_ns.push(loaded.run(index..index + 1, true)?.total_ns);
        }
        let median_ns = Summary::of(&samples_ns).map_or(f64::INFINITY, |s| s.median_ns);
        if best.is_none_or(|(_, b)| median_ns < b) {
            best = Some((variant, median_ns));
        }
        variants.push(VariantResult {
            variant,
            outcome: Outcome::Timed {
                median_ns,
                samples_ns,
            },
        });
    }
    Ok(TuneResult {
        job: job.clone(),
        variants,
        winner: best.map(|(v, _)| v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_samples_is_input_before_any_variant_runs() {
        let target = Target::Model(crate::model::network("lenet").expect("lenet"));
        let options = PlanOptions {
            stage: crate::results::Stage::Eval,
            data_grad: false,
            max_tensor_bytes: u64::MAX,
        };
        let jobs = tune_jobs(&target, 1, Precision::F32, options, &mut HashSet::new()).expect("lenet plans");
        let job = jobs.first().expect("lenet has an op with variants");
        let no_samples = TuneOptions {
            samples: 0,
            ..TuneOptions::default()
        };
        let backend = crate::backend::cpu::CpuBackend::new();
        let error = tune_op(&backend, job, &KernelSet::default(), &no_samples, &mut |_| {
            unreachable!("no variant runs")
        })
        .expect_err("no samples");
        assert!(
            matches!(&error, Error::Sweep(e) if matches!(**e, crate::harness::SweepError::ZeroCount { flag: "--samples" })),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    }
}
