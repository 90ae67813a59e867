// Fully connected layer, y = x W^T + b with W as [out, in]: forward, input gradient, weight
// and bias gradients. One invocation per output element (the correctness baseline).
// Output rows are `y_stride` long and this op owns columns [y_offset, y_offset + out_features),
// so a layer too large for one storage binding runs as several column slices.
alias T = f32;

struct Params {
    total: u32,
    batch: u32,
    in_features: u32,
    out_features: u32,
    has_bias: u32,
    y_stride: u32,
    y_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> fwd_x: array<T>;
@group(0) @binding(2) var<storage, read> fwd_w: array<T>;
@group(0) @binding(3) var<storage, read> fwd_bias: array<T>;
@group(0) @binding(4) var<storage, read_write> fwd_y: array<T>;
@group(0) @binding(5) var<storage, read> bd_dy: array<T>;
@group(0) @binding(6) var<storage, read> bd_w: array<T>;
@group(0) @binding(7) var<storage, read_write> bd_dx: array<T>;
@group(0) @binding(8) var<storage, read> bp_x: array<T>;
@group(0) @binding(9) var<storage, read> bp_dy: array<T>;
@group(0) @binding(10) var<storage, read_write> bp_dw: array<T>;
@group(0) @binding(11) var<storage, read_write> bp_dbias: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

@compute @workgroup_size(256)
fn linear_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let o = i % p.out_features;
    let n = i / p.out_features;
    var acc = 0.0;
    if (p.has_bias != 0u) {
        acc = f32(fwd_bias[o]);
    }
    for (var k = 0u; k < p.in_features; k += 1u) {
        acc += f32(fwd_x[n * p.in_features + k]) * f32(fwd_w[o * p.in_features + k]);
    }
    fwd_y[n * p.y_stride + p.y_offset + o] = T(acc);
}

@compute @workgroup_size(256)
fn linear_backward_data(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let k = i % p.in_features;
    let n = i / p.in_features;
    var acc = 0.0;
    for (var o = 0u; o < p.out_features; o += 1u) {
        acc += f32(bd_dy[n * p.y_stride + p.y_offset + o]) * f32(bd_w[o * p.in_features + k]);
    }
    bd_dx[i] = T(acc);
}

@compute @workgroup_size(256)
fn linear_backward_weight(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let k = i % p.in_features;
    let o = i / p.in_features;
    var acc = 0.0;
    for (var n = 0u; n < p.batch; n += 1u) {
        acc += f32(bp_dy[n * p.y_stride + p.y_offset + o]) * f32(bp_x[n * p.in_features + k]);
    }
    bp_dw[i] = T(acc);
}

@compute @workgroup_size(256)
fn linear_backward_bias(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
    let o = linear_id(wg, nwg, lid);
    if (o >= p.out_features) {
        return;
    }
    var acc = 0.0;
    for (var n = 0u; n < p.batch; n += 1u) {
        acc += f32(bp_dy[n * p.y_stride + p.y_offset + o]);
    }
    bp_dbias[o] = T(acc);
}
