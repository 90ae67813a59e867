//! Ops as backends execute them: fully resolved geometry plus a fixed binding order.
//!
//! Every [`Op`] documents the tensors it binds, in order. [`Op::bindings`] gives the access of
//! each (read, write, or read-write), which the verifier uses to poison outputs with NaN and the
//! backends use to lay out buffers. Float tensors are stored at the program's precision; label
//! tensors are `u32`.

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
    /// `x, dy -> dx` (max pooling recomputes the first maximum of each window from `x`).
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
    /// (read-write) with the unbiased batch variance.
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

use Access::{Read, ReadWrite, Write};

impl Op {
    /// Access of each binding, in binding order.
    pub fn bindings(&self) -> Vec<Access> {
        match self {
            Op::Conv2dForward(g) => with_bias(vec![Read, Read], g.conv.bias, Read, vec![Write]),
            Op::Conv2dBackwardData(_) | Op::LinearBackwardData(_) => vec![Read, Read, Write],
            Op::Conv2dBackwardFilter(g) => {
                let mut b = vec![Read, Read, Write];
                if g.conv.bias {
                    b.push(Write);
                }
                b
            }
            Op::LinearForward(g) => {
                let y = if g.is_slice() { ReadWrite } else { Write };
                with_bias(vec![Read, Read], g.bias, Read, vec![y])
            }
            Op::LinearBackwardParams(g) => {
                let mut b = vec![Read, Read, Write];
                if g.bias {
                    b.push(Write);
                }
                b
            }
            Op::PoolForward(_) | Op::ReluForward { .. } | Op::GlobalAvgPoolForward { .. } => {
                vec![Read, Write]
            }
            Op::GlobalAvgPoolBackward { .. } => vec![Read, Write],
            Op::PoolBackward(_) | Op::ReluBackward { .. } | Op::Add { .. } => vec![Read, Read, Write],
            Op::LrnForward { .. } => vec![Read, Write, Write],
            Op::LrnBackward { .. } => vec![Read, Read, Read, Read, Write],
            Op::BatchNormForwardTrain { .. } => {
                vec![Read, Read, Read, Write, Write, Write, ReadWrite, ReadWrite]
            }
            Op::BatchNormForwardEval { .. } => vec![Read, Read, Read, Read, Read, Write],
            Op::BatchNormBackward { .. } => vec![Read, Read, Read, Read, Read, Write, Write, Write],
            Op::SoftmaxCrossEntropyForward { .. } => vec![Read, Read, Write, Write],
            Op::SoftmaxCrossEntropyBackward { .. } => vec![Read, Read, Write],
            Op::ChannelCopy { into_concat, .. } => {
                if *into_concat {
                    vec![Read, ReadWrite]
                } else {
                    vec![Read, Write]
                }
            }
            Op::SgdUpdate { .. } => vec![Read, ReadWrite, ReadWrite],
        }
    }

    /// Element type of each binding (labels are `u32`, everything else float).
    pub fn dtypes(&self) -> Vec<DType> {
        let mut d = vec![DType::Float; self.bindings().len()];
        if let Op::SoftmaxCrossEntropyForward { .. } | Op::SoftmaxCrossEntropyBackward { .. } = self {
            d[1] = DType::U32;
        }
        d
    }

    /// Elements of each binding, in binding order.
    pub fn binding_lens(&self) -> Vec<usize> {
        match self {
            Op::Conv2dForward(g) => with_bias(
                vec![g.input.len(), g.conv.weight_len()],
                g.conv.bias,
                g.conv.out_channels,
                vec![g.output.len()],
            ),
            Op::Conv2dBackwardData(g) => vec![g.output.len(), g.conv.weight_len(), g.input.len()],
            Op::Conv2dBackwardFilter(g) => {
                let mut l = vec![g.input.len(), g.output.len(), g.conv.weight_len()];
                if g.conv.bias {
                    l.push(g.conv.out_channels);
                }
                l
            }
            Op::PoolForward(g) => vec![g.input.len(), g.output.len()],
            Op::PoolBackward(g) => vec![g.input.len(), g.output.len(), g.input.len()],
            Op::ReluForward { len } => vec![*len, *len],
            Op::ReluBackward { len } | Op::Add { len } => vec![*len, *len, *len],
            Op::LrnForward { shape, .. } => vec![shape.len(); 3],
            Op::LrnBackward { shape, .. } => vec![shape.len(); 5],
            Op::BatchNormForwardTrain { shape, .. } => {
                let c = shape.c;
                vec![shape.len(), c, c, shape.len(), c, c, c, c]
            }
            Op::BatchNormForwardEval { shape, .. } => {
                let c = shape.c;
                vec![shape.len(), c, c, c, c, shape.len()]
            }
            Op::BatchNormBackward { shape, .. } => {
                let c = shape.c;
                vec![shape.len(), shape.len(), c, c, c, shape.len(), c, c]
            }
            Op::LinearForward(g) => with_bias(
                vec![g.batch * g.in_features, g.out_features * g.in_features],
                g.bias,
                g.out_features,
                vec![g.batch * g.y_stride],
            ),
            Op::LinearBackwardData(g) => {
                vec![
                    g.batch * g.y_stride,
                    g.out_features * g.in_features,
                    g.batch * g.in_features,
                ]
            }
            Op::LinearBackwardParams(g) => {
                let mut l = vec![
                    g.batch * g.in_features,
                    g.batch * g.y_stride,
                    g.out_features * g.in_features,
                ];
                if g.bias {
                    l.push(g.out_features);
                }
                l
            }
            Op::SoftmaxCrossEntropyForward { batch, classes } => {
                vec![batch * classes, *batch, *batch, batch * classes]
            }
            Op::SoftmaxCrossEntropyBackward { batch, classes } => {
                vec![batch * classes, *batch, batch * classes]
            }
            Op::ChannelCopy {
                n,
                hw,
                total_channels,
                part_channels,
                into_concat,
                ..
            } => {
                let (part, total) = (n * hw * part_channels, n * hw * total_channels);
                if *into_concat {
                    vec![part, total]
                } else {
                    vec![total, part]
                }
            }
            Op::GlobalAvgPoolForward { shape } => vec![shape.len(), shape.n * shape.c],
            Op::GlobalAvgPoolBackward { shape } => vec![shape.n * shape.c, shape.len()],
            Op::SgdUpdate { len, .. } => vec![*len; 3],
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

fn with_bias<T: Copy>(mut head: Vec<T>, bias: bool, bias_item: T, tail: Vec<T>) -> Vec<T> {
    if bias {
        head.push(bias_item);
    }
    head.extend(tail);
    head
}
