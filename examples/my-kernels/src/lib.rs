//! A crate whose WGSL kernels (`kernels/`) convbench verifies and benchmarks: see `Cargo.toml`.
