//! Softmax cross-entropy dispatches (`shaders/loss.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::LOSS;
use super::uniform::{Uniform, uniform};

uniform! {
    /// `shaders/loss.wgsl`'s `Params`.
    pub(crate) struct LossParams {
        total: u32,
        batch: u32,
        classes: u32,
    }
}

fn params(total: usize, batch: usize, classes: usize) -> Vec<u32> {
    let u = |v: usize| v as u32;
    LossParams {
        total: u(total),
        batch: u(batch),
        classes: u(classes),
    }
    .words()
}

/// `logits, labels -> loss, probabilities`: one invocation per image.
pub fn forward(batch: usize, classes: usize) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &LOSS,
        entry: "softmax_cross_entropy_forward",
        bindings: tensors(1, &["logits", "labels", "loss", "probs"]),
        params: params(batch, batch, classes),
        grid: Grid::Invocations(batch as u64),
        constants: Vec::new(),
    }]
}

/// `probabilities, labels -> dlogits`.
pub fn backward(batch: usize, classes: usize) -> Vec<Dispatch> {
    let total = batch * classes;
    vec![Dispatch {
        shader: &LOSS,
        entry: "softmax_cross_entropy_backward",
        bindings: tensors(5, &["probs", "labels", "dlogits"]),
        params: params(total, batch, classes),
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }]
}
