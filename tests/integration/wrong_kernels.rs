//! The verification rule rejects wrong kernels. Each kernel bug below is simulated on the CPU
//! (no GPU needed) by running the reference on the inputs a buggy kernel would in effect read,
//! or in f16 arithmetic, rounding its outputs to the storage precision as a kernel's stores do;
//! `verify::compare` then judges them against the true reference and its error bounds, exactly
//! as it judges a GPU's outputs. For every op of the catalogue, on random shapes (seed printed,
//! `CONVBENCH_SEED` to replay):
//!
//! - off by one: an index shifted by one element;
//! - missing bias: the bias not added;
//! - dropped term: the last term of each reduction left out;
//! - f16 accumulation: the arithmetic done in f16 instead of f32 (required to be rejected at f32
//!   precision; at f16 precision its ratios are printed, since over a few thousand terms it
//!   often stays within a few f16 roundings of the truth, which no output check can tell);
//! - unwritten element: one output element left as the verifier's NaN poison.
//!
//! As a control, the same ops computed correctly in f32 (the cpu backend's arithmetic) pass, so
//! the rule is not simply rejecting everything.

use super::support::{input_values, random_conv, rng, seed};
use convbench::harness::verify::{self, ExpectedOutput};
use convbench::kernels::reference::{self, Real};
use convbench::kernels::{Access, DType, LinearGeom, Op, PoolGeom};
use convbench::model::{BatchNorm, Conv2d, Lrn, Pool2d, Precision, Shape};
use rand::Rng;
use rand::rngs::StdRng;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// A number whose every arithmetic result is rounded to f16: a kernel accumulating in f16.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
struct Half(f32);

fn half(x: f32) -> Half {
    Half(half::f16::from_f32(x).to_f32())
}

impl Add for Half {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        half(self.0 + o.0)
    }
}
impl Sub for Half {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        half(self.0 - o.0)
    }
}
impl Mul for Half {
    type Output = Self;
    fn mul(self, o: Self) -> Self {
        half(self.0 * o.0)
    }
}
impl Div for Half {
    type Output = Self;
    fn div(self, o: Self) -> Self {
        half(self.0 / o.0)
    }
}
impl Neg for Half {
    type Output = Self;
    fn neg(self) -> Self {
        Half(-self.0)
    }
}
impl AddAssign for Half {
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl Real for Half {
    fn of(x: f64) -> Self {
        half(x as f32)
    }
    fn to_f64(self) -> f64 {
        f64::from(self.0)
    }
    fn exp(self) -> Self {
        half(self.0.exp())
    }
    fn ln(self) -> Self {
        half(self.0.ln())
    }
    fn sqrt(self) -> Self {
        half(self.0.sqrt())
    }
    fn powf(self, e: Self) -> Self {
        half(self.0.powf(e.0))
    }
}

/// The kernel bugs simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Bug {
    OffByOne,
    MissingBias,
    DroppedTerm,
    HalfAccumulation,
    Unwritten,
}

/// An op's bindings as the verifier reads them.
struct Bound {
    inputs: Vec<Vec<f64>>,
    labels: Option<Vec<u32>>,
    /// `(binding, values before the op)` of each float output.
    outputs: Vec<(usize, Vec<f64>)>,
}

fn store(value: f64, precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f64::from(value as f32),
        Precision::F16 => f64::from(half::f16::from_f64(value).to_f32()),
    }
}

fn bindings(op: &Op, precision: Precision, rng: &mut StdRng) -> Bound {
    let contract = op.contract();
    let mut bound = Bound {
        inputs: Vec::new(),
        labels: None,
        outputs: Vec::new(),
    };
    for (i, b) in contract.iter().enumerate() {
        let (access, len) = (b.access, b.len);
        if b.dtype == DType::U32 {
            let classes = (contract[0].len / len) as u32;
            bound.labels = Some((0..len).map(|_| rng.random_range(0..classes)).collect());
            continue;
        }
        let values: Vec<f64> = input_values(op, b.name, len, rng)
            .into_iter()
            .map(|v| store(f64::from(v), precision))
            .collect();
        match access {
            Access::Read => bound.inputs.push(values),
            Access::ReadWrite => bound.outputs.push((i, values)),
            Access::Write => bound.outputs.push((i, vec![f64::NAN; len])),
        }
    }
    bound
}

/// Runs the reference in `T` on `inputs` and stores the outputs at `precision`.
fn outputs_in<T: Real>(op: &Op, bound: &Bound, inputs: &[Vec<f64>], precision: Precision) -> Vec<Vec<f64>> {
    let inputs: Vec<Vec<T>> = inputs
        .iter()
        .map(|v| v.iter().map(|&x| T::of(x)).collect())
        .collect();
    let mut outputs: Vec<Vec<T>> = bound
        .outputs
        .iter()
        .map(|(_, v)| v.iter().map(|&x| T::of(x)).collect())
        .collect();
    let input_refs: Vec<&[T]> = inputs.iter().map(Vec::as_slice).collect();
    let mut output_refs: Vec<&mut [T]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    reference::execute(op, &input_refs, bound.labels.as_deref(), &mut output_refs);
    outputs
        .into_iter()
        .map(|v| v.into_iter().map(|x| store(x.to_f64(), precision)).collect())
        .collect()
}

/// The worst ratio of error to bound of `got` against `expected`.
fn worst_ratio(got: &[Vec<f64>], expected: &[ExpectedOutput]) -> f64 {
    got.iter()
        .zip(expected)
        .map(|(g, e)| {
            let g: Vec<f32> = g.iter().map(|&v| v as f32).collect();
            verify::compare(&g, e).ratio
        })
        .fold(0.0, f64::max)
}

/// `values` shifted by one element: what a kernel reads with an index off by one.
fn shifted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.rotate_left(1);
    v
}

/// The op a buggy kernel of `op` in effect computes: pooling with a window one column short
/// drops a term of each window; every other bug keeps the op.
fn buggy_op(op: &Op, bug: Bug) -> Option<Op> {
    match (op, bug) {
        (Op::PoolForward(g) | Op::PoolBackward(g), Bug::DroppedTerm) => {
            let mut short = *g;
            if short.pool.kernel.1 > 1 {
                short.pool.kernel.1 -= 1;
            } else if short.pool.kernel.0 > 1 {
                short.pool.kernel.0 -= 1;
            } else {
                return None;
            }
            Some(match op {
                Op::PoolForward(_) => Op::PoolForward(short),
                _ => Op::PoolBackward(short),
            })
        }
        _ => Some(op.clone()),
    }
}

/// The input a buggy kernel of `op` in effect reads, or `None` where the bug does not apply.
fn buggy_inputs(op: &Op, bug: Bug, inputs: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let mut v = inputs.to_vec();
    match bug {
        Bug::OffByOne => {
            // The binding whose index the kernel gets wrong: the one its main term reads.
            let target = match op {
                Op::LrnBackward { .. } => 3,
                Op::PoolBackward(_) => 1,
                _ => 0,
            };
            v[target] = shifted(&v[target]);
        }
        Bug::MissingBias => match op {
            Op::Conv2dForward(g) if g.conv.bias => v[2].fill(0.0),
            Op::LinearForward(g) if g.bias => v[2].fill(0.0),
            _ => return None,
        },
        Bug::DroppedTerm if matches!(op, Op::PoolForward(_) | Op::PoolBackward(_)) => {}
        Bug::DroppedTerm => drop_last_term(op, &mut v)?,
        Bug::HalfAccumulation | Bug::Unwritten => {}
    }
    Some(v)
}

/// Zeroes what makes the last term of each reduction of `op`; `None` for ops without one.
fn drop_last_term(op: &Op, v: &mut [Vec<f64>]) -> Option<()> {
    // The last element of each `block`-long block of `values`.
    let zero_last = |values: &mut [f64], block: usize| {
        for chunk in values.chunks_mut(block) {
            if let Some(last) = chunk.last_mut() {
                *last = 0.0;
            }
        }
    };
    match op {
        // The loop over input channels one short: the last input channel of every filter.
        Op::Conv2dForward(g) => {
            let taps = g.conv.kernel.0 * g.conv.kernel.1;
            for filter in v[1].chunks_mut((g.conv.in_channels / g.conv.groups) * taps) {
                let last = filter.len() - taps;
                filter[last..].fill(0.0);
            }
        }
        // The loop over output channels one short: the last filter of every group.
        Op::Conv2dBackwardData(g) => {
            let per_filter = (g.conv.in_channels / g.conv.groups) * g.conv.kernel.0 * g.conv.kernel.1;
            let cout_g = g.conv.out_channels / g.conv.groups;
            for (oc, filter) in v[1].chunks_mut(per_filter).enumerate() {
                if oc % cout_g == cout_g - 1 {
                    filter.fill(0.0);
                }
            }
        }
        // One output row skipped in the sum over pixels: the middle row of every plane (the
        // last one may see only padding, where skipping it changes nothing).
        Op::Conv2dBackwardFilter(g) => {
            for plane in v[1].chunks_mut(g.output.h * g.output.w) {
                plane[g.output.h / 2 * g.output.w..][..g.output.w].fill(0.0);
            }
        }
        Op::LinearForward(g) => zero_last(&mut v[1], g.in_features),
        Op::LinearBackwardData(g) => {
            let last_row = (g.out_features - 1) * g.in_features;
            v[1][last_row..].fill(0.0);
        }
        Op::LinearBackwardParams(g) => {
            let last_row = (g.batch - 1) * g.y_stride;
            v[1][last_row + g.y_offset..][..g.out_features].fill(0.0);
        }
        Op::GlobalAvgPoolForward { shape } => zero_last(&mut v[0], shape.h * shape.w),
        Op::BatchNormForwardTrain { shape, .. } => zero_last(&mut v[0], shape.h * shape.w),
        Op::BatchNormBackward { shape, .. } => zero_last(&mut v[1], shape.h * shape.w),
        Op::LrnForward { shape, .. } => zero_last(&mut v[0], shape.len() / shape.n),
        Op::SoftmaxCrossEntropyForward { classes, .. } => zero_last(&mut v[0], *classes),
        _ => return None,
    }
    Some(())
}

/// Ops whose reductions are long enough that f16 arithmetic departs clearly from f16 storage of
/// an f32 result, for the f16-accumulation check at f16 precision: over a few dozen terms the
/// two differ by about one f16 rounding, which no check of the output can tell apart. The
/// catalogue's long cases add 144 (convolution), 300 (linear) and 2,048 (batch norm) terms.
fn long_reduction(op: &Op) -> bool {
    match op {
        Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) => {
            g.conv.in_channels / g.conv.groups * g.conv.kernel.0 * g.conv.kernel.1 >= 64
        }
        Op::Conv2dBackwardFilter(g) => g.output.n * g.output.h * g.output.w >= 64,
        Op::LinearForward(g) => g.in_features >= 64,
        Op::BatchNormForwardTrain { shape, .. } | Op::BatchNormBackward { shape, .. } => {
            shape.n * shape.h * shape.w >= 64
        }
        _ => false,
    }
}

/// Every op, on random shapes, plus reductions long enough for the f16-accumulation check.
fn catalogue(rng: &mut StdRng) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut convs: Vec<_> = (0..3).map(|_| random_conv(rng)).collect();
    let mut wide = Conv2d::square(16, 8, 3, 1, 1);
    wide.bias = true;
    convs.push(convbench::kernels::ConvGeom {
        conv: wide,
        input: Shape::new(1, 16, 12, 10),
        output: Shape::new(1, 8, 12, 10),
    });
    for g in convs {
        ops.extend([
            Op::Conv2dForward(g),
            Op::Conv2dBackwardData(g),
            Op::Conv2dBackwardFilter(g),
        ]);
    }
    for pool in [Pool2d::max(3, 2, 1, true), Pool2d::avg(3, 2, 1, false)] {
        let input = Shape::new(rng.random_range(1..=2), 3, 9, rng.random_range(6..=11));
        let (h, w) = pool.output_hw(input.h, input.w).expect("the window fits");
        let g = PoolGeom {
            pool,
            input,
            output: Shape::new(input.n, input.c, h, w),
        };
        ops.extend([Op::PoolForward(g), Op::PoolBackward(g)]);
    }
    let len = rng.random_range(50..=500);
    ops.extend([
        Op::ReluForward { len },
        Op::ReluBackward { len },
        Op::Add { len },
        Op::SgdUpdate {
            len,
            lr: 0.01,
            momentum: 0.9,
            weight_decay: 5e-4,
        },
    ]);
    let lrn = Lrn {
        size: 5,
        alpha: rng.random_range(0.1..1.0),
        beta: 0.75,
        k: 2.0,
    };
    let shape = Shape::new(2, 7, 4, 5);
    ops.extend([Op::LrnForward { lrn, shape }, Op::LrnBackward { lrn, shape }]);
    for shape in [Shape::new(2, 3, 5, 4), Shape::new(2, 2, 64, 64)] {
        let bn = BatchNorm {
            channels: shape.c,
            eps: 1e-5,
            momentum: 0.1,
        };
        ops.extend([
            Op::BatchNormForwardTrain { bn, shape },
            Op::BatchNormForwardEval { bn, shape },
            Op::BatchNormBackward { bn, shape },
        ]);
    }
    for g in [
        LinearGeom::new(rng.random_range(1..=3), rng.random_range(2..=40), 7, true),
        LinearGeom::new(2, 300, 5, true),
    ] {
        ops.extend([
            Op::LinearForward(g),
            Op::LinearBackwardData(g),
            Op::LinearBackwardParams(g),
        ]);
    }
    let (batch, classes) = (rng.random_range(1..=3), rng.random_range(2..=30));
    ops.extend([
        Op::SoftmaxCrossEntropyForward { batch, classes },
        Op::SoftmaxCrossEntropyBackward { batch, classes },
    ]);
    for into_concat in [true, false] {
        ops.push(Op::ChannelCopy {
            n: 2,
            hw: 6,
            total_channels: 5,
            part_channels: 2,
            offset: 1,
            into_concat,
        });
    }
    let shape = Shape::new(2, 3, 4, 5);
    ops.extend([
        Op::GlobalAvgPoolForward { shape },
        Op::GlobalAvgPoolBackward { shape },
    ]);
    ops
}

#[test]
fn every_op_rejects_wrong_kernels_and_accepts_right_ones() {
    let mut rng = rng(31);
    let mut failures = Vec::new();
    let mut lines = Vec::new();
    for op in catalogue(&mut rng) {
        for precision in [Precision::F32, Precision::F16] {
            let bound = bindings(&op, precision, &mut rng);
            let input_refs: Vec<&[f64]> = bound.inputs.iter().map(Vec::as_slice).collect();
            let expected = verify::expected_outputs(
                &op,
                precision,
                &input_refs,
                bound.labels.as_deref(),
                bound.outputs.clone(),
            );
            let right = worst_ratio(
                &outputs_in::<f32>(&op, &bound, &bound.inputs, precision),
                &expected,
            );
            lines.push(format!("{:<32} {precision} correct f32   {right:.3}", op.name()));
            if right > 1.0 {
                failures.push(format!(
                    "{} {precision}: a correct f32 result is rejected ({right:.2})",
                    op.name()
                ));
            }
            for bug in [
                Bug::OffByOne,
                Bug::MissingBias,
                Bug::DroppedTerm,
                Bug::HalfAccumulation,
                Bug::Unwritten,
            ] {
                let (Some(buggy), Some(inputs)) = (buggy_op(&op, bug), buggy_inputs(&op, bug, &bound.inputs))
                else {
                    continue;
                };
                let got = match bug {
                    Bug::HalfAccumulation => {
                        // At f16 storage, f16 arithmetic over a few terms is no worse than
                        // storing an f32 result in f16: not a bug the output can show.
                        if precision == Precision::F16 && !long_reduction(&op) {
                            continue;
                        }
                        outputs_in::<Half>(&buggy, &bound, &inputs, precision)
                    }
                    Bug::Unwritten => {
                        let mut got = outputs_in::<f64>(&buggy, &bound, &inputs, precision);
                        let out = rng.random_range(0..got.len());
                        let element = rng.random_range(0..got[out].len());
                        got[out][element] = f64::NAN;
                        got
                    }
                    _ => outputs_in::<f64>(&buggy, &bound, &inputs, precision),
                };
                let ratio = worst_ratio(&got, &expected);
                lines.push(format!("{:<32} {precision} {bug:<13?} {ratio:.3e}", op.name()));
                // At f16 storage, f16 arithmetic even over thousands of terms often stays within
                // a few f16 roundings of the true result: printed for information, not required.
                let informational = bug == Bug::HalfAccumulation && precision == Precision::F16;
                if ratio <= 1.0 && !informational {
                    failures.push(format!(
                        "{} {precision}: {bug:?} passes (error/bound {ratio:.3}); op: {op:?}",
                        op.name()
                    ));
                }
            }
        }
    }
    eprintln!("{}", lines.join("\n"));
    assert!(
        failures.is_empty(),
        "seed {} (replay with CONVBENCH_SEED={}):\n{}",
        seed(),
        seed(),
        failures.join("\n")
    );
}
