// A plain conv2d_forward: one invocation per output element, f32 accumulation.
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

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wg.y * nwg.x + wg.x) * WG + lid;
    if (i >= p.total) {
        return;
    }
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
                if (ix < 0 || ix >= i32(p.w)) {
                    continue;
                }
                let xv = f32(x[((n * p.cin + ci) * p.h + u32(iy)) * p.w + u32(ix)]);
                let wv = f32(w[((oc * cin_g + c) * p.kh + ky) * p.kw + kx]);
                acc += xv * wv;
            }
        }
    }
    y[i] = T(acc);
}
