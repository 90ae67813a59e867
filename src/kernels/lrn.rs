//! Local response normalisation dispatches (`shaders/lrn.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::LRN;
use crate::model::{Lrn, Shape};

fn params(lrn: &Lrn, s: &Shape) -> Vec<u32> {
    vec![
        s.len() as u32,
        s.c as u32,
        (s.h * s.w) as u32,
        lrn.size as u32,
        ((lrn.alpha / lrn.size as f64) as f32).to_bits(),
        (lrn.beta as f32).to_bits(),
        (lrn.k as f32).to_bits(),
    ]
}

/// `x -> y, scale`.
pub fn forward(lrn: &Lrn, s: &Shape) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &LRN,
        entry: "lrn_forward",
        bindings: tensors(1, &["x", "y", "scale"]),
        params: params(lrn, s),
        grid: Grid::Invocations(s.len() as u64),
        constants: Vec::new(),
    }]
}

/// `x, y, scale, dy -> dx`.
pub fn backward(lrn: &Lrn, s: &Shape) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &LRN,
        entry: "lrn_backward",
        bindings: tensors(4, &["x", "y", "scale", "dy", "dx"]),
        params: params(lrn, s),
        grid: Grid::Invocations(s.len() as u64),
        constants: Vec::new(),
    }]
}
