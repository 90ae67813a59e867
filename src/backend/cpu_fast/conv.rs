//! Convolutions as im2col + GEMM, in blocks of output positions so scratch memory stays bounded.
//!
//! For one image and one group, the im2col matrix `col` has a row per filter tap `(icl, ki, kj)`
//! (`taps = cin_g * kh * kw` rows, the weight layout of one output channel) and a column per
//! output position. Then
//! - forward: `y[n, g] = w[g] * col` (`cout_g x taps` times `taps x positions`), plus the bias;
//! - backward-data: `dcol = w[g]^T * dy[n, g]`, then col2im adds each column back onto `dx`;
//! - backward-filter: `dw[g] += dy[n, g] * col^T`, with the columns of several images side by side
//!   so one GEMM contracts over as many positions as the scratch holds.
//!
//! Work is spread with rayon over `(image, group)` pairs (forward, backward-data) or over runs of
//! images whose partial filter gradients are summed at the end (backward-filter).

use super::gemm::{Matrix, MatrixMut, gemm};
use crate::kernels::ConvGeom;
use rayon::prelude::*;
use std::ops::Range;

/// Floats of im2col scratch per task (4 MiB): a block of columns is written and then read by
/// the GEMM while it is still in cache, and memory does not grow with the image size.
pub(super) const SCRATCH_FLOATS: usize = 1 << 20;

/// The sizes every pass needs.
#[derive(Debug, Clone, Copy)]
struct Dims {
    groups: usize,
    cin_g: usize,
    cout_g: usize,
    /// Rows of `col`: `cin_g * kh * kw`.
    taps: usize,
    /// Pixels of one input plane.
    in_plane: usize,
    /// Output positions of one plane: `oh * ow`.
    positions: usize,
    /// Columns of `col` per block: at most `scratch / taps`, and the blocks of an image equal.
    block: usize,
    /// A 1x1 convolution with stride 1 and no padding: `col` is the input itself.
    pointwise: bool,
}

impl Dims {
    fn new(g: &ConvGeom, scratch: usize) -> Self {
        let c = &g.conv;
        let cin_g = c.in_channels / c.groups;
        let taps = cin_g * c.kernel.0 * c.kernel.1;
        let positions = g.output.h * g.output.w;
        let widest = (scratch / taps.max(1)).max(1);
        let blocks = positions.div_ceil(widest).max(1);
        Self {
            groups: c.groups,
            cin_g,
            cout_g: c.out_channels / c.groups,
            taps,
            in_plane: g.input.h * g.input.w,
            positions,
            block: positions.div_ceil(blocks).max(1),
            pointwise: c.kernel == (1, 1) && c.stride == (1, 1) && c.padding == (0, 0),
        }
    }

    /// The position blocks of one image.
    fn blocks(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        (0..self.positions)
            .step_by(self.block)
            .map(|p0| p0..(p0 + self.block).min(self.positions))
    }
}

/// The outputs `0..outputs` along one axis whose input index for tap `k`
/// (`out * stride + k * dilation - pad`) lies in `0..size`.
fn valid_outputs(
    outputs: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
    size: usize,
) -> Range<usize> {
    let offset = k * dilation;
    let lo = pad.saturating_sub(offset).div_ceil(stride).min(outputs);
    let hi = if offset > size - 1 + pad {
        0
    } else {
        ((size - 1 + pad - offset) / stride + 1).min(outputs)
    };
    lo..hi.max(lo)
}

/// The input row that output row `oh` reads for kernel row `ki`, if inside the image.
fn input_row(g: &ConvGeom, oh: usize, ki: usize) -> Option<usize> {
    let c = &g.conv;
    (oh * c.stride.0 + ki * c.dilation.0)
        .checked_sub(c.padding.0)
        .filter(|&ih| ih < g.input.h)
}

/// One output row's part of a block of positions, for one tap: where it sits in the block, and
/// which of its output columns read the input (and from which input column the first one reads).
struct Segment {
    /// Columns of the block this row segment covers.
    in_block: Range<usize>,
    /// Sub-range of `in_block` whose outputs read the input, and the input index of its first
    /// element within the input plane; `None` when the whole segment reads padding.
    reads: Option<(Range<usize>, usize)>,
}

/// The row segments of `block` for tap `(ki, kj)`.
fn segments<'a>(
    g: &'a ConvGeom,
    block: &Range<usize>,
    ki: usize,
    kj: usize,
) -> impl Iterator<Item = Segment> + use<'a> {
    let c = &g.conv;
    let (ow, iw) = (g.output.w, g.input.w);
    let columns = valid_outputs(ow, kj, c.stride.1, c.padding.1, c.dilation.1, iw);
    let (start, end) = (block.start, block.end);
    let rows = start / ow..(end - 1) / ow + 1;
    rows.map(move |oh| {
        let row_start = oh * ow;
        let (lo, hi) = (
            start.max(row_start) - row_start,
            end.min(row_start + ow) - row_start,
        );
        let in_block = row_start + lo - start..row_start + hi - start;
        let reads = input_row(g, oh, ki).and_then(|ih| {
            let (a, b) = (columns.start.clamp(lo, hi), columns.end.clamp(lo, hi));
            (a < b).then(|| {
                let first = ih * iw + a * c.stride.1 + kj * c.dilation.1 - c.padding.1;
                (row_start + a - start..row_start + b - start, first)
            })
        });
        Segment { in_block, reads }
    })
}

/// Writes the columns `block` of the im2col matrix of one image's group (`x_group`, its
/// `cin_g` input planes) into `out`: element `(tap, p)` goes to `out[tap * ld + at + p - block.start]`.
fn im2col(
    g: &ConvGeom,
    d: &Dims,
    x_group: &[f32],
    block: &Range<usize>,
    out: &mut [f32],
    ld: usize,
    at: usize,
) {
    let (kh, kw) = g.conv.kernel;
    let stride = g.conv.stride.1;
    for icl in 0..d.cin_g {
        let plane = &x_group[icl * d.in_plane..][..d.in_plane];
        for ki in 0..kh {
            for kj in 0..kw {
                let row = &mut out[((icl * kh + ki) * kw + kj) * ld + at..][..block.len()];
                for s in segments(g, block, ki, kj) {
                    match s.reads {
                        None => row[s.in_block].fill(0.0),
                        Some((reads, first)) => {
                            row[s.in_block.start..reads.start].fill(0.0);
                            row[reads.end..s.in_block.end].fill(0.0);
                            let dst = &mut row[reads];
                            if stride == 1 {
                                dst.copy_from_slice(&plane[first..][..dst.len()]);
                            } else {
                                for (k, v) in dst.iter_mut().enumerate() {
                                    *v = plane[first + k * stride];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Adds the columns `block` of an im2col-shaped gradient (`col`, rows `ld` apart) back onto the
/// input planes of one image's group: the transpose of [`im2col`].
fn col2im_add(g: &ConvGeom, d: &Dims, col: &[f32], ld: usize, block: &Range<usize>, dx_group: &mut [f32]) {
    let (kh, kw) = g.conv.kernel;
    let stride = g.conv.stride.1;
    for icl in 0..d.cin_g {
        let plane = &mut dx_group[icl * d.in_plane..][..d.in_plane];
        for ki in 0..kh {
            for kj in 0..kw {
                let row = &col[((icl * kh + ki) * kw + kj) * ld..][..block.len()];
                for s in segments(g, block, ki, kj) {
                    let Some((reads, first)) = s.reads else { continue };
                    let src = &row[reads];
                    if stride == 1 {
                        for (v, &add) in plane[first..][..src.len()].iter_mut().zip(src) {
                            *v += add;
                        }
                    } else {
                        for (k, &add) in src.iter().enumerate() {
                            plane[first + k * stride] += add;
                        }
                    }
                }
            }
        }
    }
}

/// `x, w, [bias] -> y`.
pub(super) fn forward(
    g: &ConvGeom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    scratch: usize,
) {
    let d = Dims::new(g, scratch);
    let in_image = g.input.c * d.in_plane;
    let col_len = if d.pointwise { 0 } else { d.taps * d.block };
    y.par_chunks_mut(d.cout_g * d.positions)
        .enumerate()
        .for_each_init(
            || vec![0.0; col_len],
            |col, (pair, y_group)| {
                let (n, group) = (pair / d.groups, pair % d.groups);
                let x_group = &x[n * in_image + group * d.cin_g * d.in_plane..][..d.cin_g * d.in_plane];
                let w_group = Matrix::rows(w, group * d.cout_g * d.taps, d.taps);
                for block in d.blocks() {
                    let input = if d.pointwise {
                        Matrix::rows(x_group, block.start, d.in_plane)
                    } else {
                        im2col(g, &d, x_group, &block, col, block.len(), 0);
                        Matrix::rows(col, 0, block.len())
                    };
                    let out = MatrixMut {
                        data: &mut *y_group,
                        offset: block.start,
                        row_stride: d.positions,
                    };
                    gemm(d.cout_g, d.taps, block.len(), w_group, input, 0.0, out);
                }
                if let Some(bias) = bias {
                    let channels = &bias[group * d.cout_g..][..d.cout_g];
                    for (plane, &b) in y_group.chunks_mut(d.positions).zip(channels) {
                        plane.iter_mut().for_each(|v| *v += b);
                    }
                }
            },
        );
}

/// `dy, w -> dx`.
pub(super) fn backward_data(g: &ConvGeom, dy: &[f32], w: &[f32], dx: &mut [f32], scratch: usize) {
    let d = Dims::new(g, scratch);
    let out_image = g.output.c * d.positions;
    let col_len = if d.pointwise { 0 } else { d.taps * d.block };
    dx.par_chunks_mut(d.cin_g * d.in_plane).enumerate().for_each_init(
        || vec![0.0; col_len],
        |col, (pair, dx_group)| {
            let (n, group) = (pair / d.groups, pair % d.groups);
            let dy_group = &dy[n * out_image + group * d.cout_g * d.positions..][..d.cout_g * d.positions];
            let w_transposed = Matrix::transposed(w, group * d.cout_g * d.taps, d.taps);
            if !d.pointwise {
                dx_group.fill(0.0);
            }
            for block in d.blocks() {
                let gradient = Matrix::rows(dy_group, block.start, d.positions);
                if d.pointwise {
                    let out = MatrixMut {
                        data: &mut *dx_group,
                        offset: block.start,
                        row_stride: d.in_plane,
                    };
                    gemm(d.taps, d.cout_g, block.len(), w_transposed, gradient, 0.0, out);
                } else {
                    let out = MatrixMut {
                        data: &mut col[..d.taps * block.len()],
                        offset: 0,
                        row_stride: block.len(),
                    };
                    gemm(d.taps, d.cout_g, block.len(), w_transposed, gradient, 0.0, out);
                    col2im_add(g, &d, col, block.len(), &block, dx_group);
                }
            }
        },
    );
}

/// A run of position blocks, possibly of several images, whose columns sit side by side in one
/// im2col matrix for one GEMM of the filter gradient.
type Chunk = Vec<(usize, Range<usize>)>;

/// Groups every image's blocks into chunks of at most `widest` columns (at least one block each),
/// and no wider than an even share of all columns per thread, so every core gets work.
fn chunks(d: &Dims, images: usize, widest: usize, threads: usize) -> Vec<Chunk> {
    let share = (images * d.positions).div_ceil(threads.max(1));
    let limit = widest.min(share).max(1);
    let mut chunks = Vec::new();
    let mut current: Chunk = Vec::new();
    let mut width = 0;
    for n in 0..images {
        for block in d.blocks() {
            if !current.is_empty() && width + block.len() > limit {
                chunks.push(std::mem::take(&mut current));
                width = 0;
            }
            width += block.len();
            current.push((n, block));
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// `x, dy -> dw, [dbias]`.
pub(super) fn backward_filter(
    g: &ConvGeom,
    x: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    dbias: Option<&mut [f32]>,
    scratch: usize,
) {
    let d = Dims::new(g, scratch);
    let (in_image, out_image) = (g.input.c * d.in_plane, g.output.c * d.positions);
    let threads = rayon::current_num_threads();
    let widest = (scratch / (d.taps + d.cout_g).max(1)).max(d.block);
    let chunks = chunks(&d, g.input.n, widest, threads);
    let per_part = chunks.len().div_ceil(threads.max(1)).max(1);
    let partials: Vec<Vec<f32>> = chunks
        .par_chunks(per_part)
        .map(|part| {
            let mut acc = vec![0.0; dw.len()];
            let mut col = Vec::new();
            let mut gradient = Vec::new();
            for chunk in part {
                let width: usize = chunk.iter().map(|(_, b)| b.len()).sum();
                col.resize(d.taps * width, 0.0);
                gradient.resize(d.cout_g * width, 0.0);
                for group in 0..d.groups {
                    let mut at = 0;
                    for (n, block) in chunk {
                        let x_group =
                            &x[n * in_image + group * d.cin_g * d.in_plane..][..d.cin_g * d.in_plane];
                        im2col(g, &d, x_group, block, &mut col, width, at);
                        for oc in 0..d.cout_g {
                            let plane =
                                &dy[n * out_image + (group * d.cout_g + oc) * d.positions..][..d.positions];
                            gradient[oc * width + at..][..block.len()].copy_from_slice(&plane[block.clone()]);
                        }
                        at += block.len();
                    }
                    let out = MatrixMut {
                        data: &mut acc,
                        offset: group * d.cout_g * d.taps,
                        row_stride: d.taps,
                    };
                    gemm(
                        d.cout_g,
                        width,
                        d.taps,
                        Matrix::rows(&gradient, 0, width),
                        Matrix::transposed(&col, 0, width),
                        1.0,
                        out,
                    );
                }
            }
            acc
        })
        .collect();
    dw.par_iter_mut().enumerate().for_each(|(i, v)| {
        *v = partials.iter().map(|p| p[i]).sum();
    });
    if let Some(db) = dbias {
        db.par_iter_mut().enumerate().for_each(|(oc, b)| {
            *b = (0..g.output.n)
                .map(|n| {
                    dy[n * out_image + oc * d.positions..][..d.positions]
                        .iter()
                        .sum::<f32>()
                })
                .sum();
        });
    }
}
