//! Softmax cross-entropy dispatches (`shaders/loss.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::LOSS;

/// `logits, labels -> loss, probabilities`: one invocation per image.
pub fn forward(batch: usize, classes: usize) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &LOSS,
        entry: "softmax_cross_entropy_forward",
        bindings: tensors(1, &["logits", "labels", "loss", "probs"]),
        params: vec![batch as u32, batch as u32, classes as u32],
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
        params: vec![total as u32, batch as u32, classes as u32],
        grid: Grid::Invocations(total as u64),
        constants: Vec::new(),
    }]
}
