//! Planning: a network (or one suite layer) at a batch, stage and precision becomes a
//! [`Program`] whose ops are grouped in contiguous phase ranges, each op labelled with its layer.
//!
//! Order of a training iteration: forward, loss forward, loss backward, every input gradient
//! (layers in reverse), every parameter gradient, SGD update. Every activation and gradient has
//! its own tensor, so parameter gradients can run after all input gradients, and each phase is
//! one contiguous range that can be timed alone even without GPU timestamps.

use super::PlanError;
use crate::Result;
use crate::backend::{Program, TensorId};
use crate::kernels::{ConvGeom, DType, LinearGeom, Op, PoolGeom, bind};
use crate::model::{LayerKind, Network, Precision, Shape, ShapeError, SuiteEntry};
use crate::results::{Phase, Stage};
use std::ops::Range;

/// How a tensor is filled before the first iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Init {
    /// Uniform in `[-scale, scale)`.
    Uniform(f32),
    /// Every element the same.
    Constant(f32),
    /// Random class labels below the given count.
    Labels(u32),
}

/// Which layer and phase an op belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct OpLabel {
    /// Index into [`Plan::layers`].
    pub layer: usize,
    /// The phase the op is timed in.
    pub phase: Phase,
}

/// A layer as reports show it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInfo {
    /// Layer name (`loss` for the criterion).
    pub name: String,
    /// Operation name, e.g. `conv2d`.
    pub op: String,
}

/// A planned benchmark iteration.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The ops and tensors.
    pub program: Program,
    /// One label per op.
    pub labels: Vec<OpLabel>,
    /// Layers referenced by the labels.
    pub layers: Vec<LayerInfo>,
    /// Tensor initialisation.
    pub inits: Vec<(TensorId, Init)>,
    /// Contiguous op range of each phase that has ops, in execution order.
    pub phases: Vec<(Phase, Range<usize>)>,
}

/// Options that change what an iteration contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    /// Train (forward, backward, update) or eval (forward only, batch norm in inference mode).
    pub stage: Stage,
    /// Compute the gradient of the first layer's input too (Torch and Chainer skip it).
    pub data_grad: bool,
    /// Largest tensor one op may bind (bytes, [`crate::backend::Backend::max_tensor_bytes`]).
    /// A fully connected layer whose weights exceed it runs as column slices that fit.
    pub max_tensor_bytes: u64,
}

/// Splits `out_features` columns into slices whose weights fit in `max_bytes`.
fn linear_slices(
    batch: usize,
    l: &crate::model::Linear,
    element_bytes: usize,
    max_bytes: u64,
) -> Vec<LinearGeom> {
    let row_bytes = (l.in_features * element_bytes) as u64;
    let rows_per_slice = (max_bytes / row_bytes.max(1)).clamp(1, l.out_features.max(1) as u64) as usize;
    let slices = l.out_features.div_ceil(rows_per_slice);
    let per_slice = l.out_features.div_ceil(slices);
    (0..slices)
        .map(|k| {
            let offset = k * per_slice;
            let mut g = LinearGeom::new(
                batch,
                l.in_features,
                per_slice.min(l.out_features - offset),
                l.bias,
            );
            g.y_stride = l.out_features;
            g.y_offset = offset;
            g
        })
        .collect()
}

/// SGD hyper-parameters of the update phase (those of the classic ImageNet recipes).
const LEARNING_RATE: f32 = 0.01;
const MOMENTUM: f32 = 0.9;
const WEIGHT_DECAY: f32 = 5e-4;

/// An op call as planned: the op and its tensors in binding order.
type Call = (Op, Vec<TensorId>);

/// What the backward pass of a layer needs from its forward pass: its forward calls (one per
/// column slice of a fully connected layer), whose tensors it decodes by name.
struct Saved {
    /// Index into the plan's layers.
    layer: usize,
    /// The layer's forward op calls.
    forward: Vec<Call>,
}

/// The tensors of a saved forward call, by name.
fn recall<S: bind::Tensors<TensorId>>(call: Option<&Call>) -> Result<S> {
    let (op, tensors) = call.ok_or(PlanError::NoForwardOp)?;
    op.tensors(tensors.clone())
}

struct Builder {
    program: Program,
    ops: Vec<(Op, Vec<TensorId>, OpLabel)>,
    layers: Vec<LayerInfo>,
    inits: Vec<(TensorId, Init)>,
    params: Vec<(TensorId, TensorId)>,
}

impl Builder {
    fn new(precision: Precision) -> Self {
        Self {
            program: Program::new(precision),
            ops: Vec::new(),
            layers: Vec::new(),
            inits: Vec::new(),
            params: Vec::new(),
        }
    }

    fn float(&mut self, name: String, len: usize) -> TensorId {
        self.program.tensor(name, len, DType::Float)
    }

    fn param(&mut self, name: String, len: usize, init: Init) -> TensorId {
        let t = self.float(name, len);
        self.inits.push((t, init));
        t
    }

    /// Adds `op` with its tensors, named; returns the call in binding order.
    fn op<S: bind::Tensors<TensorId>>(
        &mut self,
        op: Op,
        tensors: S,
        layer: usize,
        phase: Phase,
    ) -> Result<Call> {
        let ids = op.encode(tensors)?;
        self.ops.push((op.clone(), ids.clone(), OpLabel { layer, phase }));
        Ok((op, ids))
    }

    fn layer(&mut self, name: &str, op: &str) -> usize {
        self.layers.push(LayerInfo {
            name: name.into(),
            op: op.into(),
        });
        self.layers.len() - 1
    }

    /// Sorts ops into phase order (stable within a phase) and builds the program.
    fn finish(mut self) -> Result<Plan> {
        self.ops.sort_by_key(|(_, _, label)| label.phase);
        let mut phases: Vec<(Phase, Range<usize>)> = Vec::new();
        let mut labels = Vec::with_capacity(self.ops.len());
        for (index, (op, tensors, label)) in self.ops.into_iter().enumerate() {
            match phases.last_mut() {
                Some((phase, range)) if *phase == label.phase => range.end = index + 1,
                _ => phases.push((label.phase, index..index + 1)),
            }
            self.program.push(op, tensors)?;
            labels.push(label);
        }
        Ok(Plan {
            program: self.program,
            labels,
            layers: self.layers,
            inits: self.inits,
            phases,
        })
    }
}

/// Uniform init scale keeping activations of order one (`sqrt(3 / fan_in)`).
fn fan_in_scale(fan_in: usize) -> f32 {
    (3.0 / fan_in.max(1) as f32).sqrt()
}

/// Plans `network` at `batch`.
pub fn plan_network(
    network: &Network,
    batch: usize,
    precision: Precision,
    options: PlanOptions,
) -> Result<Plan> {
    let shapes = network.shapes(batch).map_err(|source| PlanError::Shapes {
        target: network.name.clone(),
        source,
    })?;
    let train = options.stage == Stage::Train;
    let mut b = Builder::new(precision);
    let input = b.float("input".into(), shapes[0].len());
    b.inits.push((input, Init::Uniform(1.0)));
    let mut act: Vec<TensorId> = vec![input];
    let mut saved: Vec<Saved> = Vec::new();
    for (i, layer) in network.layers.iter().enumerate() {
        let li = b.layer(&layer.name, layer.kind.op_name());
        let x = act[layer.inputs[0]];
        let (xs, ys) = (shapes[layer.inputs[0]], shapes[i + 1]);
        let y = b.float(format!("{}/output", layer.name), ys.len());
        let mut forward: Vec<Call> = Vec::new();
        match &layer.kind {
            LayerKind::Conv2d(conv) => {
                let fan_in = conv.in_channels / conv.groups * conv.kernel.0 * conv.kernel.1;
                let w = b.param(
                    format!("{}/weight", layer.name),
                    conv.weight_len(),
                    Init::Uniform(fan_in_scale(fan_in)),
                );
                let bias = conv.bias.then(|| {
                    b.param(
                        format!("{}/bias", layer.name),
                        conv.out_channels,
                        Init::Constant(0.0),
                    )
                });
                let g = ConvGeom {
                    conv: *conv,
                    input: xs,
                    output: ys,
                };
                let t = bind::Affine { x, w, bias, y };
                forward.push(b.op(Op::Conv2dForward(g), t, li, Phase::Forward)?);
            }
            LayerKind::Pool(pool) => {
                let op = Op::PoolForward(PoolGeom {
                    pool: *pool,
                    input: xs,
                    output: ys,
                });
                forward.push(b.op(op, bind::Unary { x, y }, li, Phase::Forward)?);
            }
            LayerKind::Relu => {
                let op = Op::ReluForward { len: ys.len() };
                forward.push(b.op(op, bind::Unary { x, y }, li, Phase::Forward)?);
            }
            LayerKind::Lrn(lrn) => {
                let scale = b.float(format!("{}/scale", layer.name), ys.len());
                let op = Op::LrnForward { lrn: *lrn, shape: ys };
                forward.push(b.op(op, bind::LrnForward { x, y, scale }, li, Phase::Forward)?);
            }
            LayerKind::BatchNorm(bn) => {
                let c = bn.channels;
                let gamma = b.param(format!("{}/gamma", layer.name), c, Init::Constant(1.0));
                let beta = b.param(format!("{}/beta", layer.name), c, Init::Constant(0.0));
                let running_mean = b.param(format!("{}/running_mean", layer.name), c, Init::Constant(0.0));
                let running_var = b.param(format!("{}/running_var", layer.name), c, Init::Constant(1.0));
                if train && ys.n * ys.h * ys.w < 2 {
                    return Err(PlanError::NoBatchVariance {
                        network: network.name.clone(),
                        layer: layer.name.clone(),
                        input: ys,
                    }
                    .into());
                }
                if train {
                    let t = bind::BatchNormTrain {
                        x,
                        gamma,
                        beta,
                        y,
                        saved_mean: b.float(format!("{}/saved_mean", layer.name), c),
                        saved_invstd: b.float(format!("{}/saved_invstd", layer.name), c),
                        running_mean,
                        running_var,
                    };
                    let op = Op::BatchNormForwardTrain { bn: *bn, shape: ys };
                    forward.push(b.op(op, t, li, Phase::Forward)?);
                } else {
                    let t = bind::BatchNormEval {
                        x,
                        gamma,
                        beta,
                        running_mean,
                        running_var,
                        y,
                    };
                    let op = Op::BatchNormForwardEval { bn: *bn, shape: ys };
                    forward.push(b.op(op, t, li, Phase::Forward)?);
                }
            }
            LayerKind::Linear(l) => {
                let geoms = linear_slices(batch, l, precision.bytes(), options.max_tensor_bytes);
                let sliced = geoms.len() > 1;
                for (k, g) in geoms.into_iter().enumerate() {
                    let part = if sliced {
                        format!("{}[{k}]", layer.name)
                    } else {
                        layer.name.clone()
                    };
                    let scale = Init::Uniform(fan_in_scale(l.in_features));
                    let w = b.param(format!("{part}/weight"), g.in_features * g.out_features, scale);
                    let bias = l
                        .bias
                        .then(|| b.param(format!("{part}/bias"), g.out_features, Init::Constant(0.0)));
                    let t = bind::Affine { x, w, bias, y };
                    forward.push(b.op(Op::LinearForward(g), t, li, Phase::Forward)?);
                }
            }
            LayerKind::GlobalAvgPool => {
                let op = Op::GlobalAvgPoolForward { shape: xs };
                forward.push(b.op(op, bind::Unary { x, y }, li, Phase::Forward)?);
            }
            LayerKind::Concat => {
                let mut offset = 0;
                for &node in &layer.inputs {
                    let part = shapes[node];
                    let op = Op::ChannelCopy {
                        n: batch,
                        hw: part.h * part.w,
                        total_channels: ys.c,
                        part_channels: part.c,
                        offset,
                        into_concat: true,
                    };
                    let t = bind::Copy {
                        src: act[node],
                        dst: y,
                    };
                    forward.push(b.op(op, t, li, Phase::Forward)?);
                    offset += part.c;
                }
            }
            LayerKind::Add => {
                let t = bind::Add {
                    a: x,
                    b: act[layer.inputs[1]],
                    y,
                };
                forward.push(b.op(Op::Add { len: ys.len() }, t, li, Phase::Forward)?);
            }
        }
        act.push(y);
        saved.push(Saved { layer: li, forward });
    }
    let logits = *act.last().expect("network has layers");
    let classes = shapes.last().map_or(0, Shape::per_image);
    if train {
        plan_loss_and_backward(
            &mut b, network, &shapes, &act, &saved, logits, batch, classes, options,
        )?;
    }
    b.finish()
}

#[allow(clippy::too_many_arguments)]
fn plan_loss_and_backward(
    b: &mut Builder,
    network: &Network,
    shapes: &[Shape],
    act: &[TensorId],
    saved: &[Saved],
    logits: TensorId,
    batch: usize,
    classes: usize,
    options: PlanOptions,
) -> Result<()> {
    let loss_layer = b.layer("loss", "softmax_cross_entropy");
    let labels = b.program.tensor("labels", batch, DType::U32);
    b.inits.push((labels, Init::Labels(classes as u32)));
    let loss = b.float("loss".into(), batch);
    let probs = b.float("probabilities".into(), batch * classes);
    let t = bind::SoftmaxForward {
        logits,
        labels,
        loss,
        probs,
    };
    b.op(
        Op::SoftmaxCrossEntropyForward { batch, classes },
        t,
        loss_layer,
        Phase::LossForward,
    )?;
    let dlogits = b.float("loss/grad".into(), batch * classes);
    b.op(
        Op::SoftmaxCrossEntropyBackward { batch, classes },
        bind::SoftmaxBackward {
            probs,
            labels,
            dlogits,
        },
        loss_layer,
        Phase::LossBackward,
    )?;

    // Gradient contributions per node, summed when a node feeds several layers.
    let mut contributions: Vec<Vec<TensorId>> = vec![Vec::new(); act.len()];
    contributions[act.len() - 1].push(dlogits);
    for (i, layer) in network.layers.iter().enumerate().rev() {
        let (li, forward) = (saved[i].layer, &saved[i].forward);
        let out = i + 1;
        let dy = match contributions[out].len() {
            0 => continue,
            1 => contributions[out][0],
            _ => {
                let parts = std::mem::take(&mut contributions[out]);
                let mut sum = parts[0];
                for (k, &part) in parts.iter().enumerate().skip(1) {
                    let t = b.float(format!("{}/grad_sum{k}", layer.name), shapes[out].len());
                    b.op(
                        Op::Add {
                            len: shapes[out].len(),
                        },
                        bind::Add {
                            a: sum,
                            b: part,
                            y: t,
                        },
                        li,
                        Phase::GradInput,
                    )?;
                    sum = t;
                }
                sum
            }
        };
        let first = layer.inputs[0];
        let (xs, ys) = (shapes[first], shapes[out]);
        // The network input needs no gradient unless asked for.
        let wants = |node: usize| node != 0 || options.data_grad;
        let mut grad_for = |b: &mut Builder, node: usize| -> TensorId {
            let k = contributions[node].len();
            let t = b.float(format!("{}/grad_input{node}.{k}", layer.name), shapes[node].len());
            contributions[node].push(t);
            t
        };
        match &layer.kind {
            LayerKind::Conv2d(conv) => {
                let g = ConvGeom {
                    conv: *conv,
                    input: xs,
                    output: ys,
                };
                let bind::Affine { x, w, bias, .. } = recall(forward.first())?;
                if wants(first) {
                    let dx = grad_for(b, first);
                    let t = bind::BackwardData { dy, w, dx };
                    b.op(Op::Conv2dBackwardData(g), t, li, Phase::GradInput)?;
                }
                let dw = b.float(format!("{}/weight_grad", layer.name), conv.weight_len());
                b.params.push((w, dw));
                let dbias = bias.map(|bias| {
                    let db = b.float(format!("{}/bias_grad", layer.name), conv.out_channels);
                    b.params.push((bias, db));
                    db
                });
                let t = bind::BackwardParams { x, dy, dw, dbias };
                b.op(Op::Conv2dBackwardFilter(g), t, li, Phase::GradParams)?;
            }
            LayerKind::Linear(_) => {
                // Slices' input gradients are partial sums, added like any fan-out.
                for call in forward {
                    let Op::LinearForward(g) = call.0 else {
                        return Err(PlanError::LinearPlannedAs {
                            layer: layer.name.clone(),
                            op: call.0.name(),
                        }
                        .into());
                    };
                    let bind::Affine { x, w, bias, .. } = recall(Some(call))?;
                    if wants(first) {
                        let dx = grad_for(b, first);
                        let t = bind::BackwardData { dy, w, dx };
                        b.op(Op::LinearBackwardData(g), t, li, Phase::GradInput)?;
                    }
                    let dw_name = format!("{}/grad", b.program.tensors[w].name);
                    let dw = b.float(dw_name, g.in_features * g.out_features);
                    b.params.push((w, dw));
                    let dbias = bias.map(|bias| {
                        let db_name = format!("{}/grad", b.program.tensors[bias].name);
                        let db = b.float(db_name, g.out_features);
                        b.params.push((bias, db));
                        db
                    });
                    let t = bind::BackwardParams { x, dy, dw, dbias };
                    b.op(Op::LinearBackwardParams(g), t, li, Phase::GradParams)?;
                }
            }
            LayerKind::BatchNorm(bn) => {
                let f: bind::BatchNormTrain<TensorId> = recall(forward.first())?;
                let dx = grad_for(b, first);
                let dgamma = b.float(format!("{}/gamma_grad", layer.name), bn.channels);
                let dbeta = b.float(format!("{}/beta_grad", layer.name), bn.channels);
                b.params.push((f.gamma, dgamma));
                b.params.push((f.beta, dbeta));
                // cuDNN and Torch compute all three gradients in one kernel pair; it is timed
                // as grad-input, where it sits on the critical path.
                let t = bind::BatchNormBackward {
                    x: f.x,
                    dy,
                    gamma: f.gamma,
                    saved_mean: f.saved_mean,
                    saved_invstd: f.saved_invstd,
                    dx,
                    dgamma,
                    dbeta,
                };
                b.op(
                    Op::BatchNormBackward { bn: *bn, shape: ys },
                    t,
                    li,
                    Phase::GradInput,
                )?;
            }
            _ if !wants(first) => {}
            LayerKind::Pool(pool) => {
                let bind::Unary { x, .. } = recall(forward.first())?;
                let dx = grad_for(b, first);
                b.op(
                    Op::PoolBackward(PoolGeom {
                        pool: *pool,
                        input: xs,
                        output: ys,
                    }),
                    bind::PoolBackward { x, dy, dx },
                    li,
                    Phase::GradInput,
                )?;
            }
            LayerKind::Relu => {
                let bind::Unary { y, .. } = recall(forward.first())?;
                let dx = grad_for(b, first);
                b.op(
                    Op::ReluBackward { len: ys.len() },
                    bind::ReluBackward { y, dy, dx },
                    li,
                    Phase::GradInput,
                )?;
            }
            LayerKind::Lrn(lrn) => {
                let bind::LrnForward { x, y, scale } = recall(forward.first())?;
                let dx = grad_for(b, first);
                b.op(
                    Op::LrnBackward { lrn: *lrn, shape: ys },
                    bind::LrnBackward { x, y, scale, dy, dx },
                    li,
                    Phase::GradInput,
                )?;
            }
            LayerKind::GlobalAvgPool => {
                let dx = grad_for(b, first);
                b.op(
                    Op::GlobalAvgPoolBackward { shape: xs },
                    bind::Gradient { dy, dx },
                    li,
                    Phase::GradInput,
                )?;
            }
            LayerKind::Concat => {
                let mut offset = 0;
                for &node in &layer.inputs {
                    let part = shapes[node];
                    let dx = grad_for(b, node);
                    let op = Op::ChannelCopy {
                        n: batch,
                        hw: part.h * part.w,
                        total_channels: ys.c,
                        part_channels: part.c,
                        offset,
                        into_concat: false,
                    };
                    b.op(op, bind::Copy { src: dy, dst: dx }, li, Phase::GradInput)?;
                    offset += part.c;
                }
            }
            LayerKind::Add => {
                // The gradient of a sum reaches both inputs unchanged.
                for &node in &layer.inputs {
                    if wants(node) {
                        contributions[node].push(dy);
                    }
                }
            }
        }
    }
    plan_update(b)
}

fn plan_update(b: &mut Builder) -> Result<()> {
    let update_layer = b.layer("sgd", "sgd_update");
    for (weight, grad) in std::mem::take(&mut b.params) {
        let len = b.program.tensors[weight].len;
        let name = format!("{}/velocity", b.program.tensors[weight].name);
        let velocity = b.float(name, len);
        b.inits.push((velocity, Init::Constant(0.0)));
        let op = Op::SgdUpdate {
            len,
            lr: LEARNING_RATE,
            momentum: MOMENTUM,
            weight_decay: WEIGHT_DECAY,
        };
        let t = bind::Sgd {
            grad,
            weight,
            velocity,
        };
        b.op(op, t, update_layer, Phase::Update)?;
    }
    Ok(())
}

/// Plans one suite layer: convolution forward, backward-data and backward-filter.
pub fn plan_suite_entry(
    entry: &SuiteEntry,
    batch: usize,
    precision: Precision,
    stage: Stage,
) -> Result<Plan> {
    let (c, h, w) = entry.input;
    if c != entry.conv.in_channels {
        return Err(PlanError::SuiteChannels {
            entry: entry.name.clone(),
            input_channels: c,
            conv_channels: entry.conv.in_channels,
        }
        .into());
    }
    // The checks of a network's layer: counts and sizes of zero, tensors too large.
    let alone = Network {
        name: entry.name.clone(),
        description: String::new(),
        input: entry.input,
        layers: vec![crate::model::Layer {
            name: entry.name.clone(),
            kind: LayerKind::Conv2d(entry.conv),
            inputs: vec![0],
        }],
    };
    match alone.shapes(batch) {
        Err(ShapeError::TooSmall { .. }) | Ok(_) => {}
        Err(source) => {
            return Err(PlanError::Shapes {
                target: entry.name.clone(),
                source,
            }
            .into());
        }
    }
    let g = ConvGeom::new(entry.conv, batch, h, w).ok_or_else(|| PlanError::KernelLargerThanInput {
        entry: entry.name.clone(),
    })?;
    let mut b = Builder::new(precision);
    let li = b.layer(&entry.name, "conv2d");
    let fan_in = entry.conv.in_channels / entry.conv.groups * entry.conv.kernel.0 * entry.conv.kernel.1;
    let x = b.param("input".into(), g.input.len(), Init::Uniform(1.0));
    let wt = b.param(
        "weight".into(),
        entry.conv.weight_len(),
        Init::Uniform(fan_in_scale(fan_in)),
    );
    let bias = entry
        .conv
        .bias
        .then(|| b.param("bias".into(), entry.conv.out_channels, Init::Constant(0.0)));
    let y = b.float("output".into(), g.output.len());
    let t = bind::Affine { x, w: wt, bias, y };
    b.op(Op::Conv2dForward(g), t, li, Phase::Forward)?;
    if stage == Stage::Train {
        let dy = b.param("output_grad".into(), g.output.len(), Init::Uniform(1.0));
        let dx = b.float("input_grad".into(), g.input.len());
        let t = bind::BackwardData { dy, w: wt, dx };
        b.op(Op::Conv2dBackwardData(g), t, li, Phase::GradInput)?;
        let dw = b.float("weight_grad".into(), entry.conv.weight_len());
        let dbias = entry
            .conv
            .bias
            .then(|| b.float("bias_grad".into(), entry.conv.out_channels));
        let t = bind::BackwardParams { x, dy, dw, dbias };
        b.op(Op::Conv2dBackwardFilter(g), t, li, Phase::GradParams)?;
    }
    b.finish()
}

/// One op of each family, as the zoo plans them at batch 1, with its optional tensors where the
/// family has any (a layer with a bias): the instances `kernels --contract` documents.
pub fn representative_ops() -> Result<Vec<Op>> {
    let mut found: Vec<Op> = Vec::new();
    for network in crate::model::zoo() {
        for stage in [Stage::Train, Stage::Eval] {
            let options = PlanOptions {
                stage,
                data_grad: true,
                max_tensor_bytes: u64::MAX,
            };
            let plan = plan_network(&network, 1, Precision::F32, options)?;
            for call in plan.program.ops {
                let bound = call.op.contract().len();
                match found.iter_mut().find(|o| o.name() == call.op.name()) {
                    Some(o) if o.contract().len() < bound => *o = call.op,
                    Some(_) => {}
                    None => found.push(call.op),
                }
            }
        }
    }
    Ok(found)
}

/// The representative op named `name` (`conv2d_forward`); invalid input listing every name
/// when there is none.
pub fn representative_op(name: &str) -> Result<Op> {
    let mut ops = representative_ops()?;
    match ops.iter().position(|op| op.name() == name) {
        Some(index) => Ok(ops.swap_remove(index)),
        None => Err(crate::kernels::KernelError::UnknownOp {
            name: name.to_string(),
            ops: ops.iter().map(|op| op.name()).collect(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::{PlanError, PlanOptions, plan_network, representative_op};
    use crate::model::{LayerKind, NetworkBuilder, Precision};
    use crate::results::Stage;
    use crate::{Error, ErrorKind};

    fn options(stage: Stage) -> PlanOptions {
        PlanOptions {
            stage,
            data_grad: true,
            max_tensor_bytes: u64::MAX,
        }
    }

    /// PyTorch raises "Expected more than 1 value per channel when training"; the planner refuses
    /// the layer by name rather than normalising with a variance of 0.
    #[test]
    fn batch_norm_over_one_value_per_channel_in_training_is_rejected_by_name() {
        let mut b = NetworkBuilder::new("pooled", "batch norm after a global pool", (3, 8, 8));
        let x = b.conv("conv", b.input(), 4, 3, 1, 1);
        let x = b.layer("gap", LayerKind::GlobalAvgPool, &[x]);
        b.batch_norm("head.bn", x);
        let network = b.finish().expect("shapes fit");
        let err = plan_network(&network, 1, Precision::F32, options(Stage::Train)).expect_err("one value");
        let message = err.to_string();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{message}");
        assert!(
            matches!(&err, Error::Plan(e) if matches!(&**e, PlanError::NoBatchVariance { network, layer, .. }
                if network == "pooled" && layer == "head.bn")),
            "{err:?}"
        );
        assert!(message.contains("pooled: batch norm layer head.bn"), "{message}");
        assert!(
            message.contains("Expected more than 1 value per channel"),
            "{message}"
        );
        assert!(message.contains("--stage eval"), "{message}");
        plan_network(&network, 2, Precision::F32, options(Stage::Train)).expect("two values per channel");
        plan_network(&network, 1, Precision::F32, options(Stage::Eval))
            .expect("eval uses running statistics");
    }

    #[test]
    fn an_unknown_op_lists_the_ops_there_are() {
        assert_eq!(
            representative_op("conv2d_forward").expect("an op").name(),
            "conv2d_forward"
        );
        let error = representative_op("conv3d").expect_err("no such op");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.to_string().contains("conv2d_forward"), "{error}");
    }
}
