//! The only module that imports wgpu: adapter enumeration and selection, fingerprints, the
//! device (requested with the adapter's own limits), cached pipelines, buffers and timestamp
//! queries.
//!
//! wgpu reports validation and out-of-memory errors asynchronously; every fallible step here
//! runs inside error scopes, and an uncaptured-error handler records anything else, so a wgpu
//! error reaches the user as an [`crate::Error`] naming what failed, never as a panic. Every
//! wait for the device has a deadline ([`Watchdog`]), so a kernel that never ends is an error
//! naming it, not a hung process.

mod adapter;
mod calibrate;
mod device;
mod error;
mod program;
mod watchdog;

pub use adapter::{AdapterSummary, WGPU_VERSION, list_adapters};
pub use calibrate::{CALIBRATION_METHOD, calibrate};
pub use device::{Gpu, GpuOptions};
pub use error::DeviceError;
pub use program::GpuProgram;
pub use watchdog::{FLOOR, SLOWEST_FLOPS_PER_SECOND, TIMEOUT_ENV, Watchdog};
