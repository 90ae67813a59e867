//! Integration tests of the convbench library (one test binary, modules by area).

mod catalogue;
mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
mod gradcheck;
mod models;
mod ops;
mod shaders;
mod support;
mod tune;
mod variants;
mod wrong_kernels;
