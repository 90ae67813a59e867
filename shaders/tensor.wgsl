// Tensor plumbing: channel-slice copies (concatenation and its split), elementwise addition
// (residual connections, gradient sums at a fan-out), global average pooling.
alias T = f32;

struct Params {
    total: u32,
    hw: u32,
    total_channels: u32,
    part_channels: u32,
    offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> concat_src: array<T>;
@group(0) @binding(2) var<storage, read_write> concat_dst: array<T>;
@group(0) @binding(3) var<storage, read> split_src: array<T>;
@group(0) @binding(4) var<storage, read_write> split_dst: array<T>;
@group(0) @binding(5) var<storage, read> add_a: array<T>;
@group(0) @binding(6) var<storage, read> add_b: array<T>;
@group(0) @binding(7) var<storage, read_write> add_y: array<T>;
@group(0) @binding(8) var<storage, read> gap_x: array<T>;
@group(0) @binding(9) var<storage, read_write> gap_y: array<T>;
@group(0) @binding(10) var<storage, read> gap_dy: array<T>;
@group(0) @binding(11) var<storage, read_write> gap_dx: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

// Index in the concatenated tensor of element i of the part.
fn concat_index(i: u32) -> u32 {
    let per_image = p.part_channels * p.hw;
    return (i / per_image) * p.total_channels * p.hw + p.offset * p.hw + i % per_image;
}

@compute @workgroup_size(256)
fn concat_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    concat_dst[concat_index(i)] = concat_src[i];
}

@compute @workgroup_size(256)
fn split_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    split_dst[i] = split_src[concat_index(i)];
}

@compute @workgroup_size(256)
fn add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    add_y[i] = T(f32(add_a[i]) + f32(add_b[i]));
}

// One invocation per (image, channel).
@compute @workgroup_size(256)
fn global_avgpool_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    var acc = 0.0;
    for (var q = 0u; q < p.hw; q += 1u) {
        acc += f32(gap_x[i * p.hw + q]);
    }
    gap_y[i] = T(acc / f32(p.hw));
}

@compute @workgroup_size(256)
fn global_avgpool_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    gap_dx[i] = T(f32(gap_dy[i / p.hw]) / f32(p.hw));
}
