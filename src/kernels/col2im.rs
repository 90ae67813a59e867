//! col2im (`shaders/col2im.wgsl`): backward data's second step after the column matrix's GEMM
//! (see [`super::gemm::conv_backward_data`]).

use super::dispatch::{Dispatch, Grid, Slot};
use super::op::ConvGeom;
use super::registry::COL2IM;
use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/col2im.wgsl`'s `Params`.
    pub(crate) struct Col2imParams {
        total: u32,
        n: u32,
        n0: u32,
        cin: u32, h: u32, w: u32,
        oh: u32, ow: u32,
        kh: u32, kw: u32,
        sh: u32, sw: u32,
        ph: u32, pw: u32,
        dh: u32, dw: u32,
    }
}

/// `dx` of images `n0..n0 + images` from their column matrix, `cols` f32 elements at the start
/// of the scratch buffer.
pub(super) fn col2im(g: &ConvGeom, n0: usize, images: usize, cols: u64) -> Dispatch {
    let c = &g.conv;
    let u = |v: usize| v as u32;
    let total = images * (g.input.len() / g.input.n);
    let params = Col2imParams {
        total: u(total),
        n: u(images),
        n0: u(n0),
        cin: u(g.input.c),
        h: u(g.input.h),
        w: u(g.input.w),
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
    };
    Dispatch {
        shader: &COL2IM,
        entry: "conv2d_col2im",
        bindings: vec![(1, Slot::Scratch(cols)), (2, Slot::Tensor("dx"))],
        params: params.words(),
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }
}
