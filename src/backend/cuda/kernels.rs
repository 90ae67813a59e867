//! convbench's own CUDA kernels (`kernels.cu`), compiled once per backend by NVRTC, and the
//! launch of each op that runs on them.

use super::ffi::{CallError, DataType, Gpu, KernelArg, Region};
use crate::kernels::{Op, PoolGeom};
use crate::model::PoolKind;
use cudarc::driver::CudaFunction;
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};

/// The CUDA C source of every kernel.
pub(super) const SOURCE: &str = include_str!("kernels.cu");

/// Threads per block of every launch (a multiple of the warp size, which the reductions need).
const BLOCK: u32 = 256;
/// Most blocks of a grid-stride launch.
const MAX_BLOCKS: u64 = 1 << 20;

/// A kernel of `kernels.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kernel {
    /// `y = a + b`.
    Add,
    /// Torch's SGD with momentum and weight decay.
    Sgd,
    /// Concat forward / split backward.
    ChannelCopy,
    /// Mean of each plane.
    GlobalAvgPoolForward,
    /// Its gradient.
    GlobalAvgPoolBackward,
    /// Per-image loss and probabilities.
    SoftmaxCrossEntropyForward,
    /// Gradient of the mean loss.
    SoftmaxCrossEntropyBackward,
    /// LRN output and scale.
    LrnForward,
    /// LRN gradient from the saved scale.
    LrnBackward,
    /// Torch pooling (ceil mode).
    PoolForward,
    /// Its gradient (the first maximum wins, or the last NaN).
    PoolBackward,
    /// Bias into a column slice of each row.
    BiasFillRows,
    /// Column sums of a column slice.
    BiasGradRows,
    /// f16 vectors to packed f32.
    UnpackHalf,
    /// Packed f32 to f16 vectors.
    PackHalf,
}

impl Kernel {
    const ALL: [Kernel; 15] = [
        Kernel::Add,
        Kernel::Sgd,
        Kernel::ChannelCopy,
        Kernel::GlobalAvgPoolForward,
        Kernel::GlobalAvgPoolBackward,
        Kernel::SoftmaxCrossEntropyForward,
        Kernel::SoftmaxCrossEntropyBackward,
        Kernel::LrnForward,
        Kernel::LrnBackward,
        Kernel::PoolForward,
        Kernel::PoolBackward,
        Kernel::BiasFillRows,
        Kernel::BiasGradRows,
        Kernel::UnpackHalf,
        Kernel::PackHalf,
    ];

    fn base_name(self) -> &'static str {
        match self {
            Kernel::Add => "add",
            Kernel::Sgd => "sgd",
            Kernel::ChannelCopy => "channel_copy",
            Kernel::GlobalAvgPoolForward => "global_avgpool_forward",
            Kernel::GlobalAvgPoolBackward => "global_avgpool_backward",
            Kernel::SoftmaxCrossEntropyForward => "softmax_cross_entropy_forward",
            Kernel::SoftmaxCrossEntropyBackward => "softmax_cross_entropy_backward",
            Kernel::LrnForward => "lrn_forward",
            Kernel::LrnBackward => "lrn_backward",
            Kernel::PoolForward => "pool_forward",
            Kernel::PoolBackward => "pool_backward",
            Kernel::BiasFillRows => "bias_fill_rows",
            Kernel::BiasGradRows => "bias_grad_rows",
            Kernel::UnpackHalf => "unpack_half",
            Kernel::PackHalf => "pack_half",
        }
    }

    /// Whether the kernel comes in `_f32` and `_f16` variants.
    fn typed(self) -> bool {
        !matches!(self, Kernel::UnpackHalf | Kernel::PackHalf)
    }

    /// The exported names of the kernel's variants.
    fn symbols(self) -> Vec<String> {
        if self.typed() {
            vec![
                format!("{}_f32", self.base_name()),
                format!("{}_f16", self.base_name()),
            ]
        } else {
            vec![self.base_name().to_string()]
        }
    }
}

/// Every kernel, loaded on the device.
pub(super) struct Kernels {
    /// `(symbol, function)` for every variant of every kernel.
    functions: Vec<(String, CudaFunction)>,
}

/// NVRTC options for a device of compute capability `(major, minor)`.
fn compile_options(arch: Option<(i32, i32)>) -> CompileOptions {
    CompileOptions {
        // IEEE division and square roots, no flush to zero: the f32 results are verified
        // against an f64 reference.
        prec_div: Some(true),
        prec_sqrt: Some(true),
        ftz: Some(false),
        options: arch
            .map(|(major, minor)| vec![format!("--gpu-architecture=compute_{major}{minor}")])
            .unwrap_or_default(),
        name: Some("convbench_kernels.cu".into()),
        ..CompileOptions::default()
    }
}

/// Compiles [`SOURCE`] to PTX (no device needed). For a device newer than this NVRTC knows,
/// falls back to NVRTC's default architecture, which the driver compiles forward.
pub(super) fn compile_ptx(arch: (i32, i32)) -> Result<cudarc::nvrtc::Ptx, CallError> {
    compile_ptx_with_opts(SOURCE, compile_options(Some(arch)))
        .or_else(|first| compile_ptx_with_opts(SOURCE, compile_options(None)).map_err(|_| first))
        .map_err(|e| CallError(format!("NVRTC could not compile convbench's kernels: {e}")))
}

impl Kernels {
    /// Compiles the kernels for the device and loads every function.
    pub(super) fn load(gpu: &Gpu, arch: (i32, i32)) -> Result<Self, CallError> {
        let ptx = compile_ptx(arch)?;
        let module = gpu.context().load_module(ptx).map_err(|e| {
            CallError(format!(
                "the CUDA driver could not load convbench's kernels: {e:?} (is NVRTC newer than the driver?)"
            ))
        })?;
        let mut functions = Vec::new();
        for kernel in Kernel::ALL {
            for symbol in kernel.symbols() {
                let function = module
                    .load_function(&symbol)
                    .map_err(|e| CallError(format!("kernel {symbol} missing from the module: {e:?}")))?;
                functions.push((symbol, function));
            }
        }
        Ok(Self { functions })
    }

    /// The variant of `kernel` for `dtype` (untyped kernels have one).
    fn function(&self, kernel: Kernel, dtype: DataType) -> Result<CudaFunction, CallError> {
        let symbol = match (kernel.typed(), dtype) {
            (false, _) => kernel.base_name().to_string(),
            (true, DataType::F32) => format!("{}_f32", kernel.base_name()),
            (true, DataType::F16) => format!("{}_f16", kernel.base_name()),
        };
        self.functions
            .iter()
            .find(|(s, _)| *s == symbol)
            .map(|(_, f)| f.clone())
            .ok_or_else(|| CallError(format!("kernel {symbol} was not loaded")))
    }
}

/// Every tensor of `op` in contract order ([`Op::contract`]), then `scalars`: the signature of
/// each of convbench's CUDA kernels that implements a whole op.
fn contract_order(op: &Op, scalars: Vec<Arg>) -> Vec<Arg> {
    (0..op.contract().len())
        .map(Arg::Binding)
        .chain(scalars)
        .collect()
}

/// A kernel argument, resolved against an op's bindings when it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Arg {
    /// The op's binding with this index.
    Binding(usize),
    /// The op's f32 scratch buffer from this element on.
    Scratch(usize),
    /// A null pointer.
    Null,
    /// `long long`.
    I64(i64),
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
}

/// One kernel launch of an op, ready to run.
pub(super) struct Launch {
    function: CudaFunction,
    grid: u32,
    args: Vec<Arg>,
}

fn count(n: usize) -> i64 {
    n as i64
}

fn int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Blocks of a grid-stride launch over `work` items of `per_block` items per block.
fn blocks(work: usize, per_block: u64) -> u32 {
    (work as u64).div_ceil(per_block).clamp(1, MAX_BLOCKS) as u32
}

impl Launch {
    /// A grid-stride launch of `kernel` over `work` elements.
    fn elementwise(
        kernels: &Kernels,
        kernel: Kernel,
        dtype: DataType,
        work: usize,
        args: Vec<Arg>,
    ) -> Result<Self, CallError> {
        Ok(Self {
            function: kernels.function(kernel, dtype)?,
            grid: blocks(work, u64::from(BLOCK)),
            args,
        })
    }

    /// Runs the launch with the op's bindings and scratch buffer.
    pub(super) fn run(
        &self,
        gpu: &Gpu,
        bindings: &[Region<'_>],
        scratch: Option<Region<'_>>,
    ) -> Result<(), CallError> {
        let args = self
            .args
            .iter()
            .map(|arg| {
                Ok(match *arg {
                    Arg::Binding(i) => KernelArg::Ptr(*bindings.get(i).ok_or_else(|| {
                        CallError(format!("kernel argument binds tensor {i}, which the op lacks"))
                    })?),
                    Arg::Scratch(element) => KernelArg::Ptr(
                        scratch
                            .and_then(|s| s.from(element * DataType::F32.bytes()))
                            .ok_or_else(|| CallError("kernel argument outside the scratch buffer".into()))?,
                    ),
                    Arg::Null => KernelArg::Null,
                    Arg::I64(v) => KernelArg::I64(v),
                    Arg::I32(v) => KernelArg::I32(v),
                    Arg::F32(v) => KernelArg::F32(v),
                })
            })
            .collect::<Result<Vec<_>, CallError>>()?;
        gpu.launch(&self.function, self.grid, BLOCK, &args)
    }
}

/// Pooling with Torch's semantics in every case (ceil-mode windows included).
pub(super) fn pool(
    kernels: &Kernels,
    op: &Op,
    g: &PoolGeom,
    backward: bool,
    dtype: DataType,
) -> Result<Launch, CallError> {
    let (p, i, o) = (&g.pool, &g.input, &g.output);
    let planes = i.n * i.c;
    let geometry = [
        Arg::I64(count(planes)),
        Arg::I32(int(i.h)),
        Arg::I32(int(i.w)),
        Arg::I32(int(o.h)),
        Arg::I32(int(o.w)),
        Arg::I32(int(p.kernel.0)),
        Arg::I32(int(p.kernel.1)),
        Arg::I32(int(p.stride.0)),
        Arg::I32(int(p.stride.1)),
        Arg::I32(int(p.padding.0)),
        Arg::I32(int(p.padding.1)),
        Arg::I32(i32::from(p.kind == PoolKind::Max)),
        Arg::I32(i32::from(p.count_include_pad)),
    ];
    if backward {
        // x, dy -> dx; one thread per input element.
        let args = contract_order(op, geometry.to_vec());
        Launch::elementwise(kernels, Kernel::PoolBackward, dtype, i.len(), args)
    } else {
        let args = contract_order(op, geometry.to_vec());
        Launch::elementwise(kernels, Kernel::PoolForward, dtype, o.len(), args)
    }
}

/// The launch of an op that runs entirely on one of convbench's kernels, or `None` for the ops
/// that go through cuDNN or cuBLAS (pooling is [`pool`]).
pub(super) fn single_kernel_op(
    kernels: &Kernels,
    op: &Op,
    dtype: DataType,
) -> Result<Option<Launch>, CallError> {
    use Arg::{F32, I32, I64};
    let launch = match *op {
        Op::Add { len } => Launch::elementwise(
            kernels,
            Kernel::Add,
            dtype,
            len,
            contract_order(op, vec![I64(count(len))]),
        )?,
        Op::SgdUpdate {
            len,
            lr,
            momentum,
            weight_decay,
        } => Launch::elementwise(
            kernels,
            Kernel::Sgd,
            dtype,
            len,
            contract_order(
                op,
                vec![I64(count(len)), F32(lr), F32(momentum), F32(weight_decay)],
            ),
        )?,
        Op::ChannelCopy {
            n,
            hw,
            total_channels,
            part_channels,
            offset,
            into_concat,
        } => Launch::elementwise(
            kernels,
            Kernel::ChannelCopy,
            dtype,
            n * part_channels * hw,
            contract_order(
                op,
                vec![
                    I64(count(n)),
                    I64(count(hw)),
                    I64(count(total_channels)),
                    I64(count(part_channels)),
                    I64(count(offset)),
                    I32(i32::from(into_concat)),
                ],
            ),
        )?,
        Op::GlobalAvgPoolForward { shape } => {
            let (planes, hw) = (shape.n * shape.c, shape.h * shape.w);
            // One warp per plane.
            Launch {
                function: kernels.function(Kernel::GlobalAvgPoolForward, dtype)?,
                grid: blocks(planes, u64::from(BLOCK / 32)),
                args: contract_order(op, vec![I64(count(planes)), I64(count(hw))]),
            }
        }
        Op::GlobalAvgPoolBackward { shape } => {
            let (planes, hw) = (shape.n * shape.c, shape.h * shape.w);
            Launch::elementwise(
                kernels,
                Kernel::GlobalAvgPoolBackward,
                dtype,
                planes * hw,
                contract_order(op, vec![I64(count(planes)), I64(count(hw))]),
            )?
        }
        Op::SoftmaxCrossEntropyForward { batch, classes } => Launch {
            // One block per image.
            function: kernels.function(Kernel::SoftmaxCrossEntropyForward, dtype)?,
            grid: blocks(batch, 1),
            args: contract_order(op, vec![I64(count(batch)), I64(count(classes))]),
        },
        Op::SoftmaxCrossEntropyBackward { batch, classes } => Launch::elementwise(
            kernels,
            Kernel::SoftmaxCrossEntropyBackward,
            dtype,
            batch * classes,
            contract_order(op, vec![I64(count(batch)), I64(count(classes))]),
        )?,
        Op::LrnForward { lrn, shape } => Launch::elementwise(
            kernels,
            Kernel::LrnForward,
            dtype,
            shape.len(),
            contract_order(
                op,
                vec![
                    I64(count(shape.n)),
                    I32(int(shape.c)),
                    I64(count(shape.h * shape.w)),
                    I32(int(lrn.size)),
                    F32((lrn.alpha / lrn.size as f64) as f32),
                    F32(lrn.beta as f32),
                    F32(lrn.k as f32),
                ],
            ),
        )?,
        Op::LrnBackward { lrn, shape } => Launch::elementwise(
            kernels,
            Kernel::LrnBackward,
            dtype,
            shape.len(),
            contract_order(
                op,
                vec![
                    I64(count(shape.n)),
                    I32(int(shape.c)),
                    I64(count(shape.h * shape.w)),
                    I32(int(lrn.size)),
                    F32(lrn.beta as f32),
                    F32((2.0 * lrn.alpha * lrn.beta / lrn.size as f64) as f32),
                ],
            ),
        )?,
        _ => return Ok(None),
    };
    Ok(Some(launch))
}

/// Writes the bias (binding `bias`) into the column slice of every row of binding `y`.
pub(super) fn bias_fill_rows(
    kernels: &Kernels,
    dtype: DataType,
    [bias, y]: [usize; 2],
    rows: usize,
    columns: usize,
    stride: usize,
    offset: usize,
) -> Result<Launch, CallError> {
    use Arg::{Binding, I64};
    Launch::elementwise(
        kernels,
        Kernel::BiasFillRows,
        dtype,
        rows * columns,
        vec![
            Binding(bias),
            Binding(y),
            I64(count(rows)),
            I64(count(columns)),
            I64(count(stride)),
            I64(count(offset)),
        ],
    )
}

/// Column sums of the column slice of binding `dy` into binding `db`.
pub(super) fn bias_grad_rows(
    kernels: &Kernels,
    dtype: DataType,
    [dy, db]: [usize; 2],
    rows: usize,
    columns: usize,
    stride: usize,
    offset: usize,
) -> Result<Launch, CallError> {
    use Arg::{Binding, I64};
    Launch::elementwise(
        kernels,
        Kernel::BiasGradRows,
        dtype,
        columns,
        vec![
            Binding(dy),
            Binding(db),
            I64(count(rows)),
            I64(count(columns)),
            I64(count(stride)),
            I64(count(offset)),
        ],
    )
}

/// Converts up to four f16 bindings of `n` elements into the f32 scratch buffer, one after
/// another from element 0.
pub(super) fn unpack_half(kernels: &Kernels, bindings: &[usize], n: usize) -> Result<Launch, CallError> {
    let mut args = vec![Arg::Scratch(0)];
    args.extend((0..4).map(|k| bindings.get(k).map_or(Arg::Null, |&b| Arg::Binding(b))));
    args.extend([Arg::I32(int(bindings.len().min(4))), Arg::I64(count(n))]);
    Launch::elementwise(kernels, Kernel::UnpackHalf, DataType::F16, 4 * n, args)
}

/// Converts `bindings.len()` (at most four) vectors of `n` f32 from the scratch buffer, starting
/// at element `from`, into those f16 bindings.
pub(super) fn pack_half(
    kernels: &Kernels,
    from: usize,
    bindings: &[usize],
    n: usize,
) -> Result<Launch, CallError> {
    let mut args = vec![Arg::Scratch(from)];
    args.extend((0..4).map(|k| bindings.get(k).map_or(Arg::Null, |&b| Arg::Binding(b))));
    args.extend([Arg::I32(int(bindings.len().min(4))), Arg::I64(count(n))]);
    Launch::elementwise(kernels, Kernel::PackHalf, DataType::F16, 4 * n, args)
}
