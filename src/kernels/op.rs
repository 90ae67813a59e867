//! Ops as backends execute them: fully resolved geometry plus a fixed binding order.
//!
//! Every [`Op`] names the tensors it binds, in order, in [`Op::contract`] (see
//! [`super::contract`]). [`Op::bindings`] gives the access of each (read, write, or read-write),
//! which the verifier uses to poison outputs with NaN and the backends use to lay out buffers. Float tensors are stored at the program's precision; label
//! tensors are `u32`.

use super::KernelError;
use crate::model::{BatchNorm, Conv2d, Lrn, Pool2d, Precision, Shape};
use serde::{Deserialize, Serialize};

/// A convolution at a concrete input and output shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConvGeom {
    /// Hyper-parameters.
    pub conv: Conv2d,
    /// Input activation shape.
    pub input: Shape,
    /// Output activation shape.
    pub output: Shape,
}

impl ConvGeom {
    /// `conv` applied to `n` images of `h x w`: the output shape follows from the kernel,
    /// stride, padding and dilation. `None` when the dilated kernel is larger than the padded
    /// input.
    pub fn new(conv: Conv2d, n: usize, h: usize, w: usize) -> Option<ConvGeom> {
        let (oh, ow) = conv.output_hw(h, w)?;
        Some(ConvGeom {
            conv,
            input: Shape::new(n, conv.in_channels, h, w),
            output: Shape::new(n, conv.out_channels, oh, ow),
        })
    }

    /// Multiply-adds of the forward pass for the whole batch (also those of each backward op).
    pub fn macs(&self) -> u64 {
        let per_output = (self.conv.in_channels / self.conv.groups) * self.conv.kernel.0 * self.conv.kernel.1;
        (self.output.len() * per_output) as u64
    }
}

/// A pooling layer at a concrete input and output shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PoolGeom {
    /// Hyper-parameters.
    pub pool: Pool2d,
    /// Input activation shape.
    pub input: Shape,
    /// Output activation shape.
    pub output: Shape,
}

/// A fully connected layer at a batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinearGeom {
    /// Rows (images).
    pub batch: usize,
    /// Input features.
    pub in_features: usize,
    /// Output features.
    pub out_features: usize,
    /// Whether a bias is bound.
    pub bias: bool,
    /// Row length of the output (and output gradient) tensor: `out_features`, or more when this
    /// op computes a slice of the columns of a layer too large for one storage binding.
    pub y_stride: usize,
    /// First column of the slice within the output rows.
    pub y_offset: usize,
}

impl LinearGeom {
    /// A whole (unsliced) fully connected layer.
    pub const fn new(batch: usize, in_features: usize, out_features: usize, bias: bool) -> Self {
        Self {
            batch,
            in_features,
            out_features,
            bias,
            y_stride: out_features,
            y_offset: 0,
        }
    }

    /// Whether the op covers only some columns of its output.
    pub const fn is_slice(&self) -> bool {
        self.out_features < self.y_stride
    }
}

/// How a binding is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Every element written, none read: poisoned before verification.
    Write,
    /// Read and updated in place (running statistics, weights, a slice of a concatenation).
    ReadWrite,
}

/// Element type of a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DType {
    /// Stored at the program's precision (f32 or f16).
    Float,
    /// 32-bit class labels.
    U32,
}

impl DType {
    /// Bytes per element in a program of `precision`.
    pub const fn bytes(self, precision: Precision) -> usize {
        match self {
            DType::Float => precision.bytes(),
            DType::U32 => 4,
        }
    }
}

/// One kernel launch (or a short fixed sequence of them) with its geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// `x, w, [bias] -> y`.
    Conv2dForward(ConvGeom),
    /// `dy, w -> dx`.
    Conv2dBackwardData(ConvGeom),
    /// `x, dy -> dw, [dbias]`.
    Conv2dBackwardFilter(ConvGeom),
    /// `x -> y`.
    PoolForward(PoolGeom),
    /// `x, dy -> dx` (max pooling recomputes from `x` the element each window chose: its first
    /// maximum, or its last NaN, as PyTorch does).
    PoolBackward(PoolGeom),
    /// `x -> y`, `len` elements.
    ReluForward {
        /// Elements.
        len: usize,
    },
    /// `y, dy -> dx`: the gradient passes where the forward output is positive.
    ReluBackward {
        /// Elements.
        len: usize,
    },
    /// `x -> y, scale` where `scale = k + alpha / size * window sum of x^2`.
    LrnForward {
        /// Hyper-parameters.
        lrn: Lrn,
        /// Activation shape.
        shape: Shape,
    },
    /// `x, y, scale, dy -> dx`.
    LrnBackward {
        /// Hyper-parameters.
        lrn: Lrn,
        /// Activation shape.
        shape: Shape,
    },
    /// Training statistics:
    /// `x, gamma, beta -> y, saved_mean, saved_invstd`, then `running_mean, running_var` updated
    /// (read-write) with the unbiased batch variance. Needs `n * h * w >= 2` ([`Op::check`]).
    BatchNormForwardTrain {
        /// Hyper-parameters.
        bn: BatchNorm,
        /// Activation shape.
        shape: Shape,
    },
    /// Inference: `x, gamma, beta, running_mean, running_var -> y`.
    BatchNormForwardEval {
        /// Hyper-parameters.
        bn: BatchNorm,
        /// Activation shape.
        shape: Shape,
    },
    /// `x, dy, gamma, saved_mean, saved_invstd -> dx, dgamma, dbeta`.
    BatchNormBackward {
        /// Hyper-parameters.
        bn: BatchNorm,
        /// Activation shape.
        shape: Shape,
    },
    /// `x, w, [bias] -> y`; `w` is `[out, in]`.
    LinearForward(LinearGeom),
    /// `dy, w -> dx`.
    LinearBackwardData(LinearGeom),
    /// `x, dy -> dw, [dbias]`.
    LinearBackwardParams(LinearGeom),
    /// `logits, labels(u32) -> loss (per image), probabilities`.
    SoftmaxCrossEntropyForward {
        /// Images.
        batch: usize,
        /// Classes.
        classes: usize,
    },
    /// `probabilities, labels(u32) -> dlogits` of the mean loss over the batch.
    SoftmaxCrossEntropyBackward {
        /// Images.
        batch: usize,
        /// Classes.
        classes: usize,
    },
    /// `src -> dst` channel slice copy (concat forward writes a slice of `dst`, read-write;
    /// split backward reads a slice of the concatenated gradient).
    ChannelCopy {
        /// Images.
        n: usize,
        /// Pixels per channel (`h * w`).
        hw: usize,
        /// Channels of the concatenated tensor.
        total_channels: usize,
        /// Channels of the part.
        part_channels: usize,
        /// First channel of the part in the concatenated tensor.
        offset: usize,
        /// `true`: part → concatenated (concat forward); `false`: concatenated → part (split).
        into_concat: bool,
    },
    /// `a, b -> y = a + b` (residual forward, and summing gradients at a fan-out).
    Add {
        /// Elements.
        len: usize,
    },
    /// `x -> y` mean over `h * w` per channel.
    GlobalAvgPoolForward {
        /// Input shape.
        shape: Shape,
    },
    /// `dy -> dx`.
    GlobalAvgPoolBackward {
        /// Input shape.
        shape: Shape,
    },
    /// `grad, weight (rw), velocity (rw)`: `v = momentum * v + grad + weight_decay * w;
    /// w -= lr * v` (Torch's SGD).
    SgdUpdate {
        /// Elements.
        len: usize,
        /// Learning rate.
        lr: f32,
        /// Momentum.
        momentum: f32,
        /// L2 weight decay.
        weight_decay: f32,
    },
}

impl Op {
    /// Access of each binding, in binding order (from [`Op::contract`]).
    pub fn bindings(&self) -> Vec<Access> {
        self.contract().iter().map(|b| b.access).collect()
    }

    /// Element type of each binding (labels are `u32`, everything else float).
    pub fn dtypes(&self) -> Vec<DType> {
        self.contract().iter().map(|b| b.dtype).collect()
    }

    /// Elements of each binding, in binding order.
    pub fn binding_lens(&self) -> Vec<usize> {
        self.contract().iter().map(|b| b.len).collect()
    }

    /// Checks what the op's geometry alone rules out, as PyTorch does: batch normalisation in
    /// training over a single value per channel (`n * h * w = 1`), whose batch variance is 0 by
    /// definition rather than an estimate (PyTorch raises "Expected more than 1 value per
    /// channel when training").
    pub fn check(&self) -> crate::Result<()> {
        match self {
            Op::BatchNormForwardTrain { shape, .. } if shape.n * shape.h * shape.w < 2 => {
                Err(KernelError::BatchOfOne {
                    op: self.name(),
                    shape: *shape,
                }
                .into())
            }
            _ => Ok(()),
        }
    }

    /// Checks class labels given to this op: each must be below the class count, as PyTorch's
    /// `cross_entropy` requires (it raises; a kernel would otherwise read another image's
    /// logits or pick some class silently). Ops without labels accept anything.
    pub fn check_labels(&self, labels: &[u32]) -> crate::Result<()> {
        let classes = match self {
            Op::SoftmaxCrossEntropyForward { classes, .. }
            | Op::SoftmaxCrossEntropyBackward { classes, .. } => *classes,
            _ => return Ok(()),
        };
        match labels.iter().enumerate().find(|(_, l)| **l as usize >= classes) {
            None => Ok(()),
            Some((image, &label)) => Err(KernelError::LabelOutOfRange {
                op: self.name(),
                label,
                image,
                classes,
            }
            .into()),
        }
    }

    /// Stable short name of the op family and direction, e.g. `conv2d_backward_data`.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Conv2dForward(_) => "conv2d_forward",
            Op::Conv2dBackwardData(_) => "conv2d_backward_data",
            Op::Conv2dBackwardFilter(_) => "conv2d_backward_filter",
            Op::PoolForward(_) => "pool_forward",
            Op::PoolBackward(_) => "pool_backward",
            Op::ReluForward { .. } => "relu_forward",
            Op::ReluBackward { .. } => "relu_backward",
            Op::LrnForward { .. } => "lrn_forward",
            Op::LrnBackward { .. } => "lrn_backward",
            Op::BatchNormForwardTrain { .. } => "batchnorm_forward_train",
            Op::BatchNormForwardEval { .. } => "batchnorm_forward_eval",
            Op::BatchNormBackward { .. } => "batchnorm_backward",
            Op::LinearForward(_) => "linear_forward",
            Op::LinearBackwardData(_) => "linear_backward_data",
            Op::LinearBackwardParams(_) => "linear_backward_params",
            Op::SoftmaxCrossEntropyForward { .. } => "softmax_cross_entropy_forward",
            Op::SoftmaxCrossEntropyBackward { .. } => "softmax_cross_entropy_backward",
            Op::ChannelCopy { .. } => "channel_copy",
            Op::Add { .. } => "add",
            Op::GlobalAvgPoolForward { .. } => "global_avgpool_forward",
            Op::GlobalAvgPoolBackward { .. } => "global_avgpool_backward",
            Op::SgdUpdate { .. } => "sgd_update",
        }
    }

    /// FLOPs (`2 x` multiply-adds) of convolution and fully connected ops; 0 for the others.
    pub fn flops(&self) -> u64 {
        match self {
            Op::Conv2dForward(g) | Op::Conv2dBackwardData(g) | Op::Conv2dBackwardFilter(g) => 2 * g.macs(),
            Op::LinearForward(g) | Op::LinearBackwardData(g) | Op::LinearBackwardParams(g) => {
                2 * (g.batch * g.in_features * g.out_features) as u64
            }
            _ => 0,
        }
    }
}
