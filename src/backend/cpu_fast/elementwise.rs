//! The cheap ops of every training step (ReLU, softmax cross-entropy, SGD) with the reference's
//! arithmetic in the same order, so results are identical, but run on the calling thread when
//! small: handing a few thousand elements to rayon's pool costs more than computing them
//! (LeNet's update is eight such calls).

use rayon::prelude::*;

/// Elements below which an op runs on the calling thread; above, in chunks of this size.
const SEQUENTIAL_BELOW: usize = 1 << 15;

/// Applies `f` to the elements of `out` with the matching elements of `a` and `b`, on the
/// calling thread when short, else in parallel chunks.
fn zip3(out: &mut [f32], a: &[f32], b: &[f32], f: impl Fn(&mut f32, f32, f32) + Sync) {
    let run = |out: &mut [f32], a: &[f32], b: &[f32]| {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            f(o, x, y);
        }
    };
    if out.len() < SEQUENTIAL_BELOW {
        run(out, a, b);
    } else {
        out.par_chunks_mut(SEQUENTIAL_BELOW)
            .zip(a.par_chunks(SEQUENTIAL_BELOW).zip(b.par_chunks(SEQUENTIAL_BELOW)))
            .for_each(|(out, (a, b))| run(out, a, b));
    }
}

/// `x -> y = max(x, 0)`, NaN passed through as in the reference.
pub(super) fn relu_forward(x: &[f32], y: &mut [f32]) {
    zip3(y, x, x, |y, x, _| {
        *y = if x > 0.0 || x.is_nan() { x } else { 0.0 }
    });
}

/// `y, dy -> dx`: the gradient passes where the forward output is positive.
pub(super) fn relu_backward(y: &[f32], dy: &[f32], dx: &mut [f32]) {
    zip3(dx, y, dy, |dx, y, dy| *dx = if y > 0.0 { dy } else { 0.0 });
}

/// `grad, weight, velocity`: `v = momentum * v + grad + weight_decay * w; w -= lr * v`.
pub(super) fn sgd_update(
    lr: f32,
    momentum: f32,
    weight_decay: f32,
    grad: &[f32],
    weight: &mut [f32],
    velocity: &mut [f32],
) {
    let run = |weight: &mut [f32], velocity: &mut [f32], grad: &[f32]| {
        for ((w, v), &g) in weight.iter_mut().zip(velocity.iter_mut()).zip(grad) {
            *v = momentum * *v + g + weight_decay * *w;
            *w -= lr * *v;
        }
    };
    if weight.len() < SEQUENTIAL_BELOW {
        run(weight, velocity, grad);
    } else {
        weight
            .par_chunks_mut(SEQUENTIAL_BELOW)
            .zip(
                velocity
                    .par_chunks_mut(SEQUENTIAL_BELOW)
                    .zip(grad.par_chunks(SEQUENTIAL_BELOW)),
            )
            .for_each(|(w, (v, g))| run(w, v, g));
    }
}

/// Rows of `classes` per parallel task of the loss: small batches run on the calling thread.
fn rows_per_task(classes: usize) -> usize {
    (SEQUENTIAL_BELOW / classes.max(1)).max(1)
}

/// `logits, labels -> loss (per image), probabilities`.
pub(super) fn softmax_cross_entropy_forward(
    classes: usize,
    logits: &[f32],
    labels: &[u32],
    loss: &mut [f32],
    probs: &mut [f32],
) {
    let run = |first: usize, loss: &mut [f32], probs: &mut [f32]| {
        for (k, (l, p)) in loss.iter_mut().zip(probs.chunks_mut(classes)).enumerate() {
            let n = first + k;
            let row = &logits[n * classes..][..classes];
            let max = row.iter().copied().fold(row[0], |a, b| if b > a { b } else { a });
            let lse = max + row.iter().map(|&v| (v - max).exp()).fold(0.0, |a, b| a + b).ln();
            for (pv, &v) in p.iter_mut().zip(row) {
                *pv = (v - lse).exp();
            }
            *l = lse - row[labels[n] as usize];
        }
    };
    let rows = rows_per_task(classes);
    if loss.len() <= rows {
        run(0, loss, probs);
    } else {
        loss.par_chunks_mut(rows)
            .zip(probs.par_chunks_mut(rows * classes))
            .enumerate()
            .for_each(|(task, (loss, probs))| run(task * rows, loss, probs));
    }
}

/// `probabilities, labels -> dlogits` of the mean loss over the batch.
pub(super) fn softmax_cross_entropy_backward(
    batch: usize,
    classes: usize,
    probs: &[f32],
    labels: &[u32],
    d: &mut [f32],
) {
    let scale = (1.0 / batch as f64) as f32;
    let run = |first: usize, d: &mut [f32]| {
        for (k, row) in d.chunks_mut(classes).enumerate() {
            let n = first + k;
            let label = labels[n] as usize;
            for (c, v) in row.iter_mut().enumerate() {
                let onehot = if c == label { 1.0 } else { 0.0 };
                *v = (probs[n * classes + c] - onehot) * scale;
            }
        }
    };
    let rows = rows_per_task(classes);
    if batch <= rows {
        run(0, d);
    } else {
        d.par_chunks_mut(rows * classes)
            .enumerate()
            .for_each(|(task, d)| run(task * rows, d));
    }
}
