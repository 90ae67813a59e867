//! What can go wrong building a program or running it on a backend, as values. The device
//! errors of wgpu are [`crate::DeviceError`]; CUDA's are `CudaError` (feature `cuda`).

use crate::ErrorKind;
use crate::kernels::DType;

/// A program that does not fit its ops' contracts, or a backend that cannot hold it. Program
/// errors are convbench's or a user network's input (exit 2): the message names the op and
/// the tensor.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// `--backend` names no backend.
    #[error("unknown backend `{name}`; use wgpu, cpu or cuda")]
    UnknownBackend {
        /// The name given.
        name: String,
    },
    /// An op call binds another number of tensors than its contract has.
    #[error("{op} binds {expected} tensors, {given} given")]
    Arity {
        /// The op.
        op: &'static str,
        /// Its contract's bindings.
        expected: usize,
        /// The tensors given.
        given: usize,
    },
    /// A tensor id past the program's tensors.
    #[error("{}tensor {tensor} does not exist", op.map(|op| format!("{op}: ")).unwrap_or_default())]
    NoTensor {
        /// The op that named it, if one did.
        op: Option<&'static str>,
        /// The id.
        tensor: usize,
    },
    /// An op's tensor of another length or element type than its contract wants.
    #[error(
        "{op}: tensor {tensor} has {len} {dtype:?} elements, the op expects {expected} {expected_dtype:?}"
    )]
    Shape {
        /// The op.
        op: &'static str,
        /// The tensor's name.
        tensor: String,
        /// Its length.
        len: usize,
        /// Its element type.
        dtype: DType,
        /// The length the op expects.
        expected: usize,
        /// The element type the op expects.
        expected_dtype: DType,
    },
    /// A tensor an op writes is also bound to another of its bindings.
    #[error("{op}: tensor {tensor} is written and bound twice")]
    WrittenTwice {
        /// The op.
        op: &'static str,
        /// The tensor's name.
        tensor: String,
    },
    /// A write into a tensor of another length or element type.
    #[error("tensor {tensor} holds {len} {dtype:?} elements; {given} {given_dtype:?} given")]
    WriteShape {
        /// The tensor's name.
        tensor: String,
        /// Its length.
        len: usize,
        /// Its element type.
        dtype: DType,
        /// The length written.
        given: usize,
        /// The element type written.
        given_dtype: DType,
    },
    /// A kernel's entry point binds a tensor its op's contract does not have.
    #[error("{entry}: {op} binds no tensor {tensor}")]
    UnboundTensor {
        /// The entry point.
        entry: &'static str,
        /// The op.
        op: &'static str,
        /// The binding's name.
        tensor: &'static str,
    },
    /// A range of ops past the program's end.
    #[error("ops {start}..{end} outside the program's {ops} ops")]
    OpRange {
        /// The range's start.
        start: usize,
        /// Its end.
        end: usize,
        /// The program's ops.
        ops: usize,
    },
    /// Work that needs more host memory than the machine has available (Linux's
    /// `MemAvailable`): refused before allocating, since an overcommitting kernel would let the
    /// allocation succeed and then kill the process (or another) when the pages are touched.
    #[error(
        "{what} needs {needed_mib} MiB of host memory and {available_mib} MiB are available; use a \
         smaller --batch, or fewer channels or features in the largest layer"
    )]
    HostMemoryShort {
        /// What needs it, e.g. `the program of lenet`.
        what: String,
        /// MiB it needs.
        needed_mib: u64,
        /// MiB available.
        available_mib: u64,
    },
    /// The cpu backend could not allocate a tensor.
    #[error("out of host memory allocating tensor {tensor} ({len} elements); use a smaller --batch")]
    HostMemory {
        /// The tensor's name.
        tensor: String,
        /// Its length.
        len: usize,
    },
}

impl BackendError {
    /// The exit-code category: a program that breaks its contracts is input; memory the host
    /// lacks is the environment.
    pub fn kind(&self) -> ErrorKind {
        match self {
            BackendError::HostMemory { .. } | BackendError::HostMemoryShort { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}
