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
//!
//! Ops the Winograd kernels implement are judged by the direct sum's bounds and by the Winograd
//! variant's (larger, see `conditioning::winograd_magnitudes`): every bug must fail both. And a
//! simulation of the Winograd kernel itself, in f32 as `shaders/winograd.wgsl` computes, must pass
//! its bound on the shapes where the direct bound rejected it, while the same kernel with a
//! transform coefficient off by 1e-3 (relative) must fail.

use super::support::{input_values, random_conv, rng, seed};
use convbench::harness::verify::{self, ExpectedOutput};
use convbench::kernels::reference::{self, Real};
use convbench::kernels::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom, Variant};
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

/// The worst ratio of error to bound of `got` against `expected`, with the bounds of `variant`.
fn worst_ratio(got: &[Vec<f64>], expected: &[ExpectedOutput], variant: Variant) -> f64 {
    got.iter()
        .zip(expected)
        .map(|(g, e)| {
            let g: Vec<f32> = g.iter().map(|&v| v as f32).collect();
            verify::compare_variant(&g, e, variant).ratio
        })
        .fold(0.0, f64::max)
}

/// The variants whose bounds judge `expected`: the direct sum's, and Winograd's where it has its
/// own.
fn judging_variants(expected: &[ExpectedOutput]) -> Vec<Variant> {
    let winograd = expected.iter().any(|e| e.winograd_bounds.is_some());
    let mut variants = vec![Variant::Direct];
    if winograd {
        variants.push(Variant::Winograd);
    }
    variants
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
            // The binding whose index the kernel gets wrong: the one its main term reads. Backward
            // data reads two, the output gradient and the filter; the longer one, because a
            // gradient of a 1x1 output with one channel has nothing to be off by one from (seed
            // 232 let that mutant pass with ratio 0.019).
            let target = match op {
                Op::LrnBackward { .. } => 3,
                Op::PoolBackward(_) => 1,
                Op::Conv2dBackwardData(_) if v[1].len() > v[0].len() => 1,
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
        // The loop over classes one short: the last class's exponential left out of the sum,
        // whatever its logit (zeroing a logit that is already near 0 would change nothing).
        Op::SoftmaxCrossEntropyForward { classes, .. } => {
            for row in v[0].chunks_mut(*classes) {
                if let Some(last) = row.last_mut() {
                    *last = f64::NEG_INFINITY;
                }
            }
        }
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
                &[Variant::Winograd],
                &input_refs,
                bound.labels.as_deref(),
                bound.outputs.clone(),
            );
            let judges = judging_variants(&expected);
            let right = worst_ratio(
                &outputs_in::<f32>(&op, &bound, &bound.inputs, precision),
                &expected,
                Variant::Direct,
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
                for &judge in &judges {
                    let ratio = worst_ratio(&got, &expected, judge);
                    lines.push(format!(
                        "{:<32} {precision} {bug:<13?} {ratio:.3e} ({judge} bound)",
                        op.name()
                    ));
                    // At f16 storage, f16 arithmetic even over thousands of terms often stays
                    // within a few f16 roundings of the true result: printed for information,
                    // not required.
                    let informational = bug == Bug::HalfAccumulation && precision == Precision::F16;
                    if ratio <= 1.0 && !informational {
                        failures.push(format!(
                            "{} {precision}: {bug:?} passes the {judge} bound (error/bound \
                             {ratio:.3}); op: {op:?}",
                            op.name()
                        ));
                    }
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

/// The Winograd F(2x2, 3x3) kernel's arithmetic on the CPU, in f32 and in the order of
/// `shaders/winograd.wgsl` (filter and input transforms, one fused multiply-add per source
/// channel and position, the output transform, the bias), with `half` as the coefficient 1/2 of
/// the filter transform; outputs stored at `precision`. `inputs` are `op`'s read bindings.
fn winograd_in_f32(op: &Op, inputs: &[Vec<f64>], half: f32, precision: Precision) -> Vec<f64> {
    let (g, forward) = match op {
        Op::Conv2dForward(g) => (g, true),
        Op::Conv2dBackwardData(g) => (g, false),
        _ => unreachable!("Winograd implements convolutions forward and backward data"),
    };
    let c = &g.conv;
    let groups = c.groups;
    let (cin_g, cout_g) = (c.in_channels / groups, c.out_channels / groups);
    // Source (n, channels, h, w), destination (channels, h, w), offset, as the host sets them.
    let (src, (src_c, src_h, src_w), (dst_c, dst_h, dst_w), offset) = if forward {
        let pad = (-(c.padding.0 as isize), -(c.padding.1 as isize));
        (
            &inputs[0],
            (c.in_channels, g.input.h, g.input.w),
            (c.out_channels, g.output.h, g.output.w),
            pad,
        )
    } else {
        let pad = (c.padding.0 as isize - 2, c.padding.1 as isize - 2);
        (
            &inputs[0],
            (c.out_channels, g.output.h, g.output.w),
            (c.in_channels, g.input.h, g.input.w),
            pad,
        )
    };
    let w = &inputs[1];
    let tap = |group: usize, o: usize, r: usize, ky: usize, kx: usize| -> f32 {
        let index = if forward {
            ((group * cout_g + o) * cin_g + r) * 9 + ky * 3 + kx
        } else {
            ((group * cout_g + r) * cin_g + o) * 9 + (2 - ky) * 3 + (2 - kx)
        };
        w[index] as f32
    };
    let (src_cg, dst_cg) = (src_c / groups, dst_c / groups);
    let filter_transform = |f: [f32; 9]| -> [f32; 16] {
        let mut s = [0.0f32; 12];
        for j in 0..3 {
            let (g0, g1, g2) = (f[j], f[3 + j], f[6 + j]);
            s[j] = g0;
            s[3 + j] = half * (g0 + g1 + g2);
            s[6 + j] = half * (g0 - g1 + g2);
            s[9 + j] = g2;
        }
        let mut u = [0.0f32; 16];
        for i in 0..4 {
            let (s0, s1, s2) = (s[3 * i], s[3 * i + 1], s[3 * i + 2]);
            u[4 * i] = s0;
            u[4 * i + 1] = half * (s0 + s1 + s2);
            u[4 * i + 2] = half * (s0 - s1 + s2);
            u[4 * i + 3] = s2;
        }
        u
    };
    let input_transform = |d: [f32; 16]| -> [f32; 16] {
        let mut t = [0.0f32; 16];
        for j in 0..4 {
            let (d0, d1, d2, d3) = (d[j], d[4 + j], d[8 + j], d[12 + j]);
            t[j] = d0 - d2;
            t[4 + j] = d1 + d2;
            t[8 + j] = d2 - d1;
            t[12 + j] = d1 - d3;
        }
        let mut v = [0.0f32; 16];
        for i in 0..4 {
            let (t0, t1, t2, t3) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
            v[4 * i] = t0 - t2;
            v[4 * i + 1] = t1 + t2;
            v[4 * i + 2] = t2 - t1;
            v[4 * i + 3] = t1 - t3;
        }
        v
    };
    let n = g.input.n;
    let mut out = vec![0.0; n * dst_c * dst_h * dst_w];
    for group in 0..groups {
        for o in 0..dst_cg {
            let u: Vec<[f32; 16]> = (0..src_cg)
                .map(|r| {
                    let mut f = [0.0f32; 9];
                    for (k, value) in f.iter_mut().enumerate() {
                        *value = tap(group, o, r, k / 3, k % 3);
                    }
                    filter_transform(f)
                })
                .collect();
            let channel = group * dst_cg + o;
            let bias = if forward && c.bias {
                inputs[2][channel] as f32
            } else {
                0.0
            };
            for image in 0..n {
                for ty in 0..dst_h.div_ceil(2) {
                    for tx in 0..dst_w.div_ceil(2) {
                        let mut m = [0.0f32; 16];
                        for (r, u) in u.iter().enumerate() {
                            let plane = (image * src_c + group * src_cg + r) * src_h * src_w;
                            let mut d = [0.0f32; 16];
                            for (k, value) in d.iter_mut().enumerate() {
                                let y = (2 * ty + k / 4) as isize + offset.0;
                                let x = (2 * tx + k % 4) as isize + offset.1;
                                if (0..src_h as isize).contains(&y) && (0..src_w as isize).contains(&x) {
                                    *value = src[plane + y as usize * src_w + x as usize] as f32;
                                }
                            }
                            let v = input_transform(d);
                            for q in 0..16 {
                                m[q] = u[q].mul_add(v[q], m[q]);
                            }
                        }
                        let mut row = [0.0f32; 8];
                        for j in 0..4 {
                            row[j] = m[j] + m[4 + j] + m[8 + j];
                            row[4 + j] = m[4 + j] - m[8 + j] - m[12 + j];
                        }
                        let mut y_tile = [0.0f32; 4];
                        for i in 0..2 {
                            y_tile[2 * i] = row[4 * i] + row[4 * i + 1] + row[4 * i + 2];
                            y_tile[2 * i + 1] = row[4 * i + 1] - row[4 * i + 2] - row[4 * i + 3];
                        }
                        let plane = (image * dst_c + channel) * dst_h * dst_w;
                        for (k, value) in y_tile.iter().enumerate() {
                            let (y, x) = (2 * ty + k / 2, 2 * tx + k % 2);
                            if y < dst_h && x < dst_w {
                                out[plane + y * dst_w + x] = store(f64::from(value + bias), precision);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// 3x3 stride-1 convolutions: the two shapes the direct bound rejected the Winograd kernel on
/// (padding leaving outputs one or two real taps; grouped backward data), the catalogue's wide
/// one, and random ones.
fn winograd_convs(rng: &mut StdRng) -> Vec<ConvGeom> {
    let mut convs = Vec::new();
    let mut padded = Conv2d::square(1, 4, 3, 1, 2);
    padded.bias = true;
    convs.push(ConvGeom::new(padded, 3, 7, 10).expect("fits"));
    let mut grouped = Conv2d::square(6, 2, 3, 1, 1);
    grouped.padding = (1, 0);
    grouped.groups = 2;
    convs.push(ConvGeom::new(grouped, 1, 9, 12).expect("fits"));
    let mut wide = Conv2d::square(16, 8, 3, 1, 1);
    wide.bias = true;
    convs.push(ConvGeom::new(wide, 1, 12, 10).expect("fits"));
    while convs.len() < 24 {
        let groups = rng.random_range(1..=2);
        let mut conv = Conv2d::square(
            groups * rng.random_range(1..=8),
            groups * rng.random_range(1..=4),
            3,
            1,
            rng.random_range(0..=2),
        );
        conv.padding.1 = rng.random_range(0..=2);
        conv.groups = groups;
        conv.bias = rng.random_bool(0.5);
        let (n, h, w) = (
            rng.random_range(1..=3),
            rng.random_range(3..=12),
            rng.random_range(3..=12),
        );
        if let Some(g) = ConvGeom::new(conv, n, h, w) {
            convs.push(g);
        }
    }
    convs
}

#[test]
fn the_winograd_bound_accepts_its_kernel_and_rejects_a_wrong_transform() {
    let mut rng = rng(37);
    let mut failures = Vec::new();
    let mut lines = Vec::new();
    for g in winograd_convs(&mut rng) {
        for op in [Op::Conv2dForward(g), Op::Conv2dBackwardData(g)] {
            for precision in [Precision::F32, Precision::F16] {
                let bound = bindings(&op, precision, &mut rng);
                let input_refs: Vec<&[f64]> = bound.inputs.iter().map(Vec::as_slice).collect();
                let expected = verify::expected_outputs(
                    &op,
                    precision,
                    &[Variant::Winograd],
                    &input_refs,
                    bound.labels.as_deref(),
                    bound.outputs.clone(),
                );
                let right = vec![winograd_in_f32(&op, &bound.inputs, 0.5, precision)];
                let ratio = worst_ratio(&right, &expected, Variant::Winograd);
                let direct = worst_ratio(&right, &expected, Variant::Direct);
                lines.push(format!(
                    "{:<22} {precision} correct {ratio:.3} (direct bound {direct:.3}) {:?}",
                    op.name(),
                    g.conv
                ));
                if ratio > 1.0 {
                    failures.push(format!(
                        "{} {precision}: the Winograd kernel fails its bound ({ratio:.3}); op: {op:?}",
                        op.name()
                    ));
                }
                // A coefficient off by 1e-3 is within f16's storage rounding: only f32 can tell.
                if precision == Precision::F32 {
                    let wrong = vec![winograd_in_f32(&op, &bound.inputs, 0.5 * (1.0 + 1e-3), precision)];
                    let ratio = worst_ratio(&wrong, &expected, Variant::Winograd);
                    lines.push(format!("{:<22} {precision} wrong 1/2 {ratio:.3e}", op.name()));
                    if ratio <= 1.0 {
                        failures.push(format!(
                            "{} {precision}: a filter transform's 1/2 off by 1e-3 passes ({ratio:.3}); \
                             op: {op:?}",
                            op.name()
                        ));
                    }
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
