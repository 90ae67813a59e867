//! Fully connected dispatches (`shaders/linear.wgsl`): direct kernels, one invocation per output
//! (the correctness baseline; the tiled kernels are in [`super::gemm`]).

use super::dispatch::{Dispatch, Grid, Slot, tensors};
use super::op::LinearGeom;
use super::registry::LINEAR;

use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/linear.wgsl`'s `Params`.
    pub(crate) struct LinearParams {
        total: u32,
        batch: u32,
        in_features: u32,
        out_features: u32,
        has_bias: u32,
        y_stride: u32,
        y_offset: u32,
    }
}

fn params(g: &LinearGeom, total: usize) -> Vec<u32> {
    let u = |v: usize| v as u32;
    LinearParams {
        total: u(total),
        batch: u(g.batch),
        in_features: u(g.in_features),
        out_features: u(g.out_features),
        has_bias: u32::from(g.bias),
        y_stride: u(g.y_stride),
        y_offset: u(g.y_offset),
    }
    .words()
}

/// `x, w, [bias] -> y`.
pub fn forward(g: &LinearGeom) -> Vec<Dispatch> {
    let bindings = tensors(1, &["x", "w", "bias", "y"]);
    let total = g.batch * g.out_features;
    vec![Dispatch {
        shader: &LINEAR,
        entry: "linear_forward",
        bindings,
        params: params(g, total),
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }]
}

/// `dy, w -> dx`.
pub fn backward_data(g: &LinearGeom) -> Vec<Dispatch> {
    let total = g.batch * g.in_features;
    vec![Dispatch {
        shader: &LINEAR,
        entry: "linear_backward_data",
        bindings: tensors(5, &["dy", "w", "dx"]),
        params: params(g, total),
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }]
}

/// `x, dy -> dw, [dbias]`.
pub fn backward_params(g: &LinearGeom) -> Vec<Dispatch> {
    let total = g.out_features * g.in_features;
    let mut dispatches = vec![Dispatch {
        shader: &LINEAR,
        entry: "linear_backward_weight",
        bindings: tensors(8, &["x", "dy", "dw"]),
        params: params(g, total),
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }];
    dispatches.extend(backward_bias(g));
    dispatches
}

/// `dy -> dbias` (of backward-params) when the layer has a bias.
pub fn backward_bias(g: &LinearGeom) -> Option<Dispatch> {
    g.bias.then(|| Dispatch {
        shader: &LINEAR,
        entry: "linear_backward_bias",
        bindings: vec![(9, Slot::Tensor("dy")), (11, Slot::Tensor("dbias"))],
        params: params(g, g.out_features),
        grid: Grid::Invocations(g.out_features as u64),
        constants: Vec::new(),
    })
}
