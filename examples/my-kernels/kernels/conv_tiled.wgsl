// A register-tiled conv2d_forward: each invocation computes four consecutive output elements
// (usually four neighbours along a row, which share every weight), so each weight is loaded once
// for four multiply-adds. A workgroup of 64 covers 256 outputs: `outputs-per-invocation = 4`.
// The contract (bindings, Params, dispatch rule): `cargo convbench kernels --contract conv2d_forward`.
alias T = f32;

struct Params {
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

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> w: array<T>;
@group(0) @binding(3) var<storage, read> bias: array<T>;
@group(0) @binding(4) var<storage, read_write> y: array<T>;

const WG: u32 = 64u;
const TILE: u32 = 4u;

// One output element, computed alone (the tile's edges: rows shorter than the tile).
fn single(i: u32) -> f32 {
    let ox = i % p.ow;
    let oy = (i / p.ow) % p.oh;
    let oc = (i / (p.ow * p.oh)) % p.cout;
    let n = i / (p.ow * p.oh * p.cout);
    let cin_g = p.cin / p.groups;
    let group = oc / (p.cout / p.groups);
    var acc = 0.0;
    if (p.has_bias != 0u) {
        acc = f32(bias[oc]);
    }
    for (var c = 0u; c < cin_g; c += 1u) {
        let ci = group * cin_g + c;
        for (var ky = 0u; ky < p.kh; ky += 1u) {
            let iy = i32(oy * p.sh + ky * p.dh) - i32(p.ph);
            if (iy < 0 || iy >= i32(p.h)) {
                continue;
            }
            for (var kx = 0u; kx < p.kw; kx += 1u) {
                let ix = i32(ox * p.sw + kx * p.dw) - i32(p.pw);
                if (ix >= 0 && ix < i32(p.w)) {
                    acc += f32(x[((n * p.cin + ci) * p.h + u32(iy)) * p.w + u32(ix)])
                        * f32(w[((oc * cin_g + c) * p.kh + ky) * p.kw + kx]);
                }
            }
        }
    }
    return acc;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = ((wg.y * nwg.x + wg.x) * WG + lid) * TILE;
    if (first >= p.total) {
        return;
    }
    let ox = first % p.ow;
    if (ox + TILE > p.ow || first + TILE > p.total) {
        for (var t = 0u; t < TILE; t += 1u) {
            if (first + t < p.total) {
                y[first + t] = T(single(first + t));
            }
        }
        return;
    }
    // Four neighbours of one row: same image, channel and weights.
    let oy = (first / p.ow) % p.oh;
    let oc = (first / (p.ow * p.oh)) % p.cout;
    let n = first / (p.ow * p.oh * p.cout);
    let cin_g = p.cin / p.groups;
    let group = oc / (p.cout / p.groups);
    var acc = vec4<f32>(0.0);
    if (p.has_bias != 0u) {
        acc = vec4<f32>(f32(bias[oc]));
    }
    for (var c = 0u; c < cin_g; c += 1u) {
        let ci = group * cin_g + c;
        for (var ky = 0u; ky < p.kh; ky += 1u) {
            let iy = i32(oy * p.sh + ky * p.dh) - i32(p.ph);
            if (iy < 0 || iy >= i32(p.h)) {
                continue;
            }
            let row = ((n * p.cin + ci) * p.h + u32(iy)) * p.w;
            for (var kx = 0u; kx < p.kw; kx += 1u) {
                let wv = f32(w[((oc * cin_g + c) * p.kh + ky) * p.kw + kx]);
                var xv = vec4<f32>(0.0);
                for (var t = 0u; t < TILE; t += 1u) {
                    let ix = i32((ox + t) * p.sw + kx * p.dw) - i32(p.pw);
                    if (ix >= 0 && ix < i32(p.w)) {
                        xv[t] = f32(x[row + u32(ix)]);
                    }
                }
                acc += xv * wv;
            }
        }
    }
    for (var t = 0u; t < TILE; t += 1u) {
        y[first + t] = T(acc[t]);
    }
}
