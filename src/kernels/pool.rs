//! Pooling dispatches (`shaders/pool.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::op::PoolGeom;
use super::registry::POOL;
use crate::model::PoolKind;

use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/pool.wgsl`'s `Params`.
    pub(crate) struct PoolParams {
        total: u32,
        planes: u32,
        h: u32, w: u32,
        oh: u32, ow: u32,
        kh: u32, kw: u32,
        sh: u32, sw: u32,
        ph: u32, pw: u32,
        is_max: u32,
        count_include_pad: u32,
    }
}

fn params(g: &PoolGeom, total: usize) -> Vec<u32> {
    let p = &g.pool;
    let u = |v: usize| v as u32;
    PoolParams {
        total: u(total),
        planes: u(g.input.n * g.input.c),
        h: u(g.input.h),
        w: u(g.input.w),
        oh: u(g.output.h),
        ow: u(g.output.w),
        kh: u(p.kernel.0),
        kw: u(p.kernel.1),
        sh: u(p.stride.0),
        sw: u(p.stride.1),
        ph: u(p.padding.0),
        pw: u(p.padding.1),
        is_max: u32::from(p.kind == PoolKind::Max),
        count_include_pad: u32::from(p.count_include_pad),
    }
    .words()
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
