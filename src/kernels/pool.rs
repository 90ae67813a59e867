//! Pooling dispatches (`shaders/pool.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::op::PoolGeom;
use super::registry::POOL;
use crate::model::PoolKind;

fn params(g: &PoolGeom, total: usize) -> Vec<u32> {
    let p = &g.pool;
    [
        total,
        g.input.n * g.input.c,
        g.input.h,
        g.input.w,
        g.output.h,
        g.output.w,
        p.kernel.0,
        p.kernel.1,
        p.stride.0,
        p.stride.1,
        p.padding.0,
        p.padding.1,
        usize::from(p.kind == PoolKind::Max),
        usize::from(p.count_include_pad),
    ]
    .map(|v| v as u32)
    .to_vec()
}

/// `x -> y`.
pub fn forward(g: &PoolGeom) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &POOL,
        entry: "pool_forward",
        bindings: tensors(1, &["x", "y"]),
        params: params(g, g.output.len()),
        grid: Grid::Invocations(g.output.len() as u64),
        constants: Vec::new(),
    }]
}

/// `x, dy -> dx`.
pub fn backward(g: &PoolGeom) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &POOL,
        entry: "pool_backward",
        bindings: tensors(3, &["x", "dy", "dx"]),
        params: params(g, g.input.len()),
        grid: Grid::Invocations(g.input.len() as u64),
        constants: Vec::new(),
    }]
}
