//! Tiled GEMM dispatches (`shaders/gemm.wgsl`): convolutions as implicit GEMM and fully
//! connected layers, for a [`GemmTile`].
//!
//! The shader reads every operand through affine strides ([`GemmParams`]); this file derives
//! them from each op's geometry. Bindings are named ([`Slot::Tensor`]): `a` (binding 1) is the
//! weights `w`, or the output gradient `dy` for backward-filter and backward-weight; `b`
//! (binding 2) is `x` or `dy`; then `bias` and the output.

use super::dispatch::{Dispatch, Grid, Slot};
use super::op::{ConvGeom, LinearGeom};
use super::registry::GEMM;
use super::uniform::{Uniform, uniform};
use super::variant::GemmTile;

uniform! {
    /// The shader's `Params`, field for field (see `shaders/gemm.wgsl` for their meaning).
    pub(crate) struct GemmParams {
        m: u32,
        n: u32,
        k: u32,
        tiles_m: u32,
        tiles_n: u32,
        groups: u32,
        k_mid: u32,
        k_lo: u32,
        a_offset: u32,
        a_group: u32,
        a_row: u32,
        a_hi: u32,
        a_mid: u32,
        c_mid_n: u32,
        c_lo_n: u32,
        b_offset: u32,
        b_group: u32,
        b_col: u32,
        b_hi: u32,
        y_mul: i32,
        y_add: i32,
        y_step: i32,
        x_mul: i32,
        x_add: i32,
        x_step: i32,
        b_height: u32,
        b_width: u32,
        div_y: u32,
        div_x: u32,
        c_offset: u32,
        c_row: u32,
        c_span: u32,
        c_col: u32,
        has_bias: u32,
    }
}

impl GemmParams {
    /// Dense operands with no spatial gather: every radix 1, bounds 1x1, no stride division.
    fn dense(m: usize, n: usize, k: usize) -> Self {
        Self {
            m: m as u32,
            n: n as u32,
            k: k as u32,
            groups: 1,
            k_mid: 1,
            k_lo: 1,
            c_mid_n: 1,
            c_lo_n: 1,
            b_height: 1,
            b_width: 1,
            div_y: 1,
            div_x: 1,
            c_span: 1,
            ..Self::default()
        }
    }

    /// The uniform's words for `tile` (which sets the tile counts).
    fn words_for(&self, tile: &GemmTile) -> Vec<u32> {
        Self {
            tiles_m: self.m.div_ceil(tile.bm),
            tiles_n: self.n.div_ceil(tile.bn),
            ..*self
        }
        .words()
    }

    fn workgroups(&self, tile: &GemmTile) -> u64 {
        u64::from(self.m.div_ceil(tile.bm)) * u64::from(self.n.div_ceil(tile.bn)) * u64::from(self.groups)
    }
}

/// `y = w x^T (+ bias)`: the forward pass of a convolution or fully connected layer.
const AFFINE: [Slot; 4] = [
    Slot::Tensor("w"),
    Slot::Tensor("x"),
    Slot::Tensor("bias"),
    Slot::Tensor("y"),
];
/// `dx = w^T dy`.
const BACKWARD_DATA: [Slot; 4] = [
    Slot::Tensor("w"),
    Slot::Tensor("dy"),
    Slot::Unused,
    Slot::Tensor("dx"),
];
/// `dw = dy x^T`.
const BACKWARD_PARAMS: [Slot; 4] = [
    Slot::Tensor("dy"),
    Slot::Tensor("x"),
    Slot::Unused,
    Slot::Tensor("dw"),
];

/// The GEMM dispatch `C = A x B (+ bias)`: the op's tensors bound as `[a, b, bias, c]`
/// (`bias` [`Slot::Unused`] for the entry points that add none).
fn dispatch(
    entry: &'static str,
    params: GemmParams,
    tile: &GemmTile,
    [a, b, bias, c]: [Slot; 4],
) -> Dispatch {
    Dispatch {
        shader: &GEMM,
        entry,
        bindings: vec![(1, a), (2, b), (3, bias), (4, c)],
        params: params.words_for(tile),
        grid: Grid::Workgroups(params.workgroups(tile)),
        constants: tile.constants(),
    }
}

/// Sizes of a convolution as u32: `(groups, cin_g, cout_g, h*w, oh*ow, kh*kw)`.
fn conv_sizes(g: &ConvGeom) -> [u32; 6] {
    let c = &g.conv;
    [
        c.groups,
        c.in_channels / c.groups,
        c.out_channels / c.groups,
        g.input.h * g.input.w,
        g.output.h * g.output.w,
        c.kernel.0 * c.kernel.1,
    ]
    .map(|v| v as u32)
}

/// `x, w, [bias] -> y`: `C[oc, (n,oh,ow)] = W[oc, (ic,kh,kw)] x im2col(X)`.
pub fn conv_forward(g: &ConvGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let c = &g.conv;
    let [groups, cin_g, cout_g, hw, ohw, taps] = conv_sizes(g);
    let k = cin_g * taps;
    let params = GemmParams {
        groups,
        k_mid: c.kernel.0 as u32,
        k_lo: c.kernel.1 as u32,
        a_group: cout_g * k,
        a_row: k,
        a_hi: taps,
        a_mid: c.kernel.1 as u32,
        c_mid_n: g.output.h as u32,
        c_lo_n: g.output.w as u32,
        b_group: cin_g * hw,
        b_col: c.in_channels as u32 * hw,
        b_hi: hw,
        y_mul: c.stride.0 as i32,
        y_add: -(c.padding.0 as i32),
        y_step: c.dilation.0 as i32,
        x_mul: c.stride.1 as i32,
        x_add: -(c.padding.1 as i32),
        x_step: c.dilation.1 as i32,
        b_height: g.input.h as u32,
        b_width: g.input.w as u32,
        c_row: ohw,
        c_span: ohw,
        c_col: c.out_channels as u32 * ohw,
        has_bias: u32::from(c.bias),
        ..GemmParams::dense(cout_g as usize, g.output.n * ohw as usize, k as usize)
    };
    vec![dispatch("conv2d_forward_gemm", params, tile, AFFINE)]
}

/// `dy, w -> dx`: `C[ic, (n,ih,iw)] = W^T[ic, (oc,kh,kw)] x col(dY)`, where `col(dY)` holds
/// `dY[n, oc, oh, ow]` for `oh = (ih + pad - kh * dil) / stride` when that division is exact (the
/// strided entry point; at stride 1 every tap reads, and the division is skipped).
pub fn conv_backward_data(g: &ConvGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let c = &g.conv;
    let [groups, cin_g, cout_g, hw, ohw, taps] = conv_sizes(g);
    let params = GemmParams {
        groups,
        k_mid: c.kernel.0 as u32,
        k_lo: c.kernel.1 as u32,
        a_group: cout_g * cin_g * taps,
        a_row: taps,
        a_hi: cin_g * taps,
        a_mid: c.kernel.1 as u32,
        c_mid_n: g.input.h as u32,
        c_lo_n: g.input.w as u32,
        b_group: cout_g * ohw,
        b_col: c.out_channels as u32 * ohw,
        b_hi: ohw,
        y_mul: 1,
        y_add: c.padding.0 as i32,
        y_step: -(c.dilation.0 as i32),
        x_mul: 1,
        x_add: c.padding.1 as i32,
        x_step: -(c.dilation.1 as i32),
        b_height: g.output.h as u32,
        b_width: g.output.w as u32,
        div_y: c.stride.0 as u32,
        div_x: c.stride.1 as u32,
        c_row: hw,
        c_span: hw,
        c_col: c.in_channels as u32 * hw,
        ..GemmParams::dense(cin_g as usize, g.input.n * hw as usize, (cout_g * taps) as usize)
    };
    let entry = if c.stride == (1, 1) {
        "conv2d_backward_data_gemm"
    } else {
        "conv2d_backward_data_strided_gemm"
    };
    vec![dispatch(entry, params, tile, BACKWARD_DATA)]
}

/// `x, dy -> dw, [dbias]`: `C[oc, (ic,kh,kw)] = dY[oc, (n,oh,ow)] x im2col(X)^T`; the bias
/// gradient is the direct reduction of `conv2d.wgsl`.
pub fn conv_backward_filter(g: &ConvGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let c = &g.conv;
    let [groups, cin_g, cout_g, hw, ohw, taps] = conv_sizes(g);
    let n = cin_g * taps;
    let params = GemmParams {
        groups,
        k_mid: g.output.h as u32,
        k_lo: g.output.w as u32,
        a_group: cout_g * ohw,
        a_row: ohw,
        a_hi: c.out_channels as u32 * ohw,
        a_mid: g.output.w as u32,
        c_mid_n: c.kernel.0 as u32,
        c_lo_n: c.kernel.1 as u32,
        b_group: cin_g * hw,
        b_col: hw,
        b_hi: c.in_channels as u32 * hw,
        y_mul: c.dilation.0 as i32,
        y_add: -(c.padding.0 as i32),
        y_step: c.stride.0 as i32,
        x_mul: c.dilation.1 as i32,
        x_add: -(c.padding.1 as i32),
        x_step: c.stride.1 as i32,
        b_height: g.input.h as u32,
        b_width: g.input.w as u32,
        c_row: n,
        c_span: n,
        ..GemmParams::dense(cout_g as usize, n as usize, g.output.n * ohw as usize)
    };
    let mut dispatches = vec![dispatch(
        "conv2d_backward_filter_gemm",
        params,
        tile,
        BACKWARD_PARAMS,
    )];
    if c.bias {
        dispatches.extend(super::conv2d::backward_bias(g));
    }
    dispatches
}

/// `x, w, [bias] -> y`: `C[o, n] = W[o, i] x X^T[i, n]`, written into the op's column slice.
pub fn linear_forward(g: &LinearGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let params = GemmParams {
        a_row: g.in_features as u32,
        a_hi: 1,
        b_col: g.in_features as u32,
        b_hi: 1,
        c_offset: g.y_offset as u32,
        c_row: 1,
        c_col: g.y_stride as u32,
        has_bias: u32::from(g.bias),
        ..GemmParams::dense(g.out_features, g.batch, g.in_features)
    };
    vec![dispatch("linear_forward_gemm", params, tile, AFFINE)]
}

/// `dy, w -> dx`: `C[i, n] = W^T[i, o] x dY^T[o, n]`.
pub fn linear_backward_data(g: &LinearGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let params = GemmParams {
        a_row: 1,
        a_hi: g.in_features as u32,
        b_offset: g.y_offset as u32,
        b_col: g.y_stride as u32,
        b_hi: 1,
        c_row: 1,
        c_col: g.in_features as u32,
        ..GemmParams::dense(g.in_features, g.batch, g.out_features)
    };
    vec![dispatch("linear_backward_data_gemm", params, tile, BACKWARD_DATA)]
}

/// `x, dy -> dw, [dbias]`: `C[o, i] = dY^T[o, n] x X[n, i]`; the bias gradient is the direct
/// kernel of `linear.wgsl`.
pub fn linear_backward_params(g: &LinearGeom, tile: &GemmTile) -> Vec<Dispatch> {
    let params = GemmParams {
        a_offset: g.y_offset as u32,
        a_row: 1,
        a_hi: g.y_stride as u32,
        b_col: 1,
        b_hi: g.in_features as u32,
        c_row: g.in_features as u32,
        c_span: g.in_features as u32,
        ..GemmParams::dense(g.out_features, g.in_features, g.batch)
    };
    let mut dispatches = vec![dispatch(
        "linear_backward_weight_gemm",
        params,
        tile,
        BACKWARD_PARAMS,
    )];
    if g.bias {
        dispatches.extend(super::linear::backward_bias(g));
    }
    dispatches
}
