// Direct 2-d convolution, NCHW, forward / backward-data / backward-filter / bias gradient.
// The correctness baseline: one invocation per output element, f32 accumulation.
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

// forward: x, weight, bias -> y
@group(0) @binding(1) var<storage, read> fwd_x: array<T>;
@group(0) @binding(2) var<storage, read> fwd_w: array<T>;
@group(0) @binding(3) var<storage, read> fwd_bias: array<T>;
@group(0) @binding(4) var<storage, read_write> fwd_y: array<T>;

// backward data: dy, weight -> dx
@group(0) @binding(5) var<storage, read> bd_dy: array<T>;
@group(0) @binding(6) var<storage, read> bd_w: array<T>;
@group(0) @binding(7) var<storage, read_write> bd_dx: array<T>;

// backward filter: x, dy -> dw ; bias gradient: dy -> dbias
@group(0) @binding(8) var<storage, read> bf_x: array<T>;
@group(0) @binding(9) var<storage, read> bf_dy: array<T>;
@group(0) @binding(10) var<storage, read_write> bf_dw: array<T>;
@group(0) @binding(11) var<storage, read_write> bf_dbias: array<T>;

const WG: u32 = 256u;
// `partial`, `Sub` and `reduce`, the workgroup sum of the bias gradient.
// #include "lib/reduce.wgsl"

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

// Input row (or column) of output `o` at kernel tap `k`, or -1 when it falls in the padding.
fn tap(o: u32, k: u32, stride: u32, pad: u32, dil: u32, size: u32) -> i32 {
    let i = i32(o * stride + k * dil) - i32(pad);
    if (i < 0 || i >= i32(size)) {
        return -1;
    }
    return i;
}

@compute @workgroup_size(256)
fn conv2d_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let ow = i % p.ow;
    let oh = (i / p.ow) % p.oh;
    let oc = (i / (p.ow * p.oh)) % p.cout;
    let n = i / (p.ow * p.oh * p.cout);
    let cin_g = p.cin / p.groups;
    let group = oc / (p.cout / p.groups);
    var acc = 0.0;
    if (p.has_bias != 0u) {
        acc = f32(fwd_bias[oc]);
    }
    for (var icl = 0u; icl < cin_g; icl += 1u) {
        let xbase = (n * p.cin + group * cin_g + icl) * p.h * p.w;
        let wbase = (oc * cin_g + icl) * p.kh * p.kw;
        for (var ki = 0u; ki < p.kh; ki += 1u) {
            let ih = tap(oh, ki, p.sh, p.ph, p.dh, p.h);
            if (ih < 0) {
                continue;
            }
            for (var kj = 0u; kj < p.kw; kj += 1u) {
                let iw = tap(ow, kj, p.sw, p.pw, p.dw, p.w);
                if (iw < 0) {
                    continue;
                }
                acc += f32(fwd_x[xbase + u32(ih) * p.w + u32(iw)]) * f32(fwd_w[wbase + ki * p.kw + kj]);
            }
        }
    }
    fwd_y[i] = T(acc);
}

// Output row that reads input row `i` at tap `k`, or -1 when none does.
fn source(i: u32, k: u32, stride: u32, pad: u32, dil: u32, out_size: u32) -> i32 {
    let t = i32(i + pad) - i32(k * dil);
    if (t < 0 || u32(t) % stride != 0u) {
        return -1;
    }
    let o = u32(t) / stride;
    if (o >= out_size) {
        return -1;
    }
    return i32(o);
}

@compute @workgroup_size(256)
fn conv2d_backward_data(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let iw = i % p.w;
    let ih = (i / p.w) % p.h;
    let ic = (i / (p.w * p.h)) % p.cin;
    let n = i / (p.w * p.h * p.cin);
    let cin_g = p.cin / p.groups;
    let cout_g = p.cout / p.groups;
    let group = ic / cin_g;
    let icl = ic % cin_g;
    var acc = 0.0;
    for (var ocl = 0u; ocl < cout_g; ocl += 1u) {
        let oc = group * cout_g + ocl;
        let ybase = (n * p.cout + oc) * p.oh * p.ow;
        let wbase = (oc * cin_g + icl) * p.kh * p.kw;
        for (var ki = 0u; ki < p.kh; ki += 1u) {
            let oh = source(ih, ki, p.sh, p.ph, p.dh, p.oh);
            if (oh < 0) {
                continue;
            }
            for (var kj = 0u; kj < p.kw; kj += 1u) {
                let ow = source(iw, kj, p.sw, p.pw, p.dw, p.ow);
                if (ow < 0) {
                    continue;
                }
                acc += f32(bd_dy[ybase + u32(oh) * p.ow + u32(ow)]) * f32(bd_w[wbase + ki * p.kw + kj]);
            }
        }
    }
    bd_dx[i] = T(acc);
}

@compute @workgroup_size(256)
fn conv2d_backward_filter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let cin_g = p.cin / p.groups;
    let kj = i % p.kw;
    let ki = (i / p.kw) % p.kh;
    let icl = (i / (p.kw * p.kh)) % cin_g;
    let oc = i / (p.kw * p.kh * cin_g);
    let ic = (oc / (p.cout / p.groups)) * cin_g + icl;
    var acc = 0.0;
    for (var n = 0u; n < p.n; n += 1u) {
        let xbase = (n * p.cin + ic) * p.h * p.w;
        let ybase = (n * p.cout + oc) * p.oh * p.ow;
        for (var oh = 0u; oh < p.oh; oh += 1u) {
            let ih = tap(oh, ki, p.sh, p.ph, p.dh, p.h);
            if (ih < 0) {
                continue;
            }
            for (var ow = 0u; ow < p.ow; ow += 1u) {
                let iw = tap(ow, kj, p.sw, p.pw, p.dw, p.w);
                if (iw < 0) {
                    continue;
                }
                acc += f32(bf_dy[ybase + oh * p.ow + ow]) * f32(bf_x[xbase + u32(ih) * p.w + u32(iw)]);
            }
        }
    }
    bf_dw[i] = T(acc);
}

// One workgroup per output channel: the sum of dy over batch and pixels.
@compute @workgroup_size(256)
fn conv2d_backward_bias(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32, sub: Sub) {
    let oc = wg.y * nwg.x + wg.x;
    if (oc >= p.cout) {
        return;
    }
    let plane = p.oh * p.ow;
    var acc = 0.0;
    for (var j = lid; j < p.n * plane; j += WG) {
        let n = j / plane;
        acc += f32(bf_dy[(n * p.cout + oc) * plane + j % plane]);
    }
    partial[lid] = acc;
    workgroupBarrier();
    reduce(lid, sub);
    if (lid == 0u) {
        bf_dbias[oc] = T(partial[0]);
    }
}
