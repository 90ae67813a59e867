//! The op library: the contract of every op ([`Op`]), the registry of WGSL shaders
//! ([`registry`]) and the includes by which they share code ([`include`](mod@include)), one
//! Rust file per shader family planning its dispatches, the kernel [`variant`]s an op can run
//! with, and [`reference`](mod@reference), the CPU implementation of every op that is the single
//! source of truth.

mod activation;
mod batchnorm;
mod col2im;
pub mod conditioning;
pub mod contract;
mod conv2d;
pub mod dispatch;
pub mod emit;
mod error;
mod gemm;
pub mod include;
mod linear;
mod loss;
mod lrn;
mod op;
mod optimizer;
mod pool;
pub mod reference;
pub mod registry;
pub mod shader_set;
mod tensor;
pub mod tint;
pub mod uniform;
pub mod user;
pub mod variant;
mod winograd;

pub use contract::{Binding, bind};
pub use dispatch::{Dispatch, Grid, Slot};
pub use error::{KernelError, UserKernelProblem};
pub use gemm::{COLS_CHUNK_BYTES, COLS_MAX_BYTES, IMPLICIT_MIN_CHANNELS, max_split_k};
pub use op::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom};
pub use variant::{GemmTile, Variant};

use crate::{Error, Result};

/// The dispatches that run `op` with `variant`, in order. Fails when the variant does not
/// implement the op (see [`Variant::implements`]).
pub fn plan(op: &Op, variant: Variant) -> Result<Vec<Dispatch>> {
    match variant {
        Variant::Direct => Ok(plan_direct(op)),
        Variant::Gemm(tile) => match op {
            Op::Conv2dForward(g) => Ok(gemm::conv_forward(g, &tile)),
            Op::Conv2dBackwardData(g) => Ok(gemm::conv_backward_data(g, &tile)),
            Op::Conv2dBackwardFilter(g) => Ok(gemm::conv_backward_filter(g, &tile)),
            Op::LinearForward(g) => Ok(gemm::linear_forward(g, &tile)),
            Op::LinearBackwardData(g) => Ok(gemm::linear_backward_data(g, &tile)),
            Op::LinearBackwardParams(g) => Ok(gemm::linear_backward_params(g, &tile)),
            _ => Err(unimplemented(op, variant)),
        },
        Variant::Winograd => match op {
            Op::Conv2dForward(g) if winograd::applies(g) => Ok(winograd::conv_forward(g)),
            Op::Conv2dBackwardData(g) if winograd::applies(g) => Ok(winograd::conv_backward_data(g)),
            _ => Err(unimplemented(op, variant)),
        },
        Variant::User(kernel) => kernel.0.plan(op),
    }
}

/// The error of planning `op` with a variant that does not implement it.
fn unimplemented(op: &Op, variant: Variant) -> Error {
    KernelError::NotImplemented {
        variant: variant.id(),
        op: op.name(),
    }
    .into()
}

/// The direct kernels of `op`.
fn plan_direct(op: &Op) -> Vec<Dispatch> {
    match op {
        Op::Conv2dForward(g) => conv2d::forward(g),
        Op::Conv2dBackwardData(g) => conv2d::backward_data(g),
        Op::Conv2dBackwardFilter(g) => conv2d::backward_filter(g),
        Op::PoolForward(g) => pool::forward(g),
        Op::PoolBackward(g) => pool::backward(g),
        Op::ReluForward { len } => activation::relu_forward(*len),
        Op::ReluBackward { len } => activation::relu_backward(*len),
        Op::LrnForward { lrn, shape } => lrn::forward(lrn, shape),
        Op::LrnBackward { lrn, shape } => lrn::backward(lrn, shape),
        Op::BatchNormForwardTrain { bn, shape } => batchnorm::forward_train(bn, shape),
        Op::BatchNormForwardEval { bn, shape } => batchnorm::forward_eval(bn, shape),
        Op::BatchNormBackward { bn, shape } => batchnorm::backward(bn, shape),
        Op::LinearForward(g) => linear::forward(g),
        Op::LinearBackwardData(g) => linear::backward_data(g),
        Op::LinearBackwardParams(g) => linear::backward_params(g),
        Op::SoftmaxCrossEntropyForward { batch, classes } => loss::forward(*batch, *classes),
        Op::SoftmaxCrossEntropyBackward { batch, classes } => loss::backward(*batch, *classes),
        Op::ChannelCopy {
            n,
            hw,
            total_channels,
            part_channels,
            offset,
            into_concat,
        } => tensor::channel_copy(*n, *hw, *total_channels, *part_channels, *offset, *into_concat),
        Op::Add { len } => tensor::add(*len),
        Op::GlobalAvgPoolForward { shape } => tensor::global_avgpool_forward(shape),
        Op::GlobalAvgPoolBackward { shape } => tensor::global_avgpool_backward(shape),
        Op::SgdUpdate {
            len,
            lr,
            momentum,
            weight_decay,
        } => optimizer::sgd(*len, *lr, *momentum, *weight_decay),
    }
}
