// Max and average pooling, NCHW, Torch semantics (ceil mode, padding, count_include_pad).
// Max pooling follows PyTorch: a window holding a NaN pools to NaN (its gradient goes to the last
// NaN), otherwise to its first maximum. The backward pass recomputes that element from the
// input, so the forward pass stores no indices and ties resolve exactly as in the reference.
alias T = f32;

struct Params {
    total: u32,
    planes: u32,
    h: u32, w: u32,
    oh: u32, ow: u32,
    kh: u32, kw: u32,
    sh: u32, sw: u32,
    ph: u32, pw: u32,
    is_max: u32,
    count_include_pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> fwd_x: array<T>;
@group(0) @binding(2) var<storage, read_write> fwd_y: array<T>;
@group(0) @binding(3) var<storage, read> bwd_x: array<T>;
@group(0) @binding(4) var<storage, read> bwd_dy: array<T>;
@group(0) @binding(5) var<storage, read_write> bwd_dx: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

// (first row, end row, divisor span) of window `o` along one axis.
fn window(o: u32, k: u32, s: u32, pad: u32, size: u32) -> vec3<i32> {
    let start = i32(o * s) - i32(pad);
    let end_padded = min(start + i32(k), i32(size + pad));
    let span = end_padded - start;
    return vec3<i32>(max(start, 0), max(min(end_padded, i32(size)), 0), span);
}

fn divisor(hw: vec3<i32>, ww: vec3<i32>) -> f32 {
    if (p.count_include_pad != 0u) {
        return f32(max(hw.z * ww.z, 1));
    }
    return f32(max((hw.y - hw.x) * (ww.y - ww.x), 1));
}

// Whether the scan of a window moves from `best` to `v`: PyTorch's `v > best || isnan(v)`. The
// NaN test reads the bits, since a compiler may fold `v != v` to false.
fn takes(v: f32, best: f32) -> bool {
    return v > best || is_nan(v);
}

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// Flat index within the plane of the element window (oh, ow) pools (see `takes`), from `fwd_x`
// or `bwd_x`.
fn argmax_fwd(base: u32, hw: vec3<i32>, ww: vec3<i32>) -> u32 {
    var best = u32(hw.x) * p.w + u32(ww.x);
    var best_v = f32(fwd_x[base + best]);
    for (var ih = hw.x; ih < hw.y; ih += 1) {
        for (var iw = ww.x; iw < ww.y; iw += 1) {
            let at = u32(ih) * p.w + u32(iw);
            let v = f32(fwd_x[base + at]);
            if (takes(v, best_v)) {
                best_v = v;
                best = at;
            }
        }
    }
    return best;
}

// Whether the window (hw, ww) of `bwd_x` chooses the element at `here` (flat index within the
// plane), i.e. `argmax == here` for the scan of `argmax_fwd`, without finishing the scan: the
// scan moves to `here` unless an element before it is a NaN or at least as large (a NaN always
// moves it), and stays unless an element after it takes over (`takes`). It stops at the first
// element that rules `here` out: on inputs in no particular order that is a few reads into each
// window that covers `here`, where finishing the scan reads the window's area (256 for a 16x16
// window). A window's chosen element, and every element of a window whose values rise in scan
// order, still reads the whole window.
fn chooses(base: u32, hw: vec3<i32>, ww: vec3<i32>, here: u32) -> bool {
    let v = f32(bwd_x[base + here]);
    let v_is_nan = is_nan(v);
    for (var ih = hw.x; ih < hw.y; ih += 1) {
        for (var iw = ww.x; iw < ww.y; iw += 1) {
            let at = u32(ih) * p.w + u32(iw);
            let u = f32(bwd_x[base + at]);
            if (at < here) {
                if (!v_is_nan && (u >= v || is_nan(u))) {
                    return false;
                }
            } else if (at > here && takes(u, v)) {
                return false;
            }
        }
    }
    return true;
}

@compute @workgroup_size(256)
fn pool_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let ow = i % p.ow;
    let oh = (i / p.ow) % p.oh;
    let plane = i / (p.ow * p.oh);
    let base = plane * p.h * p.w;
    let hw = window(oh, p.kh, p.sh, p.ph, p.h);
    let ww = window(ow, p.kw, p.sw, p.pw, p.w);
    if (p.is_max != 0u) {
        fwd_y[i] = fwd_x[base + argmax_fwd(base, hw, ww)];
        return;
    }
    var acc = 0.0;
    for (var ih = hw.x; ih < hw.y; ih += 1) {
        for (var iw = ww.x; iw < ww.y; iw += 1) {
            acc += f32(fwd_x[base + u32(ih) * p.w + u32(iw)]);
        }
    }
    fwd_y[i] = T(acc / divisor(hw, ww));
}

// Gather form: each input element sums the gradients of the windows that chose it.
@compute @workgroup_size(256)
fn pool_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let iw = i % p.w;
    let ih = (i / p.w) % p.h;
    let plane = i / (p.w * p.h);
    let base = plane * p.h * p.w;
    let obase = plane * p.oh * p.ow;
    let here = ih * p.w + iw;
    // Windows o with o*s - pad <= i < o*s - pad + k.
    let oh_lo = u32(max(i32(ih + p.ph) - i32(p.kh) + i32(p.sh), 0)) / p.sh;
    let oh_hi = min((ih + p.ph) / p.sh + 1u, p.oh);
    let ow_lo = u32(max(i32(iw + p.pw) - i32(p.kw) + i32(p.sw), 0)) / p.sw;
    let ow_hi = min((iw + p.pw) / p.sw + 1u, p.ow);
    var acc = 0.0;
    for (var oh = oh_lo; oh < oh_hi; oh += 1u) {
        let hw = window(oh, p.kh, p.sh, p.ph, p.h);
        for (var ow = ow_lo; ow < ow_hi; ow += 1u) {
            let ww = window(ow, p.kw, p.sw, p.pw, p.w);
            let g = f32(bwd_dy[obase + oh * p.ow + ow]);
            if (p.is_max != 0u) {
                if (chooses(base, hw, ww, here)) {
                    acc += g;
                }
            } else {
                acc += g / divisor(hw, ww);
            }
        }
    }
    bwd_dx[i] = T(acc);
}
