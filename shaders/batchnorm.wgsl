// Batch normalisation over N, H, W per channel: training statistics (two-pass mean and
// variance in one workgroup per channel, running averages updated with the unbiased variance),
// inference with the running statistics, and the backward pass.
alias T = f32;

struct Params {
    total: u32,
    n: u32,
    c: u32,
    hw: u32,
    eps: f32,
    momentum: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
// training forward
@group(0) @binding(1) var<storage, read> tr_x: array<T>;
@group(0) @binding(2) var<storage, read> tr_gamma: array<T>;
@group(0) @binding(3) var<storage, read> tr_beta: array<T>;
@group(0) @binding(4) var<storage, read_write> tr_y: array<T>;
@group(0) @binding(5) var<storage, read_write> tr_mean: array<T>;
@group(0) @binding(6) var<storage, read_write> tr_invstd: array<T>;
@group(0) @binding(7) var<storage, read_write> tr_running_mean: array<T>;
@group(0) @binding(8) var<storage, read_write> tr_running_var: array<T>;
// inference forward
@group(0) @binding(9) var<storage, read> ev_x: array<T>;
@group(0) @binding(10) var<storage, read> ev_gamma: array<T>;
@group(0) @binding(11) var<storage, read> ev_beta: array<T>;
@group(0) @binding(12) var<storage, read> ev_running_mean: array<T>;
@group(0) @binding(13) var<storage, read> ev_running_var: array<T>;
@group(0) @binding(14) var<storage, read_write> ev_y: array<T>;
// backward
@group(0) @binding(15) var<storage, read> bw_x: array<T>;
@group(0) @binding(16) var<storage, read> bw_dy: array<T>;
@group(0) @binding(17) var<storage, read> bw_gamma: array<T>;
@group(0) @binding(18) var<storage, read> bw_mean: array<T>;
@group(0) @binding(19) var<storage, read> bw_invstd: array<T>;
@group(0) @binding(20) var<storage, read_write> bw_dx: array<T>;
@group(0) @binding(21) var<storage, read_write> bw_dgamma: array<T>;
@group(0) @binding(22) var<storage, read_write> bw_dbeta: array<T>;

const WG: u32 = 256u;
// `partial`, `partial2`, `Sub` and `reduce_pair`, the workgroup sums of the statistics and
// of the backward pass.
// #include "lib/reduce.wgsl"

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

fn at(j: u32, c: u32) -> u32 {
    return ((j / p.hw) * p.c + c) * p.hw + j % p.hw;
}

// One workgroup per channel.
@compute @workgroup_size(256)
fn batchnorm_stats(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32, sub: Sub) {
    let c = wg.y * nwg.x + wg.x;
    if (c >= p.c) {
        return;
    }
    let count = p.n * p.hw;
    var acc = 0.0;
    for (var j = lid; j < count; j += WG) {
        acc += f32(tr_x[at(j, c)]);
    }
    partial[lid] = acc;
    partial2[lid] = 0.0;
    workgroupBarrier();
    reduce_pair(lid, sub);
    let mean = partial[0] / f32(count);
    workgroupBarrier();
    var sq = 0.0;
    for (var j = lid; j < count; j += WG) {
        let d = f32(tr_x[at(j, c)]) - mean;
        sq += d * d;
    }
    partial[lid] = sq;
    workgroupBarrier();
    reduce_pair(lid, sub);
    if (lid == 0u) {
        let variance = partial[0] / f32(count);
        tr_mean[c] = T(mean);
        tr_invstd[c] = T(1.0 / sqrt(variance + p.eps));
        let unbias = f32(count) / max(f32(count) - 1.0, 1.0);
        tr_running_mean[c] = T((1.0 - p.momentum) * f32(tr_running_mean[c]) + p.momentum * mean);
        tr_running_var[c] = T((1.0 - p.momentum) * f32(tr_running_var[c]) + p.momentum * variance * unbias);
    }
}

@compute @workgroup_size(256)
fn batchnorm_apply_train(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let c = (i / p.hw) % p.c;
    let xhat = (f32(tr_x[i]) - f32(tr_mean[c])) * f32(tr_invstd[c]);
    tr_y[i] = T(f32(tr_gamma[c]) * xhat + f32(tr_beta[c]));
}

@compute @workgroup_size(256)
fn batchnorm_forward_eval(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let c = (i / p.hw) % p.c;
    let invstd = 1.0 / sqrt(f32(ev_running_var[c]) + p.eps);
    ev_y[i] = T(f32(ev_gamma[c]) * (f32(ev_x[i]) - f32(ev_running_mean[c])) * invstd + f32(ev_beta[c]));
}

// One workgroup per channel: dbeta = sum dy, dgamma = sum dy * xhat.
@compute @workgroup_size(256)
fn batchnorm_backward_reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32, sub: Sub) {
    let c = wg.y * nwg.x + wg.x;
    if (c >= p.c) {
        return;
    }
    let count = p.n * p.hw;
    let mean = f32(bw_mean[c]);
    let invstd = f32(bw_invstd[c]);
    var sum_dy = 0.0;
    var sum_dy_xhat = 0.0;
    for (var j = lid; j < count; j += WG) {
        let k = at(j, c);
        let dy = f32(bw_dy[k]);
        sum_dy += dy;
        sum_dy_xhat += dy * (f32(bw_x[k]) - mean) * invstd;
    }
    partial[lid] = sum_dy;
    partial2[lid] = sum_dy_xhat;
    workgroupBarrier();
    reduce_pair(lid, sub);
    if (lid == 0u) {
        bw_dbeta[c] = T(partial[0]);
        bw_dgamma[c] = T(partial2[0]);
    }
}

@compute @workgroup_size(256)
fn batchnorm_backward_data(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let c = (i / p.hw) % p.c;
    let count = f32(p.n * p.hw);
    let invstd = f32(bw_invstd[c]);
    let xhat = (f32(bw_x[i]) - f32(bw_mean[c])) * invstd;
    // dgamma and dbeta were written by batchnorm_backward_reduce in the previous dispatch.
    let g = f32(bw_gamma[c]) * invstd / count;
    bw_dx[i] = T(g * (count * f32(bw_dy[i]) - f32(bw_dbeta[c]) - xhat * f32(bw_dgamma[c])));
}
