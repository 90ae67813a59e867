// Calibration kernels for the roofline (`cargo convbench adapters --calibrate`): the highest
// f32 arithmetic rate and memory bandwidth a WGSL kernel reaches on the adapter.
//
// `peak_flops`: every invocation runs eight independent vec4 fused multiply-add chains for
// `p.iterations` steps (2 FLOPs per lane per step), enough independent work to hide the FMA
// latency on GPUs and to fill a CPU's vector registers on software adapters. The operands come
// from the params so that nothing folds at compile time, and the sum is stored so that nothing
// is dead.
//
// `peak_bandwidth`: a grid-stride copy of `p.count` vec4s from one buffer to another: every
// element read once and written once, 32 bytes moved per vec4.
alias T = f32;

struct Params {
    iterations: u32,
    count: u32,
    a: f32,
    b: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn peak_flops(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    // `src` holds zeros; reading it keeps the binding in the layout and the seed unknown to
    // the compiler.
    let seed = f32(gid.x) * 1e-7 + src[0].x;
    let a = vec4<f32>(p.a);
    let b = vec4<f32>(p.b);
    // Eight named chains rather than an array: an array indexed by a loop counter may be
    // lowered to memory, which would measure loads and stores instead of arithmetic.
    var c0 = vec4<f32>(seed, seed + 1.0, seed + 2.0, seed + 3.0);
    var c1 = c0 + 4.0;
    var c2 = c0 + 8.0;
    var c3 = c0 + 12.0;
    var c4 = c0 - 4.0;
    var c5 = c0 - 8.0;
    var c6 = c0 - 12.0;
    var c7 = c0 - 16.0;
    for (var i = 0u; i < p.iterations; i += 1u) {
        c0 = fma(c0, a, b);
        c1 = fma(c1, a, b);
        c2 = fma(c2, a, b);
        c3 = fma(c3, a, b);
        c4 = fma(c4, a, b);
        c5 = fma(c5, a, b);
        c6 = fma(c6, a, b);
        c7 = fma(c7, a, b);
    }
    // One slot per invocation (the buffer holds one vec4 per invocation).
    dst[gid.x % arrayLength(&dst)] = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
}

@compute @workgroup_size(256)
fn peak_bandwidth(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let stride = nwg.x * 256u;
    for (var i = gid.x; i < p.count; i += stride) {
        dst[i] = src[i];
    }
}
