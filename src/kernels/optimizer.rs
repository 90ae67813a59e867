//! SGD update dispatch (`shaders/optimizer.wgsl`).

use super::dispatch::{Dispatch, Grid, tensors};
use super::registry::OPTIMIZER;

/// `grad, weight (rw), velocity (rw)`.
pub fn sgd(len: usize, lr: f32, momentum: f32, weight_decay: f32) -> Vec<Dispatch> {
    vec![Dispatch {
        shader: &OPTIMIZER,
        entry: "sgd_update",
        bindings: tensors(1, &["grad", "weight", "velocity"]),
        params: vec![
            len as u32,
            lr.to_bits(),
            momentum.to_bits(),
            weight_decay.to_bits(),
        ],
        grid: Grid::Invocations(len as u64),
        constants: Vec::new(),
    }]
}
