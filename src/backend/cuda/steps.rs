//! How each op runs on the `cuda` backend: a [`Step`] prepared once when a program loads
//! (descriptors built, convolution algorithms measured, launches sized), then run as often as
//! asked with the op's bindings in [`crate::kernels::Op::bindings`] order.

use super::ffi::{
    Buffer, CallError, ConvAlgo, ConvChoice, ConvDesc, ConvDescs, ConvParams, ConvPass, DataType, FilterDesc,
    Gemm, Gpu, MathMode, PoolDesc, PoolMode, Region, ReluDesc, TensorDesc,
};
use super::kernels::{self, Kernels, Launch};
use crate::kernels::{ConvGeom, LinearGeom, Op, PoolGeom};
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
    /// Runs the op on `bindings` (its tensors in binding order), with the program's shared
    /// convolution `workspace`.
    pub(super) fn run(
        &self,
        gpu: &Gpu,
        bindings: &[Region<'_>],
        workspace: Option<Region<'_>>,
    ) -> Result<(), CallError> {
        match self {
            Step::Conv(s) => s.run(gpu, bindings, workspace),
            Step::CudnnPool(s) => s.run(gpu, bindings),
            Step::Relu(s) => s.run(gpu, bindings),
            Step::BatchNorm(s) => s.run(gpu, bindings),
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

/// The binding `index`, or an error naming the op's contract.
fn binding<'a>(bindings: &[Region<'a>], index: usize) -> Result<Region<'a>, CallError> {
    bindings
        .get(index)
        .copied()
        .ok_or_else(|| CallError(format!("the op binds no tensor {index}")))
}

/// A convolution pass.
pub(super) struct ConvStep {
    descs: ConvDescs,
    choice: ConvChoice,
    /// `[1, out_channels, 1, 1]` when the layer has a bias.
    bias: Option<TensorDesc>,
}

impl ConvStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>], workspace: Option<Region<'_>>) -> Result<(), CallError> {
        let workspace = workspace.filter(|_| self.choice.workspace_bytes > 0);
        match self.choice.algo {
            ConvAlgo::Forward(_) => {
                // x, w, [bias], y
                let y = binding(b, if self.bias.is_some() { 3 } else { 2 })?;
                gpu.conv(
                    &self.descs,
                    &self.choice,
                    [binding(b, 0)?, binding(b, 1)?, y],
                    workspace,
                )?;
                if let Some(bias) = &self.bias {
                    gpu.add_bias(bias, binding(b, 2)?, &self.descs.y, y)?;
                }
            }
            ConvAlgo::BackwardData(_) => {
                // dy, w, dx
                gpu.conv(
                    &self.descs,
                    &self.choice,
                    [binding(b, 0)?, binding(b, 1)?, binding(b, 2)?],
                    workspace,
                )?;
            }
            ConvAlgo::BackwardFilter(_) => {
                // x, dy, dw, [dbias]
                gpu.conv(
                    &self.descs,
                    &self.choice,
                    [binding(b, 0)?, binding(b, 1)?, binding(b, 2)?],
                    workspace,
                )?;
                if let Some(bias) = &self.bias {
                    gpu.conv_backward_bias(&self.descs.y, binding(b, 1)?, bias, binding(b, 3)?)?;
                }
            }
        }
        Ok(())
    }
}

/// A pooling pass through cuDNN.
pub(super) struct CudnnPoolStep {
    pool: PoolDesc,
    x: TensorDesc,
    y: TensorDesc,
    backward: bool,
}

impl CudnnPoolStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>]) -> Result<(), CallError> {
        if self.backward {
            // x, dy -> dx (average pooling only)
            gpu.average_pool_backward(
                &self.pool,
                &self.x,
                binding(b, 0)?,
                &self.y,
                binding(b, 1)?,
                binding(b, 2)?,
            )
        } else {
            gpu.pool_forward(&self.pool, &self.x, binding(b, 0)?, &self.y, binding(b, 1)?)
        }
    }
}

/// A ReLU pass through cuDNN.
pub(super) struct ReluStep {
    relu: ReluDesc,
    desc: TensorDesc,
    backward: bool,
}

impl ReluStep {
    fn run(&self, gpu: &Gpu, b: &[Region<'_>]) -> Result<(), CallError> {
        if self.backward {
            // y, dy -> dx
            gpu.relu_backward(
                &self.relu,
                &self.desc,
                binding(b, 0)?,
                binding(b, 1)?,
                binding(b, 2)?,
            )
        } else {
            gpu.relu_forward(&self.relu, &self.desc, binding(b, 0)?, binding(b, 1)?)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum BatchNormPass {
    Train { momentum: f64 },
    Eval,
    Backward,
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
    scratch: Option<Buffer>,
    unpack: Option<Launch>,
    pack: Option<Launch>,
}

impl BatchNormStep {
    /// Bindings of the per-channel tensors cuDNN reads and writes, in the order of the `ffi` call.
    fn param_bindings(&self) -> &'static [usize] {
        match self.pass {
            // x, gamma, beta -> y, mean, invstd; running_mean, running_var updated
            BatchNormPass::Train { .. } => &[1, 2, 6, 7, 4, 5],
            // x, gamma, beta, running_mean, running_var -> y
            BatchNormPass::Eval => &[1, 2, 3, 4],
            // x, dy, gamma, mean, invstd -> dx, dgamma, dbeta
            BatchNormPass::Backward => &[2, 3, 4, 6, 7],
        }
    }

    fn run(&self, gpu: &Gpu, b: &[Region<'_>]) -> Result<(), CallError> {
        let scratch = self.scratch.as_ref().map(Buffer::region);
        if let Some(unpack) = &self.unpack {
            unpack.run(gpu, b, scratch)?;
        }
        let vector = self.channels * DataType::F32.bytes();
        let params = self
            .param_bindings()
            .iter()
            .enumerate()
            .map(|(k, &index)| match scratch {
                Some(s) => s
                    .slice(k * vector, vector)
                    .ok_or_else(|| CallError("batch norm scratch too small".into())),
                None => binding(b, index),
            })
            .collect::<Result<Vec<_>, _>>()?;
        match self.pass {
            BatchNormPass::Train { momentum } => gpu.batch_norm_forward_train(
                &self.x,
                [binding(b, 0)?, binding(b, 3)?],
                &self.params,
                [params[0], params[1], params[2], params[3], params[4], params[5]],
                momentum,
                self.eps,
            )?,
            BatchNormPass::Eval => gpu.batch_norm_forward_eval(
                &self.x,
                [binding(b, 0)?, binding(b, 5)?],
                &self.params,
                [params[0], params[1], params[2], params[3]],
                self.eps,
            )?,
            BatchNormPass::Backward => gpu.batch_norm_backward(
                &self.x,
                [binding(b, 0)?, binding(b, 1)?, binding(b, 5)?],
                &self.params,
                [params[0], params[1], params[2], params[3], params[4]],
                self.eps,
            )?,
        }
        if let Some(pack) = &self.pack {
            pack.run(gpu, b, scratch)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinearPass {
    Forward,
    BackwardData,
    BackwardParams,
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
            LinearPass::Forward => {
                // x, w, [bias], y: y[n, offset + o] = sum_i x[n, i] w[o, i] (+ bias[o])
                let y = binding(b, if g.bias { 3 } else { 2 })?;
                if let Some(bias) = &self.bias {
                    bias.run(gpu, b, None)?;
                }
                gpu.gemm(&Gemm {
                    trans_a: true,
                    trans_b: false,
                    m: g.out_features,
                    n: g.batch,
                    k: g.in_features,
                    a: (binding(b, 1)?, g.in_features),
                    b: (binding(b, 0)?, g.in_features),
                    c: (column_slice(y)?, g.y_stride),
                    accumulate: self.bias.is_some(),
                    dtype: self.dtype,
                })
            }
            LinearPass::BackwardData => {
                // dy, w -> dx: dx[n, i] = sum_o dy[n, offset + o] w[o, i]
                gpu.gemm(&Gemm {
                    trans_a: false,
                    trans_b: false,
                    m: g.in_features,
                    n: g.batch,
                    k: g.out_features,
                    a: (binding(b, 1)?, g.in_features),
                    b: (column_slice(binding(b, 0)?)?, g.y_stride),
                    c: (binding(b, 2)?, g.in_features),
                    accumulate: false,
                    dtype: self.dtype,
                })
            }
            LinearPass::BackwardParams => {
                // x, dy -> dw, [dbias]: dw[o, i] = sum_n dy[n, offset + o] x[n, i]
                gpu.gemm(&Gemm {
                    trans_a: false,
                    trans_b: true,
                    m: g.in_features,
                    n: g.out_features,
                    k: g.batch,
                    a: (binding(b, 0)?, g.in_features),
                    b: (column_slice(binding(b, 1)?)?, g.y_stride),
                    c: (binding(b, 2)?, g.in_features),
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
            Op::Conv2dForward(g) => Step::Conv(self.conv(ConvPass::Forward, g, bindings)?),
            Op::Conv2dBackwardData(g) => Step::Conv(self.conv(ConvPass::BackwardData, g, bindings)?),
            Op::Conv2dBackwardFilter(g) => Step::Conv(self.conv(ConvPass::BackwardFilter, g, bindings)?),
            Op::PoolForward(g) => self.pool(g, false)?,
            Op::PoolBackward(g) => self.pool(g, true)?,
            Op::ReluForward { len } | Op::ReluBackward { len } => Step::Relu(ReluStep {
                relu: ReluDesc::new()?,
                desc: TensorDesc::nchw(self.dtype, [1, 1, 1, *len])?,
                backward: matches!(op, Op::ReluBackward { .. }),
            }),
            Op::BatchNormForwardTrain { bn, shape } => {
                if shape.n * shape.h * shape.w < 2 {
                    return Err(PlanError::NotImplemented(format!(
                        "batch normalization over a single value per channel ({shape}): its unbiased \
                         variance is undefined in cuDNN"
                    )));
                }
                self.batch_norm(
                    BatchNormPass::Train {
                        momentum: bn.momentum,
                    },
                    bn,
                    shape,
                )?
            }
            Op::BatchNormForwardEval { bn, shape } => self.batch_norm(BatchNormPass::Eval, bn, shape)?,
            Op::BatchNormBackward { bn, shape } => self.batch_norm(BatchNormPass::Backward, bn, shape)?,
            Op::LinearForward(g) => self.linear(LinearPass::Forward, g)?,
            Op::LinearBackwardData(g) => self.linear(LinearPass::BackwardData, g)?,
            Op::LinearBackwardParams(g) => self.linear(LinearPass::BackwardParams, g)?,
            other => {
                return Err(PlanError::NotImplemented(format!(
                    "{} has no cuda implementation",
                    other.name()
                )));
            }
        })
    }

    fn conv(&mut self, pass: ConvPass, g: &ConvGeom, bindings: &[Region<'_>]) -> Result<ConvStep, PlanError> {
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
                    // x, w, [bias], y
                    ConvPass::Forward => [
                        binding(bindings, 0)?,
                        binding(bindings, 1)?,
                        binding(bindings, if c.bias { 3 } else { 2 })?,
                    ],
                    // dy, w, dx and x, dy, dw
                    ConvPass::BackwardData | ConvPass::BackwardFilter => [
                        binding(bindings, 0)?,
                        binding(bindings, 1)?,
                        binding(bindings, 2)?,
                    ],
                };
                self.allocate_search_workspace()?;
                let workspace = self.search_workspace.as_ref().and_then(Option::as_ref);
                let choice = self
                    .gpu
                    .find_conv(pass, &descs, self.math, regions, workspace.map(Buffer::region))?
                    .ok_or_else(|| {
                        PlanError::NotImplemented(format!(
                            "cuDNN has no {pass:?} convolution algorithm for {g:?} in {:?} with {:?}",
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
        Ok(ConvStep { descs, choice, bias })
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

    fn pool(&mut self, g: &PoolGeom, backward: bool) -> Result<Step, PlanError> {
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
            backward,
        }))
    }

    fn batch_norm(&mut self, pass: BatchNormPass, bn: &BatchNorm, shape: &Shape) -> Result<Step, PlanError> {
        let x = TensorDesc::nchw(self.dtype, shape4(shape))?;
        let params = TensorDesc::batch_norm_params(&x, shape.c)?;
        let mut step = BatchNormStep {
            pass,
            x,
            params,
            channels: shape.c,
            eps: bn.eps,
            scratch: None,
            unpack: None,
            pack: None,
        };
        if self.dtype == DataType::F16 {
            let c = shape.c;
            // The scratch holds the per-channel tensors in `param_bindings` order.
            let (inputs, outputs): (&[usize], (usize, &[usize])) = match pass {
                BatchNormPass::Train { .. } => (&[1, 2, 6, 7], (2, &[6, 7, 4, 5])),
                BatchNormPass::Eval => (&[1, 2, 3, 4], (4, &[])),
                BatchNormPass::Backward => (&[2, 3, 4], (3, &[6, 7])),
            };
            step.scratch = Some(Buffer::zeros(self.gpu.stream(), 6 * c * DataType::F32.bytes())?);
            step.unpack = Some(kernels::unpack_half(self.kernels, inputs, c)?);
            let (from, packed) = outputs;
            if !packed.is_empty() {
                step.pack = Some(kernels::pack_half(self.kernels, from * c, packed, c)?);
            }
        }
        Ok(Step::BatchNorm(step))
    }

    fn linear(&mut self, pass: LinearPass, g: &LinearGeom) -> Result<Step, PlanError> {
        let bias = match (pass, g.bias) {
            // x, w, bias, y
            (LinearPass::Forward, true) => Some(kernels::bias_fill_rows(
                self.kernels,
                self.dtype,
                [2, 3],
                g.batch,
                g.out_features,
                g.y_stride,
                g.y_offset,
            )?),
            // x, dy -> dw, dbias
            (LinearPass::BackwardParams, true) => Some(kernels::bias_grad_rows(
                self.kernels,
                self.dtype,
                [1, 3],
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
