// Softmax with cross-entropy: the forward writes each image's loss and the probabilities; the
// backward is the gradient of the mean loss over the batch, (p - onehot) / batch.
alias T = f32;

struct Params {
    total: u32,
    batch: u32,
    classes: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> fwd_logits: array<T>;
@group(0) @binding(2) var<storage, read> fwd_labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> fwd_loss: array<T>;
@group(0) @binding(4) var<storage, read_write> fwd_probs: array<T>;
@group(0) @binding(5) var<storage, read> bwd_probs: array<T>;
@group(0) @binding(6) var<storage, read> bwd_labels: array<u32>;
@group(0) @binding(7) var<storage, read_write> bwd_dlogits: array<T>;

const WG: u32 = 256u;

fn linear_id(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wg.y * nwg.x + wg.x) * WG + lid;
}

// One invocation per image.
@compute @workgroup_size(256)
fn softmax_cross_entropy_forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                 @builtin(local_invocation_index) lid: u32) {
    let n = linear_id(wg, nwg, lid);
    if (n >= p.batch) {
        return;
    }
    let base = n * p.classes;
    var m = f32(fwd_logits[base]);
    for (var k = 1u; k < p.classes; k += 1u) {
        m = max(m, f32(fwd_logits[base + k]));
    }
    var s = 0.0;
    for (var k = 0u; k < p.classes; k += 1u) {
        s += exp(f32(fwd_logits[base + k]) - m);
    }
    let lse = m + log(s);
    for (var k = 0u; k < p.classes; k += 1u) {
        fwd_probs[base + k] = T(exp(f32(fwd_logits[base + k]) - lse));
    }
    // Labels are checked below the class count when written (PyTorch raises on one at or above
    // it). Should one reach this kernel anyway, its loss is NaN, not another class's, and no
    // logit outside the row is read. The NaN's bits come from the label, a runtime value: a
    // constant expression that evaluates to NaN is a shader-creation error in WGSL (Tint rejects
    // `bitcast<f32>(0x7fc00000u)`). Any label leaves the exponent all ones and the quiet bit set.
    let label = fwd_labels[n];
    let picked = f32(fwd_logits[base + min(label, p.classes - 1u)]);
    let nan = bitcast<f32>(0x7fc00000u | label);
    fwd_loss[n] = T(select(lse - picked, nan, label >= p.classes));
}

@compute @workgroup_size(256)
fn softmax_cross_entropy_backward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                  @builtin(local_invocation_index) lid: u32) {
    let i = linear_id(wg, nwg, lid);
    if (i >= p.total) {
        return;
    }
    let k = i % p.classes;
    let n = i / p.classes;
    // A label out of range (see the forward pass) matches no class.
    let onehot = select(0.0, 1.0, bwd_labels[n] == k);
    bwd_dlogits[i] = T((f32(bwd_probs[i]) - onehot) / f32(p.batch));
}
