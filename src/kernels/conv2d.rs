//! Convolution dispatches (`shaders/conv2d.wgsl`): direct kernels, one invocation per output
//! (the correctness baseline; the tiled kernels are in [`super::gemm`]).

use super::dispatch::{Dispatch, Grid, Slot, tensors};
use super::op::ConvGeom;
use super::registry::CONV2D;

fn params(g: &ConvGeom, total: usize) -> Vec<u32> {
    let c = &g.conv;
    [
        total,
        g.input.n,
        g.input.c,
        g.input.h,
        g.input.w,
        g.output.c,
        g.output.h,
        g.output.w,
        c.kernel.0,
        c.kernel.1,
        c.stride.0,
        c.stride.1,
        c.padding.0,
        c.padding.1,
        c.dilation.0,
        c.dilation.1,
        c.groups,
        usize::from(c.bias),
    ]
    .map(|v| v as u32)
    .to_vec()
}

/// `x, w, [bias] -> y`.
pub fn forward(g: &ConvGeom) -> Vec<Dispatch> {
    let bindings = tensors(1, &["x", "w", "bias", "y"]);
    vec![Dispatch {
        shader: &CONV2D,
        entry: "conv2d_forward",
        bindings,
        params: params(g, g.output.len()),
        grid: Grid::Invocations(g.output.len() as u64),
        constants: Vec::new(),
    }]
}

/// `dy, w -> dx`.
pub fn backward_data(g: &ConvGeom) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &CONV2D,
        entry: "conv2d_backward_data",
        bindings: tensors(5, &["dy", "w", "dx"]),
        params: params(g, g.input.len()),
        grid: Grid::Invocations(g.input.len() as u64),
        constants: Vec::new(),
    }]
}

/// `x, dy -> dw, [dbias]`.
pub fn backward_filter(g: &ConvGeom) -> Vec<Dispatch> {
    let weights = g.conv.weight_len();
    let mut dispatches = vec![Dispatch {
        shader: &CONV2D,
        entry: "conv2d_backward_filter",
        bindings: tensors(8, &["x", "dy", "dw"]),
        params: params(g, weights),
        grid: Grid::Invocations(weights as u64),
        constants: Vec::new(),
    }];
    dispatches.extend(backward_bias(g));
    dispatches
}

/// `dy -> dbias` (op tensors 1 and 3 of backward-filter) when the layer has a bias: one
/// workgroup per output channel.
pub fn backward_bias(g: &ConvGeom) -> Option<Dispatch> {
    g.conv.bias.then(|| Dispatch {
        shader: &CONV2D,
        entry: "conv2d_backward_bias",
        bindings: vec![(9, Slot::Tensor("dy")), (11, Slot::Tensor("dbias"))],
        params: params(g, g.conv.out_channels),
        grid: Grid::Workgroups(g.conv.out_channels as u64),
        constants: Vec::new(),
    })
}
