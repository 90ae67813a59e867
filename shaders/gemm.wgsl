// Tiled GEMM over implicit operands: convolution forward, backward-data and backward-filter
// as implicit GEMM (no im2col buffer), and fully connected layers, per convolution group:
//
//   conv2d forward          C[oc, (n,oh,ow)]  = W[oc, (ic,kh,kw)]  x  im2col(X)[(ic,kh,kw), (n,oh,ow)]
//   conv2d backward data    C[ic, (n,ih,iw)]  = W^T[ic, (oc,kh,kw)] x  col(dY)[(oc,kh,kw), (n,ih,iw)]
//   conv2d backward filter  C[oc, (ic,kh,kw)] = dY[oc, (n,oh,ow)]  x  im2col(X)^T[(n,oh,ow), (ic,kh,kw)]
//   linear forward          C[o, n] = W[o, i]    x X^T[i, n]
//   linear backward data    C[i, n] = W^T[i, o]  x dY^T[o, n]
//   linear backward weight  C[o, i] = dY^T[o, n] x X[n, i]
//
// Each workgroup computes a BM x BN tile of C, each invocation a TM x TN block of it in
// registers, from BK-deep slices of A and B staged in workgroup memory (f32, so f16 storage
// accumulates in f32). The host describes every operand by affine strides (see
// `src/kernels/gemm.rs`), so one code path serves all ops; only backward-data at a stride above
// one divides by the stride. Backward data of a kernel larger than 1x1 (or strided, or padded)
// runs as two steps where that is cheaper (`kernels::gemm::cols_chunk` decides: fewer than 64
// input channels per group, a stride above one, or many taps in dY's padding): this file's
// `conv2d_backward_data_cols_gemm` computes the column matrix dcol = W^T x dY, a dense GEMM as
// deep as the output channels, into the f32 scratch buffer `cols`, and `conv2d.wgsl`'s
// `conv2d_col2im` sums each input pixel's taps from it. The implicit form gathers dY once per
// tap, padding included, and multiplies it by only `cin / groups` weights, which starves a
// narrow GEMM (3 input channels); for wide layers with little padding it is as dense as the
// forward GEMM and saves the column matrix's write and read.
// The reduction index k is decomposed as
// ((hi * k_mid) + mid) * k_lo + lo by a counter advanced by BK per slice: integer division is
// slow on SIMD CPUs (lavapipe), so it happens only once per invocation, never per element.
//
// Tile sizes are constants specialised per registry variant (`kernels::variant::GemmTile`).
alias T = f32;

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;
const TM: u32 = 4u;
const TN: u32 = 4u;

const WG_ROWS: u32 = BM / TM;
const WG_COLS: u32 = BN / TN;
const WG: u32 = WG_ROWS * WG_COLS;
// Staging: invocation `lid` loads reduction row `lid / LOADERS` of both tiles, A_PER rows of A
// and B_PER columns of B in runs of four (stored as one vec4), runs `4 * LOADERS` apart.
const LOADERS: u32 = WG / BK;
const A_PER: u32 = BM / LOADERS;
const B_PER: u32 = BN / LOADERS;
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
// The accumulators of the largest block, 16 x 16 (TM and TN are 4, 8 or 16): a block's element
// (i, j) is `acc[i * TN4 + j / 4][j % 4]`. The code that touches `acc` is written out with
// constant indices, under conditions on TM4 and TN4 that are constant too, never in loops:
// llvmpipe (lavapipe) does not unroll such loops, and keeps an array indexed by a loop variable
// in memory, where every access is a loop over the SIMD lanes (measured in
// docs/lavapipe-time.md, "Accumulators indexed by constants"). The helpers that do it (`rank1`,
// `put`, ...) are called with literal rows and columns only, so that once inlined every index
// is constant. 16x16 blocks are for CPU drivers, which read workgroup memory one SIMD lane at a
// time: each value read feeds 16 FMAs instead of 8 (docs/kernel-variants.md).
const ACC: u32 = 64u;

const GATHER: u32 = 0u;
const GATHER_STRIDED: u32 = 1u;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    tiles_m: u32,
    tiles_n: u32,
    groups: u32,
    // Radices of the reduction counter.
    k_mid: u32,
    k_lo: u32,
    // A[row, k] = a[a_offset + g * a_group + row * a_row + hi * a_hi + mid * a_mid + lo].
    a_offset: u32,
    a_group: u32,
    a_row: u32,
    a_hi: u32,
    a_mid: u32,
    // Columns decompose as col = (c_hi * c_mid_n + c_mid) * c_lo_n + c_lo.
    c_mid_n: u32,
    c_lo_n: u32,
    // B[k, col] = b[b_offset + g * b_group + c_hi * b_col + hi * b_hi + y * b_width + x] with
    // y = c_mid * y_mul + y_add + mid * y_step (x alike, from c_lo and lo), zero outside
    // [0, b_height) x [0, b_width); backward data first divides y and x by div_y and div_x,
    // zero unless exact.
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
    // C[row, col] = c[c_offset + (g * m + row) * c_row + (col / c_span) * c_col + col % c_span],
    // plus bias[g * m + row] when has_bias.
    c_offset: u32,
    c_row: u32,
    c_span: u32,
    c_col: u32,
    has_bias: u32,
    // Split-K: the reduction in runs = ceil(k / split_k) runs, workgroup w doing run w % runs,
    // over [z * split_k, min((z + 1) * split_k, k)) for z = w % runs, and storing its partial C
    // (dense) into `cols` at z * groups * m * n; `conv2d_backward_filter_sum_splits` adds them
    // up. k when not split.
    split_k: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a_src: array<T>;
@group(0) @binding(2) var<storage, read> b_src: array<T>;
@group(0) @binding(3) var<storage, read> bias: array<T>;
@group(0) @binding(4) var<storage, read_write> c_dst: array<T>;
// The column matrix of conv2d_backward_data_cols_gemm (f32 at every precision, so that f16
// storage rounds only dx); no other entry point binds it.
@group(0) @binding(5) var<storage, read_write> cols: array<f32>;

var<workgroup> a_tile: array<vec4<f32>, BK * BM / 4u>;
var<workgroup> b_tile: array<vec4<f32>, BK * BN / 4u>;

// A reduction index and its mixed-radix digits.
struct Counter {
    hi: u32,
    mid: u32,
    lo: u32,
    flat: u32,
}

fn split(k: u32) -> Counter {
    return Counter(k / (p.k_mid * p.k_lo), (k / p.k_lo) % p.k_mid, k % p.k_lo, k);
}

// `c` advanced by `step` (whose digits are below their radices): one carry per digit at most.
fn advance(c: Counter, step: Counter) -> Counter {
    var r = Counter(c.hi + step.hi, c.mid + step.mid, c.lo + step.lo, c.flat + step.flat);
    if (r.lo >= p.k_lo) {
        r.lo -= p.k_lo;
        r.mid += 1u;
    }
    if (r.mid >= p.k_mid) {
        r.mid -= p.k_mid;
        r.hi += 1u;
    }
    return r;
}

// t / d for t < 2^22: the f32 quotient is within one of the true one, then corrected.
fn divide(t: u32, d: u32) -> u32 {
    var q = u32(f32(t) / f32(d));
    q = select(q, q - 1u, q * d > t);
    q = select(q, q + 1u, (q + 1u) * d <= t);
    return q;
}

fn gather_b(mode: u32, base: u32, y0: i32, x0: i32, c: Counter) -> f32 {
    var y = y0 + i32(c.mid) * p.y_step;
    var x = x0 + i32(c.lo) * p.x_step;
    if (y < 0 || x < 0) {
        return 0.0;
    }
    if (mode == GATHER_STRIDED) {
        let qy = divide(u32(y), p.div_y);
        let qx = divide(u32(x), p.div_x);
        if (qy * p.div_y != u32(y) || qx * p.div_x != u32(x)) {
            return 0.0;
        }
        y = i32(qy);
        x = i32(qx);
    }
    if (u32(y) >= p.b_height || u32(x) >= p.b_width) {
        return 0.0;
    }
    return f32(b_src[base + c.hi * p.b_hi + u32(y) * p.b_width + u32(x)]);
}

// Row (of A) or column (of B) of the tile that staging slot `j` of invocation `slot` loads.
fn staged(slot: u32, j: u32) -> u32 {
    return (j / 4u) * 4u * LOADERS + 4u * slot + j % 4u;
}

// An invocation's TM x TN block of C, in registers, and where it goes.
struct Block {
    acc: array<vec4<f32>, ACC>,
    g: u32,
    row0: u32,
    col0: u32,
    // The run of split-K this block's partial sum belongs to (0 when not split).
    split: u32,
    // False for the workgroups past the last tile of a 2-d grid.
    valid: bool,
}

// Up to four vec4s: a block row's columns of B, or the bias of up to sixteen rows.
struct Quad {
    v0: vec4<f32>,
    v1: vec4<f32>,
    v2: vec4<f32>,
    v3: vec4<f32>,
}

// Row `i` of the block (a constant at every call) += a * b.
fn rank1(acc: ptr<function, array<vec4<f32>, ACC>>, i: u32, a: f32, b: Quad) {
    let av = vec4<f32>(a);
    (*acc)[i * TN4] = fma(av, b.v0, (*acc)[i * TN4]);
    if (TN4 > 1u) {
        (*acc)[i * TN4 + 1u] = fma(av, b.v1, (*acc)[i * TN4 + 1u]);
    }
    if (TN4 > 2u) {
        (*acc)[i * TN4 + 2u] = fma(av, b.v2, (*acc)[i * TN4 + 2u]);
        (*acc)[i * TN4 + 3u] = fma(av, b.v3, (*acc)[i * TN4 + 3u]);
    }
}

// Rows `i0` to `i0 + 3` of the block += the outer product of `a` and `b`.
fn rank1_rows(acc: ptr<function, array<vec4<f32>, ACC>>, i0: u32, a: vec4<f32>, b: Quad) {
    rank1(acc, i0, a.x, b);
    rank1(acc, i0 + 1u, a.y, b);
    rank1(acc, i0 + 2u, a.z, b);
    rank1(acc, i0 + 3u, a.w, b);
}

fn gemm(mode: u32, wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> Block {
    var out: Block;
    let linear = wg.y * nwg.x + wg.x;
    let per_group = p.tiles_m * p.tiles_n;
    let per_split = per_group * p.groups;
    // Runs interleaved (run fastest): a CPU driver hands each thread a contiguous range of
    // workgroups, which would otherwise be one run's tiles.
    let runs = (p.k + p.split_k - 1u) / p.split_k;
    let split_run = linear % runs;
    let tile = linear / runs;
    if (tile >= per_split) {
        out.valid = false;
        return out;
    }
    let g = tile / per_group;
    let row0 = ((tile % per_group) / p.tiles_n) * BM;
    let col0 = (tile % p.tiles_n) * BN;
    let k_begin = split_run * p.split_k;
    let k_end = min(p.k, k_begin + p.split_k);

    // What this invocation stages, resolved once.
    let k_local = lid / LOADERS;
    let slot = lid % LOADERS;
    var a_base: array<u32, A_PER>;
    var a_ok: array<bool, A_PER>;
    for (var j = 0u; j < A_PER; j += 1u) {
        let row = row0 + staged(slot, j);
        a_ok[j] = row < p.m;
        a_base[j] = p.a_offset + g * p.a_group + row * p.a_row;
    }
    var b_base: array<u32, B_PER>;
    var b_y: array<i32, B_PER>;
    var b_x: array<i32, B_PER>;
    var b_ok: array<bool, B_PER>;
    for (var j = 0u; j < B_PER; j += 1u) {
        let col = col0 + staged(slot, j);
        b_ok[j] = col < p.n;
        let c_lo = col % p.c_lo_n;
        let c_mid = (col / p.c_lo_n) % p.c_mid_n;
        let c_hi = col / (p.c_lo_n * p.c_mid_n);
        b_base[j] = p.b_offset + g * p.b_group + c_hi * p.b_col;
        b_y[j] = i32(c_mid) * p.y_mul + p.y_add;
        b_x[j] = i32(c_lo) * p.x_mul + p.x_add;
    }
    var c = split(k_begin + k_local);
    let step = split(BK);

    let ty = lid / WG_COLS;
    let tx = lid % WG_COLS;
    var acc: array<vec4<f32>, ACC>;

    for (var k0 = k_begin; k0 < k_end; k0 += BK) {
        let k_ok = c.flat < k_end;
        let a_k = c.hi * p.a_hi + c.mid * p.a_mid + c.lo;
        for (var j4 = 0u; j4 < A_PER / 4u; j4 += 1u) {
            var v = vec4<f32>();
            for (var q = 0u; q < 4u; q += 1u) {
                let j = 4u * j4 + q;
                if (k_ok && a_ok[j]) {
                    v[q] = f32(a_src[a_base[j] + a_k]);
                }
            }
            a_tile[(k_local * BM + staged(slot, 4u * j4)) / 4u] = v;
        }
        for (var j4 = 0u; j4 < B_PER / 4u; j4 += 1u) {
            var v = vec4<f32>();
            for (var q = 0u; q < 4u; q += 1u) {
                let j = 4u * j4 + q;
                if (k_ok && b_ok[j]) {
                    v[q] = gather_b(mode, b_base[j], b_y[j], b_x[j], c);
                }
            }
            b_tile[(k_local * BN + staged(slot, 4u * j4)) / 4u] = v;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk += 1u) {
            let a_at = (kk * BM + ty * TM) / 4u;
            let b_at = (kk * BN + tx * TN) / 4u;
            var b: Quad;
            b.v0 = b_tile[b_at];
            if (TN4 > 1u) {
                b.v1 = b_tile[b_at + 1u];
            }
            if (TN4 > 2u) {
                b.v2 = b_tile[b_at + 2u];
                b.v3 = b_tile[b_at + 3u];
            }
            rank1_rows(&acc, 0u, a_tile[a_at], b);
            if (TM4 > 1u) {
                rank1_rows(&acc, 4u, a_tile[a_at + 1u], b);
            }
            if (TM4 > 2u) {
                rank1_rows(&acc, 8u, a_tile[a_at + 2u], b);
                rank1_rows(&acc, 12u, a_tile[a_at + 3u], b);
            }
        }
        workgroupBarrier();
        c = advance(c, step);
    }

    out.acc = acc;
    out.g = g;
    out.row0 = row0 + ty * TM;
    out.col0 = col0 + tx * TN;
    out.split = split_run;
    out.valid = true;
    return out;
}

// Where a block's columns start in C: `col0 / c_span` and `col0 % c_span`, divided once per
// invocation. Each next column advances the remainder and carries into the quotient, so the
// epilogue does no integer division per element (two per element before; on lavapipe the
// change took 5% off the short reductions of L4's and L5's weight gradients at batch 1).
struct Cols {
    q: u32,
    r: u32,
}

fn next_col(c: Cols) -> Cols {
    var n = Cols(c.q, c.r + 1u);
    if (n.r == p.c_span) {
        n = Cols(n.q + 1u, 0u);
    }
    return n;
}

// The epilogue, written out like the inner loop (see ACC): `store` writes a block to C with the
// bias of its rows, `store_cols` to the column matrix `cols` (f32, no bias). Each helper is
// called with constant `i` and `j` only, so that once inlined every index of `acc` is constant.

// Element (i, j) of the block into C, unless outside it.
fn put(b: Block, i: u32, j: u32, col: u32, at: u32, bias_i: f32) {
    if (col < p.n && b.row0 + i < p.m) {
        c_dst[at + i * p.c_row] = T(b.acc[i * TN4 + j / 4u][j % 4u] + bias_i);
    }
}

fn put_cols(b: Block, i: u32, j: u32, col: u32, at: u32) {
    if (col < p.n && b.row0 + i < p.m) {
        cols[at + i * p.c_row] = b.acc[i * TN4 + j / 4u][j % 4u];
    }
}

// The bias of row `i` of the block, read once per block rather than once per element.
fn bias_row(b: Block, i: u32) -> f32 {
    if (p.has_bias != 0u && i < TM && b.row0 + i < p.m) {
        return f32(bias[b.g * p.m + b.row0 + i]);
    }
    return 0.0;
}

// Rows `i0` to `i0 + 3` of column `j` of the block, with their bias.
fn put_rows(b: Block, i0: u32, j: u32, col: u32, index: u32, bias4: vec4<f32>) {
    put(b, i0, j, col, index, bias4.x);
    put(b, i0 + 1u, j, col, index, bias4.y);
    put(b, i0 + 2u, j, col, index, bias4.z);
    put(b, i0 + 3u, j, col, index, bias4.w);
}

fn put_cols_rows(b: Block, i0: u32, j: u32, col: u32, index: u32) {
    put_cols(b, i0, j, col, index);
    put_cols(b, i0 + 1u, j, col, index);
    put_cols(b, i0 + 2u, j, col, index);
    put_cols(b, i0 + 3u, j, col, index);
}

// Column `j` of the block, at C's column `*at` (advanced to the next one). (The column matrix
// has its own copy, `put_cols_column`: only `conv2d_backward_data_cols_gemm` binds `cols`.)
fn put_column(b: Block, j: u32, row_base: u32, at: ptr<function, Cols>, bias: Quad) {
    let col = b.col0 + j;
    let index = row_base + (*at).q * p.c_col + (*at).r;
    put_rows(b, 0u, j, col, index, bias.v0);
    if (TM4 > 1u) {
        put_rows(b, 4u, j, col, index, bias.v1);
    }
    if (TM4 > 2u) {
        put_rows(b, 8u, j, col, index, bias.v2);
        put_rows(b, 12u, j, col, index, bias.v3);
    }
    *at = next_col(*at);
}

fn put_cols_column(b: Block, j: u32, row_base: u32, at: ptr<function, Cols>) {
    let col = b.col0 + j;
    let index = row_base + (*at).q * p.c_col + (*at).r;
    put_cols_rows(b, 0u, j, col, index);
    if (TM4 > 1u) {
        put_cols_rows(b, 4u, j, col, index);
    }
    if (TM4 > 2u) {
        put_cols_rows(b, 8u, j, col, index);
        put_cols_rows(b, 12u, j, col, index);
    }
    *at = next_col(*at);
}

// Columns `j0` to `j0 + 3` of the block.
fn put_columns(b: Block, j0: u32, row_base: u32, at: ptr<function, Cols>, bias: Quad) {
    put_column(b, j0, row_base, at, bias);
    put_column(b, j0 + 1u, row_base, at, bias);
    put_column(b, j0 + 2u, row_base, at, bias);
    put_column(b, j0 + 3u, row_base, at, bias);
}

fn put_cols_columns(b: Block, j0: u32, row_base: u32, at: ptr<function, Cols>) {
    put_cols_column(b, j0, row_base, at);
    put_cols_column(b, j0 + 1u, row_base, at);
    put_cols_column(b, j0 + 2u, row_base, at);
    put_cols_column(b, j0 + 3u, row_base, at);
}

fn bias_rows(b: Block, i0: u32) -> vec4<f32> {
    return vec4<f32>(bias_row(b, i0), bias_row(b, i0 + 1u), bias_row(b, i0 + 2u), bias_row(b, i0 + 3u));
}

fn store(b: Block) {
    if (!b.valid) {
        return;
    }
    let bias = Quad(bias_rows(b, 0u), bias_rows(b, 4u), bias_rows(b, 8u), bias_rows(b, 12u));
    let row_base = p.c_offset + (b.g * p.m + b.row0) * p.c_row;
    var at = Cols(b.col0 / p.c_span, b.col0 % p.c_span);
    put_columns(b, 0u, row_base, &at, bias);
    if (TN4 > 1u) {
        put_columns(b, 4u, row_base, &at, bias);
    }
    if (TN4 > 2u) {
        put_columns(b, 8u, row_base, &at, bias);
        put_columns(b, 12u, row_base, &at, bias);
    }
}

fn store_cols(b: Block) {
    if (!b.valid) {
        return;
    }
    let row_base = p.c_offset + b.split * p.groups * p.m * p.n + (b.g * p.m + b.row0) * p.c_row;
    var at = Cols(b.col0 / p.c_span, b.col0 % p.c_span);
    put_cols_columns(b, 0u, row_base, &at);
    if (TN4 > 1u) {
        put_cols_columns(b, 4u, row_base, &at);
    }
    if (TN4 > 2u) {
        put_cols_columns(b, 8u, row_base, &at);
        put_cols_columns(b, 12u, row_base, &at);
    }
}

@compute @workgroup_size(WG)
fn conv2d_forward_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}

// Backward data at stride 1: every tap reads dY, no division.
@compute @workgroup_size(WG)
fn conv2d_backward_data_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}

@compute @workgroup_size(WG)
fn conv2d_backward_data_strided_gemm(@builtin(workgroup_id) wg: vec3<u32>,
                                     @builtin(num_workgroups) nwg: vec3<u32>,
                                     @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER_STRIDED, wg, nwg, lid));
}

// Backward data's column matrix dcol = W^T x dY, into `cols` (then `conv2d_col2im`).
@compute @workgroup_size(WG)
fn conv2d_backward_data_cols_gemm(@builtin(workgroup_id) wg: vec3<u32>,
                                  @builtin(num_workgroups) nwg: vec3<u32>,
                                  @builtin(local_invocation_index) lid: u32) {
    store_cols(gemm(GATHER, wg, nwg, lid));
}

@compute @workgroup_size(WG)
fn conv2d_backward_filter_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                               @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}

// Backward filter in split-K runs: each run's partial dW into `cols`, then
// `conv2d_backward_filter_sum_splits`. A long reduction (the first layers' weight gradients at
// larger batches) would otherwise run in few workgroups, each looping over all of it: too few to
// fill a device, and past llvmpipe's 65,535 loop iterations per invocation (see
// `kernels::gemm::max_split_k`).
@compute @workgroup_size(WG)
fn conv2d_backward_filter_split_gemm(@builtin(workgroup_id) wg: vec3<u32>,
                                     @builtin(num_workgroups) nwg: vec3<u32>,
                                     @builtin(local_invocation_index) lid: u32) {
    store_cols(gemm(GATHER, wg, nwg, lid));
}

// dW[i] = the sum of the split-K runs' partial dW, in order (one invocation per element).
@compute @workgroup_size(256)
fn conv2d_backward_filter_sum_splits(@builtin(workgroup_id) wg: vec3<u32>,
                                     @builtin(num_workgroups) nwg: vec3<u32>,
                                     @builtin(local_invocation_index) lid: u32) {
    let i = (wg.y * nwg.x + wg.x) * 256u + lid;
    let total = p.groups * p.m * p.n;
    if (i >= total) {
        return;
    }
    let runs = (p.k + p.split_k - 1u) / p.split_k;
    var sum = 0.0;
    for (var z = 0u; z < runs; z += 1u) {
        sum += cols[z * total + i];
    }
    c_dst[p.c_offset + i] = T(sum);
}

@compute @workgroup_size(WG)
fn linear_forward_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}

@compute @workgroup_size(WG)
fn linear_backward_data_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}

@compute @workgroup_size(WG)
fn linear_backward_weight_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                               @builtin(local_invocation_index) lid: u32) {
    store(gemm(GATHER, wg, nwg, lid));
}
