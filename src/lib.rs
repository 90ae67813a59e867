//! convbench: portable convolutional-network benchmarks on any GPU, and a regression gate.
//!
//! The data flow, one module per stage, each stage a plain Rust value testable alone:
//!
//! [`model`] (a network as data) → [`harness`] plans it on a [`backend`] (buffers and
//! pipelines from [`kernels`] and the WGSL under `shaders/`, driven through [`gpu`]) → every
//! op is verified against [`kernels::reference`] → warm-up → timed samples of each phase and
//! layer → [`results::RunRecord`] (versioned JSON) → [`baseline`] (the record blessed at the
//! base revision, read from git) → [`compare`] (a verdict per benchmark, from [`stats`]) →
//! [`report`] (table, Markdown, CSV, JSON, SVG) → [`github`] (sticky PR comment, job summary,
//! annotations). [`peers`] times other frameworks (PyTorch) on the same selection into the same
//! records.
//!
//! The library never prints to stdout and never exits the process; the `cargo-convbench`
//! binary owns the terminal and maps [`Error`] to the documented exit codes.

pub mod adapter;
pub mod backend;
pub mod baseline;
mod cache;
pub mod calibration;
#[cfg(feature = "cli")]
pub mod cli;
pub mod compare;
pub mod config;
pub mod error;
pub mod fs;
pub mod gate;
pub mod github;
pub mod gpu;
pub mod harness;
pub mod init;
pub mod kernels;
pub mod model;
pub mod peers;
pub mod report;
pub mod results;
pub mod roofline;
pub mod stats;

pub use error::{Error, ErrorKind, Result};
pub use gpu::DeviceError;

/// 64-bit FNV-1a of `bytes`: a stable, dependency-free hash for names that must never change
/// between builds (adapter folder names, shader digests). Not for anything adversarial.
pub(crate) fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
