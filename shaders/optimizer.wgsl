// SGD with momentum and L2 weight decay, Torch's formulation:
// v = momentum * v + (grad + weight_decay * w); w = w - lr * v.
alias T = f32;

struct Params {
    total: u32,
    lr: f32,
    momentum: f32,
    weight_decay: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<T>;
@group(0) @binding(2) var<storage, read_write> weight: array<T>;
@group(0) @binding(3) var<storage, read_write> velocity: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

@compute @workgroup_size(256)
fn sgd_update(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let w = f32(weight[i]);
    let v = p.momentum * f32(velocity[i]) + f32(grad[i]) + p.weight_decay * w;
    velocity[i] = T(v);
    weight[i] = T(w - p.lr * v);
}
