// Cross-channel local response normalisation (AlexNet, GoogLeNet), Caffe/Torch formulation:
// scale = k + alpha / size * sum over the window of x^2, y = x * scale^-beta. The window of
// channel c is PyTorch's [c - size / 2, c + (size - 1) / 2] (an even size reaches one channel
// further down than up).
alias T = f32;

struct Params {
    total: u32,
    c: u32,
    hw: u32,
    size: u32,
    alpha_over_size: f32,
    beta: f32,
    k: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> fwd_x: array<T>;
@group(0) @binding(2) var<storage, read_write> fwd_y: array<T>;
@group(0) @binding(3) var<storage, read_write> fwd_scale: array<T>;
@group(0) @binding(4) var<storage, read> bwd_x: array<T>;
@group(0) @binding(5) var<storage, read> bwd_y: array<T>;
@group(0) @binding(6) var<storage, read> bwd_scale: array<T>;
@group(0) @binding(7) var<storage, read> bwd_dy: array<T>;
@group(0) @binding(8) var<storage, read_write> bwd_dx: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

@compute @workgroup_size(256)
fn lrn_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let q = i % p.hw;
    let c = (i / p.hw) % p.c;
    let n = i / (p.hw * p.c);
    let lo = u32(max(i32(c) - i32(p.size / 2u), 0));
    let hi = min(c + (p.size - 1u) / 2u + 1u, p.c);
    var sq = 0.0;
    for (var cc = lo; cc < hi; cc += 1u) {
        let v = f32(fwd_x[(n * p.c + cc) * p.hw + q]);
        sq += v * v;
    }
    let scale = p.k + p.alpha_over_size * sq;
    fwd_scale[i] = T(scale);
    fwd_y[i] = T(f32(fwd_x[i]) * pow(scale, -p.beta));
}

@compute @workgroup_size(256)
fn lrn_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let q = i % p.hw;
    let c = (i / p.hw) % p.c;
    let n = i / (p.hw * p.c);
    // Channels whose window contains c: [c - (size - 1) / 2, c + size / 2].
    let lo = u32(max(i32(c) - i32((p.size - 1u) / 2u), 0));
    let hi = min(c + p.size / 2u + 1u, p.c);
    var acc = 0.0;
    for (var cc = lo; cc < hi; cc += 1u) {
        let j = (n * p.c + cc) * p.hw + q;
        acc += f32(bwd_dy[j]) * f32(bwd_y[j]) / f32(bwd_scale[j]);
    }
    let factor = 2.0 * p.alpha_over_size * p.beta;
    bwd_dx[i] = T(f32(bwd_dy[i]) * pow(f32(bwd_scale[i]), -p.beta) - factor * f32(bwd_x[i]) * acc);
}
