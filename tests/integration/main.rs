//! Integration tests of the convbench library (one test binary, modules by area).

mod gradcheck;
mod models;
mod ops;
mod shaders;
mod support;
