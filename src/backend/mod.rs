//! The [`Backend`] trait and its implementations: `wgpu` (WGSL shaders), `cpu` (the reference
//! ops in f32 on all cores, the embedded fallback) and, with the `cuda` feature, `cuda`.
//!
//! A backend loads a [`Program`] (tensors and op calls, all shapes resolved) once, creating
//! buffers, pipelines and bind groups up front, then runs ranges of its ops as often as asked:
//! nothing is compiled or allocated inside a timed region.

pub mod cpu;
pub mod cpu_fast;
#[cfg(feature = "cuda")]
pub mod cuda;
mod error;
pub mod wgpu;

use crate::kernels::{self, DType, Op, Variant};
use crate::model::Precision;
use crate::results::{AdapterFingerprint, TimingMethod};
use crate::{Error, Result};
pub use error::BackendError;
use std::ops::Range;

/// Host memory the kernel says is available for new allocations without swapping (Linux's
/// `MemAvailable` in `/proc/meminfo`), in bytes; `None` where it cannot be read.
pub fn available_host_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_available(&meminfo)
}

/// The `MemAvailable` line of a `/proc/meminfo` text, in bytes.
fn meminfo_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Fails, naming `what`, when `bytes` of host memory are more than is available; passes where
/// that cannot be known.
pub fn check_host_memory(what: impl FnOnce() -> String, bytes: u64) -> Result<()> {
    match available_host_memory() {
        Some(available) if bytes > available => Err(BackendError::HostMemoryShort {
            what: what(),
            needed_mib: bytes.div_ceil(1 << 20),
            available_mib: available >> 20,
        }
        .into()),
        _ => Ok(()),
    }
}

/// Index of a tensor in a [`Program`].
pub type TensorId = usize;

/// A tensor of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDesc {
    /// Name for messages, e.g. `conv1/weight`.
    pub name: String,
    /// Elements.
    pub len: usize,
    /// Element type.
    pub dtype: DType,
}

/// One op applied to tensors, in the op's binding order.
#[derive(Debug, Clone, PartialEq)]
pub struct OpCall {
    /// The op.
    pub op: Op,
    /// Tensors bound, in [`Op::bindings`] order.
    pub tensors: Vec<TensorId>,
    /// The kernel variant that runs the op on backends with variants (wgpu); it must
    /// implement the op ([`Variant::implements`]). [`Program::push`] starts with
    /// [`Variant::Direct`]; the harness chooses per op.
    pub variant: Variant,
    /// Size-dependent paths the variant takes whatever the op's size: none, except where the
    /// harness verifies at a smaller batch the paths a timed op takes ([`kernels::path`]).
    pub pin: kernels::Pin,
}

/// A straight-line sequence of ops over a fixed set of tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// Storage precision of float tensors.
    pub precision: Precision,
    /// Tensors.
    pub tensors: Vec<TensorDesc>,
    /// Ops in execution order.
    pub ops: Vec<OpCall>,
}

impl Program {
    /// An empty program.
    pub fn new(precision: Precision) -> Self {
        Self {
            precision,
            tensors: Vec::new(),
            ops: Vec::new(),
        }
    }

    /// Adds a tensor and returns its id.
    pub fn tensor(&mut self, name: impl Into<String>, len: usize, dtype: DType) -> TensorId {
        self.tensors.push(TensorDesc {
            name: name.into(),
            len,
            dtype,
        });
        self.tensors.len() - 1
    }

    /// Adds an op call, checking the op ([`Op::check`]) and the arity, element types and lengths
    /// of its tensors against its contract.
    pub fn push(&mut self, op: Op, tensors: Vec<TensorId>) -> Result<()> {
        op.check()?;
        let lens = op.binding_lens();
        let dtypes = op.dtypes();
        if tensors.len() != lens.len() {
            return Err(BackendError::Arity {
                op: op.name(),
                expected: lens.len(),
                given: tensors.len(),
            }
            .into());
        }
        for ((&t, &len), &dtype) in tensors.iter().zip(&lens).zip(&dtypes) {
            let desc = self.tensors.get(t).ok_or(BackendError::NoTensor {
                op: Some(op.name()),
                tensor: t,
            })?;
            if desc.len != len || desc.dtype != dtype {
                return Err(BackendError::Shape {
                    op: op.name(),
                    tensor: desc.name.clone(),
                    len: desc.len,
                    dtype: desc.dtype,
                    expected: len,
                    expected_dtype: dtype,
                }
                .into());
            }
        }
        let accesses = op.bindings();
        for (k, (&t, access)) in tensors.iter().zip(&accesses).enumerate() {
            let aliased = tensors.iter().enumerate().any(|(j, &u)| j != k && u == t);
            if aliased && *access != crate::kernels::Access::Read {
                return Err(BackendError::WrittenTwice {
                    op: op.name(),
                    tensor: self.tensors[t].name.clone(),
                }
                .into());
            }
        }
        self.ops.push(OpCall {
            op,
            tensors,
            variant: Variant::Direct,
            pin: kernels::Pin::default(),
        });
        Ok(())
    }
}

/// Which implementation runs the ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// WGSL compute shaders through wgpu.
    Wgpu,
    /// The reference ops in f32 on the CPU.
    Cpu,
    /// cuDNN, cuBLAS and NVRTC through cudarc.
    Cuda,
}

impl BackendKind {
    /// `"wgpu"`, `"cpu"` or `"cuda"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            BackendKind::Wgpu => "wgpu",
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "wgpu" => Ok(BackendKind::Wgpu),
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            other => Err(BackendError::UnknownBackend {
                name: other.to_string(),
            }
            .into()),
        }
    }
}

/// Durations of one [`Loaded::run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timings {
    /// Nanoseconds of each op in the range, when measured per op.
    pub per_op_ns: Vec<u64>,
    /// Nanoseconds of the whole range: the sum of `per_op_ns` when measured per op, else the
    /// synchronised wall clock from submit to completion.
    pub total_ns: u64,
}

/// Something that runs programs.
pub trait Backend {
    /// Which implementation this is.
    fn kind(&self) -> BackendKind;
    /// The adapter the numbers come from.
    fn adapter(&self) -> &AdapterFingerprint;
    /// How [`Loaded::run`] measures durations.
    fn timing_method(&self) -> TimingMethod;
    /// Whether programs of this precision can run.
    fn supports(&self, precision: Precision) -> bool;
    /// Largest tensor (bytes) one op can bind; the planner splits layers whose weights exceed it.
    fn max_tensor_bytes(&self) -> u64;
    /// Allocates the program's tensors and prepares its ops.
    fn load(&self, program: &Program) -> Result<Box<dyn Loaded + '_>>;
    /// Fails, without allocating anything, when [`Backend::load`] would refuse `program` for
    /// want of memory: a sweep asks before it verifies a benchmark (at a small batch), so that
    /// a batch the machine cannot hold is refused before minutes of verification rather than
    /// after. `what` names the program in the error (e.g. `vgg16 at batch 1024 in f32 on the cpu
    /// backend`). The default knows nothing and passes.
    fn check_holds(&self, _program: &Program, _what: &dyn Fn() -> String) -> Result<()> {
        Ok(())
    }
}

/// A program loaded on a backend.
pub trait Loaded {
    /// Writes float values (rounded to the program's precision) into a float tensor.
    fn write(&mut self, tensor: TensorId, values: &[f32]) -> Result<()>;
    /// Writes labels into a `u32` tensor.
    fn write_u32(&mut self, tensor: TensorId, values: &[u32]) -> Result<()>;
    /// Reads a float tensor back as f32.
    fn read(&mut self, tensor: TensorId) -> Result<Vec<f32>>;
    /// Reads a `u32` tensor back.
    fn read_u32(&mut self, tensor: TensorId) -> Result<Vec<u32>>;
    /// Runs `ops` in order and waits for completion. With `per_op`, each op is timed alone
    /// (GPU timestamps where available).
    fn run(&mut self, ops: Range<usize>, per_op: bool) -> Result<Timings>;
    /// Bytes of device memory held by the tensors.
    fn memory_bytes(&self) -> u64;
    /// What runs op `index` where the backend chooses it itself (cuDNN's convolution
    /// algorithm, cuBLAS), recorded as the layer's variant; `None` where the op runs the
    /// plan's kernel variant.
    fn kernel_name(&self, _index: usize) -> Option<String> {
        None
    }
}

/// [`check_write`] for labels, which also checks each value against the class count of every op
/// that binds `tensor` ([`Op::check_labels`]), so that no kernel ever sees a label out of range.
pub(crate) fn check_write_labels(program: &Program, tensor: TensorId, labels: &[u32]) -> Result<()> {
    check_write(program, tensor, labels.len(), DType::U32)?;
    program
        .ops
        .iter()
        .filter(|call| call.tensors.contains(&tensor))
        .try_for_each(|call| call.op.check_labels(labels))
}

/// Checks a write of `len` elements of `dtype` into `tensor`.
pub(crate) fn check_write(program: &Program, tensor: TensorId, len: usize, dtype: DType) -> Result<()> {
    let desc = program
        .tensors
        .get(tensor)
        .ok_or(BackendError::NoTensor { op: None, tensor })?;
    if desc.len != len || desc.dtype != dtype {
        return Err(BackendError::WriteShape {
            tensor: desc.name.clone(),
            len: desc.len,
            dtype: desc.dtype,
            given: len,
            given_dtype: dtype,
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod host_memory_tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes_and_a_need_above_it_is_refused() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(meminfo_available(meminfo), Some(2048 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
        if let Some(available) = available_host_memory() {
            let error = check_host_memory(
                || "the test".to_string(),
                available.saturating_mul(4).max(1 << 40),
            )
            .expect_err("four times what is available");
            assert_eq!(error.kind(), crate::ErrorKind::Environment);
            assert!(error.to_string().starts_with("the test needs"), "{error}");
            assert!(check_host_memory(|| unreachable!(), 1).is_ok());
        }
    }
}
