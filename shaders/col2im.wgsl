// Backward data's second step after gemm.wgsl's conv2d_backward_data_cols_gemm: dx from the
// column matrix dcol = W^T x dY. One invocation per element of dx.
alias T = f32;

struct Params {
    // Elements of dx this dispatch writes: `n` images from image `n0`.
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

@group(0) @binding(0) var<uniform> p: Params;
// The column matrix of the chunk's `n` images, f32: row c * kh * kw + tap, column
// (n * oh + oh) * ow + ow.
@group(0) @binding(1) var<storage, read> cols: array<f32>;
@group(0) @binding(2) var<storage, read_write> dx: array<T>;

const WG: u32 = 256u;
// dx[n0 + n, c, ih, iw] is the sum of the column matrix's entries [(c, kh, kw), (n, oh, ow)] of
// the taps that read x[.., ih, iw] in the forward pass, i.e. oh * sh + kh * dh = ih + ph (and
// alike for the width). The loops run over the output rows and columns that a tap can reach, so
// no division happens per tap unless the kernel is dilated.
fn taps_from(t: u32, k: u32, stride: u32, dil: u32, out_size: u32) -> vec2<u32> {
    // Output positions o with t - o * stride in [0, (k - 1) * dil]: [lo, hi).
    let reach = (k - 1u) * dil;
    var lo = 0u;
    if (t > reach) {
        lo = (t - reach + stride - 1u) / stride;
    }
    let hi = min(t / stride + 1u, out_size);
    return vec2<u32>(lo, max(lo, hi));
}

@compute @workgroup_size(WG)
fn conv2d_col2im(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let i = (wg.y * nwg.x + wg.x) * WG + lid;
    if (i >= p.total) {
        return;
    }
    let iw = i % p.w;
    let ih = (i / p.w) % p.h;
    let c = (i / (p.w * p.h)) % p.cin;
    let n = i / (p.w * p.h * p.cin);
    let ty = ih + p.ph;
    let tx = iw + p.pw;
    let rows = taps_from(ty, p.kh, p.sh, p.dh, p.oh);
    let columns = taps_from(tx, p.kw, p.sw, p.dw, p.ow);
    let row_stride = p.n * p.oh * p.ow;
    let base = c * p.kh * p.kw * row_stride + n * p.oh * p.ow;
    var acc = 0.0;
    for (var oh = rows.x; oh < rows.y; oh += 1u) {
        var kh = ty - oh * p.sh;
        if (p.dh != 1u) {
            if (kh % p.dh != 0u) {
                continue;
            }
            kh /= p.dh;
        }
        let row = base + kh * p.kw * row_stride + oh * p.ow;
        for (var ow = columns.x; ow < columns.y; ow += 1u) {
            var kw = tx - ow * p.sw;
            if (p.dw != 1u) {
                if (kw % p.dw != 0u) {
                    continue;
                }
                kw /= p.dw;
            }
            acc += cols[row + kw * row_stride + ow];
        }
    }
    dx[((p.n0 + n) * p.cin + c) * p.h * p.w + ih * p.w + iw] = T(acc);
}
