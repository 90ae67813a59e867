//! A network as data: a directed acyclic graph of layers, built in topological order.

use super::layer::{BatchNorm, Conv2d, Linear, Lrn, Pool2d, Shape};
use serde::{Deserialize, Serialize};

/// A node in a network graph: `0` is the network input, layer `i` is node `i + 1`.
pub type NodeId = usize;

/// What a layer computes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum LayerKind {
    /// 2-d convolution.
    Conv2d(Conv2d),
    /// Max or average pooling.
    Pool(Pool2d),
    /// Rectified linear unit.
    Relu,
    /// Local response normalisation across channels.
    Lrn(Lrn),
    /// Batch normalisation (training statistics when training, running ones in eval).
    BatchNorm(BatchNorm),
    /// Fully connected layer over the flattened input.
    Linear(Linear),
    /// Average over the whole spatial extent, to `(n, c, 1, 1)`.
    GlobalAvgPool,
    /// Concatenation of all inputs along the channel axis.
    Concat,
    /// Elementwise sum of two inputs of one shape (residual connection).
    Add,
}

impl LayerKind {
    /// Short lower-case name of the operation, as printed in per-layer tables.
    pub fn op_name(&self) -> &'static str {
        match self {
            LayerKind::Conv2d(_) => "conv2d",
            LayerKind::Pool(p) => match p.kind {
                super::layer::PoolKind::Max => "maxpool",
                super::layer::PoolKind::Avg => "avgpool",
            },
            LayerKind::Relu => "relu",
            LayerKind::Lrn(_) => "lrn",
            LayerKind::BatchNorm(_) => "batchnorm",
            LayerKind::Linear(_) => "linear",
            LayerKind::GlobalAvgPool => "global_avgpool",
            LayerKind::Concat => "concat",
            LayerKind::Add => "add",
        }
    }

    /// Learnable parameters of the layer (weights, biases, batch-norm scale and shift).
    pub fn param_count(&self) -> usize {
        match self {
            LayerKind::Conv2d(c) => c.param_count(),
            LayerKind::Linear(l) => l.in_features * l.out_features + if l.bias { l.out_features } else { 0 },
            LayerKind::BatchNorm(b) => 2 * b.channels,
            _ => 0,
        }
    }
}

/// One layer: its operation and the nodes it reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// Name unique within the network, e.g. `conv1` or `inception_3a/3x3`.
    pub name: String,
    /// The operation.
    pub kind: LayerKind,
    /// Input nodes (earlier in the list); `0` is the network input. (Empty in a network read
    /// from data means the layer before; see [`super::custom`].)
    #[serde(default)]
    pub inputs: Vec<NodeId>,
}

/// A convolutional network ending in a classifier; the loss is softmax cross-entropy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Name used on the command line, e.g. `alexnet`.
    pub name: String,
    /// One line on what it is and where its definition comes from.
    #[serde(default)]
    pub description: String,
    /// Input image `(channels, height, width)`.
    pub input: (usize, usize, usize),
    /// Layers in topological order; the last one produces the class scores.
    pub layers: Vec<Layer>,
}

/// Why a network cannot be laid out at a batch size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A layer's window is larger than its (padded) input.
    #[error("layer {layer}: input {input} is too small for its kernel")]
    TooSmall {
        /// Layer name.
        layer: String,
        /// The input shape it was given.
        input: Shape,
    },
    /// Inputs or parameters of a layer disagree.
    #[error("layer {layer}: {reason}")]
    Mismatch {
        /// Layer name.
        layer: String,
        /// What disagrees.
        reason: String,
    },
}

impl Network {
    /// Shapes of every node (`[0]` the input) at batch `n`.
    pub fn shapes(&self, n: usize) -> Result<Vec<Shape>, ShapeError> {
        let (c, h, w) = self.input;
        let mut shapes = vec![Shape::new(n, c, h, w)];
        for layer in &self.layers {
            let input_shapes: Vec<Shape> = layer.inputs.iter().map(|&i| shapes[i]).collect();
            shapes.push(layer_output_shape(layer, &input_shapes)?);
        }
        Ok(shapes)
    }

    /// Learnable parameters in the whole network.
    pub fn param_count(&self) -> usize {
        self.layers.iter().map(|l| l.kind.param_count()).sum()
    }

    /// Forward FLOPs for one image: `2 x` multiply-adds of convolutions and fully connected
    /// layers (the convention of the published counts; other layers are memory-bound and left out).
    pub fn forward_flops_per_image(&self) -> Result<u64, ShapeError> {
        let shapes = self.shapes(1)?;
        Ok(self
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| layer_forward_flops(&l.kind, &shapes[l.inputs[0]], &shapes[i + 1]))
            .sum())
    }

    /// Number of classes the network predicts.
    pub fn classes(&self) -> Result<usize, ShapeError> {
        Ok(self.shapes(1)?.last().map_or(0, |s| s.per_image()))
    }
}

/// Forward FLOPs (`2 x` multiply-adds) of a convolution or fully connected layer; 0 otherwise.
pub fn layer_forward_flops(kind: &LayerKind, input: &Shape, output: &Shape) -> u64 {
    match kind {
        LayerKind::Conv2d(c) => {
            let macs_per_output = (c.in_channels / c.groups) * c.kernel.0 * c.kernel.1;
            2 * (output.len() * macs_per_output) as u64
        }
        LayerKind::Linear(l) => 2 * (input.n * l.in_features * l.out_features) as u64,
        _ => 0,
    }
}

/// The output shape of `layer` given the shapes of its inputs.
pub fn layer_output_shape(layer: &Layer, inputs: &[Shape]) -> Result<Shape, ShapeError> {
    let mismatch = |reason: String| ShapeError::Mismatch {
        layer: layer.name.clone(),
        reason,
    };
    let x = *inputs.first().ok_or_else(|| mismatch("has no input".into()))?;
    let too_small = || ShapeError::TooSmall {
        layer: layer.name.clone(),
        input: x,
    };
    match &layer.kind {
        LayerKind::Conv2d(c) => {
            if x.c != c.in_channels {
                return Err(mismatch(format!(
                    "expects {} input channels, got {}",
                    c.in_channels, x.c
                )));
            }
            if c.groups == 0 || c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0 {
                return Err(mismatch(format!(
                    "{} groups do not divide the channels",
                    c.groups
                )));
            }
            let (h, w) = c.output_hw(x.h, x.w).ok_or_else(too_small)?;
            Ok(Shape::new(x.n, c.out_channels, h, w))
        }
        LayerKind::Pool(p) => {
            let (h, w) = p.output_hw(x.h, x.w).ok_or_else(too_small)?;
            Ok(Shape::new(x.n, x.c, h, w))
        }
        LayerKind::Lrn(lrn) if lrn.size == 0 => Err(mismatch(
            "has an LRN window of 0 channels (it divides alpha by the size); give a size of 1 or more".into(),
        )),
        LayerKind::Relu | LayerKind::Lrn(_) => Ok(x),
        LayerKind::BatchNorm(b) => {
            if x.c != b.channels {
                return Err(mismatch(format!("expects {} channels, got {}", b.channels, x.c)));
            }
            Ok(x)
        }
        LayerKind::Linear(l) => {
            if x.per_image() != l.in_features {
                return Err(mismatch(format!(
                    "expects {} features, got {}",
                    l.in_features,
                    x.per_image()
                )));
            }
            Ok(Shape::new(x.n, l.out_features, 1, 1))
        }
        LayerKind::GlobalAvgPool => Ok(Shape::new(x.n, x.c, 1, 1)),
        LayerKind::Concat => {
            if inputs.iter().any(|s| (s.n, s.h, s.w) != (x.n, x.h, x.w)) {
                return Err(mismatch(
                    "concatenated inputs differ in batch or spatial size".into(),
                ));
            }
            Ok(Shape::new(x.n, inputs.iter().map(|s| s.c).sum(), x.h, x.w))
        }
        LayerKind::Add => {
            if inputs.len() != 2 || inputs[1] != x {
                return Err(mismatch("adds two inputs of one shape".into()));
            }
            Ok(x)
        }
    }
}

/// Builds a [`Network`] layer by layer, inferring input channels from the graph.
#[derive(Debug)]
pub struct NetworkBuilder {
    network: Network,
    channels: Vec<usize>,
}

impl NetworkBuilder {
    /// Starts a network with an input of `(channels, height, width)`.
    pub fn new(name: &str, description: &str, input: (usize, usize, usize)) -> Self {
        Self {
            network: Network {
                name: name.into(),
                description: description.into(),
                input,
                layers: Vec::new(),
            },
            channels: vec![input.0],
        }
    }

    /// The network input node.
    pub const fn input(&self) -> NodeId {
        0
    }

    /// Channels produced by `node`.
    pub fn channels(&self, node: NodeId) -> usize {
        self.channels[node]
    }

    /// Appends a layer and returns its node. Shapes are checked by [`NetworkBuilder::finish`].
    pub fn layer(&mut self, name: impl Into<String>, kind: LayerKind, inputs: &[NodeId]) -> NodeId {
        let first = inputs.first().copied().unwrap_or(0);
        let channels = match &kind {
            LayerKind::Conv2d(c) => c.out_channels,
            LayerKind::Linear(l) => l.out_features,
            LayerKind::Concat => inputs.iter().map(|&i| self.channels[i]).sum(),
            _ => self.channels[first],
        };
        self.network.layers.push(Layer {
            name: name.into(),
            kind,
            inputs: inputs.to_vec(),
        });
        self.channels.push(channels);
        self.network.layers.len()
    }

    /// A convolution with bias reading `x`, `k x k`, stride `s`, padding `p`.
    pub fn conv(&mut self, name: &str, x: NodeId, out: usize, k: usize, s: usize, p: usize) -> NodeId {
        let conv = Conv2d::square(self.channels[x], out, k, s, p);
        self.layer(name, LayerKind::Conv2d(conv), &[x])
    }

    /// A convolution followed by a ReLU (named `<name>/relu`).
    pub fn conv_relu(&mut self, name: &str, x: NodeId, out: usize, k: usize, s: usize, p: usize) -> NodeId {
        let y = self.conv(name, x, out, k, s, p);
        self.relu(&format!("{name}/relu"), y)
    }

    /// A ReLU.
    pub fn relu(&mut self, name: &str, x: NodeId) -> NodeId {
        self.layer(name, LayerKind::Relu, &[x])
    }

    /// A pooling layer.
    pub fn pool(&mut self, name: &str, x: NodeId, pool: Pool2d) -> NodeId {
        self.layer(name, LayerKind::Pool(pool), &[x])
    }

    /// A batch normalisation with eps `1e-5` and momentum `0.1` (Torch defaults).
    pub fn batch_norm(&mut self, name: &str, x: NodeId) -> NodeId {
        let bn = BatchNorm {
            channels: self.channels[x],
            eps: 1e-5,
            momentum: 0.1,
        };
        self.layer(name, LayerKind::BatchNorm(bn), &[x])
    }

    /// A fully connected layer with bias; `in_features` is the flattened size of `x`.
    pub fn linear(&mut self, name: &str, x: NodeId, in_features: usize, out: usize) -> NodeId {
        let linear = Linear {
            in_features,
            out_features: out,
            bias: true,
        };
        self.layer(name, LayerKind::Linear(linear), &[x])
    }

    /// The finished network, with every shape checked at batch 1.
    pub fn finish(self) -> Result<Network, ShapeError> {
        self.network.shapes(1)?;
        Ok(self.network)
    }
}
