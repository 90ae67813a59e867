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

use crate::kernels::{Op, reference};

/// Runs one op in f32, with the bindings split as [`reference::execute`] documents: the
/// convolution and fully connected ops through GEMM, the cheap ops of every step in this
/// module, the rest through the reference.
///
/// # Panics
/// When the slices do not match the op's contract (as [`reference::execute`]).
pub fn execute(op: &Op, inputs: &[&[f32]], labels: Option<&[u32]>, outputs: &mut [&mut [f32]]) {
    execute_with(op, inputs, labels, outputs, conv::SCRATCH_FLOATS);
}

/// [`execute`] with `scratch` floats of im2col scratch per task (tests force tiny blocks).
fn execute_with(
    op: &Op,
    inputs: &[&[f32]],
    labels: Option<&[u32]>,
    outputs: &mut [&mut [f32]],
    scratch: usize,
) {
    match op {
        Op::Conv2dForward(g) => conv::forward(
            g,
            inputs[0],
            inputs[1],
            inputs.get(2).copied(),
            outputs[0],
            scratch,
        ),
        Op::Conv2dBackwardData(g) => conv::backward_data(g, inputs[0], inputs[1], outputs[0], scratch),
        Op::Conv2dBackwardFilter(g) => {
            let (dw, rest) = outputs.split_at_mut(1);
            conv::backward_filter(
                g,
                inputs[0],
                inputs[1],
                dw[0],
                rest.first_mut().map(|d| &mut **d),
                scratch,
            );
        }
        Op::LinearForward(g) => linear::forward(g, inputs[0], inputs[1], inputs.get(2).copied(), outputs[0]),
        Op::LinearBackwardData(g) => linear::backward_data(g, inputs[0], inputs[1], outputs[0]),
        Op::LinearBackwardParams(g) => {
            let (dw, rest) = outputs.split_at_mut(1);
            linear::backward_params(g, inputs[0], inputs[1], dw[0], rest.first_mut().map(|d| &mut **d));
        }
        Op::ReluForward { .. } => elementwise::relu_forward(inputs[0], outputs[0]),
        Op::ReluBackward { .. } => elementwise::relu_backward(inputs[0], inputs[1], outputs[0]),
        Op::SoftmaxCrossEntropyForward { classes, .. } => {
            let [loss, probs] = outputs else {
                unreachable!("softmax forward writes loss and probs")
            };
            elementwise::softmax_cross_entropy_forward(
                *classes,
                inputs[0],
                labels.unwrap_or_default(),
                loss,
                probs,
            );
        }
        Op::SoftmaxCrossEntropyBackward { batch, classes } => elementwise::softmax_cross_entropy_backward(
            *batch,
            *classes,
            inputs[0],
            labels.unwrap_or_default(),
            outputs[0],
        ),
        Op::SgdUpdate {
            lr,
            momentum,
            weight_decay,
            ..
        } => {
            let [weight, velocity] = outputs else {
                unreachable!("sgd updates weight and velocity")
            };
            elementwise::sgd_update(*lr, *momentum, *weight_decay, inputs[0], weight, velocity);
        }
        _ => reference::execute(op, inputs, labels, outputs),
    }
}
