// Rectified linear unit, forward and backward (the gradient passes where the output is positive).
alias T = f32;

struct Params {
    total: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> fwd_x: array<T>;
@group(0) @binding(2) var<storage, read_write> fwd_y: array<T>;
@group(0) @binding(3) var<storage, read> bwd_y: array<T>;
@group(0) @binding(4) var<storage, read> bwd_dy: array<T>;
@group(0) @binding(5) var<storage, read_write> bwd_dx: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

@compute @workgroup_size(256)
fn relu_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    fwd_y[i] = max(fwd_x[i], T(0.0));
}

@compute @workgroup_size(256)
fn relu_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    bwd_dx[i] = select(T(0.0), bwd_dy[i], bwd_y[i] > T(0.0));
}
