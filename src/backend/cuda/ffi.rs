//! The only `unsafe` code of convbench besides the CPU GEMM call (`backend/cpu_fast/gemm.rs`):
//! thin wrappers over cudarc's raw bindings of the CUDA driver, cuDNN and cuBLAS, whose calls
//! that touch device memory are all `unsafe` in cudarc.
//!
//! The wrappers are safe to call because every device pointer they pass comes from a [`Region`],
//! which borrows a live [`Buffer`] and knows its size, and each wrapper checks the region against
//! the bytes the call reads or writes (from the cuDNN descriptors or the GEMM shape) before
//! calling. Kernel launches ([`Gpu::launch`]) rely in addition on convbench's own kernels
//! (`kernels.cu`) bounding every access by their size arguments. Device memory is never
//! referenced from the host, so device writes cannot alias Rust references.

use cudarc::cublas::{result as cublas_result, sys as cublas_sys};
use cudarc::cudnn::{result as cudnn_result, sys as cudnn_sys};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::{Arc, Mutex};

/// A failed call: what was being done and the library's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CallError(pub String);

type CallResult<T> = Result<T, CallError>;

fn cudnn_check(status: cudnn_sys::cudnnStatus_t, what: &str) -> CallResult<()> {
    status.result().map_err(|e| {
        let hint = if matches!(
            e.0,
            cudnn_sys::cudnnStatus_t::CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED
        ) {
            " (cuDNN 9 loads its libcudnn_*.so.9 parts at first use: put the folder of \
             libcudnn.so.9 on LD_LIBRARY_PATH)"
        } else {
            ""
        };
        CallError(format!("cuDNN {what} failed: {:?}{hint}", e.0))
    })
}

fn cublas_check(status: cublas_sys::cublasStatus_t, what: &str) -> CallResult<()> {
    status
        .result()
        .map_err(|e| CallError(format!("cuBLAS {what} failed: {:?}", e.0)))
}

fn driver_error(what: &str) -> impl FnOnce(DriverError) -> CallError + '_ {
    move |e| CallError(format!("CUDA driver {what} failed: {e:?}"))
}

/// The NVIDIA libraries the backend loads at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Library {
    /// `libcuda`, installed with the NVIDIA driver.
    Driver,
    /// `libnvrtc`, the run-time CUDA C++ compiler.
    Nvrtc,
    /// `libcublas`.
    Cublas,
    /// `libcudnn` (cuDNN 9).
    Cudnn,
}

/// The first library that cannot be loaded, if any. cudarc panics when it first needs a library
/// that is missing; probing first turns that into an error that names the library.
pub(super) fn first_missing_library() -> Option<Library> {
    [Library::Driver, Library::Nvrtc, Library::Cublas, Library::Cudnn]
        .into_iter()
        .find(|&library| !library_present(library))
}

/// Whether `library` can be loaded.
pub(super) fn library_present(library: Library) -> bool {
    // SAFETY: each probe dlopens the library (running its initialisers, which have no
    // preconditions) and closes it again; cudarc loads the same files the same way on first use.
    unsafe {
        match library {
            Library::Driver => cudarc::driver::sys::is_culib_present(),
            Library::Nvrtc => cudarc::nvrtc::sys::is_culib_present(),
            Library::Cublas => cublas_sys::is_culib_present(),
            Library::Cudnn => cudnn_sys::is_culib_present(),
        }
    }
}

/// The CUDA version the driver supports, e.g. `13000` for 13.0.
pub(super) fn driver_version() -> CallResult<i32> {
    let mut version = 0;
    // SAFETY: writes one int through a valid pointer; needs no initialised driver.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    status.result().map_err(driver_error("cuDriverGetVersion"))?;
    Ok(version)
}

/// NVRTC's `(major, minor)` version.
pub(super) fn nvrtc_version() -> CallResult<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints through valid pointers.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    status
        .result()
        .map_err(|e| CallError(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// Element type of device tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum DataType {
    /// 32-bit float.
    F32,
    /// 16-bit float (storage; arithmetic in f32).
    F16,
}

impl DataType {
    /// Bytes per element.
    pub(super) const fn bytes(self) -> usize {
        match self {
            DataType::F32 => 4,
            DataType::F16 => 2,
        }
    }

    fn cudnn(self) -> cudnn_sys::cudnnDataType_t {
        match self {
            DataType::F32 => cudnn_sys::cudnnDataType_t::CUDNN_DATA_FLOAT,
            DataType::F16 => cudnn_sys::cudnnDataType_t::CUDNN_DATA_HALF,
        }
    }

    fn blas(self) -> cublas_sys::cudaDataType {
        match self {
            DataType::F32 => cublas_sys::cudaDataType::CUDA_R_32F,
            DataType::F16 => cublas_sys::cudaDataType::CUDA_R_16F,
        }
    }
}

/// Device memory owned by a loaded program.
#[derive(Debug)]
pub(super) struct Buffer {
    slice: CudaSlice<u8>,
    ptr: u64,
    bytes: usize,
}

impl Buffer {
    /// `bytes` zeroed bytes on `stream`'s device.
    pub(super) fn zeros(stream: &Arc<CudaStream>, bytes: usize) -> CallResult<Self> {
        // A zero-byte allocation is not a valid device pointer: keep at least one byte.
        let slice = stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(driver_error("memory allocation"))?;
        let ptr = {
            let (ptr, _record) = slice.device_ptr(stream);
            ptr
        };
        Ok(Self { slice, ptr, bytes })
    }

    /// Size in bytes.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The whole buffer as a region.
    pub(super) fn region(&self) -> Region<'_> {
        Region {
            ptr: self.ptr,
            bytes: self.bytes,
            _buffer: PhantomData,
        }
    }

    /// Copies `data` (exactly the buffer's size) from the host.
    pub(super) fn write(&mut self, stream: &Arc<CudaStream>, data: &[u8]) -> CallResult<()> {
        if data.len() != self.bytes {
            return Err(CallError(format!(
                "writing {} bytes into a buffer of {}",
                data.len(),
                self.bytes
            )));
        }
        if data.is_empty() {
            return Ok(());
        }
        let mut view = self.slice.slice_mut(..data.len());
        stream
            .memcpy_htod(data, &mut view)
            .map_err(driver_error("copy to the device"))
    }

    /// Copies the buffer to the host.
    pub(super) fn read(&self, stream: &Arc<CudaStream>) -> CallResult<Vec<u8>> {
        let mut data = stream
            .clone_dtoh(&self.slice)
            .map_err(driver_error("copy from the device"))?;
        data.truncate(self.bytes);
        Ok(data)
    }
}

/// A byte range of a live [`Buffer`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Region<'a> {
    ptr: u64,
    bytes: usize,
    _buffer: PhantomData<&'a Buffer>,
}

impl<'a> Region<'a> {
    /// `bytes` bytes from `offset`, or `None` when they are not all inside the region.
    pub(super) fn slice(self, offset: usize, bytes: usize) -> Option<Region<'a>> {
        (offset.checked_add(bytes)? <= self.bytes).then_some(Region {
            ptr: self.ptr + offset as u64,
            bytes,
            _buffer: PhantomData,
        })
    }

    /// Everything from `offset` on.
    pub(super) fn from(self, offset: usize) -> Option<Region<'a>> {
        self.slice(offset, self.bytes.checked_sub(offset)?)
    }

    /// The device pointer, after checking that the region holds `bytes`.
    fn at_least(self, bytes: usize, what: &str) -> CallResult<*mut c_void> {
        if self.bytes < bytes {
            return Err(CallError(format!(
                "{what}: {} bytes bound where {bytes} are accessed",
                self.bytes
            )));
        }
        Ok(self.ptr as usize as *mut c_void)
    }
}

/// An NCHW tensor descriptor.
pub(super) struct TensorDesc {
    raw: cudnn_sys::cudnnTensorDescriptor_t,
    bytes: usize,
}

fn dim(value: usize) -> CallResult<i32> {
    i32::try_from(value).map_err(|_| CallError(format!("dimension {value} exceeds cuDNN's int range")))
}

impl TensorDesc {
    /// A packed NCHW tensor of `dtype`.
    pub(super) fn nchw(dtype: DataType, [n, c, h, w]: [usize; 4]) -> CallResult<Self> {
        let raw = cudnn_result::create_tensor_descriptor()
            .map_err(|e| CallError(format!("cuDNN tensor descriptor: {:?}", e.0)))?;
        let desc = Self {
            raw,
            bytes: n * c * h * w * dtype.bytes(),
        };
        // SAFETY: `raw` is a live descriptor owned by `desc`.
        let status = unsafe {
            cudnn_sys::cudnnSetTensor4dDescriptor(
                desc.raw,
                cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
                dtype.cudnn(),
                dim(n)?,
                dim(c)?,
                dim(h)?,
                dim(w)?,
            )
        };
        cudnn_check(status, &format!("tensor descriptor {n}x{c}x{h}x{w}"))?;
        Ok(desc)
    }

    /// The per-channel tensor of batch normalisation over `x` (f32 for f32 and f16 inputs).
    pub(super) fn batch_norm_params(x: &TensorDesc, channels: usize) -> CallResult<Self> {
        let raw = cudnn_result::create_tensor_descriptor()
            .map_err(|e| CallError(format!("cuDNN tensor descriptor: {:?}", e.0)))?;
        let desc = Self {
            raw,
            bytes: channels * DataType::F32.bytes(),
        };
        // SAFETY: both descriptors are live; `desc.raw` is written, `x.raw` read.
        let status = unsafe {
            cudnn_sys::cudnnDeriveBNTensorDescriptor(
                desc.raw,
                x.raw,
                cudnn_sys::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL,
            )
        };
        cudnn_check(status, "batch norm parameter descriptor")?;
        Ok(desc)
    }
}

impl Drop for TensorDesc {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuDNN and is destroyed once, here.
        let _ = unsafe { cudnn_sys::cudnnDestroyTensorDescriptor(self.raw) };
    }
}

/// A KCRS filter descriptor.
pub(super) struct FilterDesc {
    raw: cudnn_sys::cudnnFilterDescriptor_t,
    bytes: usize,
}

impl FilterDesc {
    /// `[out_channels, in_channels / groups, kh, kw]` of `dtype`.
    pub(super) fn kcrs(dtype: DataType, [k, c, r, s]: [usize; 4]) -> CallResult<Self> {
        let raw = cudnn_result::create_filter_descriptor()
            .map_err(|e| CallError(format!("cuDNN filter descriptor: {:?}", e.0)))?;
        let desc = Self {
            raw,
            bytes: k * c * r * s * dtype.bytes(),
        };
        // SAFETY: `raw` is a live descriptor owned by `desc`.
        let status = unsafe {
            cudnn_sys::cudnnSetFilter4dDescriptor(
                desc.raw,
                dtype.cudnn(),
                cudnn_sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW,
                dim(k)?,
                dim(c)?,
                dim(r)?,
                dim(s)?,
            )
        };
        cudnn_check(status, &format!("filter descriptor {k}x{c}x{r}x{s}"))?;
        Ok(desc)
    }
}

impl Drop for FilterDesc {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuDNN and is destroyed once, here.
        let _ = unsafe { cudnn_sys::cudnnDestroyFilterDescriptor(self.raw) };
    }
}

/// How convolutions and GEMMs may round products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum MathMode {
    /// f32 FMA only: no TF32 (cuDNN `CUDNN_FMA_MATH`, cuBLAS `CUBLAS_COMPUTE_32F`).
    StrictF32,
    /// TF32 tensor cores allowed for f32 data.
    Tf32,
    /// Tensor cores for f16 data, accumulating in f32.
    HalfTensorOps,
}

impl MathMode {
    fn cudnn(self) -> cudnn_sys::cudnnMathType_t {
        match self {
            // CUDNN_DEFAULT_MATH permits TF32 on Ampere and newer; FMA_MATH is strict f32.
            MathMode::StrictF32 => cudnn_sys::cudnnMathType_t::CUDNN_FMA_MATH,
            MathMode::Tf32 => cudnn_sys::cudnnMathType_t::CUDNN_DEFAULT_MATH,
            MathMode::HalfTensorOps => cudnn_sys::cudnnMathType_t::CUDNN_TENSOR_OP_MATH,
        }
    }

    /// Whether cuDNN's algorithm of `math` type respects this mode. The search runs on a
    /// descriptor set to [`MathMode::cudnn`], and cuDNN 9 reports its FMA kernels under that
    /// search as `CUDNN_DEFAULT_MATH` (seen on an H200 with cuDNN 9.x): strict f32 admits both,
    /// and [`MathMode::run_math`] runs them with `CUDNN_FMA_MATH` set, which rules TF32 out.
    fn admits(self, math: cudnn_sys::cudnnMathType_t) -> bool {
        match self {
            MathMode::StrictF32 => matches!(
                math,
                cudnn_sys::cudnnMathType_t::CUDNN_FMA_MATH | cudnn_sys::cudnnMathType_t::CUDNN_DEFAULT_MATH
            ),
            MathMode::Tf32 | MathMode::HalfTensorOps => true,
        }
    }

    /// Whether an algorithm cuDNN reports as `determinism` keeps the f32 accumulation the
    /// bound of `convbench::harness::verify` assumes in this mode. cuDNN's non-deterministic
    /// algorithms (`BWD_DATA_ALGO_0`, `BWD_FILTER_ALGO_0` and `_3`) split the sum and add the
    /// partial sums into the output with atomics, in the output's own type: in f32 that is an
    /// f32 accumulation in another order, which the bound covers; in f16 every partial sum is
    /// rounded to f16, beyond the bound (docs/gpu-h200-table.md). So f16 takes only
    /// deterministic algorithms.
    fn admits_order(self, determinism: cudnn_sys::cudnnDeterminism_t) -> bool {
        match self {
            MathMode::StrictF32 | MathMode::Tf32 => true,
            MathMode::HalfTensorOps => determinism == cudnn_sys::cudnnDeterminism_t::CUDNN_DETERMINISTIC,
        }
    }

    /// The math type to set on the descriptor when running an algorithm found as `found`.
    fn run_math(self, found: cudnn_sys::cudnnMathType_t) -> cudnn_sys::cudnnMathType_t {
        match self {
            MathMode::StrictF32 => cudnn_sys::cudnnMathType_t::CUDNN_FMA_MATH,
            MathMode::Tf32 | MathMode::HalfTensorOps => found,
        }
    }
}

/// A 2-d cross-correlation with f32 accumulation.
pub(super) struct ConvDesc {
    raw: cudnn_sys::cudnnConvolutionDescriptor_t,
}

/// Hyper-parameters of a [`ConvDesc`], `(vertical, horizontal)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ConvParams {
    /// Zero padding.
    pub padding: (usize, usize),
    /// Stride.
    pub stride: (usize, usize),
    /// Dilation.
    pub dilation: (usize, usize),
    /// Channel groups.
    pub groups: usize,
}

impl ConvDesc {
    /// A convolution accumulating in f32, with `math` rounding rules.
    pub(super) fn new(params: ConvParams, math: MathMode) -> CallResult<Self> {
        let raw = cudnn_result::create_convolution_descriptor()
            .map_err(|e| CallError(format!("cuDNN convolution descriptor: {:?}", e.0)))?;
        let desc = Self { raw };
        let ConvParams {
            padding,
            stride,
            dilation,
            groups,
        } = params;
        // SAFETY: `raw` is a live descriptor owned by `desc`.
        let status = unsafe {
            cudnn_sys::cudnnSetConvolution2dDescriptor(
                desc.raw,
                dim(padding.0)?,
                dim(padding.1)?,
                dim(stride.0)?,
                dim(stride.1)?,
                dim(dilation.0)?,
                dim(dilation.1)?,
                cudnn_sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
                cudnn_sys::cudnnDataType_t::CUDNN_DATA_FLOAT,
            )
        };
        cudnn_check(status, "convolution descriptor")?;
        // SAFETY: as above.
        let status = unsafe { cudnn_sys::cudnnSetConvolutionGroupCount(desc.raw, dim(groups)?) };
        cudnn_check(status, "convolution group count")?;
        desc.set_math(math.cudnn())?;
        Ok(desc)
    }

    fn set_math(&self, math: cudnn_sys::cudnnMathType_t) -> CallResult<()> {
        // SAFETY: `raw` is a live descriptor owned by `self`.
        let status = unsafe { cudnn_sys::cudnnSetConvolutionMathType(self.raw, math) };
        cudnn_check(status, "convolution math type")
    }
}

impl Drop for ConvDesc {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuDNN and is destroyed once, here.
        let _ = unsafe { cudnn_sys::cudnnDestroyConvolutionDescriptor(self.raw) };
    }
}

/// The descriptors of one convolution: input `x`, weights `w`, output `y`.
pub(super) struct ConvDescs {
    /// Input activations.
    pub x: TensorDesc,
    /// Weights.
    pub w: FilterDesc,
    /// Output activations.
    pub y: TensorDesc,
    /// The convolution.
    pub conv: ConvDesc,
}

/// Which pass of a convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ConvPass {
    /// `x, w -> y`.
    Forward,
    /// `dy, w -> dx`.
    BackwardData,
    /// `x, dy -> dw`.
    BackwardFilter,
}

/// A cuDNN convolution algorithm of one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConvAlgo {
    /// Forward.
    Forward(cudnn_sys::cudnnConvolutionFwdAlgo_t),
    /// Backward data.
    BackwardData(cudnn_sys::cudnnConvolutionBwdDataAlgo_t),
    /// Backward filter.
    BackwardFilter(cudnn_sys::cudnnConvolutionBwdFilterAlgo_t),
}

impl ConvAlgo {
    /// The algorithm as records name it: cuDNN's constant, lower case, from `ALGO` on for the
    /// forward pass (`cudnn_implicit_precomp_gemm`), with the pass for the others
    /// (`cudnn_bwd_data_algo_1`, `cudnn_bwd_filter_algo_0`).
    pub(super) fn name(self) -> String {
        let (constant, prefix) = match self {
            ConvAlgo::Forward(algo) => (format!("{algo:?}"), "CUDNN_CONVOLUTION_FWD_ALGO_"),
            ConvAlgo::BackwardData(algo) => (format!("{algo:?}"), "CUDNN_CONVOLUTION_"),
            ConvAlgo::BackwardFilter(algo) => (format!("{algo:?}"), "CUDNN_CONVOLUTION_"),
        };
        format!(
            "cudnn_{}",
            constant.strip_prefix(prefix).unwrap_or(&constant).to_lowercase()
        )
    }

    /// Whether the algorithm adds the convolution's products themselves (implicit or explicit
    /// GEMM, direct, atomics in any order), so that each output's error is bounded by its own
    /// terms, as `convbench::harness::verify` holds every kernel to. FFT and Winograd
    /// algorithms add transformed tiles instead: their error is spread over the whole tile or
    /// tensor (seen on an H200: a VGG16 weight gradient whose products are all zero came out
    /// as -4.7e-10 in f32, and an AlexNet one 10% off in f16), so they are left out of the
    /// search rather than judged by a bound nobody derived for them.
    pub(super) fn sums_products(self) -> bool {
        use cudnn_sys::{
            cudnnConvolutionBwdDataAlgo_t as Data, cudnnConvolutionBwdFilterAlgo_t as Filter,
            cudnnConvolutionFwdAlgo_t as Fwd,
        };
        match self {
            ConvAlgo::Forward(algo) => matches!(
                algo,
                Fwd::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
                    | Fwd::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
                    | Fwd::CUDNN_CONVOLUTION_FWD_ALGO_GEMM
                    | Fwd::CUDNN_CONVOLUTION_FWD_ALGO_DIRECT
            ),
            ConvAlgo::BackwardData(algo) => matches!(
                algo,
                Data::CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 | Data::CUDNN_CONVOLUTION_BWD_DATA_ALGO_1
            ),
            ConvAlgo::BackwardFilter(algo) => matches!(
                algo,
                Filter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0
                    | Filter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1
                    | Filter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3
            ),
        }
    }
}

/// What a convolution pass does with its output's prior contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Output {
    /// The output becomes the convolution.
    Overwrite,
    /// The convolution is added to the output (the bias set there first).
    Accumulate,
}

/// One algorithm a search measured and that ran, as cuDNN reports it.
#[derive(Debug, Clone, Copy)]
struct Offered {
    /// The algorithm.
    algo: ConvAlgo,
    /// The math type it ran in.
    math: cudnn_sys::cudnnMathType_t,
    /// Whether it sums in a fixed order (atomics do not).
    order: cudnn_sys::cudnnDeterminism_t,
    /// Workspace bytes it needs.
    memory: usize,
    /// Time cuDNN measured, in milliseconds.
    time_ms: f32,
}

/// An algorithm chosen by measurement, with what it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ConvChoice {
    /// The algorithm.
    pub algo: ConvAlgo,
    /// Its math type (set on the descriptor before each call).
    math: cudnn_sys::cudnnMathType_t,
    /// Workspace bytes.
    pub workspace_bytes: usize,
    /// Time cuDNN measured, in milliseconds.
    pub time_ms: f32,
}

impl ConvChoice {
    /// A short description: algorithm, math type and measured time.
    pub(super) fn describe(&self) -> String {
        format!(
            "{:?} {:?} ({:.3} ms when measured)",
            self.algo, self.math, self.time_ms
        )
    }
}

/// One cuDNN pooling window.
pub(super) struct PoolDesc {
    raw: cudnn_sys::cudnnPoolingDescriptor_t,
}

/// Pooling flavours cuDNN computes exactly as the reference does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PoolMode {
    /// Maximum; padding never wins.
    Max,
    /// Average dividing by the window including padding.
    AverageIncludePadding,
    /// Average dividing by the cells inside the input.
    AverageExcludePadding,
}

impl PoolDesc {
    /// A 2-d window `(height, width)` with padding and stride.
    pub(super) fn new(
        mode: PoolMode,
        window: (usize, usize),
        padding: (usize, usize),
        stride: (usize, usize),
    ) -> CallResult<Self> {
        let mut raw = ptr::null_mut();
        // SAFETY: writes one descriptor handle through a valid pointer.
        let status = unsafe { cudnn_sys::cudnnCreatePoolingDescriptor(&mut raw) };
        cudnn_check(status, "pooling descriptor")?;
        let desc = Self { raw };
        let mode = match mode {
            PoolMode::Max => cudnn_sys::cudnnPoolingMode_t::CUDNN_POOLING_MAX,
            PoolMode::AverageIncludePadding => {
                cudnn_sys::cudnnPoolingMode_t::CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
            }
            PoolMode::AverageExcludePadding => {
                cudnn_sys::cudnnPoolingMode_t::CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
            }
        };
        // SAFETY: `raw` is a live descriptor owned by `desc`.
        let status = unsafe {
            cudnn_sys::cudnnSetPooling2dDescriptor(
                desc.raw,
                mode,
                // A max window holding a NaN pools to NaN, as in PyTorch.
                cudnn_sys::cudnnNanPropagation_t::CUDNN_PROPAGATE_NAN,
                dim(window.0)?,
                dim(window.1)?,
                dim(padding.0)?,
                dim(padding.1)?,
                dim(stride.0)?,
                dim(stride.1)?,
            )
        };
        cudnn_check(status, "pooling descriptor")?;
        Ok(desc)
    }
}

impl Drop for PoolDesc {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuDNN and is destroyed once, here.
        let _ = unsafe { cudnn_sys::cudnnDestroyPoolingDescriptor(self.raw) };
    }
}

/// cuDNN's ReLU.
pub(super) struct ReluDesc {
    raw: cudnn_sys::cudnnActivationDescriptor_t,
}

impl ReluDesc {
    /// `y = max(x, 0)`.
    pub(super) fn new() -> CallResult<Self> {
        let mut raw = ptr::null_mut();
        // SAFETY: writes one descriptor handle through a valid pointer.
        let status = unsafe { cudnn_sys::cudnnCreateActivationDescriptor(&mut raw) };
        cudnn_check(status, "activation descriptor")?;
        let desc = Self { raw };
        // SAFETY: `raw` is a live descriptor owned by `desc`.
        let status = unsafe {
            cudnn_sys::cudnnSetActivationDescriptor(
                desc.raw,
                cudnn_sys::cudnnActivationMode_t::CUDNN_ACTIVATION_RELU,
                cudnn_sys::cudnnNanPropagation_t::CUDNN_NOT_PROPAGATE_NAN,
                0.0,
            )
        };
        cudnn_check(status, "activation descriptor")?;
        Ok(desc)
    }
}

impl Drop for ReluDesc {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by cuDNN and is destroyed once, here.
        let _ = unsafe { cudnn_sys::cudnnDestroyActivationDescriptor(self.raw) };
    }
}

/// A column-major GEMM `C = op(A) op(B) (+ C)` (cuBLAS conventions), f32 accumulation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gemm<'a> {
    /// Transpose A.
    pub trans_a: bool,
    /// Transpose B.
    pub trans_b: bool,
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// A and its leading dimension.
    pub a: (Region<'a>, usize),
    /// B and its leading dimension.
    pub b: (Region<'a>, usize),
    /// C and its leading dimension.
    pub c: (Region<'a>, usize),
    /// Add to C (beta = 1) instead of overwriting it.
    pub accumulate: bool,
    /// Element type of A, B and C.
    pub dtype: DataType,
}

/// Elements a column-major `rows x columns` matrix with leading dimension `ld` spans, or `None`
/// when `ld < rows`.
fn matrix_elements(rows: usize, columns: usize, ld: usize) -> Option<usize> {
    if ld < rows.max(1) {
        return None;
    }
    Some(if rows == 0 || columns == 0 {
        0
    } else {
        ld * (columns - 1) + rows
    })
}

/// A kernel argument.
#[derive(Debug, Clone, Copy)]
pub(super) enum KernelArg<'a> {
    /// A device pointer.
    Ptr(Region<'a>),
    /// A null pointer (an unused optional tensor).
    Null,
    /// `long long`.
    I64(i64),
    /// `int`.
    I32(i32),
    /// `float`.
    F32(f32),
}

/// The device, its stream and the cuDNN and cuBLAS handles bound to it.
pub(super) struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    cudnn: cudnn_sys::cudnnHandle_t,
    cublas: cublas_sys::cublasHandle_t,
    tf32: bool,
}

/// Held by each cuDNN algorithm search ([`Gpu::find_conv`]), so that searches never overlap.
static SEARCH: Mutex<()> = Mutex::new(());

impl Gpu {
    /// Opens device `ordinal` with cuDNN and cuBLAS on its default stream. With `tf32`, f32
    /// GEMMs may use TF32 tensor cores.
    pub(super) fn open(ordinal: usize, tf32: bool) -> CallResult<Self> {
        let ctx = CudaContext::new(ordinal).map_err(driver_error("context creation"))?;
        // The legacy default stream: the only stream, so cudarc records no synchronisation
        // events around each use of a buffer (which would fall inside the timed region).
        let stream = ctx.default_stream();
        let cudnn = cudnn_result::create_handle().map_err(|e| {
            CallError(format!(
                "cuDNN initialisation failed: {:?} (cuDNN 9 built for CUDA 13 is needed: the \
                 `nvidia-cudnn-cu13` Python package's lib folder on LD_LIBRARY_PATH)",
                e.0
            ))
        })?;
        let cublas = match cublas_result::create_handle() {
            Ok(handle) => handle,
            Err(e) => {
                // SAFETY: `cudnn` was created above and is not used after this.
                let _ = unsafe { cudnn_result::destroy_handle(cudnn) };
                return Err(CallError(format!("cuBLAS initialisation failed: {:?}", e.0)));
            }
        };
        let gpu = Self {
            ctx,
            stream,
            cudnn,
            cublas,
            tf32,
        };
        let raw_stream = gpu.stream.cu_stream();
        // SAFETY: both handles are live and owned by `gpu`; the stream outlives them (field
        // order in `Drop`).
        unsafe {
            cudnn_check(
                cudnn_sys::cudnnSetStream(gpu.cudnn, raw_stream as _),
                "set stream",
            )?;
            cublas_check(
                cublas_sys::cublasSetStream_v2(gpu.cublas, raw_stream as _),
                "set stream",
            )?;
        }
        let math = if tf32 {
            cublas_sys::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
        } else {
            // Default math (no TF32), and no reduced-precision split-K reductions for f16.
            cublas_sys::cublasMath_t::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
        };
        // SAFETY: the handle is live.
        cublas_check(
            unsafe { cublas_sys::cublasSetMathMode(gpu.cublas, math) },
            "set math mode",
        )?;
        Ok(gpu)
    }

    /// The context.
    pub(super) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every op runs on.
    pub(super) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Makes this device current on the calling thread (cuDNN and cuBLAS calls need it).
    pub(super) fn bind(&self) -> CallResult<()> {
        self.ctx
            .bind_to_thread()
            .map_err(driver_error("binding the context"))
    }

    /// cuDNN's version, e.g. `91200` for 9.12.0.
    pub(super) fn cudnn_version(&self) -> usize {
        cudnn_result::get_version()
    }

    /// cuBLAS's version, e.g. `130100` for 13.1.0.
    pub(super) fn cublas_version(&self) -> CallResult<i32> {
        let mut version = 0;
        // SAFETY: the handle is live; writes one int.
        let status = unsafe { cublas_sys::cublasGetVersion_v2(self.cublas, &mut version) };
        cublas_check(status, "version")?;
        Ok(version)
    }

    /// Measures every algorithm of `pass` (cuDNN's `cudnnFind*AlgorithmEx`, like
    /// `cudnn.benchmark` in Torch) on the given tensors, which it overwrites (the pass's output),
    /// and returns the fastest one that `math` admits, that sums the products themselves
    /// ([`ConvAlgo::sums_products`]) and that fits in `workspace`; else why there is none.
    ///
    /// One search at a time in the process ([`SEARCH`]): a search times every algorithm on the
    /// GPU, and two at once (the tests' threads, each with its own backend) would time each
    /// other.
    pub(super) fn find_conv(
        &self,
        pass: ConvPass,
        descs: &ConvDescs,
        math: MathMode,
        [first, second, output]: [Region<'_>; 3],
        workspace: Option<Region<'_>>,
    ) -> CallResult<std::result::Result<ConvChoice, String>> {
        // A search that panicked left nothing to protect: the lock only orders searches.
        let _alone = SEARCH.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (workspace_ptr, workspace_bytes) = match workspace {
            Some(w) => (w.at_least(w.bytes, "workspace")?, w.bytes),
            None => (ptr::null_mut(), 0),
        };
        let mut returned = 0;
        let mut choices: Vec<Offered> = Vec::new();
        let mut failed = Vec::new();
        // The three passes' results have the same fields: sorts the first `returned` of one
        // pass's into what cuDNN offered and what failed in its search.
        macro_rules! offered {
            ($results:expr, $algo:path) => {
                for r in $results.iter().take(returned.max(0) as usize) {
                    if r.status == cudnn_sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS {
                        choices.push(Offered {
                            algo: $algo(r.algo),
                            math: r.mathType,
                            order: r.determinism,
                            memory: r.memory,
                            time_ms: r.time,
                        });
                    } else {
                        failed.push(format!("{:?}: {:?}", $algo(r.algo), r.status));
                    }
                }
            };
        }
        match pass {
            ConvPass::Forward => {
                let x = first.at_least(descs.x.bytes, "convolution input")?;
                let w = second.at_least(descs.w.bytes, "convolution weights")?;
                let y = output.at_least(descs.y.bytes, "convolution output")?;
                const COUNT: usize =
                    cudnn_sys::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as usize;
                // SAFETY: cuDNN writes at most COUNT results, and only those it reports are read.
                let mut results: [cudnn_sys::cudnnConvolutionFwdAlgoPerf_t; COUNT] =
                    unsafe { MaybeUninit::zeroed().assume_init() };
                // SAFETY: the pointers cover the descriptors' sizes (checked above) and the
                // workspace its stated size; all descriptors are live.
                let status = unsafe {
                    cudnn_sys::cudnnFindConvolutionForwardAlgorithmEx(
                        self.cudnn,
                        descs.x.raw,
                        x,
                        descs.w.raw,
                        w,
                        descs.conv.raw,
                        descs.y.raw,
                        y,
                        COUNT as i32,
                        &mut returned,
                        results.as_mut_ptr(),
                        workspace_ptr,
                        workspace_bytes,
                    )
                };
                cudnn_check(status, "forward algorithm search")?;
                offered!(results, ConvAlgo::Forward);
            }
            ConvPass::BackwardData => {
                let dy = first.at_least(descs.y.bytes, "output gradient")?;
                let w = second.at_least(descs.w.bytes, "convolution weights")?;
                let dx = output.at_least(descs.x.bytes, "input gradient")?;
                const COUNT: usize =
                    cudnn_sys::cudnnConvolutionBwdDataAlgo_t::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT as usize;
                // SAFETY: as for the forward pass.
                let mut results: [cudnn_sys::cudnnConvolutionBwdDataAlgoPerf_t; COUNT] =
                    unsafe { MaybeUninit::zeroed().assume_init() };
                // SAFETY: as for the forward pass.
                let status = unsafe {
                    cudnn_sys::cudnnFindConvolutionBackwardDataAlgorithmEx(
                        self.cudnn,
                        descs.w.raw,
                        w,
                        descs.y.raw,
                        dy,
                        descs.conv.raw,
                        descs.x.raw,
                        dx,
                        COUNT as i32,
                        &mut returned,
                        results.as_mut_ptr(),
                        workspace_ptr,
                        workspace_bytes,
                    )
                };
                cudnn_check(status, "backward data algorithm search")?;
                offered!(results, ConvAlgo::BackwardData);
            }
            ConvPass::BackwardFilter => {
                let x = first.at_least(descs.x.bytes, "convolution input")?;
                let dy = second.at_least(descs.y.bytes, "output gradient")?;
                let dw = output.at_least(descs.w.bytes, "weight gradient")?;
                const COUNT: usize =
                    cudnn_sys::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT
                        as usize;
                // SAFETY: as for the forward pass.
                let mut results: [cudnn_sys::cudnnConvolutionBwdFilterAlgoPerf_t; COUNT] =
                    unsafe { MaybeUninit::zeroed().assume_init() };
                // SAFETY: as for the forward pass.
                let status = unsafe {
                    cudnn_sys::cudnnFindConvolutionBackwardFilterAlgorithmEx(
                        self.cudnn,
                        descs.x.raw,
                        x,
                        descs.y.raw,
                        dy,
                        descs.conv.raw,
                        descs.w.raw,
                        dw,
                        COUNT as i32,
                        &mut returned,
                        results.as_mut_ptr(),
                        workspace_ptr,
                        workspace_bytes,
                    )
                };
                cudnn_check(status, "backward filter algorithm search")?;
                offered!(results, ConvAlgo::BackwardFilter);
            }
        }
        // cuDNN sorts by time; the first admissible one that fits is the fastest.
        let found = choices
            .iter()
            .find(|o| {
                o.algo.sums_products()
                    && math.admits(o.math)
                    && math.admits_order(o.order)
                    && o.memory <= workspace_bytes
            })
            .map(|o| ConvChoice {
                algo: o.algo,
                math: math.run_math(o.math),
                workspace_bytes: o.memory,
                time_ms: o.time_ms,
            });
        Ok(found.ok_or_else(|| {
            let offered: Vec<String> = choices
                .iter()
                .map(|o| format!("{:?} ({:?}, {:?}, {} B)", o.algo, o.math, o.order, o.memory))
                .collect();
            let failed = if failed.is_empty() {
                String::new()
            } else {
                format!("; failed in the search: {}", failed.join(", "))
            };
            if offered.is_empty() {
                format!("cuDNN's search returned {returned} results, none usable{failed}")
            } else {
                format!(
                    "cuDNN offered {} with {workspace_bytes} B of workspace, none of them a direct \
                     sum of products in this math mode and summation order{failed}",
                    offered.join(", ")
                )
            }
        }))
    }

    /// Runs one pass of a convolution with the algorithm `choice`: the output becomes the
    /// convolution (`Output::Overwrite`), or the convolution plus what the output holds
    /// (`Output::Accumulate`, cuDNN's `beta = 1`, added in f32 before the one rounding to the
    /// output's type).
    pub(super) fn conv(
        &self,
        descs: &ConvDescs,
        choice: &ConvChoice,
        [first, second, output]: [Region<'_>; 3],
        workspace: Option<Region<'_>>,
        mode: Output,
    ) -> CallResult<()> {
        let (workspace_ptr, workspace_bytes) = match workspace {
            Some(w) => (w.at_least(choice.workspace_bytes, "workspace")?, w.bytes),
            None if choice.workspace_bytes == 0 => (ptr::null_mut(), 0),
            None => return Err(CallError("convolution without its workspace".into())),
        };
        descs.conv.set_math(choice.math)?;
        let beta = match mode {
            Output::Overwrite => 0.0f32,
            Output::Accumulate => 1.0f32,
        };
        let alpha = 1.0f32;
        let (alpha, beta) = (
            &alpha as *const f32 as *const c_void,
            &beta as *const f32 as *const c_void,
        );
        let status = match choice.algo {
            ConvAlgo::Forward(algo) => {
                let x = first.at_least(descs.x.bytes, "convolution input")?;
                let w = second.at_least(descs.w.bytes, "convolution weights")?;
                let y = output.at_least(descs.y.bytes, "convolution output")?;
                // SAFETY: pointers cover the descriptors' sizes (checked), the workspace what
                // the algorithm needs; descriptors are live; alpha and beta are f32 as cuDNN
                // expects for f32 and f16 data.
                unsafe {
                    cudnn_sys::cudnnConvolutionForward(
                        self.cudnn,
                        alpha,
                        descs.x.raw,
                        x,
                        descs.w.raw,
                        w,
                        descs.conv.raw,
                        algo,
                        workspace_ptr,
                        workspace_bytes,
                        beta,
                        descs.y.raw,
                        y,
                    )
                }
            }
            ConvAlgo::BackwardData(algo) => {
                let dy = first.at_least(descs.y.bytes, "output gradient")?;
                let w = second.at_least(descs.w.bytes, "convolution weights")?;
                let dx = output.at_least(descs.x.bytes, "input gradient")?;
                // SAFETY: as for the forward pass.
                unsafe {
                    cudnn_sys::cudnnConvolutionBackwardData(
                        self.cudnn,
                        alpha,
                        descs.w.raw,
                        w,
                        descs.y.raw,
                        dy,
                        descs.conv.raw,
                        algo,
                        workspace_ptr,
                        workspace_bytes,
                        beta,
                        descs.x.raw,
                        dx,
                    )
                }
            }
            ConvAlgo::BackwardFilter(algo) => {
                let x = first.at_least(descs.x.bytes, "convolution input")?;
                let dy = second.at_least(descs.y.bytes, "output gradient")?;
                let dw = output.at_least(descs.w.bytes, "weight gradient")?;
                // SAFETY: as for the forward pass.
                unsafe {
                    cudnn_sys::cudnnConvolutionBackwardFilter(
                        self.cudnn,
                        alpha,
                        descs.x.raw,
                        x,
                        descs.y.raw,
                        dy,
                        descs.conv.raw,
                        algo,
                        workspace_ptr,
                        workspace_bytes,
                        beta,
                        descs.w.raw,
                        dw,
                    )
                }
            }
        };
        cudnn_check(status, "convolution")
    }

    /// `y = bias` broadcast over `y`'s images and pixels (`cudnnAddTensor` with `beta = 0`,
    /// which does not read `y`): the convolution then adds its sum to it
    /// ([`Output::Accumulate`]), so the output is rounded once, as the WGSL kernels round it.
    /// Adding the bias after the convolution's output was stored rounded it twice: in f16 half a
    /// unit of the sum before the bias cancels, beyond the bound where a bias cancels most of
    /// its sum (docs/gpu-h200-table.md).
    pub(super) fn set_bias(
        &self,
        bias_desc: &TensorDesc,
        bias: Region<'_>,
        y_desc: &TensorDesc,
        y: Region<'_>,
    ) -> CallResult<()> {
        let b = bias.at_least(bias_desc.bytes, "bias")?;
        let y = y.at_least(y_desc.bytes, "output")?;
        let (one, zero) = (1.0f32, 0.0f32);
        let one = &one as *const f32 as *const c_void;
        let zero = &zero as *const f32 as *const c_void;
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status =
            unsafe { cudnn_sys::cudnnAddTensor(self.cudnn, one, bias_desc.raw, b, zero, y_desc.raw, y) };
        cudnn_check(status, "set bias")
    }

    /// `db = sum of dy` over images and pixels (`cudnnConvolutionBackwardBias`).
    pub(super) fn conv_backward_bias(
        &self,
        dy_desc: &TensorDesc,
        dy: Region<'_>,
        db_desc: &TensorDesc,
        db: Region<'_>,
    ) -> CallResult<()> {
        let dy = dy.at_least(dy_desc.bytes, "output gradient")?;
        let db = db.at_least(db_desc.bytes, "bias gradient")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnConvolutionBackwardBias(
                self.cudnn,
                &alpha as *const f32 as *const c_void,
                dy_desc.raw,
                dy,
                &beta as *const f32 as *const c_void,
                db_desc.raw,
                db,
            )
        };
        cudnn_check(status, "bias gradient")
    }

    /// `y = pool(x)` (`cudnnPoolingForward`).
    pub(super) fn pool_forward(
        &self,
        pool: &PoolDesc,
        x_desc: &TensorDesc,
        x: Region<'_>,
        y_desc: &TensorDesc,
        y: Region<'_>,
    ) -> CallResult<()> {
        let x = x.at_least(x_desc.bytes, "pooling input")?;
        let y = y.at_least(y_desc.bytes, "pooling output")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnPoolingForward(
                self.cudnn,
                pool.raw,
                &alpha as *const f32 as *const c_void,
                x_desc.raw,
                x,
                &beta as *const f32 as *const c_void,
                y_desc.raw,
                y,
            )
        };
        cudnn_check(status, "pooling forward")
    }

    /// `dx` of average pooling (`cudnnPoolingBackward`; the forward output is not needed for
    /// averages, so `dy` stands in for it).
    pub(super) fn average_pool_backward(
        &self,
        pool: &PoolDesc,
        x_desc: &TensorDesc,
        x: Region<'_>,
        y_desc: &TensorDesc,
        dy: Region<'_>,
        dx: Region<'_>,
    ) -> CallResult<()> {
        let x = x.at_least(x_desc.bytes, "pooling input")?;
        let dy = dy.at_least(y_desc.bytes, "pooling output gradient")?;
        let dx = dx.at_least(x_desc.bytes, "pooling input gradient")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnPoolingBackward(
                self.cudnn,
                pool.raw,
                &alpha as *const f32 as *const c_void,
                y_desc.raw,
                dy,
                y_desc.raw,
                dy,
                x_desc.raw,
                x,
                &beta as *const f32 as *const c_void,
                x_desc.raw,
                dx,
            )
        };
        cudnn_check(status, "pooling backward")
    }

    /// `y = max(x, 0)`.
    pub(super) fn relu_forward(
        &self,
        relu: &ReluDesc,
        desc: &TensorDesc,
        x: Region<'_>,
        y: Region<'_>,
    ) -> CallResult<()> {
        let x = x.at_least(desc.bytes, "activation input")?;
        let y = y.at_least(desc.bytes, "activation output")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptor's size (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnActivationForward(
                self.cudnn,
                relu.raw,
                &alpha as *const f32 as *const c_void,
                desc.raw,
                x,
                &beta as *const f32 as *const c_void,
                desc.raw,
                y,
            )
        };
        cudnn_check(status, "relu forward")
    }

    /// `dx = dy where y > 0, else 0`. cuDNN also takes the forward input; for a ReLU, `y > 0`
    /// exactly where `x > 0`, so `y` stands in for it.
    pub(super) fn relu_backward(
        &self,
        relu: &ReluDesc,
        desc: &TensorDesc,
        y: Region<'_>,
        dy: Region<'_>,
        dx: Region<'_>,
    ) -> CallResult<()> {
        let y = y.at_least(desc.bytes, "activation output")?;
        let dy = dy.at_least(desc.bytes, "activation output gradient")?;
        let dx = dx.at_least(desc.bytes, "activation input gradient")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptor's size (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnActivationBackward(
                self.cudnn,
                relu.raw,
                &alpha as *const f32 as *const c_void,
                desc.raw,
                y,
                desc.raw,
                dy,
                desc.raw,
                y,
                &beta as *const f32 as *const c_void,
                desc.raw,
                dx,
            )
        };
        cudnn_check(status, "relu backward")
    }

    /// Training batch normalisation (`cudnnBatchNormalizationForwardTraining`): `y`, the saved
    /// mean and inverse standard deviation, and the running statistics updated in place with
    /// the unbiased batch variance. `params` are f32: `[gamma, beta, running_mean,
    /// running_var, saved_mean, saved_invstd]`.
    pub(super) fn batch_norm_forward_train(
        &self,
        x_desc: &TensorDesc,
        [x, y]: [Region<'_>; 2],
        params_desc: &TensorDesc,
        [gamma, beta, running_mean, running_var, saved_mean, saved_invstd]: [Region<'_>; 6],
        momentum: f64,
        eps: f64,
    ) -> CallResult<()> {
        let x = x.at_least(x_desc.bytes, "batch norm input")?;
        let y = y.at_least(x_desc.bytes, "batch norm output")?;
        let p = params_desc.bytes;
        let (gamma, beta) = (gamma.at_least(p, "gamma")?, beta.at_least(p, "beta")?);
        let running_mean = running_mean.at_least(p, "running mean")?;
        let running_var = running_var.at_least(p, "running variance")?;
        let saved_mean = saved_mean.at_least(p, "saved mean")?;
        let saved_invstd = saved_invstd.at_least(p, "saved inverse deviation")?;
        let (one, zero) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnBatchNormalizationForwardTraining(
                self.cudnn,
                cudnn_sys::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL,
                &one as *const f32 as *const c_void,
                &zero as *const f32 as *const c_void,
                x_desc.raw,
                x,
                x_desc.raw,
                y,
                params_desc.raw,
                gamma,
                beta,
                momentum,
                running_mean,
                running_var,
                eps,
                saved_mean,
                saved_invstd,
            )
        };
        cudnn_check(status, "batch norm forward (training)")
    }

    /// Inference batch normalisation with the running statistics. `params` are f32:
    /// `[gamma, beta, running_mean, running_var]`.
    pub(super) fn batch_norm_forward_eval(
        &self,
        x_desc: &TensorDesc,
        [x, y]: [Region<'_>; 2],
        params_desc: &TensorDesc,
        [gamma, beta, running_mean, running_var]: [Region<'_>; 4],
        eps: f64,
    ) -> CallResult<()> {
        let x = x.at_least(x_desc.bytes, "batch norm input")?;
        let y = y.at_least(x_desc.bytes, "batch norm output")?;
        let p = params_desc.bytes;
        let (gamma, beta) = (gamma.at_least(p, "gamma")?, beta.at_least(p, "beta")?);
        let running_mean = running_mean.at_least(p, "running mean")?;
        let running_var = running_var.at_least(p, "running variance")?;
        let (one, zero) = (1.0f32, 0.0f32);
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnBatchNormalizationForwardInference(
                self.cudnn,
                cudnn_sys::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL,
                &one as *const f32 as *const c_void,
                &zero as *const f32 as *const c_void,
                x_desc.raw,
                x,
                x_desc.raw,
                y,
                params_desc.raw,
                gamma,
                beta,
                running_mean,
                running_var,
                eps,
            )
        };
        cudnn_check(status, "batch norm forward (inference)")
    }

    /// Batch normalisation gradients from the saved statistics. `params` are f32:
    /// `[gamma, saved_mean, saved_invstd, dgamma, dbeta]`.
    pub(super) fn batch_norm_backward(
        &self,
        x_desc: &TensorDesc,
        [x, dy, dx]: [Region<'_>; 3],
        params_desc: &TensorDesc,
        [gamma, saved_mean, saved_invstd, dgamma, dbeta]: [Region<'_>; 5],
        eps: f64,
    ) -> CallResult<()> {
        let x = x.at_least(x_desc.bytes, "batch norm input")?;
        let dy = dy.at_least(x_desc.bytes, "batch norm output gradient")?;
        let dx = dx.at_least(x_desc.bytes, "batch norm input gradient")?;
        let p = params_desc.bytes;
        let gamma = gamma.at_least(p, "gamma")?;
        let saved_mean = saved_mean.at_least(p, "saved mean")?;
        let saved_invstd = saved_invstd.at_least(p, "saved inverse deviation")?;
        let (dgamma, dbeta) = (
            dgamma.at_least(p, "gamma gradient")?,
            dbeta.at_least(p, "beta gradient")?,
        );
        let (one, zero) = (1.0f32, 0.0f32);
        let (one, zero) = (
            &one as *const f32 as *const c_void,
            &zero as *const f32 as *const c_void,
        );
        // SAFETY: pointers cover the descriptors' sizes (checked); descriptors are live.
        let status = unsafe {
            cudnn_sys::cudnnBatchNormalizationBackward(
                self.cudnn,
                cudnn_sys::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL,
                one,
                zero,
                one,
                zero,
                x_desc.raw,
                x,
                x_desc.raw,
                dy,
                x_desc.raw,
                dx,
                params_desc.raw,
                gamma,
                dgamma,
                dbeta,
                eps,
                saved_mean,
                saved_invstd,
            )
        };
        cudnn_check(status, "batch norm backward")
    }

    /// A GEMM through `cublasGemmEx`, accumulating in f32 (TF32 only when the backend allows it).
    pub(super) fn gemm(&self, g: &Gemm<'_>) -> CallResult<()> {
        let (a_rows, a_columns) = if g.trans_a { (g.k, g.m) } else { (g.m, g.k) };
        let (b_rows, b_columns) = if g.trans_b { (g.n, g.k) } else { (g.k, g.n) };
        let elements = |rows, columns, ld, name: &str| {
            matrix_elements(rows, columns, ld)
                .ok_or_else(|| CallError(format!("GEMM {name}: leading dimension {ld} < {rows} rows")))
        };
        let e = g.dtype.bytes();
        let a =
            g.a.0
                .at_least(elements(a_rows, a_columns, g.a.1, "A")? * e, "GEMM A")?;
        let b =
            g.b.0
                .at_least(elements(b_rows, b_columns, g.b.1, "B")? * e, "GEMM B")?;
        let c = g.c.0.at_least(elements(g.m, g.n, g.c.1, "C")? * e, "GEMM C")?;
        if g.m == 0 || g.n == 0 {
            return Ok(());
        }
        let op = |t| {
            if t {
                cublas_sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cublas_sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let compute = if self.tf32 && g.dtype == DataType::F32 {
            cublas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32
        } else {
            cublas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F
        };
        let (alpha, beta) = (1.0f32, if g.accumulate { 1.0f32 } else { 0.0 });
        // SAFETY: A, B and C cover the elements the shape and leading dimensions address
        // (checked above); the handle is live; alpha and beta are f32 as COMPUTE_32F expects.
        let status = unsafe {
            cublas_sys::cublasGemmEx(
                self.cublas,
                op(g.trans_a),
                op(g.trans_b),
                dim(g.m)?,
                dim(g.n)?,
                dim(g.k)?,
                &alpha as *const f32 as *const c_void,
                a,
                g.dtype.blas(),
                dim(g.a.1)?,
                b,
                g.dtype.blas(),
                dim(g.b.1)?,
                &beta as *const f32 as *const c_void,
                c,
                g.dtype.blas(),
                dim(g.c.1)?,
                compute,
                cublas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )
        };
        cublas_check(status, "GEMM")
    }

    /// Launches one of convbench's kernels (`kernels.cu`) on a 1-d grid.
    ///
    /// Memory safety rests on the kernels bounding every access by their size arguments, and on
    /// the callers passing sizes derived from the op geometry whose tensor lengths
    /// `Program::push` checked, with the regions of those tensors.
    pub(super) fn launch(
        &self,
        function: &CudaFunction,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_>],
    ) -> CallResult<()> {
        // One 8-byte slot per argument, holding the value in its C type's native layout.
        let mut slots: Vec<u64> = args
            .iter()
            .map(|arg| {
                let mut bytes = [0u8; 8];
                match *arg {
                    KernelArg::Ptr(region) => bytes = region.ptr.to_ne_bytes(),
                    KernelArg::Null => {}
                    KernelArg::I64(v) => bytes = v.to_ne_bytes(),
                    KernelArg::I32(v) => bytes[..4].copy_from_slice(&v.to_ne_bytes()),
                    KernelArg::F32(v) => bytes[..4].copy_from_slice(&v.to_ne_bytes()),
                }
                u64::from_ne_bytes(bytes)
            })
            .collect();
        let mut params: Vec<*mut c_void> = slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect();
        // SAFETY: `params` points at one live slot per kernel parameter, each at least as large
        // as the parameter; the function belongs to this context; see the doc comment for the
        // kernels' accesses.
        unsafe {
            cudarc::driver::result::launch_kernel(
                function.cu_function(),
                (grid.max(1), 1, 1),
                (block, 1, 1),
                0,
                self.stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(driver_error("kernel launch"))
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        let _ = self.bind();
        // SAFETY: both handles were created in `open`, are owned by `self`, and are destroyed
        // once, here, before the context and stream (fields) are released.
        unsafe {
            let _ = cublas_result::destroy_handle(self.cublas);
            let _ = cudnn_result::destroy_handle(self.cudnn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConvAlgo, MathMode, cudnn_sys};
    use cudnn_sys::cudnnConvolutionBwdDataAlgo_t as Data;
    use cudnn_sys::cudnnConvolutionBwdFilterAlgo_t as Filter;
    use cudnn_sys::cudnnConvolutionFwdAlgo_t as Fwd;
    use cudnn_sys::cudnnDeterminism_t::{CUDNN_DETERMINISTIC, CUDNN_NON_DETERMINISTIC};
    use cudnn_sys::cudnnMathType_t as Math;

    #[test]
    fn f16_admits_only_deterministic_algorithms_and_f32_either() {
        for mode in [MathMode::StrictF32, MathMode::Tf32] {
            assert!(mode.admits_order(CUDNN_DETERMINISTIC), "{mode:?}");
            assert!(mode.admits_order(CUDNN_NON_DETERMINISTIC), "{mode:?}");
        }
        assert!(MathMode::HalfTensorOps.admits_order(CUDNN_DETERMINISTIC));
        assert!(!MathMode::HalfTensorOps.admits_order(CUDNN_NON_DETERMINISTIC));
    }

    #[test]
    fn strict_f32_admits_fma_kernels_and_runs_them_without_tf32() {
        assert!(MathMode::StrictF32.admits(Math::CUDNN_FMA_MATH));
        assert!(MathMode::StrictF32.admits(Math::CUDNN_DEFAULT_MATH));
        assert!(!MathMode::StrictF32.admits(Math::CUDNN_TENSOR_OP_MATH));
        assert_eq!(
            MathMode::StrictF32.run_math(Math::CUDNN_DEFAULT_MATH),
            Math::CUDNN_FMA_MATH
        );
        assert_eq!(
            MathMode::HalfTensorOps.run_math(Math::CUDNN_TENSOR_OP_MATH),
            Math::CUDNN_TENSOR_OP_MATH
        );
    }

    #[test]
    fn fft_and_winograd_are_left_out_and_named_as_cudnn_says() {
        assert!(ConvAlgo::Forward(Fwd::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM).sums_products());
        assert!(!ConvAlgo::Forward(Fwd::CUDNN_CONVOLUTION_FWD_ALGO_FFT).sums_products());
        assert!(!ConvAlgo::Forward(Fwd::CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED).sums_products());
        assert!(ConvAlgo::BackwardData(Data::CUDNN_CONVOLUTION_BWD_DATA_ALGO_1).sums_products());
        assert!(!ConvAlgo::BackwardData(Data::CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING).sums_products());
        assert!(
            !ConvAlgo::BackwardFilter(Filter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED)
                .sums_products()
        );
        assert_eq!(
            ConvAlgo::BackwardFilter(Filter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0).name(),
            "cudnn_bwd_filter_algo_0"
        );
    }
}
