//! Tiled GEMM dispatches (`shaders/gemm.wgsl`): convolutions as implicit GEMM and fully
//! connected layers, for a [`GemmTile`].
//!
//! The shader reads every operand through affine strides ([`GemmParams`]); this file derives
//! them from each op's geometry. Bindings are named ([`Slot::Tensor`]): `a` (binding 1) is the
//! weights `w`, or the output gradient `dy` for backward-filter and backward-weight; `b`
//! (binding 2) is `x` or `dy`; then `bias` and the output.

use super::Lowering;
use super::dispatch::{Dispatch, Grid, Slot};
use super::op::{ConvGeom, LinearGeom};
use super::registry::GEMM;
use super::uniform::{Uniform, uniform};

/// Tile shape of the tiled GEMM kernels: a workgroup computes `bm x bn` outputs from slices of
/// `bk` reduction steps staged in workgroup memory; each invocation computes `tm x tn` of them
/// in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GemmTile {
    /// Rows of C per workgroup.
    pub bm: u32,
    /// Columns of C per workgroup.
    pub bn: u32,
    /// Reduction steps per workgroup-memory slice.
    pub bk: u32,
    /// Rows of C per invocation.
    pub tm: u32,
    /// Columns of C per invocation.
    pub tn: u32,
}

/// Largest workgroup memory a tile may use (bytes): WebGPU's default limit, so that every
/// variant runs on every adapter.
pub const MAX_WORKGROUP_BYTES: u32 = 16_384;

/// Largest workgroup (invocations): WebGPU's default limit.
pub const MAX_WORKGROUP_INVOCATIONS: u32 = 256;

impl GemmTile {
    /// A tile of `bm x bn` outputs per workgroup, `bk` deep, `tm x tn` per invocation.
    pub const fn new(bm: u32, bn: u32, bk: u32, tm: u32, tn: u32) -> Self {
        Self { bm, bn, bk, tm, tn }
    }

    /// Invocations per workgroup.
    pub const fn invocations(&self) -> u32 {
        (self.bm / self.tm) * (self.bn / self.tn)
    }

    /// Workgroup memory of the staged slices (bytes; f32 at every precision).
    pub const fn workgroup_bytes(&self) -> u32 {
        4 * self.bk * (self.bm + self.bn)
    }

    /// Whether the sizes meet the shader's constraints: register blocks of one, two or four
    /// whole `vec4`s each way (4, 8 or 16 rows and columns: `gemm.wgsl` writes the block's code
    /// out for these),
    /// whole blocks per tile, every invocation staging whole runs of four rows and columns,
    /// and WebGPU's default workgroup limits.
    pub const fn is_valid(&self) -> bool {
        let (bm, bn, bk, tm, tn) = (self.bm, self.bn, self.bk, self.tm, self.tn);
        if tm == 0 || tn == 0 || bk == 0 {
            return false;
        }
        if !matches!(tm, 4 | 8 | 16)
            || !matches!(tn, 4 | 8 | 16)
            || !bm.is_multiple_of(tm)
            || !bn.is_multiple_of(tn)
        {
            return false;
        }
        let invocations = self.invocations();
        if invocations == 0 || invocations > MAX_WORKGROUP_INVOCATIONS || !invocations.is_multiple_of(bk) {
            return false;
        }
        let loaders = invocations / bk;
        bm.is_multiple_of(4 * loaders)
            && bn.is_multiple_of(4 * loaders)
            && self.workgroup_bytes() <= MAX_WORKGROUP_BYTES
    }

    /// The shader constants this tile specialises (see [`super::registry::specialize`]).
    pub fn constants(&self) -> Vec<(&'static str, u32)> {
        vec![
            ("BM", self.bm),
            ("BN", self.bn),
            ("BK", self.bk),
            ("TM", self.tm),
            ("TN", self.tn),
        ]
    }
}

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
        split_k: u32,
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
            split_k: (k as u32).max(1),
            ..Self::default()
        }
    }

    /// Elements of a dense C: `groups * m * n`.
    fn c_len(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.m) * u64::from(self.n)
    }

    /// Runs of the split-K reduction: `ceil(k / split_k)`, 1 when not split.
    fn splits(&self) -> u32 {
        self.k.div_ceil(self.split_k.max(1)).max(1)
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
        u64::from(self.m.div_ceil(tile.bm))
            * u64::from(self.n.div_ceil(tile.bn))
            * u64::from(self.groups)
            * u64::from(self.splits())
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
/// (`bias` [`Slot::Unused`] for the entry points that add none). The column-matrix entry point
/// binds differently (see [`conv_backward_data`]).
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

/// The 8x8-block tiles [`super::Variant::heuristic`] chooses among for convolutions, smallest first
/// (ties go to the smaller tile).
pub const BLOCK_TILES: [GemmTile; 2] = [GemmTile::new(64, 64, 8, 8, 8), GemmTile::new(128, 128, 8, 8, 8)];

/// The tile of [`BLOCK_TILES`] that [`block_tile_cost`] rates cheapest for an `m x n` GEMM (the
/// first of equals).
pub fn cheapest_block_tile(m: usize, n: usize) -> GemmTile {
    let [mut best, rest @ ..] = BLOCK_TILES;
    let mut best_cost = block_tile_cost(&best, m, n);
    for tile in rest {
        let cost = block_tile_cost(&tile, m, n);
        if cost < best_cost {
            (best, best_cost) = (tile, cost);
        }
    }
    best
}

/// Workgroups assumed to run at once when rating a tile: a layer with fewer tiles than this
/// leaves compute idle, and the busiest worker runs `ceil(tiles / WORKERS)` of them. Eight is
/// more than a CPU adapter's threads on small machines and less than any GPU's cores; the
/// layers whose choice it changes have a few dozen tiles at most.
const WORKERS: usize = 8;

/// Relative time of an `m x n` GEMM in 8x8-block `tile`s, per unit of reduction: the busiest
/// worker's tiles times each tile's outputs times the cost of one output. That cost is
/// `0.6 + 0.2 * (64 / bm + 64 / bn)`, a fixed part plus the staging of `bm + bn` values per
/// `bm * bn` FMAs, fitted to lavapipe's times for AlexNet's conv4 at batch 8 (M = 256, no
/// partial row tiles) with 16-deep slices, where `128x128` ran in 0.8 of `64x64`'s time; it
/// ranks the 8-deep tiles as measured on every phase of conv2-conv5.
pub fn block_tile_cost(tile: &GemmTile, m: usize, n: usize) -> f64 {
    let (bm, bn) = (tile.bm as usize, tile.bn as usize);
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    let per_output = 0.6 + 0.2 * (64.0 / bm as f64 + 64.0 / bn as f64);
    tiles.div_ceil(WORKERS) as f64 * (bm * bn) as f64 * per_output
}

/// Bytes of column matrix one pair of backward-data dispatches aims at (a chunk of whole
/// images): large enough to keep any GPU busy, small enough to stay in a CPU's last-level
/// cache on the way from the GEMM to col2im.
pub const COLS_CHUNK_BYTES: u64 = 16 << 20;
/// Largest column matrix of one image (bytes): WebGPU's default storage-binding limit. Above it
/// backward data stays implicit.
pub const COLS_MAX_BYTES: u64 = 128 << 20;

/// Input channels per group below which backward data always goes through the column matrix:
/// the implicit GEMM is `cin / groups` rows tall, and 3 input channels (the first layers) fill
/// 3 rows of a 64-row tile.
pub const IMPLICIT_MIN_CHANNELS: usize = 64;

/// Above it, backward data at stride 1 of a layer with at least [`IMPLICIT_MIN_CHANNELS`] input
/// channels per group runs as one implicit GEMM; below it, through the column matrix. It bounds
/// the ratio of the two lowerings' GEMM costs ([`lowering_cost_ratio`]), which leaves out what
/// only the column matrix pays (its write, its read by col2im); the layers that placed it are
/// in docs/lavapipe-time.md ("The column matrix for backward data").
pub const COLS_MAX_COST_RATIO: f64 = 0.8;

/// The column-matrix GEMM's modelled cost over the implicit GEMM's, for backward data at stride
/// 1 ([`block_tile_cost`] of the cheapest 8x8-block tile, times the reduction): the implicit
/// GEMM is `cin x (n h w)` reducing over `cout * taps`, and multiplies every tap that falls in
/// `dy`'s padding (all of a 7x7 kernel's over the border of a 16x16 input); the column matrix's
/// is `cin * taps x (n oh ow)` reducing over `cout`, and multiplies none.
pub fn lowering_cost_ratio(g: &ConvGeom) -> f64 {
    let c = &g.conv;
    let groups = c.groups.max(1);
    let (cin, cout) = (c.in_channels / groups, c.out_channels / groups);
    let taps = c.kernel.0 * c.kernel.1;
    let cost = |m: usize, n: usize, k: usize| {
        BLOCK_TILES
            .iter()
            .map(|tile| block_tile_cost(tile, m, n))
            .fold(f64::INFINITY, f64::min)
            * k as f64
    };
    let implicit = cost(cin, g.input.n * g.input.h * g.input.w, cout * taps);
    let cols = cost(cin * taps, g.output.n * g.output.h * g.output.w, cout);
    if implicit > 0.0 { cols / implicit } else { 1.0 }
}

/// Images per chunk of the explicit (column matrix) backward data of `g`, or `None` when it
/// runs as one implicit GEMM: 1x1 kernels at stride 1 without padding (whose column matrix
/// *is* dx, so the implicit GEMM is already dense), stride 1 with at least
/// [`IMPLICIT_MIN_CHANNELS`] input channels per group where the column matrix's GEMM would not
/// cost under [`COLS_MAX_COST_RATIO`] of the implicit one, and images whose column matrix
/// exceeds [`COLS_MAX_BYTES`].
pub(crate) fn cols_chunk(g: &ConvGeom) -> Option<usize> {
    let c = &g.conv;
    if c.kernel == (1, 1) && c.stride == (1, 1) && c.padding == (0, 0) {
        return None;
    }
    if c.stride == (1, 1)
        && c.in_channels / c.groups.max(1) >= IMPLICIT_MIN_CHANNELS
        && lowering_cost_ratio(g) >= COLS_MAX_COST_RATIO
    {
        return None;
    }
    cols_images(g)
}

/// Images per chunk of `g`'s column matrix ([`COLS_CHUNK_BYTES`] of it, at least one image),
/// or `None` when one image's exceeds [`COLS_MAX_BYTES`].
fn cols_images(g: &ConvGeom) -> Option<usize> {
    let c = &g.conv;
    let per_image = 4 * (c.in_channels * c.kernel.0 * c.kernel.1 * g.output.h * g.output.w) as u64;
    if per_image == 0 || per_image > COLS_MAX_BYTES {
        return None;
    }
    Some(((COLS_CHUNK_BYTES / per_image) as usize).clamp(1, g.input.n.max(1)))
}

/// `dy, w -> dx`. With a column matrix ([`cols_chunk`]), per chunk of images: the dense GEMM
/// `dcol[(ic,kh,kw), (n,oh,ow)] = W^T[(ic,kh,kw), oc] x dY[oc, (n,oh,ow)]` into the scratch
/// buffer, then col2im (`conv2d.wgsl`) sums each input pixel's taps. Otherwise one implicit
/// GEMM, `C[ic, (n,ih,iw)] = W^T[ic, (oc,kh,kw)] x col(dY)`, where `col(dY)` holds
/// `dY[n, oc, oh, ow]` for `oh = (ih + pad - kh * dil) / stride` when that division is exact (the
/// strided entry point; at stride 1 every tap reads, and the division is skipped).
/// `lowering` (see [`super::Pin`]) overrides that choice.
pub fn conv_backward_data(g: &ConvGeom, tile: &GemmTile, lowering: Option<Lowering>) -> Vec<Dispatch> {
    let chunk = match lowering {
        None => cols_chunk(g),
        Some(Lowering::Implicit) => None,
        Some(Lowering::Cols { chunked: false }) => cols_images(g),
        Some(Lowering::Cols { chunked: true }) => {
            cols_images(g).map(|images| images.min(g.input.n.div_ceil(2)))
        }
    };
    match chunk {
        Some(images) => conv_backward_data_cols(g, tile, images),
        None => conv_backward_data_implicit(g, tile),
    }
}

fn conv_backward_data_cols(g: &ConvGeom, tile: &GemmTile, images: usize) -> Vec<Dispatch> {
    let c = &g.conv;
    let [groups, cin_g, cout_g, _, ohw, taps] = conv_sizes(g);
    let mut dispatches = Vec::new();
    for n0 in (0..g.input.n).step_by(images) {
        let chunk = images.min(g.input.n - n0);
        let columns = chunk as u32 * ohw;
        let params = GemmParams {
            groups,
            a_group: cout_g * cin_g * taps,
            a_row: 1,
            a_hi: cin_g * taps,
            c_mid_n: g.output.h as u32,
            c_lo_n: g.output.w as u32,
            b_offset: n0 as u32 * c.out_channels as u32 * ohw,
            b_group: cout_g * ohw,
            b_col: c.out_channels as u32 * ohw,
            b_hi: ohw,
            y_mul: 1,
            x_mul: 1,
            b_height: g.output.h as u32,
            b_width: g.output.w as u32,
            c_row: columns,
            c_span: columns,
            ..GemmParams::dense((cin_g * taps) as usize, columns as usize, cout_g as usize)
        };
        let cols = u64::from(groups) * u64::from(cin_g * taps) * u64::from(columns);
        // C goes to `cols` (binding 5): the entry point touches neither bias nor the output.
        dispatches.push(Dispatch {
            shader: &GEMM,
            entry: "conv2d_backward_data_cols_gemm",
            bindings: vec![
                (1, Slot::Tensor("w")),
                (2, Slot::Tensor("dy")),
                (5, Slot::Scratch(cols)),
            ],
            params: params.words_for(tile),
            grid: Grid::Workgroups(params.workgroups(tile)),
            constants: tile.constants(),
        });
        dispatches.push(super::col2im::col2im(g, n0, chunk, cols));
    }
    dispatches
}

fn conv_backward_data_implicit(g: &ConvGeom, tile: &GemmTile) -> Vec<Dispatch> {
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

/// Loop iterations one invocation may take on llvmpipe (lavapipe): it ends all of an
/// invocation's loops, silently, once they have iterated 65,535 times together
/// (`LP_MAX_TGSI_LOOP_ITERATIONS` in Mesa's gallivm). [`max_split_k`] keeps below it, with room
/// for the loops outside the reduction (staging set-up, epilogue).
const LOOP_BUDGET: u32 = 60_000;

/// Longest reduction one invocation of `tile` runs in a split-K weight gradient: as many
/// `bk`-deep slices as fit in 60,000 loop iterations (`LOOP_BUDGET`) when no loop of a slice
/// is unrolled (a slice iterates the slice loop once, the staging loops `a_per / 4 + b_per / 4`
/// times, their inner loops `a_per + b_per` times, and the FMA loop `bk` times; llvmpipe
/// unrolls some of these, which only leaves more room). So no invocation is cut short on a CPU adapter, and a long
/// reduction is spread over more workgroups on every device. Measured in
/// docs/kernel-variants.md, "llvmpipe's loop limit".
pub fn max_split_k(tile: &GemmTile) -> u32 {
    let loaders = (tile.invocations() / tile.bk).max(1);
    let (a_per, b_per) = (tile.bm / loaders, tile.bn / loaders);
    let per_slice = 1 + a_per / 4 + b_per / 4 + a_per + b_per + tile.bk;
    (LOOP_BUDGET / per_slice).max(1) * tile.bk
}

/// `x, dy -> dw, [dbias]`: `C[oc, (ic,kh,kw)] = dY[oc, (n,oh,ow)] x im2col(X)^T`; the bias
/// gradient is the direct reduction of `conv2d.wgsl`. A reduction (`n * oh * ow`) longer than
/// [`max_split_k`] runs split-K: one dispatch of the fewest runs of equal length within it
/// (their workgroups interleaved, so that each thread of a CPU driver, which takes a contiguous
/// range of workgroups, gets some of every run), each writing its partial `dw` (f32) to the
/// scratch buffer, then one that sums them in order. `runs` (see [`super::Pin`]) splits it in at
/// least that many runs, where its length allows, however short it is.
pub fn conv_backward_filter(g: &ConvGeom, tile: &GemmTile, runs: Option<u32>) -> Vec<Dispatch> {
    let params = backward_filter_params(g);
    let mut dispatches = if params.k > max_split_k(tile) || runs.is_some() {
        conv_backward_filter_split(params, tile, runs.unwrap_or(1))
    } else {
        vec![dispatch(
            "conv2d_backward_filter_gemm",
            params,
            tile,
            BACKWARD_PARAMS,
        )]
    };
    if g.conv.bias {
        dispatches.extend(super::conv2d::backward_bias(g));
    }
    dispatches
}

/// The GEMM of the weight gradient of `g`, unsplit.
fn backward_filter_params(g: &ConvGeom) -> GemmParams {
    let c = &g.conv;
    let [groups, cin_g, cout_g, hw, ohw, taps] = conv_sizes(g);
    let n = cin_g * taps;
    GemmParams {
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
    }
}

/// The runs of split-K the weight gradient of `g` takes with `tile` at its own size; `None`
/// when it runs in one dispatch.
pub(crate) fn split_runs(g: &ConvGeom, tile: &GemmTile) -> Option<u32> {
    let params = backward_filter_params(g);
    (params.k > max_split_k(tile)).then(|| runs_of(&params, tile, 1))
}

/// The fewest runs (at least `at_least`, and at least one) that keep each within
/// [`max_split_k`], capped by what fits a column matrix's bytes (an image's reduction is short
/// when its `dw` is that large).
fn runs_of(params: &GemmParams, tile: &GemmTile, at_least: u32) -> u32 {
    let max_runs = (COLS_MAX_BYTES / 4 / params.c_len().max(1)).max(1);
    u64::from(params.k)
        .div_ceil(u64::from(max_split_k(tile)))
        .max(u64::from(at_least.max(1)))
        .min(max_runs) as u32
}

/// The split-K weight gradient of `params` (a dense `dw`) in at least `at_least` runs: partial
/// sums into the scratch buffer, then their sum into `dw`.
fn conv_backward_filter_split(params: GemmParams, tile: &GemmTile, at_least: u32) -> Vec<Dispatch> {
    let total = params.c_len();
    let runs = runs_of(&params, tile, at_least);
    // Runs of equal length (in whole slices): a short last run would leave the threads that
    // take its workgroups idle while the others finish theirs.
    let params = GemmParams {
        split_k: params.k.div_ceil(runs).next_multiple_of(tile.bk),
        ..params
    };
    let scratch = Slot::Scratch(total * u64::from(params.splits()));
    let words = params.words_for(tile);
    vec![
        Dispatch {
            shader: &GEMM,
            entry: "conv2d_backward_filter_split_gemm",
            bindings: vec![(1, Slot::Tensor("dy")), (2, Slot::Tensor("x")), (5, scratch)],
            params: words.clone(),
            grid: Grid::Workgroups(params.workgroups(tile)),
            constants: tile.constants(),
        },
        Dispatch {
            shader: &GEMM,
            entry: "conv2d_backward_filter_sum_splits",
            bindings: vec![(4, Slot::Tensor("dw")), (5, scratch)],
            params: words,
            grid: Grid::Invocations(total),
            constants: tile.constants(),
        },
    ]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::uniform::Uniform;
    use crate::model::Conv2d;

    fn geom(conv: Conv2d, n: usize, h: usize, w: usize) -> ConvGeom {
        ConvGeom::new(conv, n, h, w).expect("kernel fits")
    }

    /// Backward data at stride 1 goes through the column matrix where its GEMM costs under 0.8
    /// of the implicit one's, as measured on lavapipe (docs/lavapipe-time.md): the layers suite
    /// at batch 1, whose implicit GEMM multiplies 23-61% padding, and AlexNet's conv3 at batch
    /// 8 (192 rows, a poor fit for 128-row tiles); conv4 and conv5, and 3x3 layers on a 7x7 map,
    /// stay implicit.
    #[test]
    fn backward_data_lowering_follows_the_cost_model() {
        let cols = |conv: Conv2d, n: usize, hw: usize| cols_chunk(&geom(conv, n, hw, hw)).is_some();
        assert!(cols(Conv2d::square(64, 128, 9, 1, 0), 1, 64), "L2");
        assert!(cols(Conv2d::square(128, 128, 9, 1, 0), 1, 32), "L3");
        assert!(cols(Conv2d::square(128, 128, 7, 1, 0), 1, 16), "L4");
        assert!(cols(Conv2d::square(384, 384, 3, 1, 0), 1, 13), "L5");
        assert!(cols(Conv2d::square(192, 384, 3, 1, 1), 8, 13), "AlexNet conv3");
        assert!(!cols(Conv2d::square(384, 256, 3, 1, 1), 8, 13), "AlexNet conv4");
        assert!(!cols(Conv2d::square(256, 256, 3, 1, 1), 8, 13), "AlexNet conv5");
        assert!(!cols(Conv2d::square(512, 512, 3, 1, 1), 1, 7), "ResNet-50 layer4");
        assert!(!cols(Conv2d::square(512, 512, 3, 1, 1), 8, 7), "ResNet-50 layer4");
        assert!(
            !cols(Conv2d::square(256, 256, 1, 1, 0), 8, 14),
            "1x1: dx is the column matrix"
        );
    }

    #[test]
    fn backward_data_chunks_cover_every_image_once() {
        let tile = GemmTile::new(64, 64, 16, 4, 4);
        // AlexNet's conv2 at batch 8 with 48 input channels (below IMPLICIT_MIN_CHANNELS): 3.5
        // MB of column matrix per image, four per chunk.
        let g = geom(Conv2d::square(48, 192, 5, 1, 2), 8, 27, 27);
        let per_image = 4 * 48 * 25 * 27 * 27;
        let images = (COLS_CHUNK_BYTES / per_image) as usize;
        assert_eq!(cols_chunk(&g), Some(images));
        let dispatches = conv_backward_data(&g, &tile, None);
        assert_eq!(dispatches.len(), 2 * g.input.n.div_ceil(images));
        let mut covered = Vec::new();
        for pair in dispatches.chunks(2) {
            let [gemm, col2im] = pair else { unreachable!() };
            assert_eq!(gemm.entry, "conv2d_backward_data_cols_gemm");
            assert_eq!(col2im.entry, "conv2d_col2im");
            let words = |d: &Dispatch, name: &str| {
                let at = crate::kernels::col2im::Col2imParams::LAYOUT
                    .iter()
                    .position(|&(field, _)| field == name)
                    .expect("a ConvParams field");
                d.params[at]
            };
            let (n0, n) = (words(col2im, "n0") as usize, words(col2im, "n") as usize);
            covered.extend(n0..n0 + n);
            let scratch = |d: &Dispatch| {
                d.bindings
                    .iter()
                    .find_map(|&(_, slot)| match slot {
                        Slot::Scratch(len) => Some(len),
                        _ => None,
                    })
                    .expect("binds the scratch")
            };
            assert_eq!(scratch(gemm), (48 * 25 * n * 27 * 27) as u64);
            assert_eq!(scratch(gemm), scratch(col2im));
            let gemm_words = GemmParams::LAYOUT.iter().position(|&(f, _)| f == "b_offset");
            assert_eq!(
                gemm.params[gemm_words.expect("b_offset")] as usize,
                n0 * 192 * 27 * 27,
                "the GEMM reads the chunk's dY"
            );
        }
        assert_eq!(covered, (0..8).collect::<Vec<_>>());
    }

    /// A weight gradient longer than a tile's `max_split_k` runs in split-K runs that cover the
    /// reduction once, each within llvmpipe's loop budget, and sums them into `dw`; a shorter
    /// one is one dispatch.
    #[test]
    fn long_weight_gradients_run_split_k() {
        let word = |d: &Dispatch, name: &str| {
            let at = GemmParams::LAYOUT.iter().position(|&(f, _)| f == name);
            d.params[at.expect("a GemmParams field")]
        };
        for tile in crate::kernels::variant::GEMM_TILES {
            let split_k = max_split_k(&tile);
            assert!(split_k.is_multiple_of(tile.bk) && split_k >= tile.bk, "{tile:?}");
            assert!(u64::from(LOOP_BUDGET) < crate::kernels::variant::CPU_LOOP_LIMIT);
            // VGG's conv1_1 at batch 8: 401,408 positions.
            let g = geom(Conv2d::square(3, 64, 3, 1, 1), 8, 224, 224);
            let dispatches = conv_backward_filter(&g, &tile, None);
            let [gemm, sum, bias] = &dispatches[..] else {
                panic!("{tile:?}: {dispatches:?}")
            };
            assert_eq!(gemm.entry, "conv2d_backward_filter_split_gemm");
            assert_eq!(sum.entry, "conv2d_backward_filter_sum_splits");
            assert_eq!(bias.entry, "conv2d_backward_bias");
            let k = 8 * 224 * 224;
            assert_eq!(word(gemm, "k"), k);
            let run = word(gemm, "split_k");
            assert!(run <= split_k && run.is_multiple_of(tile.bk), "{tile:?}: {run}");
            let runs = k.div_ceil(run);
            assert_eq!(runs, k.div_ceil(split_k), "{tile:?}: the fewest runs");
            // The last run is within `bk` per run of the others' length.
            let last = i64::from(k) - i64::from((runs - 1) * run);
            assert!(
                last > 0 && last > i64::from(run) - i64::from(tile.bk * runs),
                "{tile:?}: {last}"
            );
            let total = u64::from(64 * 27_u32);
            assert_eq!(gemm.bindings[2], (5, Slot::Scratch(total * u64::from(runs))));
            assert_eq!(
                sum.bindings,
                vec![(4, Slot::Tensor("dw")), (5, gemm.bindings[2].1)]
            );
            assert_eq!(sum.grid, Grid::Invocations(total));
            let tiles = u64::from(64_u32.div_ceil(tile.bm) * 27_u32.div_ceil(tile.bn));
            assert_eq!(gemm.grid, Grid::Workgroups(tiles * u64::from(runs)));
            // LeNet's conv2 at batch 2: 128 positions, one dispatch.
            let short = conv_backward_filter(&geom(Conv2d::square(20, 50, 5, 1, 0), 2, 12, 12), &tile, None);
            assert_eq!(short[0].entry, "conv2d_backward_filter_gemm", "{tile:?}");
            assert_eq!(word(&short[0], "split_k"), word(&short[0], "k"));
        }
    }

    /// The paths a timed op takes only at its size (split-K runs, chunks of the column matrix)
    /// are taken by the same layer at the verification batch when pinned, and not otherwise.
    #[test]
    fn pinned_paths_reach_the_verification_batch() {
        use crate::kernels::{Lowering, Op, Pin, Variant, path, plan_pinned};
        let entries = |op: &Op, tile: GemmTile, pin: Pin| -> Vec<&'static str> {
            let dispatches = plan_pinned(op, Variant::Gemm(tile), pin).expect("gemm implements it");
            dispatches.iter().map(|d| d.entry).collect()
        };
        let conv = Conv2d::square(64, 192, 5, 1, 2);
        let filter = |n: usize| Op::Conv2dBackwardFilter(geom(conv, n, 27, 27));
        for tile in crate::kernels::variant::GEMM_TILES {
            // AlexNet's conv2: 5,832 positions at batch 8, 1,458 at batch 2.
            let timed = path(&filter(8), Variant::Gemm(tile));
            let natural = 5_832_u32.div_ceil(max_split_k(&tile));
            assert_eq!(timed.runs, (natural > 1).then_some(natural), "{tile:?}");
            let Some(runs) = timed.runs else { continue };
            let pinned = plan_pinned(&filter(2), Variant::Gemm(tile), timed).expect("gemm");
            assert_eq!(pinned[0].entry, "conv2d_backward_filter_split_gemm", "{tile:?}");
            assert_eq!(pinned[1].entry, "conv2d_backward_filter_sum_splits", "{tile:?}");
            let at = GemmParams::LAYOUT.iter().position(|&(f, _)| f == "split_k");
            let run = pinned[0].params[at.expect("split_k")];
            assert!(1_458_u32.div_ceil(run) >= 2.min(runs), "{tile:?}: {run}");
            assert_eq!(
                entries(&filter(2), tile, Pin::default())[0],
                "conv2d_backward_filter_gemm"
            );
        }
        // AlexNet's conv2 with 48 input channels lowers batch 8 in chunks of 4 images.
        let data = |n: usize| Op::Conv2dBackwardData(geom(Conv2d::square(48, 192, 5, 1, 2), n, 27, 27));
        let tile = GemmTile::new(64, 64, 16, 4, 4);
        let timed = path(&data(8), Variant::Gemm(tile));
        assert_eq!(timed.lowering, Some(Lowering::Cols { chunked: true }));
        let own = path(&data(2), Variant::Gemm(tile)).lowering;
        assert_eq!(own, Some(Lowering::Cols { chunked: false }));
        assert_eq!(entries(&data(2), tile, Pin::default()).len(), 2, "one chunk");
        assert_eq!(entries(&data(2), tile, timed).len(), 4, "a chunk per image");
        assert_eq!(entries(&data(1), tile, timed).len(), 2, "one image, one chunk");
    }

    #[test]
    fn dense_1x1_backward_data_stays_implicit() {
        let tile = GemmTile::new(64, 64, 16, 4, 4);
        let g = geom(Conv2d::square(64, 256, 1, 1, 0), 2, 14, 14);
        assert_eq!(cols_chunk(&g), None);
        let dispatches = conv_backward_data(&g, &tile, None);
        assert_eq!(dispatches.len(), 1);
        assert_eq!(dispatches[0].entry, "conv2d_backward_data_gemm");
        // Strided 1x1 (ResNet's projections) reads a quarter of dY per tap: explicit.
        assert!(cols_chunk(&geom(Conv2d::square(64, 256, 1, 2, 0), 2, 14, 14)).is_some());
    }

    #[test]
    fn wide_stride_1_backward_data_is_implicit() {
        let tile = GemmTile::new(64, 64, 16, 8, 8);
        // AlexNet's conv4 and conv2: 384 and 64 input channels, padded, stride 1.
        for g in [
            geom(Conv2d::square(384, 256, 3, 1, 1), 8, 13, 13),
            geom(Conv2d::square(64, 192, 5, 1, 2), 8, 27, 27),
        ] {
            assert_eq!(cols_chunk(&g), None, "{g:?}");
            let dispatches = conv_backward_data(&g, &tile, None);
            assert_eq!(dispatches.len(), 1);
            assert_eq!(dispatches[0].entry, "conv2d_backward_data_gemm");
        }
        // Narrow per group, or strided: the column matrix.
        let mut grouped = Conv2d::square(128, 128, 3, 1, 1);
        grouped.groups = 4;
        assert!(cols_chunk(&geom(grouped, 2, 13, 13)).is_some());
        assert!(cols_chunk(&geom(Conv2d::square(3, 96, 11, 1, 0), 1, 128, 128)).is_some());
        assert!(cols_chunk(&geom(Conv2d::square(256, 256, 3, 2, 1), 1, 13, 13)).is_some());
    }
}
