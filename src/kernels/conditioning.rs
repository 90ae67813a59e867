//! How well conditioned each output element of an op is: the input to the error bound that
//! verification judges a kernel by (see [`crate::harness::verify`]).
//!
//! A floating-point result cannot be more accurate than the terms it was computed from allow:
//! a sum of K products `a_i * b_i`, accumulated in f32 in any order, is off by at most about
//! `K * 2^-24 * sum |a_i * b_i|` (typically `sqrt(K)` times that unit), however small the sum
//! itself is after cancellation. So beside each reference output this module computes
//!
//! - its **magnitude**: the sum of the absolute values of the terms that make it (for a
//!   reduction `sum |a_i * b_i|`; for the SGD update `|w| + lr * |v|`; for batch norm the
//!   magnitudes of the statistics it reads, propagated through the formula),
//! - whether it is **composite**: computed from intermediates that a kernel may store at the
//!   program's precision and read back (batch norm's statistics, LRN's scale, softmax's
//!   log-sum-exp, SGD's new velocity), so that rounding to the storage format (f16) scales with
//!   twice its magnitude (their roundings and its own), not with its value,
//! - the **depth** K: how many terms a reduction adds per element.
//!
//! A wrong kernel (a wrong index, a missing or extra term, an unwritten element) is wrong by
//! the size of a term, which is O(magnitude / K) at the very least and usually O(magnitude), so
//! the bound still rejects it; a well computed result is never rejected because it cancels.
//!
//! Ops that are linear in each input (convolutions, fully connected layers, average pooling,
//! copies, sums) get their magnitude by running the reference on the absolute values of their
//! inputs, which gives exactly `sum |terms|` per element; the others are written out below.

use super::contract::bind;
use super::op::{Access, ConvGeom, DType, Op};
use super::reference;

/// The conditioning of one output binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditioning {
    /// Sum of the absolute values of the terms that make each element (all `>= 0`).
    pub magnitude: Vec<f64>,
    /// Terms a reduction adds per element (1 for element-wise ops).
    pub depth: usize,
    /// Whether the output is computed from intermediates that a kernel may store at the
    /// program's precision and read back, so that storage rounding scales with twice its
    /// magnitude (its own rounding and theirs) rather than with its value.
    pub composite: bool,
}

/// The conditioning of each float output of `op` (written and read-write bindings, in binding
/// order, as [`reference::execute`] orders them). `inputs` and `labels` are what the reference
/// read; `before` holds each output's values before the op ran (those of a read-write binding;
/// anything, NaN included, for a write-only one); `expected` the reference's results.
pub fn conditioning(
    op: &Op,
    inputs: &[&[f64]],
    labels: Option<&[u32]>,
    before: &[&[f64]],
    expected: &[&[f64]],
) -> Vec<Conditioning> {
    let outputs = op
        .contract()
        .into_iter()
        .filter(|b| b.access != Access::Read && b.dtype == DType::Float);
    magnitudes(op, inputs, labels, before, expected)
        .into_iter()
        .zip(outputs)
        .map(|(magnitude, output)| Conditioning {
            magnitude,
            depth: depth(op),
            composite: composite(op, output.name),
        })
        .collect()
}

/// Whether the output `name` is computed from intermediates that a kernel may store at the
/// program's precision and read back (batch norm's statistics, LRN's scale, the updated
/// velocity of SGD, the log-sum-exp of softmax), so that their rounding reaches it. Outputs
/// rounded once, from values kept in f32, are `false`.
fn composite(op: &Op, name: &str) -> bool {
    match op {
        Op::BatchNormForwardTrain { .. } => matches!(name, "y" | "running_mean" | "running_var"),
        Op::BatchNormForwardEval { .. } => name == "y",
        Op::BatchNormBackward { .. } | Op::LrnBackward { .. } => name == "dx",
        Op::LrnForward { .. } => name == "y",
        Op::SoftmaxCrossEntropyForward { .. } => matches!(name, "loss" | "probs"),
        Op::SgdUpdate { .. } => name == "weight",
        _ => false,
    }
}

/// Terms a reduction adds per element of the op's outputs (the same for every output).
fn depth(op: &Op) -> usize {
    let conv_depth = |g: &ConvGeom| (g.conv.in_channels / g.conv.groups) * g.conv.kernel.0 * g.conv.kernel.1;
    match op {
        Op::Conv2dForward(g) => conv_depth(g) + usize::from(g.conv.bias),
        Op::Conv2dBackwardData(g) => {
            (g.conv.out_channels / g.conv.groups) * g.conv.kernel.0 * g.conv.kernel.1
        }
        Op::Conv2dBackwardFilter(g) => g.output.n * g.output.h * g.output.w,
        Op::PoolForward(g) => g.pool.kernel.0 * g.pool.kernel.1,
        Op::PoolBackward(g) => {
            let (p, s) = (g.pool.kernel, g.pool.stride);
            p.0.div_ceil(s.0.max(1)) * p.1.div_ceil(s.1.max(1))
        }
        Op::ReluForward { .. } | Op::ReluBackward { .. } | Op::ChannelCopy { .. } => 1,
        Op::LrnForward { lrn, .. } => lrn.size,
        Op::LrnBackward { lrn, .. } => lrn.size + 1,
        Op::BatchNormForwardTrain { shape, .. } | Op::BatchNormBackward { shape, .. } => {
            shape.n * shape.h * shape.w
        }
        Op::BatchNormForwardEval { .. } => 1,
        Op::LinearForward(g) => g.in_features + usize::from(g.bias),
        Op::LinearBackwardData(g) => g.out_features,
        Op::LinearBackwardParams(g) => g.batch,
        Op::SoftmaxCrossEntropyForward { classes, .. } => *classes,
        Op::SoftmaxCrossEntropyBackward { .. } => 1,
        Op::Add { .. } => 2,
        Op::GlobalAvgPoolForward { shape } => shape.h * shape.w,
        Op::GlobalAvgPoolBackward { .. } => 1,
        Op::SgdUpdate { .. } => 3,
    }
}

fn abs_all(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .map(|v| if v.is_finite() { v.abs() } else { 0.0 })
        .collect()
}

/// The reference run on the absolute values of `inputs` (and of the read-write outputs'
/// previous values): `sum |terms|` for an op linear in each input.
/// `op`'s float tensors by name: each read binding from `reads`, each written or read-write one
/// from `outputs` (both in contract order, as [`reference::execute`] takes them); the labels
/// binding, whose values are not floats, is empty.
fn named<'a, S: bind::Tensors<&'a [f64]>>(op: &Op, reads: &[&'a [f64]], outputs: &[&'a [f64]]) -> S {
    let (mut reads, mut outputs) = (reads.iter(), outputs.iter());
    let items: Vec<&'a [f64]> = op
        .contract()
        .iter()
        .map(|b| match (b.dtype, b.access) {
            (DType::U32, _) => None,
            (DType::Float, Access::Read) => reads.next(),
            (DType::Float, _) => outputs.next(),
        })
        .map(|slice| slice.copied().unwrap_or_default())
        .collect();
    op.tensors(items)
        .unwrap_or_else(|e| unreachable!("conditioning decodes by the op's contract: {e}"))
}

/// The magnitudes of `op`'s outputs, given by name, in output order (contract order, outputs
/// only).
fn in_output_order<S: bind::Tensors<Vec<f64>>>(op: &Op, magnitudes: S) -> Vec<Vec<f64>> {
    let outputs = op
        .contract()
        .into_iter()
        .map(|b| b.access != Access::Read && b.dtype == DType::Float);
    // Inputs were given empty: encode every binding, keep the outputs.
    match op.encode(magnitudes) {
        Ok(all) => all
            .into_iter()
            .zip(outputs)
            .filter(|(_, o)| *o)
            .map(|(m, _)| m)
            .collect(),
        Err(e) => unreachable!("conditioning encodes by the op's contract: {e}"),
    }
}

fn on_absolute_values(
    op: &Op,
    inputs: &[Vec<f64>],
    labels: Option<&[u32]>,
    before: &[&[f64]],
) -> Vec<Vec<f64>> {
    let input_refs: Vec<&[f64]> = inputs.iter().map(Vec::as_slice).collect();
    let mut outputs: Vec<Vec<f64>> = before.iter().map(|b| abs_all(b)).collect();
    let mut output_refs: Vec<&mut [f64]> = outputs.iter_mut().map(Vec::as_mut_slice).collect();
    reference::execute(op, &input_refs, labels, &mut output_refs);
    outputs
}

/// Sum over the `n * h * w` elements of channel `c` of a `[n, channels, hw]` tensor.
fn channel_sum(n: usize, channels: usize, hw: usize, c: usize, f: impl Fn(usize) -> f64) -> f64 {
    (0..n)
        .flat_map(|b| (0..hw).map(move |q| (b * channels + c) * hw + q))
        .map(f)
        .sum()
}

fn magnitudes(
    op: &Op,
    inputs: &[&[f64]],
    labels: Option<&[u32]>,
    before: &[&[f64]],
    expected: &[&[f64]],
) -> Vec<Vec<f64>> {
    let absolute = || -> Vec<Vec<f64>> { inputs.iter().map(|v| abs_all(v)).collect() };
    match op {
        Op::Conv2dForward(_)
        | Op::Conv2dBackwardData(_)
        | Op::Conv2dBackwardFilter(_)
        | Op::PoolForward(_)
        | Op::LinearForward(_)
        | Op::LinearBackwardData(_)
        | Op::LinearBackwardParams(_)
        | Op::ChannelCopy { .. }
        | Op::Add { .. }
        | Op::GlobalAvgPoolForward { .. }
        | Op::GlobalAvgPoolBackward { .. } => on_absolute_values(op, &absolute(), labels, before),
        // Which element a window selects depends on the signed input: keep `x`, take |dy|.
        Op::PoolBackward(_) => {
            let bind::PoolBackward { x, dy, .. } = named(op, inputs, expected);
            on_absolute_values(op, &[x.to_vec(), abs_all(dy)], labels, before)
        }
        Op::ReluBackward { .. } => {
            let bind::ReluBackward { y, dy, .. } = named(op, inputs, expected);
            on_absolute_values(op, &[y.to_vec(), abs_all(dy)], labels, before)
        }
        Op::ReluForward { .. } => {
            let bind::Unary { y, .. } = named(op, inputs, expected);
            vec![abs_all(y)]
        }
        Op::SoftmaxCrossEntropyBackward { batch, classes } => {
            // (p - onehot) / batch: the terms are p / batch and 1 / batch.
            let scale = 1.0 / *batch as f64;
            let bind::SoftmaxBackward { probs, .. } = named(op, inputs, expected);
            let labels = labels.unwrap_or_default();
            let magnitude = (0..batch * classes)
                .map(|i| {
                    let onehot = labels
                        .get(i / classes)
                        .is_some_and(|&l| l as usize == i % classes);
                    (probs[i].abs() + f64::from(u8::from(onehot))) * scale
                })
                .collect();
            vec![magnitude]
        }
        Op::LrnForward { lrn, .. } => {
            // scale = k + alpha / n * sum x^2 has positive terms only; y = x * scale^-beta
            // inherits scale's relative error times beta, plus that of pow (exp2 of a product
            // with log2, whose absolute error grows with |beta * log2(scale)|).
            let bind::LrnForward { y, scale, .. } = named(op, inputs, expected);
            let pow_factor = |s: f64| 1.0 + lrn.beta.abs() * (1.0 + s.ln().abs());
            let y_magnitude = y
                .iter()
                .zip(scale)
                .map(|(y, &s)| y.abs() * pow_factor(s))
                .collect();
            vec![y_magnitude, abs_all(scale)]
        }
        Op::LrnBackward { lrn, .. } => {
            // dx = dy * scale^-beta - factor * x * sum(dy * y / scale): the reference on |x|, |y|,
            // |dy| gives first - second with both terms non-negative, and the first is known.
            let bind::LrnBackward { x, y, scale, dy, .. } = named(op, inputs, expected);
            let pow_factor = |s: f64| 1.0 + lrn.beta.abs() * (1.0 + s.ln().abs());
            // The reference's read-only inputs, in contract order: x, y, scale, dy.
            let signed = vec![abs_all(x), abs_all(y), scale.to_vec(), abs_all(dy)];
            let difference = on_absolute_values(op, &signed, labels, before).remove(0);
            let magnitude = difference
                .iter()
                .zip(dy.iter().zip(scale))
                .map(|(d, (&dy, &s))| {
                    let first = dy.abs() * s.powf(-lrn.beta);
                    first * pow_factor(s) + (first - d).max(0.0)
                })
                .collect();
            vec![magnitude]
        }
        Op::BatchNormForwardTrain { bn, shape } => {
            let bind::BatchNormTrain {
                x,
                gamma,
                beta,
                saved_mean: mean,
                saved_invstd: invstd,
                ..
            } = named(op, inputs, expected);
            let previous: bind::BatchNormTrain<&[f64]> = named(op, inputs, before);
            let (n, channels, hw) = (shape.n, shape.c, shape.h * shape.w);
            let count = (n * hw) as f64;
            let mean_magnitude: Vec<f64> = (0..channels)
                .map(|c| channel_sum(n, channels, hw, c, |i| x[i].abs()) / count)
                .collect();
            // The variance sums squares of x - mean; (|x| + |mean|)^2 bounds each term's
            // magnitude whether a kernel subtracts the mean first or uses E[x^2] - mean^2.
            // invstd = (var + eps)^-1/2 carries half of var's relative error.
            let invstd_magnitude: Vec<f64> = (0..channels)
                .map(|c| {
                    let var_magnitude =
                        channel_sum(n, channels, hw, c, |i| (x[i].abs() + mean[c].abs()).powi(2)) / count;
                    invstd[c] * (1.0 + 0.5 * var_magnitude * invstd[c] * invstd[c])
                })
                .collect();
            let y_magnitude = (0..x.len())
                .map(|i| {
                    let c = (i / hw) % channels;
                    let centred = x[i].abs() + mean_magnitude[c];
                    gamma[c].abs() * (centred * invstd[c] + (x[i] - mean[c]).abs() * invstd_magnitude[c])
                        + beta[c].abs()
                })
                .collect();
            // running = keep * running + momentum * statistic; var = 1 / invstd^2 - eps.
            let (momentum, keep) = (bn.momentum.abs(), (1.0 - bn.momentum).abs());
            let unbias = count / (count - 1.0).max(1.0);
            let running_mean = (0..channels)
                .map(|c| keep * previous.running_mean[c].abs() + momentum * mean_magnitude[c])
                .collect();
            let running_var = (0..channels)
                .map(|c| {
                    let inverse_square = 1.0 / (invstd[c] * invstd[c]);
                    let var = inverse_square * (1.0 + 2.0 * invstd_magnitude[c] / invstd[c]) + bn.eps;
                    keep * previous.running_var[c].abs() + momentum * unbias * var
                })
                .collect();
            in_output_order(
                op,
                bind::BatchNormTrain {
                    y: y_magnitude,
                    saved_mean: mean_magnitude,
                    saved_invstd: invstd_magnitude,
                    running_mean,
                    running_var,
                    ..Default::default()
                },
            )
        }
        Op::BatchNormForwardEval { bn, shape } => {
            let bind::BatchNormEval {
                x,
                gamma,
                beta,
                running_mean,
                running_var,
                ..
            } = named(op, inputs, expected);
            let (channels, hw) = (shape.c, shape.h * shape.w);
            let magnitude = (0..x.len())
                .map(|i| {
                    let c = (i / hw) % channels;
                    let invstd = 1.0 / (running_var[c].abs() + bn.eps).sqrt();
                    2.0 * gamma[c].abs() * (x[i].abs() + running_mean[c].abs()) * invstd + beta[c].abs()
                })
                .collect();
            vec![magnitude]
        }
        Op::BatchNormBackward { shape, .. } => {
            let bind::BatchNormBackward {
                x,
                dy,
                gamma,
                saved_mean: mean,
                saved_invstd: invstd,
                ..
            } = named(op, inputs, expected);
            let (n, channels, hw) = (shape.n, shape.c, shape.h * shape.w);
            let count = (n * hw) as f64;
            let centred = |i: usize, c: usize| (x[i].abs() + mean[c].abs()) * invstd[c].abs();
            let dbeta: Vec<f64> = (0..channels)
                .map(|c| channel_sum(n, channels, hw, c, |i| dy[i].abs()))
                .collect();
            let dgamma: Vec<f64> = (0..channels)
                .map(|c| channel_sum(n, channels, hw, c, |i| dy[i].abs() * centred(i, c)))
                .collect();
            // dx = gamma * invstd / count * (count * dy - dbeta - xhat * dgamma).
            let dx = (0..x.len())
                .map(|i| {
                    let c = (i / hw) % channels;
                    gamma[c].abs() * invstd[c].abs() / count
                        * (count * dy[i].abs() + dbeta[c] + centred(i, c) * dgamma[c])
                })
                .collect();
            in_output_order(
                op,
                bind::BatchNormBackward {
                    dx,
                    dgamma,
                    dbeta,
                    ..Default::default()
                },
            )
        }
        Op::SoftmaxCrossEntropyForward { classes, .. } => {
            // loss = lse - logit[label] with lse = max + ln(sum exp(v - max)): the sum of
            // positive terms has a small relative error, which ln turns into an absolute one of
            // the same size (the `1 +`). p = exp(v - lse) has the relative error of v - lse.
            let bind::SoftmaxForward {
                logits, loss, probs, ..
            } = named(op, inputs, expected);
            let labels = labels.unwrap_or_default();
            let rows = loss.len();
            let mut loss_magnitude = Vec::with_capacity(rows);
            let mut prob_magnitude = Vec::with_capacity(probs.len());
            for (n, &loss) in loss.iter().enumerate() {
                let row = &logits[n * classes..][..*classes];
                let label = labels.get(n).map_or(0, |&l| (l as usize).min(classes - 1));
                let lse = loss + row[label];
                let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
                loss_magnitude.push(1.0 + lse.abs() + max.abs() + row[label].abs());
                for (k, &v) in row.iter().enumerate() {
                    prob_magnitude
                        .push(probs[n * classes + k].abs() * (1.0 + v.abs() + lse.abs() + max.abs()));
                }
            }
            in_output_order(
                op,
                bind::SoftmaxForward {
                    loss: loss_magnitude,
                    probs: prob_magnitude,
                    ..Default::default()
                },
            )
        }
        Op::SgdUpdate {
            lr,
            momentum,
            weight_decay,
            ..
        } => {
            // v = momentum * v + g + weight_decay * w; w = w - lr * v.
            let (lr, momentum, weight_decay) = (
                f64::from(lr.abs()),
                f64::from(momentum.abs()),
                f64::from(weight_decay.abs()),
            );
            let bind::Sgd {
                grad,
                weight,
                velocity,
            } = named(op, inputs, before);
            let v_magnitude: Vec<f64> = (0..grad.len())
                .map(|i| momentum * velocity[i].abs() + grad[i].abs() + weight_decay * weight[i].abs())
                .collect();
            let w_magnitude = (0..grad.len())
                .map(|i| weight[i].abs() + lr * v_magnitude[i])
                .collect();
            in_output_order(
                op,
                bind::Sgd {
                    weight: w_magnitude,
                    velocity: v_magnitude,
                    grad: Vec::new(),
                },
            )
        }
    }
}

/// `|A^T|`, `|G|` and `|B^T|` of Winograd F(2x2, 3x3) (see `shaders/winograd.wgsl`): the
/// transforms with their coefficients' absolute values.
const WINOGRAD_ABS_AT: [[f64; 4]; 2] = [[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]];
const WINOGRAD_ABS_G: [[f64; 3]; 4] = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.0, 0.0, 1.0]];
const WINOGRAD_ABS_BT: [[f64; 4]; 4] = [
    [1.0, 0.0, 1.0, 0.0],
    [0.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, 0.0, 1.0],
];

/// `left . x . left^T` for a `R x C` matrix `left` and a `C x C` matrix `x`.
fn sandwich<const R: usize, const C: usize>(left: &[[f64; C]; R], x: &[[f64; C]; C]) -> [[f64; R]; R] {
    let mut half = [[0.0; C]; R];
    for (i, row) in left.iter().enumerate() {
        for j in 0..C {
            half[i][j] = (0..C).map(|k| row[k] * x[k][j]).sum();
        }
    }
    let mut out = [[0.0; R]; R];
    for i in 0..R {
        for (j, row) in left.iter().enumerate() {
            out[i][j] = (0..C).map(|k| half[i][k] * row[k]).sum();
        }
    }
    out
}

/// The magnitudes of the output of a Winograd F(2x2, 3x3) convolution (forward or backward
/// data) as `shaders/winograd.wgsl` computes it, or `None` when the Winograd kernels do not
/// implement `op`. `inputs` are the op's read bindings in contract order.
///
/// # Why the direct magnitude is not enough
///
/// The kernel computes each 2x2 output tile as `Y = A^T [sum_r U_r * V_r] A` with `U_r = G g_r
/// G^T` (the 3x3 filter of source channel `r`) and `V_r = B^T d_r B` (the 4x4 source tile).
/// Every addition and product rounds relative to the size of what it adds, so the error of an
/// output is a few units of roundoff times the magnitudes that flow through the transformed
/// tile, not through the nine taps of the direct sum:
///
/// ```text
/// |Y_computed - Y| <= c * u * |A^T| [ sum_r (|G| |g_r| |G^T|) * (|B^T| |d_r| |B|) ] |A|
/// ```
///
/// to first order in `u` (the f32 unit roundoff, in which the shader does every step): each
/// transform's sums have at most three terms per stage and two stages (the input transform two
/// terms per stage, coefficients 0 and 1; the filter transform three, times 1/2, exact in binary),
/// the products one rounding, the sum over the `cin` channels the accumulation growth, the
/// output transform three terms per stage. The bracket is what this function returns per output
/// element (the bias's `|b|` added), the magnitude that [`crate::harness::verify`] multiplies by
/// its accumulation term for the Winograd variant. Expanding it, each product `|g_pq| |d_rs|`
/// appears with the weight `sum_a |A_ia| |G_ap| |B_ra|` along each axis, which is at least the
/// `1` of the exact identity (`A^T . G . B^T` picks the direct sum's taps): the bound is never
/// below the direct sum's, and it is larger where the transformed tile carries values that
/// cancel in exact arithmetic, above all where padding leaves an output with one or two real
/// taps while its tile has sixteen (the literature's growth of Winograd's error, e.g. Barabasz
/// et al., "Error analysis and improving the accuracy of Winograd convolution for DNNs", 2020,
/// is this term's size relative to the direct one's).
pub fn winograd_magnitudes(op: &Op, inputs: &[&[f64]]) -> Option<Vec<f64>> {
    match op {
        Op::Conv2dForward(g) if super::winograd::applies(g) => {
            let bind::Affine { x, w, bias, .. } = named(op, inputs, &[]);
            let c = &g.conv;
            let (cin_g, cout_g) = (c.in_channels / c.groups, c.out_channels / c.groups);
            let plan = WinogradPlan {
                groups: c.groups,
                src: (g.input.n, c.in_channels, g.input.h, g.input.w),
                dst: (c.out_channels, g.output.h, g.output.w),
                offset: (-(c.padding.0 as isize), -(c.padding.1 as isize)),
            };
            let filter = |group: usize, o: usize, r: usize, ky: usize, kx: usize| {
                w[((group * cout_g + o) * cin_g + r) * 9 + ky * 3 + kx]
            };
            let bias = |channel: usize| bias.and_then(|b| b.get(channel)).map_or(0.0, |b| b.abs());
            Some(plan.magnitudes(x, filter, bias))
        }
        Op::Conv2dBackwardData(g) if super::winograd::applies(g) => {
            // The forward convolution of dy with w[r, o, 2 - ky, 2 - kx] at offset pad - 2.
            let bind::BackwardData { dy, w, .. } = named(op, inputs, &[]);
            let c = &g.conv;
            let (cin_g, cout_g) = (c.in_channels / c.groups, c.out_channels / c.groups);
            let plan = WinogradPlan {
                groups: c.groups,
                src: (g.output.n, c.out_channels, g.output.h, g.output.w),
                dst: (c.in_channels, g.input.h, g.input.w),
                offset: (c.padding.0 as isize - 2, c.padding.1 as isize - 2),
            };
            let filter = |group: usize, o: usize, r: usize, ky: usize, kx: usize| {
                w[((group * cout_g + r) * cin_g + o) * 9 + (2 - ky) * 3 + (2 - kx)]
            };
            Some(plan.magnitudes(dy, filter, |_| 0.0))
        }
        _ => None,
    }
}

/// One stride-1 3x3 convolution as the Winograd shader sees it: a source `[n, channels, h, w]`,
/// a destination `[n, channels, h, w]` (same `n`), and the offset of the source window.
struct WinogradPlan {
    groups: usize,
    /// `(n, channels, height, width)` of the source.
    src: (usize, usize, usize, usize),
    /// `(channels, height, width)` of the destination.
    dst: (usize, usize, usize),
    /// Source row and column of a tile's top-left corner, less twice its tile coordinates.
    offset: (isize, isize),
}

impl WinogradPlan {
    /// See [`winograd_magnitudes`]: `filter(group, o, r, ky, kx)` is the tap applied to source
    /// channel `r` for destination channel `o` of `group` (both within the group); `bias(channel)`
    /// the bias's magnitude.
    fn magnitudes(
        &self,
        src: &[f64],
        filter: impl Fn(usize, usize, usize, usize, usize) -> f64,
        bias: impl Fn(usize) -> f64,
    ) -> Vec<f64> {
        let (n, src_c, src_h, src_w) = self.src;
        let (dst_c, dst_h, dst_w) = self.dst;
        let (src_cg, dst_cg) = (src_c / self.groups, dst_c / self.groups);
        let mut out = vec![0.0; n * dst_c * dst_h * dst_w];
        for group in 0..self.groups {
            // |U| of every (o, r) of the group.
            let u: Vec<[[f64; 4]; 4]> = (0..dst_cg)
                .flat_map(|o| (0..src_cg).map(move |r| (o, r)))
                .map(|(o, r)| {
                    let mut taps = [[0.0; 3]; 3];
                    for (ky, row) in taps.iter_mut().enumerate() {
                        for (kx, tap) in row.iter_mut().enumerate() {
                            let value = filter(group, o, r, ky, kx);
                            *tap = if value.is_finite() { value.abs() } else { 0.0 };
                        }
                    }
                    sandwich(&WINOGRAD_ABS_G, &taps)
                })
                .collect();
            for image in 0..n {
                for ty in 0..dst_h.div_ceil(2) {
                    for tx in 0..dst_w.div_ceil(2) {
                        let v: Vec<[[f64; 4]; 4]> = (0..src_cg)
                            .map(|r| {
                                let plane = (image * src_c + group * src_cg + r) * src_h * src_w;
                                let mut d = [[0.0; 4]; 4];
                                for (i, row) in d.iter_mut().enumerate() {
                                    for (j, value) in row.iter_mut().enumerate() {
                                        let y = (2 * ty + i) as isize + self.offset.0;
                                        let x = (2 * tx + j) as isize + self.offset.1;
                                        if (0..src_h as isize).contains(&y)
                                            && (0..src_w as isize).contains(&x)
                                        {
                                            let s = src[plane + y as usize * src_w + x as usize];
                                            *value = if s.is_finite() { s.abs() } else { 0.0 };
                                        }
                                    }
                                }
                                sandwich(&WINOGRAD_ABS_BT, &d)
                            })
                            .collect();
                        for o in 0..dst_cg {
                            let mut m = [[0.0; 4]; 4];
                            for (r, v) in v.iter().enumerate() {
                                let u = &u[o * src_cg + r];
                                for a in 0..4 {
                                    for b in 0..4 {
                                        m[a][b] += u[a][b] * v[a][b];
                                    }
                                }
                            }
                            let y_tile = sandwich(&WINOGRAD_ABS_AT, &m);
                            let channel = group * dst_cg + o;
                            let plane = (image * dst_c + channel) * dst_h * dst_w;
                            for (i, row) in y_tile.iter().enumerate() {
                                for (j, value) in row.iter().enumerate() {
                                    let (y, x) = (2 * ty + i, 2 * tx + j);
                                    if y < dst_h && x < dst_w {
                                        out[plane + y * dst_w + x] = value + bias(channel);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Conv2d;

    /// Deterministic values in [-1, 1).
    fn values(len: usize, salt: u64) -> Vec<f64> {
        (0..len as u64)
            .map(|i| {
                let h = crate::fnv1a64((i ^ (salt << 32)).to_le_bytes());
                (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// The Winograd magnitude is never below the direct sum's (each tap's weight through the
    /// transforms is at least the 1 of the exact identity), and it is far above it at an output
    /// that padding leaves one real tap.
    #[test]
    fn the_winograd_magnitude_bounds_the_direct_one() {
        let mut conv = Conv2d::square(3, 4, 3, 1, 2);
        conv.groups = 1;
        conv.bias = true;
        let g = ConvGeom::new(conv, 2, 7, 10).expect("fits");
        for op in [Op::Conv2dForward(g), Op::Conv2dBackwardData(g)] {
            let inputs: Vec<Vec<f64>> = op
                .contract()
                .iter()
                .filter(|b| b.access == Access::Read)
                .enumerate()
                .map(|(k, b)| values(b.len, k as u64 + 1))
                .collect();
            let refs: Vec<&[f64]> = inputs.iter().map(Vec::as_slice).collect();
            let absolute: Vec<Vec<f64>> = refs.iter().map(|v| abs_all(v)).collect();
            let output = op
                .contract()
                .into_iter()
                .find(|b| b.access == Access::Write)
                .expect("an output");
            let before = vec![f64::NAN; output.len];
            let direct = on_absolute_values(&op, &absolute, None, &[&before]).remove(0);
            let winograd = winograd_magnitudes(&op, &refs).expect("Winograd implements it");
            assert_eq!(winograd.len(), direct.len());
            for (w, d) in winograd.iter().zip(&direct) {
                assert!(*w >= d * (1.0 - 1e-12), "{} {w} < {d}", op.name());
            }
            let growth = winograd
                .iter()
                .zip(&direct)
                .map(|(w, d)| w / d)
                .fold(0.0, f64::max);
            assert!(growth > 4.0, "{}: {growth}", op.name());
        }
        let relu = Op::ReluForward { len: 4 };
        assert!(winograd_magnitudes(&relu, &[&[0.0; 4]]).is_none());
    }
}
