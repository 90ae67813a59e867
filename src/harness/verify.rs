//! Verification of ops against the f64 reference, with the same metric and tolerances
//! everywhere (the op tests and `cargo convbench run --verify`).
//!
//! Each op is checked alone: its inputs are read back from the backend as they are, outputs
//! are poisoned with NaN, the op runs, and its outputs are compared with the reference computed
//! from those same inputs in f64. Errors therefore never accumulate across layers, and a
//! mismatch names the op that produced it.
//!
//! Error metric: `max_i |got_i - ref_i| / max(|ref_i|, 0.1 * max_j |ref_j|)`: relative error
//! with a floor at a tenth of the tensor's largest magnitude. Elements much smaller than the
//! largest are judged against that scale rather than against zero, which is how rounding in a
//! long f32 reduction behaves: its error is proportional to the magnitudes of the terms summed,
//! not to a result that happens to cancel to near zero (the normwise error used for GEMM
//! testing). An indexing or boundary mistake, a wrong scale, or an unwritten (NaN) element
//! still gives an error of O(1) or infinity.
//!
//! Tolerances:
//! - f32: [`F32_TOLERANCE`] = 1e-4. Kernels accumulate in f32 in another order than the
//!   reference; a sum of K products has a rounding error of about sqrt(K) * 2^-24 of the sum of
//!   the terms' magnitudes. Measured worst cases: ~3e-6 on the op tests (K up to ~2,000) and
//!   ~1e-5 through whole networks (AlexNet's fc6 sums K = 9,216 products), so 1e-4 leaves a
//!   margin of ten.
//! - f16: [`F16_TOLERANCE`] = 2e-2. Both sides see the same f16-rounded inputs, so the
//!   difference is the f16 rounding of outputs (2^-11 ~ 4.9e-4 relative) plus intermediates
//!   stored in f16 (LRN scale, batch-norm mean and inverse deviation, 4.9e-4 relative each),
//!   amplified where the result cancels; measured worst cases are ~1.3e-3 (batch-norm forward).

use crate::backend::{Loaded, Program};
use crate::kernels::{Access, DType, reference};
use crate::model::Precision;
use crate::{Error, Result};

/// Largest accepted error of an f32 op (see the module docs).
pub const F32_TOLERANCE: f64 = 1e-4;
/// Largest accepted error of an f16 op (see the module docs).
pub const F16_TOLERANCE: f64 = 2e-2;

/// The tolerance at `precision`.
pub const fn tolerance(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => F32_TOLERANCE,
        Precision::F16 => F16_TOLERANCE,
    }
}

/// The error metric of the module docs; infinite when `got` has a non-finite element that the
/// reference does not.
pub fn relative_error(got: &[f32], reference: &[f64]) -> f64 {
    if got.len() != reference.len() {
        return f64::INFINITY;
    }
    let scale = reference
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let floor = (0.1 * scale).max(1e-30);
    got.iter()
        .zip(reference)
        .map(|(&g, &r)| {
            let g = f64::from(g);
            if !g.is_finite() || !r.is_finite() {
                if g.to_bits() == r.to_bits() {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                (g - r).abs() / r.abs().max(floor)
            }
        })
        .fold(0.0, f64::max)
}

/// The worst output of one verified op.
#[derive(Debug, Clone, PartialEq)]
pub struct OpCheck {
    /// Worst relative error over the op's outputs.
    pub error: f64,
    /// Binding index of the worst output.
    pub binding: usize,
}

/// Runs op `index` of `program` alone on `loaded` and compares it with the reference. The
/// op's inputs are whatever the tensors hold; its written outputs are poisoned first.
pub fn check_op(loaded: &mut dyn Loaded, program: &Program, index: usize) -> Result<OpCheck> {
    let expected = reference_outputs(loaded, program, index)?;
    check_against(loaded, program, index, &expected)
}

/// The reference's outputs of op `index`, from the inputs (and read-write outputs) as the
/// tensors hold them now: `(binding index, values)` for each float output. Several ops that
/// bind the same tensors (variants of one op, as `tune` verifies them) share one reference.
pub fn reference_outputs(
    loaded: &mut dyn Loaded,
    program: &Program,
    index: usize,
) -> Result<Vec<(usize, Vec<f64>)>> {
    let call = &program.ops[index];
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
    let mut output_refs: Vec<&mut [f64]> = outputs.iter_mut().map(|(_, v)| v.as_mut_slice()).collect();
    reference::execute(&call.op, &input_refs, labels.as_deref(), &mut output_refs);
    Ok(outputs)
}

/// Poisons the written outputs of op `index` with NaN, runs it alone and compares its outputs
/// with `expected` (from [`reference_outputs`]).
pub fn check_against(
    loaded: &mut dyn Loaded,
    program: &Program,
    index: usize,
    expected: &[(usize, Vec<f64>)],
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
    let mut worst = OpCheck {
        error: 0.0,
        binding: 0,
    };
    for (k, expected) in expected {
        let got = loaded.read(call.tensors[*k])?;
        let error = relative_error(&got, expected);
        if error >= worst.error {
            worst = OpCheck { error, binding: *k };
        }
    }
    Ok(worst)
}

/// Verifies every op of a loaded program in order, failing with [`Error::Verification`] on the
/// first op whose error exceeds the tolerance. `describe(index)` names the op's layer.
pub fn check_program(
    loaded: &mut dyn Loaded,
    program: &Program,
    describe: impl Fn(usize) -> String,
) -> Result<f64> {
    let tolerance = tolerance(program.precision);
    let mut worst = 0.0f64;
    for index in 0..program.ops.len() {
        let check = check_op(loaded, program, index)?;
        if check.error > tolerance {
            let call = &program.ops[index];
            return Err(Error::Verification(format!(
                "{} ({}) disagrees with the CPU reference: output `{}` has relative error {:.2e}, \
                 above the {} tolerance of {tolerance:.0e}; this is a kernel bug, please report it \
                 with the adapter (`cargo convbench adapters`)",
                describe(index),
                call.op.name(),
                program.tensors[call.tensors[check.binding]].name,
                check.error,
                program.precision
            )));
        }
        worst = worst.max(check.error);
    }
    Ok(worst)
}
