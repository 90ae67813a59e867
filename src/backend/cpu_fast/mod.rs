//! The `cpu` backend's f32 kernels: convolutions as blocked im2col + GEMM and fully connected
//! layers as GEMM, for all three passes, on every core (rayon). The GEMM is matrixmultiply's
//! `sgemm`: on the 2-core x86-64 machine this was written on, for AlexNet conv2 and LeNet
//! shapes, it matched or beat the `gemm` crate single-threaded (the way these kernels call it,
//! one GEMM per task), and it builds in a quarter of the time with no dependencies of its own.
//!
//! ReLU, softmax cross-entropy and SGD compute exactly what the reference computes, but small
//! ones stay on the calling thread. Every other op (pooling, batch norm, LRN, concatenation...)
//! is memory-bound and runs the reference's f32 instance, which streams through its planes on
//! all cores.

mod conv;
mod elementwise;
mod gemm;
mod linear;
#[cfg(test)]
mod tests;

use crate::kernels::contract::Layout;
use crate::kernels::reference::{self, Arg};
use crate::kernels::{Op, bind};

/// Runs one op in f32, with the bindings split as [`reference::execute`] documents: the
/// convolution and fully connected ops through GEMM, the cheap ops of every step in this
/// module, the rest through the reference.
///
/// # Panics
/// When the slices do not match the op's contract (as [`reference::execute`]).
pub fn execute(op: &Op, inputs: &[&[f32]], labels: Option<&[u32]>, outputs: &mut [&mut [f32]]) {
    execute_laid_out(op, &op.layout(), inputs, labels, outputs);
}

/// [`execute`] with the op's [`Layout`] resolved by the caller, once for every run.
pub(crate) fn execute_laid_out(
    op: &Op,
    layout: &Layout,
    inputs: &[&[f32]],
    labels: Option<&[u32]>,
    outputs: &mut [&mut [f32]],
) {
    execute_with(op, layout, inputs, labels, outputs, conv::SCRATCH_FLOATS);
}

/// [`execute_laid_out`] with `scratch` floats of im2col scratch per task (tests force tiny
/// blocks).
fn execute_with(
    op: &Op,
    layout: &Layout,
    inputs: &[&[f32]],
    labels: Option<&[u32]>,
    outputs: &mut [&mut [f32]],
    scratch: usize,
) {
    let items = reference::bound(layout, inputs, labels, outputs);
    run(op, layout, items, scratch).unwrap_or_else(|e| panic!("cpu backend: {e}"));
}

/// Runs `op` on its bindings in contract order, decoded by name through its `layout`.
fn run(op: &Op, layout: &Layout, items: Vec<Arg<'_, f32>>, scratch: usize) -> crate::Result<()> {
    match op {
        Op::Conv2dForward(g) => {
            let bind::Affine { x, w, bias, y } = layout.tensors(items)?;
            conv::forward(g, x.input(), w.input(), bias.map(Arg::input), y.output(), scratch);
        }
        Op::Conv2dBackwardData(g) => {
            let bind::BackwardData { dy, w, dx } = layout.tensors(items)?;
            conv::backward_data(g, dy.input(), w.input(), dx.output(), scratch);
        }
        Op::Conv2dBackwardFilter(g) => {
            let bind::BackwardParams { x, dy, dw, dbias } = layout.tensors(items)?;
            let dbias = dbias.map(Arg::output);
            conv::backward_filter(g, x.input(), dy.input(), dw.output(), dbias, scratch);
        }
        Op::LinearForward(g) => {
            let bind::Affine { x, w, bias, y } = layout.tensors(items)?;
            linear::forward(g, x.input(), w.input(), bias.map(Arg::input), y.output());
        }
        Op::LinearBackwardData(g) => {
            let bind::BackwardData { dy, w, dx } = layout.tensors(items)?;
            linear::backward_data(g, dy.input(), w.input(), dx.output());
        }
        Op::LinearBackwardParams(g) => {
            let bind::BackwardParams { x, dy, dw, dbias } = layout.tensors(items)?;
            linear::backward_params(g, x.input(), dy.input(), dw.output(), dbias.map(Arg::output));
        }
        Op::ReluForward { .. } => {
            let bind::Unary { x, y } = layout.tensors(items)?;
            elementwise::relu_forward(x.input(), y.output());
        }
        Op::ReluBackward { .. } => {
            let bind::ReluBackward { y, dy, dx } = layout.tensors(items)?;
            elementwise::relu_backward(y.input(), dy.input(), dx.output());
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
            elementwise::softmax_cross_entropy_forward(
                *classes,
                logits.input(),
                labels,
                loss.output(),
                probs.output(),
            );
        }
        Op::SoftmaxCrossEntropyBackward { batch, classes } => {
            let bind::SoftmaxBackward {
                probs,
                labels,
                dlogits,
            } = layout.tensors(items)?;
            let labels = labels.labels();
            op.check_labels(labels)?;
            elementwise::softmax_cross_entropy_backward(
                *batch,
                *classes,
                probs.input(),
                labels,
                dlogits.output(),
            );
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
            elementwise::sgd_update(
                *lr,
                *momentum,
                *weight_decay,
                grad.input(),
                weight.output(),
                velocity.output(),
            );
        }
        _ => reference::run(op, layout, items)?,
    }
    Ok(())
}
