//! Convolution dispatches (`shaders/conv2d.wgsl`): direct kernels, one invocation per output
//! (the correctness baseline; the tiled kernels are in [`super::gemm`]).

use super::dispatch::{Dispatch, Grid, Slot, tensors};
use super::op::ConvGeom;
use super::registry::CONV2D;
use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/conv2d.wgsl`'s `Params`.
    pub(crate) struct ConvParams {
        total: u32,
        n: u32, cin: u32, h: u32, w: u32,
        cout: u32, oh: u32, ow: u32,
        kh: u32, kw: u32,
        sh: u32, sw: u32,
        ph: u32, pw: u32,
        dh: u32, dw: u32,
        groups: u32,
        has_bias: u32,
    }
}

fn params(g: &ConvGeom, total: usize) -> Vec<u32> {
    let c = &g.conv;
    let u = |v: usize| v as u32;
    ConvParams {
        total: u(total),
        n: u(g.input.n),
        cin: u(g.input.c),
        h: u(g.input.h),
        w: u(g.input.w),
        cout: u(g.output.c),
        oh: u(g.output.h),
        ow: u(g.output.w),
        kh: u(c.kernel.0),
        kw: u(c.kernel.1),
        sh: u(c.stride.0),
        sw: u(c.stride.1),
        ph: u(c.padding.0),
        pw: u(c.padding.1),
        dh: u(c.dilation.0),
        dw: u(c.dilation.1),
        groups: u(c.groups),
        has_bias: u32::from(c.bias),
    }
    .words()
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

/// `dy -> dbias` (of backward-filter) when the layer has a bias: one
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
