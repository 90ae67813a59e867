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

/// The size-dependent paths of an op's dispatches, pinned. The harness verifies a network at a
/// smaller batch than it times ([`crate::harness::VERIFY_BATCH`]); where the timed op takes a
/// path only long reductions or large batches take, the verified op is planned with the same
/// [`Pin`] (from [`path`]), so that every code path that is timed has been verified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Pin {
    /// A weight gradient's reduction runs split-K in at least this many runs (as many as its
    /// length allows), even where it is short enough to run in one.
    pub runs: Option<u32>,
    /// How an input gradient is lowered, whatever its size says.
    pub lowering: Option<Lowering>,
}

/// How a GEMM variant lowers a convolution's input gradient: the choice depends on the batch
/// (the cost model's tile counts, the chunks of images), so a verified op pins the timed one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lowering {
    /// One implicit GEMM over `dy`.
    Implicit,
    /// The column matrix, then col2im.
    Cols {
        /// In more than one chunk of images (wherever the batch has two).
        chunked: bool,
    },
}

/// The [`Pin`] of the paths `op` takes with `variant` at its own size: planning a smaller op
/// of the same layer with it runs the same entry points, offsets and sums.
pub fn path(op: &Op, variant: Variant) -> Pin {
    match (variant, op) {
        (Variant::Gemm(tile), Op::Conv2dBackwardFilter(g)) => Pin {
            runs: gemm::split_runs(g, &tile),
            lowering: None,
        },
        (Variant::Gemm(_), Op::Conv2dBackwardData(g)) => Pin {
            runs: None,
            lowering: Some(match gemm::cols_chunk(g) {
                None => Lowering::Implicit,
                Some(images) => Lowering::Cols {
                    chunked: images < g.input.n,
                },
            }),
        },
        _ => Pin::default(),
    }
}

/// The dispatches that run `op` with `variant`, in order. Fails when the variant does not
/// implement the op (see [`Variant::implements`]).
pub fn plan(op: &Op, variant: Variant) -> Result<Vec<Dispatch>> {
    plan_pinned(op, variant, Pin::default())
}

/// [`plan`], taking the paths `pin` names whatever the op's size.
pub fn plan_pinned(op: &Op, variant: Variant, pin: Pin) -> Result<Vec<Dispatch>> {
    match variant {
        Variant::Direct => Ok(plan_direct(op)),
        Variant::Gemm(tile) => match op {
            Op::Conv2dForward(g) => Ok(gemm::conv_forward(g, &tile)),
            Op::Conv2dBackwardData(g) => Ok(gemm::conv_backward_data(g, &tile, pin.lowering)),
            Op::Conv2dBackwardFilter(g) => Ok(gemm::conv_backward_filter(g, &tile, pin.runs)),
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
