//! The `cuda` backend (feature `cuda`): NVIDIA's own libraries through cudarc, the vendor
//! reference the WGSL kernels are compared with on the same GPU.
//!
//! - Convolutions (forward, backward data, backward filter): cuDNN, with the fastest algorithm
//!   of each layer measured when a program loads (`cudnnFind*AlgorithmEx`, like
//!   `cudnn.benchmark` in the seeds' Torch runs) and one workspace for the whole program.
//!   The search admits only algorithms that add the products themselves (GEMM-like, direct):
//!   cuDNN's FFT and Winograd algorithms spread rounding over whole tiles and failed the
//!   per-element bound every kernel is verified against on an H200 (`ConvAlgo::sums_products`),
//!   so cuDNN is timed under the same accuracy contract as the WGSL kernels. In f16 it also
//!   leaves out the non-deterministic algorithms, which add partial sums into the f16 output
//!   with atomics and so round the sum many times (`MathMode::admits_order`).
//!   Bias: written into the output first (`cudnnAddTensor`), and the convolution adds its sum
//!   to it (`beta = 1`), one rounding as in the WGSL kernels; bias gradient:
//!   `cudnnConvolutionBackwardBias`.
//! - Pooling: cuDNN where it computes exactly what the reference does (every window of a
//!   floor-sized layer, forward; average backward); ceil-mode layers that round up and the
//!   max-pooling gradient (the first maximum of a window gets it, or its last NaN, as in
//!   PyTorch) run on our kernels. cuDNN's max pooling propagates NaN, as PyTorch's does.
//! - ReLU and batch normalisation: cuDNN (`cudnnBatchNormalization*`: saved inverse standard
//!   deviation and running variance updated with the unbiased batch variance, as the
//!   reference). f16 programs convert the per-channel tensors to the f32 cuDNN wants.
//! - Fully connected layers: cuBLAS `cublasGemmEx` (column slices through the leading
//!   dimension and a pointer offset); bias and bias gradient on our kernels.
//! - LRN, softmax cross-entropy, channel copies, additions, global average pooling and SGD:
//!   our CUDA kernels (`kernels.cu`), compiled once per backend by NVRTC. cuDNN's LRN neither
//!   returns nor takes the scale that the op contract saves, and its softmax has no loss.
//!
//! f32 is strict by default (cuDNN `CUDNN_FMA_MATH`, cuBLAS `CUBLAS_COMPUTE_32F`: no TF32);
//! [`CudaOptions::tf32`] allows TF32 and is recorded in the fingerprint. f16 programs store f16
//! and accumulate in f32 (cuDNN HALF data with FLOAT compute, cuBLAS `CUDA_R_16F` with
//! `CUBLAS_COMPUTE_32F`). Ops are timed with CUDA events ([`TimingMethod::DeviceEvents`]).
//!
//! The libraries are loaded at run time: building needs no CUDA toolkit, and a missing library
//! is an environment error naming it when the backend opens.

mod error;
#[allow(unsafe_code)]
mod ffi;
mod kernels;
mod steps;

use self::ffi::{Buffer, CallError, ConvChoice, DataType, Gpu, Library, MathMode, Region};
use self::kernels::Kernels;
use self::steps::{ConvKey, PlanError, Planner, Step};
use super::{Backend, BackendKind, Loaded, Program, TensorId, Timings, check_write, check_write_labels};
use crate::kernels::DType;
use crate::model::Precision;
use crate::results::{AdapterFingerprint, TimingMethod};
use crate::{Error, Result};
use cudarc::driver::{CudaContext, CudaEvent, sys::CUevent_flags};
pub use error::CudaError;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The CUDA version whose driver API the build's bindings use (cudarc's `cuda-13000`).
const CUDA_BINDINGS_VERSION: i32 = 13000;
/// The cudarc release that drives the libraries (recorded in the fingerprint).
const CUDARC: &str = "cudarc 0.19";

/// How the `cuda` backend may compute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CudaOptions {
    /// Let f32 convolutions and GEMMs use TF32 tensor cores (10-bit mantissa products). Off by
    /// default; when on, the fingerprint's driver info says `tf32`, so such numbers are never
    /// compared with strict f32 ones.
    pub tf32: bool,
}

/// NVIDIA GPUs through cuDNN, cuBLAS and NVRTC.
pub struct CudaBackend {
    gpu: Gpu,
    kernels: Kernels,
    fingerprint: AdapterFingerprint,
    options: CudaOptions,
    half: bool,
    total_memory: u64,
    /// Convolution algorithms measured so far, by pass, geometry and precision.
    algorithms: RefCell<HashMap<ConvKey, ConvChoice>>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("fingerprint", &self.fingerprint)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The error that names a missing library and where it comes from; `failed` says what could
/// not be done.
fn missing_library(failed: &'static str, library: Library) -> Error {
    let (name, remedy) = match library {
        Library::Driver => (
            "libcuda (the NVIDIA driver's CUDA library)",
            "install the NVIDIA driver (this machine may have no NVIDIA GPU), or put the folder \
             holding libcuda.so.1 on LD_LIBRARY_PATH",
        ),
        Library::Nvrtc => (
            "libnvrtc (NVRTC, the CUDA runtime compiler)",
            "install the CUDA 13 toolkit, or `pip install nvidia-cuda-nvrtc`, and put the folder \
             holding libnvrtc.so.13 on LD_LIBRARY_PATH",
        ),
        Library::Cublas => (
            "libcublas (cuBLAS)",
            "install the CUDA 13 toolkit, or `pip install nvidia-cublas`, and put the folder \
             holding libcublas.so.13 on LD_LIBRARY_PATH",
        ),
        Library::Cudnn => (
            "libcudnn (cuDNN 9)",
            "cuDNN ships in the `nvidia-cudnn-cu13` Python package: put its lib folder \
             (python3 -c \"import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) + '/lib')\") \
             on LD_LIBRARY_PATH",
        ),
    };
    CudaError::MissingLibrary {
        failed,
        library: name,
        remedy,
    }
    .into()
}

/// A failed CUDA call as an environment error.
fn environment(context: &str) -> impl FnOnce(CallError) -> Error + '_ {
    move |e| {
        CudaError::Call {
            context: context.to_string(),
            message: e.0,
        }
        .into()
    }
}

/// Runs `f`, turning a panic inside cudarc (it panics when a library or symbol it needs is
/// missing) into an environment error.
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        Err(CudaError::Panicked {
            what: what.to_string(),
            message: message.to_string(),
        }
        .into())
    })
}

fn version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The kernel module's version from `/proc/driver/nvidia/version`, e.g. `580.82.07`.
fn kernel_driver_version() -> Option<String> {
    module_version(&std::fs::read_to_string("/proc/driver/nvidia/version").ok()?)
}

/// The version in the first line of `/proc/driver/nvidia/version`: the first word after "Kernel
/// Module" made of digits and dots. The open modules say "Open Kernel Module for x86_64
/// 580.159.04" (seen on an H100), the proprietary ones "x86_64 Kernel Module 580.82.07".
fn module_version(text: &str) -> Option<String> {
    let after = text.lines().next()?.split("Kernel Module").nth(1)?;
    after
        .split_whitespace()
        .find(|word| word.contains('.') && word.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

/// The PCI device id (as wgpu reports it) from sysfs, or 0 where unavailable.
fn pci_device_id(ctx: &CudaContext) -> u32 {
    use cudarc::driver::sys::CUdevice_attribute as A;
    let attribute = |a| ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok());
    let (Some(domain), Some(bus), Some(device)) = (
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    ) else {
        return 0;
    };
    let path = format!("/sys/bus/pci/devices/{domain:04x}:{bus:02x}:{device:02x}.0/device");
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .unwrap_or(0)
}

impl CudaBackend {
    /// Opens CUDA device `device_index` with strict f32.
    ///
    /// Errors with a [`CudaError`] naming what is missing: a library (the driver's
    /// libcuda, NVRTC, cuBLAS, cuDNN 9), a driver for CUDA 13, or the device.
    pub fn open(device_index: usize) -> Result<Self> {
        Self::open_with(device_index, CudaOptions::default())
    }

    /// Opens CUDA device `device_index` with `options`.
    pub fn open_with(device_index: usize, options: CudaOptions) -> Result<Self> {
        if let Some(library) = ffi::first_missing_library() {
            return Err(missing_library("the cuda backend cannot open", library));
        }
        guard("opening the device", || Self::open_device(device_index, options))
    }

    fn open_device(device_index: usize, options: CudaOptions) -> Result<Self> {
        let driver = ffi::driver_version().map_err(environment("reading the driver version"))?;
        if driver < CUDA_BINDINGS_VERSION {
            return Err(CudaError::DriverTooOld {
                driver: version(driver),
                needed: version(CUDA_BINDINGS_VERSION),
            }
            .into());
        }
        let count = CudaContext::device_count().map_err(|e| CudaError::Enumerate {
            message: format!("{e:?}"),
        })?;
        if device_index >= count.max(0) as usize {
            return Err(CudaError::NoDevice {
                index: device_index,
                count,
            }
            .into());
        }
        let gpu = Gpu::open(device_index, options.tf32).map_err(environment("opening the device"))?;
        let ctx = gpu.context();
        let cudnn = gpu.cudnn_version();
        if cudnn < 90000 {
            return Err(CudaError::OldCudnn { found: cudnn }.into());
        }
        let cublas = gpu
            .cublas_version()
            .map_err(environment("reading cuBLAS's version"))?;
        let (nvrtc_major, nvrtc_minor) =
            ffi::nvrtc_version().map_err(environment("reading NVRTC's version"))?;
        let device_error = |e| CudaError::Call {
            context: "querying the device failed".to_string(),
            message: format!("{e:?}"),
        };
        let name = ctx.name().map_err(device_error)?;
        let arch = ctx.compute_capability().map_err(device_error)?;
        let total_memory = ctx.total_mem().map_err(device_error)? as u64;
        let integrated = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED)
            .map_err(device_error)?
            != 0;
        let kernels = Kernels::load(&gpu, arch).map_err(environment("compiling convbench's CUDA kernels"))?;
        let math = if options.tf32 { "tf32" } else { "strict f32" };
        let fingerprint = AdapterFingerprint {
            backend: "cuda".into(),
            vendor_id: 0x10de,
            device_id: pci_device_id(ctx),
            name,
            device_type: if integrated { "integrated" } else { "discrete" }.into(),
            driver: match kernel_driver_version() {
                Some(v) => format!("NVIDIA {v}"),
                None => "NVIDIA".into(),
            },
            driver_info: format!(
                "CUDA {} driver, cuDNN {}.{}.{}, cuBLAS {}.{}.{}, NVRTC {nvrtc_major}.{nvrtc_minor}, \
                 sm_{}{}, {math}",
                version(driver),
                cudnn / 10000,
                (cudnn % 10000) / 100,
                cudnn % 100,
                cublas / 10000,
                (cublas % 10000) / 100,
                cublas % 100,
                arch.0,
                arch.1,
            ),
            runtime_version: format!("{CUDARC} / CUDA {}", version(driver)),
        };
        Ok(Self {
            gpu,
            kernels,
            fingerprint,
            options,
            // Half arithmetic and cuDNN's HALF tensors need compute capability 5.3.
            half: arch >= (5, 3),
            total_memory,
            algorithms: RefCell::new(HashMap::new()),
        })
    }

    /// The options the backend was opened with.
    pub fn options(&self) -> CudaOptions {
        self.options
    }

    fn math(&self, dtype: DataType) -> MathMode {
        match (dtype, self.options.tf32) {
            (DataType::F16, _) => MathMode::HalfTensorOps,
            (DataType::F32, true) => MathMode::Tf32,
            (DataType::F32, false) => MathMode::StrictF32,
        }
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn adapter(&self) -> &AdapterFingerprint {
        &self.fingerprint
    }

    fn timing_method(&self) -> TimingMethod {
        TimingMethod::DeviceEvents
    }

    fn supports(&self, precision: Precision) -> bool {
        precision == Precision::F32 || self.half
    }

    fn max_tensor_bytes(&self) -> u64 {
        self.total_memory
    }

    fn load(&self, program: &Program) -> Result<Box<dyn Loaded + '_>> {
        let loaded = guard("loading a program", || CudaProgram::load(self, program))?;
        Ok(Box::new(loaded))
    }
}

/// A program's tensors, prepared ops and timing events on the device.
struct CudaProgram<'b> {
    backend: &'b CudaBackend,
    program: Program,
    dtype: DataType,
    /// One buffer per tensor.
    buffers: Vec<Buffer>,
    /// One step per op.
    steps: Vec<Step>,
    /// The convolution workspace shared by every op (they run one after another).
    workspace: Option<Buffer>,
    /// `ops + 1` events with timing: recorded before the first op of a run and after each op.
    events: Vec<CudaEvent>,
}

impl<'b> CudaProgram<'b> {
    fn load(backend: &'b CudaBackend, program: &Program) -> Result<Self> {
        let gpu = &backend.gpu;
        gpu.bind().map_err(environment("binding the device"))?;
        let dtype = match program.precision {
            Precision::F32 => DataType::F32,
            Precision::F16 if backend.half => DataType::F16,
            Precision::F16 => {
                return Err(CudaError::NoF16 {
                    adapter: backend.fingerprint.label(),
                }
                .into());
            }
        };
        let mut buffers = Vec::with_capacity(program.tensors.len());
        for t in &program.tensors {
            let element = t.dtype.bytes(program.precision);
            buffers.push(Buffer::zeros(gpu.stream(), t.len * element).map_err(|e| {
                CudaError::OutOfMemory {
                    what: format!("tensor {} ({} elements)", t.name, t.len),
                    message: e.0,
                }
            })?);
        }
        let mut planner = Planner {
            gpu,
            kernels: &backend.kernels,
            dtype,
            math: backend.math(dtype),
            algorithms: &backend.algorithms,
            search_workspace: None,
        };
        let mut steps = Vec::with_capacity(program.ops.len());
        for call in &program.ops {
            let bindings: Vec<Region<'_>> = call.tensors.iter().map(|&t| buffers[t].region()).collect();
            let step = planner.plan(&call.op, &bindings).map_err(|e| match e {
                PlanError::Call(e) => CudaError::Call {
                    context: format!("preparing {}", call.op.name()),
                    message: e.0,
                },
                PlanError::NotImplemented(what) => CudaError::NotImplemented {
                    op: call.op.name(),
                    what,
                },
            })?;
            steps.push(step);
        }
        drop(planner);
        let workspace_bytes = steps.iter().map(Step::workspace_bytes).max().unwrap_or(0);
        let workspace = if workspace_bytes > 0 {
            Some(
                Buffer::zeros(gpu.stream(), workspace_bytes).map_err(|e| CudaError::OutOfMemory {
                    what: format!("the {workspace_bytes}-byte convolution workspace"),
                    message: e.0,
                })?,
            )
        } else {
            None
        };
        let events = (0..=program.ops.len())
            .map(|_| gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| CudaError::Call {
                context: "creating timing events failed".to_string(),
                message: format!("{e:?}"),
            })?;
        Ok(Self {
            backend,
            program: program.clone(),
            dtype,
            buffers,
            steps,
            workspace,
            events,
        })
    }

    fn gpu(&self) -> &Gpu {
        &self.backend.gpu
    }

    /// Checks that `tensor` holds `dtype` and returns its element count.
    fn tensor_len(&self, tensor: TensorId, dtype: DType) -> Result<usize> {
        let len = self.program.tensors.get(tensor).map_or(0, |t| t.len);
        check_write(&self.program, tensor, len, dtype)?;
        Ok(len)
    }

    fn write_bytes(&mut self, tensor: TensorId, bytes: &[u8]) -> Result<()> {
        let backend = self.backend;
        backend.gpu.bind().map_err(environment("binding the device"))?;
        self.buffers[tensor]
            .write(backend.gpu.stream(), bytes)
            .map_err(environment("writing a tensor"))
    }

    fn read_bytes(&self, tensor: TensorId) -> Result<Vec<u8>> {
        self.gpu().bind().map_err(environment("binding the device"))?;
        self.buffers[tensor]
            .read(self.gpu().stream())
            .map_err(environment("reading a tensor"))
    }

    /// Runs ops `ops`, recording event `k + 1` after the `k`-th when `per_op`, else one event
    /// after the last.
    fn run_ops(&self, ops: Range<usize>, per_op: bool) -> Result<Timings> {
        let gpu = self.gpu();
        gpu.bind().map_err(environment("binding the device"))?;
        let stream = gpu.stream();
        let event_error = |e| CudaError::Call {
            context: "timing events failed".to_string(),
            message: format!("{e:?}"),
        };
        self.events[0].record(stream).map_err(event_error)?;
        let workspace = self.workspace.as_ref().map(Buffer::region);
        for (k, index) in ops.clone().enumerate() {
            let call = &self.program.ops[index];
            let bindings: Vec<Region<'_>> = call.tensors.iter().map(|&t| self.buffers[t].region()).collect();
            self.steps[index]
                .run(gpu, &call.op, &bindings, workspace)
                .map_err(|e| CudaError::Call {
                    context: format!(
                        "op {index} ({}, {}) failed",
                        call.op.name(),
                        self.steps[index].describe()
                    ),
                    message: e.0,
                })?;
            if per_op {
                self.events[k + 1].record(stream).map_err(event_error)?;
            }
        }
        let last = if per_op { ops.len() } else { 1 };
        if !per_op {
            self.events[1].record(stream).map_err(event_error)?;
        }
        self.events[last].synchronize().map_err(|e| CudaError::Call {
            context: format!("ops {ops:?} failed on the device"),
            message: format!("{e:?}"),
        })?;
        let elapsed_ns = |k: usize| -> Result<u64> {
            let ms = self.events[k]
                .elapsed_ms(&self.events[k + 1])
                .map_err(event_error)?;
            Ok((f64::from(ms) * 1e6).round().max(0.0) as u64)
        };
        if per_op {
            let per_op_ns = (0..ops.len()).map(elapsed_ns).collect::<Result<Vec<_>>>()?;
            let total_ns = per_op_ns.iter().sum();
            Ok(Timings { per_op_ns, total_ns })
        } else {
            Ok(Timings {
                per_op_ns: Vec::new(),
                total_ns: elapsed_ns(0)?,
            })
        }
    }
}

impl Loaded for CudaProgram<'_> {
    fn write(&mut self, tensor: TensorId, values: &[f32]) -> Result<()> {
        check_write(&self.program, tensor, values.len(), DType::Float)?;
        let bytes: Vec<u8> = match self.dtype {
            DataType::F32 => values.iter().flat_map(|v| v.to_ne_bytes()).collect(),
            DataType::F16 => values
                .iter()
                .flat_map(|&v| half::f16::from_f32(v).to_bits().to_ne_bytes())
                .collect(),
        };
        guard("writing a tensor", || self.write_bytes(tensor, &bytes))
    }

    fn write_u32(&mut self, tensor: TensorId, values: &[u32]) -> Result<()> {
        check_write_labels(&self.program, tensor, values)?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        guard("writing a tensor", || self.write_bytes(tensor, &bytes))
    }

    fn read(&mut self, tensor: TensorId) -> Result<Vec<f32>> {
        self.tensor_len(tensor, DType::Float)?;
        let bytes = guard("reading a tensor", || self.read_bytes(tensor))?;
        Ok(match self.dtype {
            DataType::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            DataType::F16 => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_bits(u16::from_ne_bytes([b[0], b[1]])).to_f32())
                .collect(),
        })
    }

    fn read_u32(&mut self, tensor: TensorId) -> Result<Vec<u32>> {
        self.tensor_len(tensor, DType::U32)?;
        let bytes = guard("reading a tensor", || self.read_bytes(tensor))?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    fn run(&mut self, ops: Range<usize>, per_op: bool) -> Result<Timings> {
        if ops.start > ops.end || ops.end > self.steps.len() {
            return Err(super::BackendError::OpRange {
                start: ops.start,
                end: ops.end,
                ops: self.steps.len(),
            }
            .into());
        }
        if ops.is_empty() {
            return Ok(Timings {
                per_op_ns: Vec::new(),
                total_ns: 0,
            });
        }
        guard("running ops", || self.run_ops(ops, per_op))
    }

    fn memory_bytes(&self) -> u64 {
        self.buffers.iter().map(|b| b.bytes() as u64).sum()
    }

    fn kernel_name(&self, index: usize) -> Option<String> {
        self.steps.get(index).and_then(Step::kernel_name)
    }
}

/// Compiles convbench's CUDA kernels to PTX with NVRTC, which needs no GPU: a check of the
/// kernel source on machines that have `libnvrtc` but no device. Errors name what is missing.
pub fn compile_kernels_without_device() -> Result<()> {
    if !ffi::library_present(Library::Nvrtc) {
        return Err(missing_library(
            "convbench's CUDA kernels cannot be compiled",
            Library::Nvrtc,
        ));
    }
    guard("compiling convbench's CUDA kernels", || {
        kernels::compile_ptx((7, 5))
            .map(|_| ())
            .map_err(environment("compiling convbench's CUDA kernels"))
    })
}

#[cfg(test)]
mod tests {
    use super::module_version;

    #[test]
    fn the_driver_version_is_read_from_open_and_proprietary_modules() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  \
                    (dvs-builder@U22-I3-AF03-09-1)  Sun Sep 28 03:07:13 UTC 2025\nGCC version: gcc 12\n";
        assert_eq!(module_version(open).as_deref(), Some("580.159.04"));
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.82.07  Wed Aug 20 2025\n";
        assert_eq!(module_version(proprietary).as_deref(), Some("580.82.07"));
        assert_eq!(module_version("NVRM version: something else\n"), None);
        assert_eq!(module_version(""), None);
    }
}
