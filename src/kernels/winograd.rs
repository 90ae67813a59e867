//! Winograd F(2x2, 3x3) dispatches (`shaders/winograd.wgsl`): 3x3 stride-1 undilated
//! convolutions forward and backward-data, one fused dispatch each.
//!
//! The shader computes one stride-1 3x3 convolution of a source into a destination; this file
//! describes both ops in its terms. Backward data is the forward convolution of `dy` with the
//! filter rotated by 180 degrees and its channel axes swapped, at padding `2 - pad`: the
//! rotation and the swap are the filter strides (negative along the taps), the padding a
//! signed offset.

use super::dispatch::{Dispatch, Grid, Slot};
use super::op::ConvGeom;
use super::registry::WINOGRAD;
use super::uniform::{Uniform, uniform};

/// Destination channels per workgroup (`BO` in the shader).
const BLOCK_CHANNELS: u32 = 16;
/// 2x2 output tiles per workgroup (`BT` in the shader).
const BLOCK_TILES: u32 = 16;
/// Taps of the filter the shader transforms.
const TAPS: u32 = 9;

/// Whether the Winograd kernels implement a convolution of these hyper-parameters: a 3x3
/// kernel at stride 1 without dilation (any padding, any groups).
pub fn applies(g: &ConvGeom) -> bool {
    let c = &g.conv;
    c.kernel == (3, 3) && c.stride == (1, 1) && c.dilation == (1, 1)
}

/// One side of the convolution: channels in all and per group, height, width.
#[derive(Debug, Clone, Copy)]
struct Side {
    channels: u32,
    per_group: u32,
    height: u32,
    width: u32,
}

/// The filter as the shader reads it: `F(o, r, ky, kx) = w[base + g * group + o * out +
/// r * red + ky * ky_step + kx * kx_step]`.
#[derive(Debug, Clone, Copy)]
struct Filter {
    group: u32,
    out: u32,
    red: u32,
    base: u32,
    ky_step: i32,
    kx_step: i32,
}

uniform! {
    /// The shader's `Params`, field for field (see `shaders/winograd.wgsl` for their meaning).
    pub(crate) struct WinogradParams {
        groups: u32,
        src_c: u32,
        src_cg: u32,
        src_h: u32,
        src_w: u32,
        dst_c: u32,
        dst_cg: u32,
        dst_h: u32,
        dst_w: u32,
        tiles_y: u32,
        tiles_x: u32,
        tiles: u32,
        o_blocks: u32,
        t_blocks: u32,
        off_y: i32,
        off_x: i32,
        w_group: u32,
        w_o: u32,
        w_r: u32,
        w_base: u32,
        w_ky: i32,
        w_kx: i32,
        has_bias: u32,
    }
}

/// The shader's `Params` words and the workgroup count.
fn params(
    groups: u32,
    batch: u32,
    src: Side,
    dst: Side,
    offset: (i32, i32),
    filter: Filter,
    has_bias: bool,
) -> (Vec<u32>, u64) {
    let tiles_y = dst.height.div_ceil(2);
    let tiles_x = dst.width.div_ceil(2);
    let tiles = batch * tiles_y * tiles_x;
    let o_blocks = dst.per_group.div_ceil(BLOCK_CHANNELS);
    let t_blocks = tiles.div_ceil(BLOCK_TILES);
    let words = WinogradParams {
        groups,
        src_c: src.channels,
        src_cg: src.per_group,
        src_h: src.height,
        src_w: src.width,
        dst_c: dst.channels,
        dst_cg: dst.per_group,
        dst_h: dst.height,
        dst_w: dst.width,
        tiles_y,
        tiles_x,
        tiles,
        o_blocks,
        t_blocks,
        off_y: offset.0,
        off_x: offset.1,
        w_group: filter.group,
        w_o: filter.out,
        w_r: filter.red,
        w_base: filter.base,
        w_ky: filter.ky_step,
        w_kx: filter.kx_step,
        has_bias: u32::from(has_bias),
    }
    .words();
    let workgroups = u64::from(o_blocks) * u64::from(t_blocks) * u64::from(groups);
    (words, workgroups)
}

fn dispatch(
    entry: &'static str,
    (params, workgroups): (Vec<u32>, u64),
    [input, filter, bias, output]: [Slot; 4],
) -> Dispatch {
    Dispatch {
        shader: &WINOGRAD,
        entry,
        bindings: vec![(1, input), (2, filter), (3, bias), (4, output)],
        params,
        grid: Grid::Workgroups(workgroups),
        constants: Vec::new(),
    }
}

/// `(input side, output side, groups, cin_g * cout_g * 9)` of a convolution.
fn sides(g: &ConvGeom) -> (Side, Side, u32, u32) {
    let c = &g.conv;
    let groups = c.groups as u32;
    let input = Side {
        channels: c.in_channels as u32,
        per_group: (c.in_channels / c.groups) as u32,
        height: g.input.h as u32,
        width: g.input.w as u32,
    };
    let output = Side {
        channels: c.out_channels as u32,
        per_group: (c.out_channels / c.groups) as u32,
        height: g.output.h as u32,
        width: g.output.w as u32,
    };
    let group_filters = input.per_group * output.per_group * TAPS;
    (input, output, groups, group_filters)
}

/// `x, w, [bias] -> y`. Only for convolutions the kernels [`applies`] to.
pub fn conv_forward(g: &ConvGeom) -> Vec<Dispatch> {
    let c = &g.conv;
    let (input, output, groups, group_filters) = sides(g);
    let filter = Filter {
        group: group_filters,
        out: input.per_group * TAPS,
        red: TAPS,
        base: 0,
        ky_step: 3,
        kx_step: 1,
    };
    let offset = (-(c.padding.0 as i32), -(c.padding.1 as i32));
    let words = params(groups, g.input.n as u32, input, output, offset, filter, c.bias);
    let slots = ["x", "w", "bias", "y"].map(Slot::Tensor);
    vec![dispatch("conv2d_forward_winograd", words, slots)]
}

/// `dy, w -> dx`: the forward convolution of `dy` with `w[r, o, 2 - ky, 2 - kx]` at padding
/// `2 - pad` (a negative padding crops). Only for convolutions the kernels [`applies`] to.
pub fn conv_backward_data(g: &ConvGeom) -> Vec<Dispatch> {
    let c = &g.conv;
    let (input, output, groups, group_filters) = sides(g);
    let filter = Filter {
        group: group_filters,
        out: TAPS,
        red: input.per_group * TAPS,
        base: TAPS - 1,
        ky_step: -3,
        kx_step: -1,
    };
    let offset = (c.padding.0 as i32 - 2, c.padding.1 as i32 - 2);
    let words = params(groups, g.input.n as u32, output, input, offset, filter, false);
    let slots = [
        Slot::Tensor("dy"),
        Slot::Tensor("w"),
        Slot::Unused,
        Slot::Tensor("dx"),
    ];
    vec![dispatch("conv2d_backward_data_winograd", words, slots)]
}
