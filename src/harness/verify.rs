//! Verification of ops against the f64 reference, with the same rule everywhere (the op tests,
//! `tune`, `cargo convbench verify` and `cargo convbench run`).
//!
//! Each op is checked alone: its inputs are read back from the backend as they are, outputs
//! are poisoned with NaN, the op runs, and its outputs are compared with the reference computed
//! from those same inputs in f64. Errors therefore never accumulate across layers, and a
//! mismatch names the op that produced it.
//!
//! # The rule: a rounding-error bound per element
//! A result computed in floating point is only as accurate as the terms it was computed from
//! allow, not as accurate as the result is large: a sum that cancels to almost nothing (a batch
//! norm's `dgamma = sum(dy * x_hat)` over 12,544 terms in DenseNet) keeps the absolute error of
//! its terms. So each output element `i` is held to the classic bound
//!
//! ```text
//! |got_i - ref_i| <= STORAGE_FACTOR * u(precision) * stored_i
//!                  + ACCUMULATION_FACTOR * 2^-24 * sqrt(K) * magnitude_i
//!                  + (smallest_normal(precision) where |ref_i| < 2 * smallest_normal(precision))
//! ```
//!
//! - `magnitude_i` is the sum of the absolute values of the terms that make the element, and
//!   `K` the number of terms a reduction adds (`cin * kh * kw` for a convolution's output,
//!   `N * H * W` for a batch-norm statistic); both come from
//!   [`crate::kernels::conditioning`], beside the reference. Kernels accumulate in f32 (unit
//!   roundoff `2^-24`) at both precisions; `sqrt(K)` is the growth of rounding errors in random
//!   order (the worst case is `K`), measured to hold with a wide margin (see the README's table
//!   of worst ratios over the whole zoo).
//! - `stored_i` is what rounding to the storage format scales with: `|ref_i|` for an output
//!   rounded once, twice the magnitude for one computed from intermediates a kernel may store
//!   at the program's precision and read back (batch norm, LRN, softmax, SGD). `u` is the unit roundoff of the
//!   storage format: `2^-24` for f32, `2^-11` for f16.
//! - `smallest_normal` (`2^-126` for f32, `2^-14` for f16) admits an element whose value is
//!   subnormal (or nearly), which WGSL allows an implementation to flush to zero; f16 gradients
//!   deep in a network are often that small. Elements of normal size get no such slack.
//!
//! [`STORAGE_FACTOR`] = 2 is one unit in the last place (a conversion may round either way);
//! [`ACCUMULATION_FACTOR`] = 8 covers the products' own roundings. The check reports the worst
//! ratio of error to bound; a ratio above 1 fails.
//!
//! # Each variant's arithmetic
//! The Winograd variant does not add the direct sum's terms: it adds transformed tiles, whose
//! values are larger and cancel in exact arithmetic (above all where padding leaves an output
//! one or two real taps out of its tile's sixteen). Its `magnitude_i` is therefore the magnitude
//! flowing through the transforms, [`conditioning::winograd_magnitudes`] (derived there), which
//! is never below the direct one; the rest of the bound is the same. The expected outputs carry
//! both bounds, and each kernel is judged by its variant's ([`ExpectedOutput::bounds_for`]).
//!
//! A wrong kernel is wrong by the size of a term, not by rounding: an index off by one, a
//! missing bias or a dropped term give ratios of about 30 and more, an unwritten element an
//! infinite one, and f16 arithmetic in place of f32 about 12 and more at f32 precision (at f16
//! precision it often stays within a few f16 roundings, which no output check can tell), as the
//! wrong-kernel tests show. A ratio above
//! [`BUG_RATIO`] is called a kernel bug in the message; one just above 1 is reported as what it
//! more likely is: rounding beyond the bound (an accumulation order or precision the bound does
//! not foresee). A user's kernel (`user:NAME`) that fails is its author's to fix, whatever the
//! ratio: the message says so and points at its contract ([`super::Culprit`]).

use super::verification_error::{Culprit, VerificationError};
use crate::backend::{Backend, Loaded, Program};
use crate::kernels::{Access, DType, Op, Variant, conditioning, reference};
use crate::model::Precision;
use crate::{Error, Result};
use rand::Rng;
use rand::rngs::StdRng;

/// Units in the last place of the storage format that an output may be off by (see the module
/// docs).
pub const STORAGE_FACTOR: f64 = 2.0;
/// Constant of the accumulation term `2^-24 * sqrt(K) * magnitude` (see the module docs).
pub const ACCUMULATION_FACTOR: f64 = 8.0;
/// A ratio of error to bound above which a mismatch cannot be rounding: a kernel bug.
pub const BUG_RATIO: f64 = 100.0;

/// Unit roundoff of f32 arithmetic, in which every kernel accumulates.
const F32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// The unit roundoff of the storage format at `precision`: `2^-24` (f32) or `2^-11` (f16).
pub const fn unit_roundoff(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => F32_UNIT_ROUNDOFF,
        Precision::F16 => 1.0 / 2048.0,
    }
}

/// The smallest normal number of the storage format at `precision`; anything below it may be
/// flushed to zero.
pub fn smallest_normal(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f64::from(f32::MIN_POSITIVE),
        Precision::F16 => 1.0 / 16_384.0,
    }
}

/// The reference's result for one output binding of an op, with each element's error bound.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedOutput {
    /// Binding index of the output.
    pub binding: usize,
    /// The reference's values.
    pub values: Vec<f64>,
    /// The largest accepted absolute error of each element (see the module docs).
    pub bounds: Vec<f64>,
    /// The bound of each element as the Winograd variant computes it; `None` when it was not
    /// asked for or the Winograd kernels do not implement the op.
    pub winograd_bounds: Option<Vec<f64>>,
}

impl ExpectedOutput {
    /// The bounds a kernel of `variant` is judged by: the Winograd ones for the Winograd
    /// variant (when computed), the direct sum's for every other.
    pub fn bounds_for(&self, variant: Variant) -> &[f64] {
        match (variant, &self.winograd_bounds) {
            (Variant::Winograd, Some(bounds)) => bounds,
            _ => &self.bounds,
        }
    }
}

/// The worst element of one verified op: the one with the largest ratio of error to bound.
#[derive(Debug, Clone, PartialEq)]
pub struct OpCheck {
    /// `|got - expected| / bound` of the worst element (0 when every output is exact; infinite
    /// when an element is NaN or infinite and the reference's is not). Above 1 fails.
    pub ratio: f64,
    /// Binding index of the worst element's output.
    pub binding: usize,
    /// Index of the worst element within its output.
    pub element: usize,
    /// The kernel's value of that element.
    pub got: f64,
    /// The reference's value of that element.
    pub expected: f64,
    /// That element's error bound.
    pub bound: f64,
}

impl OpCheck {
    /// Whether every element is within its bound.
    pub fn passed(&self) -> bool {
        self.ratio <= 1.0
    }
}

/// Compares `got` with `expected`, element by element, and returns the worst (largest ratio of
/// error to bound), with `binding` recorded.
pub fn compare(got: &[f32], expected: &ExpectedOutput) -> OpCheck {
    compare_variant(got, expected, Variant::Direct)
}

/// [`compare`] with the bounds of `variant` (see [`ExpectedOutput::bounds_for`]).
pub fn compare_variant(got: &[f32], expected: &ExpectedOutput, variant: Variant) -> OpCheck {
    let bounds = expected.bounds_for(variant);
    let mut worst = OpCheck {
        ratio: 0.0,
        binding: expected.binding,
        element: 0,
        got: got.first().copied().map_or(f64::NAN, f64::from),
        expected: expected.values.first().copied().unwrap_or(f64::NAN),
        bound: bounds.first().copied().unwrap_or(0.0),
    };
    if got.len() != expected.values.len() {
        worst.ratio = f64::INFINITY;
        return worst;
    }
    for (element, ((&g, &r), &bound)) in got.iter().zip(&expected.values).zip(bounds).enumerate() {
        let g = f64::from(g);
        let ratio = if !g.is_finite() || !r.is_finite() {
            if g.to_bits() == r.to_bits() || (g.is_nan() && r.is_nan()) {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            (g - r).abs() / bound
        };
        if ratio > worst.ratio {
            worst = OpCheck {
                ratio,
                binding: expected.binding,
                element,
                got: g,
                expected: r,
                bound,
            };
        }
    }
    worst
}

/// Runs op `index` of `program` alone on `loaded` and compares it with the reference. The
/// op's inputs are whatever the tensors hold; its written outputs are poisoned first.
pub fn check_op(loaded: &mut dyn Loaded, program: &Program, index: usize) -> Result<OpCheck> {
    let expected = reference_outputs(loaded, program, index)?;
    check_against(loaded, program, index, &expected)
}

/// A program with one op per variant, all binding the same tensors (named `OP/TENSOR`), and
/// those tensors filled with uniform values in `[-1, 1)`: what [`super::tune`] verifies the
/// variants of an op with, and [`super::conformance`] a variant, one shape at a time. With
/// `paths_of`, each variant takes the size-dependent paths it takes on that op (the timed one of
/// which `op` is the smaller twin: [`crate::kernels::path`]).
pub(super) fn load_variants<'b>(
    backend: &'b dyn Backend,
    op: &Op,
    precision: Precision,
    variants: &[Variant],
    paths_of: Option<&Op>,
    rng: &mut StdRng,
) -> Result<(Program, Box<dyn Loaded + 'b>)> {
    let mut program = Program::new(precision);
    let contract = op.contract();
    let ids: Vec<usize> = contract
        .iter()
        .map(|b| program.tensor(format!("{}/{}", op.name(), b.name), b.len, b.dtype))
        .collect();
    for &variant in variants {
        program.push(op.clone(), ids.clone())?;
        if let Some(call) = program.ops.last_mut() {
            call.variant = variant;
            call.pin = paths_of.map_or_else(Default::default, |timed| crate::kernels::path(timed, variant));
        }
    }
    let mut loaded = backend.load(&program)?;
    for (&id, b) in ids.iter().zip(&contract) {
        if b.access != Access::Write && b.dtype == DType::Float {
            let values: Vec<f32> = (0..b.len).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            loaded.write(id, &values)?;
        }
    }
    Ok((program, loaded))
}

/// The reference's outputs of op `index` with their error bounds, from the inputs (and
/// read-write outputs) as the tensors hold them now, one per float output. Several ops that
/// bind the same tensors (variants of one op, as `tune` verifies them) share one reference.
pub fn reference_outputs(
    loaded: &mut dyn Loaded,
    program: &Program,
    index: usize,
) -> Result<Vec<ExpectedOutput>> {
    let call = &program.ops[index];
    // Each float binding is read back (f32) and held in f64, and each output gets f64 bounds.
    let elements: u64 = call.tensors.iter().map(|&t| program.tensors[t].len as u64).sum();
    crate::backend::check_host_memory(
        || format!("the reference of op {index} ({})", call.op.name()),
        elements * (4 + 8 + 8),
    )?;
    let accesses = call.op.bindings();
    let dtypes = call.op.dtypes();
    let mut inputs: Vec<Vec<f64>> = Vec::new();
    let mut outputs: Vec<(usize, Vec<f64>)> = Vec::new();
    let mut labels = None;
    for (k, ((&t, &access), &dtype)) in call.tensors.iter().zip(&accesses).zip(&dtypes).enumerate() {
        if dtype == DType::U32 {
            labels = Some(loaded.read_u32(t)?);
            continue;
        }
        match access {
            Access::Read => inputs.push(loaded.read(t)?.into_iter().map(f64::from).collect()),
            Access::ReadWrite => outputs.push((k, loaded.read(t)?.into_iter().map(f64::from).collect())),
            Access::Write => outputs.push((k, vec![f64::NAN; program.tensors[t].len])),
        }
    }
    let input_refs: Vec<&[f64]> = inputs.iter().map(Vec::as_slice).collect();
    let variants: Vec<Variant> = program.ops.iter().map(|op| op.variant).collect();
    Ok(expected_outputs(
        &call.op,
        program.precision,
        &variants,
        &input_refs,
        labels.as_deref(),
        outputs,
    ))
}

/// The reference's outputs of `op` at `precision` with their error bounds: `inputs` are its
/// read-only float bindings in binding order, `labels` its `u32` binding if any, and `outputs`
/// each float output's binding index with its values before the op ran (a read-write
/// binding's contents; anything for a write-only one). The bounds of every variant of
/// `variants` that has its own are computed too (see [`ExpectedOutput::bounds_for`]).
pub fn expected_outputs(
    op: &Op,
    precision: Precision,
    variants: &[Variant],
    inputs: &[&[f64]],
    labels: Option<&[u32]>,
    mut outputs: Vec<(usize, Vec<f64>)>,
) -> Vec<ExpectedOutput> {
    let before: Vec<Vec<f64>> = outputs.iter().map(|(_, v)| v.clone()).collect();
    let mut output_refs: Vec<&mut [f64]> = outputs.iter_mut().map(|(_, v)| v.as_mut_slice()).collect();
    reference::execute(op, inputs, labels, &mut output_refs);
    let before_refs: Vec<&[f64]> = before.iter().map(Vec::as_slice).collect();
    let expected_refs: Vec<&[f64]> = outputs.iter().map(|(_, v)| v.as_slice()).collect();
    let conditions = conditioning::conditioning(op, inputs, labels, &before_refs, &expected_refs);
    drop(before);
    // Winograd's kernels have one float output (`y` or `dx`).
    let mut winograd_magnitude = if variants.contains(&Variant::Winograd) {
        conditioning::winograd_magnitudes(op, inputs)
    } else {
        None
    };
    let (storage, floor) = (
        STORAGE_FACTOR * unit_roundoff(precision),
        smallest_normal(precision),
    );
    outputs
        .into_iter()
        .zip(conditions)
        .map(|((binding, values), condition)| {
            let accumulation = ACCUMULATION_FACTOR * F32_UNIT_ROUNDOFF * (condition.depth as f64).sqrt();
            let composite = condition.composite;
            let bounds_of = |magnitudes: &[f64]| -> Vec<f64> {
                magnitudes
                    .iter()
                    .zip(&values)
                    .map(|(&magnitude, value)| {
                        let stored = if composite { 2.0 * magnitude } else { value.abs() };
                        let subnormal = if value.abs() < 2.0 * floor { floor } else { 0.0 };
                        storage * stored + accumulation * magnitude + subnormal
                    })
                    .collect()
            };
            let bounds = bounds_of(&condition.magnitude);
            let winograd_bounds = winograd_magnitude.take().map(|m| bounds_of(&m));
            ExpectedOutput {
                binding,
                values,
                bounds,
                winograd_bounds,
            }
        })
        .collect()
}

/// Poisons the written outputs of op `index` with NaN, runs it alone and compares its outputs
/// with `expected` (from [`reference_outputs`]).
pub fn check_against(
    loaded: &mut dyn Loaded,
    program: &Program,
    index: usize,
    expected: &[ExpectedOutput],
) -> Result<OpCheck> {
    let call = &program.ops[index];
    let accesses = call.op.bindings();
    let dtypes = call.op.dtypes();
    for ((&t, &access), &dtype) in call.tensors.iter().zip(&accesses).zip(&dtypes) {
        if access == Access::Write && dtype == DType::Float {
            loaded.write(t, &vec![f32::NAN; program.tensors[t].len])?;
        }
    }
    loaded.run(index..index + 1, false)?;
    let mut worst: Option<OpCheck> = None;
    for output in expected {
        let got = loaded.read(call.tensors[output.binding])?;
        let check = compare_variant(&got, output, call.variant);
        if worst.as_ref().is_none_or(|w| check.ratio > w.ratio) {
            worst = Some(check);
        }
    }
    Ok(worst.unwrap_or(OpCheck {
        ratio: 0.0,
        binding: 0,
        element: 0,
        got: 0.0,
        expected: 0.0,
        bound: 0.0,
    }))
}

/// The error of op `index` failing its check: names the op (`describe`, e.g. its layer), the
/// kernel (what the backend says ran it, [`Loaded::kernel_name`], such as cuDNN's algorithm,
/// else the plan's variant), the output tensor and element, its error and bound, the seed of the
/// data when known, and what to do next.
pub fn mismatch(
    loaded: &dyn Loaded,
    program: &Program,
    index: usize,
    describe: &str,
    check: &OpCheck,
    seed: Option<u64>,
) -> Error {
    let call = &program.ops[index];
    let tensor = &program.tensors[call.tensors[check.binding]].name;
    let culprit = if call.variant.is_user() {
        Culprit::User
    } else if check.ratio > BUG_RATIO || !check.ratio.is_finite() {
        Culprit::Convbench
    } else {
        Culprit::Marginal
    };
    VerificationError::Mismatch {
        describe: describe.to_string(),
        op: call.op.name(),
        variant: loaded.kernel_name(index).unwrap_or_else(|| call.variant.id()),
        tensor: tensor.clone(),
        element: check.element,
        got: check.got,
        expected: check.expected,
        ratio: check.ratio,
        precision: program.precision,
        bound: check.bound,
        seed,
        culprit,
    }
    .into()
}

/// The worst ratio of error to bound of each op (by [`crate::kernels::Op::name`]) over the
/// ops verified, and where it was found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Per op name: ops checked, the worst ratio and a description of the op that had it.
    pub ops: std::collections::BTreeMap<&'static str, OpSummary>,
}

/// One op's line of a [`Summary`].
#[derive(Debug, Clone, PartialEq)]
pub struct OpSummary {
    /// Ops of this kind checked.
    pub checked: usize,
    /// The worst ratio of error to bound among them.
    pub worst_ratio: f64,
    /// Which one had it (for example its layer).
    pub worst_at: String,
}

impl Summary {
    /// Adds one passed check of an op named `op`, described by `describe`.
    pub fn record(&mut self, op: &'static str, check: &OpCheck, describe: impl FnOnce() -> String) {
        let line = self.ops.entry(op).or_insert_with(|| OpSummary {
            checked: 0,
            worst_ratio: -1.0,
            worst_at: String::new(),
        });
        line.checked += 1;
        if check.ratio > line.worst_ratio {
            line.worst_ratio = check.ratio;
            line.worst_at = describe();
        }
    }

    /// Adds every line of `other`.
    pub fn merge(&mut self, other: Summary) {
        for (op, theirs) in other.ops {
            let line = self.ops.entry(op).or_insert_with(|| OpSummary {
                checked: 0,
                worst_ratio: -1.0,
                worst_at: String::new(),
            });
            line.checked += theirs.checked;
            if theirs.worst_ratio > line.worst_ratio {
                line.worst_ratio = theirs.worst_ratio;
                line.worst_at = theirs.worst_at;
            }
        }
    }

    /// The worst ratio over every op (0 when nothing was checked).
    pub fn worst_ratio(&self) -> f64 {
        self.ops.values().fold(0.0, |w, line| w.max(line.worst_ratio))
    }
}

/// Verifies every op of a loaded program in order, failing with [`Error::Verification`] on the
/// first op beyond its bound. `describe(index)` names the op's layer. Returns the worst ratio
/// of error to bound.
pub fn check_program(
    loaded: &mut dyn Loaded,
    program: &Program,
    describe: impl Fn(usize) -> String,
) -> Result<f64> {
    let mut worst = 0.0f64;
    for index in 0..program.ops.len() {
        let check = check_op(loaded, program, index)?;
        if !check.passed() {
            return Err(mismatch(loaded, program, index, &describe(index), &check, None));
        }
        worst = worst.max(check.ratio);
    }
    Ok(worst)
}
