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

/// The most elements one tensor may hold: kernels index tensors with 32-bit integers.
pub const MAX_TENSOR_ELEMENTS: usize = u32::MAX as usize;

/// The largest batch (images per iteration) convbench takes, on the command line, in `batches`
/// or as a shape list's `N`: past it, one tensor of even the smallest network outgrows what
/// the kernels index ([`MAX_TENSOR_ELEMENTS`]), and the run would fail only after planning.
pub const MAX_BATCH: usize = 65_536;

/// Why a network cannot be laid out at a batch size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// The network's input (or the batch) has a size of zero or one too large.
    #[error("{0}")]
    Input(String),
    /// A number of a layer is out of range: a count or size of zero, a value too large, a
    /// tensor of more than [`MAX_TENSOR_ELEMENTS`].
    #[error("layer {layer}: {reason}")]
    Invalid {
        /// Layer name.
        layer: String,
        /// Which field, its value, and the range it must be in.
        reason: String,
    },
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
        if n == 0 {
            return Err(ShapeError::Input(
                "a batch of 0 images; give a batch of at least 1".into(),
            ));
        }
        if c == 0 || h == 0 || w == 0 {
            return Err(ShapeError::Input(format!(
                "`input` is [{c}, {h}, {w}]; channels, height and width must each be at least 1"
            )));
        }
        let input = Shape::new(n, c, h, w);
        if !fits(input) {
            return Err(ShapeError::Input(format!(
                "the input at batch {n} is {input}, more than {MAX_TENSOR_ELEMENTS} elements; \
                 use a smaller batch or input"
            )));
        }
        let mut shapes = vec![input];
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
    let invalid = |reason: String| ShapeError::Invalid {
        layer: layer.name.clone(),
        reason,
    };
    check_numbers(&layer.kind).map_err(invalid)?;
    let x = *inputs.first().ok_or_else(|| mismatch("has no input".into()))?;
    if !matches!(layer.kind, LayerKind::Concat | LayerKind::Add) && inputs.len() > 1 {
        // Only the first would be read: the others' layers would silently drop out of the
        // backward pass.
        return Err(mismatch(format!(
            "takes one input, not {}; only concat and add read several",
            inputs.len()
        )));
    }
    let output = unchecked_output_shape(layer, inputs, x)?;
    if !fits(output) {
        return Err(invalid(format!(
            "its output is {output}, more than {MAX_TENSOR_ELEMENTS} elements; use a smaller \
             batch, input or layer"
        )));
    }
    let weights = match &layer.kind {
        LayerKind::Conv2d(c) => Some(
            (c.in_channels / c.groups)
                .checked_mul(c.out_channels)
                .and_then(|n| n.checked_mul(c.kernel.0))
                .and_then(|n| n.checked_mul(c.kernel.1)),
        ),
        LayerKind::Linear(l) => Some(l.in_features.checked_mul(l.out_features)),
        _ => None,
    };
    if let Some(elements) = weights
        && elements.is_none_or(|n| n > MAX_TENSOR_ELEMENTS)
    {
        return Err(invalid(format!(
            "its weights hold more than {MAX_TENSOR_ELEMENTS} elements; use fewer channels, \
             features or a smaller kernel"
        )));
    }
    Ok(output)
}

/// Whether a tensor of `shape` can be indexed by the kernels.
fn fits(shape: Shape) -> bool {
    shape.checked_len().is_some_and(|n| n <= MAX_TENSOR_ELEMENTS)
}

/// The largest value any size or count of a layer may take: the kernels receive them as 32-bit
/// integers.
const MAX_LAYER_NUMBER: usize = u32::MAX as usize;

/// Checks every count and size of a layer on its own, before any shape arithmetic: counts and
/// sizes of zero (they divide, or make empty windows), values past [`MAX_LAYER_NUMBER`], a
/// pool's padding larger than half its window, and floating-point settings that are not finite.
/// The error names the field as the configuration spells it, its value and its range.
fn check_numbers(kind: &LayerKind) -> Result<(), String> {
    fn positive(field: &str, values: &[usize]) -> Result<(), String> {
        if values.contains(&0) {
            return Err(format!("`{field}` is {}; it must be at least 1", shown(values)));
        }
        bounded(field, values)
    }
    fn bounded(field: &str, values: &[usize]) -> Result<(), String> {
        if values.iter().any(|&v| v > MAX_LAYER_NUMBER) {
            return Err(format!(
                "`{field}` is {}; it must be at most {MAX_LAYER_NUMBER}",
                shown(values)
            ));
        }
        Ok(())
    }
    fn shown(values: &[usize]) -> String {
        match values {
            [one] => one.to_string(),
            _ => format!(
                "[{}]",
                values.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ),
        }
    }
    fn finite(field: &str, value: f64) -> Result<(), String> {
        if !value.is_finite() {
            return Err(format!("`{field}` is {value}; it must be a finite number"));
        }
        Ok(())
    }
    fn within(field: &str, value: f64, low: f64, high: f64) -> Result<(), String> {
        if !(low..=high).contains(&value) {
            return Err(format!("`{field}` is {value}; it must be from {low} to {high}"));
        }
        Ok(())
    }
    let pair = |(a, b): (usize, usize)| [a, b];
    match kind {
        LayerKind::Conv2d(c) => {
            positive("in_channels", &[c.in_channels])?;
            positive("out_channels", &[c.out_channels])?;
            positive("kernel", &pair(c.kernel))?;
            positive("stride", &pair(c.stride))?;
            bounded("padding", &pair(c.padding))?;
            positive("dilation", &pair(c.dilation))?;
            positive("groups", &[c.groups])
        }
        LayerKind::Pool(p) => {
            positive("kernel", &pair(p.kernel))?;
            positive("stride", &pair(p.stride))?;
            bounded("padding", &pair(p.padding))?;
            if p.padding.0 * 2 > p.kernel.0 || p.padding.1 * 2 > p.kernel.1 {
                return Err(format!(
                    "`padding` is {} for a kernel of {}; a pool's padding is at most half its kernel",
                    shown(&pair(p.padding)),
                    shown(&pair(p.kernel))
                ));
            }
            Ok(())
        }
        LayerKind::Lrn(lrn) => {
            bounded("size", &[lrn.size])?;
            finite("alpha", lrn.alpha)?;
            finite("beta", lrn.beta)?;
            finite("k", lrn.k)
        }
        LayerKind::BatchNorm(b) => {
            positive("channels", &[b.channels])?;
            finite("eps", b.eps)?;
            if b.eps < 0.0 {
                return Err(format!("`eps` is {}; it must be 0 or more", b.eps));
            }
            within("momentum", b.momentum, 0.0, 1.0)
        }
        LayerKind::Linear(l) => {
            positive("in_features", &[l.in_features])?;
            positive("out_features", &[l.out_features])
        }
        LayerKind::Relu | LayerKind::GlobalAvgPool | LayerKind::Concat | LayerKind::Add => Ok(()),
    }
}

/// The output shape of `layer` whose numbers passed [`check_numbers`], given its inputs (`x` the
/// first).
fn unchecked_output_shape(layer: &Layer, inputs: &[Shape], x: Shape) -> Result<Shape, ShapeError> {
    let mismatch = |reason: String| ShapeError::Mismatch {
        layer: layer.name.clone(),
        reason,
    };
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
            if c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0 {
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
