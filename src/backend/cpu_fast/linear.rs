//! Fully connected layers as one GEMM per pass, split over cores along the larger side of the
//! output. `w` is `[out, in]`; `y` and `dy` rows are `y_stride` long with this op's columns
//! from `y_offset` on (a column slice of a wider layer, see [`LinearGeom::is_slice`]).

use super::gemm::{Matrix, MatrixMut, gemm};
use crate::kernels::LinearGeom;
use rayon::prelude::*;

/// Most rows of `c` for which [`par_gemm`] splits by columns: each task's buffer then holds at
/// most this many rows of its share of the columns.
const FEW_ROWS: usize = 64;

/// `c = a * b` for `a` of `m x k` and `b` of `k x n`; the columns of `c`'s rows outside its
/// `m x n` view are left untouched. Split over cores by rows of `c`, or, when
/// `c` has few rows (a small batch) and more columns, by columns through a small buffer per
/// task, so that each task reads only its share of `b`, a large weight matrix.
fn par_gemm(m: usize, k: usize, n: usize, a: Matrix<'_>, b: Matrix<'_>, c: MatrixMut<'_>) {
    let MatrixMut {
        data: c,
        offset,
        row_stride,
    } = c;
    if m == 0 || n == 0 {
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    if m >= n || m > FEW_ROWS {
        let rows = m.div_ceil(threads);
        c[..m * row_stride]
            .par_chunks_mut(rows * row_stride)
            .enumerate()
            .for_each(|(task, c_rows)| {
                let first = task * rows;
                let count = rows.min(m - first);
                let out = MatrixMut {
                    data: c_rows,
                    offset,
                    row_stride,
                };
                gemm(count, k, n, a.at(first, 0), b, 0.0, out);
            });
    } else {
        let columns = n.div_ceil(threads);
        let parts: Vec<Vec<f32>> = (0..n.div_ceil(columns))
            .into_par_iter()
            .map(|task| {
                let first = task * columns;
                let count = columns.min(n - first);
                let mut part = vec![0.0; m * count];
                let out = MatrixMut {
                    data: &mut part,
                    offset: 0,
                    row_stride: count,
                };
                gemm(m, k, count, a, b.at(0, first), 0.0, out);
                part
            })
            .collect();
        c.par_chunks_mut(row_stride)
            .take(m)
            .enumerate()
            .for_each(|(i, row)| {
                for (task, part) in parts.iter().enumerate() {
                    let count = part.len() / m;
                    row[offset + task * columns..][..count].copy_from_slice(&part[i * count..][..count]);
                }
            });
    }
}

/// `x, w, [bias] -> y` (only this op's columns of `y` are written).
pub(super) fn forward(g: &LinearGeom, x: &[f32], w: &[f32], bias: Option<&[f32]>, y: &mut [f32]) {
    let x_rows = Matrix::rows(x, 0, g.in_features);
    let w_transposed = Matrix::transposed(w, 0, g.in_features);
    let out = MatrixMut {
        data: &mut *y,
        offset: g.y_offset,
        row_stride: g.y_stride,
    };
    par_gemm(g.batch, g.in_features, g.out_features, x_rows, w_transposed, out);
    if let Some(bias) = bias {
        y.par_chunks_mut(g.y_stride).take(g.batch).for_each(|row| {
            for (v, &b) in row[g.y_offset..][..g.out_features].iter_mut().zip(bias) {
                *v += b;
            }
        });
    }
}

/// `dy, w -> dx`.
pub(super) fn backward_data(g: &LinearGeom, dy: &[f32], w: &[f32], dx: &mut [f32]) {
    let dy_rows = Matrix::rows(dy, g.y_offset, g.y_stride);
    let w_rows = Matrix::rows(w, 0, g.in_features);
    let out = MatrixMut {
        data: dx,
        offset: 0,
        row_stride: g.in_features,
    };
    par_gemm(g.batch, g.out_features, g.in_features, dy_rows, w_rows, out);
}

/// `x, dy -> dw, [dbias]`: `dw = dy^T * x`, contracting over the batch.
pub(super) fn backward_params(
    g: &LinearGeom,
    x: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    dbias: Option<&mut [f32]>,
) {
    let dy_transposed = Matrix::transposed(dy, g.y_offset, g.y_stride);
    let x_rows = Matrix::rows(x, 0, g.in_features);
    let out = MatrixMut {
        data: dw,
        offset: 0,
        row_stride: g.in_features,
    };
    par_gemm(g.out_features, g.batch, g.in_features, dy_transposed, x_rows, out);
    if let Some(db) = dbias {
        for (o, b) in db.iter_mut().enumerate() {
            *b = (0..g.batch).map(|n| dy[n * g.y_stride + g.y_offset + o]).sum();
        }
    }
}
