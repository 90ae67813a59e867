// Workgroup sums, for the shaders that include this file (conv2d.wgsl, batchnorm.wgsl; see
// kernels::include). The including shader declares `const WG: u32`, the workgroup size of the
// entry points that reduce (a power of two), and those entry points take a `sub: Sub`
// parameter. `reduce` sums `partial`, `reduce_pair` sums `partial` and `partial2` in one pass:
// each array, filled by every invocation (then a barrier), into its first element, for all
// invocations to read after the call returns. A pipeline keeps only what its entry point uses.

var<workgroup> partial: array<f32, WG>;
var<workgroup> partial2: array<f32, WG>;

// #if subgroups
// Each subgroup adds its values in registers, its first invocation stores the sum at the
// subgroup's index, and the first invocation adds those few sums: two barriers instead of eight.
struct Sub {
    @builtin(subgroup_id) id: u32,
    @builtin(num_subgroups) count: u32,
    @builtin(subgroup_invocation_id) lane: u32,
}

fn reduce(lid: u32, sub: Sub) {
    let a = subgroupAdd(partial[lid]);
    workgroupBarrier();
    if (sub.lane == 0u) {
        partial[sub.id] = a;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var sa = 0.0;
        for (var i = 0u; i < sub.count; i += 1u) {
            sa += partial[i];
        }
        partial[0] = sa;
    }
    workgroupBarrier();
}

fn reduce_pair(lid: u32, sub: Sub) {
    let a = subgroupAdd(partial[lid]);
    let b = subgroupAdd(partial2[lid]);
    workgroupBarrier();
    if (sub.lane == 0u) {
        partial[sub.id] = a;
        partial2[sub.id] = b;
    }
    workgroupBarrier();
    if (lid == 0u) {
        var sa = 0.0;
        var sb = 0.0;
        for (var i = 0u; i < sub.count; i += 1u) {
            sa += partial[i];
            sb += partial2[i];
        }
        partial[0] = sa;
        partial2[0] = sb;
    }
    workgroupBarrier();
}
// #else
// A tree in workgroup memory. `Sub` only keeps the entry points' signatures the same.
struct Sub {
    @builtin(local_invocation_id) unused: vec3<u32>,
}

fn reduce(lid: u32, sub: Sub) {
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
}

fn reduce_pair(lid: u32, sub: Sub) {
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
            partial2[lid] += partial2[lid + s];
        }
        workgroupBarrier();
    }
}
// #endif
