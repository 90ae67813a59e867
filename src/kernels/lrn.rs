//! Local response normalisation dispatches (`shaders/lrn.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::LRN;
use crate::model::{Lrn, Shape};

use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/lrn.wgsl`'s `Params`.
    pub(crate) struct LrnParams {
        total: u32,
        c: u32,
        hw: u32,
        size: u32,
        alpha_over_size: f32,
        beta: f32,
        k: f32,
    }
}

fn params(lrn: &Lrn, s: &Shape) -> Vec<u32> {
    LrnParams {
        total: s.len() as u32,
        c: s.c as u32,
        hw: (s.h * s.w) as u32,
        size: lrn.size as u32,
        alpha_over_size: (lrn.alpha / lrn.size as f64) as f32,
        beta: lrn.beta as f32,
        k: lrn.k as f32,
    }
    .words()
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
