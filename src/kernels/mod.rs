//! The op library: the contract of every op ([`Op`]), the registry of WGSL shaders, one Rust
//! file per shader family (bindings, dispatch sizes, variants), and [`reference`], the CPU
//! implementation of every op that is the single source of truth.

mod op;

pub use op::{Access, ConvGeom, DType, LinearGeom, Op, PoolGeom};
