//! How each op runs on the `cuda` backend: a [`Step`] prepared once when a program loads
//! (descriptors built, convolution algorithms measured, launches sized, the op's tensors
//! resolved by name to binding positions in its tensor struct, [`crate::kernels::bind`]), then
//! run as often as asked with the op's bindings in [`crate::kernels::Op::contract`] order, which
//! it picks by those positions without reading the contract again.

use super::ffi::{
    Buffer, CallError, ConvChoice, ConvDesc, ConvDescs, ConvParams, ConvPass, DataType, FilterDesc, Gemm,
    Gpu, MathMode, Output, PoolDesc, PoolMode, Region, ReluDesc, TensorDesc,
};
use super::kernels::{self, Kernels, Launch};
use crate::kernels::{ConvGeom, LinearGeom, Op, PoolGeom, bind};
use crate::model::{BatchNorm, PoolKind, Shape};
use std::cell::RefCell;
use std::collections::HashMap;

/// What identifies a measured convolution algorithm.
pub(super) type ConvKey = (ConvPass, ConvGeom, DataType, MathMode);

/// One op, ready to run.
pub(super) enum Step {
    /// A cuDNN convolution pass, plus its bias.
    Conv(ConvStep),
    /// cuDNN pooling (windows that cuDNN computes exactly as the reference).
    CudnnPool(CudnnPoolStep),
    /// cuDNN ReLU.
    Relu(ReluStep),
    /// cuDNN batch normalisation.
    BatchNorm(BatchNormStep),
    /// A cuBLAS GEMM, plus its bias.
    Linear(LinearStep),
    /// One of convbench's kernels.
    Kernel(Launch),
}

impl Step {
    /// Runs `op` on `bindings` (its tensors in binding order), with the program's shared
    /// convolution `workspace`.
    pub(super) fn run(
        &self,
        gpu: &Gpu,
        op: &Op,
        bindings: &[Region<'_>],
        workspace: Option<Region<'_>>,
    ) -> Result<(), CallError> {
        match self {
            Step::Conv(s) => s.run(gpu, bindings, workspace),
            Step::CudnnPool(s) => s.run(gpu, bindings),
            Step::Relu(s) => s.run(gpu, bindings),
            Step::BatchNorm(s) => s.run(gpu, op, bindings),
            Step::Linear(s) => s.run(gpu, bindings),
            Step::Kernel(launch) => launch.run(gpu, bindings, None),
        }
    }

    /// Workspace bytes the step needs.
    pub(super) fn workspace_bytes(&self) -> usize {
        match self {
            Step::Conv(s) => s.choice.workspace_bytes,
            _ => 0,
        }
    }

    /// The library routine that runs the step, as records name it (a layer's variant):
    /// `cudnn_implicit_precomp_gemm`, `cudnn_bwd_filter_algo_1`, `cublas`; `None` for our
    /// NVRTC kernels and cuDNN's other routines.
    pub(super) fn kernel_name(&self) -> Option<String> {
        match self {
            Step::Conv(s) => Some(s.choice.algo.name()),
            Step::Linear(_) => Some("cublas".into()),
            _ => None,
        }
    }

    /// How the step runs, for messages, e.g. `cuDNN Forward(...)`.
    pub(super) fn describe(&self) -> String {
        match self {
            Step::Conv(s) => format!("cuDNN {}", s.choice.describe()),
            Step::CudnnPool(_) => "cuDNN pooling".into(),
            Step::Relu(_) => "cuDNN activation".into(),
            Step::BatchNorm(_) => "cuDNN batch normalization".into(),
            Step::Linear(_) => "cuBLAS GEMM".into(),
            Step::Kernel(_) => "NVRTC kernel".into(),
        }
    }
}

/// The tensors of `op`, by name.
fn named<'a, S: bind::Tensors<Region<'a>>>(op: &Op, bindings: &[Region<'a>]) -> Result<S, CallError> {
    op.tensors(bindings.to_vec())
        .map_err(|e| CallError(e.to_string()))
}

/// The binding position of each of `op`'s tensors, by name: resolved once, when the op's step is
/// prepared.
fn positions<S: bind::Tensors<usize>>(op: &Op) -> Result<S, PlanError> {
    op.tensors((0..op.contract().len()).collect())
        .map_err(|e| PlanError::Call(CallError(e.to_string())))
}

/// The binding at `position` (from [`positions`]) of an op's `bindings`.
fn at<'a>(bindings: &[Region<'a>], position: usize) -> Result<Region<'a>, CallError> {
    bindings
        .get(position)
        .copied()
        .ok_or_else(|| CallError(format!("the op binds no tensor {position}")))
}

/// The binding positions of a convolution pass's tensors.
#[derive(Debug, Clone, Copy)]
enum ConvTensors {
    Forward(bind::Affine<usize>),
    BackwardData(bind::BackwardData<usize>),
    BackwardFilter(bind::BackwardParams<usize>),
}

/// A convolution pass.
pub(super) struct ConvStep {
    descs: ConvDescs,
    choice: ConvChoice,
    tensors: ConvTensors,
    /// `[1, out_channels, 1, 1]` when the layer has a bias.
    bias: Option<TensorDesc>,
}

impl ConvStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>], workspace: Option<Region<'_>>) -> Result<(), CallError> {
        let workspace = workspace.filter(|_| self.choice.workspace_bytes > 0);
        match self.tensors {
            ConvTensors::Forward(t) => {
                let bind::Affine { x, w, bias, y } = t.try_map(|p| at(b, p))?;
                let mode = match (&self.bias, bias) {
                    (Some(desc), Some(bias)) => {
                        gpu.set_bias(desc, bias, &self.descs.y, y)?;
                        Output::Accumulate
                    }
                    _ => Output::Overwrite,
                };
                gpu.conv(&self.descs, &self.choice, [x, w, y], workspace, mode)?;
            }
            ConvTensors::BackwardData(t) => {
                let bind::BackwardData { dy, w, dx } = t.try_map(|p| at(b, p))?;
                gpu.conv(
                    &self.descs,
                    &self.choice,
                    [dy, w, dx],
                    workspace,
                    Output::Overwrite,
                )?;
            }
            ConvTensors::BackwardFilter(t) => {
                let bind::BackwardParams { x, dy, dw, dbias } = t.try_map(|p| at(b, p))?;
                gpu.conv(
                    &self.descs,
                    &self.choice,
                    [x, dy, dw],
                    workspace,
                    Output::Overwrite,
                )?;
                if let (Some(desc), Some(dbias)) = (&self.bias, dbias) {
                    gpu.conv_backward_bias(&self.descs.y, dy, desc, dbias)?;
                }
            }
        }
        Ok(())
    }
}

/// The binding positions of a pooling pass's tensors.
#[derive(Debug, Clone, Copy)]
enum PoolTensors {
    Forward(bind::Unary<usize>),
    /// Average pooling only.
    Backward(bind::PoolBackward<usize>),
}

/// A pooling pass through cuDNN.
pub(super) struct CudnnPoolStep {
    pool: PoolDesc,
    x: TensorDesc,
    y: TensorDesc,
    tensors: PoolTensors,
}

impl CudnnPoolStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>]) -> Result<(), CallError> {
        match self.tensors {
            PoolTensors::Backward(t) => {
                let bind::PoolBackward { x, dy, dx } = t.try_map(|p| at(b, p))?;
                gpu.average_pool_backward(&self.pool, &self.x, x, &self.y, dy, dx)
            }
            PoolTensors::Forward(t) => {
                let bind::Unary { x, y } = t.try_map(|p| at(b, p))?;
                gpu.pool_forward(&self.pool, &self.x, x, &self.y, y)
            }
        }
    }
}

/// The binding positions of a ReLU pass's tensors.
#[derive(Debug, Clone, Copy)]
enum ReluTensors {
    Forward(bind::Unary<usize>),
    Backward(bind::ReluBackward<usize>),
}

/// A ReLU pass through cuDNN.
pub(super) struct ReluStep {
    relu: ReluDesc,
    desc: TensorDesc,
    tensors: ReluTensors,
}

impl ReluStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>]) -> Result<(), CallError> {
        match self.tensors {
            ReluTensors::Backward(t) => {
                let bind::ReluBackward { y, dy, dx } = t.try_map(|p| at(b, p))?;
                gpu.relu_backward(&self.relu, &self.desc, y, dy, dx)
            }
            ReluTensors::Forward(t) => {
                let bind::Unary { x, y } = t.try_map(|p| at(b, p))?;
                gpu.relu_forward(&self.relu, &self.desc, x, y)
            }
        }
    }
}

/// A batch normalisation pass, with the binding positions of its tensors.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BatchNormPass {
    Train {
        momentum: f64,
        tensors: bind::BatchNormTrain<usize>,
    },
    Eval(bind::BatchNormEval<usize>),
    Backward(bind::BatchNormBackward<usize>),
}

impl BatchNormPass {
    /// The per-channel tensors cuDNN reads and writes, in the order of the `ffi` call; how many
    /// of the first are read; the first that is written.
    fn param_names(self) -> (&'static [&'static str], usize, usize) {
        match self {
            BatchNormPass::Train { .. } => (
                &[
                    "gamma",
                    "beta",
                    "running_mean",
                    "running_var",
                    "saved_mean",
                    "saved_invstd",
                ],
                4,
                2,
            ),
            BatchNormPass::Eval(_) => (&["gamma", "beta", "running_mean", "running_var"], 4, 4),
            BatchNormPass::Backward(_) => (&["gamma", "saved_mean", "saved_invstd", "dgamma", "dbeta"], 3, 3),
        }
    }
}

/// Batch normalisation through cuDNN. cuDNN takes the per-channel tensors in f32; an f16
/// program stores them in f16, so they go through an f32 scratch buffer (`unpack` before,
/// `pack` after).
pub(super) struct BatchNormStep {
    pass: BatchNormPass,
    x: TensorDesc,
    params: TensorDesc,
    channels: usize,
    eps: f64,
    /// Binding positions of the per-channel tensors, in the order of the `ffi` call
    /// ([`BatchNormPass::param_names`]).
    param_positions: Vec<usize>,
    scratch: Option<Buffer>,
    unpack: Option<Launch>,
    pack: Option<Launch>,
}

impl BatchNormStep {
    fn run(&self, gpu: &Gpu, op: &Op, b: &[Region<'_>]) -> Result<(), CallError> {
        let scratch = self.scratch.as_ref().map(Buffer::region);
        if let Some(unpack) = &self.unpack {
            unpack.run(gpu, b, scratch)?;
        }
        let vector = self.channels * DataType::F32.bytes();
        let params = self
            .param_positions
            .iter()
            .enumerate()
            .map(|(k, &index)| match scratch {
                Some(s) => s
                    .slice(k * vector, vector)
                    .ok_or_else(|| CallError("batch norm scratch too small".into())),
                None => b
                    .get(index)
                    .copied()
                    .ok_or_else(|| CallError(format!("{} binds no tensor {index}", op.name()))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let param = |k: usize| {
            params
                .get(k)
                .copied()
                .ok_or_else(|| CallError("batch norm parameter missing".into()))
        };
        match self.pass {
            BatchNormPass::Train { momentum, tensors } => {
                let (x, y) = (at(b, tensors.x)?, at(b, tensors.y)?);
                gpu.batch_norm_forward_train(
                    &self.x,
                    [x, y],
                    &self.params,
                    [param(0)?, param(1)?, param(2)?, param(3)?, param(4)?, param(5)?],
                    momentum,
                    self.eps,
                )?
            }
            BatchNormPass::Eval(tensors) => {
                let (x, y) = (at(b, tensors.x)?, at(b, tensors.y)?);
                gpu.batch_norm_forward_eval(
                    &self.x,
                    [x, y],
                    &self.params,
                    [param(0)?, param(1)?, param(2)?, param(3)?],
                    self.eps,
                )?
            }
            BatchNormPass::Backward(tensors) => {
                let (x, dy, dx) = (at(b, tensors.x)?, at(b, tensors.dy)?, at(b, tensors.dx)?);
                gpu.batch_norm_backward(
                    &self.x,
                    [x, dy, dx],
                    &self.params,
                    [param(0)?, param(1)?, param(2)?, param(3)?, param(4)?],
                    self.eps,
                )?
            }
        }
        if let Some(pack) = &self.pack {
            pack.run(gpu, b, scratch)?;
        }
        Ok(())
    }
}

/// A fully connected pass, with the binding positions of its tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinearPass {
    Forward(bind::Affine<usize>),
    BackwardData(bind::BackwardData<usize>),
    BackwardParams(bind::BackwardParams<usize>),
}

/// A fully connected pass through cuBLAS (row-major tensors seen as column-major transposes),
/// its bias through convbench's kernels.
pub(super) struct LinearStep {
    pass: LinearPass,
    geom: LinearGeom,
    dtype: DataType,
    bias: Option<Launch>,
}

impl LinearStep {
    fn run<'a>(&self, gpu: &Gpu, b: &[Region<'a>]) -> Result<(), CallError> {
        let g = &self.geom;
        let offset = g.y_offset * self.dtype.bytes();
        let column_slice = |region: Region<'a>| {
            region
                .from(offset)
                .ok_or_else(|| CallError("column offset outside the output".into()))
        };
        match self.pass {
            LinearPass::Forward(t) => {
                // y[n, offset + o] = sum_i x[n, i] w[o, i] (+ bias[o])
                let (x, w, y) = (at(b, t.x)?, at(b, t.w)?, at(b, t.y)?);
                if let Some(bias) = &self.bias {
                    bias.run(gpu, b, None)?;
                }
                gpu.gemm(&Gemm {
                    trans_a: true,
                    trans_b: false,
                    m: g.out_features,
                    n: g.batch,
                    k: g.in_features,
                    a: (w, g.in_features),
                    b: (x, g.in_features),
                    c: (column_slice(y)?, g.y_stride),
                    accumulate: self.bias.is_some(),
                    dtype: self.dtype,
                })
            }
            LinearPass::BackwardData(t) => {
                // dx[n, i] = sum_o dy[n, offset + o] w[o, i]
                let bind::BackwardData { dy, w, dx } = t.try_map(|p| at(b, p))?;
                gpu.gemm(&Gemm {
                    trans_a: false,
                    trans_b: false,
                    m: g.in_features,
                    n: g.batch,
                    k: g.out_features,
                    a: (w, g.in_features),
                    b: (column_slice(dy)?, g.y_stride),
                    c: (dx, g.in_features),
                    accumulate: false,
                    dtype: self.dtype,
                })
            }
            LinearPass::BackwardParams(t) => {
                // dw[o, i] = sum_n dy[n, offset + o] x[n, i]
                let (x, dy, dw) = (at(b, t.x)?, at(b, t.dy)?, at(b, t.dw)?);
                gpu.gemm(&Gemm {
                    trans_a: false,
                    trans_b: true,
                    m: g.in_features,
                    n: g.out_features,
                    k: g.batch,
                    a: (x, g.in_features),
                    b: (column_slice(dy)?, g.y_stride),
                    c: (dw, g.in_features),
                    accumulate: false,
                    dtype: self.dtype,
                })?;
                match &self.bias {
                    Some(bias) => bias.run(gpu, b, None),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Why an op cannot be prepared.
#[derive(Debug)]
pub(super) enum PlanError {
    /// A CUDA library call failed.
    Call(CallError),
    /// The op has no implementation on this backend for this shape.
    NotImplemented(String),
}

impl From<CallError> for PlanError {
    fn from(e: CallError) -> Self {
        PlanError::Call(e)
    }
}

/// Prepares the ops of one program.
pub(super) struct Planner<'a> {
    /// The device.
    pub gpu: &'a Gpu,
    /// convbench's kernels.
    pub kernels: &'a Kernels,
    /// Storage type of float tensors.
    pub dtype: DataType,
    /// Rounding rules of convolutions and GEMMs.
    pub math: MathMode,
    /// Algorithms measured so far on this backend.
    pub algorithms: &'a RefCell<HashMap<ConvKey, ConvChoice>>,
    /// Scratch memory for the algorithm search, allocated on first need.
    pub search_workspace: Option<Option<Buffer>>,
}

/// Largest workspace offered to cuDNN's algorithm search: faster algorithms (FFT, Winograd)
/// often need more, and the search only tries those that fit.
const MAX_SEARCH_WORKSPACE: usize = 4 << 30;

impl Planner<'_> {
    /// The step of `op`, whose tensors are `bindings` (freshly allocated: an algorithm search
    /// overwrites the op's output).
    pub(super) fn plan(&mut self, op: &Op, bindings: &[Region<'_>]) -> Result<Step, PlanError> {
        if let Some(launch) = kernels::single_kernel_op(self.kernels, op, self.dtype)? {
            return Ok(Step::Kernel(launch));
        }
        Ok(match op {
            Op::Conv2dForward(g) => Step::Conv(self.conv(op, ConvPass::Forward, g, bindings)?),
            Op::Conv2dBackwardData(g) => Step::Conv(self.conv(op, ConvPass::BackwardData, g, bindings)?),
            Op::Conv2dBackwardFilter(g) => {
                Step::Conv(self.conv(op, ConvPass::BackwardFilter, g, bindings)?)
            }
            Op::PoolForward(g) => self.pool(op, g, false)?,
            Op::PoolBackward(g) => self.pool(op, g, true)?,
            Op::ReluForward { len } | Op::ReluBackward { len } => Step::Relu(ReluStep {
                relu: ReluDesc::new()?,
                desc: TensorDesc::nchw(self.dtype, [1, 1, 1, *len])?,
                tensors: match op {
                    Op::ReluBackward { .. } => ReluTensors::Backward(positions(op)?),
                    _ => ReluTensors::Forward(positions(op)?),
                },
            }),
            Op::BatchNormForwardTrain { bn, shape } => {
                if shape.n * shape.h * shape.w < 2 {
                    return Err(PlanError::NotImplemented(format!(
                        "batch normalization over a single value per channel ({shape}): its unbiased \
                         variance is undefined in cuDNN"
                    )));
                }
                self.batch_norm(
                    op,
                    BatchNormPass::Train {
                        momentum: bn.momentum,
                        tensors: positions(op)?,
                    },
                    bn,
                    shape,
                )?
            }
            Op::BatchNormForwardEval { bn, shape } => {
                self.batch_norm(op, BatchNormPass::Eval(positions(op)?), bn, shape)?
            }
            Op::BatchNormBackward { bn, shape } => {
                self.batch_norm(op, BatchNormPass::Backward(positions(op)?), bn, shape)?
            }
            Op::LinearForward(g) => self.linear(op, LinearPass::Forward(positions(op)?), g)?,
            Op::LinearBackwardData(g) => self.linear(op, LinearPass::BackwardData(positions(op)?), g)?,
            Op::LinearBackwardParams(g) => self.linear(op, LinearPass::BackwardParams(positions(op)?), g)?,
            other => {
                return Err(PlanError::NotImplemented(format!(
                    "{} has no cuda implementation",
                    other.name()
                )));
            }
        })
    }

    fn conv(
        &mut self,
        op: &Op,
        pass: ConvPass,
        g: &ConvGeom,
        bindings: &[Region<'_>],
    ) -> Result<ConvStep, PlanError> {
        let c = &g.conv;
        let descs = ConvDescs {
            x: TensorDesc::nchw(self.dtype, shape4(&g.input))?,
            w: FilterDesc::kcrs(
                self.dtype,
                [c.out_channels, c.in_channels / c.groups, c.kernel.0, c.kernel.1],
            )?,
            y: TensorDesc::nchw(self.dtype, shape4(&g.output))?,
            conv: ConvDesc::new(
                ConvParams {
                    padding: c.padding,
                    stride: c.stride,
                    dilation: c.dilation,
                    groups: c.groups,
                },
                self.math,
            )?,
        };
        let key = (pass, *g, self.dtype, self.math);
        let cached = self.algorithms.borrow().get(&key).copied();
        let choice = match cached {
            Some(choice) => choice,
            None => {
                let regions = match pass {
                    ConvPass::Forward => {
                        let bind::Affine { x, w, y, .. } = named(op, bindings)?;
                        [x, w, y]
                    }
                    ConvPass::BackwardData => {
                        let bind::BackwardData { dy, w, dx } = named(op, bindings)?;
                        [dy, w, dx]
                    }
                    ConvPass::BackwardFilter => {
                        let bind::BackwardParams { x, dy, dw, .. } = named(op, bindings)?;
                        [x, dy, dw]
                    }
                };
                self.allocate_search_workspace()?;
                let workspace = self.search_workspace.as_ref().and_then(Option::as_ref);
                let choice = self
                    .gpu
                    .find_conv(pass, &descs, self.math, regions, workspace.map(Buffer::region))?
                    .map_err(|offered| {
                        PlanError::NotImplemented(format!(
                            "cuDNN has no {pass:?} convolution algorithm for {g:?} in {:?} with {:?} \
                             ({offered})",
                            self.dtype, self.math
                        ))
                    })?;
                self.algorithms.borrow_mut().insert(key, choice);
                choice
            }
        };
        let bias = match (pass, c.bias) {
            (ConvPass::Forward | ConvPass::BackwardFilter, true) => {
                Some(TensorDesc::nchw(self.dtype, [1, c.out_channels, 1, 1])?)
            }
            _ => None,
        };
        let tensors = match pass {
            ConvPass::Forward => ConvTensors::Forward(positions(op)?),
            ConvPass::BackwardData => ConvTensors::BackwardData(positions(op)?),
            ConvPass::BackwardFilter => ConvTensors::BackwardFilter(positions(op)?),
        };
        Ok(ConvStep {
            descs,
            choice,
            tensors,
            bias,
        })
    }

    /// The search workspace: as much as half the free memory allows, up to
    /// [`MAX_SEARCH_WORKSPACE`], halving on allocation failure.
    fn allocate_search_workspace(&mut self) -> Result<(), CallError> {
        if self.search_workspace.is_none() {
            let (free, _) = self
                .gpu
                .context()
                .mem_get_info()
                .map_err(|e| CallError(format!("querying free device memory failed: {e:?}")))?;
            let mut bytes = (free / 2).min(MAX_SEARCH_WORKSPACE);
            let mut buffer = None;
            while bytes >= 1 << 20 {
                if let Ok(b) = Buffer::zeros(self.gpu.stream(), bytes) {
                    buffer = Some(b);
                    break;
                }
                bytes /= 2;
            }
            self.search_workspace = Some(buffer);
        }
        Ok(())
    }

    fn pool(&mut self, op: &Op, g: &PoolGeom, backward: bool) -> Result<Step, PlanError> {
        let p = &g.pool;
        // cuDNN has no ceil mode: it computes a ceil-mode layer only when rounding up adds no
        // window. Its max-pooling gradient does not document which of tied maxima gets the
        // gradient (the reference gives it to the first), so max backward is always ours.
        let floor_sized = crate::model::Pool2d {
            ceil_mode: false,
            ..*p
        }
        .output_hw(g.input.h, g.input.w)
            == Some((g.output.h, g.output.w));
        let cudnn = floor_sized && (!backward || p.kind == PoolKind::Avg);
        if !cudnn {
            return Ok(Step::Kernel(kernels::pool(
                self.kernels,
                op,
                g,
                backward,
                self.dtype,
            )?));
        }
        let mode = match (p.kind, p.count_include_pad) {
            (PoolKind::Max, _) => PoolMode::Max,
            (PoolKind::Avg, true) => PoolMode::AverageIncludePadding,
            (PoolKind::Avg, false) => PoolMode::AverageExcludePadding,
        };
        Ok(Step::CudnnPool(CudnnPoolStep {
            pool: PoolDesc::new(mode, p.kernel, p.padding, p.stride)?,
            x: TensorDesc::nchw(self.dtype, shape4(&g.input))?,
            y: TensorDesc::nchw(self.dtype, shape4(&g.output))?,
            tensors: if backward {
                PoolTensors::Backward(positions(op)?)
            } else {
                PoolTensors::Forward(positions(op)?)
            },
        }))
    }

    fn batch_norm(
        &mut self,
        op: &Op,
        pass: BatchNormPass,
        bn: &BatchNorm,
        shape: &Shape,
    ) -> Result<Step, PlanError> {
        let x = TensorDesc::nchw(self.dtype, shape4(shape))?;
        let params = TensorDesc::batch_norm_params(&x, shape.c)?;
        let (names, reads, first_written) = pass.param_names();
        let param_positions = names
            .iter()
            .map(|name| {
                op.position(name).ok_or_else(|| {
                    PlanError::NotImplemented(format!("{} binds no {name} for cuDNN", op.name()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut step = BatchNormStep {
            pass,
            x,
            params,
            channels: shape.c,
            eps: bn.eps,
            param_positions: param_positions.clone(),
            scratch: None,
            unpack: None,
            pack: None,
        };
        if self.dtype == DataType::F16 {
            let c = shape.c;
            // The scratch holds the per-channel tensors in `param_names` order.
            step.scratch = Some(Buffer::zeros(self.gpu.stream(), 6 * c * DataType::F32.bytes())?);
            step.unpack = Some(kernels::unpack_half(self.kernels, &param_positions[..reads], c)?);
            let packed = &param_positions[first_written..];
            if !packed.is_empty() {
                step.pack = Some(kernels::pack_half(self.kernels, first_written * c, packed, c)?);
            }
        }
        Ok(Step::BatchNorm(step))
    }

    fn linear(&mut self, op: &Op, pass: LinearPass, g: &LinearGeom) -> Result<Step, PlanError> {
        let at = |name: &str| {
            op.position(name)
                .ok_or_else(|| PlanError::NotImplemented(format!("{} binds no {name}", op.name())))
        };
        let bias = match (pass, g.bias) {
            (LinearPass::Forward(_), true) => Some(kernels::bias_fill_rows(
                self.kernels,
                self.dtype,
                [at("bias")?, at("y")?],
                g.batch,
                g.out_features,
                g.y_stride,
                g.y_offset,
            )?),
            (LinearPass::BackwardParams(_), true) => Some(kernels::bias_grad_rows(
                self.kernels,
                self.dtype,
                [at("dy")?, at("dbias")?],
                g.batch,
                g.out_features,
                g.y_stride,
                g.y_offset,
            )?),
            _ => None,
        };
        Ok(Step::Linear(LinearStep {
            pass,
            geom: *g,
            dtype: self.dtype,
            bias,
        }))
    }
}

fn shape4(s: &Shape) -> [usize; 4] {
    [s.n, s.c, s.h, s.w]
}
