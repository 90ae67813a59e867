//! What can go wrong with the cuda backend, as values: a library, driver or device that is
//! missing or too old, a CUDA call that failed, an op the backend does not implement. Every
//! one is the machine's (exit 3), and says what to install or pass instead.

use crate::ErrorKind;

/// An error of the cuda backend.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A library the backend loads at run time is not installed.
    #[error("{failed}: {library} was not found; {remedy}")]
    MissingLibrary {
        /// What could not be done.
        failed: &'static str,
        /// The library, e.g. `libcudnn (cuDNN 9)`.
        library: &'static str,
        /// Where to get it.
        remedy: &'static str,
    },
    /// cudarc panicked (a library or symbol it needs is missing).
    #[error(
        "cuda backend: {what}: the CUDA libraries failed ({message}); check that the driver \
         supports CUDA 13 and that LD_LIBRARY_PATH holds cuDNN 9, cuBLAS and NVRTC of CUDA 13"
    )]
    Panicked {
        /// What was being done.
        what: String,
        /// The panic's message.
        message: String,
    },
    /// A CUDA, cuDNN, cuBLAS or NVRTC call failed.
    #[error("cuda backend: {context}: {message}")]
    Call {
        /// What was being done.
        context: String,
        /// What the library said.
        message: String,
    },
    /// The driver is older than the bindings.
    #[error(
        "the NVIDIA driver supports CUDA {driver}, and the cuda backend needs CUDA {needed} or \
         newer: update the NVIDIA driver"
    )]
    DriverTooOld {
        /// The driver's CUDA version.
        driver: String,
        /// The version the bindings need.
        needed: String,
    },
    /// The devices could not be counted.
    #[error("no CUDA device could be enumerated: {message}")]
    Enumerate {
        /// What the driver said.
        message: String,
    },
    /// The device index is past the machine's devices.
    #[error("there is no CUDA device {index}: this machine has {count}")]
    NoDevice {
        /// The index asked for.
        index: usize,
        /// The devices there are.
        count: i32,
    },
    /// A cuDNN older than 9 was loaded.
    #[error(
        "cuDNN {found} was loaded, and the cuda backend needs cuDNN 9: put the lib folder of the \
         `nvidia-cudnn-cu13` Python package first on LD_LIBRARY_PATH"
    )]
    OldCudnn {
        /// The loaded version, as cuDNN reports it (90000 is 9.0).
        found: usize,
    },
    /// f16 was asked of a device below compute capability 5.3.
    #[error("{adapter} cannot run f16 (compute capability below 5.3); use --precision f32")]
    NoF16 {
        /// The device's label.
        adapter: String,
    },
    /// An allocation failed.
    #[error("out of device memory allocating {what}: {message}; use a smaller --batch")]
    OutOfMemory {
        /// The tensor or workspace.
        what: String,
        /// What CUDA said.
        message: String,
    },
    /// The op has no implementation on this backend for this shape.
    #[error("{op} is not implemented on cuda: {what}; use --backend wgpu")]
    NotImplemented {
        /// The op.
        op: &'static str,
        /// What is missing.
        what: String,
    },
}

impl CudaError {
    /// The exit-code category: always the machine's.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Environment
    }
}
