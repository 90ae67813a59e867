//! The CPU implementation of every op: the single source of truth.
//!
//! Generic over the element type: instantiated with `f64` it is the reference every backend is
//! verified against; with `f32` it is the `cpu` backend. Work is spread over all cores with
//! rayon, one output plane (or row) per task, so whole networks run in reasonable time.
//!
//! [`execute`] takes an op's float bindings split by access: `inputs` are the read-only float
//! bindings in binding order, `outputs` the written and read-write ones in binding order, and
//! `labels` the `u32` binding if the op has one. It decodes them once, through the op's contract
//! ([`super::contract`]), into the op's named tensor struct.

use super::contract::{Layout, bind};
use super::op::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom};
use crate::model::{BatchNorm, Lrn, PoolKind, Shape};
use rayon::prelude::*;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// A real number type the reference runs in (`f32` or `f64`).
pub trait Real:
    Copy
    + Send
    + Sync
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + 'static
{
    /// Converts from f64 (rounding).
    fn of(x: f64) -> Self;
    /// Converts to f64 (exact).
    fn to_f64(self) -> f64;
    /// e^self.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// self^e.
    fn powf(self, e: Self) -> Self;
    /// Whether self is NaN (the one value not ordered with itself).
    fn is_nan(self) -> bool {
        self.partial_cmp(&self).is_none()
    }
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            fn of(x: f64) -> Self {
                x as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn powf(self, e: Self) -> Self {
                <$t>::powf(self, e)
            }
        }
    };
}
impl_real!(f32);
impl_real!(f64);

/// One binding of an op as the reference receives it.
pub(crate) enum Arg<'a, T> {
    /// A read-only float tensor.
    In(&'a [T]),
    /// A written or read-write float tensor.
    Out(&'a mut [T]),
    /// The `u32` labels.
    Labels(&'a [u32]),
}

impl<'a, T> Arg<'a, T> {
    /// The slice of a read-only binding.
    pub(crate) fn input(self) -> &'a [T] {
        match self {
            Arg::In(s) => s,
            _ => unreachable!("the contract reads this binding"),
        }
    }

    /// The slice of a written or read-write binding.
    pub(crate) fn output(self) -> &'a mut [T] {
        match self {
            Arg::Out(s) => s,
            _ => unreachable!("the contract writes this binding"),
        }
    }

    /// The labels.
    pub(crate) fn labels(self) -> &'a [u32] {
        match self {
            Arg::Labels(s) => s,
            _ => unreachable!("the contract binds labels here"),
        }
    }
}

/// Runs one op. See the module docs for how bindings are split.
///
/// # Panics
/// When the slices do not match the op's contract; [`crate::backend::Program::push`] checks
/// that contract for every op that reaches a backend.
pub fn execute<T: Real>(op: &Op, inputs: &[&[T]], labels: Option<&[u32]>, outputs: &mut [&mut [T]]) {
    let layout = op.layout();
    run(op, &layout, bound(&layout, inputs, labels, outputs)).unwrap_or_else(|e| panic!("reference: {e}"));
}

/// The split bindings of [`execute`] back in contract order (`layout`, the op's), ready to
/// decode by name ([`Layout::tensors`]).
pub(crate) fn bound<'a, T>(
    layout: &Layout,
    inputs: &[&'a [T]],
    labels: Option<&'a [u32]>,
    outputs: &'a mut [&mut [T]],
) -> Vec<Arg<'a, T>> {
    let (mut ins, mut outs) = (inputs.iter(), outputs.iter_mut());
    layout
        .bindings()
        .filter_map(|(access, dtype)| match (dtype, access) {
            (DType::U32, _) => labels.map(Arg::Labels),
            (DType::Float, Access::Read) => ins.next().map(|s| Arg::In(s)),
            (DType::Float, _) => outs.next().map(|s| Arg::Out(s)),
        })
        .collect()
}

/// Runs `op` on its bindings in contract order ([`bound`]), decoded through its `layout`.
pub(crate) fn run<T: Real>(op: &Op, layout: &Layout, items: Vec<Arg<'_, T>>) -> crate::Result<()> {
    match op {
        Op::Conv2dForward(g) => {
            let bind::Affine { x, w, bias, y } = layout.tensors(items)?;
            conv2d_forward(g, x.input(), w.input(), bias.map(Arg::input), y.output());
        }
        Op::Conv2dBackwardData(g) => {
            let bind::BackwardData { dy, w, dx } = layout.tensors(items)?;
            conv2d_backward_data(g, dy.input(), w.input(), dx.output());
        }
        Op::Conv2dBackwardFilter(g) => {
            let bind::BackwardParams { x, dy, dw, dbias } = layout.tensors(items)?;
            conv2d_backward_filter(g, x.input(), dy.input(), dw.output(), dbias.map(Arg::output));
        }
        Op::PoolForward(g) => {
            let bind::Unary { x, y } = layout.tensors(items)?;
            pool_forward(g, x.input(), y.output());
        }
        Op::PoolBackward(g) => {
            let bind::PoolBackward { x, dy, dx } = layout.tensors(items)?;
            pool_backward(g, x.input(), dy.input(), dx.output());
        }
        Op::ReluForward { .. } => {
            let bind::Unary { x, y } = layout.tensors(items)?;
            relu_forward(x.input(), y.output());
        }
        Op::ReluBackward { .. } => {
            let bind::ReluBackward { y, dy, dx } = layout.tensors(items)?;
            relu_backward(y.input(), dy.input(), dx.output());
        }
        Op::LrnForward { lrn, shape } => {
            let bind::LrnForward { x, y, scale } = layout.tensors(items)?;
            lrn_forward(lrn, shape, x.input(), y.output(), scale.output());
        }
        Op::LrnBackward { lrn, shape } => {
            let bind::LrnBackward { x, y, scale, dy, dx } = layout.tensors(items)?;
            lrn_backward(
                lrn,
                shape,
                x.input(),
                y.input(),
                scale.input(),
                dy.input(),
                dx.output(),
            );
        }
        Op::BatchNormForwardTrain { bn, shape } => {
            let t: bind::BatchNormTrain<Arg<'_, T>> = layout.tensors(items)?;
            let (mean, invstd) = (t.saved_mean.output(), t.saved_invstd.output());
            batch_norm_forward_train(
                bn,
                shape,
                [t.x.input(), t.gamma.input(), t.beta.input()],
                t.y.output(),
                mean,
                invstd,
            );
            update_running_stats(
                bn,
                shape,
                mean,
                invstd,
                t.running_mean.output(),
                t.running_var.output(),
            );
        }
        Op::BatchNormForwardEval { bn, shape } => {
            let t: bind::BatchNormEval<Arg<'_, T>> = layout.tensors(items)?;
            let stats = [t.gamma, t.beta, t.running_mean, t.running_var].map(Arg::input);
            batch_norm_forward_eval(bn, shape, t.x.input(), stats, t.y.output());
        }
        Op::BatchNormBackward { shape, .. } => {
            let t: bind::BatchNormBackward<Arg<'_, T>> = layout.tensors(items)?;
            let reads = [t.x, t.dy, t.gamma, t.saved_mean, t.saved_invstd].map(Arg::input);
            batch_norm_backward(shape, reads, t.dx.output(), t.dgamma.output(), t.dbeta.output());
        }
        Op::LinearForward(g) => {
            let bind::Affine { x, w, bias, y } = layout.tensors(items)?;
            linear_forward(g, x.input(), w.input(), bias.map(Arg::input), y.output());
        }
        Op::LinearBackwardData(g) => {
            let bind::BackwardData { dy, w, dx } = layout.tensors(items)?;
            linear_backward_data(g, dy.input(), w.input(), dx.output());
        }
        Op::LinearBackwardParams(g) => {
            let bind::BackwardParams { x, dy, dw, dbias } = layout.tensors(items)?;
            linear_backward_params(g, x.input(), dy.input(), dw.output(), dbias.map(Arg::output));
        }
        Op::SoftmaxCrossEntropyForward { classes, .. } => {
            let bind::SoftmaxForward {
                logits,
                labels,
                loss,
                probs,
            } = layout.tensors(items)?;
            let labels = labels.labels();
            op.check_labels(labels)?;
            softmax_cross_entropy_forward(*classes, logits.input(), labels, loss.output(), probs.output());
        }
        Op::SoftmaxCrossEntropyBackward { batch, classes } => {
            let bind::SoftmaxBackward {
                probs,
                labels,
                dlogits,
            } = layout.tensors(items)?;
            let labels = labels.labels();
            op.check_labels(labels)?;
            softmax_cross_entropy_backward(*batch, *classes, probs.input(), labels, dlogits.output());
        }
        Op::ChannelCopy {
            hw,
            total_channels,
            part_channels,
            offset,
            into_concat,
            ..
        } => {
            let bind::Copy { src, dst } = layout.tensors(items)?;
            channel_copy(
                *hw,
                *total_channels,
                *part_channels,
                *offset,
                *into_concat,
                src.input(),
                dst.output(),
            );
        }
        Op::Add { .. } => {
            let bind::Add { a, b, y } = layout.tensors(items)?;
            let (a, b) = (a.input(), b.input());
            y.output()
                .par_iter_mut()
                .zip(a.par_iter().zip(b.par_iter()))
                .for_each(|(y, (&a, &b))| *y = a + b);
        }
        Op::GlobalAvgPoolForward { shape } => {
            let bind::Unary { x, y } = layout.tensors(items)?;
            let hw = shape.h * shape.w;
            let scale = T::of(1.0 / hw as f64);
            y.output()
                .par_iter_mut()
                .zip(x.input().par_chunks(hw))
                .for_each(|(y, plane)| {
                    *y = sum(plane.iter().copied()) * scale;
                });
        }
        Op::GlobalAvgPoolBackward { shape } => {
            let bind::Gradient { dy, dx } = layout.tensors(items)?;
            let hw = shape.h * shape.w;
            let scale = T::of(1.0 / hw as f64);
            dx.output()
                .par_chunks_mut(hw)
                .zip(dy.input().par_iter())
                .for_each(|(plane, &dy)| {
                    plane.iter_mut().for_each(|dx| *dx = dy * scale);
                });
        }
        Op::SgdUpdate {
            lr,
            momentum,
            weight_decay,
            ..
        } => {
            let bind::Sgd {
                grad,
                weight,
                velocity,
            } = layout.tensors(items)?;
            let (lr, momentum, weight_decay) = (
                T::of(*lr as f64),
                T::of(*momentum as f64),
                T::of(*weight_decay as f64),
            );
            weight
                .output()
                .par_iter_mut()
                .zip(velocity.output().par_iter_mut().zip(grad.input().par_iter()))
                .for_each(|(w, (v, &g))| {
                    *v = momentum * *v + g + weight_decay * *w;
                    *w = *w - lr * *v;
                });
        }
    }
    Ok(())
}

fn sum<T: Real>(values: impl Iterator<Item = T>) -> T {
    values.fold(T::default(), |a, b| a + b)
}

/// The outputs `0..outputs` along one axis whose input index for kernel tap `k`
/// (`out * stride + k * dilation - pad`) falls inside `0..size`, as one range, so that the inner loops run without a test per
/// element (and vectorise at stride 1).
fn valid_outputs(
    outputs: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
    size: usize,
) -> std::ops::Range<usize> {
    let offset = k * dilation;
    // out * stride + offset >= pad
    let lo = pad.saturating_sub(offset).div_ceil(stride);
    // out * stride + offset - pad <= size - 1
    let hi = if offset > size - 1 + pad {
        0
    } else {
        (size - 1 + pad - offset) / stride + 1
    };
    lo.min(outputs)..hi.min(outputs).max(lo.min(outputs))
}

/// Where kernel tap `(ki, kj)` of a convolution meets one image plane: runs of
/// `(output start, input start, length)` such that output element `output start + j` reads
/// input element `input start + j * stride` (the column stride) for `j` in `0..length`. Along a
/// row, output `(oh, ow)` reads input `(oh * stride + ki * dilation - pad,
/// ow * stride + kj * dilation - pad)` when that is inside the input; a run is the row's
/// outputs that are. At stride 1, when every output of a row has its input and the rows are
/// as wide as the input's, consecutive rows continue each other: the tap's rows are one run.
fn tap_runs(g: &ConvGeom, ki: usize, kj: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let (c, i, o) = (&g.conv, &g.input, &g.output);
    let rows = valid_outputs(o.h, ki, c.stride.0, c.padding.0, c.dilation.0, i.h);
    let columns = valid_outputs(o.w, kj, c.stride.1, c.padding.1, c.dilation.1, i.w);
    let (rows, columns) = if rows.is_empty() || columns.is_empty() {
        (0..0, 0..0)
    } else {
        (rows, columns)
    };
    let input = move |oh: usize| {
        let ih = oh * c.stride.0 + ki * c.dilation.0 - c.padding.0;
        ih * i.w + columns.start * c.stride.1 + kj * c.dilation.1 - c.padding.1
    };
    let contiguous = c.stride == (1, 1) && i.w == o.w && columns.len() == o.w;
    let (step, run) = if contiguous {
        (rows.len().max(1), rows.len() * o.w)
    } else {
        (1, columns.len())
    };
    rows.step_by(step)
        .map(move |oh| (oh * o.w + columns.start, input(oh), run))
}

/// `ys[j] += a * xs[j * stride]` for every `j` of `ys`. Stride 1, most layers, gets its own
/// loop over two slices, which the compiler vectorises.
fn axpy_gather<T: Real>(ys: &mut [T], a: T, xs: &[T], stride: usize) {
    if stride == 1 {
        for (y, &x) in ys.iter_mut().zip(xs) {
            *y += a * x;
        }
    } else {
        for (y, &x) in ys.iter_mut().zip(xs.iter().step_by(stride)) {
            *y += a * x;
        }
    }
}

/// `ys[j * stride] += a * xs[j]` for every `j` of `xs`.
fn axpy_scatter<T: Real>(ys: &mut [T], stride: usize, a: T, xs: &[T]) {
    if stride == 1 {
        for (y, &x) in ys.iter_mut().zip(xs) {
            *y += a * x;
        }
    } else {
        for (y, &x) in ys.iter_mut().step_by(stride).zip(xs) {
            *y += a * x;
        }
    }
}

/// Independent partial sums in [`dot_gather`]: enough for the compiler to vectorise the loop.
/// In f64 the order of the sum changes nothing the f32 bounds could see.
const LANES: usize = 8;

/// `sum_j a[j] * b[j * stride]` over every `j` of `a`.
fn dot_gather<T: Real>(a: &[T], b: &[T], stride: usize) -> T {
    if stride != 1 {
        return sum(a.iter().zip(b.iter().step_by(stride)).map(|(&x, &y)| x * y));
    }
    let b = &b[..a.len()];
    let mut lanes = [T::default(); LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail = sum(a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(&x, &y)| x * y));
    for (x, y) in a_chunks.zip(b_chunks) {
        for l in 0..LANES {
            lanes[l] += x[l] * y[l];
        }
    }
    sum(lanes.into_iter()) + tail
}

fn conv2d_forward<T: Real>(g: &ConvGeom, x: &[T], w: &[T], bias: Option<&[T]>, y: &mut [T]) {
    let (c, i, o) = (&g.conv, &g.input, &g.output);
    let (cin_g, cout_g) = (c.in_channels / c.groups, c.out_channels / c.groups);
    let (kh, kw) = c.kernel;
    y.par_chunks_mut(o.h * o.w).enumerate().for_each(|(p, out)| {
        let (n, oc) = (p / o.c, p % o.c);
        let group = oc / cout_g;
        out.fill(bias.map_or(T::default(), |b| b[oc]));
        for icl in 0..cin_g {
            let ic = group * cin_g + icl;
            let xin = &x[(n * i.c + ic) * i.h * i.w..][..i.h * i.w];
            for ki in 0..kh {
                for kj in 0..kw {
                    let wv = w[((oc * cin_g + icl) * kh + ki) * kw + kj];
                    for (at, from, len) in tap_runs(g, ki, kj) {
                        axpy_gather(&mut out[at..][..len], wv, &xin[from..], c.stride.1);
                    }
                }
            }
        }
    });
}

fn conv2d_backward_data<T: Real>(g: &ConvGeom, dy: &[T], w: &[T], dx: &mut [T]) {
    let (c, i, o) = (&g.conv, &g.input, &g.output);
    let (cin_g, cout_g) = (c.in_channels / c.groups, c.out_channels / c.groups);
    let (kh, kw) = c.kernel;
    dx.par_chunks_mut(i.h * i.w).enumerate().for_each(|(p, din)| {
        let (n, ic) = (p / i.c, p % i.c);
        let (group, icl) = (ic / cin_g, ic % cin_g);
        din.fill(T::default());
        for oc in group * cout_g..(group + 1) * cout_g {
            let dout = &dy[(n * o.c + oc) * o.h * o.w..][..o.h * o.w];
            for ki in 0..kh {
                for kj in 0..kw {
                    let wv = w[((oc * cin_g + icl) * kh + ki) * kw + kj];
                    for (at, from, len) in tap_runs(g, ki, kj) {
                        axpy_scatter(&mut din[from..], c.stride.1, wv, &dout[at..][..len]);
                    }
                }
            }
        }
    });
}

fn conv2d_backward_filter<T: Real>(g: &ConvGeom, x: &[T], dy: &[T], dw: &mut [T], dbias: Option<&mut [T]>) {
    let (c, i, o) = (&g.conv, &g.input, &g.output);
    let (cin_g, cout_g) = (c.in_channels / c.groups, c.out_channels / c.groups);
    let (kh, kw) = c.kernel;
    dw.par_chunks_mut(cin_g * kh * kw)
        .enumerate()
        .for_each(|(oc, dwo)| {
            let group = oc / cout_g;
            dwo.fill(T::default());
            for n in 0..i.n {
                let dout = &dy[(n * o.c + oc) * o.h * o.w..][..o.h * o.w];
                for icl in 0..cin_g {
                    let xin = &x[(n * i.c + group * cin_g + icl) * i.h * i.w..][..i.h * i.w];
                    for ki in 0..kh {
                        for kj in 0..kw {
                            let tap = tap_runs(g, ki, kj).map(|(at, from, len)| {
                                dot_gather(&dout[at..][..len], &xin[from..], c.stride.1)
                            });
                            dwo[(icl * kh + ki) * kw + kj] += sum(tap);
                        }
                    }
                }
            }
        });
    if let Some(db) = dbias {
        let plane = o.h * o.w;
        db.par_iter_mut().enumerate().for_each(|(oc, b)| {
            *b = sum((0..o.n).flat_map(|n| dy[(n * o.c + oc) * plane..][..plane].iter().copied()));
        });
    }
}

/// The window of pooling output `out` along one axis: `(start, end)` clipped to the input, and
/// the divisor span including padding (Torch's `count_include_pad`).
fn pool_window(out: usize, k: usize, s: usize, p: usize, size: usize) -> (usize, usize, usize) {
    let start = (out * s) as isize - p as isize;
    let end_padded = (start + k as isize).min((size + p) as isize);
    let span = (end_padded - start) as usize;
    let lo = start.max(0) as usize;
    let hi = (end_padded.min(size as isize)).max(0) as usize;
    (lo, hi, span)
}

/// Whether max pooling's scan of a window, in row-major order, moves from the element holding
/// `best` to one holding `v`: PyTorch's rule `v > best || isnan(v)`. A window holding a NaN
/// therefore pools to NaN (and its gradient goes to the last NaN); otherwise to the first
/// maximum, which also takes the gradient.
fn max_pool_takes<T: Real>(v: T, best: T) -> bool {
    v > best || v.is_nan()
}

fn pool_forward<T: Real>(g: &PoolGeom, x: &[T], y: &mut [T]) {
    let (pl, i, o) = (&g.pool, &g.input, &g.output);
    y.par_chunks_mut(o.h * o.w).enumerate().for_each(|(p, out)| {
        let xin = &x[p * i.h * i.w..][..i.h * i.w];
        for oh in 0..o.h {
            let (h0, h1, hspan) = pool_window(oh, pl.kernel.0, pl.stride.0, pl.padding.0, i.h);
            for ow in 0..o.w {
                let (w0, w1, wspan) = pool_window(ow, pl.kernel.1, pl.stride.1, pl.padding.1, i.w);
                let cells = (h0..h1).flat_map(|ih| (w0..w1).map(move |iw| ih * i.w + iw));
                out[oh * o.w + ow] = match pl.kind {
                    PoolKind::Max => {
                        let mut best: Option<T> = None;
                        for idx in cells {
                            if best.is_none_or(|b| max_pool_takes(xin[idx], b)) {
                                best = Some(xin[idx]);
                            }
                        }
                        best.unwrap_or_default()
                    }
                    PoolKind::Avg => {
                        let count = if pl.count_include_pad {
                            hspan * wspan
                        } else {
                            (h1 - h0) * (w1 - w0)
                        };
                        sum(cells.map(|idx| xin[idx])) / T::of(count.max(1) as f64)
                    }
                };
            }
        }
    });
}

fn pool_backward<T: Real>(g: &PoolGeom, x: &[T], dy: &[T], dx: &mut [T]) {
    let (pl, i, o) = (&g.pool, &g.input, &g.output);
    dx.par_chunks_mut(i.h * i.w).enumerate().for_each(|(p, din)| {
        let xin = &x[p * i.h * i.w..][..i.h * i.w];
        let dout = &dy[p * o.h * o.w..][..o.h * o.w];
        din.fill(T::default());
        for oh in 0..o.h {
            let (h0, h1, hspan) = pool_window(oh, pl.kernel.0, pl.stride.0, pl.padding.0, i.h);
            for ow in 0..o.w {
                let (w0, w1, wspan) = pool_window(ow, pl.kernel.1, pl.stride.1, pl.padding.1, i.w);
                let grad = dout[oh * o.w + ow];
                let mut cells = (h0..h1).flat_map(|ih| (w0..w1).map(move |iw| ih * i.w + iw));
                match pl.kind {
                    PoolKind::Max => {
                        let Some(first) = cells.next() else { continue };
                        let best = cells.fold(
                            first,
                            |b, idx| {
                                if max_pool_takes(xin[idx], xin[b]) { idx } else { b }
                            },
                        );
                        din[best] += grad;
                    }
                    PoolKind::Avg => {
                        let count = if pl.count_include_pad {
                            hspan * wspan
                        } else {
                            (h1 - h0) * (w1 - w0)
                        };
                        let share = grad / T::of(count.max(1) as f64);
                        cells.for_each(|idx| din[idx] += share);
                    }
                }
            }
        }
    });
}

/// `max(x, 0)`, with NaN passed through as PyTorch does, so that a NaN from an earlier op is
/// not hidden from verification.
fn relu_forward<T: Real>(x: &[T], y: &mut [T]) {
    y.par_iter_mut().zip(x.par_iter()).for_each(|(y, &x)| {
        let nan = x.partial_cmp(&x).is_none();
        *y = if x > T::default() || nan { x } else { T::default() };
    });
}

fn relu_backward<T: Real>(y: &[T], dy: &[T], dx: &mut [T]) {
    dx.par_iter_mut()
        .zip(y.par_iter().zip(dy.par_iter()))
        .for_each(|(dx, (&y, &dy))| {
            *dx = if y > T::default() { dy } else { T::default() };
        });
}

/// Channels `[lo, hi)` in the LRN window of channel `c` of `channels`: PyTorch's
/// `c - size / 2 ..= c + (size - 1) / 2`, clipped to the channels. An even `size` reaches one
/// channel further down than up (`LocalResponseNorm` pads `size / 2` channels before and
/// `(size - 1) / 2` after); an odd one is centred.
fn lrn_window(c: usize, size: usize, channels: usize) -> (usize, usize) {
    (c.saturating_sub(size / 2), (c + (size - 1) / 2 + 1).min(channels))
}

/// Channels `[lo, hi)` whose LRN window ([`lrn_window`]) holds channel `c`: the mirror image,
/// `c - (size - 1) / 2 ..= c + size / 2`.
fn lrn_windows_holding(c: usize, size: usize, channels: usize) -> (usize, usize) {
    (c.saturating_sub((size - 1) / 2), (c + size / 2 + 1).min(channels))
}

fn lrn_forward<T: Real>(lrn: &Lrn, s: &Shape, x: &[T], y: &mut [T], scale: &mut [T]) {
    let hw = s.h * s.w;
    let (k, alpha_n, beta) = (T::of(lrn.k), T::of(lrn.alpha / lrn.size as f64), T::of(lrn.beta));
    y.par_chunks_mut(hw)
        .zip(scale.par_chunks_mut(hw))
        .enumerate()
        .for_each(|(p, (yp, sp))| {
            let (n, c) = (p / s.c, p % s.c);
            let (lo, hi) = lrn_window(c, lrn.size, s.c);
            for q in 0..hw {
                let sq = sum((lo..hi).map(|cc| {
                    let v = x[(n * s.c + cc) * hw + q];
                    v * v
                }));
                sp[q] = k + alpha_n * sq;
                yp[q] = x[p * hw + q] * sp[q].powf(-beta);
            }
        });
}

fn lrn_backward<T: Real>(lrn: &Lrn, s: &Shape, x: &[T], y: &[T], scale: &[T], dy: &[T], dx: &mut [T]) {
    let hw = s.h * s.w;
    let beta = T::of(lrn.beta);
    let factor = T::of(2.0 * lrn.alpha * lrn.beta / lrn.size as f64);
    dx.par_chunks_mut(hw).enumerate().for_each(|(p, dxp)| {
        let (n, c) = (p / s.c, p % s.c);
        let (lo, hi) = lrn_windows_holding(c, lrn.size, s.c);
        for (q, d) in dxp.iter_mut().enumerate() {
            let at = p * hw + q;
            let acc = sum((lo..hi).map(|cc| {
                let j = (n * s.c + cc) * hw + q;
                dy[j] * y[j] / scale[j]
            }));
            *d = dy[at] * scale[at].powf(-beta) - factor * x[at] * acc;
        }
    });
}

/// Per-channel sums over N, H, W of `f(index)`.
fn per_channel_sum<T: Real>(s: &Shape, c: usize, f: impl Fn(usize) -> T) -> T {
    let hw = s.h * s.w;
    sum((0..s.n)
        .flat_map(|n| (0..hw).map(move |q| (n * s.c + c) * hw + q))
        .map(f))
}

fn batch_norm_forward_train<T: Real>(
    bn: &BatchNorm,
    s: &Shape,
    [x, gamma, beta]: [&[T]; 3],
    y: &mut [T],
    mean: &mut [T],
    invstd: &mut [T],
) {
    let count = T::of((s.n * s.h * s.w) as f64);
    mean.par_iter_mut()
        .zip(invstd.par_iter_mut())
        .enumerate()
        .for_each(|(c, (m, is))| {
            *m = per_channel_sum(s, c, |i| x[i]) / count;
            let var = per_channel_sum(s, c, |i| (x[i] - *m) * (x[i] - *m)) / count;
            *is = T::of(1.0) / (var + T::of(bn.eps)).sqrt();
        });
    let hw = s.h * s.w;
    y.par_chunks_mut(hw).enumerate().for_each(|(p, yp)| {
        let c = p % s.c;
        for (q, v) in yp.iter_mut().enumerate() {
            *v = gamma[c] * (x[p * hw + q] - mean[c]) * invstd[c] + beta[c];
        }
    });
}

fn update_running_stats<T: Real>(
    bn: &BatchNorm,
    s: &Shape,
    mean: &[T],
    invstd: &[T],
    running_mean: &mut [T],
    running_var: &mut [T],
) {
    let m = (s.n * s.h * s.w) as f64;
    let unbias = T::of(m / (m - 1.0).max(1.0));
    let (mom, keep) = (T::of(bn.momentum), T::of(1.0 - bn.momentum));
    for c in 0..mean.len() {
        let var = T::of(1.0) / (invstd[c] * invstd[c]) - T::of(bn.eps);
        running_mean[c] = keep * running_mean[c] + mom * mean[c];
        running_var[c] = keep * running_var[c] + mom * var * unbias;
    }
}

fn batch_norm_forward_eval<T: Real>(
    bn: &BatchNorm,
    s: &Shape,
    x: &[T],
    [gamma, beta, running_mean, running_var]: [&[T]; 4],
    y: &mut [T],
) {
    let hw = s.h * s.w;
    y.par_chunks_mut(hw).enumerate().for_each(|(p, yp)| {
        let c = p % s.c;
        let invstd = T::of(1.0) / (running_var[c] + T::of(bn.eps)).sqrt();
        for (q, v) in yp.iter_mut().enumerate() {
            *v = gamma[c] * (x[p * hw + q] - running_mean[c]) * invstd + beta[c];
        }
    });
}

fn batch_norm_backward<T: Real>(
    s: &Shape,
    [x, dy, gamma, mean, invstd]: [&[T]; 5],
    dx: &mut [T],
    dgamma: &mut [T],
    dbeta: &mut [T],
) {
    dgamma
        .par_iter_mut()
        .zip(dbeta.par_iter_mut())
        .enumerate()
        .for_each(|(c, (dg, db))| {
            *db = per_channel_sum(s, c, |i| dy[i]);
            *dg = per_channel_sum(s, c, |i| dy[i] * (x[i] - mean[c]) * invstd[c]);
        });
    let hw = s.h * s.w;
    let count = T::of((s.n * hw) as f64);
    dx.par_chunks_mut(hw).enumerate().for_each(|(p, dxp)| {
        let c = p % s.c;
        for (q, v) in dxp.iter_mut().enumerate() {
            let i = p * hw + q;
            let xhat = (x[i] - mean[c]) * invstd[c];
            *v = gamma[c] * invstd[c] / count * (count * dy[i] - dbeta[c] - xhat * dgamma[c]);
        }
    });
}

fn linear_forward<T: Real>(g: &LinearGeom, x: &[T], w: &[T], bias: Option<&[T]>, y: &mut [T]) {
    y.par_chunks_mut(g.y_stride).enumerate().for_each(|(n, row)| {
        let xr = &x[n * g.in_features..][..g.in_features];
        for (o, v) in row[g.y_offset..][..g.out_features].iter_mut().enumerate() {
            let wr = &w[o * g.in_features..][..g.in_features];
            *v = sum(xr.iter().zip(wr).map(|(&a, &b)| a * b)) + bias.map_or(T::default(), |b| b[o]);
        }
    });
}

fn linear_backward_data<T: Real>(g: &LinearGeom, dy: &[T], w: &[T], dx: &mut [T]) {
    dx.par_chunks_mut(g.in_features).enumerate().for_each(|(n, row)| {
        row.fill(T::default());
        for o in 0..g.out_features {
            let d = dy[n * g.y_stride + g.y_offset + o];
            for (v, &wv) in row.iter_mut().zip(&w[o * g.in_features..][..g.in_features]) {
                *v += d * wv;
            }
        }
    });
}

fn linear_backward_params<T: Real>(g: &LinearGeom, x: &[T], dy: &[T], dw: &mut [T], dbias: Option<&mut [T]>) {
    let dy_at = |n: usize, o: usize| dy[n * g.y_stride + g.y_offset + o];
    dw.par_chunks_mut(g.in_features).enumerate().for_each(|(o, row)| {
        row.fill(T::default());
        for n in 0..g.batch {
            let d = dy_at(n, o);
            for (v, &xv) in row.iter_mut().zip(&x[n * g.in_features..][..g.in_features]) {
                *v += d * xv;
            }
        }
    });
    if let Some(db) = dbias {
        for (o, b) in db.iter_mut().enumerate() {
            *b = sum((0..g.batch).map(|n| dy_at(n, o)));
        }
    }
}

fn softmax_cross_entropy_forward<T: Real>(
    classes: usize,
    logits: &[T],
    labels: &[u32],
    loss: &mut [T],
    probs: &mut [T],
) {
    loss.par_iter_mut()
        .zip(probs.par_chunks_mut(classes))
        .enumerate()
        .for_each(|(n, (l, p))| {
            let row = &logits[n * classes..][..classes];
            let max = row.iter().copied().fold(row[0], |a, b| if b > a { b } else { a });
            let lse = max + sum(row.iter().map(|&v| (v - max).exp())).ln();
            for (pv, &v) in p.iter_mut().zip(row) {
                *pv = (v - lse).exp();
            }
            *l = lse - row[labels[n] as usize];
        });
}

fn softmax_cross_entropy_backward<T: Real>(
    batch: usize,
    classes: usize,
    probs: &[T],
    labels: &[u32],
    d: &mut [T],
) {
    let scale = T::of(1.0 / batch as f64);
    d.par_chunks_mut(classes).enumerate().for_each(|(n, row)| {
        let label = labels[n] as usize;
        for (k, v) in row.iter_mut().enumerate() {
            let onehot = if k == label { T::of(1.0) } else { T::default() };
            *v = (probs[n * classes + k] - onehot) * scale;
        }
    });
}

fn channel_copy<T: Real>(
    hw: usize,
    total: usize,
    part: usize,
    offset: usize,
    into_concat: bool,
    src: &[T],
    dst: &mut [T],
) {
    let block = part * hw;
    if into_concat {
        dst.par_chunks_mut(total * hw)
            .zip(src.par_chunks(block))
            .for_each(|(d, s)| {
                d[offset * hw..][..block].copy_from_slice(s);
            });
    } else {
        dst.par_chunks_mut(block)
            .zip(src.par_chunks(total * hw))
            .for_each(|(d, s)| {
                d.copy_from_slice(&s[offset * hw..][..block]);
            });
    }
}

#[cfg(test)]
mod tests {
    use super::{relu_forward, tap_runs, valid_outputs};
    use crate::kernels::ConvGeom;
    use crate::model::{Conv2d, Shape};
    use proptest::prelude::*;

    /// The input index of output `out` for tap `k` along one axis, when in bounds: the
    /// definition `valid_outputs` must agree with.
    fn input_index(
        out: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dilation: usize,
        size: usize,
    ) -> Option<usize> {
        (out * stride + k * dilation)
            .checked_sub(pad)
            .filter(|&i| i < size)
    }

    proptest! {
        /// The range is exactly the outputs whose input index is in bounds.
        #[test]
        fn valid_outputs_are_those_with_an_input(
            outputs in 0usize..40,
            k in 0usize..12,
            stride in 1usize..5,
            pad in 0usize..8,
            dilation in 1usize..4,
            size in 1usize..40,
        ) {
            let expected: Vec<usize> = (0..outputs)
                .filter(|&o| input_index(o, k, stride, pad, dilation, size).is_some())
                .collect();
            let got: Vec<usize> = valid_outputs(outputs, k, stride, pad, dilation, size).collect();
            prop_assert_eq!(got, expected);
        }

        /// The runs of a tap cover exactly the (output, input) pairs of the definition, each
        /// once, whether rows merge into one run or not.
        #[test]
        fn tap_runs_are_the_pairs_of_the_definition(
            (kh, kw) in (1usize..6, 1usize..6),
            (ki, kj) in (0usize..6, 0usize..6),
            stride in (1usize..4, 1usize..4),
            padding in (0usize..4, 0usize..4),
            dilation in (1usize..3, 1usize..3),
            (h, w) in (1usize..20, 1usize..20),
        ) {
            prop_assume!(ki < kh && kj < kw);
            let size = |n: usize, k: usize, s: usize, p: usize, d: usize| (n + 2 * p).checked_sub(d * (k - 1) + 1).map(|v| v / s + 1);
            let (Some(oh), Some(ow)) = (
                size(h, kh, stride.0, padding.0, dilation.0),
                size(w, kw, stride.1, padding.1, dilation.1),
            ) else {
                return Ok(());
            };
            let conv = Conv2d { kernel: (kh, kw), stride, padding, dilation, ..Conv2d::square(1, 1, 1, 1, 0) };
            let g = ConvGeom { conv, input: Shape::new(1, 1, h, w), output: Shape::new(1, 1, oh, ow) };
            let mut expected = Vec::new();
            for r in 0..oh {
                for c in 0..ow {
                    if let (Some(ih), Some(iw)) = (
                        input_index(r, ki, stride.0, padding.0, dilation.0, h),
                        input_index(c, kj, stride.1, padding.1, dilation.1, w),
                    ) {
                        expected.push((r * ow + c, ih * w + iw));
                    }
                }
            }
            let got: Vec<(usize, usize)> = tap_runs(&g, ki, kj)
                .flat_map(|(at, from, len)| (0..len).map(move |j| (at + j, from + j * stride.1)))
                .collect();
            prop_assert_eq!(got, expected);
        }
    }

    /// NaN goes through ReLU, as in PyTorch, so that verification sees it.
    #[test]
    fn relu_passes_nan_through() {
        let x = [f64::NAN, -1.0, 0.0, 2.0, f64::NEG_INFINITY];
        let mut y = [7.0; 5];
        relu_forward(&x, &mut y);
        assert!(y[0].is_nan());
        assert_eq!(y[1..], [0.0, 0.0, 2.0, 0.0]);
    }
}
