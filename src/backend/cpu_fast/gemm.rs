//! The one GEMM of the CPU kernels: a bounds-checked, safe wrapper over matrixmultiply's
//! `sgemm`, whose raw-pointer interface is `unsafe`.
//!
//! The call is sound because every matrix is a view into a borrowed slice ([`Matrix`],
//! [`MatrixMut`]) and [`gemm`] checks, before calling, that the last element each view
//! addresses lies inside its slice. The output borrows its slice mutably, so it cannot alias
//! the inputs, and its strides must not map two elements to one place.

/// A strided view of a matrix inside a slice: element `(i, j)` is
/// `data[offset + i * row_stride + j * col_stride]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Matrix<'a> {
    pub data: &'a [f32],
    pub offset: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// A row-major matrix whose rows are `row_stride` apart, starting at `offset`.
    pub fn rows(data: &'a [f32], offset: usize, row_stride: usize) -> Self {
        Self {
            data,
            offset,
            row_stride,
            col_stride: 1,
        }
    }

    /// The transpose of [`Matrix::rows`]: element `(i, j)` is `data[offset + j * stride + i]`.
    pub fn transposed(data: &'a [f32], offset: usize, stride: usize) -> Self {
        Self {
            data,
            offset,
            row_stride: 1,
            col_stride: stride,
        }
    }

    /// The view from row `row` and column `col` on.
    pub fn at(self, row: usize, col: usize) -> Self {
        Self {
            offset: self.offset + row * self.row_stride + col * self.col_stride,
            ..self
        }
    }
}

/// A row-major output matrix inside a slice: element `(i, j)` is `data[offset + i * row_stride + j]`.
#[derive(Debug)]
pub(super) struct MatrixMut<'a> {
    pub data: &'a mut [f32],
    pub offset: usize,
    pub row_stride: usize,
}

/// Index of the last element of a `rows x cols` view, `None` when it has no element.
fn last_index(
    offset: usize,
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
) -> Option<usize> {
    (rows > 0 && cols > 0).then(|| offset + (rows - 1) * row_stride + (cols - 1) * col_stride)
}

fn assert_inside(what: &str, len: usize, last: Option<usize>) {
    if let Some(last) = last {
        assert!(
            last < len,
            "gemm: {what} addresses element {last} of a slice of {len}"
        );
    }
}

/// `c = a * b + beta * c` with `a` of `m x k`, `b` of `k x n` and `c` of `m x n`, single-threaded
/// (callers spread independent GEMMs over cores). With `beta == 0` the old `c` is not read, so
/// it may hold NaN.
///
/// # Panics
/// When a view reaches outside its slice, or the rows of `c` overlap.
pub(super) fn gemm(m: usize, k: usize, n: usize, a: Matrix<'_>, b: Matrix<'_>, beta: f32, c: MatrixMut<'_>) {
    assert_inside(
        "a",
        a.data.len(),
        last_index(a.offset, m, k, a.row_stride, a.col_stride),
    );
    assert_inside(
        "b",
        b.data.len(),
        last_index(b.offset, k, n, b.row_stride, b.col_stride),
    );
    assert_inside("c", c.data.len(), last_index(c.offset, m, n, c.row_stride, 1));
    assert!(m <= 1 || c.row_stride >= n, "gemm: rows of c overlap");
    if m == 0 || n == 0 {
        return;
    }
    let stride = |s: usize| isize::try_from(s).expect("a stride that fits in isize");
    // SAFETY: the asserts above keep every element matrixmultiply reads (of `a` and `b`) or
    // writes (of `c`) inside the borrowed slices; `c` is borrowed mutably, so it aliases neither
    // input, and its rows do not overlap. With k == 0 no element of `a` or `b` is read.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr().wrapping_add(a.offset),
            stride(a.row_stride),
            stride(a.col_stride),
            b.data.as_ptr().wrapping_add(b.offset),
            stride(b.row_stride),
            stride(b.col_stride),
            beta,
            c.data.as_mut_ptr().add(c.offset),
            stride(c.row_stride),
            1,
        );
    }
}
